/*
 * deform_conv/deform_conv_fused.cu - ModulatedDeformConv2d fp16 as one fused
 * implicit-GEMM kernel on tensor cores (mma.sync m16n8k16, fp32
 * accumulation), with no column buffer in global memory.
 *
 * Per group g the convolution is the GEMM
 *     y_g[m][col] = bias[m] + sum_k A_g[m][k] * B[k][col]
 * with m an output channel of the group, col = n*Hout*Wout + pos a column
 * of the whole batch and k = tap*Cg + c (tap-major, so that 8 consecutive k
 * are 8 channels of one tap). B[k][col] = mask * bilinear sample of x; it
 * is never stored in global memory: the kernel's producer threads compute
 * it straight into the shared-memory B tile.
 *
 * Three launches on the caller's stream, no host synchronization:
 *  1. x [N][Cin][H][W] -> xt [N][H*W][Cin] (channels-last, in the workspace),
 *     so that one 16-byte load fetches 8 channels of one bilinear corner;
 *  2. weight [Cout][Cg][kh][kw] -> A [G][Mpad][Kpad] (tap-major k, zero
 *     padded to the tile sizes, in the workspace);
 *  3. the fused kernel. A block owns a BM x BN tile of y_g and walks K in
 *     chunks of 32 through a 3- or 4-stage cp.async pipeline: per stage the
 *     A chunk and, for every (column, 8-channel run) item, its four fp16
 *     corner runs (zero-filled where the bilinear weight is 0) with the
 *     fp32 mask-scaled weights. Per chunk: issue the stage STAGES-1 ahead,
 *     run mma.sync on the current A and B tiles, then blend the next
 *     chunk's corners in fp32 (rounded to fp16 once) into the other B tile;
 *     one barrier. Bias is added in the fp32 epilogue, and the result is
 *     rounded to fp16 once.
 *
 * Fits when x is fp16, Cin/group and Cin/deformable_group are multiples of
 * 8 (an 8-channel run never crosses a tap or a deformable group) and the
 * extents fit 32-bit indexing; prt__deform_conv_cuda_fused_applies says
 * when prt__deform_conv_cuda runs it (README.md: by default only where it
 * measured faster than the im2col + cuBLAS path of deform_conv_cuda.cu).
 */
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deform_conv.h"
#include "deform_conv_elt.cuh"

namespace {

constexpr int BK = 32;        /* k per chunk */
constexpr int LDS = BK + 8;   /* shared row in halves: 80 bytes, ldmatrix conflict-free */
constexpr int NTHREADS = 256; /* 8 warps */

struct FGeo : prt__dcn_cuda_geo {
    int ktot, kpad, mpad, mtiles, ctiles;
};

/* ---- layout kernels ---------------------------------------------------- */

/* x [N][C][HW] -> xt [N][HW][C], 32 x 32 tiles through shared memory. */
__global__ void nchw_to_nhwc(const __half *__restrict__ x, __half *__restrict__ xt, int c, int hw)
{
    __shared__ __half t[32][33];
    const int n = blockIdx.z;
    const int p0 = blockIdx.x * 32, c0 = blockIdx.y * 32;
    const __half *xs = x + (size_t)n * c * hw;
    __half *xd = xt + (size_t)n * c * hw;
    for (int r = threadIdx.y; r < 32; r += 8) {
        const int cc = c0 + r, pp = p0 + threadIdx.x;
        if (cc < c && pp < hw) t[r][threadIdx.x] = xs[(size_t)cc * hw + pp];
    }
    __syncthreads();
    for (int r = threadIdx.y; r < 32; r += 8) {
        const int pp = p0 + r, cc = c0 + threadIdx.x;
        if (cc < c && pp < hw) xd[(size_t)pp * c + cc] = t[threadIdx.x][r];
    }
}

/* weight [G*coutg][cg][kk] -> A [G][mpad][kpad] with k = tap*cg + c, zeros
 * outside. */
__global__ void pack_weights(const __half *__restrict__ w, __half *__restrict__ a, FGeo g, int64_t total)
{
    const int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= total) return;
    const int kp = (int)(idx % g.kpad);
    const int64_t r = idx / g.kpad;
    const int m = (int)(r % g.mpad);
    const int grp = (int)(r / g.mpad);
    __half v = __float2half(0.f);
    if (m < g.coutg && kp < g.ktot) {
        const int tap = kp / g.cg, c = kp % g.cg;
        v = w[((int64_t)(grp * g.coutg + m) * g.cg + c) * g.kk + tap];
    }
    a[idx] = v;
}

/* ---- the fused kernel --------------------------------------------------- */

__device__ __forceinline__ uint32_t smem_addr(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void cp_async16(void *dst, const void *src)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(dst)), "l"(src));
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t r[4], const void *p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p)));
}

