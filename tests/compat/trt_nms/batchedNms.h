// Batched per-class NMS shared by the plugin's host path and its CUDA entry.
#ifndef TRT_BATCHED_NMS_H
#define TRT_BATCHED_NMS_H

#include <cstdint>

#include "NvInferPluginUtils.h"

// boxes [B, N, L, 4] (L = 1 with shareLocation, else numClasses), scores
// [B, N, C]; outputs num_detections [B] (int32), boxes [B, K, 4], scores
// [B, K], classes [B, K] (float), K = keepTopK. All host memory.
void batchedNmsHost(nvinfer1::plugin::NMSParameters const& param, bool clipBoxes, int32_t batchSize,
    int32_t numPriors, float const* boxes, float const* scores, int32_t* numDetections, float* nmsedBoxes,
    float* nmsedScores, float* nmsedClasses);

// The same on device memory (copies through the host); returns a cudaError_t.
int32_t batchedNmsInference(cudaStream_t stream, nvinfer1::plugin::NMSParameters const& param, bool clipBoxes,
    int32_t batchSize, int32_t numPriors, void const* boxes, void const* scores, void* numDetections,
    void* nmsedBoxes, void* nmsedScores, void* nmsedClasses);

#endif
