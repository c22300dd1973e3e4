/*
 * nms/nms_core.h - the arithmetic every NMS path shares (CPU reference, CPU
 * fast path, CUDA kernels): sort keys, box decoding and IoU.
 *
 * Everything here is written so that the host compiler and nvcc produce the
 * same bits: single float operations with round-to-nearest (on the device the
 * explicit __f*_rn intrinsics stop nvcc from fusing a multiply and an add),
 * no transcendental functions in anything a selection depends on, except the
 * exp of the centre-size anchor decoder (documented in README.md).
 */
#ifndef PLUGRT_NMS_CORE_H
#define PLUGRT_NMS_CORE_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define NMS_HD __host__ __device__ __forceinline__
#else
#define NMS_HD static inline
#endif

#if defined(__CUDA_ARCH__)
#define NMS_MUL(a, b) __fmul_rn((a), (b))
#define NMS_ADD(a, b) __fadd_rn((a), (b))
#define NMS_SUB(a, b) __fsub_rn((a), (b))
#define NMS_DIV(a, b) __fdiv_rn((a), (b))
#else
#define NMS_MUL(a, b) ((a) * (b))
#define NMS_ADD(a, b) ((a) + (b))
#define NMS_SUB(a, b) ((a) - (b))
#define NMS_DIV(a, b) ((a) / (b))
#endif

/* Which variant's rules apply. */
enum { PRT_NMS_BATCHED = 0, PRT_NMS_EFFICIENT = 1, PRT_NMS_ONNX = 2 };

/* How a box 4-vector becomes corners for the IoU. */
enum {
    PRT_NMS_BOX_CORNERS = 0,   /* any diagonal pair: sort each axis */
    PRT_NMS_BOX_CENTER = 1,    /* [xc, yc, w, h]: corners = c -+ size/2, no sort */
    PRT_NMS_BOX_ANCHOR_CORNERS = 2, /* EfficientNMS: sorted box + sorted anchor */
    PRT_NMS_BOX_ANCHOR_CENTER = 3   /* EfficientNMS: deltas against a centre-size anchor */
};

typedef struct prt_nms_box {
    float x1, y1, x2, y2;
} prt_nms_box;

/* A candidate's sort key: descending order of the key is descending score,
 * then ascending index. -0 counts as +0 so that the order agrees with float
 * comparison. */
NMS_HD uint64_t prt_nms_key(float score, uint32_t idx)
{
    uint32_t u;
    if (score == 0.0f) score = 0.0f;
    memcpy(&u, &score, 4);
    u = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
    return ((uint64_t)u << 32) | (uint64_t)(0xffffffffu - idx);
}

NMS_HD float prt_nms_key_score(uint64_t key)
{
    uint32_t u = (uint32_t)(key >> 32);
    float f;
    u = (u & 0x80000000u) ? (u & 0x7fffffffu) : ~u;
    memcpy(&f, &u, 4);
    return f;
}

NMS_HD uint32_t prt_nms_key_idx(uint64_t key) { return 0xffffffffu - (uint32_t)key; }

NMS_HD float prt_nms_minf(float a, float b) { return a < b ? a : b; }
NMS_HD float prt_nms_maxf(float a, float b) { return a > b ? a : b; }

/* Exact swap into ascending order (no arithmetic). */
NMS_HD prt_nms_box prt_nms_sort_corners(float a, float b, float c, float d)
{
    prt_nms_box r;
    r.x1 = a < c ? a : c;
    r.x2 = a < c ? c : a;
    r.y1 = b < d ? b : d;
    r.y2 = b < d ? d : b;
    return r;
}

NMS_HD prt_nms_box prt_nms_center_corners(float xc, float yc, float w, float h)
{
    prt_nms_box r;
    float hw = NMS_MUL(w, 0.5f), hh = NMS_MUL(h, 0.5f);
    r.x1 = NMS_SUB(xc, hw);
    r.y1 = NMS_SUB(yc, hh);
    r.x2 = NMS_ADD(xc, hw);
    r.y2 = NMS_ADD(yc, hh);
    return r;
}