/* fp16 (BF 0) or bfloat16 (BF 1) operands, fp32 accumulators. */
template <int BF> __device__ __forceinline__ void mma16816(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
{
    if (BF)
        asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
            "{%0,%1,%2,%3};\n"
            : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    else
        asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
            "{%0,%1,%2,%3};\n"
            : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* cp.async of 16 bytes, or 16 zero bytes when `full` is 0 (nothing read). */
__device__ __forceinline__ void cp_async16_zfill(void *dst, const void *src, int full)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src),
                 "r"(full ? 16 : 0));
}
template <int N> __device__ __forceinline__ void cp_async_wait_group()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

/* The gather state of one (column, 8-channel run) item of a thread. Its k
 * advances by BK per chunk; tap and channel are tracked incrementally. */
struct Item {
    const __half *xb; /* image base in xt */
    int n, pos, by0, bx0, valid;
    int tap, c;       /* tap and channel (within the group) of the item's k */
    int key;          /* tap * dg + deformable group of the cached corners, -1: none */
    int idx[4];       /* corner pixel indices (0 when the weight is 0) */
    float wt[4];      /* mask * bilinear weight */
};

/* Corners and weights of one item for (tap, deformable group d). */
template <int BF>
__device__ __forceinline__ void item_corners(Item &it, const FGeo &g, const __half *__restrict__ off,
                                             const __half *__restrict__ mask, int tap, int d)
{
    const int i = tap / g.kw, j = tap - (tap / g.kw) * g.kw;
    const size_t ob = ((size_t)(it.n * g.dg + d) * 2 * g.kk + 2 * tap) * g.hw + it.pos;
    const float dy = e2f<BF>(off[ob]);
    const float dx = e2f<BF>(off[ob + g.hw]);
    const float m = e2f<BF>(mask[((size_t)(it.n * g.dg + d) * g.kk + tap) * g.hw + it.pos]);
    const int by = it.by0 + i * g.dh, bx = it.bx0 + j * g.dw;
#pragma unroll
    for (int q = 0; q < 4; q++) { it.idx[q] = -1; it.wt[q] = 0.f; }
    /* |offset| >= 2^26 is outside any image this path accepts (H, W < 2^24);
     * false for NaN and Inf too, which sample 0 */
    if (fabsf(dy) < 67108864.f && fabsf(dx) < 67108864.f) {
        const float fy = floorf(dy), fx = floorf(dx);
        const float lh = dy - fy, lw = dx - fx;
        const int h0 = by + (int)fy, x0 = bx + (int)fx;
        /* inside unless py <= -1, py >= H, px <= -1 or px >= W; fractions
         * from the offset alone keep full fp32 precision */
        if ((h0 >= 0 || (h0 == -1 && lh > 0.f)) && h0 < g.h && (x0 >= 0 || (x0 == -1 && lw > 0.f)) && x0 < g.w) {
            if (h0 >= 0 && x0 >= 0) { it.idx[0] = h0 * g.w + x0; it.wt[0] = m * (1.f - lh) * (1.f - lw); }
            if (h0 >= 0 && x0 + 1 < g.w) { it.idx[1] = h0 * g.w + x0 + 1; it.wt[1] = m * (1.f - lh) * lw; }
            if (h0 + 1 < g.h && x0 >= 0) { it.idx[2] = (h0 + 1) * g.w + x0; it.wt[2] = m * lh * (1.f - lw); }
            if (h0 + 1 < g.h && x0 + 1 < g.w) { it.idx[3] = (h0 + 1) * g.w + x0 + 1; it.wt[3] = m * lh * lw; }
        }
    }
}

/* Shared memory of one pipeline stage: the A chunk, the four corner runs of
 * every item (each thread reads back only what it copied itself) and the
 * items' weights. */
template <int BM, int ITEMS> struct Stage {
    __half a[BM][LDS];
    uint4 corner[ITEMS][4][NTHREADS];
    float4 wt[ITEMS][NTHREADS];
};

/* Issue the copies of one item for its current k into a stage: four
 * 16-byte corner runs (zero-filled where the weight is 0, past the last
 * column and in the K padding, so nothing outside x is read and a NaN or Inf
 * in x never meets a zero weight), and the weights. Then advance k by BK. */
template <int BF, int BM, int ITEMS>
__device__ __forceinline__ void item_issue(Item &it, const FGeo &g, const __half *__restrict__ off,
                                           const __half *__restrict__ mask, int grp, Stage<BM, ITEMS> &st, int i,
                                           int tid)
{
    const int live = it.valid && it.tap < g.kk;
    float4 w = make_float4(0.f, 0.f, 0.f, 0.f);
    int cabs = 0;
    if (live) {
        cabs = grp * g.cg + it.c;
        const int d = g.dg == 1 ? 0 : cabs / g.cpd;
        const int key = it.tap * g.dg + d;
        if (key != it.key) {
            item_corners<BF>(it, g, off, mask, it.tap, d);
            it.key = key;
        }
        w = make_float4(it.wt[0], it.wt[1], it.wt[2], it.wt[3]);
    }
    const __half *p = it.xb + cabs;
#pragma unroll
    for (int q = 0; q < 4; q++) {
        const int full = live && it.idx[q] >= 0;
        cp_async16_zfill(&st.corner[i][q][tid], full ? p + (size_t)it.idx[q] * g.cin : it.xb, full);
    }
    st.wt[i][tid] = w;
    it.c += BK;
    while (it.c >= g.cg) { it.c -= g.cg; it.tap++; }
}

