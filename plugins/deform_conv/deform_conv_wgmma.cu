/*
 * deform_conv/deform_conv_wgmma.cu - ModulatedDeformConv2d fp16 as one fused
 * implicit-GEMM kernel on Hopper's warpgroup tensor-core instructions
 * (wgmma.mma_async, sm_90a; this file is compiled for sm_90a alone and runs
 * only on devices of compute capability 9.0).
 *
 * Per group g the convolution is the GEMM
 *     y_g[m][col] = bias[m] + sum_k A_g[m][k] * B[k][col]
 * as in deform_conv_fused.cu, with another k order. The group's channels are
 * cut into segments that never cross a deformable group (sc = min(Cg, Cin/dg)
 * channels each; the shapes where neither divides the other are left to the
 * other kernels). Within a segment k runs channel-block-major, tap-minor:
 *     k = (cb * kk + tap) * cw + cc,    channel = segment base + cb * cw + cc
 * with cw = 32, 16 or 8 channels per block, so that the kk taps of one block
 * of channels are consecutive chunks of K: they sample one neighbourhood of
 * x, which the corner loads (read-only path, cached in L1) then find in L1.
 * Each segment's K is padded with zeros to a multiple of the 32-wide chunk,
 * so a chunk never holds two deformable groups.
 *
 * Two launches on the caller's stream (three with split-K), no host
 * synchronization:
 *  1. the operands' layouts, in one launch: x [N][Cin][H][W] -> xt
 *     [N*H*W + 1][Cin] (channels-last, in the workspace; the last pixel row
 *     is zero, and every corner whose weight is 0 points at it, so the
 *     corner loads need no predicate and a NaN or Inf in x never meets a
 *     zero weight), and weight -> A [G][Mpad/8][Kpad/8][8][8]: 8x8 blocks of
 *     16-byte rows, the shared-memory layout wgmma reads without swizzle, so
 *     that a chunk of A is copied as contiguous 512-byte runs;
 *  2. the fused kernel: a block of BM/64 warpgroups owns a BM x BN tile of
 *     y_g (each warpgroup 64 rows, all BN columns) and walks its range of K
 *     in steps of KS chunks of 32. Per block and segment a table in shared
 *     memory holds, for every (tap, column), the four corner byte offsets
 *     into xt and the four mask-scaled bilinear weights (fp32), computed
 *     once; a second table says where each 8-channel run of a segment's
 *     chunks lies (channel, tap). Per step: the warpgroups issue the step's
 *     wgmma (A and B from shared memory, fp32 accumulators in registers)
 *     and, while the tensor cores run, every thread gathers the next step:
 *     per (column, 8-channel run) item four 16-byte corner loads (all KS
 *     chunks' loads first), blended in fp32 and rounded to fp16 once into
 *     the next B tile; two wgmma groups stay in flight; one barrier per
 *     step, after which the A copies (cp.async) of the step after next are
 *     issued, so that they never wait behind the proxy fence;
 *  3. with split-K (few column tiles): each split writes fp32 partial sums
 *     to the workspace and a last kernel adds them in a fixed order with the
 *     bias and rounds to fp16 once.
 * Without split-K the epilogue adds the bias in fp32 and rounds once.
 */
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deform_conv.h"
#include "deform_conv_elt.cuh"

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define DCN_WG_DEVICE 1
#else
#define DCN_WG_DEVICE 0
#endif

