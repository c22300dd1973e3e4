/*
 * tools/plugrt/clidev.h - the CUDA calls `plugrt run` and `plugrt demo` make
 * for their own buffers: device count and memory through the public host
 * table (prt_host_api.device_count / device_alloc / device_free), copies and device names through
 * the CUDA runtime itself when the build has CUDA. Without CUDA there is no
 * device: the count is 0 and every call fails with PRT_STATUS_NO_DEVICE.
 */
#ifndef PLUGRT_TOOLS_CLIDEV_H
#define PLUGRT_TOOLS_CLIDEV_H

#include <stddef.h>

#include "plugrt/plugin.h"

/* Usable GPUs (0 when the environment variable PLUGRT_NO_GPU is set). */
int prt__clidev_count(void);
/* "GPU 0: NVIDIA H200 (sm_90, 139 GiB)" into buf. */
const char *prt__clidev_name(int device, char *buf, size_t cap);
prt_status prt__clidev_alloc(size_t bytes, void **out, char *err, size_t cap);
void prt__clidev_free(void *p); /* NULL ok */
/* Synchronous copy to (to_device) or from device memory. */
prt_status prt__clidev_copy(void *dst, const void *src, size_t bytes, int to_device, char *err, size_t cap);

/* CUDA events on a context's stream (prt_context_stream), for GPU time. */
prt_status prt__clidev_event_create(void **ev, char *err, size_t cap);
prt_status prt__clidev_event_record(void *ev, void *stream, char *err, size_t cap);
/* Waits for `end`, then the milliseconds from `start` to `end`. */
prt_status prt__clidev_event_elapsed(void *start, void *end, float *ms, char *err, size_t cap);
void prt__clidev_event_destroy(void *ev); /* NULL ok */

#endif