/* Blend four corner runs of 8 channels in fp32; round to 16 bits once. */
template <int BF> __device__ __forceinline__ uint4 blend(const uint4 raw[4], const float4 w)
{
    const float wt[4] = {w.x, w.y, w.z, w.w};
    float v[8];
#pragma unroll
    for (int e = 0; e < 4; e++) {
        const float2 f = e2f2<BF>((&raw[0].x)[e]);
        v[2 * e] = wt[0] * f.x;
        v[2 * e + 1] = wt[0] * f.y;
    }
#pragma unroll
    for (int q = 1; q < 4; q++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const float2 f = e2f2<BF>((&raw[q].x)[e]);
            v[2 * e] = fmaf(wt[q], f.x, v[2 * e]);
            v[2 * e + 1] = fmaf(wt[q], f.y, v[2 * e + 1]);
        }
    uint4 o;
#pragma unroll
    for (int e = 0; e < 4; e++) (&o.x)[e] = f2e2<BF>(v[2 * e], v[2 * e + 1]);
    return o;
}

template <int BM, int BN, int WM, int WN, int STAGES> constexpr size_t fused_smem()
{
    return sizeof(Stage<BM, BN * (BK / 8) / NTHREADS>) * STAGES + sizeof(__half) * 2 * BN * LDS;
}

/* One block: a BM x BN tile of y_g. Per chunk kc of K: wait for stage kc,
 * blend its corners into the B tile, barrier, issue stage kc + STAGES - 1,
 * tensor-core MMAs on chunk kc. */
