/*
 * nms/nms.h - internal interface of the NMS plugins: the creators (so that
 * tests can drive them without a registry) and the shared execution core.
 *
 * All three variants run through one pipeline over "segments":
 *   BatchedNMS and ONNX: one segment per (image, class), candidate index n;
 *   EfficientNMS: one segment per image, candidate index n*C + c.
 * Per segment: candidates pass the score test, are ordered by descending
 * score then ascending index, the first `pre_cap` enter greedy NMS, which
 * stops after `keep_cap` kept boxes. Then per image: BatchedNMS merges the
 * classes by (score desc, class asc, rank asc) into out_cap rows;
 * EfficientNMS emits its segment; ONNX concatenates (image, class) rows.
 */
#ifndef PLUGRT_NMS_H
#define PLUGRT_NMS_H

#include "plugrt/plugin.h"
#include "nms_core.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const prt_plugin_creator prt__nms_batched_creator;
extern const prt_plugin_creator prt__nms_batched_dynamic_creator;
extern const prt_plugin_creator prt__nms_efficient_creator;
extern const prt_plugin_creator prt__nms_onnx_creator;

/* EfficientNMS: candidates per image that enter NMS (a fixed constant). */
#define PRT_NMS_EFFICIENT_MAX_CANDIDATES 4096
/* BatchedNMS: the largest topK accepted. */
#define PRT_NMS_BATCHED_MAX_TOPK 4096

typedef struct prt__nms_params {
    int32_t kind;          /* PRT_NMS_BATCHED / EFFICIENT / ONNX */
    int32_t fp16;          /* boxes, scores, anchors and float outputs are half */
    int64_t B, N, C;
    int32_t box_classes;   /* boxes per anchor: 1 (shared) or C */
    int32_t box_mode;      /* PRT_NMS_BOX_* */
    int32_t anchors_batched; /* anchors [B,N,4] (1) or [1,N,4] (0) */
    int32_t background;    /* class without detections; -1: none */
    int32_t score_ge, iou_ge;
    int32_t has_score_thr;
    float score_thr;       /* EfficientNMS with activation: in logit space */
    float iou_thr;
    float size_off;        /* 1: Caffe pixel +1 */
    int32_t clip;          /* BatchedNMS: saturate output boxes to [0, 1] */
    int32_t agnostic;      /* EfficientNMS: suppress across classes */
    int32_t activation;    /* EfficientNMS: output sigmoid(score) */
    int64_t pre_cap;       /* candidates per segment entering NMS */
    int64_t keep_cap;      /* kept boxes per segment (early exit) */
    int64_t out_cap;       /* rows per image (BatchedNMS keepTopK, EfficientNMS M) */
} prt__nms_params;

/* The inputs and outputs of one run. Unused members are NULL. */
typedef struct prt__nms_io {
    const void *boxes, *scores, *anchors;
    /* ONNX optional scalars: CPU reads them on the host, CUDA on the device. */
    const int64_t *max_per_class;
    const float *iou_thr, *score_thr;
    int32_t *num_det;      /* [B] */
    void *out_boxes;       /* [B, out_cap, 4] */
    void *out_scores;      /* [B, out_cap] */
    void *out_classes;     /* [B, out_cap]: float/half (BatchedNMS) or int32 (EfficientNMS) */
    int64_t *selected;     /* ONNX: [<= B*C*N, 3] */
    int64_t nb_selected;   /* ONNX: set by the run (not with count_on_device) */
    /* ONNX on CUDA: with count_on_device set, the run leaves the number of
     * selected rows on the device, as an int64 in the workspace at
     * *dev_count, written by the queued kernels (no host synchronisation);
     * else it copies the count back and waits for it. */
    int32_t count_on_device;
    const int64_t *dev_count;
} prt__nms_io;

/* Segments and capacity per segment. */
static inline int64_t prt__nms_segments(const prt__nms_params *p)
{
    return p->kind == PRT_NMS_EFFICIENT ? p->B : p->B * p->C;
}
static inline int64_t prt__nms_seg_len(const prt__nms_params *p)
{
    return p->kind == PRT_NMS_EFFICIENT ? p->N * p->C : p->N;
}
static inline int64_t prt__nms_pre_len(const prt__nms_params *p)
{
    int64_t s = prt__nms_seg_len(p);
    return p->pre_cap < s ? p->pre_cap : s;
}

/* Plain reference (allocates; used by tests): returns PRT_OK or
 * OUT_OF_MEMORY. ONNX scalars are read from io (host memory). */
prt_status prt__nms_reference(const prt__nms_params *p, prt__nms_io *io);

/* CPU fast path. Workspace bytes for these (max) shapes. */
size_t prt__nms_cpu_workspace(const prt__nms_params *p);
prt_status prt__nms_cpu_run(const prt__nms_params *p, prt__nms_io *io, void *ws, prt_exec *ex);

#ifdef PLUGRT_HAVE_CUDA
/* CUDA path: everything queued on `stream`. ONNX: the number of selected
 * rows is left on the device (io->count_on_device: io->dev_count points at
 * it) or copied back to io->nb_selected after a stream synchronisation.
 * Returns 0 or a cudaError_t value. */
size_t prt__nms_cuda_workspace(const prt__nms_params *p);
int prt__nms_cuda_run(const prt__nms_params *p, prt__nms_io *io, void *ws, size_t ws_size,
                      void *stream);
const char *prt__nms_cuda_error_string(int err);
#endif

/* Read one value of a float/half tensor. */
static inline float prt__nms_ld(const void *base, int32_t fp16, int64_t i)
{
    return fp16 ? prt_f16_to_f32(((const uint16_t *)base)[i]) : ((const float *)base)[i];
}
static inline void prt__nms_st(void *base, int32_t fp16, int64_t i, float v)
{
    if (fp16)
        ((uint16_t *)base)[i] = prt_f32_to_f16(v);
    else
        ((float *)base)[i] = v;
}

#ifdef __cplusplus
}
#endif
#endif