namespace {

constexpr int BK = 32;      /* k per chunk */
constexpr int ASTAGES = 4;  /* A chunks in shared memory */
constexpr int BSTAGES = 3;  /* B chunks in shared memory */
constexpr int64_t SPLIT_BYTES = (int64_t)16 << 20; /* the split-K partial sums' workspace */
constexpr int MAX_SPLIT = 8;

struct WGeo : prt__dcn_cuda_geo {
    int sc, cw, kseg, kspad, kcs, kpad, nch; /* segments: see the file comment */
    int mpad, mtiles, ctiles, split, cps;    /* cps: chunks per split */
    int zero;                                /* byte offset of xt's zero pixel row */
    int flags;                               /* PRT_DCN_CUDA_WGFLAGS (benchmarks): bit 0, A copies before the fence */
};

/* One (tap, column) entry of the corner table: the four corners' byte
 * offsets into xt (channel 0; the zero pixel row where the weight is 0) and
 * the mask-scaled bilinear weights. */
struct Corner {
    int4 off;
    float4 wt;
};

/* Where 8-channel run q of chunk j of a segment lies: its channel within
 * the segment (-1: K padding) and its tap's row of the corner table
 * (tap * BN * sizeof(Corner) bytes). */
struct RunInfo {
    int c, row;
};

/* ---- layout kernels ---------------------------------------------------- */

/* x [N][C][HW] -> xt [N][HW][C] in 64 x 64 tiles (C is a multiple of 8):
 * 16-byte loads along the pixels (when HW is a multiple of 8) and 16-byte
 * stores along the channels, each pixel's 64 channels written as one
 * 128-byte run. The tile is kept as rows of 64 pixels (one per channel)
 * whose 16-byte granules are swizzled by channel / 8, so that the stores'
 * reads of 8 channels of one pixel hit distinct banks. */
__device__ __forceinline__ void nchw_to_nhwc_tile(const __half *__restrict__ x, __half *__restrict__ xt, int c, int hw,
                                                  int n, int p0, int c0, int tid)
{
    __shared__ __align__(16) __half t[64 * 64];
    const __half *xs = x + (size_t)n * c * hw;
    __half *xd = xt + (size_t)n * c * hw;
    const int vec = (hw & 7) == 0;
#pragma unroll
    for (int i = 0; i < 2; i++) {
        const int ch = (tid >> 3) + 32 * i, seg = tid & 7;
        const int cc = c0 + ch, pp = p0 + seg * 8;
        uint4 v = make_uint4(0, 0, 0, 0);
        if (cc < c) {
            if (vec && pp + 8 <= hw) {
                v = __ldg((const uint4 *)(xs + (size_t)cc * hw + pp));
            } else {
                __half *h = (__half *)&v;
                for (int e = 0; e < 8; e++)
                    if (pp + e < hw) h[e] = xs[(size_t)cc * hw + pp + e];
            }
        }
        *(uint4 *)&t[ch * 64 + ((seg ^ (ch >> 3)) & 7) * 8] = v;
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < 2; i++) {
        const int it = tid + 256 * i, cs = it & 7, px = it >> 3;
        const int pp = p0 + px, cc = c0 + cs * 8;
        if (pp >= hw || cc >= c) continue;
        uint4 v;
        __half *h = (__half *)&v;
#pragma unroll
        for (int e = 0; e < 8; e++) h[e] = t[(cs * 8 + e) * 64 + (((px >> 3) ^ cs) & 7) * 8 + (px & 7)];
        *(uint4 *)(xd + (size_t)pp * c + cc) = v;
    }
}

/* weight [G*coutg][cg][kk] -> A [G][mpad/8][kpad/8][8][8] in the segment k
 * order, zeros outside. One thread per 16-byte row of an 8x8 block: one
 * output channel, 8 consecutive k, which are 8 channels of one tap. */
__device__ __forceinline__ void pack_weights_row(const __half *__restrict__ w, __half *__restrict__ a, const WGeo &g,
                                                 int idx)
{
    const int r8 = idx & 7, rest = idx >> 3, kb8 = g.kpad / 8, mb8 = g.mpad / 8;
    const int kb = rest % kb8, r2 = rest / kb8;
    const int mb = r2 % mb8, grp = r2 / mb8;
    const int m = mb * 8 + r8, k = kb * 8;
    const int seg = k / g.kspad, kl = k - seg * g.kspad;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (m < g.coutg && kl < g.kseg) {
        const int cb = kl / (g.kk * g.cw), rem = kl - cb * g.kk * g.cw;
        const int tap = rem / g.cw, cc = rem - tap * g.cw;
        const __half *src = w + ((size_t)(grp * g.coutg + m) * g.cg + seg * g.sc + cb * g.cw + cc) * g.kk + tap;
        __half *h = (__half *)&v;
#pragma unroll
        for (int e = 0; e < 8; e++) h[e] = src[e * g.kk];
    }
    *(uint4 *)(a + (size_t)idx * 8) = v;
}

/* The operands' layouts in one launch: blocks [0, nxt) transpose x (block
 * b: pixel tile b % pxt, channel tile b / pxt % cht, image b / (pxt * cht)),
 * the others pack 256 rows of A each; block 0 also zeroes xt's zero row. */
__global__ void __launch_bounds__(256) wg_prep(const __half *__restrict__ x, __half *__restrict__ xt,
                                               const __half *__restrict__ w, __half *__restrict__ a, WGeo g, int pxt,
                                               int cht, int nxt, int arows)
{
    const int b = blockIdx.x, tid = threadIdx.x;
    if (b == 0)
        for (int i = tid; i < g.cin / 8; i += 256) *(uint4 *)((char *)xt + g.zero + i * 16) = make_uint4(0, 0, 0, 0);
    if (b < nxt) {
        nchw_to_nhwc_tile(x, xt, g.cin, g.hw_in, b / (pxt * cht), b % pxt * 64, b / pxt % cht * 64, tid);
        return;
    }
    const int idx = (b - nxt) * 256 + tid;
    if (idx < arows) pack_weights_row(w, a, g, idx);
}

/* Split-K: y = fp16(bias + sum over the splits of the fp32 partial sums,
 * in split order). part [split][cout][ncols]. */
template <int BF>
__global__ void wg_splitk_sum(const float *__restrict__ part, const __half *__restrict__ bias, __half *__restrict__ y,
                              WGeo g, int64_t total)
{
    const int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= total) return;
    const int col = (int)(idx % g.ncols), oc = (int)(idx / g.ncols);
    float s = bias ? e2f<BF>(bias[oc]) : 0.f;
    for (int i = 0; i < g.split; i++) s += part[(int64_t)i * total + idx];
    const int n = col / g.hw, pos = col - n * g.hw;
    y[((size_t)n * g.cout + oc) * g.hw + pos] = f2e<BF>(s);
}

/* ---- the fused kernel --------------------------------------------------- */

