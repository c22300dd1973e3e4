/*
 * bench_nms.c - NMS-L, NMS-M, NMS-T, NMS-D (docs/BENCHMARKS.md) on the CUDA
 * path of the NMS plugins (driven through their creators and ops).
 *
 *   bench_nms [--json] [--dump DIR] [--iters N] [--case ID]
 *
 * Data (synthetic, seeded): 40 objects per image, each with one class and a
 * box in a 640x640 image; every box is one object's box with its corners
 * jittered; 20% of the boxes are foreground: the logit of their object's
 * class is N(1, 1.5); every other logit is N(-7, 1.5); scores = sigmoid.
 * --dump writes <case>_boxes.f32 ([B, N, 4]) and <case>_scores.f32
 * ([B, N, C]) so that bench/nms/peer_nms.py times torchvision on the same
 * data. Timing: CUDA events around one enqueue, 5 warm-ups, median of N;
 * then the enqueue captured once into a CUDA graph, median of N replays
 * ("graph": GPU time without the host's launch gaps; -1 when the enqueue
 * cannot be captured).
 *
 * Semantics (plugins/nms/README.md): NMS-L/M/T run BatchedNMSDynamic_TRT
 * (topK 1000, keepTopK 100, pixel boxes without +1). NMS-D (1 class, so
 * class-agnostic) runs ONNX NonMaxSuppression with no cap (every kept box,
 * as torchvision returns), score > 0 and IoU > 0.5; the exec offers
 * set_output_extent_device, as the engine does, so nothing syncs inside the
 * enqueue. It also runs EfficientNMS_TRT class-agnostic (its top 4096
 * candidates, 100 rows) for reference.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugins/nms/nms.h"

#ifdef PLUGRT_HAVE_CUDA
#include <cuda_runtime.h>
#endif

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

#ifdef PLUGRT_HAVE_CUDA
static int cmp_f(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

static void exec_set_error(prt_exec *ex, const char *m)
{
    (void)ex;
    fprintf(stderr, "enqueue error: %s\n", m);
}
static prt_status exec_set_dims(prt_exec *ex, int32_t i, const prt_dims *d)
{
    *(int64_t *)ex->host_ = d->d[0];
    (void)i;
    return PRT_OK;
}

/* As an engine does: keep the device address, read it after the stream. */
static const int64_t *dev_extent;
static prt_status exec_set_extent_device(prt_exec *ex, int32_t i, int32_t dim, const int64_t *dev)
{
    (void)ex;
    (void)i;
    (void)dim;
    dev_extent = dev;
    return PRT_OK;
}