template <int BF, int BM, int BN, int WM, int WN, int STAGES>
__global__ void __launch_bounds__(NTHREADS) dcn_fused(const __half *__restrict__ xt, const __half *__restrict__ off,
                                                      const __half *__restrict__ mask, const __half *__restrict__ A,
                                                      const __half *__restrict__ bias, __half *__restrict__ y, FGeo g)
{
    constexpr int WTM = BM / WM, WTN = BN / WN, MT = WTM / 16, NT = WTN / 8;
    constexpr int ITEMS = BN * (BK / 8) / NTHREADS;
    constexpr int ACH = BM * BK / 8;
    static_assert(WM * WN * 32 == NTHREADS, "8 warps");
    static_assert(MT >= 1 && NT % 2 == 0 && ITEMS >= 1, "tile shape");
    typedef Stage<BM, ITEMS> St;
    extern __shared__ __align__(16) unsigned char smem[];
    St *stage = (St *)smem;
    __half(*sB)[BN][LDS] = (__half(*)[BN][LDS])(smem + sizeof(St) * STAGES);

    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int wm = warp / WN, wn = warp % WN;
    int bid = blockIdx.x;
    const int mtile = bid % g.mtiles;
    bid /= g.mtiles;
    const int ctile = bid % g.ctiles;
    const int grp = bid / g.ctiles;
    const int m0 = mtile * BM, c0 = ctile * BN;
    const __half *Ag = A + ((size_t)grp * g.mpad + m0) * g.kpad;
    const int octet = tid & 3;

    Item it[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const int col = c0 + (tid >> 2) + i * (NTHREADS / 4);
        it[i].valid = col < g.ncols;
        const int cc = it[i].valid ? col : 0;
        const int n = cc / g.hw, pos = cc - n * g.hw;
        const int oy = pos / g.wout, ox = pos - oy * g.wout;
        it[i].n = n;
        it[i].pos = pos;
        it[i].by0 = oy * g.sh - g.ph;
        it[i].bx0 = ox * g.sw - g.pw;
        it[i].xb = xt + (size_t)n * g.hw_in * g.cin;
        it[i].tap = octet * 8 / g.cg;
        it[i].c = octet * 8 - it[i].tap * g.cg;
        it[i].key = -1;
    }

    float acc[MT][NT][4];
#pragma unroll
    for (int a = 0; a < MT; a++)
#pragma unroll
        for (int b = 0; b < NT; b++)
#pragma unroll
            for (int e = 0; e < 4; e++) acc[a][b][e] = 0.f;

    const int nch = g.kpad / BK;
    /* prologue: stages 0 .. STAGES-2 */
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < nch) {
            for (int q = tid; q < ACH; q += NTHREADS)
                cp_async16(&stage[s].a[q >> 2][(q & 3) * 8], Ag + (size_t)(q >> 2) * g.kpad + s * BK + (q & 3) * 8);
#pragma unroll
            for (int i = 0; i < ITEMS; i++) item_issue<BF, BM, ITEMS>(it[i], g, off, mask, grp, stage[s], i, tid);
        }
        cp_async_commit();
    }

    /* chunk 0's B tile */
    cp_async_wait_group<STAGES - 2>();
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        uint4 raw[4];
#pragma unroll
        for (int q = 0; q < 4; q++) raw[q] = stage[0].corner[i][q][tid];
        *(uint4 *)&sB[0][(tid >> 2) + i * (NTHREADS / 4)][octet * 8] = blend<BF>(raw, stage[0].wt[i][tid]);
    }
    __syncthreads();

    /* Per chunk kc: issue stage kc + STAGES - 1; the MMAs of chunk kc; while
     * they run, blend chunk kc + 1 into the other B buffer; one barrier. */
    for (int kc = 0; kc < nch; kc++) {
        const int slot = kc % STAGES;
        {
            const int kn = kc + STAGES - 1, sn = kn % STAGES;
            if (kn < nch) {
                for (int q = tid; q < ACH; q += NTHREADS)
                    cp_async16(&stage[sn].a[q >> 2][(q & 3) * 8],
                               Ag + (size_t)(q >> 2) * g.kpad + kn * BK + (q & 3) * 8);
#pragma unroll
                for (int i = 0; i < ITEMS; i++) item_issue<BF, BM, ITEMS>(it[i], g, off, mask, grp, stage[sn], i, tid);
            }
            cp_async_commit();
        }
#pragma unroll
        for (int ks = 0; ks < BK / 16; ks++) {
            uint32_t af[MT][4], bf[NT / 2][4];
#pragma unroll
            for (int a = 0; a < MT; a++)
                ldmatrix_x4(af[a], &stage[slot].a[wm * WTM + a * 16 + (lane & 15)][ks * 16 + (lane >> 4) * 8]);
#pragma unroll
            for (int b = 0; b < NT / 2; b++)
                ldmatrix_x4(bf[b], &sB[kc & 1][wn * WTN + b * 16 + (lane & 7) + (lane >> 4) * 8]
                                      [ks * 16 + ((lane >> 3) & 1) * 8]);
#pragma unroll
            for (int a = 0; a < MT; a++)
#pragma unroll
                for (int b = 0; b < NT; b++)
                    mma16816<BF>(acc[a][b], af[a], bf[b >> 1][(b & 1) * 2], bf[b >> 1][(b & 1) * 2 + 1]);
        }
        if (kc + 1 < nch) {
            const int s1 = (kc + 1) % STAGES;
            cp_async_wait_group<STAGES - 2>();
#pragma unroll
            for (int i = 0; i < ITEMS; i++) {
                uint4 raw[4];
#pragma unroll
                for (int q = 0; q < 4; q++) raw[q] = stage[s1].corner[i][q][tid];
                *(uint4 *)&sB[(kc + 1) & 1][(tid >> 2) + i * (NTHREADS / 4)][octet * 8] =
                    blend<BF>(raw, stage[s1].wt[i][tid]);
            }
        }
        __syncthreads();
    }
    cp_async_wait_group<0>();

    /* epilogue: bias in fp32, one rounding to fp16 */
#pragma unroll
    for (int a = 0; a < MT; a++)
#pragma unroll
        for (int hr = 0; hr < 2; hr++) {
            const int m = m0 + wm * WTM + a * 16 + (lane >> 2) + hr * 8;
            if (m >= g.coutg) continue;
            const int oc = grp * g.coutg + m;
            const float bv = bias ? e2f<BF>(bias[oc]) : 0.f;
#pragma unroll
            for (int b = 0; b < NT; b++)
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    const int col = c0 + wn * WTN + b * 8 + (lane & 3) * 2 + e;
                    if (col >= g.ncols) continue;
                    const int n = col / g.hw, pos = col - n * g.hw;
                    y[((size_t)n * g.cout + oc) * g.hw + pos] = f2e<BF>(acc[a][b][hr * 2 + e] + bv);
                }
        }
}

/* ---- host side ---------------------------------------------------------- */

/* Tiles 0..3 are this file's kernel (mma.sync); 4..7 the wgmma kernel's
 * 16-bit tiles (deform_conv_wgmma.cu: 256x128, 128x128, 64x128, 256x128 with
 * 64 k per step); 8..10 its fp32 (3xTF32) tiles 256x128, 128x128, 64x128;
 * 11 and 12 its grouped kernel (dcn_grouped) in 16 bits and in fp32,
 * appended so that the tactic ids of the others stay. */
