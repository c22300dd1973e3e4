/*
 * plugrt_compat.h - the two plugrt-only services a TensorRT-style plugin may
 * use, guarded by PLUGRT_COMPAT so that the same source still builds with
 * TensorRT. NvInferRuntime.h includes this header.
 *
 *   int32_t MyPlugin::enqueue(..., cudaStream_t stream) noexcept
 *   {
 *   #ifdef PLUGRT_COMPAT
 *       if (prt_compat_on_host()) return runOnHost(...);   // CPU context
 *   #endif
 *       launchKernel<<<..., stream>>>(...);
 *       ...
 *   }
 *
 * Contract: both are valid only inside enqueue on the calling thread. On a
 * CPU context the tensors and the workspace are host memory and `stream` is
 * nullptr; a plugin whose enqueue never asks prt_compat_on_host() there is
 * taken to have no host path, and the run fails with a message that says so.
 */
#ifndef PLUGRT_COMPAT_PLUGRT_COMPAT_H
#define PLUGRT_COMPAT_PLUGRT_COMPAT_H

#include "../plugin.h"

extern "C" {
/* Non-zero while the enqueue in progress on this thread runs on a CPU context. */
int prt_compat_on_host(void);
/* The prt_exec of that enqueue (parallel_for, set_error), NULL outside one. */
prt_exec *prt_compat_exec(void);
}

#endif /* PLUGRT_COMPAT_PLUGRT_COMPAT_H */
