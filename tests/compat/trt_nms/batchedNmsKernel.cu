// CUDA entry of BatchedNMSPlugin: the boxes and scores go to the host, the
// shared host NMS runs there, the results come back on the same stream.
#include <cuda_runtime_api.h>

#include <vector>

#include "batchedNms.h"

int32_t batchedNmsInference(cudaStream_t stream, nvinfer1::plugin::NMSParameters const& param, bool clipBoxes,
    int32_t batchSize, int32_t numPriors, void const* boxes, void const* scores, void* numDetections,
    void* nmsedBoxes, void* nmsedScores, void* nmsedClasses)
{
    int32_t const L = param.shareLocation ? 1 : param.numClasses;
    size_t const nb = static_cast<size_t>(batchSize) * numPriors * L * 4;
    size_t const ns = static_cast<size_t>(batchSize) * numPriors * param.numClasses;
    size_t const k = static_cast<size_t>(batchSize) * param.keepTopK;
    std::vector<float> hb(nb), hs(ns), ob(k * 4), os(k), oc(k);
    std::vector<int32_t> on(batchSize);
    cudaMemcpyAsync(hb.data(), boxes, nb * sizeof(float), cudaMemcpyDeviceToHost, stream);
    cudaMemcpyAsync(hs.data(), scores, ns * sizeof(float), cudaMemcpyDeviceToHost, stream);
    cudaError_t e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess)
    {
        return static_cast<int32_t>(e);
    }
    batchedNmsHost(param, clipBoxes, batchSize, numPriors, hb.data(), hs.data(), on.data(), ob.data(), os.data(),
        oc.data());
    cudaMemcpyAsync(numDetections, on.data(), on.size() * sizeof(int32_t), cudaMemcpyHostToDevice, stream);
    cudaMemcpyAsync(nmsedBoxes, ob.data(), ob.size() * sizeof(float), cudaMemcpyHostToDevice, stream);
    cudaMemcpyAsync(nmsedScores, os.data(), os.size() * sizeof(float), cudaMemcpyHostToDevice, stream);
    cudaMemcpyAsync(nmsedClasses, oc.data(), oc.size() * sizeof(float), cudaMemcpyHostToDevice, stream);
    return static_cast<int32_t>(cudaStreamSynchronize(stream));
}
