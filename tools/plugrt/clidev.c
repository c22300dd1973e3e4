/* tools/plugrt/clidev.c - see clidev.h. */
#include <stdio.h>

#include "clidev.h"
#ifdef PLUGRT_HAVE_CUDA
#include <cuda_runtime.h>
#endif

int prt__clidev_count(void)
{
    return (int)prt_host_device_count(PRT_DEVICE_CUDA);
}

const char *prt__clidev_name(int device, char *buf, size_t cap)
{
#ifdef PLUGRT_HAVE_CUDA
    struct cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, device) == cudaSuccess) {
        snprintf(buf, cap, "GPU %d: %s (sm_%d%d, %.0f GiB)", device, p.name, p.major, p.minor,
                 (double)p.totalGlobalMem / (1024.0 * 1024.0 * 1024.0));
        return buf;
    }
    (void)cudaGetLastError();
#endif
    snprintf(buf, cap, "GPU %d: (properties unavailable)", device);
    return buf;
}

prt_status prt__clidev_alloc(size_t bytes, void **out, char *err, size_t cap)
{
    prt_msg m = {err, cap};
    return prt_host_device_alloc(PRT_DEVICE_CUDA, 0, bytes, out, &m);
}

void prt__clidev_free(void *p)
{
    prt_host_device_free(PRT_DEVICE_CUDA, 0, p);
}

prt_status prt__clidev_copy(void *dst, const void *src, size_t bytes, int to_device, char *err, size_t cap)
{
#ifdef PLUGRT_HAVE_CUDA
    cudaError_t e;
    if (bytes == 0) return PRT_OK;
    e = cudaMemcpy(dst, src, bytes, to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost);
    if (e == cudaSuccess) return PRT_OK;
    snprintf(err, cap, "cudaMemcpy of %zu bytes failed: %s", bytes, cudaGetErrorString(e));
    return PRT_STATUS_CUDA_ERROR;
#else
    (void)dst; (void)src; (void)bytes; (void)to_device;
    snprintf(err, cap, "this plugrt was built without CUDA");
    return PRT_STATUS_NO_DEVICE;
#endif
}

#ifdef PLUGRT_HAVE_CUDA
static prt_status cuda_fail(cudaError_t e, const char *what, char *err, size_t cap)
{
    snprintf(err, cap, "%s failed: %s", what, cudaGetErrorString(e));
    return PRT_STATUS_CUDA_ERROR;
}
#endif

prt_status prt__clidev_event_create(void **ev, char *err, size_t cap)
{
#ifdef PLUGRT_HAVE_CUDA
    cudaEvent_t e;
    cudaError_t r = cudaEventCreate(&e);
    if (r != cudaSuccess) return cuda_fail(r, "cudaEventCreate", err, cap);
    *ev = (void *)e;
    return PRT_OK;
#else
    (void)ev;
    snprintf(err, cap, "this plugrt was built without CUDA");
    return PRT_STATUS_NO_DEVICE;
#endif
}

prt_status prt__clidev_event_record(void *ev, void *stream, char *err, size_t cap)
{
#ifdef PLUGRT_HAVE_CUDA
    cudaError_t r = cudaEventRecord((cudaEvent_t)ev, (cudaStream_t)stream);
    return r == cudaSuccess ? PRT_OK : cuda_fail(r, "cudaEventRecord", err, cap);
#else
    (void)ev; (void)stream;
    snprintf(err, cap, "this plugrt was built without CUDA");
    return PRT_STATUS_NO_DEVICE;
#endif
}

prt_status prt__clidev_event_elapsed(void *start, void *end, float *ms, char *err, size_t cap)
{
#ifdef PLUGRT_HAVE_CUDA
    cudaError_t r = cudaEventSynchronize((cudaEvent_t)end);
    if (r != cudaSuccess) return cuda_fail(r, "cudaEventSynchronize", err, cap);
    r = cudaEventElapsedTime(ms, (cudaEvent_t)start, (cudaEvent_t)end);
    return r == cudaSuccess ? PRT_OK : cuda_fail(r, "cudaEventElapsedTime", err, cap);
#else
    (void)start; (void)end; (void)ms;
    snprintf(err, cap, "this plugrt was built without CUDA");
    return PRT_STATUS_NO_DEVICE;
#endif
}

void prt__clidev_event_destroy(void *ev)
{
#ifdef PLUGRT_HAVE_CUDA
    if (ev) (void)cudaEventDestroy((cudaEvent_t)ev);
#else
    (void)ev;
#endif
}
