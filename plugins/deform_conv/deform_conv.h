/*
 * deform_conv/deform_conv.h - internal interface of the ModulatedDeformConv2d
 * plugin (deformable convolution v2), shared by the creators, the CPU and
 * CUDA implementations, the tests and the benchmark.
 *
 * Layout (all linear NCHW): x [N, Cin, H, W], offset [N, 2*dg*kh*kw, Hout,
 * Wout] holding (dy, dx) pairs per kernel tap, mask [N, dg*kh*kw, Hout,
 * Wout], weight [Cout, Cin/group, kh, kw], optional bias [Cout], output y
 * [N, Cout, Hout, Wout]. See README.md for the full contract.
 */
#ifndef PLUGRT_PLUGINS_DEFORM_CONV_H
#define PLUGRT_PLUGINS_DEFORM_CONV_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The five fields, [H, W] order. */
typedef struct prt__dcn_params {
    int64_t stride[2];
    int64_t padding[2];
    int64_t dilation[2];
    int64_t group;
    int64_t deformable_group;
} prt__dcn_params;

/* What ONNX's DeformConv adds to the five fields (deform_conv_onnx.c). The
 * begin pads are prt__dcn_params.padding; the kernels read only those and
 * the output extents in prt__dcn_shape, so the end pads need nothing more. */
typedef struct prt__dcn_onnx {
    int64_t pad_end[2];      /* [H, W] padding at the bottom and the right */
    int64_t kernel_shape[2]; /* [kh, kw] the weight must have; 0 when not given */
    const float *bias;       /* B given as field "input:3" (nb_bias values), or NULL */
    int64_t nb_bias;
} prt__dcn_onnx;

/* The tensors' element type, passed as `elt` (an int: 0 is fp32, and a
 * non-zero value means 16-bit storage, which is what the parameters named
 * is_f16 ask): all tensors of a call share it. */
enum { PRT_DCN_F32 = 0, PRT_DCN_F16 = 1, PRT_DCN_BF16 = 2 };

/* Concrete extents of one call. */
typedef struct prt__dcn_shape {
    int64_t n, cin, h, w;
    int64_t cout, kh, kw;
    int64_t hout, wout;
    int has_bias;
} prt__dcn_shape;

/* Output extent along one axis; <= 0 when the input is too small. */
static inline int64_t prt__dcn_out_extent(int64_t in, int64_t pad, int64_t dil, int64_t k, int64_t stride)
{
    int64_t num = in + 2 * pad - (dil * (k - 1) + 1);
    if (num < 0) return 0;
    return num / stride + 1;
}

/* ---- CPU (deform_conv_cpu.c) ------------------------------------------- */

/* Plain-loop float64 reference; bias may be NULL. */
void prt__deform_conv_cpu_ref_f64(const prt__dcn_params *p, const prt__dcn_shape *s, const double *x,
                              const double *offset, const double *mask, const double *weight,
                              const double *bias, double *y);

/* Workspace bytes of the CPU fast path (is_f16: all tensors 16-bit). */
size_t prt__deform_conv_cpu_workspace(const prt__dcn_params *p, const prt__dcn_shape *s, int is_f16);

/* CPU fast path: bilinear gather fused with its own register-blocked GEMM
 * (AVX-512 / AVX2 / portable kernels, picked at run time; PRT_DCN_CPU_ISA=avx2|c
 * caps the choice), run through `parallel_for` (which may be NULL: serial).
 * The result does not depend on the thread count or split. Returns 0, or -1
 * with a message in err. */
typedef void (*prt__dcn_range_fn)(void *arg, int64_t begin, int64_t end);
typedef void (*prt__dcn_parallel_fn)(void *ctx, int64_t n, int64_t grain, prt__dcn_range_fn fn,
                                     void *arg);
int prt__deform_conv_cpu(const prt__dcn_params *p, const prt__dcn_shape *s, int elt,
                         const void *x, const void *offset, const void *mask, const void *weight,
                         const void *bias, void *y, void *workspace, prt__dcn_parallel_fn par,
                         void *par_ctx, char *err, size_t cap);

/* ---- CUDA (deform_conv_cuda.cu) --------------------------------------- */

/* The tolerance of the CUDA fp32 path against float64 (relative to the
 * largest output): fp32's, or with the build option PLUGRT_DCN_TF32 (the
 * fp32 GEMMs on TF32 tensor cores, whose operands keep 10 significand bits)
 * TF32's. README.md gives the errors measured. */
