/*
 * backend/backend.h - one interface over the devices an execution context
 * runs on: device memory, copies, streams, page-locked host memory, and the
 * element casts of the engine's cast layers. Each device's code sits in its
 * own folder (backend/cpu/, backend/cuda/); engine and tool code asks
 * prt__backend_of(device) and never branches on the device for these.
 *
 * Errors: functions returning prt_status write a message into err (cap
 * bytes) naming the call and the device's error.
 */
#ifndef PLUGRT_BACKEND_BACKEND_H
#define PLUGRT_BACKEND_BACKEND_H

#include "plugrt/plugin.h"

typedef struct prt__backend {
    prt_device device;
    const char *name;  /* "CPU", "GPU" for messages */
    int host_memory;   /* device memory is host memory (plan weights are used in place) */
    /* Make `index` the current device of this thread; fails when it does
     * not exist. */
    prt_status (*select)(int32_t index, char *err, size_t cap);
    /* n bytes (at least 1) of device memory aligned to 64 bytes; *block is
     * what free takes. NULL when it cannot. */
    void *(*alloc)(size_t n, void **block);
    void (*free)(void *block); /* NULL ok */
    /* Host -> device, finished when it returns. */
    prt_status (*upload)(void *dst, const void *src, size_t n, char *err, size_t cap);
    /* Device -> host queued on `stream` (dst page-locked on CUDA). */
    prt_status (*download_async)(void *dst, const void *src, size_t n, void *stream, char *err, size_t cap);
    /* Page-locked host memory for such copies. */
    prt_status (*host_alloc)(size_t n, void **out, char *err, size_t cap);
    void (*host_free)(void *p); /* NULL ok */
    /* A stream of its own (CPU: none, *out = NULL); wait for one (NULL: the
     * default stream; CPU: nothing to wait for). */
    prt_status (*stream_create)(void **out, char *err, size_t cap);
    void (*stream_destroy)(void *stream); /* NULL ok */
    prt_status (*stream_sync)(void *stream, char *err, size_t cap);
    /* n elements f32 <-> f16 from src to dst (device memory), on ex's
     * thread pool (CPU) or stream (CUDA). */
    prt_status (*cast)(prt_dtype from, prt_dtype to, const void *src, void *dst, int64_t n, prt_exec *ex, char *err,
                       size_t cap);
    /* Timing events recorded on a stream (CPU: the host clock when
     * recorded); elapsed waits for `end`, then gives the milliseconds. */
    prt_status (*event_create)(void **out, char *err, size_t cap);
    void (*event_destroy)(void *event); /* NULL ok */
    prt_status (*event_record)(void *event, void *stream, char *err, size_t cap);
    prt_status (*event_elapsed)(void *start, void *end, float *ms, char *err, size_t cap);
    /* Host threads behind prt_exec.parallel_for: CPU, a pool of nb_threads
     * (0: one per core); CUDA, none (*out = NULL, work runs inline). */
    prt_status (*workers_create)(int32_t nb_threads, void **out, char *err, size_t cap);
    void (*workers_destroy)(void *workers); /* NULL ok */
    int32_t (*workers_size)(const void *workers);
    void (*parallel_for)(void *workers, int64_t n, int64_t grain, prt_range_fn fn, void *arg);
    /* What device `index` is, for keys of the timing cache: "cpu: <model>",
     * "cuda: <name> (sm_XY, N GiB)". Into buf; returns buf. */
    const char *(*describe)(int32_t index, char *buf, size_t cap);
} prt__backend;

/* The workers of a device without host threads of its own: inline. */
static inline prt_status prt__backend_no_workers(int32_t nb_threads, void **out, char *err, size_t cap)
{
    (void)nb_threads; (void)err; (void)cap;
    *out = NULL;
    return PRT_OK;
}
static inline void prt__backend_no_workers_destroy(void *workers) { (void)workers; }
static inline int32_t prt__backend_no_workers_size(const void *workers)
{
    (void)workers;
    return 1;
}
static inline void prt__backend_inline_for(void *workers, int64_t n, int64_t grain, prt_range_fn fn, void *arg)
{
    (void)workers; (void)grain;
    if (n > 0) fn(arg, 0, n);
}
#define PRT__BACKEND_NO_WORKERS                                                                     \
    .workers_create = prt__backend_no_workers, .workers_destroy = prt__backend_no_workers_destroy, \
    .workers_size = prt__backend_no_workers_size, .parallel_for = prt__backend_inline_for

/* The backend of a device; NULL outside prt_device. A device this build
 * lacks still has one: its calls fail with PRT_STATUS_NO_DEVICE. */
const prt__backend *prt__backend_of(prt_device device);

/* The CUDA backend's describe, for both of its tables (with and without
 * CUDA): "cuda: " and prt__cuda_device_name without its "GPU i: ". */
const char *prt__backend_cuda_describe(int32_t index, char *buf, size_t cap);

extern const prt__backend prt__backend_cpu;
extern const prt__backend prt__backend_cuda;

#endif
