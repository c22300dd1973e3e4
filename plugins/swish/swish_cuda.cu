/* plugins/swish/swish_cuda.cu - Swish kernels (float and half, computed in
 * float), with optional per-channel weights. */
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "swish_cuda.h"

namespace {

__device__ __forceinline__ float swish_f(float x, float beta)
{
    return x / (1.0f + expf(-beta * x));
}

template <typename T> __device__ __forceinline__ float load(const T *p, int64_t i);
template <> __device__ __forceinline__ float load<float>(const float *p, int64_t i) { return p[i]; }
template <> __device__ __forceinline__ float load<__half>(const __half *p, int64_t i)
{
    return __half2float(p[i]);
}
template <typename T> __device__ __forceinline__ void store(T *p, int64_t i, float v);
template <> __device__ __forceinline__ void store<float>(float *p, int64_t i, float v) { p[i] = v; }
template <> __device__ __forceinline__ void store<__half>(__half *p, int64_t i, float v)
{
    p[i] = __float2half_rn(v);
}

template <typename T>
__global__ void swish_kernel(const T *__restrict__ x, T *__restrict__ y, int64_t n, float beta,
                             const float *__restrict__ w, int64_t channels, int64_t inner)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (; i < n; i += stride) {
        float v = swish_f(load(x, i), beta);
        if (w) v *= w[(i / inner) % channels];
        store(y, i, v);
    }
}

} // namespace

extern "C" int prt__swish_cuda(int half, const void *x, void *y, int64_t n, float beta, const float *host_w,
                               float *dev_w, int64_t channels, int64_t inner, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    const float *w = NULL;
    const int threads = 256;
    int64_t blocks64;
    int blocks;
    cudaError_t e;
    if (n <= 0) return (int)cudaSuccess;
    if (host_w) {
        if (!dev_w || channels <= 0 || inner <= 0) return (int)cudaErrorInvalidValue;
        e = cudaMemcpyAsync(dev_w, host_w, (size_t)channels * sizeof(float), cudaMemcpyHostToDevice, s);
        if (e != cudaSuccess) return (int)e;
        w = dev_w;
    } else {
        channels = 1;
        inner = 1;
    }
    blocks64 = (n + threads - 1) / threads;
    blocks = blocks64 > 65535 * 8 ? 65535 * 8 : (int)blocks64;
    if (half)
        swish_kernel<__half><<<blocks, threads, 0, s>>>((const __half *)x, (__half *)y, n, beta, w, channels,
                                                        inner);
    else
        swish_kernel<float><<<blocks, threads, 0, s>>>((const float *)x, (float *)y, n, beta, w, channels, inner);
    return (int)cudaGetLastError();
}
