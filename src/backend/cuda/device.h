/*
 * backend/cuda/device.h - the few CUDA runtime calls the library makes
 * (device probe, memory, streams), as plain C with prt_status results.
 *
 * Built from backend/cuda/device.c when CUDA is on; without CUDA the
 * functions in backend/cpu/nocuda.c report that no device exists, so callers
 * never need #ifdefs. Messages name the call and the CUDA error.
 */
#ifndef PLUGRT_BACKEND_CUDA_DEVICE_H
#define PLUGRT_BACKEND_CUDA_DEVICE_H

#include "plugrt/plugin.h"

/* Usable CUDA devices (0 without CUDA, without a driver, or when the
 * environment variable PLUGRT_NO_GPU is set). */
int prt__cuda_device_count(void);
prt_status prt__cuda_set_device(int device, char *err, size_t cap);
prt_status prt__cuda_malloc(size_t n, void **out, char *err, size_t cap);
void prt__cuda_free(void *p); /* NULL ok */
typedef enum { PRT__H2D = 1, PRT__D2H = 2, PRT__D2D = 3 } prt__copy_kind;
/* Synchronous copy. */
prt_status prt__cuda_copy(void *dst, const void *src, size_t n, prt__copy_kind kind, char *err,
                          size_t cap);
/* Page-locked host memory (for copies queued on a stream). */
prt_status prt__cuda_host_alloc(size_t n, void **out, char *err, size_t cap);
void prt__cuda_host_free(void *p); /* NULL ok */
/* Device-to-host copy queued on `stream`; dst should be page-locked. */
prt_status prt__cuda_copy_d2h_async(void *dst, const void *src, size_t n, void *stream, char *err,
                                    size_t cap);
prt_status prt__cuda_memset(void *p, int byte, size_t n, char *err, size_t cap);
prt_status prt__cuda_stream_create(void **out, char *err, size_t cap);
void prt__cuda_stream_destroy(void *stream); /* NULL ok */
/* Wait for `stream` (NULL: the default stream) and report any error raised
 * by the work queued on it. */
prt_status prt__cuda_stream_sync(void *stream, char *err, size_t cap);
/* Events for timing work queued on a stream. */
prt_status prt__cuda_event_create(void **out, char *err, size_t cap);
void prt__cuda_event_destroy(void *event); /* NULL ok */
prt_status prt__cuda_event_record(void *event, void *stream, char *err, size_t cap);
/* Wait for `end`, then the milliseconds between the two. */
prt_status prt__cuda_event_elapsed(void *start, void *end, float *ms, char *err, size_t cap);
/* The last error of a launch (cudaGetLastError), cleared. */
prt_status prt__cuda_last_error(const char *what, char *err, size_t cap);
/* "GPU 0: NVIDIA H200 (sm_90, 139 GiB)" into buf. */
const char *prt__cuda_device_name(int device, char *buf, size_t cap);

#endif
