/*
 * backend/cuda/cast.h - the element conversion of the engine's internal cast
 * layers (f32 <-> f16) on the GPU.
 *
 * The conversion is the same bit for bit as the CPU one
 * (prt_f32_to_f16 / prt_f16_to_f32 in plugrt/tensor.h): round to nearest
 * even, overflow to infinity, subnormal halves kept, and NaN payloads
 * handled the same way (f32 -> f16 gives sign | 0x7c00 | 0x200 for any NaN;
 * f16 -> f32 keeps the payload).
 */
#ifndef PLUGRT_BACKEND_CUDA_CAST_H
#define PLUGRT_BACKEND_CUDA_CAST_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Convert n elements from `src` (dtype `from`, a prt_dtype value) to `dst`
 * (dtype `to`) in device memory, queued on `stream` (a cudaStream_t; NULL =
 * the default stream). Only F32 -> F16 and F16 -> F32 exist. Returns a
 * cudaError_t: 0 on success, cudaErrorInvalidValue for any other pair or a
 * negative n, else the launch error. */
int prt__cuda_cast(int from, int to, const void *src, void *dst, int64_t n, void *stream);

/* The text of a code returned by prt__cuda_cast. */
const char *prt__cuda_cast_error_string(int code);

#ifdef __cplusplus
}
#endif
#endif
