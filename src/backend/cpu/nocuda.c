/* backend/cpu/nocuda.c - backend/cuda/device.h and the CUDA backend table
 * (backend/backend.h) without CUDA: no devices, every call says so. */
#ifndef PLUGRT_HAVE_CUDA
#include <stdio.h>

#include "backend/backend.h"
#include "backend/cuda/device.h"

static prt_status none(char *err, size_t cap)
{
    snprintf(err, cap, "this plugrt was built without CUDA");
    return PRT_STATUS_NO_DEVICE;
}

int prt__cuda_device_count(void) { return 0; }
prt_status prt__cuda_set_device(int device, char *err, size_t cap) { (void)device; return none(err, cap); }
prt_status prt__cuda_malloc(size_t n, void **out, char *err, size_t cap)
{
    (void)n; (void)out;
    return none(err, cap);
}
void prt__cuda_free(void *p) { (void)p; }
prt_status prt__cuda_host_alloc(size_t n, void **out, char *err, size_t cap)
{
    (void)n; (void)out;
    return none(err, cap);
}
void prt__cuda_host_free(void *p) { (void)p; }
prt_status prt__cuda_copy_d2h_async(void *dst, const void *src, size_t n, void *stream, char *err, size_t cap)
{
    (void)dst; (void)src; (void)n; (void)stream;
    return none(err, cap);
}
prt_status prt__cuda_copy(void *dst, const void *src, size_t n, prt__copy_kind kind, char *err, size_t cap)
{
    (void)dst; (void)src; (void)n; (void)kind;
    return none(err, cap);
}
prt_status prt__cuda_memset(void *p, int byte, size_t n, char *err, size_t cap)
{
    (void)p; (void)byte; (void)n;
    return none(err, cap);
}
prt_status prt__cuda_stream_create(void **out, char *err, size_t cap) { (void)out; return none(err, cap); }
void prt__cuda_stream_destroy(void *stream) { (void)stream; }
prt_status prt__cuda_stream_sync(void *stream, char *err, size_t cap) { (void)stream; return none(err, cap); }
prt_status prt__cuda_event_create(void **out, char *err, size_t cap) { (void)out; return none(err, cap); }
void prt__cuda_event_destroy(void *event) { (void)event; }
prt_status prt__cuda_event_record(void *event, void *stream, char *err, size_t cap)
{
    (void)event; (void)stream;
    return none(err, cap);
}
prt_status prt__cuda_event_elapsed(void *start, void *end, float *ms, char *err, size_t cap)
{
    (void)start; (void)end; (void)ms;
    return none(err, cap);
}
prt_status prt__cuda_last_error(const char *what, char *err, size_t cap)
{
    (void)what; (void)err; (void)cap;
    return PRT_OK;
}
const char *prt__cuda_device_name(int device, char *buf, size_t cap)
{
    snprintf(buf, cap, "GPU %d: (no CUDA)", device);
    return buf;
}

static prt_status no_select(int32_t index, char *err, size_t cap)
{
    (void)index;
    return none(err, cap);
}
static void *no_alloc(size_t n, void **block)
{
    (void)n;
    *block = NULL;
    return NULL;
}
static prt_status no_upload(void *dst, const void *src, size_t n, char *err, size_t cap)
{
    (void)dst; (void)src; (void)n;
    return none(err, cap);
}
static prt_status no_cast(prt_dtype from, prt_dtype to, const void *src, void *dst, int64_t n, prt_exec *ex,
                          char *err, size_t cap)
{
    (void)from; (void)to; (void)src; (void)dst; (void)n; (void)ex;
    return none(err, cap);
}

const prt__backend prt__backend_cuda = {
    .device = PRT_DEVICE_CUDA, .name = "GPU", .host_memory = 0,
    .select = no_select, .alloc = no_alloc, .free = prt__cuda_free, .upload = no_upload,
    .download_async = prt__cuda_copy_d2h_async, .host_alloc = prt__cuda_host_alloc, .host_free = prt__cuda_host_free,
    .stream_create = prt__cuda_stream_create, .stream_destroy = prt__cuda_stream_destroy,
    .stream_sync = prt__cuda_stream_sync, .cast = no_cast, .event_create = prt__cuda_event_create,
    .event_destroy = prt__cuda_event_destroy, .event_record = prt__cuda_event_record,
    .event_elapsed = prt__cuda_event_elapsed, PRT__BACKEND_NO_WORKERS, .describe = prt__backend_cuda_describe,
};
#else
typedef int prt__nocuda_unused; /* an empty translation unit is not ISO C */
#endif
