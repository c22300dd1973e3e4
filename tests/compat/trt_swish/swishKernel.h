// Swish kernels: y = w[c] * x * sigmoid(beta * x), c = (i / inner) % channels.
// With nbWeights > 0 the host weights are first copied into `workspace`
// (nbWeights floats of device memory) on `stream`. Returns a cudaError_t.
#ifndef TRT_SWISH_KERNEL_H
#define TRT_SWISH_KERNEL_H

#include <cstdint>

#include "NvInferRuntimeBase.h"

int32_t swishInference(cudaStream_t stream, int64_t n, float beta, float const* hostWeights, int64_t nbWeights,
    int64_t inner, bool half, void const* x, void* y, void* workspace);

#endif
