/*
 * NvInferPluginUtils.h (plugrt compatibility layer) - parameter structs that
 * TensorRT's bundled plugins share and that user plugins often reuse
 * (NMSParameters in particular, read and written whole in plugin blobs).
 */
#ifndef PLUGRT_COMPAT_NV_INFER_PLUGIN_UTILS_H
#define PLUGRT_COMPAT_NV_INFER_PLUGIN_UTILS_H

#include "NvInferRuntimeCommon.h"

namespace nvinfer1
{
namespace plugin
{

//! Batched NMS parameters (the BatchedNMS_TRT fields).
struct NMSParameters
{
    bool shareLocation;
    int32_t backgroundLabelId;
    int32_t numClasses;
    int32_t topK;
    int32_t keepTopK;
    float scoreThreshold;
    float iouThreshold;
    bool isNormalized;
};

template <typename T>
struct Quadruple
{
    T data[4];
};

enum class CodeTypeSSD : int32_t
{
    CORNER = 0,
    CENTER_SIZE = 1,
    CORNER_SIZE = 2,
    TF_CENTER = 3,
};

struct DetectionOutputParameters
{
    bool shareLocation;
    bool varianceEncodedInTarget;
    int32_t backgroundLabelId;
    int32_t numClasses;
    int32_t topK;
    int32_t keepTopK;
    float confidenceThreshold;
    float nmsThreshold;
    CodeTypeSSD codeType;
    int32_t inputOrder[3];
    bool confSigmoid;
    bool isNormalized;
    bool isBatchAgnostic{true};
};

} // namespace plugin
} // namespace nvinfer1

#endif /* PLUGRT_COMPAT_NV_INFER_PLUGIN_UTILS_H */
