/* backend/cuda/device.c - CUDA runtime helpers (built only with CUDA). */
#include <stdio.h>
#include <stdlib.h>

#include <cuda_runtime_api.h>

#include "backend/cuda/device.h"

static prt_status fail(cudaError_t e, const char *call, char *err, size_t cap)
{
    snprintf(err, cap, "%s failed: %s (%s)", call, cudaGetErrorName(e), cudaGetErrorString(e));
    return e == cudaErrorMemoryAllocation ? PRT_STATUS_OUT_OF_MEMORY
           : e == cudaErrorNoDevice || e == cudaErrorInvalidDevice || e == cudaErrorInsufficientDriver
               ? PRT_STATUS_NO_DEVICE
               : PRT_STATUS_CUDA_ERROR;
}

int prt__cuda_device_count(void)
{
    int n = 0;
    if (getenv("PLUGRT_NO_GPU")) return 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n;
}

prt_status prt__cuda_set_device(int device, char *err, size_t cap)
{
    int n = prt__cuda_device_count();
    cudaError_t e;
    if (device < 0 || device >= n) {
        snprintf(err, cap, "CUDA device %d requested, but %d device%s found", device, n, n == 1 ? " is" : "s are");
        return PRT_STATUS_NO_DEVICE;
    }
    e = cudaSetDevice(device);
    return e == cudaSuccess ? PRT_OK : fail(e, "cudaSetDevice", err, cap);
}

prt_status prt__cuda_malloc(size_t n, void **out, char *err, size_t cap)
{
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, n ? n : 1);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(err, cap, "cudaMalloc of %zu bytes failed: %s", n, cudaGetErrorString(e));
        return e == cudaErrorMemoryAllocation ? PRT_STATUS_OUT_OF_MEMORY : PRT_STATUS_CUDA_ERROR;
    }
    *out = p;
    return PRT_OK;
}

void prt__cuda_free(void *p)
{
    if (p) cudaFree(p);
}

prt_status prt__cuda_host_alloc(size_t n, void **out, char *err, size_t cap)
{
    void *p = NULL;
    cudaError_t e = cudaMallocHost(&p, n ? n : 1);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(err, cap, "cudaMallocHost of %zu bytes failed: %s", n, cudaGetErrorString(e));
        return e == cudaErrorMemoryAllocation ? PRT_STATUS_OUT_OF_MEMORY : PRT_STATUS_CUDA_ERROR;
    }
    *out = p;
    return PRT_OK;
}

void prt__cuda_host_free(void *p)
{
    if (p) cudaFreeHost(p);
}

prt_status prt__cuda_copy_d2h_async(void *dst, const void *src, size_t n, void *stream, char *err, size_t cap)
{
    cudaError_t e;
    if (n == 0) return PRT_OK;
    e = cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToHost, (cudaStream_t)stream);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(err, cap, "cudaMemcpyAsync (device to host, %zu bytes) failed: %s", n, cudaGetErrorString(e));
        return PRT_STATUS_CUDA_ERROR;
    }
    return PRT_OK;
}

prt_status prt__cuda_copy(void *dst, const void *src, size_t n, prt__copy_kind kind, char *err, size_t cap)
{
    enum cudaMemcpyKind k = kind == PRT__H2D   ? cudaMemcpyHostToDevice
                            : kind == PRT__D2H ? cudaMemcpyDeviceToHost
                                               : cudaMemcpyDeviceToDevice;
    cudaError_t e;
    if (n == 0) return PRT_OK;
    e = cudaMemcpy(dst, src, n, k);
    return e == cudaSuccess ? PRT_OK : fail(e, "cudaMemcpy", err, cap);
}

prt_status prt__cuda_memset(void *p, int byte, size_t n, char *err, size_t cap)
{
    cudaError_t e;
    if (n == 0) return PRT_OK;
    e = cudaMemset(p, byte, n);
    return e == cudaSuccess ? PRT_OK : fail(e, "cudaMemset", err, cap);
}

prt_status prt__cuda_stream_create(void **out, char *err, size_t cap)
{
    cudaStream_t s;
    cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    if (e != cudaSuccess) return fail(e, "cudaStreamCreate", err, cap);
    *out = (void *)s;
    return PRT_OK;
}

void prt__cuda_stream_destroy(void *stream)
{
    if (stream) cudaStreamDestroy((cudaStream_t)stream);
}

prt_status prt__cuda_stream_sync(void *stream, char *err, size_t cap)
{
    cudaError_t e = cudaStreamSynchronize((cudaStream_t)stream);
    return e == cudaSuccess ? PRT_OK : fail(e, "cudaStreamSynchronize", err, cap);
}

prt_status prt__cuda_event_create(void **out, char *err, size_t cap)
{
    cudaEvent_t ev = NULL;
    cudaError_t e = cudaEventCreate(&ev);
    if (e != cudaSuccess) return fail(e, "cudaEventCreate", err, cap);
    *out = (void *)ev;
    return PRT_OK;
}

void prt__cuda_event_destroy(void *event)
{
    if (event) cudaEventDestroy((cudaEvent_t)event);
}

prt_status prt__cuda_event_record(void *event, void *stream, char *err, size_t cap)
{
    cudaError_t e = cudaEventRecord((cudaEvent_t)event, (cudaStream_t)stream);
    return e == cudaSuccess ? PRT_OK : fail(e, "cudaEventRecord", err, cap);
}

prt_status prt__cuda_event_elapsed(void *start, void *end, float *ms, char *err, size_t cap)
{
    cudaError_t e = cudaEventSynchronize((cudaEvent_t)end);
    if (e != cudaSuccess) return fail(e, "cudaEventSynchronize", err, cap);
    e = cudaEventElapsedTime(ms, (cudaEvent_t)start, (cudaEvent_t)end);
    return e == cudaSuccess ? PRT_OK : fail(e, "cudaEventElapsedTime", err, cap);
}

prt_status prt__cuda_last_error(const char *what, char *err, size_t cap)
{
    cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? PRT_OK : fail(e, what, err, cap);
}

const char *prt__cuda_device_name(int device, char *buf, size_t cap)
{
    struct cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, device) != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(buf, cap, "GPU %d: (properties unavailable)", device);
        return buf;
    }
    snprintf(buf, cap, "GPU %d: %s (sm_%d%d, %.0f GiB)", device, p.name, p.major, p.minor,
             (double)p.totalGlobalMem / (1024.0 * 1024.0 * 1024.0));
    return buf;
}
