// y = min(max(scale * x, lo), hi) on `stream`; returns a cudaError_t.
#ifndef TRT_SCALE_CLIP_KERNEL_H
#define TRT_SCALE_CLIP_KERNEL_H

#include <cstdint>

#include "NvInferRuntimeBase.h"

int32_t scaleClipInference(cudaStream_t stream, int64_t n, float scale, float lo, float hi, float const* x, float* y);

#endif