enum {
    TILE_128x128, TILE_64x128, TILE_64x64, TILE_16x128, TILE_MMA_COUNT,
    TILE_WG = TILE_MMA_COUNT, TILE_F32 = 8, TILE_GROUPED = 11, TILE_GROUPED_F32 = 12, TILE_COUNT = 13
};
/* tile t takes 16-bit tensors (else fp32) */
int tile16(int t) { return t < TILE_F32 || t == TILE_GROUPED; }
const int tile_bm[TILE_MMA_COUNT] = {128, 64, 64, 16};
const int tile_bn[TILE_MMA_COUNT] = {128, 128, 64, 128};
const char *const tile_name[TILE_COUNT] = {"fused128x128",        "fused64x128",         "fused64x64",
                                           "fused16x128",         "wgmma256x128",        "wgmma128x128",
                                           "wgmma64x128",         "wgmma256x128k64",     "wgmma3xtf32_256x128",
                                           "wgmma3xtf32_128x128", "wgmma3xtf32_64x128",  "grouped128",
                                           "grouped128_3xtf32"};

constexpr int64_t MPAD_ALIGN = 128; /* the largest BM: the workspace does not depend on the tile */

int64_t round_up(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

size_t a256(size_t v) { return (v + 255) & ~(size_t)255; }

enum { KERNEL_DEFAULT = -3, KERNEL_IM2COL = -2, KERNEL_FUSED = -1 };
static_assert(PRT_DCN_TACTIC_FUSED + TILE_WG == PRT_DCN_TACTIC_WGMMA && PRT_DCN_TACTIC_FUSED + TILE_F32 == PRT_DCN_TACTIC_F32 &&
                  PRT_DCN_TACTIC_FUSED + TILE_GROUPED == PRT_DCN_TACTIC_GROUPED &&
                  PRT_DCN_TACTIC_FUSED + TILE_GROUPED_F32 == PRT_DCN_TACTIC_GROUPED_F32 &&
                  PRT_DCN_TACTIC_FUSED + TILE_COUNT == PRT_DCN_TACTIC_COUNT,
              "tactic ids are 2 + tile");

/* PRT_DCN_CUDA_KERNEL (environment, read per call): "im2col" keeps the
 * im2col + cuBLAS path, "fused" takes the fused kernel with the tile chosen
 * from the shape, a tile name forces that tile; anything else (or unset):
 * the default policy of prt__deform_conv_cuda_fused_applies. Returns a
 * KERNEL_* value or the tile. */
int kernel_override(void)
{
    const char *e = getenv("PRT_DCN_CUDA_KERNEL");
    if (!e || !*e) return KERNEL_DEFAULT;
    if (strcmp(e, "im2col") == 0) return KERNEL_IM2COL;
    if (strcmp(e, "fused") == 0) return KERNEL_FUSED;
    for (int t = 0; t < TILE_COUNT; t++)
        if (strcmp(e, tile_name[t]) == 0) return t;
    return KERNEL_DEFAULT;
}

int64_t tile_blocks(const FGeo &g, int64_t groups, int t)
{
    const int64_t mt = (g.coutg + tile_bm[t] - 1) / tile_bm[t];
    const int64_t ct = ((int64_t)g.ncols + tile_bn[t] - 1) / tile_bn[t];
    return mt * ct * groups;
}

/* The largest tile that still gives every multiprocessor two blocks. */
int choose_tile(const FGeo &g, int64_t groups)
{
    int sms = 132, dev = 0;
    if (cudaGetDevice(&dev) == cudaSuccess) cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (g.coutg <= 16) return TILE_16x128;
    const int order[3] = {TILE_128x128, TILE_64x128, TILE_64x64};
    for (int i = g.coutg > 64 ? 0 : 1; i < 3; i++)
        if (tile_blocks(g, groups, order[i]) >= 2 * (int64_t)sms) return order[i];
    return TILE_64x64;
}

int ffail(char *err, size_t cap, const char *what, cudaError_t ce)
{
    if (err && cap)
        snprintf(err, cap, "ModulatedDeformConv2d CUDA (fused fp16): %s failed: %s", what, cudaGetErrorString(ce));
    return -1;
}

/* Launch one tile shape. Its dynamic shared-memory limit is raised once per
 * device (prt__deform_conv_cuda_smem_limit). */
template <int BF, int BM, int BN, int WM, int WN, int STAGES>
cudaError_t launch_t(int64_t blocks, cudaStream_t st, const __half *xt, const __half *off, const __half *mask,
                     const __half *a, const __half *bias, __half *y, const FGeo &g)
{
    constexpr size_t smem = fused_smem<BM, BN, WM, WN, STAGES>();
    static unsigned long long raised = 0;
    const cudaError_t ce = (cudaError_t)prt__deform_conv_cuda_smem_limit(
        (const void *)dcn_fused<BF, BM, BN, WM, WN, STAGES>, (int)smem, &raised);
    if (ce != cudaSuccess) return ce;
    dcn_fused<BF, BM, BN, WM, WN, STAGES><<<(unsigned)blocks, NTHREADS, smem, st>>>(xt, off, mask, a, bias, y, g);
    return cudaGetLastError();
}

/* The tile for the element type (elt: PRT_DCN_F16 or PRT_DCN_BF16). */
template <int BM, int BN, int WM, int WN, int STAGES>
cudaError_t launch(int elt, int64_t blocks, cudaStream_t st, const __half *xt, const __half *off, const __half *mask,
                   const __half *a, const __half *bias, __half *y, const FGeo &g)
{
    if (elt == PRT_DCN_BF16) return launch_t<1, BM, BN, WM, WN, STAGES>(blocks, st, xt, off, mask, a, bias, y, g);
    return launch_t<0, BM, BN, WM, WN, STAGES>(blocks, st, xt, off, mask, a, bias, y, g);
}

int fused_fits(const prt__dcn_params *p, const prt__dcn_shape *s);

/* Whether tile t runs on this device and shape (in its element type). */
int tile_ok(const prt__dcn_params *p, const prt__dcn_shape *s, int t)
{
    if (t < TILE_WG) return fused_fits(p, s);
    return t < TILE_COUNT && prt__deform_conv_wgmma_runs(p, s, t - TILE_WG);
}

/* The tile "fused" takes: the wgmma kernel's where it runs, else the
 * largest mma.sync tile that gives every multiprocessor two blocks. */
int auto_tile(const prt__dcn_params *p, const prt__dcn_shape *s, const FGeo &g)
{
    if (prt__deform_conv_wgmma_available()) {
        const int w = prt__deform_conv_wgmma_tile(p, s, PRT_DCN_F16);
        if (w >= 0) return TILE_WG + w;
    }
    return choose_tile(g, p->group);
}

/* The tile the default policy runs where it runs a fused kernel. */
int policy_tile(const prt__dcn_params *p, const prt__dcn_shape *s, const FGeo &g)
{
    const int w = prt__deform_conv_wgmma_default_tile(p, s, PRT_DCN_F16);
    return w >= 0 ? TILE_WG + w : choose_tile(g, p->group);
}

/* The shape conditions of the fused kernel (the environment aside). */
int fused_fits(const prt__dcn_params *p, const prt__dcn_shape *s)
{
    const int64_t lim = (int64_t)1 << 24, i31 = ((int64_t)1 << 31) - 1;
    if (p->group < 1 || p->deformable_group < 1 || s->cin % p->group || s->cin % p->deformable_group) return 0;
    const int64_t cg = s->cin / p->group, cpd = s->cin / p->deformable_group;
    const int64_t coutg = s->cout / p->group, hw = s->hout * s->wout, kk = s->kh * s->kw;
    if (cg % 8 || cpd % 8 || coutg < 1) return 0;
    if (s->h + 2 * p->padding[0] >= lim || s->w + 2 * p->padding[1] >= lim) return 0;
    if (s->h * s->w > i31 || s->n * hw > i31 || s->n > 65535 || hw < 1) return 0;
    if (round_up(cg * kk, BK) > i31 || 2 * p->deformable_group * kk * s->n > i31) return 0;
    if ((s->cin + 31) / 32 > 65535 || round_up(coutg, MPAD_ALIGN) * p->group > i31) return 0;
    /* the most blocks of any tile: 16 rows x 64 columns */
    if ((round_up(coutg, 16) / 16) * ((s->n * hw + 63) / 64) * p->group > i31) return 0;
    return 1;
}

} // namespace

