/* tests/compat/compat_util.c - see compat_util.h. */
#include "compat_util.h"

#include "plugrt/trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef PLUGRT_HAVE_CUDA
#include <cuda_runtime.h>
#endif

prt_dims compat_dims(int nb, const int64_t *d)
{
    prt_dims r;
    int i;
    memset(&r, 0, sizeof r);
    r.nb = nb;
    for (i = 0; i < nb; i++) r.d[i] = d[i];
    return r;
}

static char trace_text[16384];

static void on_trace(void *user, const char *line)
{
    size_t n = strlen(trace_text);
    (void)user;
    snprintf(trace_text + n, sizeof trace_text - n, "%s\n", line);
}

void compat_trace_start(void)
{
    trace_text[0] = 0;
    prt_set_trace_callback(on_trace, NULL);
    prt_set_trace(1);
}

const char *compat_trace_stop(void)
{
    prt_set_trace(0);
    prt_set_trace_callback(NULL, NULL);
    return trace_text;
}

const char *compat_trace_missing(const char *text, const char *const *calls, int nb)
{
    int i;
    for (i = 0; i < nb; i++) {
        const char *p = strstr(text, calls[i]);
        if (!p) return calls[i];
        text = p + strlen(calls[i]);
    }
    return NULL;
}

void compat_fill(float *x, size_t n, unsigned seed, float lo, float hi)
{
    size_t i;
    uint32_t s = seed * 2654435761u + 1u;
    for (i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        x[i] = lo + (hi - lo) * (float)(s >> 8) / (float)(1u << 24);
    }
}

static prt_status run_engine(prt_engine *e, prt_device device, compat_io *in, int nb_in, compat_io *out, int nb_out,
                             char *err, size_t cap)
{
    prt_context *ctx = NULL;
    prt_status s = prt_context_create(e, NULL, &ctx);
    void *dev[16] = {0};
    int i;
    if (s != PRT_OK) {
        snprintf(err, cap, "context: %s", prt_engine_last_error(e));
        return s;
    }
    for (i = 0; i < nb_in && s == PRT_OK; i++) {
        void *p = in[i].data;
        s = prt_context_set_input_shape(ctx, in[i].name, &in[i].dims);
#ifdef PLUGRT_HAVE_CUDA
        if (s == PRT_OK && device == PRT_DEVICE_CUDA) {
            if (cudaMalloc(&dev[i], in[i].bytes) != cudaSuccess) s = PRT_STATUS_CUDA_ERROR;
            else cudaMemcpy(dev[i], in[i].data, in[i].bytes, cudaMemcpyHostToDevice);
            p = dev[i];
        }
#endif
        if (s == PRT_OK) s = prt_context_set_tensor(ctx, in[i].name, p);
    }
    for (i = 0; i < nb_out && s == PRT_OK; i++) {
        void *p = out[i].data;
#ifdef PLUGRT_HAVE_CUDA
        if (device == PRT_DEVICE_CUDA) {
            if (cudaMalloc(&dev[nb_in + i], out[i].bytes) != cudaSuccess) s = PRT_STATUS_CUDA_ERROR;
            p = dev[nb_in + i];
        }
#endif
        if (s == PRT_OK) s = prt_context_set_tensor(ctx, out[i].name, p);
    }
    if (s == PRT_OK) s = prt_context_execute(ctx);
    for (i = 0; i < nb_out && s == PRT_OK; i++) {
        s = prt_context_get_shape(ctx, out[i].name, &out[i].dims);
#ifdef PLUGRT_HAVE_CUDA
        if (device == PRT_DEVICE_CUDA) cudaMemcpy(out[i].data, dev[nb_in + i], out[i].bytes, cudaMemcpyDeviceToHost);
#endif
    }
    if (s != PRT_OK) snprintf(err, cap, "run: %s", prt_context_last_error(ctx));
#ifdef PLUGRT_HAVE_CUDA
    for (i = 0; i < 16; i++)
        if (dev[i]) cudaFree(dev[i]);
#endif
    prt_context_destroy(ctx);
    return s;
}

prt_status compat_run(prt_registry *reg, const char *json, prt_device device, compat_io *in, int nb_in, compat_io *out, int nb_out,
                      char *err, size_t cap)
{
    prt_registry *r = reg ? reg : prt_registry_global();
    prt_network *net = NULL;
    prt_engine *built = NULL, *loaded = NULL;
    prt_builder_config cfg;
    prt_profile_range ranges[8];
    void *plan = NULL;
    size_t len = 0;
    int i, k;
    prt_status s = prt_network_from_json(r, json, strlen(json), NULL, &net, err, cap);
    if (s != PRT_OK) return s;
    prt_builder_config_init(&cfg);
    cfg.device = device;
    for (i = 0; i < nb_in && i < 8; i++) {
        ranges[i].input = in[i].name;
        ranges[i].min = ranges[i].opt = ranges[i].max = in[i].dims;
        for (k = 0; k < in[i].dims.nb; k++) (void)k;
    }
    cfg.ranges = ranges;
    cfg.nb_ranges = nb_in;
    s = prt_engine_build(net, &cfg, r, &built, err, cap);
    if (s == PRT_OK) s = prt_engine_serialize(built, NULL, 0, &len);
    if (s == PRT_OK && !(plan = malloc(len))) s = PRT_STATUS_OUT_OF_MEMORY;
    if (s == PRT_OK) s = prt_engine_serialize(built, plan, len, &len);
    if (s == PRT_OK) s = prt_engine_deserialize(r, plan, len, &loaded, err, cap);
    if (s == PRT_OK) s = run_engine(loaded, device, in, nb_in, out, nb_out, err, cap);
    free(plan);
    prt_engine_destroy(loaded);
    prt_engine_destroy(built);
    prt_network_destroy(net);
    return s;
}