#if DCN_WG_DEVICE
__device__ __forceinline__ uint32_t smem_addr(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

/* Generic-proxy writes to shared memory (stores, cp.async) made visible to
 * the tensor cores' reads (async proxy); each writing thread, before the
 * barrier. */
__device__ __forceinline__ void fence_async_smem() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

__device__ __forceinline__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void wg_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory"); }

/* Keeps the compiler from moving accumulator accesses across the
 * asynchronous MMAs. */
template <int R> __device__ __forceinline__ void acc_fence(float (&d)[R])
{
#pragma unroll
    for (int i = 0; i < R; i++) asm volatile("" : "+f"(d[i])::"memory");
}

/* Shared-memory matrix descriptor, no swizzle, K-major: 8x8 blocks of
 * 16-byte rows (128 bytes each); lbo: bytes between the blocks adjacent in
 * K, sbo: between the blocks adjacent in M (or N). */
__device__ __forceinline__ uint64_t smem_desc(uint32_t addr, uint32_t lbo, uint32_t sbo)
{
    return (uint64_t)((addr >> 4) & 0x3fff) | ((uint64_t)((lbo >> 4) & 0x3fff) << 16) |
           ((uint64_t)((sbo >> 4) & 0x3fff) << 32);
}

/* D[64 x N] += A[64 x 16] * B[16 x N]: fp16 (BF 0) or bfloat16 (BF 1)
 * operands from shared memory, fp32 accumulators, both operands K-major.
 * TY is the operands' PTX type. */
#define DCN_WGMMA_M64N128K16(TY) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n" \
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32." TY "." TY " {" \
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
                 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
                 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63" \
                 "}, %64, %65, p, 1, 1, 0, 0;\n}\n" \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
                   "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
                   "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
                   "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
                   "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
                   "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
                   "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]) \
                 : "l"(da), "l"(db), "r"(1))

template <int BF, int N> __device__ __forceinline__ void wgmma_async(float (&d)[N / 2], uint64_t da, uint64_t db)
{
    static_assert(N == 128, "the m64n128 shape");
    if (BF) DCN_WGMMA_M64N128K16("bf16");
    else DCN_WGMMA_M64N128K16("f16");
}
#undef DCN_WGMMA_M64N128K16

/* Corner table of segment `seg` for the block's BN columns: entry
 * tap * BN + column. The sampling point is the integer grid position plus
 * the offset's floor, the bilinear fractions come from the offset alone, as
 * in the CPU path and the other kernels. */
template <int BF, int BN, int NT>
__device__ __forceinline__ void build_table(Corner *tab, const WGeo &g, const __half *__restrict__ off,
                                            const __half *__restrict__ mask, int grp, int seg, int c0, int tid)
{
    const int d = g.dg == 1 ? 0 : (grp * g.cg + seg * g.sc) / g.cpd;
    for (int e = tid; e < g.kk * BN; e += NT) {
        const int tap = e / BN, cl = e - tap * BN, col = c0 + cl;
        Corner c;
        c.off = make_int4(g.zero, g.zero, g.zero, g.zero);
        c.wt = make_float4(0.f, 0.f, 0.f, 0.f);
        if (col < g.ncols) {
            const int n = col / g.hw, pos = col - n * g.hw;
            const int oy = pos / g.wout, ox = pos - oy * g.wout;
            const int i = tap / g.kw, j = tap - i * g.kw;
            const size_t ob = ((size_t)(n * g.dg + d) * 2 * g.kk + 2 * tap) * g.hw + pos;
            const float dy = e2f<BF>(off[ob]);
            const float dx = e2f<BF>(off[ob + g.hw]);
            const float m = e2f<BF>(mask[((size_t)(n * g.dg + d) * g.kk + tap) * g.hw + pos]);
            const int by = oy * g.sh - g.ph + i * g.dh, bx = ox * g.sw - g.pw + j * g.dw;
            /* |offset| >= 2^26 is outside any image this path accepts; false
             * for NaN and Inf too, which sample 0 */
            if (fabsf(dy) < 67108864.f && fabsf(dx) < 67108864.f) {
                const float fy = floorf(dy), fx = floorf(dx);
                const float lh = dy - fy, lw = dx - fx;
                const int h0 = by + (int)fy, x0 = bx + (int)fx;
                /* inside unless py <= -1, py >= H, px <= -1 or px >= W */
                if ((h0 >= 0 || (h0 == -1 && lh > 0.f)) && h0 < g.h && (x0 >= 0 || (x0 == -1 && lw > 0.f)) &&
                    x0 < g.w) {
                    const int base = n * g.hw_in, rb = g.cin * 2;
                    if (h0 >= 0 && x0 >= 0) {
                        c.off.x = (base + h0 * g.w + x0) * rb;
                        c.wt.x = m * (1.f - lh) * (1.f - lw);
                    }
                    if (h0 >= 0 && x0 + 1 < g.w) {
                        c.off.y = (base + h0 * g.w + x0 + 1) * rb;
                        c.wt.y = m * (1.f - lh) * lw;
                    }
                    if (h0 + 1 < g.h && x0 >= 0) {
                        c.off.z = (base + (h0 + 1) * g.w + x0) * rb;
                        c.wt.z = m * lh * (1.f - lw);
                    }
                    if (h0 + 1 < g.h && x0 + 1 < g.w) {
                        c.off.w = (base + (h0 + 1) * g.w + x0 + 1) * rb;
                        c.wt.w = m * lh * lw;
                    }
                }
            }
        }
        tab[e] = c;
    }
}