/* A kernel's dynamic shared-memory limit is a property of the device's
 * context: raised once per device (bit d of *done for device d < 64); a race
 * between threads only raises it twice. Returns a cudaError_t. */
extern "C" int prt__deform_conv_cuda_smem_limit(const void *kernel, int bytes, unsigned long long *done)
{
    int dev = 0;
    cudaError_t ce = cudaGetDevice(&dev);
    if (ce != cudaSuccess) return (int)ce;
    const unsigned long long bit = dev >= 0 && dev < 64 ? 1ull << dev : 0;
    if (!bit || !(__atomic_load_n(done, __ATOMIC_ACQUIRE) & bit)) {
        ce = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
        if (ce != cudaSuccess) return (int)ce;
        __atomic_fetch_or(done, bit, __ATOMIC_RELEASE);
    }
    return (int)cudaSuccess;
}

/* By default a fused kernel runs only where it measured faster than
 * im2col + cuBLAS on the H200 (bench/NOTES-gpu.md): the wgmma kernel where
 * prt__deform_conv_wgmma_default_tile says so (one group of at least 64
 * output channels with enough tiles: cases A, C, D and F; groups: E), the
 * mma.sync kernel for one group of at most 64 output channels elsewhere.
 * Elsewhere (few columns) im2col + cuBLAS stays faster. */
