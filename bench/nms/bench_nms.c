/*
 * bench_nms.c - NMS-L, NMS-M, NMS-T, NMS-D (docs/BENCHMARKS.md) on the CUDA
 * path of the NMS plugins, through the public API only: each case is a
 * one-layer network (boxes and scores as inputs; ONNX's three scalar inputs
 * as constants) built for CUDA and run in an execution context on the
 * bench's stream.
 *
 *   bench_nms [--json] [--dump DIR] [--iters N] [--case ID]
 *
 * Data (synthetic, seeded): 40 objects per image, each with one class and a
 * box in a 640x640 image; every box is one object's box with its corners
 * jittered; 20% of the boxes are foreground: the logit of their object's
 * class is N(1, 1.5); every other logit is N(-7, 1.5); scores = sigmoid.
 * --dump writes <case>_boxes.f32 ([B, N, 4]) and <case>_scores.f32
 * ([B, N, C]) so that bench/nms/peer_nms.py times torchvision on the same
 * data. Timing: CUDA events around one prt_context_enqueue, 5 warm-ups,
 * median of N; then that enqueue captured once into a CUDA graph, median of
 * N replays ("graph": GPU time without the host's launch gaps; -1 when the
 * enqueue cannot be captured).
 *
 * Semantics (plugins/nms/README.md): NMS-L/M/T run BatchedNMSDynamic_TRT
 * (topK 1000, keepTopK 100, pixel boxes without +1). NMS-D (1 class, so
 * class-agnostic) runs ONNX NonMaxSuppression with no cap (every kept box,
 * as torchvision returns), score > 0 and IoU > 0.5; the engine offers
 * set_output_extent_device, so nothing syncs inside the enqueue. It also runs EfficientNMS_TRT class-agnostic (its top 4096
 * candidates, 100 rows) for reference.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugrt/engine.h"

#ifdef PLUGRT_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#ifdef PLUGRT_HAVE_CUDA /* everything but main */
typedef struct bcase {
    const char *id;
    int64_t B, N, C;
    float score_thr, iou_thr;
    const char *variant; /* "batched", "onnx", "efficient" */
} bcase;

static const bcase cases[] = {
    {"NMS-L", 1, 8400, 80, 0.25f, 0.5f, "batched"},
    {"NMS-M", 1, 8400, 80, 0.05f, 0.5f, "batched"},
    {"NMS-T", 32, 20000, 80, 0.05f, 0.5f, "batched"},
    {"NMS-D", 1, 100000, 1, 0.0f, 0.5f, "onnx"},
    {"NMS-D", 1, 100000, 1, 0.0f, 0.5f, "efficient"},
};

static uint64_t rs = 0x9E3779B97F4A7C15ull;
static double urand(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return ((double)(rs >> 11) + 0.5) / 9007199254740992.0;
}
static double nrand(void)
{
    return sqrt(-2.0 * log(urand())) * cos(6.283185307179586 * urand());
}

static void gen(const bcase *c, float *boxes, float *scores)
{
    int64_t b, n, k;
    rs = 0x9E3779B97F4A7C15ull ^ (uint64_t)(c->N * 131 + c->C * 7 + c->B);
    for (b = 0; b < c->B; b++) {
        float ob[40][4];
        int ocls[40];
        for (k = 0; k < 40; k++) {
            double w = 20 + urand() * 180, h = 20 + urand() * 180;
            double cx = 50 + urand() * 540, cy = 50 + urand() * 540;
            ob[k][0] = (float)(cx - w / 2); ob[k][1] = (float)(cy - h / 2);
            ob[k][2] = (float)(cx + w / 2); ob[k][3] = (float)(cy + h / 2);
            ocls[k] = (int)(urand() * (double)c->C);
        }
        for (n = 0; n < c->N; n++) {
            int o = (int)(urand() * 40);
            float *bx = boxes + (b * c->N + n) * 4, *sc = scores + (b * c->N + n) * c->C;
            double w = ob[o][2] - ob[o][0], h = ob[o][3] - ob[o][1];
            int fg = urand() < 0.2;
            bx[0] = (float)(ob[o][0] + nrand() * 0.08 * w);
            bx[1] = (float)(ob[o][1] + nrand() * 0.08 * h);
            bx[2] = (float)(ob[o][2] + nrand() * 0.08 * w);
            bx[3] = (float)(ob[o][3] + nrand() * 0.08 * h);
            for (k = 0; k < c->C; k++) {
                double z = (fg && k == ocls[o]) ? 1.0 + 1.5 * nrand() : -7.0 + 1.5 * nrand();
                sc[k] = (float)(1.0 / (1.0 + exp(-z)));
            }
        }
    }
}