/* The run table of one segment's chunks (all segments share it). */
template <int BN, int NT> __device__ __forceinline__ void build_runs(RunInfo *runs, const WGeo &g, int tid)
{
    for (int e = tid; e < g.kcs * 4; e += NT) {
        const int kl = e * 8; /* chunk e / 4, run e % 4 */
        RunInfo r;
        r.c = -1;
        r.row = 0;
        if (kl < g.kseg) {
            const int cb = kl / (g.kk * g.cw), rem = kl - cb * g.kk * g.cw;
            const int tap = rem / g.cw;
            r.c = cb * g.cw + rem - tap * g.cw;
            r.row = tap * BN * (int)sizeof(Corner);
        }
        runs[e] = r;
    }
}

/* Blend four corner runs of 8 channels in fp32; round to 16 bits once. */
template <int BF>
__device__ __forceinline__ uint4 blend4(const uint4 r0, const uint4 r1, const uint4 r2, const uint4 r3, const float4 w)
{
    uint4 o;
#pragma unroll
    for (int e = 0; e < 4; e++) {
        const float2 fa = e2f2<BF>((&r0.x)[e]), fb = e2f2<BF>((&r1.x)[e]), fc = e2f2<BF>((&r2.x)[e]),
                     fd = e2f2<BF>((&r3.x)[e]);
        float v0 = w.x * fa.x, v1 = w.x * fa.y;
        v0 = fmaf(w.y, fb.x, v0);
        v1 = fmaf(w.y, fb.y, v1);
        v0 = fmaf(w.z, fc.x, v0);
        v1 = fmaf(w.z, fc.y, v1);
        v0 = fmaf(w.w, fd.x, v0);
        v1 = fmaf(w.w, fd.y, v1);
        (&o.x)[e] = f2e2<BF>(v0, v1);
    }
    return o;
}

/* Gather and blend KS chunks into a B tile ([BN][32 KS] as 8x8 blocks:
 * column block cl/8 at 512 KS bytes, k block at 128, row cl%8 at 16), the
 * corner loads of all KS chunks first. Chunk u: xs[u], xt at the thread's
 * channel (bytes); tab[u], the corner table's row of the run's tap; live[u],
 * 0 in the K padding. */
template <int BF, int BN, int NT, int KS>
__device__ __forceinline__ void gather(unsigned char *sb, const unsigned char *const (&tab)[KS],
                                       const char *const (&xs)[KS], const int (&live)[KS], int tid)
{
    constexpr int ITEMS = BN * 4 / NT;
    const int q = tid & 3;
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const int cl = (tid >> 2) + i * (NT / 4);
        uint4 v[KS][4];
        float4 w[KS];
#pragma unroll
        for (int u = 0; u < KS; u++) {
            const Corner e = *(const Corner *)(tab[u] + cl * sizeof(Corner));
            w[u] = e.wt;
            v[u][0] = v[u][1] = v[u][2] = v[u][3] = make_uint4(0, 0, 0, 0);
            if (live[u]) {
                v[u][0] = __ldg((const uint4 *)(xs[u] + (unsigned)e.off.x));
                v[u][1] = __ldg((const uint4 *)(xs[u] + (unsigned)e.off.y));
                v[u][2] = __ldg((const uint4 *)(xs[u] + (unsigned)e.off.z));
                v[u][3] = __ldg((const uint4 *)(xs[u] + (unsigned)e.off.w));
            }
        }
#pragma unroll
        for (int u = 0; u < KS; u++)
            *(uint4 *)(sb + (cl >> 3) * 512 * KS + (u * 4 + q) * 128 + (cl & 7) * 16) =
                blend4<BF>(v[u][0], v[u][1], v[u][2], v[u][3], w[u]);
    }
}

/* Shared memory of one tile: A stages (KS chunks each; 4 stages for KS 1,
 * 3 for KS 2, where the A copies are always issued after the barrier), B
 * stages, the corner table, the run table. */
template <int BM, int BN, int KS> struct WgSmem {
    static constexpr int astages = KS == 1 ? ASTAGES : 3;
    static constexpr size_t a_bytes = (size_t)BM * BK * 2 * KS, b_bytes = (size_t)BN * BK * 2 * KS;
    static constexpr size_t table_off = a_bytes * astages + b_bytes * BSTAGES;
};
#endif /* DCN_WG_DEVICE */

/* One block: a BM x BN tile of y_g over the chunks [kc0, kc1) of K, KS
 * chunks per step (kc1 - kc0 and the chunks per segment are multiples of
 * KS). */