extern "C" int prt__deform_conv_cuda_fused_applies(const prt__dcn_params *p, const prt__dcn_shape *s, int is_f16)
{
    const int o = kernel_override();
    if (!is_f16 || o == KERNEL_IM2COL || !fused_fits(p, s)) return 0;
    if (o >= 0) return tile16(o) && tile_ok(p, s, o);
    if (o != KERNEL_DEFAULT) return 1;
    return prt__deform_conv_wgmma_default_tile(p, s, PRT_DCN_F16) >= 0 || (p->group == 1 && s->cout <= 64);
}

extern "C" int prt__deform_conv_cuda_fused_fits(const prt__dcn_params *p, const prt__dcn_shape *s)
{
    return fused_fits(p, s);
}

/* Reported whenever the shape fits, whatever PRT_DCN_CUDA_KERNEL says, so
 * that the workspace never depends on the environment at build time. */
extern "C" size_t prt__deform_conv_cuda_fused_workspace(const prt__dcn_params *p, const prt__dcn_shape *s)
{
    if (!fused_fits(p, s)) return 0;
    const int64_t cg = s->cin / p->group, coutg = s->cout / p->group;
    const size_t xt = (size_t)(s->n * s->h * s->w * s->cin) * 2;
    const size_t a = (size_t)(p->group * round_up(coutg, MPAD_ALIGN) * round_up(cg * s->kh * s->kw, BK)) * 2;
    const size_t own = a256(xt) + a256(a) + 256, wg = prt__deform_conv_wgmma_workspace(p, s, PRT_DCN_F16);
    return own > wg ? own : wg;
}

extern "C" const char *prt__deform_conv_cuda_fused_tile(const prt__dcn_params *p, const prt__dcn_shape *s)
{
    FGeo g;
    memset(&g, 0, sizeof g);
    g.coutg = (int)(s->cout / p->group);
    g.ncols = (int)(s->n * s->hout * s->wout);
    const int o = kernel_override();
    return tile_name[o >= 0 && tile16(o) && tile_ok(p, s, o) ? o
                     : o == KERNEL_FUSED                         ? auto_tile(p, s, g)
                                                                 : policy_tile(p, s, g)];
}

extern "C" int prt__deform_conv_cuda_env_override(void) { return kernel_override() != KERNEL_DEFAULT; }

/* The default policy's choice as a tactic, the environment aside. */
static int32_t default_tactic(const prt__dcn_params *p, const prt__dcn_shape *s, int is_f16)
{
    FGeo g;
    if (!fused_fits(p, s)) return PRT_DCN_TACTIC_IM2COL;
    const int w = prt__deform_conv_wgmma_default_tile(p, s, is_f16 ? PRT_DCN_F16 : PRT_DCN_F32);
    if (w >= 0) return PRT_DCN_TACTIC_FUSED + TILE_WG + w;
    if (!is_f16 || p->group != 1 || s->cout > 64) return PRT_DCN_TACTIC_IM2COL;
    memset(&g, 0, sizeof g);
    g.coutg = (int)(s->cout / p->group);
    g.ncols = (int)(s->n * s->hout * s->wout);
    return PRT_DCN_TACTIC_FUSED + choose_tile(g, p->group);
}

extern "C" int32_t prt__deform_conv_cuda_tactics(const prt__dcn_params *p, const prt__dcn_shape *smin,
                                                 const prt__dcn_shape *sopt, const prt__dcn_shape *smax, int is_f16,
                                                 int32_t *ids, int32_t cap)
{
    int32_t all[1 + TILE_COUNT], n = 0, i;
    const int fused = fused_fits(p, smin) && fused_fits(p, sopt) && fused_fits(p, smax);
    const int32_t first = fused ? default_tactic(p, sopt, is_f16) : PRT_DCN_TACTIC_IM2COL;
    all[n++] = first;
    if (first != PRT_DCN_TACTIC_IM2COL) all[n++] = PRT_DCN_TACTIC_IM2COL;
    for (i = 0; fused && i < TILE_COUNT; i++) /* the element type's tiles */
        if (tile16(i) == !!is_f16 && PRT_DCN_TACTIC_FUSED + i != first && tile_ok(p, smin, i) &&
            tile_ok(p, sopt, i) && tile_ok(p, smax, i))
            all[n++] = PRT_DCN_TACTIC_FUSED + i;
    for (i = 0; i < n && i < cap; i++) ids[i] = all[i];
    return n;
}

extern "C" const char *prt__deform_conv_cuda_tactic_name(int32_t tactic)
{
    if (tactic == PRT_DCN_TACTIC_IM2COL) return "im2col";
    if (tactic >= PRT_DCN_TACTIC_FUSED && tactic < PRT_DCN_TACTIC_FUSED + TILE_COUNT)
        return tile_name[tactic - PRT_DCN_TACTIC_FUSED];
    return NULL;
}

