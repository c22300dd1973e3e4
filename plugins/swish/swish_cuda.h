/* plugins/swish/swish_cuda.h - the CUDA launcher of the Swish kernels. */
#ifndef PLUGRT_PLUGINS_SWISH_CUDA_H
#define PLUGRT_PLUGINS_SWISH_CUDA_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* y[i] = w[c] * x[i] * sigmoid(beta * x[i]) over n elements on `stream`
 * (a cudaStream_t; NULL = default stream). half = 0: float, 1: IEEE half
 * (computed in float). host_w (channels floats, or NULL for no weights) is
 * copied to dev_w (device memory of channels floats, the plugin's workspace)
 * on the stream first; element i is in channel (i / inner) % channels.
 * Returns a cudaError_t (0 = success). */
int prt__swish_cuda(int half, const void *x, void *y, int64_t n, float beta, const float *host_w,
                    float *dev_w, int64_t channels, int64_t inner, void *stream);

#ifdef __cplusplus
}
#endif
#endif
