#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include "swishKernel.h"

template <typename T>
__global__ void swishKernel(int64_t n, float beta, float const* w, int64_t channels, int64_t inner, T const* x, T* y)
{
    for (int64_t i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; i < n; i += (int64_t) gridDim.x * blockDim.x)
    {
        float v = static_cast<float>(x[i]);
        float r = v / (1.0f + expf(-beta * v));
        if (w)
        {
            r *= w[(i / inner) % channels];
        }
        y[i] = static_cast<T>(r);
    }
}

int32_t swishInference(cudaStream_t stream, int64_t n, float beta, float const* hostWeights, int64_t nbWeights,
    int64_t inner, bool half, void const* x, void* y, void* workspace)
{
    float* w = nullptr;
    if (nbWeights > 0)
    {
        w = static_cast<float*>(workspace);
        cudaError_t e = cudaMemcpyAsync(w, hostWeights, nbWeights * sizeof(float), cudaMemcpyHostToDevice, stream);
        if (e != cudaSuccess)
        {
            return static_cast<int32_t>(e);
        }
    }
    int64_t const channels = nbWeights > 0 ? nbWeights : 1;
    int const block = 256;
    int64_t grid = (n + block - 1) / block;
    if (grid > 65535)
    {
        grid = 65535;
    }
    if (half)
    {
        swishKernel<__half><<<(unsigned) grid, block, 0, stream>>>(
            n, beta, w, channels, inner, static_cast<__half const*>(x), static_cast<__half*>(y));
    }
    else
    {
        swishKernel<float><<<(unsigned) grid, block, 0, stream>>>(
            n, beta, w, channels, inner, static_cast<float const*>(x), static_cast<float*>(y));
    }
    return static_cast<int32_t>(cudaGetLastError());
}
