/*
 * onnx/compute/conv.h - the fp32 convolution engines behind Conv and
 * plugrt::FusedConv (conv.c): the geometry of one run, a direct kernel
 * (conv_dw.c) and the blocked run: im2col + GEMM or pixel tiles (conv_blk.c).
 *
 * Both engines write Y = conv(X, W) + B and then hand each finished piece
 * of Y to an optional epilogue while it is still in cache: a segment of one
 * output channel's plane, given as flat indices [begin, end) into Y. Work
 * is split over the exec's threads by pieces of the output; every output
 * element is computed by the same arithmetic whatever the split, so the
 * result does not depend on the thread count (it does depend on the kernel
 * level: PRT_DCN_CPU_ISA=c|avx2 caps it, see cpu_gemm.h).
 */
#ifndef PLUGRT_ONNX_CONV_H
#define PLUGRT_ONNX_CONV_H

#include <stddef.h>
#include <stdint.h>

#include "plugrt/plugin.h"

/* Geometry of one run, 1-D as 2-D with H = 1. */
typedef struct prt__conv_geo {
    int64_t n, cin, h, w, cout, kh, kw, oh, ow, sh, sw, dh, dw, ph, pw, g, cg, coutg, kd;
    int direct_1x1; /* 1x1 kernel, stride 1, no padding: X is its own im2col matrix */
    int direct;     /* the direct kernel: one input channel per group, or at most 8 output channels per group
                     * with a kernel of at least 4 taps (conv.c) */
} prt__conv_geo;

typedef struct prt__conv_epi {
    void (*fn)(const void *arg, float *y, int64_t begin, int64_t end);
    const void *arg;
} prt__conv_epi;

#define PRT__CONV_DW_MAXKH 64 /* taller depthwise kernels take the blocked path */

/* The direct kernel (g->direct: kh <= PRT__CONV_DW_MAXKH and cg == 1, or
 * coutg <= 8 with kh * kw >= 4): bytes of workspace, and the run. Each
 * output row is a sum over the group's input channels of 2-D correlations of
 * their rows. b may be NULL (no bias); epi may be NULL; the epilogue gets a
 * few thousand outputs (whole rows) at a time. */
size_t prt__conv_dw_workspace(const prt__conv_geo *g);
void prt__conv_dw_run(const prt__conv_geo *g, const float *x, const float *w, const float *b, float *y, void *ws,
                      const prt__conv_epi *epi, prt_exec *ex);

/* Every other convolution: per (image, group, block of output columns),
 * im2col of the block straight into the GEMM's packed panels, the GEMM
 * against weights packed once per run with each sum started from the bias,
 * then the epilogue on each output channel's segment of the block. */
size_t prt__conv_blk_workspace(const prt__conv_geo *g);
/* Whether the blocked run takes its 1x1 stride-1 path (AVX-512, vectors along the pixels; conv_blk.c). */
int prt__conv_k1_applies(const prt__conv_geo *g);
void prt__conv_blk_run(const prt__conv_geo *g, const float *x, const float *w, const float *b, float *y, void *ws,
                       const prt__conv_epi *epi, prt_exec *ex);

/* ConvTranspose (the geometry of ct_geo: h, w the input's, kd = coutg * kh
 * * kw) whose taps never overlap: stride >= the dilated kernel extent on
 * both axes (the 2x2 stride-2 upsampling of detection heads). Per (image,
 * group, block of input pixels): col = W_g^T X_block through the packed GEMM
 * into a per-lane buffer, then each value written to its output pixel with
 * the bias; pixels no tap reaches hold the bias. */
int prt__conv_tr_applies(const prt__conv_geo *g);
size_t prt__conv_tr_workspace(const prt__conv_geo *g);
void prt__conv_tr_run(const prt__conv_geo *g, const float *x, const float *w, const float *b, float *y, void *ws,
                      prt_exec *ex);

#endif
