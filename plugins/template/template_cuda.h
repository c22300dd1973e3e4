/* plugins/template/template_cuda.h - the CUDA side of the Bias template. */
#ifndef PLUGRT_PLUGINS_TEMPLATE_CUDA_H
#define PLUGRT_PLUGINS_TEMPLATE_CUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Copy `bytes` from host memory to device memory (synchronous, once per
 * context). Returns a cudaError_t (0 = success). */
int prt__template_upload(void *dev_dst, const void *host_src, size_t bytes);

/* y[i] = x[i] + bias[(i / inner) % channels] over n floats on `stream` (a
 * cudaStream_t). Returns a cudaError_t (0 = success). */
int prt__template_bias_cuda(const void *x, void *y, const void *dev_bias, int64_t n, int64_t channels,
                            int64_t inner, void *stream);

#ifdef __cplusplus
}
#endif
#endif
