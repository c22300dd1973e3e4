/* plugins/template/template_cuda.cu - CUDA kernels of the Bias template. */
#include <cuda_runtime.h>

#include "template_cuda.h"

static __global__ void bias_kernel(const float *x, float *y, const float *bias, int64_t n, int64_t channels,
                                   int64_t inner)
{
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (; i < n; i += stride) y[i] = x[i] + bias[(i / inner) % channels];
}

extern "C" int prt__template_upload(void *dev_dst, const void *host_src, size_t bytes)
{
    return (int)cudaMemcpy(dev_dst, host_src, bytes, cudaMemcpyHostToDevice);
}

extern "C" int prt__template_bias_cuda(const void *x, void *y, const void *dev_bias, int64_t n, int64_t channels,
                                       int64_t inner, void *stream)
{
    int threads = 256;
    int64_t blocks = (n + threads - 1) / threads;
    if (n == 0) return 0;
    if (blocks > 65535) blocks = 65535;
    bias_kernel<<<(unsigned)blocks, threads, 0, (cudaStream_t)stream>>>((const float *)x, (float *)y,
                                                                       (const float *)dev_bias, n, channels, inner);
    return (int)cudaGetLastError();
}
