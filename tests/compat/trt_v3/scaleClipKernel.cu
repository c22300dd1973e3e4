#include <cuda_runtime_api.h>

#include "scaleClipKernel.h"

__global__ void scaleClipKernel(int64_t n, float scale, float lo, float hi, float const* x, float* y)
{
    for (int64_t i = blockIdx.x * (int64_t) blockDim.x + threadIdx.x; i < n; i += (int64_t) gridDim.x * blockDim.x)
    {
        y[i] = fminf(fmaxf(scale * x[i], lo), hi);
    }
}

int32_t scaleClipInference(cudaStream_t stream, int64_t n, float scale, float lo, float hi, float const* x, float* y)
{
    int64_t grid = (n + 255) / 256;
    scaleClipKernel<<<(unsigned) (grid > 65535 ? 65535 : grid), 256, 0, stream>>>(n, scale, lo, hi, x, y);
    return static_cast<int32_t>(cudaGetLastError());
}
