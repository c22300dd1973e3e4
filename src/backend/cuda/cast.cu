/* backend/cuda/cast.cu - f32 <-> f16 conversion kernels for the engine's cast
 * layers, written on the bits so that they match the CPU conversion exactly
 * (see cast.h). */
#include <cuda_runtime.h>

#include "cast.h"

namespace {

/* Mirrors prt_f32_to_f16 (plugrt/tensor.h). */
__device__ __forceinline__ uint16_t f32_to_f16_bits(uint32_t x)
{
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) /* Inf or NaN */
        return (uint16_t)(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0u));
    if (absx >= 0x477ff000u) /* rounds to >= 65520: infinity */
        return (uint16_t)(sign | 0x7c00u);
    if (absx < 0x38800000u) { /* below the smallest normal half */
        if (absx < 0x33000000u) return (uint16_t)sign;
        uint32_t shift = 126u - (absx >> 23); /* 14..24 */
        uint32_t man = (absx & 0x7fffffu) | 0x800000u;
        uint32_t r = man >> shift;
        uint32_t rem = man & ((1u << shift) - 1u);
        uint32_t half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (r & 1u))) r++;
        return (uint16_t)(sign | r);
    }
    uint32_t r = (absx - 0x38000000u) >> 13;
    uint32_t rem = absx & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) r++;
    return (uint16_t)(sign | r);
}

/* Mirrors prt_f16_to_f32. */
__device__ __forceinline__ uint32_t f16_to_f32_bits(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    if (exp == 0) {
        if (man == 0) return sign;
        /* subnormal: the value is man * 2^-24; normalize */
        uint32_t lz = (uint32_t)__clz(man) - 21u; /* shifts until bit 10 is set */
        man = (man << lz) & 0x3ffu;
        exp = 127u - 15u + 1u - lz;
        return sign | (exp << 23) | (man << 13);
    }
    if (exp == 0x1f) return sign | 0x7f800000u | (man << 13);
    return sign | ((exp + 127u - 15u) << 23) | (man << 13);
}

__global__ void to_f16_kernel(const uint32_t *__restrict__ src, uint16_t *__restrict__ dst, int64_t n)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (; i < n; i += stride) dst[i] = f32_to_f16_bits(src[i]);
}

__global__ void to_f32_kernel(const uint16_t *__restrict__ src, uint32_t *__restrict__ dst, int64_t n)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (; i < n; i += stride) dst[i] = f16_to_f32_bits(src[i]);
}

/* prt_dtype values (plugrt/tensor.h). */
enum { DT_F32 = 0, DT_F16 = 1 };

} // namespace

extern "C" int prt__cuda_cast(int from, int to, const void *src, void *dst, int64_t n, void *stream)
{
    const int threads = 256;
    int64_t blocks;
    cudaStream_t st = (cudaStream_t)stream;
    if (n < 0 || !((from == DT_F32 && to == DT_F16) || (from == DT_F16 && to == DT_F32)))
        return (int)cudaErrorInvalidValue;
    if (n == 0) return 0;
    if (!src || !dst) return (int)cudaErrorInvalidValue;
    blocks = (n + threads - 1) / threads;
    if (blocks > 65535LL * 8) blocks = 65535LL * 8; /* grid-stride beyond this */
    if (from == DT_F32)
        to_f16_kernel<<<(unsigned)blocks, threads, 0, st>>>((const uint32_t *)src, (uint16_t *)dst, n);
    else
        to_f32_kernel<<<(unsigned)blocks, threads, 0, st>>>((const uint16_t *)src, (uint32_t *)dst, n);
    return (int)cudaGetLastError();
}

extern "C" const char *prt__cuda_cast_error_string(int code)
{
    return cudaGetErrorString((cudaError_t)code);
}
