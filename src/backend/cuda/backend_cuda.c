/* backend/cuda/backend_cuda.c - the CUDA backend (backend/backend.h) over
 * backend/cuda/device.h and the cast kernel. Without CUDA the same table is
 * built from the stubs of backend/cpu/nocuda.c, so every call reports that
 * there is no device. */
#include <stdio.h>

#include "backend/backend.h"
#include "backend/cuda/cast.h"
#include "backend/cuda/device.h"

static prt_status cuda_select(int32_t index, char *err, size_t cap)
{
    if (index < 0 || index >= prt__cuda_device_count()) {
        snprintf(err, cap, "no CUDA device %d (%d found)", (int)index, prt__cuda_device_count());
        return PRT_STATUS_NO_DEVICE;
    }
    return prt__cuda_set_device(index, err, cap);
}

static void *cuda_alloc(size_t n, void **block)
{
    char e[256];
    void *p = NULL;
    if (prt__cuda_malloc(n ? n : 1, &p, e, sizeof e) != PRT_OK) return NULL;
    *block = p;
    return p;
}

static prt_status cuda_upload(void *dst, const void *src, size_t n, char *err, size_t cap)
{
    return n ? prt__cuda_copy(dst, src, n, PRT__H2D, err, cap) : PRT_OK;
}

static prt_status cuda_cast(prt_dtype from, prt_dtype to, const void *src, void *dst, int64_t n, prt_exec *ex,
                            char *err, size_t cap)
{
    int rc;
    if (n <= 0) return PRT_OK;
    rc = prt__cuda_cast((int)from, (int)to, src, dst, n, ex->cuda_stream);
    if (rc == 0) return PRT_OK;
    snprintf(err, cap, "the %s -> %s cast of %lld elements failed: %s", prt_dtype_name(from), prt_dtype_name(to),
             (long long)n, prt__cuda_cast_error_string(rc));
    return PRT_STATUS_CUDA_ERROR;
}

const prt__backend prt__backend_cuda = {
    .device = PRT_DEVICE_CUDA, .name = "GPU", .host_memory = 0,
    .select = cuda_select, .alloc = cuda_alloc, .free = prt__cuda_free, .upload = cuda_upload,
    .download_async = prt__cuda_copy_d2h_async, .host_alloc = prt__cuda_host_alloc, .host_free = prt__cuda_host_free,
    .stream_create = prt__cuda_stream_create, .stream_destroy = prt__cuda_stream_destroy,
    .stream_sync = prt__cuda_stream_sync, .cast = cuda_cast, .event_create = prt__cuda_event_create,
    .event_destroy = prt__cuda_event_destroy, .event_record = prt__cuda_event_record,
    .event_elapsed = prt__cuda_event_elapsed, PRT__BACKEND_NO_WORKERS, .describe = prt__backend_cuda_describe,
};
