/* backend/cpu/backend_cpu.c - the CPU backend (backend/backend.h), and the
 * choice of backend by device. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "backend/backend.h"
#include "backend/cuda/device.h"
#include "core/core.h"
#include "core/threadpool.h"

static prt_status cpu_select(int32_t index, char *err, size_t cap)
{
    (void)index; (void)err; (void)cap;
    return PRT_OK;
}

static void *cpu_alloc(size_t n, void **block)
{
    uint8_t *b;
    if (n == 0) n = 1;
    if (n > SIZE_MAX - 64) return NULL;
    b = prt__malloc(n + 64);
    *block = b;
    return b ? (void *)(((uintptr_t)b + 63) & ~(uintptr_t)63) : NULL;
}

static void cpu_free(void *block) { prt__free(block); }

static prt_status cpu_copy(void *dst, const void *src, size_t n, char *err, size_t cap)
{
    (void)err; (void)cap;
    if (n) memcpy(dst, src, n);
    return PRT_OK;
}

static prt_status cpu_copy_async(void *dst, const void *src, size_t n, void *stream, char *err, size_t cap)
{
    (void)stream;
    return cpu_copy(dst, src, n, err, cap);
}

static prt_status cpu_host_alloc(size_t n, void **out, char *err, size_t cap)
{
    *out = prt__malloc(n ? n : 1);
    if (*out) return PRT_OK;
    snprintf(err, cap, "out of memory for %zu bytes", n);
    return PRT_STATUS_OUT_OF_MEMORY;
}

static prt_status cpu_stream_create(void **out, char *err, size_t cap)
{
    (void)err; (void)cap;
    *out = NULL;
    return PRT_OK;
}

static void cpu_stream_destroy(void *stream) { (void)stream; }

static prt_status cpu_stream_sync(void *stream, char *err, size_t cap)
{
    (void)stream; (void)err; (void)cap;
    return PRT_OK;
}

typedef struct cast_job {
    prt_dtype from, to;
    const void *src;
    void *dst;
} cast_job;

static void cast_range(void *arg, int64_t b, int64_t e)
{
    const cast_job *j = arg;
    int64_t i;
    if (j->from == PRT_DTYPE_F32 && j->to == PRT_DTYPE_F16) {
        const float *s = j->src;
        uint16_t *d = j->dst;
        for (i = b; i < e; i++) d[i] = prt_f32_to_f16(s[i]);
    } else {
        const uint16_t *s = j->src;
        float *d = j->dst;
        for (i = b; i < e; i++) d[i] = prt_f16_to_f32(s[i]);
    }
}

static prt_status cpu_cast(prt_dtype from, prt_dtype to, const void *src, void *dst, int64_t n, prt_exec *ex,
                           char *err, size_t cap)
{
    cast_job j;
    if (!((from == PRT_DTYPE_F32 && to == PRT_DTYPE_F16) || (from == PRT_DTYPE_F16 && to == PRT_DTYPE_F32))) {
        snprintf(err, cap, "no %s -> %s cast; only f32 <-> f16", prt_dtype_name(from), prt_dtype_name(to));
        return PRT_STATUS_UNSUPPORTED;
    }
    j.from = from;
    j.to = to;
    j.src = src;
    j.dst = dst;
    if (n > 0) ex->parallel_for(ex, n, 16384, cast_range, &j);
    return PRT_OK;
}

static prt_status cpu_event_create(void **out, char *err, size_t cap)
{
    return cpu_host_alloc(sizeof(double), out, err, cap);
}

static prt_status cpu_event_record(void *event, void *stream, char *err, size_t cap)
{
    struct timespec ts;
    (void)stream; (void)err; (void)cap;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    *(double *)event = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
    return PRT_OK;
}

static prt_status cpu_event_elapsed(void *start, void *end, float *ms, char *err, size_t cap)
{
    (void)err; (void)cap;
    *ms = (float)(*(const double *)end - *(const double *)start);
    return PRT_OK;
}

static prt_status cpu_workers_create(int32_t nb_threads, void **out, char *err, size_t cap)
{
    prt__threadpool *tp = NULL;
    prt_status s = prt__threadpool_create(nb_threads, &tp, err, cap);
    if (s == PRT_OK) *out = tp;
    return s;
}

static void cpu_workers_destroy(void *w) { prt__threadpool_destroy(w); }
static int32_t cpu_workers_size(const void *w) { return w ? prt__threadpool_size(w) : 1; }

static void cpu_parallel_for(void *w, int64_t n, int64_t grain, prt_range_fn fn, void *arg)
{
    if (w) prt__threadpool_parallel_for(w, n, grain, fn, arg);
    else if (n > 0) fn(arg, 0, n);
}

/* The model name of the first processor in /proc/cpuinfo (Linux), else
 * the architecture's name. */
static const char *cpu_describe(int32_t index, char *buf, size_t cap)
{
    char line[512], model[256] = "";
    FILE *f = fopen("/proc/cpuinfo", "r");
    (void)index;
    while (f && !model[0] && fgets(line, sizeof line, f)) {
        const char *colon = strchr(line, ':');
        size_t n;
        if (!colon || (strncmp(line, "model name", 10) != 0 && strncmp(line, "Processor", 9) != 0 &&
                       strncmp(line, "cpu model", 9) != 0))
            continue;
        colon++;
        while (*colon == ' ' || *colon == '\t') colon++;
        snprintf(model, sizeof model, "%s", colon);
        n = strlen(model);
        while (n && (model[n - 1] == '\n' || model[n - 1] == ' ')) model[--n] = 0;
    }
    if (f) fclose(f);
    if (!model[0]) {
#if defined(__x86_64__)
        snprintf(model, sizeof model, "x86_64");
#elif defined(__aarch64__)
        snprintf(model, sizeof model, "aarch64");
#else
        snprintf(model, sizeof model, "unknown");
#endif
    }
    snprintf(buf, cap, "cpu: %s", model);
    return buf;
}

const char *prt__backend_cuda_describe(int32_t index, char *buf, size_t cap)
{
    char d[320];
    const char *colon;
    prt__cuda_device_name((int)index, d, sizeof d);
    colon = strchr(d, ':');
    snprintf(buf, cap, "cuda: %s", colon && colon[1] ? colon + 2 : d);
    return buf;
}

const prt__backend prt__backend_cpu = {
    .device = PRT_DEVICE_CPU, .name = "CPU", .host_memory = 1,
    .select = cpu_select, .alloc = cpu_alloc, .free = cpu_free, .upload = cpu_copy,
    .download_async = cpu_copy_async, .host_alloc = cpu_host_alloc, .host_free = cpu_free,
    .stream_create = cpu_stream_create, .stream_destroy = cpu_stream_destroy, .stream_sync = cpu_stream_sync,
    .cast = cpu_cast, .event_create = cpu_event_create, .event_destroy = cpu_free, .event_record = cpu_event_record,
    .event_elapsed = cpu_event_elapsed, .workers_create = cpu_workers_create,
    .workers_destroy = cpu_workers_destroy, .workers_size = cpu_workers_size, .parallel_for = cpu_parallel_for,
    .describe = cpu_describe,
};

const prt__backend *prt__backend_of(prt_device device)
{
    switch (device) {
    case PRT_DEVICE_CPU: return &prt__backend_cpu;
    case PRT_DEVICE_CUDA: return &prt__backend_cuda;
    default: return NULL;
    }
}
