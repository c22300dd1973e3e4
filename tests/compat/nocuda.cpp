// Builds without a CUDA compiler link this instead of the plugins' .cu files:
// their device paths then report cudaErrorNoDevice (100). Only CPU contexts
// run in such builds, and they take the plugins' host paths.
#include "trt_swish/swishKernel.h"
#include "trt_nms/batchedNms.h"
#include "trt_v3/scaleClipKernel.h"

int32_t swishInference(cudaStream_t, int64_t, float, float const*, int64_t, int64_t, bool, void const*, void*, void*)
{
    return 100;
}

int32_t scaleClipInference(cudaStream_t, int64_t, float, float, float, float const*, float*)
{
    return 100;
}

int32_t batchedNmsInference(cudaStream_t, nvinfer1::plugin::NMSParameters const&, bool, int32_t, int32_t, void const*,
    void const*, void*, void*, void*, void*)
{
    return 100;
}