#ifdef PLUGRT_DCN_TF32
#define PRT_DCN_CUDA_F32_TOL 5e-3
#else
#define PRT_DCN_CUDA_F32_TOL 1e-5
#endif

/* Column-buffer budget of one slice on the GPU (bytes). */
#define PRT_DCN_CUDA_COL_CAP ((size_t)512 << 20)

size_t prt__deform_conv_cuda_workspace(const prt__dcn_params *p, const prt__dcn_shape *s, int is_f16);
/* Enqueue on `stream` with the cuBLAS handle `blas` (its stream is set
 * here). Device pointers. Returns 0, or -1 with a message in err. */
int prt__deform_conv_cuda(const prt__dcn_params *p, const prt__dcn_shape *s, int elt,
                          const void *x, const void *offset, const void *mask, const void *weight,
                          const void *bias, void *y, void *workspace, void *stream, void *blas,
                          char *err, size_t cap);
int prt__deform_conv_cuda_blas_create(void **out, char *err, size_t cap);
/* Fused 16-bit (fp16 or bfloat16: elt) implicit-GEMM kernel on tensor cores
 * (deform_conv_fused.cu).
 * _fits: the shapes it handles (Cin/group and Cin/deformable_group multiples
 * of 8, extents within 32-bit indexing). _applies: whether
 * prt__deform_conv_cuda runs it: 16-bit (is_f16), fits, and by default only one group of
 * at most 64 output channels (where it measured faster than im2col + cuBLAS).
 * PRT_DCN_CUDA_KERNEL (environment, read per call) overrides the default:
 * "im2col" never, "fused" whenever it fits (the wgmma kernel where it runs),
 * "fused128x128", "fused64x128", "fused64x64", "fused16x128", "wgmma256x128",
 * "wgmma128x128", "wgmma64x128", "wgmma256x128k64" or "grouped128" whenever that tile fits,
 * with that tile (an fp32 tile name: never, for 16-bit tensors; fp32 reads
 * the variable through prt__deform_conv_cuda_f32_tile). */
int prt__deform_conv_cuda_fused_fits(const prt__dcn_params *p, const prt__dcn_shape *s);
int prt__deform_conv_cuda_fused_applies(const prt__dcn_params *p, const prt__dcn_shape *s, int is_f16);
/* Workspace of the 16-bit fused kernel when it fits (0 otherwise),
 * whatever the environment says; prt__deform_conv_cuda_workspace includes
 * it. */
size_t prt__deform_conv_cuda_fused_workspace(const prt__dcn_params *p, const prt__dcn_shape *s);
/* Name of the tile the fused kernel uses for this shape. */
const char *prt__deform_conv_cuda_fused_tile(const prt__dcn_params *p, const prt__dcn_shape *s);
int prt__deform_conv_cuda_fused(const prt__dcn_params *p, const prt__dcn_shape *s, int elt, const void *x,
                                const void *offset, const void *mask, const void *weight, const void *bias,
                                void *y, void *workspace, void *stream, char *err, size_t cap);

void prt__deform_conv_cuda_blas_destroy(void *blas);

/* The extents both fused kernels index with (32-bit; their _fits checks
 * bound them), in [H, W] order where there are two. */
typedef struct prt__dcn_cuda_geo {
    int cin, h, w, hw_in, hout, wout, hw, kk, kw, cg, cpd, dg, coutg, cout, ncols;
    int sh, sw, ph, pw, dh, dw;
} prt__dcn_cuda_geo;

static inline void prt__dcn_cuda_geo_set(prt__dcn_cuda_geo *g, const prt__dcn_params *p, const prt__dcn_shape *s)
{
    g->cin = (int)s->cin; g->h = (int)s->h; g->w = (int)s->w; g->hw_in = (int)(s->h * s->w);
    g->hout = (int)s->hout; g->wout = (int)s->wout; g->hw = (int)(s->hout * s->wout);
    g->kk = (int)(s->kh * s->kw); g->kw = (int)s->kw;
    g->cg = (int)(s->cin / p->group); g->dg = (int)p->deformable_group; g->cpd = (int)(s->cin / p->deformable_group);
    g->coutg = (int)(s->cout / p->group); g->cout = (int)s->cout;
    g->ncols = (int)(s->n * g->hw);
    g->sh = (int)p->stride[0]; g->sw = (int)p->stride[1]; g->ph = (int)p->padding[0]; g->pw = (int)p->padding[1];
    g->dh = (int)p->dilation[0]; g->dw = (int)p->dilation[1];
}