template <int BF, int BM, int BN, int MINB, int KS>
__global__ void __launch_bounds__(BM * 2, MINB)
    dcn_wgmma(const __half *__restrict__ xt, const __half *__restrict__ off, const __half *__restrict__ mask,
              const __half *__restrict__ A, const __half *__restrict__ bias, __half *__restrict__ y,
              float *__restrict__ part, WGeo g)
{
#if DCN_WG_DEVICE
    constexpr int NT = BM * 2; /* BM / 64 warpgroups */
    constexpr int R = BN / 2;  /* accumulators per thread */
    constexpr int AP = BM * 4 * KS / NT; /* 16-byte A copies per thread and step */
    typedef WgSmem<BM, BN, KS> L;
    constexpr int AST = L::astages;
    extern __shared__ __align__(128) unsigned char smem[];
    unsigned char *sA = smem, *sB = smem + L::a_bytes * AST;
    Corner *tab = (Corner *)(smem + L::table_off);
    RunInfo *runs = (RunInfo *)(smem + L::table_off + (size_t)g.kk * BN * sizeof(Corner));

    const int tid = threadIdx.x, wg = tid >> 7, lane = tid & 31, wq = (tid >> 5) & 3, q = tid & 3;
    int bid = blockIdx.x;
    const int mtile = bid % g.mtiles;
    bid /= g.mtiles;
    const int ctile = bid % g.ctiles;
    bid /= g.ctiles;
    const int split = bid % g.split;
    const int grp = bid / g.split;
    const int m0 = mtile * BM, c0 = ctile * BN;
    const int kc0 = split * g.cps, kc1 = min(g.nch, kc0 + g.cps);
    const int nst = (kc1 - kc0) / KS; /* steps */

    /* A of step j: BM/8 runs of 512 KS bytes (KS chunks are adjacent in A),
     * kpad * 16 bytes apart; this thread's copies advance by 512 KS bytes */
    const char *asrc[AP];
    uint32_t adst[AP];
    {
        const char *Ab = (const char *)(A + ((size_t)grp * (g.mpad / 8) + m0 / 8) * (size_t)(g.kpad / 8) * 64);
#pragma unroll
        for (int i = 0; i < AP; i++) {
            const int p = tid + i * NT, mg = p / (32 * KS), w = p % (32 * KS);
            asrc[i] = Ab + ((size_t)mg * (g.kpad / 8) + (size_t)kc0 * 4) * 128 + w * 16;
            adst[i] = smem_addr(sA) + mg * 512 * KS + w * 16;
        }
    }
    auto load_a = [&](int j, int stage) {
#pragma unroll
        for (int i = 0; i < AP; i++)
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(adst[i] + stage * (uint32_t)L::a_bytes),
                         "l"(asrc[i] + (size_t)j * 512 * KS));
    };

    int seg = kc0 / g.kcs, jseg = kc0 - seg * g.kcs; /* segment, chunk within it */
    const char *xg = (const char *)xt + (size_t)(grp * g.cg) * 2;
    auto gather_step = [&](unsigned char *sb) {
        const unsigned char *tb[KS];
        const char *xs[KS];
        int live[KS];
#pragma unroll
        for (int u = 0; u < KS; u++) {
            const RunInfo ri = runs[(jseg + u) * 4 + q];
            tb[u] = (const unsigned char *)tab + ri.row;
            xs[u] = xg + (size_t)(seg * g.sc + ri.c) * 2;
            live[u] = ri.c >= 0;
        }
        gather<BF, BN, NT, KS>(sb, tb, xs, live, tid);
    };

    float acc[R];
#pragma unroll
    for (int i = 0; i < R; i++) acc[i] = 0.f;

    load_a(0, 0);
    cp_async_commit();
    if (nst > 1) load_a(1, 1);
    cp_async_commit();
    build_runs<BN, NT>(runs, g, tid);
    build_table<BF, BN, NT>(tab, g, off, mask, grp, seg, c0, tid);
    __syncthreads();
    gather_step(sB);
    cp_async_wait<1>();
    fence_async_smem();
    __syncthreads();

    const uint64_t da0 = smem_desc(smem_addr(sA) + wg * 64 * BK * 2 * KS, 128, 512 * KS);
    const uint64_t db0 = smem_desc(smem_addr(sB), 128, 512 * KS);
    const int late_a = KS > 1 || !(g.flags & 1);
    int as = 0, bs = 0; /* A and B stages of step i */
    for (int i = 0; i < nst; i++) {
        {
            const uint64_t da = da0 + (uint64_t)((as * (uint32_t)L::a_bytes) >> 4);
            const uint64_t db = db0 + (uint64_t)((bs * (uint32_t)L::b_bytes) >> 4);
            wg_fence();
            acc_fence(acc);
#pragma unroll
            for (int ks = 0; ks < BK * KS / 16; ks++) wgmma_async<BF, BN>(acc, da + ks * 16, db + ks * 16);
            wg_commit();
            acc_fence(acc);
        }
        const int a2 = as + 2 >= AST ? as + 2 - AST : as + 2; /* A stage of step i + 2 */
        if (!late_a) {
            if (i + 2 < nst) load_a(i + 2, a2);
            cp_async_commit();
        }
        const int bn = bs == BSTAGES - 1 ? 0 : bs + 1;
        if (i + 1 < nst) {
            jseg += KS;
            if (jseg == g.kcs) { /* the next step opens a segment */
                jseg = 0;
                seg++;
                build_table<BF, BN, NT>(tab, g, off, mask, grp, seg, c0, tid);
                __syncthreads();
            }
            gather_step(sB + bn * L::b_bytes);
        }
        if (late_a) cp_async_wait<0>();
        else cp_async_wait<1>();
        fence_async_smem();
        wg_wait<1>();
        acc_fence(acc);
        __syncthreads();
        if (late_a) {
            /* the stage of step i + 2 held step i + 2 - AST (i - 2 or i - 1),
             * whose MMAs every warpgroup has waited for before the barrier */
            if (i + 2 < nst) load_a(i + 2, a2);
            cp_async_commit();
        }
        as = as == AST - 1 ? 0 : as + 1;
        bs = bn;
    }
    wg_wait<0>();
    acc_fence(acc);

    /* epilogue: accumulator 4j + 2h + e is row lane/4 + 8h of the warp's 16,
     * column 8j + 2 (lane % 4) + e */
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int m = m0 + wg * 64 + wq * 16 + (lane >> 2) + 8 * h;
        if (m >= g.coutg) continue;
        const int oc = grp * g.coutg + m;
        const float bv = part ? 0.f : bias ? e2f<BF>(bias[oc]) : 0.f;