static int cmp_f(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

#define CK(x)                                                                          \
    do {                                                                               \
        cudaError_t e_ = (x);                                                          \
        if (e_ != cudaSuccess) {                                                       \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                  \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

/* The same enqueue captured once into a CUDA graph and replayed `iters`
 * times (after 5 warm-up replays), each replay between two events: the
 * median GPU time without the host's launch gaps, in us; -1 when the
 * enqueue cannot be captured (a host synchronization inside it). */
static double graph_time(prt_context *ctx, cudaStream_t s, cudaEvent_t e0, cudaEvent_t e1, int iters)
{
    cudaGraph_t gr = NULL;
    cudaGraphExec_t ge = NULL;
    prt_status st;
    double med = -1;
    float *tg;
    int i, ok = 1;
    if (cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) != cudaSuccess) return -1;
    st = prt_context_enqueue(ctx, s);
    if (cudaStreamEndCapture(s, &gr) != cudaSuccess || st != PRT_OK ||
        cudaGraphInstantiate(&ge, gr, 0) != cudaSuccess) {
        (void)cudaGetLastError();
        if (gr) cudaGraphDestroy(gr);
        return -1;
    }
    tg = (float *)malloc(sizeof(float) * (size_t)iters);
    for (i = -5; i < iters && ok; i++) {
        float ms = 0;
        ok = cudaEventRecord(e0, s) == cudaSuccess && cudaGraphLaunch(ge, s) == cudaSuccess &&
             cudaEventRecord(e1, s) == cudaSuccess && cudaEventSynchronize(e1) == cudaSuccess &&
             cudaEventElapsedTime(&ms, e0, e1) == cudaSuccess;
        if (i >= 0) tg[i] = ms;
    }
    if (ok) {
        qsort(tg, (size_t)iters, sizeof *tg, cmp_f);
        med = tg[iters / 2] * 1000.0;
    }
    free(tg);
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(gr);
    return med;
}

static prt_dims mkdims(int nb, const int64_t *e)
{
    prt_dims d;
    int i;
    memset(&d, 0, sizeof d);
    d.nb = nb;
    for (i = 0; i < nb; i++) d.d[i] = e[i];
    return d;
}

/* The case's one-layer network: inputs "boxes" and "scores", outputs out[]. */
static prt_network *case_network(const bcase *c, int keep, const char **desc, const char *const **outs, int *nb_out)
{
    static const char *const onnx_out[1] = {"selected"};
    static const char *const trt_out[4] = {"num_detections", "nmsed_boxes", "nmsed_scores", "nmsed_classes"};
    const char *in[5] = {"boxes", "scores", "max_per_class", "iou", "score"};
    prt_network *net = NULL;
    prt_status st;
    if (prt_network_create(prt_registry_global(), &net) != PRT_OK) return NULL;
    if (strcmp(c->variant, "onnx") == 0) {
        const int64_t eb[3] = {c->B, c->N, 4}, es[3] = {c->B, c->C, c->N}, one[1] = {1}, maxpc = c->N;
        const prt_dims db = mkdims(3, eb), ds = mkdims(3, es), d1 = mkdims(1, one);
        const prt_fields none = {NULL, 0, 0};
        *desc = "ONNX NonMaxSuppression (1 class, so class-agnostic; max_output_boxes_per_class = N: no cap; "
                "score > 0; IoU > 0.5)";
        *outs = onnx_out;
        *nb_out = 1;
        st = prt_network_add_input(net, "boxes", PRT_DTYPE_F32, &db);
        if (st == PRT_OK) st = prt_network_add_input(net, "scores", PRT_DTYPE_F32, &ds);
        if (st == PRT_OK) st = prt_network_add_constant(net, "max_per_class", PRT_DTYPE_I64, &d1, &maxpc, 8);
        if (st == PRT_OK) st = prt_network_add_constant(net, "iou", PRT_DTYPE_F32, &d1, &c->iou_thr, 4);
        if (st == PRT_OK) st = prt_network_add_constant(net, "score", PRT_DTYPE_F32, &d1, &c->score_thr, 4);
        if (st == PRT_OK)
            st = prt_network_add_layer(net, "nms", "NonMaxSuppression", "1", "", &none, in, 5, onnx_out, 1);
    } else {
        const int64_t eb[4] = {c->B, c->N, 1, 4}, es[3] = {c->B, c->N, c->C};
        const prt_dims db = mkdims(4, eb), ds = mkdims(3, es);
        int32_t iv[16];
        float fv[16];
        prt_field f[16];
        prt_fields fc;
        int nf = 0;
        const char *plugin;
#define FI(nm, v) (iv[nf] = (v), f[nf] = (prt_field){.name = nm, .data = &iv[nf], .type = PRT_FIELD_INT32, .count = 1}, nf++)
#define FF(nm, v) (fv[nf] = (v), f[nf] = (prt_field){.name = nm, .data = &fv[nf], .type = PRT_FIELD_FLOAT32, .count = 1}, nf++)
        if (strcmp(c->variant, "batched") == 0) {
            plugin = "BatchedNMSDynamic_TRT";
            *desc = "BatchedNMSDynamic_TRT (topK 1000 per class, keepTopK 100, pixel boxes, no +1)";
            FI("shareLocation", 1); FI("backgroundLabelId", -1); FI("numClasses", (int32_t)c->C);
            FI("topK", 1000); FI("keepTopK", keep); FF("scoreThreshold", c->score_thr);
            FF("iouThreshold", c->iou_thr); FI("isNormalized", 0); FI("caffeSemantics", 0);
        } else {
            plugin = "EfficientNMS_TRT";
            *desc = "EfficientNMS_TRT class-agnostic (top 4096 candidates, max_output_boxes 100; not the same "
                    "work as torchvision's)";
            FF("score_threshold", c->score_thr); FF("iou_threshold", c->iou_thr);
            FI("max_output_boxes", keep); FI("class_agnostic", 1);
        }
#undef FI
#undef FF
        fc = (prt_fields){.fields = f, .nb = nf};
        *outs = trt_out;
        *nb_out = 4;
        st = prt_network_add_input(net, "boxes", PRT_DTYPE_F32, &db);
        if (st == PRT_OK) st = prt_network_add_input(net, "scores", PRT_DTYPE_F32, &ds);
        if (st == PRT_OK) st = prt_network_add_layer(net, "nms", plugin, "1", "", &fc, in, 2, trt_out, 4);
    }
    {
        int i;
        for (i = 0; st == PRT_OK && i < *nb_out; i++) st = prt_network_mark_output(net, (*outs)[i]);
    }
    if (st != PRT_OK) {
        fprintf(stderr, "%s: %s\n", c->id, prt_network_last_error(net));
        prt_network_destroy(net);
        return NULL;
    }
    return net;
}

static int run_case(const bcase *c, int iters, int json, const char *dump)
{
    size_t nb = (size_t)(c->B * c->N * 4), ns = (size_t)(c->B * c->N * c->C);
    float *hb = (float *)malloc(nb * 4), *hs = (float *)malloc(ns * 4);
    void *db = NULL, *ds = NULL, *dout[4] = {0};
    const char *const *outs = NULL;
    cudaStream_t s;
    cudaEvent_t e0, e1;
    float *t = (float *)malloc(sizeof(float) * (size_t)iters);
    char err[1024];
    prt_network *net;
    prt_engine *e = NULL;
    prt_context *ctx = NULL;
    prt_builder_config bc;
    prt_context_config cc;
    int i, nb_out = 0, keep = 100;
    double graph_us;
    const char *desc = "";
    long long ndet = 0;

    if (!hb || !hs || !t) return 1;
    gen(c, hb, hs);
    if (dump) {
        char path[1024];
        FILE *f;
        snprintf(path, sizeof path, "%s/%s_boxes.f32", dump, c->id);
        if ((f = fopen(path, "wb"))) { fwrite(hb, 4, nb, f); fclose(f); }
        snprintf(path, sizeof path, "%s/%s_scores.f32", dump, c->id);
        if ((f = fopen(path, "wb"))) { fwrite(hs, 4, ns, f); fclose(f); }
    }
    CK(cudaStreamCreate(&s));
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaMalloc(&db, nb * 4));
    CK(cudaMalloc(&ds, ns * 4));
    CK(cudaMemcpy(db, hb, nb * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(ds, hs, ns * 4, cudaMemcpyHostToDevice));
    if (!(net = case_network(c, keep, &desc, &outs, &nb_out))) return 1;
    prt_builder_config_init(&bc);
    bc.device = PRT_DEVICE_CUDA;
    if (prt_engine_build(net, &bc, prt_registry_global(), &e, err, sizeof err) != PRT_OK) {
        fprintf(stderr, "%s: build: %s\n", c->id, err);
        return 1;
    }
    prt_network_destroy(net);
    prt_context_config_init(&cc);
    cc.cuda_stream = s;
    if (prt_context_create(e, &cc, &ctx) != PRT_OK) {
        fprintf(stderr, "%s: context: %s\n", c->id, prt_engine_last_error(e));
        return 1;
    }
    if (prt_context_set_tensor(ctx, "boxes", db) != PRT_OK || prt_context_set_tensor(ctx, "scores", ds) != PRT_OK) {
        fprintf(stderr, "%s: %s\n", c->id, prt_context_last_error(ctx));
        return 1;
    }
    for (i = 0; i < nb_out; i++) {
        size_t bytes = 0;
        if (prt_context_buffer_size(ctx, outs[i], &bytes) != PRT_OK) {
            fprintf(stderr, "%s: %s\n", c->id, prt_context_last_error(ctx));
            return 1;
        }
        CK(cudaMalloc(&dout[i], bytes ? bytes : 1));
        if (prt_context_set_tensor(ctx, outs[i], dout[i]) != PRT_OK) {
            fprintf(stderr, "%s: %s\n", c->id, prt_context_last_error(ctx));
            return 1;
        }
    }
    for (i = -5; i < iters; i++) {
        prt_status st;
        CK(cudaEventRecord(e0, s));
        st = prt_context_enqueue(ctx, s);
        CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1));
        if (st != PRT_OK) {
            fprintf(stderr, "%s: enqueue: %s\n", c->id, prt_context_last_error(ctx));
            return 1;
        }
        if (i >= 0) CK(cudaEventElapsedTime(&t[i], e0, e1));
    }
    qsort(t, (size_t)iters, sizeof *t, cmp_f);
    if (nb_out == 1) {
        prt_dims d;
        /* Reading the shape applies the extent copied after the last run, outside the capture below. */
        if (prt_context_get_shape(ctx, outs[0], &d) != PRT_OK) {
            fprintf(stderr, "%s: %s\n", c->id, prt_context_last_error(ctx));
            return 1;
        }
        ndet = d.d[0];
    } else {
        int32_t *nd = (int32_t *)malloc((size_t)c->B * 4);
        CK(cudaMemcpy(nd, dout[0], (size_t)c->B * 4, cudaMemcpyDeviceToHost));
        for (i = 0; i < c->B; i++) ndet += nd[i];
        free(nd);
    }
    graph_us = graph_time(ctx, s, e0, e1, iters);
    {
        double bytes = (double)(nb + ns) * 4.0;
        double floor_us = bytes / 4.1e6; /* ~4.1 TB/s H200 read bandwidth */
        double med = t[iters / 2] * 1000.0, mn = t[0] * 1000.0, ws = (double)prt_engine_workspace_size(e);
        if (json)
            printf("{\"case\": \"%s\", \"variant\": \"%s\", \"desc\": \"%s\", \"median_us\": %.1f, \"min_us\": %.1f, "
                   "\"graph_us\": %.1f, \"floor_us\": %.1f, \"detections\": %lld, \"workspace_mb\": %.1f}\n",
                   c->id, c->variant, desc, med, mn, graph_us, floor_us, ndet, ws / 1048576.0);
        else
            printf("%-6s %-9s median %9.1f us  min %9.1f us  graph %9.1f us  floor %7.1f us (%.1fx)  detections %lld  "
                   "[%s]\n", c->id, c->variant, med, mn, graph_us, floor_us, med / floor_us, ndet, desc);
        fflush(stdout);
    }
    prt_context_destroy(ctx);
    prt_engine_destroy(e);
    cudaFree(db); cudaFree(ds);
    for (i = 0; i < 4; i++) cudaFree(dout[i]);
    cudaStreamDestroy(s);
    free(hb); free(hs); free(t);
    return 0;
}
#endif

int main(int argc, char **argv)
{
    int json = 0, iters = 50, i;
    const char *dump = NULL, *only = NULL;
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) json = 1;
        else if (strcmp(argv[i], "--dump") == 0 && i + 1 < argc) dump = argv[++i];
        else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc) iters = atoi(argv[++i]);
        else if (strcmp(argv[i], "--case") == 0 && i + 1 < argc) only = argv[++i];
        else {
            fprintf(stderr, "usage: %s [--json] [--dump DIR] [--iters N] [--case ID]\n", argv[0]);
            return 2;
        }
    }
    if (iters < 1) iters = 1;
#ifdef PLUGRT_HAVE_CUDA
    for (i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        if (only && strcmp(only, cases[i].id) != 0) continue;
        if (run_case(&cases[i], iters, json, dump && (i == 0 || strcmp(cases[i].id, cases[i - 1].id)) ? dump : NULL))
            return 1;
    }
    return 0;
#else
    (void)json; (void)dump; (void)only;
    fprintf(stderr, "bench_nms: built without CUDA\n");
    return 0;
#endif
}