/* Raises a kernel's dynamic shared-memory limit to `bytes`, once per device
 * (bit d of *done records device d < 64). Returns a cudaError_t. */
int prt__deform_conv_cuda_smem_limit(const void *kernel, int bytes, unsigned long long *done);
/* The wgmma kernel (deform_conv_wgmma.cu, sm_90a) and the grouped kernel
 * (same file, compute capability 8.0 and above), 16-bit and fp32 (the
 * latter on TF32 tensor cores with split operands, "3xTF32", to fp32's
 * accuracy: README.md). _available: the current device is of compute
 * capability 9.0 and runs the file's sm_90a image; _grouped_available: of
 * 8.0 or more, with an image of the file built for 8.0 or more (not JIT-
 * compiled from older PTX); _tile_available: the one of the two that tile
 * t needs. _fits: the shapes tile t (16-bit: 0 256x128, 1 128x128,
 * 2 64x128, 3 256x128 with 64 k per step, which also needs an even number of
 * 32-wide chunks per segment; fp32: 4 256x128, 5 128x128, 6 64x128; 16-bit
 * again: 7 the grouped kernel, for at most 32 output channels per group
 * and groups within one deformable group; 8 the same in fp32) handles:
 * those of the fused kernel whose group and deformable-group channels nest
 * (one divides the other), within 32-bit offsets into x, and whose corner
 * table fits shared memory. _tile_f32: whether tile t is an fp32 tile.
 * _tile: the tile for the shape and element type, -1 when none fits.
 * _workspace: 0 when no tile of the element type fits;
 * prt__deform_conv_cuda_fused_workspace includes the 16-bit one,
 * prt__deform_conv_cuda_workspace both. */
int prt__deform_conv_wgmma_available(void); /* the wgmma tiles (0..6) run on the current device */
int prt__deform_conv_grouped_available(void); /* the grouped kernel (tiles 7, 8) runs on the current device */
int prt__deform_conv_wgmma_tile_available(int tile); /* tile runs on the current device (either of the above) */
int prt__deform_conv_wgmma_fits(const prt__dcn_params *p, const prt__dcn_shape *s, int tile);
/* tile fits the shape and runs on the current device: available, and its
 * shared memory within what the device gives a block (the grouped kernel's
 * corner table grows with the kernel's taps: 4 KB a tap). */
int prt__deform_conv_wgmma_runs(const prt__dcn_params *p, const prt__dcn_shape *s, int tile);
int prt__deform_conv_wgmma_tile_f32(int tile);
/* Whether 16-bit tile t, run one tile a block on the shape, copies each next
 * segment's offsets and mask into shared memory ahead of its corner table
 * (the shape's part of the condition; not with PRT_DCN_CUDA_WGFLAGS bit 0 or 4). */
int prt__deform_conv_wgmma_seg_staged(const prt__dcn_params *p, const prt__dcn_shape *s, int tile);
int prt__deform_conv_wgmma_tile(const prt__dcn_params *p, const prt__dcn_shape *s, int elt);
/* The rows of the column strips tile takes on the shape without split-K (1:
 * row-major; PRT_DCN_CUDA_TH read as the call would read it). */
int prt__deform_conv_wgmma_strips(const prt__dcn_shape *s, int tile);
/* The tile the default policy runs (-1: another kernel): see README.md. */
int prt__deform_conv_wgmma_default_tile(const prt__dcn_params *p, const prt__dcn_shape *s, int elt);
size_t prt__deform_conv_wgmma_workspace(const prt__dcn_params *p, const prt__dcn_shape *s, int elt);
int prt__deform_conv_wgmma(const prt__dcn_params *p, const prt__dcn_shape *s, int elt, int tile, const void *x,
                           const void *offset, const void *mask, const void *weight, const void *bias, void *y,
                           void *workspace, void *stream, char *err, size_t cap);

/* The CUDA kernels as tactics (docs/plugin-abi.md, "Tactics"; README.md,
 * "Tactics"): 1 im2col + cuBLAS; 2 + t the fused kernel with tile t: for
 * 16-bit tensors fused128x128, fused64x128, fused64x64, fused16x128, then
 * the wgmma kernel's wgmma256x128, wgmma128x128, wgmma64x128,
 * wgmma256x128k64 (2..9); for fp32 the wgmma kernel's 3xTF32 tiles
 * wgmma3xtf32_256x128, wgmma3xtf32_128x128, wgmma3xtf32_64x128 (10..12);
 * the grouped kernel for few output channels per group, grouped128 (16-bit,
 * 13) and grouped128_3xtf32 (fp32, 14), appended: the ids in existing plans
 * keep their meaning. */