#pragma unroll
        for (int j = 0; j < BN / 8; j++) {
            const int col = c0 + 8 * j + 2 * (lane & 3);
            const float v0 = acc[4 * j + 2 * h] + bv, v1 = acc[4 * j + 2 * h + 1] + bv;
            if (part) {
                float *pp = part + ((size_t)split * g.cout + oc) * g.ncols + col;
                if (col + 1 < g.ncols && (g.ncols & 1) == 0) {
                    *(float2 *)pp = make_float2(v0, v1);
                } else {
                    if (col < g.ncols) pp[0] = v0;
                    if (col + 1 < g.ncols) pp[1] = v1;
                }
                continue;
            }
            if (col >= g.ncols) continue;
            const int n = col / g.hw, pos = col - n * g.hw;
            __half *yp = y + ((size_t)n * g.cout + oc) * g.hw + pos;
            if ((g.hw & 1) == 0 && col + 1 < g.ncols) {
                *(uint32_t *)yp = f2e2<BF>(v0, v1); /* pos even, pos + 1 in the same image */
            } else {
                yp[0] = f2e<BF>(v0);
                if (col + 1 < g.ncols) {
                    const int n1 = (col + 1) / g.hw, p1 = col + 1 - n1 * g.hw;
                    y[((size_t)n1 * g.cout + oc) * g.hw + p1] = f2e<BF>(v1);
                }
            }
        }
    }
#endif /* DCN_WG_DEVICE */
}

/* ---- host side ---------------------------------------------------------- */

/* WG_256x128K64 takes two chunks (64 k) per step: half the barriers and
 * per-step bookkeeping, and both chunks' corner loads in flight together. */
enum { WG_256x128, WG_128x128, WG_64x128, WG_256x128K64, WG_COUNT };
const int wg_bm[WG_COUNT] = {256, 128, 64, 256};
const int wg_bn[WG_COUNT] = {128, 128, 128, 128};
const int wg_minb[WG_COUNT] = {1, 2, 2, 1};
const int wg_ks[WG_COUNT] = {1, 1, 1, 2};

constexpr int64_t MPAD_ALIGN = 256; /* the largest BM: the workspace does not depend on the tile */
constexpr size_t SMEM_MAX = 227 * 1024;

int64_t round_up(int64_t v, int64_t a) { return (v + a - 1) / a * a; }
size_t a256(size_t v) { return (v + 255) & ~(size_t)255; }

/* A and B stages, the corner table, the run table (kcs chunks per segment). */
size_t tile_smem(int t, int64_t kk, int64_t kcs)
{
    const int ks = wg_ks[t], astages = ks == 1 ? ASTAGES : 3;
    return (size_t)wg_bm[t] * BK * 2 * ks * astages + (size_t)wg_bn[t] * BK * 2 * ks * BSTAGES +
           (size_t)kk * wg_bn[t] * sizeof(Corner) + (size_t)kcs * 4 * sizeof(RunInfo);
}

/* Channels per segment and per block (see the file comment); 0 when the
 * group's channels and the deformable groups' channels do not nest. */
int64_t seg_channels(const prt__dcn_params *p, const prt__dcn_shape *s)
{
    const int64_t cg = s->cin / p->group, cpd = s->cin / p->deformable_group;
    if (cpd % cg == 0) return cg;
    if (cg % cpd == 0) return cpd;
    return 0;
}

int64_t block_channels(int64_t sc) { return sc % 32 == 0 ? 32 : sc % 16 == 0 ? 16 : 8; }

int64_t kpad_of(const prt__dcn_params *p, const prt__dcn_shape *s)
{
    const int64_t sc = seg_channels(p, s), kk = s->kh * s->kw;
    return (s->cin / p->group / sc) * round_up(sc * kk, BK);
}

int fits(const prt__dcn_params *p, const prt__dcn_shape *s, int t)
{
    const int64_t i31 = ((int64_t)1 << 31) - 1;
    if (t < 0 || t >= WG_COUNT || !prt__deform_conv_cuda_fused_fits(p, s)) return 0;
    const int64_t sc = seg_channels(p, s), kk = s->kh * s->kw;
    if (sc == 0 || sc % 8) return 0;
    /* byte offsets into xt and its zero row; 8-element rows of A */
    if ((s->n * s->h * s->w + 1) * s->cin * 2 > i31 || kpad_of(p, s) > i31 / 8) return 0;
    if (p->group * round_up(s->cout / p->group, MPAD_ALIGN) * kpad_of(p, s) > i31) return 0;
    const int64_t kcs = round_up(sc * kk, BK) / BK;
    if (kcs % wg_ks[t] || tile_smem(t, kk, kcs) > SMEM_MAX) return 0;
    const int64_t blocks = round_up(s->cout / p->group, wg_bm[t]) / wg_bm[t] *
                           ((s->n * s->hout * s->wout + wg_bn[t] - 1) / wg_bn[t]) * p->group * MAX_SPLIT;
    return blocks <= i31;
}