extern "C" int prt__deform_conv_cuda_f32_tile(const prt__dcn_params *p, const prt__dcn_shape *s, int32_t tactic)
{
    const int o = kernel_override();
    int t;
    if (!fused_fits(p, s)) return -1;
    if (o != KERNEL_DEFAULT) {
        if (o == KERNEL_FUSED)
            return prt__deform_conv_wgmma_available() ? prt__deform_conv_wgmma_tile(p, s, PRT_DCN_F32) : -1;
        if (tile16(o)) return -1; /* im2col, or a 16-bit tile */
        t = o;
    } else if (tactic == 0) {
        return prt__deform_conv_wgmma_default_tile(p, s, PRT_DCN_F32);
    } else if (tactic >= PRT_DCN_TACTIC_FUSED + TILE_F32 && tactic < PRT_DCN_TACTIC_COUNT &&
               !tile16(tactic - PRT_DCN_TACTIC_FUSED)) {
        t = tactic - PRT_DCN_TACTIC_FUSED;
    } else {
        return -1;
    }
    return tile_ok(p, s, t) ? t - TILE_WG : -1;
}

extern "C" int prt__deform_conv_cuda_fused(const prt__dcn_params *p, const prt__dcn_shape *s, int elt,
                                           const void *x, const void *offset, const void *mask, const void *weight,
                                           const void *bias, void *y, void *workspace, void *stream, char *err,
                                           size_t cap)
{
    return prt__deform_conv_cuda_fused_tiled(p, s, elt, -1, x, offset, mask, weight, bias, y, workspace, stream, err,
                                             cap);
}

extern "C" int prt__deform_conv_cuda_fused_tiled(const prt__dcn_params *p, const prt__dcn_shape *s, int elt, int tile,
                                                 const void *x, const void *offset, const void *mask,
                                                 const void *weight, const void *bias, void *y, void *workspace,
                                                 void *stream, char *err, size_t cap)
{
    cudaStream_t st = (cudaStream_t)stream;
    FGeo g;
    memset(&g, 0, sizeof g);
    const int64_t G = p->group;
    prt__dcn_cuda_geo_set(&g, p, s);
    g.ktot = g.cg * g.kk; g.kpad = (int)round_up(g.ktot, BK);
    if (s->n == 0 || s->cout == 0 || g.hw == 0) return 0;
    const int o = kernel_override();
    int t = tile >= 0 && tile < TILE_COUNT ? tile : o >= 0 ? o : o == KERNEL_FUSED ? auto_tile(p, s, g) : policy_tile(p, s, g);
    if (t >= TILE_WG && tile16(t) && tile_ok(p, s, t))
        return prt__deform_conv_wgmma(p, s, elt, t - TILE_WG, x, offset, mask, weight, bias, y, workspace, stream,
                                      err, cap);
    if (t >= TILE_WG) t = choose_tile(g, G);
    g.mpad = (int)round_up(g.coutg, tile_bm[t]);
    g.mtiles = g.mpad / tile_bm[t];
    g.ctiles = (g.ncols + tile_bn[t] - 1) / tile_bn[t];

    char *ws = (char *)(((uintptr_t)workspace + 255) & ~(uintptr_t)255);
    __half *xt = (__half *)ws;
    __half *a = (__half *)(ws + a256((size_t)(s->n * s->h * s->w * s->cin) * 2));
    cudaError_t ce;

    {
        dim3 grid((unsigned)((g.hw_in + 31) / 32), (unsigned)((g.cin + 31) / 32), (unsigned)s->n);
        nchw_to_nhwc<<<grid, dim3(32, 8), 0, st>>>((const __half *)x, xt, g.cin, g.hw_in);
        if ((ce = cudaGetLastError()) != cudaSuccess) return ffail(err, cap, "x layout kernel", ce);
    }
    {
        const int64_t total = G * g.mpad * (int64_t)g.kpad;
        pack_weights<<<(unsigned)((total + 255) / 256), 256, 0, st>>>((const __half *)weight, a, g, total);
        if ((ce = cudaGetLastError()) != cudaSuccess) return ffail(err, cap, "weight packing kernel", ce);
    }
    const int64_t blocks = (int64_t)g.mtiles * g.ctiles * G;
    const __half *xo = (const __half *)offset, *xm = (const __half *)mask, *xbias = (const __half *)bias;
    __half *yy = (__half *)y;
    switch (t) {
    case TILE_128x128: ce = launch<128, 128, 2, 4, 3>(elt, blocks, st, xt, xo, xm, a, xbias, yy, g); break;
    case TILE_64x128: ce = launch<64, 128, 2, 4, 3>(elt, blocks, st, xt, xo, xm, a, xbias, yy, g); break;
    case TILE_64x64: ce = launch<64, 64, 4, 2, 4>(elt, blocks, st, xt, xo, xm, a, xbias, yy, g); break;
    default: ce = launch<16, 128, 1, 8, 3>(elt, blocks, st, xt, xo, xm, a, xbias, yy, g); break;
    }
    if (ce != cudaSuccess) return ffail(err, cap, "fused kernel", ce);
    return 0;
}
