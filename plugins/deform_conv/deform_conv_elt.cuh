/*
 * deform_conv/deform_conv_elt.cuh - the 16-bit element types of the fused
 * CUDA kernels: BF = 0 is fp16, BF = 1 is bfloat16. Tensors are held as raw
 * 16-bit storage (typed __half in the kernels' signatures, which only move
 * them); these helpers convert at the points where values are computed, so
 * that one kernel body serves both types. Conversions to 16 bits round to
 * nearest even.
 */
#ifndef PLUGRT_PLUGINS_DEFORM_CONV_ELT_CUH
#define PLUGRT_PLUGINS_DEFORM_CONV_ELT_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

template <int BF> __device__ __forceinline__ float e2f(__half v)
{
    if (BF) return __bfloat162float(__ushort_as_bfloat16(__half_as_ushort(v)));
    return __half2float(v);
}

/* Two packed elements (the low half first) to fp32. */
template <int BF> __device__ __forceinline__ float2 e2f2(uint32_t v)
{
    if (BF) {
        __nv_bfloat162 b;
        memcpy(&b, &v, 4);
        return __bfloat1622float2(b);
    }
    __half2 h;
    memcpy(&h, &v, 4);
    return __half22float2(h);
}

/* Two fp32 values rounded and packed (a in the low half). */
template <int BF> __device__ __forceinline__ uint32_t f2e2(float a, float b)
{
    uint32_t v;
    if (BF) {
        const __nv_bfloat162 r = __floats2bfloat162_rn(a, b);
        memcpy(&v, &r, 4);
    } else {
        const __half2 r = __floats2half2_rn(a, b);
        memcpy(&v, &r, 4);
    }
    return v;
}

template <int BF> __device__ __forceinline__ __half f2e(float v)
{
    if (BF) return __ushort_as_half(__bfloat16_as_ushort(__float2bfloat16_rn(v)));
    return __float2half_rn(v);
}

#endif