size_t part_bytes(const prt__dcn_shape *s)
{
    const int64_t b = MAX_SPLIT * s->cout * s->n * s->hout * s->wout * 4;
    return (size_t)(b < SPLIT_BYTES ? b : SPLIT_BYTES);
}

/* PRT_DCN_CUDA_SPLIT (environment, read per call, for benchmarks): the
 * number of K splits, 1..8, at least 2 chunks each and within the partial
 * sums' workspace; unset: enough to fill the device when the tiles fill less
 * than half of it, at least 8 chunks each. */
int split_of(const WGeo &g, int64_t groups, int t)
{
    int sms = 132, dev = 0;
    if (cudaGetDevice(&dev) == cudaSuccess) cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    const int64_t blocks = (int64_t)g.mtiles * g.ctiles * groups;
    const int64_t slots = (int64_t)sms * wg_minb[t];
    int64_t sp = blocks * 2 <= slots ? slots / blocks : 1, min_chunks = 8;
    const char *e = getenv("PRT_DCN_CUDA_SPLIT");
    if (e && *e) {
        sp = atoi(e);
        min_chunks = 2;
    }
    if (sp > MAX_SPLIT) sp = MAX_SPLIT;
    if (sp > g.nch / min_chunks) sp = g.nch / min_chunks;
    while (sp > 1 && (int64_t)sp * g.cout * g.ncols * 4 > SPLIT_BYTES) sp--;
    return sp < 1 ? 1 : (int)sp;
}

int wfail(char *err, size_t cap, const char *what, cudaError_t ce)
{
    if (err && cap)
        snprintf(err, cap, "ModulatedDeformConv2d CUDA (wgmma fp16): %s failed: %s", what, cudaGetErrorString(ce));
    return -1;
}

template <int BF, int BM, int BN, int MINB, int KS>
cudaError_t launch_t(int64_t blocks, size_t smem, cudaStream_t st, const __half *xt, const __half *off,
                   const __half *mask, const __half *a, const __half *bias, __half *y, float *part, const WGeo &g)
{
    static unsigned long long raised = 0;
    const cudaError_t ce = (cudaError_t)prt__deform_conv_cuda_smem_limit((const void *)dcn_wgmma<BF, BM, BN, MINB, KS>,
                                                                         (int)SMEM_MAX, &raised);
    if (ce != cudaSuccess) return ce;
    dcn_wgmma<BF, BM, BN, MINB, KS><<<(unsigned)blocks, BM * 2, smem, st>>>(xt, off, mask, a, bias, y, part, g);
    return cudaGetLastError();
}

/* The tile for the element type (elt: PRT_DCN_F16 or PRT_DCN_BF16). */
template <int BM, int BN, int MINB, int KS>
cudaError_t launch(int elt, int64_t blocks, size_t smem, cudaStream_t st, const __half *xt, const __half *off,
                   const __half *mask, const __half *a, const __half *bias, __half *y, float *part, const WGeo &g)
{
    if (elt == PRT_DCN_BF16) return launch_t<1, BM, BN, MINB, KS>(blocks, smem, st, xt, off, mask, a, bias, y, part, g);
    return launch_t<0, BM, BN, MINB, KS>(blocks, smem, st, xt, off, mask, a, bias, y, part, g);
}

} // namespace

extern "C" int prt__deform_conv_wgmma_available(void)
{
    int dev = 0, major = 0, minor = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return major == 9 && minor == 0;
}

extern "C" int prt__deform_conv_wgmma_fits(const prt__dcn_params *p, const prt__dcn_shape *s, int tile)
{
    return fits(p, s, tile);
}

extern "C" int prt__deform_conv_wgmma_tile(const prt__dcn_params *p, const prt__dcn_shape *s)
{
    const int64_t coutg = s->cout / p->group;
    const int t = coutg > 128 ? WG_256x128 : coutg > 64 ? WG_128x128 : WG_64x128;
    if (t == WG_256x128 && fits(p, s, WG_256x128K64)) return WG_256x128K64;
    return fits(p, s, t) ? t : -1;
}

/* The default policy's wgmma tile (bench/NOTES-gpu.md, H200): one group of
 * more than 64 output channels (above 128 the 256x128 tile, with 64 k per
 * step where it fits; else 128x128) whose tiles,
 * without split-K, give every multiprocessor at least one block; -1
 * otherwise (im2col + cuBLAS, or the mma.sync kernel, runs). */
extern "C" int prt__deform_conv_wgmma_default_tile(const prt__dcn_params *p, const prt__dcn_shape *s)
{
    int sms = 132, dev = 0;
    const int64_t coutg = s->cout / p->group;
    if (p->group != 1 || coutg <= 64 || !prt__deform_conv_wgmma_available()) return -1;
    int t = coutg > 128 ? WG_256x128K64 : WG_128x128;
    if (t == WG_256x128K64 && !fits(p, s, t)) t = WG_256x128;
    if (!fits(p, s, t)) return -1;
    if (cudaGetDevice(&dev) == cudaSuccess) cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    const int64_t blocks = round_up(coutg, wg_bm[t]) / wg_bm[t] * ((s->n * s->hout * s->wout + wg_bn[t] - 1) / wg_bn[t]);
    return blocks >= sms ? t : -1;
}