/* Intersection over union. `off` is 1 for Caffe pixel semantics (+1 on every
 * width and height), else 0. Zero when the boxes do not overlap or any area
 * or the union is not positive. */
NMS_HD float prt_nms_iou(prt_nms_box a, prt_nms_box b, float off)
{
    float iw = NMS_ADD(NMS_SUB(prt_nms_minf(a.x2, b.x2), prt_nms_maxf(a.x1, b.x1)), off);
    float ih = NMS_ADD(NMS_SUB(prt_nms_minf(a.y2, b.y2), prt_nms_maxf(a.y1, b.y1)), off);
    float inter, aa, ab, uni;
    if (!(iw > 0.0f) || !(ih > 0.0f)) return 0.0f;
    inter = NMS_MUL(iw, ih);
    aa = NMS_MUL(NMS_ADD(NMS_SUB(a.x2, a.x1), off), NMS_ADD(NMS_SUB(a.y2, a.y1), off));
    ab = NMS_MUL(NMS_ADD(NMS_SUB(b.x2, b.x1), off), NMS_ADD(NMS_SUB(b.y2, b.y1), off));
    if (!(aa > 0.0f) || !(ab > 0.0f)) return 0.0f;
    uni = NMS_SUB(NMS_ADD(aa, ab), inter);
    if (!(uni > 0.0f)) return 0.0f;
    return NMS_DIV(inter, uni);
}

/* Does a kept box with this IoU suppress the other? */
NMS_HD int prt_nms_suppresses(float iou, float thr, int ge) { return ge ? iou >= thr : iou > thr; }

/* Is this score a candidate? */
NMS_HD int prt_nms_passes(float s, float thr, int ge) { return ge ? s >= thr : s > thr; }

/* Decode one box. `r` is the input 4-vector, `a` the anchor (modes 2 and 3).
 * `out` receives the box as a variant emits it; `iou` the corners the IoU
 * uses (sorted unless `sort_iou` is 0, the ONNX centre-point rule). */
NMS_HD void prt_nms_decode(int mode, const float *r, const float *a, float *out, prt_nms_box *iou,
                           int sort_iou)
{
    prt_nms_box c;
    if (mode == PRT_NMS_BOX_CENTER) {
        c = prt_nms_center_corners(r[0], r[1], r[2], r[3]);
        out[0] = c.x1; out[1] = c.y1; out[2] = c.x2; out[3] = c.y2;
    } else if (mode == PRT_NMS_BOX_ANCHOR_CORNERS) {
        prt_nms_box bb = prt_nms_sort_corners(r[0], r[1], r[2], r[3]);
        prt_nms_box ab = prt_nms_sort_corners(a[0], a[1], a[2], a[3]);
        out[0] = NMS_ADD(bb.x1, ab.x1); out[1] = NMS_ADD(bb.y1, ab.y1);
        out[2] = NMS_ADD(bb.x2, ab.x2); out[3] = NMS_ADD(bb.y2, ab.y2);
    } else if (mode == PRT_NMS_BOX_ANCHOR_CENTER) {
        /* r = (dx, dy, dw, dh), a = (xc, yc, w, h) */
        float xc = NMS_ADD(NMS_MUL(r[0], a[2]), a[0]);
        float yc = NMS_ADD(NMS_MUL(r[1], a[3]), a[1]);
        float w = NMS_MUL(a[2], expf(r[2]));
        float h = NMS_MUL(a[3], expf(r[3]));
        c = prt_nms_center_corners(xc, yc, w, h);
        out[0] = c.x1; out[1] = c.y1; out[2] = c.x2; out[3] = c.y2;
    } else {
        out[0] = r[0]; out[1] = r[1]; out[2] = r[2]; out[3] = r[3];
    }
    if (sort_iou) {
        *iou = prt_nms_sort_corners(out[0], out[1], out[2], out[3]);
    } else {
        iou->x1 = out[0]; iou->y1 = out[1]; iou->x2 = out[2]; iou->y2 = out[3];
    }
}

#endif