static void dyn(prt_dyn_tensor_desc *d, prt_dtype dt, int nb, const int64_t *e)
{
    int i;
    memset(d, 0, sizeof *d);
    d->desc.dtype = dt;
    d->desc.dims.nb = nb;
    for (i = 0; i < nb; i++) d->desc.dims.d[i] = e[i];
    d->min = d->opt = d->max = d->desc.dims;
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
static double graph_time(prt_field_plugin *fp, prt_blob_plugin *bp, const prt_tensor_desc *tin,
                         const prt_tensor_desc *tout, const void *const *inputs, void *const *dout, void *dws,
                         prt_exec *ex, cudaStream_t s, cudaEvent_t e0, cudaEvent_t e1, int iters)
{
    cudaGraph_t gr = NULL;
    cudaGraphExec_t ge = NULL;
    prt_status st;
    double med = -1;
    float *tg;
    int i, ok = 1;
    if (cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) != cudaSuccess) return -1;
    st = fp ? fp->ops->runtime->enqueue(fp, tin, tout, inputs, dout, dws, ex)
            : bp->ops->enqueue(bp, tin, tout, inputs, dout, dws, ex);
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

static int run_case(const bcase *c, int iters, int json, const char *dump)
{
    size_t nb = (size_t)(c->B * c->N * 4), ns = (size_t)(c->B * c->N * c->C);
    float *hb = (float *)malloc(nb * 4), *hs = (float *)malloc(ns * 4);
    void *db = NULL, *ds = NULL, *dws = NULL, *dout[4] = {0}, *dmax = NULL, *diou = NULL, *dsc = NULL;
    prt_dyn_tensor_desc din[5], dout_d[4];
    prt_tensor_desc tin[5], tout[4];
    const void *inputs[5];
    prt_exec ex;
    int64_t nsel = 0;
    size_t ws = 0;
    cudaStream_t s;
    cudaEvent_t e0, e1;
    float *t = (float *)malloc(sizeof(float) * (size_t)iters);
    char err[512];
    prt_msg m = {err, sizeof err};
    prt_blob_plugin *bp = NULL;
    prt_field_plugin *fp = NULL;
    int i, nb_in = 2, keep = 100;
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
    memset(&ex, 0, sizeof ex);
    ex.struct_size = sizeof ex;
    ex.abi_version = PRT_ABI_VERSION;
    ex.device = PRT_DEVICE_CUDA;
    ex.cuda_stream = s;
    ex.nb_threads = 1;
    ex.set_error = exec_set_error;
    ex.set_output_dims = exec_set_dims;
    ex.set_output_extent_device = exec_set_extent_device; /* ONNX: no sync in the plugin */
    ex.host_ = &nsel;
    dev_extent = NULL;

    if (strcmp(c->variant, "onnx") == 0) {
        int64_t eb[3] = {c->B, c->N, 4}, es[3] = {c->B, c->C, c->N}, one[1] = {1}, eo[2] = {c->B * c->C * c->N, 3};
        int64_t maxpc = c->N;
        prt_fields fc = {NULL, 0, 0};
        desc = "ONNX NonMaxSuppression (1 class, so class-agnostic; max_output_boxes_per_class = N: no cap; "
               "score > 0; IoU > 0.5)";
        dyn(&din[0], PRT_DTYPE_F32, 3, eb);
        dyn(&din[1], PRT_DTYPE_F32, 3, es);
        dyn(&din[2], PRT_DTYPE_I64, 1, one);
        dyn(&din[3], PRT_DTYPE_F32, 1, one);
        dyn(&din[4], PRT_DTYPE_F32, 1, one);
        dyn(&dout_d[0], PRT_DTYPE_I64, 2, eo);
        nb_in = 5;
        if (prt__nms_onnx_creator.create_field(&prt__nms_onnx_creator, &fc, PRT_PHASE_BUILD, &fp, &m) ||
            fp->ops->build->configure(fp, din, 5, dout_d, 1, &m)) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        ws = fp->ops->build->get_workspace_size(fp, din, 5, dout_d, 1);
        CK(cudaMalloc(&dmax, 8));
        CK(cudaMalloc(&diou, 4));
        CK(cudaMalloc(&dsc, 4));
        CK(cudaMemcpy(dmax, &maxpc, 8, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(diou, &c->iou_thr, 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dsc, &c->score_thr, 4, cudaMemcpyHostToDevice));
        CK(cudaMalloc(&dout[0], (size_t)(c->B * c->C * c->N * 3 * 8)));
        tout[0] = dout_d[0].desc;
    } else {
        int64_t eb[4] = {c->B, c->N, 1, 4}, es[3] = {c->B, c->N, c->C};
        int64_t o0[2] = {c->B, 1}, o1[3] = {c->B, keep, 4}, o2[2] = {c->B, keep};
        int32_t iv[16];
        float fv[4];
        prt_field f[16];
        prt_fields fc;
        int nf = 0;
        const prt_plugin_creator *cr;
#define FI(nm, v) (iv[nf] = (v), f[nf] = (prt_field){nm, &iv[nf], PRT_FIELD_INT32, 0, 1}, nf++)
#define FF(nm, v) (fv[nf % 4] = (v), f[nf] = (prt_field){nm, &fv[nf % 4], PRT_FIELD_FLOAT32, 0, 1}, nf++)
        if (strcmp(c->variant, "batched") == 0) {
            cr = &prt__nms_batched_dynamic_creator;
            desc = "BatchedNMSDynamic_TRT (topK 1000 per class, keepTopK 100, pixel boxes, no +1)";
            FI("shareLocation", 1); FI("backgroundLabelId", -1); FI("numClasses", (int32_t)c->C);
            FI("topK", 1000); FI("keepTopK", keep); FF("scoreThreshold", c->score_thr);
            FF("iouThreshold", c->iou_thr); FI("isNormalized", 0); FI("caffeSemantics", 0);
        } else {
            cr = &prt__nms_efficient_creator;
            desc = "EfficientNMS_TRT class-agnostic (top 4096 candidates, max_output_boxes 100; not the same "
                   "work as torchvision's)";
            FF("score_threshold", c->score_thr); FF("iou_threshold", c->iou_thr);
            FI("max_output_boxes", keep); FI("class_agnostic", 1);
        }
        fc = (prt_fields){f, nf, 0};
        dyn(&din[0], PRT_DTYPE_F32, 4, eb);
        dyn(&din[1], PRT_DTYPE_F32, 3, es);
        dyn(&dout_d[0], PRT_DTYPE_I32, 2, o0);
        dyn(&dout_d[1], PRT_DTYPE_F32, 3, o1);
        dyn(&dout_d[2], PRT_DTYPE_F32, 2, o2);
        dyn(&dout_d[3], strcmp(c->variant, "batched") == 0 ? PRT_DTYPE_F32 : PRT_DTYPE_I32, 2, o2);
        if (cr->create_blob(cr, &fc, &bp, &m) || bp->ops->configure_plugin(bp, din, 2, dout_d, 4, &m)) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        for (i = 0; i < 2; i++) tin[i] = din[i].desc;
        for (i = 0; i < 4; i++) tout[i] = dout_d[i].desc;
        ws = bp->ops->get_workspace_size(bp, tin, 2, tout, 4);
        CK(cudaMalloc(&dout[0], (size_t)c->B * 4));
        CK(cudaMalloc(&dout[1], (size_t)(c->B * keep * 16)));
        CK(cudaMalloc(&dout[2], (size_t)(c->B * keep * 4)));
        CK(cudaMalloc(&dout[3], (size_t)(c->B * keep * 4)));
    }
    for (i = 0; i < nb_in; i++) tin[i] = din[i].desc;
    CK(cudaMalloc(&dws, ws + 256));
    inputs[0] = db;
    inputs[1] = ds;
    inputs[2] = dmax;
    inputs[3] = diou;
    inputs[4] = dsc;
    for (i = -5; i < iters; i++) {
        prt_status st;
        CK(cudaEventRecord(e0, s));
        if (fp)
            st = fp->ops->runtime->enqueue(fp, tin, tout, inputs, dout, dws, &ex);
        else
            st = bp->ops->enqueue(bp, tin, tout, inputs, dout, dws, &ex);
        CK(cudaEventRecord(e1, s));
        CK(cudaEventSynchronize(e1));
        if (st != PRT_OK) {
            fprintf(stderr, "%s: enqueue failed (%d)\n", c->id, (int)st);
            return 1;
        }
        if (i >= 0) CK(cudaEventElapsedTime(&t[i], e0, e1));
    }
    qsort(t, (size_t)iters, sizeof *t, cmp_f);
    graph_us = graph_time(fp, bp, tin, tout, inputs, dout, dws, &ex, s, e0, e1, iters);
    if (fp) {
        if (dev_extent) CK(cudaMemcpy(&nsel, dev_extent, sizeof nsel, cudaMemcpyDeviceToHost));
        ndet = nsel;
    } else {
        int32_t *nd = (int32_t *)malloc((size_t)c->B * 4);
        CK(cudaMemcpy(nd, dout[0], (size_t)c->B * 4, cudaMemcpyDeviceToHost));
        for (i = 0; i < c->B; i++) ndet += nd[i];
        free(nd);
    }
    {
        double bytes = (double)(nb + ns) * 4.0;
        double floor_us = bytes / 4.1e6; /* ~4.1 TB/s H200 read bandwidth */
        double med = t[iters / 2] * 1000.0, mn = t[0] * 1000.0;
        if (json)
            printf("{\"case\": \"%s\", \"variant\": \"%s\", \"desc\": \"%s\", \"median_us\": %.1f, \"min_us\": %.1f, "
                   "\"graph_us\": %.1f, \"floor_us\": %.1f, \"detections\": %lld, \"workspace_mb\": %.1f}\n",
                   c->id, c->variant, desc, med, mn, graph_us, floor_us, ndet, ws / 1048576.0);
        else
            printf("%-6s %-9s median %9.1f us  min %9.1f us  graph %9.1f us  floor %7.1f us (%.1fx)  detections %lld  "
                   "[%s]\n", c->id, c->variant, med, mn, graph_us, floor_us, med / floor_us, ndet, desc);
        fflush(stdout);
    }
    if (bp) bp->ops->destroy(bp);
    if (fp) fp->ops->destroy(fp);
    cudaFree(db); cudaFree(ds); cudaFree(dws); cudaFree(dmax); cudaFree(diou); cudaFree(dsc);
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