extern "C" size_t prt__deform_conv_wgmma_workspace(const prt__dcn_params *p, const prt__dcn_shape *s)
{
    int t, any = 0;
    for (t = 0; t < WG_COUNT; t++) any |= fits(p, s, t);
    if (!any) return 0;
    const size_t xt = (size_t)((s->n * s->h * s->w + 1) * s->cin) * 2; /* with the zero pixel row */
    const size_t a = (size_t)(p->group * round_up(s->cout / p->group, MPAD_ALIGN) * kpad_of(p, s)) * 2;
    return a256(xt) + a256(a) + a256(part_bytes(s)) + 256;
}

extern "C" int prt__deform_conv_wgmma(const prt__dcn_params *p, const prt__dcn_shape *s, int elt, int tile,
                                      const void *x, const void *offset, const void *mask, const void *weight,
                                      const void *bias, void *y, void *workspace, void *stream, char *err, size_t cap)
{
    cudaStream_t st = (cudaStream_t)stream;
    WGeo g;
    memset(&g, 0, sizeof g);
    if (!fits(p, s, tile)) {
        if (err && cap) snprintf(err, cap, "ModulatedDeformConv2d CUDA (wgmma fp16): the shape does not fit tile %d", tile);
        return -1;
    }
    const int64_t G = p->group;
    prt__dcn_cuda_geo_set(&g, p, s);
    g.sc = (int)seg_channels(p, s);
    g.cw = (int)block_channels(g.sc);
    g.kseg = g.sc * g.kk;
    g.kspad = (int)round_up(g.kseg, BK);
    g.kcs = g.kspad / BK;
    g.kpad = (int)kpad_of(p, s);
    g.nch = g.kpad / BK;
    if (s->n == 0 || s->cout == 0 || g.hw == 0) return 0;
    g.mpad = (int)round_up(g.coutg, wg_bm[tile]);
    g.mtiles = g.mpad / wg_bm[tile];
    g.ctiles = (g.ncols + wg_bn[tile] - 1) / wg_bn[tile];
    g.split = split_of(g, G, tile);
    g.cps = (int)round_up((g.nch + g.split - 1) / g.split, wg_ks[tile]); /* nch is a multiple of it */
    g.split = (g.nch + g.cps - 1) / g.cps;
    g.zero = (int)(s->n * g.hw_in * g.cin * 2);
    {
        const char *e = getenv("PRT_DCN_CUDA_WGFLAGS");
        g.flags = e && *e ? atoi(e) : 0;
    }

    char *ws = (char *)(((uintptr_t)workspace + 255) & ~(uintptr_t)255);
    __half *xt = (__half *)ws;
    __half *a = (__half *)(ws + a256((size_t)((s->n * s->h * s->w + 1) * s->cin) * 2));
    float *part = NULL;
    if (g.split > 1)
        part = (float *)((char *)a + a256((size_t)(G * round_up(g.coutg, MPAD_ALIGN) * g.kpad) * 2));
    cudaError_t ce;
    {
        const int pxt = (g.hw_in + 63) / 64, cht = (g.cin + 63) / 64, nxt = (int)(pxt * cht * s->n);
        const int arows = (int)(G * g.mpad * (int64_t)g.kpad / 8);
        wg_prep<<<(unsigned)(nxt + (arows + 255) / 256), 256, 0, st>>>((const __half *)x, xt, (const __half *)weight,
                                                                       a, g, pxt, cht, nxt, arows);
        if ((ce = cudaGetLastError()) != cudaSuccess) return wfail(err, cap, "layout kernel", ce);
    }
    const int64_t blocks = (int64_t)g.mtiles * g.ctiles * g.split * G;
    const size_t smem = tile_smem(tile, g.kk, g.kcs);
    const __half *xo = (const __half *)offset, *xm = (const __half *)mask, *xb = (const __half *)bias;
    __half *yy = (__half *)y;
    switch (tile) {
    case WG_256x128: ce = launch<256, 128, 1, 1>(elt, blocks, smem, st, xt, xo, xm, a, xb, yy, part, g); break;
    case WG_128x128: ce = launch<128, 128, 2, 1>(elt, blocks, smem, st, xt, xo, xm, a, xb, yy, part, g); break;
    case WG_256x128K64: ce = launch<256, 128, 1, 2>(elt, blocks, smem, st, xt, xo, xm, a, xb, yy, part, g); break;
    default: ce = launch<64, 128, 2, 1>(elt, blocks, smem, st, xt, xo, xm, a, xb, yy, part, g); break;
    }
    if (ce != cudaSuccess) return wfail(err, cap, "fused kernel", ce);
    if (part) {
        const int64_t total = (int64_t)g.cout * g.ncols;
        if (elt == PRT_DCN_BF16)
            wg_splitk_sum<1><<<(unsigned)((total + 255) / 256), 256, 0, st>>>(part, xb, yy, g, total);
        else
            wg_splitk_sum<0><<<(unsigned)((total + 255) / 256), 256, 0, st>>>(part, xb, yy, g, total);
        if ((ce = cudaGetLastError()) != cudaSuccess) return wfail(err, cap, "split-K sum kernel", ce);
    }
    return 0;
}