enum {
    PRT_DCN_TACTIC_IM2COL = 1,
    PRT_DCN_TACTIC_FUSED = 2,
    PRT_DCN_TACTIC_WGMMA = 6,
    PRT_DCN_TACTIC_F32 = 10,
    PRT_DCN_TACTIC_GROUPED = 13,
    PRT_DCN_TACTIC_GROUPED_F32 = 14,
    PRT_DCN_TACTIC_COUNT = 15
};
/* The tactics for a profile (its min, opt and max shapes): im2col, and
 * where the fused kernel fits all three shapes the tiles of the element
 * type that run on the device (is_f16: 16-bit; the wgmma tiles on compute
 * capability 9.0, the grouped ones on 8.0 and above); the default policy's choice at opt first (the tile from
 * the device's multiprocessor count). Writes at most cap ids; returns how
 * many. The list never depends on PRT_DCN_CUDA_KERNEL. */
int32_t prt__deform_conv_cuda_tactics(const prt__dcn_params *p, const prt__dcn_shape *smin,
                                      const prt__dcn_shape *sopt, const prt__dcn_shape *smax, int is_f16, int32_t *ids,
                                      int32_t cap);
const char *prt__deform_conv_cuda_tactic_name(int32_t tactic); /* NULL for an unknown id */
/* Non-zero when PRT_DCN_CUDA_KERNEL names a kernel: it then wins over any
 * tactic (for benchmarks). */
int prt__deform_conv_cuda_env_override(void);
/* prt__deform_conv_cuda running `tactic` (0: the default policy, which
 * prt__deform_conv_cuda is); PRT_DCN_CUDA_KERNEL, when set, wins. A fused
 * tactic on shapes the fused kernel does not fit runs im2col. */
int prt__deform_conv_cuda_tactic(const prt__dcn_params *p, const prt__dcn_shape *s, int elt, int32_t tactic,
                                 const void *x, const void *offset, const void *mask, const void *weight,
                                 const void *bias, void *y, void *workspace, void *stream, void *blas, char *err,
                                 size_t cap);
/* The 16-bit fused kernel with tile `tile` (0..3 mma.sync tiles, 4..7 the
 * wgmma tiles; -1: PRT_DCN_CUDA_KERNEL's tile, else the one chosen from the shape,
 * as prt__deform_conv_cuda_fused). A wgmma tile the device or the shape does
 * not take runs the mma.sync tile chosen from the shape. */
int prt__deform_conv_cuda_fused_tiled(const prt__dcn_params *p, const prt__dcn_shape *s, int elt, int tile,
                                      const void *x,
                                      const void *offset, const void *mask, const void *weight, const void *bias,
                                      void *y, void *workspace, void *stream, char *err, size_t cap);
/* fp32: the wgmma tile (deform_conv_wgmma.cu's numbering) that `tactic`
 * runs, -1 for im2col + cuBLAS. PRT_DCN_CUDA_KERNEL, when set, wins ("fused"
 * or an fp32 tile name: that tile where it fits; anything else im2col);
 * tactic 0 is the default policy (prt__deform_conv_wgmma_default_tile); an
 * fp32 tile tactic that does not fit the shape, or a 16-bit one, runs
 * im2col. */
int prt__deform_conv_cuda_f32_tile(const prt__dcn_params *p, const prt__dcn_shape *s, int32_t tactic);

#ifdef __cplusplus
}
#endif

/* ---- creators (deform_conv.c); C only ----------------------------------- */
#ifndef __cplusplus
#include "plugrt/plugin.h"
extern const prt_plugin_creator prt__deform_conv_creator_v1; /* blob style */
extern const prt_plugin_creator prt__deform_conv_creator_v2; /* field style */
extern const prt_plugin_creator prt__deform_conv_creator_onnx; /* ONNX DeformConv, version "19" */
/* The field-style plugin object with ONNX's inputs X, W, offset[, B][, mask]
 * and fields; o is copied (B too). */
prt_status prt__deform_conv_onnx_new(const prt__dcn_params *p, const prt__dcn_onnx *o, prt_field_plugin **out,
                                     prt_msg *err);
#endif

#endif
