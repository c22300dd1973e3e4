/*
 * deform_conv/deform_conv_wgmma.cu - ModulatedDeformConv2d as one fused
 * implicit-GEMM kernel on Hopper's warpgroup tensor-core instructions
 * (wgmma.mma_async, sm_90a: compiled only into the file's sm_90a image and
 * run only on devices of compute capability 9.0), in three element types
 * from one kernel body (the template parameter E):
 *  - E = 0 fp16 and E = 1 bfloat16: samples rounded to 16 bits once, 16-bit
 *    MMAs (k16), fp32 accumulation;
 *  - E = 2 fp32, with fp32 accuracy ("3xTF32"): every operand v is split
 *    into two TF32 values, hi = v rounded to TF32 (11 significant bits) and
 *    lo = v - hi (exact in fp32) rounded to TF32, held in two shared-memory
 *    planes, and each product is a_hi*b_hi + a_hi*b_lo + a_lo*b_hi: three
 *    TF32 MMAs (k8) into fp32 accumulators. The dropped a_lo*b_lo and the
 *    rounding of lo leave about 2^-22 of each product, against fp32's 2^-24
 *    rounding of it: the result is within fp32's error class (README.md,
 *    "fp32 on tensor cores", gives the errors measured), unlike plain TF32
 *    (2^-11). A non-finite sample or weight gives NaN (hi - hi is NaN
 *    there), where fp32 arithmetic may give an infinity.
 *
 * Per group g the convolution is the GEMM
 *     y_g[m][col] = bias[m] + sum_k A_g[m][k] * B[k][col]
 * as in deform_conv_fused.cu, with another k order. The group's channels are
 * cut into segments that never cross a deformable group (sc = min(Cg, Cin/dg)
 * channels each; the shapes where neither divides the other are left to the
 * other kernels). Within a segment k runs channel-block-major, tap-minor:
 *     k = (cb * kk + tap) * cw + cc,    channel = segment base + cb * cw + cc
 * with cw = 32, 16 or 8 channels per block (64 in the tile of 64 k per
 * step, where a step is then one tap of 64 channels), so that the kk taps of
 * one block of channels are consecutive chunks of K: they sample one
 * neighbourhood of x, which the corner loads (read-only path, cached in L1)
 * then find in L1.
 * A chunk is 64 bytes of K per row of A and B (32 16-bit k, or 16 fp32 k):
 * its shared-memory layout is the same in every type, four 16-byte runs
 * (8 16-bit or 4 fp32 channels of one tap) per row. Each segment's K is
 * padded with zeros to a multiple of the chunk, so a chunk never holds two
 * deformable groups.
 *
 * Two launches on the caller's stream (three with split-K), no host
 * synchronization:
 *  1. the operands' layouts, in one launch: x [N][Cin][H][W] -> xt
 *     [N*H*W + 1][Cin] (channels-last, in the workspace; the last pixel row
 *     is zero, and every corner whose weight is 0 points at it, so the
 *     corner loads need no predicate and a NaN or Inf in x never meets a
 *     zero weight), and weight -> A [G][Mpad/8][Kpad/R][8][R] (R = 8 16-bit
 *     or 4 fp32 k: blocks of 8 rows of 16 bytes, the shared-memory layout
 *     wgmma reads without swizzle), so that a chunk of A is copied as
 *     contiguous 512-byte runs; fp32 writes A twice, hi and lo;
 *  2. the fused kernel: a block of BM/64 warpgroups owns a BM x BN tile of
 *     y_g (each warpgroup 64 rows, all BN columns) and walks its range of K
 *     in steps of KS chunks. Per block and segment a table in shared
 *     memory holds, for every (tap, column), the four corner byte offsets
 *     into xt and the four mask-scaled bilinear weights (fp32), computed
 *     once; a second table says where each 16-byte run of a segment's
 *     chunks lies (channel, tap). Per step: the warpgroups issue the step's
 *     wgmma (A and B from shared memory, fp32 accumulators in registers)
 *     and, while the tensor cores run, every thread gathers the next step:
 *     per (column, run) item four 16-byte corner loads (all of the thread's
 *     loads of the step first), blended in fp32 and rounded once into the
 *     next B tile (to 16 bits, or split into the two TF32 planes; B rows are
 *     swizzled, 64 or 128 bytes, see gather); two wgmma groups stay
 *     in flight; one barrier per step, after which the A copies (cp.async)
 *     of the step after next are issued, so that they never wait behind the
 *     proxy fence;
 *  3. with split-K (few column tiles): each split writes fp32 partial sums
 *     to the workspace and a last kernel adds them in a fixed order with the
 *     bias and rounds once to the output type (launched as a programmatic
 *     dependent of the fused kernel: its blocks wait for the fused grid).
 * Without split-K the epilogue adds the bias in fp32 and rounds once, into a
 * copy of the tile in the stages' shared memory, from which whole 16-byte
 * runs of y's rows are written (emit_staged; fp32's lean 128x128 form, whose
 * stages are too small, writes from the accumulators).
 *
 * The file also holds the grouped kernel (dcn_grouped, tile WG_GROUPED: at
 * most 32 output channels per group, mma.sync with the samples in
 * registers; see its comment), which shares the operand layouts' launch and
 * the corner table. It and the layout kernels need compute capability 8.0,
 * and the file is also compiled for the build's architectures of 8.0 and
 * above (plugins/deform_conv/CMakeLists.txt), so that they run there;
 * prt__deform_conv_wgmma_tile_available says which kernels the image the
 * driver loaded for the device holds.
 */
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deform_conv.h"
#include "deform_conv_elt.cuh"

/* Device code of the wgmma tiles (sm_90a), and of the grouped and layout
 * kernels (compute capability 8.0 and above: mma.sync, cp.async, cvt to
 * TF32); the other passes compile empty kernel bodies. */
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define DCN_WG_DEVICE 1
#else
#define DCN_WG_DEVICE 0
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define DCN_GR_DEVICE 1
#else
#define DCN_GR_DEVICE 0
#endif

/* Programmatic dependent launch (compute capability 9.0): the fused and
 * grouped kernels are launched as dependents of the layout kernel
 * (launch_dep), which lets them start as soon as every layout block has
 * begun; each builds its corner table (offsets and mask only: inputs the
 * layout kernel's own start already waited for) and then waits, in
 * dep_wait, until the layout kernel has finished and its xt and A are
 * visible, before the first read of either. The split-K sum kernels are
 * dependents of the fused kernel in the same way: it calls dep_launch once
 * its first tile has waited, and they wait in dep_wait for its partial sums.
 * Both are no-ops in a launch without the attribute and on older devices. */
__device__ __forceinline__ void dep_launch()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ __forceinline__ void dep_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

namespace {

constexpr int CB = 64;      /* bytes of one chunk per row of A or B */
constexpr int ASTAGES = 4;  /* A chunks in shared memory (16-bit, one chunk per step, early copies) */
constexpr int BSTAGES = 3;  /* B chunks in shared memory */
constexpr int64_t SPLIT_BYTES = (int64_t)16 << 20; /* the split-K partial sums' workspace */
constexpr int MAX_SPLIT = 8;
/* fp32: k between two flushes of the tensor cores' accumulators into the
 * destination (README.md, "fp32 on tensor cores"). */
constexpr int64_t FLUSH_K = 576;

/* The element types: E 0 fp16, 1 bfloat16 (16-bit storage, held as
 * __half-sized raw values), 2 fp32 as two TF32 planes. */
template <int E> struct Et {
    static constexpr int sz = E == 2 ? 4 : 2;      /* bytes per element */
    static constexpr int run = 16 / sz;            /* channels per 16-byte run */
    static constexpr int planes = E == 2 ? 2 : 1;  /* A and B planes */
};

struct WGeo : prt__dcn_cuda_geo {
    int sc, cw, kseg, kspad, kcs, kpad, nch; /* segments: see the file comment */
    int mpad, mtiles, ctiles, split, cps;    /* cps: chunks per split */
    int zero;                                /* byte offset of xt's zero pixel row */
    int flush; /* fp32: steps between flushes of the accumulators (0: none; see the kernel) */
    int gl;    /* A in the grouped kernel's layout (dcn_grouped), and its groups per block */
    int flags; /* PRT_DCN_CUDA_WGFLAGS (benchmarks): bit 0, A copies before the fence (16-bit, one chunk per
                * step); bit 1, fp32 128x128 in its three-stage form; bit 2, no persistent form; bit 3, no
                * staging of the next tile's offsets; bit 4, no staging of the next segment's (SST) */
    int ntiles;  /* tiles (mtiles ctiles split groups); the persistent grid is smaller */
    int stage;   /* the persistent form copies the next tile's offsets and mask into shared memory (stage_next) */
    int gridcap; /* PRT_DCN_CUDA_WGGRID (tests): the persistent grid's blocks, where fewer than the tiles */
    int th, lth, lhr; /* the strips form's column order (col_place): strips of th = 2^lth output rows, an
                       * image's last hout % th = 2^lhr rows where not 0; th 1: row-major */
};

/* One (tap, column) entry of the corner table: the four corners' byte
 * offsets into xt (channel 0; the zero pixel row where the weight is 0) and
 * the mask-scaled bilinear weights. The table is held as two planes, the
 * offsets [tap][BN] then the weights [tap][BN], 16 bytes an entry each, so
 * that a quarter-warp writing 8 consecutive entries fills one 128-byte line
 * of each plane (entries of 32 bytes met two threads a bank group). */
struct Corner {
    int4 off;
    float4 wt;
};

/* Where 16-byte run q of chunk j of a segment lies: its channel within
 * the segment (-1: K padding) and its tap's row of the corner table's
 * offset plane (tap * BN * 16 bytes). */
struct RunInfo {
    int c, row;
};

/* Element i of a tensor of type E, as fp32. */
template <int E> __device__ __forceinline__ float ldf(const void *p, size_t i)
{
    if constexpr (E == 2) return ((const float *)p)[i];
    else return e2f<E>(((const __half *)p)[i]);
}

/* Element i := v, and elements i, i + 1 := a, b (i even, 4- or 8-byte
 * aligned), rounded to the type once. */
template <int E> __device__ __forceinline__ void stf(void *p, size_t i, float v)
{
    if constexpr (E == 2) ((float *)p)[i] = v;
    else ((__half *)p)[i] = f2e<E>(v);
}
template <int E> __device__ __forceinline__ void stf2(void *p, size_t i, float a, float b)
{
    if constexpr (E == 2) *(float2 *)((float *)p + i) = make_float2(a, b);
    else *(uint32_t *)((__half *)p + i) = f2e2<E>(a, b);
}

/* v rounded to the nearest TF32 value (ties away from zero), as an fp32
 * bit pattern whose low 13 bits are zero: what the tensor cores read. */
__device__ __forceinline__ uint32_t tf32_bits(float v)
{
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(v));
    return r & 0xffffe000u;
}

/* v = hi + lo, each a TF32 value (see the file comment). */
__device__ __forceinline__ void tf32_split(float v, uint32_t &hi, uint32_t &lo)
{
    hi = tf32_bits(v);
    lo = tf32_bits(v - __uint_as_float(hi));
}

/* ---- layout kernels ---------------------------------------------------- */

/* x [N][C][HW] -> xt [N][HW][C] for elements of T (2 or 4 bytes; C a
 * multiple of 8), in tiles of 64 channels x 64 pixels: 16-byte loads of
 * V = 16 / sizeof(T) pixels (when HW is a multiple of V) and 16-byte stores
 * of V channels, each pixel's 64 channels written as one run. The tile is
 * kept as rows of 64 pixels (one per channel) whose 16-byte granules are
 * swizzled by channel / V, so that a quarter warp's loads land in distinct
 * 16-byte slots and the stores' reads of V channels of one pixel in
 * distinct banks (fp32: two-way at most). */
template <typename T>
__device__ __forceinline__ void nchw_to_nhwc_tile(const T *__restrict__ x, T *__restrict__ xt, int c, int hw, int n,
                                                  int p0, int c0, int tid)
{
    constexpr int V = 16 / (int)sizeof(T), G = 64 / V; /* elements per granule, granules per row */
    __shared__ __align__(16) T t[64 * 64];
    const T *xs = x + (size_t)n * c * hw;
    T *xd = xt + (size_t)n * c * hw;
    const int vec = hw % V == 0;
#pragma unroll
    for (int i = 0; i < 16 / V; i++) {
        const int ch = tid / G + 256 / G * i, seg = tid % G;
        const int cc = c0 + ch, pp = p0 + seg * V;
        uint4 v = make_uint4(0, 0, 0, 0);
        if (cc < c) {
            if (vec && pp + V <= hw) {
                v = __ldg((const uint4 *)(xs + (size_t)cc * hw + pp));
            } else {
                T *h = (T *)&v;
                for (int e = 0; e < V; e++)
                    if (pp + e < hw) h[e] = xs[(size_t)cc * hw + pp + e];
            }
        }
        *(uint4 *)&t[ch * 64 + ((seg ^ (ch / V)) % G) * V] = v;
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < 16 / V; i++) {
        const int it = tid + 256 * i, cs = it % G, px = it / G;
        const int pp = p0 + px, cc = c0 + cs * V;
        if (pp >= hw || cc >= c) continue;
        uint4 v;
        T *h = (T *)&v;
#pragma unroll
        for (int e = 0; e < V; e++) h[e] = t[(cs * V + e) * 64 + (((px / V) ^ cs) % G) * V + px % V];
        *(uint4 *)(xd + (size_t)pp * c + cc) = v;
    }
}

/* 16-byte unit idx of A (and of a2, fp32's lo plane): the R channels at
 * weight[src + e kk] (e < R), or zeros where !live. */
template <int E>
__device__ __forceinline__ void store_weight_unit(const void *__restrict__ w, size_t src, int kk, int live,
                                                  void *__restrict__ a, void *__restrict__ a2, int idx)
{
    uint4 v = make_uint4(0, 0, 0, 0), v2 = v;
    if (live) {
        if constexpr (E == 2) {
#pragma unroll
            for (int e = 0; e < 4; e++) tf32_split(((const float *)w)[src + e * kk], (&v.x)[e], (&v2.x)[e]);
        } else {
            __half *h = (__half *)&v;
#pragma unroll
            for (int e = 0; e < 8; e++) h[e] = ((const __half *)w)[src + e * kk];
        }
    }
    *(uint4 *)((char *)a + (size_t)idx * 16) = v;
    if constexpr (Et<E>::planes == 2) *(uint4 *)((char *)a2 + (size_t)idx * 16) = v2; /* the lo plane */
}

/* weight [G*coutg][cg][kk] -> A [G][mpad/8][kpad/R][8][R] in the segment k
 * order, zeros outside (fp32: the hi plane at a, the lo plane at a2). One
 * thread per 16-byte row of an 8-row block: one output channel, R
 * consecutive k, which are R channels of one tap. */
template <int E>
__device__ __forceinline__ void pack_weights_row(const void *__restrict__ w, void *__restrict__ a,
                                                 void *__restrict__ a2, const WGeo &g, int idx)
{
    constexpr int R = Et<E>::run;
    const int r8 = idx & 7, rest = idx >> 3, kbr = g.kpad / R, mb8 = g.mpad / 8;
    const int kb = rest % kbr, r2 = rest / kbr;
    const int mb = r2 % mb8, grp = r2 / mb8;
    const int m = mb * 8 + r8, k = kb * R;
    const int seg = k / g.kspad, kl = k - seg * g.kspad;
    size_t src = 0;
    const int live = m < g.coutg && kl < g.kseg;
    if (live) {
        const int cb = kl / (g.kk * g.cw), rem = kl - cb * g.kk * g.cw;
        const int tap = rem / g.cw, cc = rem - tap * g.cw;
        src = ((size_t)(grp * g.coutg + m) * g.cg + seg * g.sc + cb * g.cw + cc) * g.kk + tap;
    }
    store_weight_unit<E>(w, src, g.kk, live, a, a2, idx);
}

/* The grouped kernel's blocks of 8 output channels (its template NJ): 1, 2 or 4. */
__host__ __device__ __forceinline__ int gr_nj(int coutg) { return coutg <= 8 ? 1 : coutg <= 16 ? 2 : 4; }

/* weight [G*coutg][cg][kk] -> A of the grouped kernel (dcn_grouped):
 * [G][chunk][j][32 lanes] units of 16 bytes; the unit of lane l holds, for
 * output channel 8 j + l / 4 of the group, the 8 channels of run 4 chunk +
 * l % 4 (run r: tap r / (cg / 8), channels (r % (cg / 8)) * 8 ..), zeros
 * outside. */
template <int E>
__device__ __forceinline__ void pack_grouped_unit(const void *__restrict__ w, void *__restrict__ a,
                                                  void *__restrict__ a2, const WGeo &g, int idx)
{
    constexpr int R = Et<E>::run;
    const int nj = gr_nj(g.coutg), rpt = g.cg / R, nruns = g.kk * rpt, nchunks = (nruns + 3) / 4;
    const int lane = idx & 31, rest = idx >> 5, j = rest % nj, r2 = rest / nj;
    const int c = r2 % nchunks, grp = r2 / nchunks;
    const int oc = 8 * j + (lane >> 2), run = 4 * c + (lane & 3);
    size_t src = 0;
    const int live = oc < g.coutg && run < nruns;
    if (live) {
        const int tap = run / rpt, cb = run - tap * rpt;
        src = ((size_t)(grp * g.coutg + oc) * g.cg + cb * R) * g.kk + tap;
    }
    store_weight_unit<E>(w, src, g.kk, live, a, a2, idx);
}

/* The operands' layouts in one launch: blocks [0, nxt) transpose x (block
 * b: pixel tile b % pxt, channel tile b / pxt % cht, image b / (pxt * cht)),
 * the others pack 256 rows of A each; block 0 also zeroes xt's zero row. */
template <int E>
__global__ void __launch_bounds__(256) wg_prep(const void *__restrict__ x, void *__restrict__ xt,
                                               const void *__restrict__ w, void *__restrict__ a,
                                               void *__restrict__ a2, WGeo g, int pxt, int cht, int nxt, int arows)
{
    const int b = blockIdx.x, tid = threadIdx.x;
    dep_launch();
    if (b == 0)
        for (int i = tid; i < g.cin * Et<E>::sz / 16; i += 256)
            *(uint4 *)((char *)xt + g.zero + i * 16) = make_uint4(0, 0, 0, 0);
    if (b < nxt) {
        const int n = b / (pxt * cht), p0 = b % pxt * 64, c0 = b / pxt % cht * 64;
        if constexpr (E == 2) nchw_to_nhwc_tile<float>((const float *)x, (float *)xt, g.cin, g.hw_in, n, p0, c0, tid);
        else nchw_to_nhwc_tile<__half>((const __half *)x, (__half *)xt, g.cin, g.hw_in, n, p0, c0, tid);
        return;
    }
    const int idx = (b - nxt) * 256 + tid;
    if (idx >= arows) return;
    if (g.gl) pack_grouped_unit<E>(w, a, a2, g, idx);
    else pack_weights_row<E>(w, a, a2, g, idx);
}

/* Split-K: y = bias + sum over the splits of the fp32 partial sums, in
 * split order, rounded to the type once. part [split][cout][ncols]. */
template <int E>
__global__ void wg_splitk_sum(const float *__restrict__ part, const void *__restrict__ bias, void *__restrict__ y,
                              WGeo g, int64_t total)
{
    dep_wait(); /* the fused kernel's partial sums (dep_launch) */
    const int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= total) return;
    const int col = (int)(idx % g.ncols), oc = (int)(idx / g.ncols);
    float s = bias ? ldf<E>(bias, oc) : 0.f;
    for (int i = 0; i < g.split; i++) s += part[(int64_t)i * total + idx];
    const int n = col / g.hw, pos = col - n * g.hw;
    stf<E>(y, ((size_t)n * g.cout + oc) * g.hw + pos, s);
}

/* fp32 split-K: y = bias + sum over the splits, in split order, of the
 * partial sums the fused kernel left in its accumulators' order:
 * part[r][block * NT + thread] (see the kernel), for a BM x BN tile of NT =
 * 2 BM threads. One thread per output element. */
__global__ void wg_splitk_sum_f32(const float *__restrict__ part, const void *__restrict__ bias, void *__restrict__ y,
                                  WGeo g, int64_t total, int bm, int bn)
{
    dep_wait(); /* the fused kernel's partial sums (dep_launch) */
    const int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= total) return;
    const int col = (int)(idx % g.ncols), oc = (int)(idx / g.ncols);
    const int grp = oc / g.coutg, m = oc - grp * g.coutg;
    const int mtile = m / bm, row = m - mtile * bm, ctile = col / bn, cl = col - ctile * bn;
    const int tid = (row >> 6) * 128 + ((row >> 4) & 3) * 32 + (row & 7) * 4 + ((cl >> 1) & 3);
    const int r = 4 * (cl >> 3) + 2 * ((row >> 3) & 1) + (cl & 1);
    const int nt = 2 * bm;
    const size_t ntot = (size_t)g.mtiles * g.ctiles * g.split * (g.cin / g.cg) * nt;
    float s = bias ? ((const float *)bias)[oc] : 0.f;
    for (int i = 0; i < g.split; i++) {
        const size_t blk = (((size_t)grp * g.split + i) * g.ctiles + ctile) * g.mtiles + mtile;
        s += part[(size_t)r * ntot + blk * nt + tid];
    }
    const int n = col / g.hw, pos = col - n * g.hw;
    ((float *)y)[((size_t)n * g.cout + oc) * g.hw + pos] = s;
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

/* Shared-memory matrix descriptor, K-major. swz 0 (A): no swizzle, blocks
 * of 8 rows of 16 bytes (128 bytes each); lbo: bytes between the blocks
 * adjacent in K, sbo: between the blocks adjacent in M (or N). swz 1 and 2
 * (B): rows of 128 or 64 bytes of K, the 16-byte units of a row permuted by
 * the 128-byte (1) or 64-byte (2) swizzle, groups of 8 rows sbo bytes apart
 * (lbo unused). */
__device__ __forceinline__ uint64_t smem_desc(uint32_t addr, uint32_t lbo, uint32_t sbo, uint32_t swz = 0)
{
    return (uint64_t)((addr >> 4) & 0x3fff) | ((uint64_t)((lbo >> 4) & 0x3fff) << 16) |
           ((uint64_t)((sbo >> 4) & 0x3fff) << 32) | ((uint64_t)swz << 62);
}

/* D[64 x 128] (+)= A[64 x 32 bytes of K] * B[32 bytes of K x 128], both
 * operands K-major in shared memory, fp32 accumulators: SHAPE and TY are
 * the instruction's k and operand type (k16 f16 or bf16, k8 tf32), TAIL
 * its immediates (TF32 takes no transpose flags), SD 0 to overwrite D
 * rather than add to it. */
#define DCN_WGMMA_M64N128(SHAPE, TY, TAIL, DA, DB, SD) \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n" \
                 "wgmma.mma_async.sync.aligned.m64n128" SHAPE ".f32." TY "." TY " {" \
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
                 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
                 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63" \
                 "}, %64, %65, p, 1, 1" TAIL ";\n}\n" \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
                   "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
                   "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
                   "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
                   "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
                   "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
                   "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]) \
                 : "l"(DA), "l"(DB), "r"(SD))

/* One 32-byte slice of K: fp16 or bfloat16 k16, or for fp32 the three TF32
 * k8 products of the split operands (hi and lo planes pl_a, pl_b bytes
 * apart, as descriptor units: / 16). */
template <int E, int N>
__device__ __forceinline__ void wgmma_slice(float (&d)[N / 2], uint64_t da, uint64_t db, uint32_t pl_a, uint32_t pl_b)
{
    static_assert(N == 128, "the m64n128 shape");
    if constexpr (E == 2) {
        const uint64_t dal = da + pl_a, dbl = db + pl_b;
        DCN_WGMMA_M64N128("k8", "tf32", "", dal, db, 1); /* the small products first */
        DCN_WGMMA_M64N128("k8", "tf32", "", da, dbl, 1);
        DCN_WGMMA_M64N128("k8", "tf32", "", da, db, 1);
    } else if constexpr (E == 1) {
        DCN_WGMMA_M64N128("k16", "bf16", ", 0, 0", da, db, 1);
    } else {
        DCN_WGMMA_M64N128("k16", "f16", ", 0, 0", da, db, 1);
    }
}
#undef DCN_WGMMA_M64N128
#endif /* DCN_WG_DEVICE */

/* floor(log2(v)) for v >= 1: the host's strip heights (g.lth, g.lhr) and
 * the device's tile widths (a constant there). */
constexpr int ilog2(int v)
{
    int l = 0;
    while ((1 << (l + 1)) <= v) l++;
    return l;
}

#if DCN_GR_DEVICE
/* The deformable group of segment seg of group grp (its first channel's). */
__device__ __forceinline__ int dgroup_of(const WGeo &g, int grp, int seg)
{
    return g.dg == 1 ? 0 : (grp * g.cg + seg * g.sc) / g.cpd;
}

#if DCN_WG_DEVICE
/* Where tile t lies: its row tile, column tile, split of K and group, in
 * the order the wgmma kernel's grid takes them. */
struct TileAt {
    int mtile, ctile, split, grp;
};
__device__ __forceinline__ TileAt tile_at(const WGeo &g, int t)
{
    TileAt a;
    a.mtile = t % g.mtiles;
    t /= g.mtiles;
    a.ctile = t % g.ctiles;
    t /= g.ctiles;
    a.split = t % g.split;
    a.grp = t / g.split;
    return a;
}
#endif

/* The output position of column col: image n, position pos = oy wout + ox
 * in it, row oy, column ox. Row-major (ST false): col = n hw + pos. With ST
 * (the strips form of the 64-k tile, where strip_rows finds every strip of
 * an image whole tiles) an image's rows are cut into strips of th rows (its
 * last strip may have fewer, a power of two), each strip into patches of
 * rows x 2^lbn / rows positions side by side, and a tile of 2^lbn columns
 * is one patch, its columns row-major within it: the input pixels a tile's
 * corners sample (the gather's L1 footprint) are then those around a patch
 * rather than a run of one or two output rows, and a run of 8 columns is
 * still 8 neighbours in one row of y (bench/NOTES-gpu.md, v30). */
/* log2 of the rows of the strip whose first row is oy0: th, or an image's
 * last strip's hout % th (strip_ok: a power of two). */
__device__ __forceinline__ int strip_lrows(const WGeo &g, int oy0) { return oy0 + g.th <= g.hout ? g.lth : g.lhr; }

template <bool ST>
__device__ __forceinline__ void col_place(const WGeo &g, int col, int lbn, int &n, int &pos, int &oy, int &ox)
{
    n = col / g.hw;
    pos = col - n * g.hw;
    if (ST) {
        const int sw = g.th * g.wout, s = pos / sw, q = pos - s * sw;
        const int lw = lbn - strip_lrows(g, s * g.th);      /* the patch's columns, log2 */
        const int pc = q >> lbn, cl = q & ((1 << lbn) - 1); /* patch, column in it */
        oy = s * g.th + (cl >> lw);
        ox = (pc << lw) + (cl & ((1 << lw) - 1));
        pos = oy * g.wout + ox;
    } else {
        oy = pos / g.wout;
        ox = pos - oy * g.wout;
    }
}

#if DCN_WG_DEVICE
/* The patch of the tile whose first column is c0 (2^lbn columns; strips):
 * its image, first row and column, and log2 of its columns. */
struct Patch {
    int n, oy0, ox0, lw;
};
__device__ __forceinline__ Patch patch_at(const WGeo &g, int c0, int lbn)
{
    Patch p;
    int pos;
    col_place<true>(g, c0, lbn, p.n, pos, p.oy0, p.ox0);
    p.lw = lbn - strip_lrows(g, p.oy0);
    return p;
}
/* Position (oy wout + ox) in its image of the patch's column cl. */
__device__ __forceinline__ int patch_pos(const WGeo &g, const Patch &p, int cl)
{
    return (p.oy0 + (cl >> p.lw)) * g.wout + p.ox0 + (cl & ((1 << p.lw) - 1));
}
#endif

/* Corner table of segment `seg` for the block's BN columns: entry
 * tap * BN + column. The sampling point is the integer grid position plus
 * the offset's floor, the bilinear fractions come from the offset alone, as
 * in the CPU path and the other kernels. Thread tid takes column tid % BN
 * (its image and output position worked out once) and the taps tid / BN +
 * u NT / BN, TB at a time, all of a batch's offset and mask loads issued
 * before the first is used: the table is built at the start of every tile,
 * where its round trips to memory and its divisions are paid in full (F:
 * 1152 entries over 512 threads; built an entry at a time, with divisions
 * for each, it took 3.4-3.5 us of a 67-72 us tile, traced). */
template <int E, int BN, int NT, bool STG = false, bool ST = false>
__device__ __forceinline__ void build_table(unsigned char *tab, const WGeo &g, const void *__restrict__ off,
                                            const void *__restrict__ mask, int grp, int seg, int c0, int tid,
                                            const __half *stg = nullptr)
{
    static_assert(NT % BN == 0, "whole columns per thread group");
    constexpr int TB = 4, TS = NT / BN; /* taps per batch, taps in parallel */
    int4 *toff = (int4 *)tab;
    float4 *twt = (float4 *)(tab + (size_t)g.kk * BN * sizeof(int4));
    const int d = dgroup_of(g, grp, seg);
    const int cl = tid % BN, col = c0 + cl;
    const bool live = col < g.ncols;
    int n = 0, pos = 0, oy = 0, ox = 0;
    if (live) {
        col_place<ST>(g, col, ilog2(BN), n, pos, oy, ox);
    }
    const size_t ob = (size_t)(n * g.dg + d) * 2 * g.kk * g.hw + pos; /* dy of tap t at ob + 2 t hw */
    const size_t mb = (size_t)(n * g.dg + d) * g.kk * g.hw + pos;
    const int base = n * g.hw_in, rb = g.cin * Et<E>::sz;
    for (int t0 = tid / BN; t0 < g.kk; t0 += TB * TS) {
        float dy[TB], dx[TB], m[TB];
#pragma unroll
        for (int u = 0; u < TB; u++) {
            const int tap = t0 + u * TS;
            dy[u] = dx[u] = m[u] = 0.f;
            if (STG) { /* copied by stage_next or stage_cols (a dead column's entries are not, nor used) */
                if (tap < g.kk) {
                    dy[u] = e2f<E>(stg[(2 * tap) * BN + cl]);
                    dx[u] = e2f<E>(stg[(2 * tap + 1) * BN + cl]);
                    m[u] = e2f<E>(stg[(2 * g.kk + tap) * BN + cl]);
                }
            } else if (live && tap < g.kk) {
                dy[u] = ldf<E>(off, ob + (size_t)(2 * tap) * g.hw);
                dx[u] = ldf<E>(off, ob + (size_t)(2 * tap + 1) * g.hw);
                m[u] = ldf<E>(mask, mb + (size_t)tap * g.hw);
            }
        }
#pragma unroll
        for (int u = 0; u < TB; u++) {
            const int tap = t0 + u * TS;
            if (tap >= g.kk) break;
            Corner c;
            c.off = make_int4(g.zero, g.zero, g.zero, g.zero);
            c.wt = make_float4(0.f, 0.f, 0.f, 0.f);
            /* |offset| >= 2^26 is outside any image this path accepts; false
             * for NaN and Inf too, which sample 0 */
            if (live && fabsf(dy[u]) < 67108864.f && fabsf(dx[u]) < 67108864.f) {
                const int i = tap / g.kw, j = tap - i * g.kw;
                const int by = oy * g.sh - g.ph + i * g.dh, bx = ox * g.sw - g.pw + j * g.dw;
                const float fy = floorf(dy[u]), fx = floorf(dx[u]);
                const float lh = dy[u] - fy, lw = dx[u] - fx;
                const int h0 = by + (int)fy, x0 = bx + (int)fx;
                const float mu = m[u];
                /* inside unless py <= -1, py >= H, px <= -1 or px >= W */
                if ((h0 >= 0 || (h0 == -1 && lh > 0.f)) && h0 < g.h && (x0 >= 0 || (x0 == -1 && lw > 0.f)) &&
                    x0 < g.w) {
                    if (h0 >= 0 && x0 >= 0) {
                        c.off.x = (base + h0 * g.w + x0) * rb;
                        c.wt.x = mu * (1.f - lh) * (1.f - lw);
                    }
                    if (h0 >= 0 && x0 + 1 < g.w) {
                        c.off.y = (base + h0 * g.w + x0 + 1) * rb;
                        c.wt.y = mu * (1.f - lh) * lw;
                    }
                    if (h0 + 1 < g.h && x0 >= 0) {
                        c.off.z = (base + (h0 + 1) * g.w + x0) * rb;
                        c.wt.z = mu * lh * (1.f - lw);
                    }
                    if (h0 + 1 < g.h && x0 + 1 < g.w) {
                        c.off.w = (base + (h0 + 1) * g.w + x0 + 1) * rb;
                        c.wt.w = mu * lh * lw;
                    }
                }
            }
            toff[tap * BN + cl] = c.off;
            twt[tap * BN + cl] = c.wt;
        }
    }
}

#if DCN_WG_DEVICE
/* Copies (cp.async, 16 bytes a thread, the caller commits) the offsets and
 * mask of tile `tile`'s columns, of its first segment's deformable group,
 * into stg: rows [0, 2 kk) the offset planes, [2 kk, 3 kk) the mask planes,
 * BN 16-bit elements each, the tile's columns in their order. The host sets
 * g.stage only where a tile's columns lie in one image (hw % BN == 0) and
 * both tensors are 16-byte aligned, so every row is BN whole elements on
 * 16-byte boundaries; with strips (ST) a patch's rows are multiples of 8
 * columns at multiples of 8 in rows of wout, a multiple of 8 (strip_ok), so
 * each 16-byte piece is 8 consecutive positions of one row. */
template <int E, int BN, int NT, bool ST>
__device__ __forceinline__ void stage_next(__half *stg, const WGeo &g, const void *__restrict__ off,
                                           const void *__restrict__ mask, int tile, int tid)
{
    static_assert(E != 2, "16-bit offsets");
    constexpr int PR = BN * 2 / 16; /* 16-byte pieces per row */
    const TileAt at = tile_at(g, tile);
    const int d = dgroup_of(g, at.grp, at.split * g.cps / g.kcs);
    const int c0 = at.ctile * BN, n = c0 / g.hw, pos = c0 - n * g.hw;
    Patch pt;
    if (ST) pt = patch_at(g, c0, ilog2(BN));
    const size_t nd = (size_t)(n * g.dg + d) * g.kk;
    for (int e = tid; e < 3 * g.kk * PR; e += NT) {
        const int row = e / PR, u = e - row * PR;
        /* the piece's first column: row-major, u 8 columns on; strips, in its row of the patch */
        const int pu = ST ? patch_pos(g, pt, u * 8) : pos;
        const __half *src = row < 2 * g.kk ? (const __half *)off + (2 * nd + row) * g.hw + pu
                                           : (const __half *)mask + (nd + row - 2 * g.kk) * g.hw + pu;
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(stg + row * BN) + u * 16),
                     "l"((const char *)src + (ST ? 0 : u * 16)));
    }
}
#endif

#if DCN_WG_DEVICE
/* Copies (cp.async, 16 bytes a thread, the caller commits) the offsets and
 * mask of columns [c0, c0 + BN) of segment seg of group grp (its
 * deformable group's) into stg, in stage_next's rows. Each 16-byte piece is
 * 8 columns of one image, so tiles may cross images: the host copies only
 * where an image's columns are a multiple of 8 and both tensors are 16-byte
 * aligned. Pieces past the last column are not copied; build_table does
 * not use a dead column's entries. */
template <int E, int BN, int NT>
__device__ __forceinline__ void stage_cols(__half *stg, const WGeo &g, const void *__restrict__ off,
                                           const void *__restrict__ mask, int grp, int seg, int c0, int tid)
{
    static_assert(E != 2, "16-bit offsets");
    constexpr int PR = BN * 2 / 16; /* 16-byte pieces per row */
    const int d = dgroup_of(g, grp, seg);
    for (int e = tid; e < 3 * g.kk * PR; e += NT) {
        const int row = e / PR, u = e - row * PR, col = c0 + u * 8;
        if (col >= g.ncols) continue;
        const int n = col / g.hw, pos = col - n * g.hw;
        const size_t nd = (size_t)(n * g.dg + d) * g.kk;
        const __half *src = row < 2 * g.kk ? (const __half *)off + (2 * nd + row) * g.hw + pos
                                           : (const __half *)mask + (nd + row - 2 * g.kk) * g.hw + pos;
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(stg + row * BN) + u * 16),
                     "l"(src));
    }
}
#endif

/* Blend four corner runs in fp32: 16-bit runs (8 channels) rounded to 16
 * bits once into *o; fp32 runs (4 channels) split into the TF32 planes *o
 * (hi) and *o2 (lo). */
template <int E>
__device__ __forceinline__ void blend4(const uint4 r0, const uint4 r1, const uint4 r2, const uint4 r3, const float4 w,
                                       uint4 *o, uint4 *o2)
{
    if constexpr (E == 2) {
#pragma unroll
        for (int e = 0; e < 4; e++) {
            float v = w.x * __uint_as_float((&r0.x)[e]);
            v = fmaf(w.y, __uint_as_float((&r1.x)[e]), v);
            v = fmaf(w.z, __uint_as_float((&r2.x)[e]), v);
            v = fmaf(w.w, __uint_as_float((&r3.x)[e]), v);
            tf32_split(v, (&o->x)[e], (&o2->x)[e]);
        }
    } else {
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const float2 fa = e2f2<E>((&r0.x)[e]), fb = e2f2<E>((&r1.x)[e]), fc = e2f2<E>((&r2.x)[e]),
                         fd = e2f2<E>((&r3.x)[e]);
            float v0 = w.x * fa.x, v1 = w.x * fa.y;
            v0 = fmaf(w.y, fb.x, v0);
            v1 = fmaf(w.y, fb.y, v1);
            v0 = fmaf(w.z, fc.x, v0);
            v1 = fmaf(w.z, fc.y, v1);
            v0 = fmaf(w.w, fd.x, v0);
            v1 = fmaf(w.w, fd.y, v1);
            (&o->x)[e] = f2e2<E>(v0, v1);
        }
    }
}

#endif /* DCN_GR_DEVICE */

#if DCN_WG_DEVICE
/* The run table of one segment's chunks (all segments share it): entry
 * 4 j + q for run q of chunk j, R = Et<E>::run channels each; row is the
 * byte offset of the run's tap in the corner table's offset plane. */
template <int E, int BN, int NT> __device__ __forceinline__ void build_runs(RunInfo *runs, const WGeo &g, int tid)
{
    for (int e = tid; e < g.kcs * 4; e += NT) {
        const int kl = e * Et<E>::run;
        RunInfo r;
        r.c = -1;
        r.row = 0;
        if (kl < g.kseg) {
            const int cb = kl / (g.kk * g.cw), rem = kl - cb * g.kk * g.cw;
            const int tap = rem / g.cw;
            r.c = cb * g.cw + rem - tap * g.cw;
            r.row = tap * BN * (int)sizeof(int4);
        }
        runs[e] = r;
    }
}

/* Gather and blend one step (KS chunks) into a B tile; fp32's lo plane is
 * PL_B bytes after it. The tile is row-major, one row of 64 KS bytes per
 * column (the step's K), in groups of 8 rows, with the 16-byte units of a
 * row permuted by the swizzle wgmma reads (descriptor in the kernel):
 *  - KS 1, rows of 64 bytes, 64-byte swizzle: unit q of row cl at
 *    (cl / 8) * 512 + (cl % 8) * 64 + (q ^ (cl / 2 % 4)) * 16;
 *  - KS 2, rows of 128 bytes, 128-byte swizzle: unit r of row cl at
 *    (cl / 8) * 1024 + (cl % 8) * 128 + (r ^ (cl % 8)) * 16.
 * A thread blends one run (16 bytes of K) of every column it takes, the
 * same run of the step for all of them: tab, the corner table's offset
 * plane at the run's tap (the weights wpl bytes further); xs, xt at the
 * run's channel (bytes); live, 0 in the K padding.
 *
 * Which thread takes which (column, run) is chosen for the L1 data path,
 * whose wavefronts bound this kernel (ncu, case F). Per quarter-warp (8
 * threads) a 16-byte load costs about a wavefront per 128-byte line it
 * touches, and a 16-byte store a wavefront per thread that shares a bank
 * group. Without swizzle (the unit of a column for k block q sat at q * 128
 * + (cl % 8) * 16, its bank set given by the column alone) a quarter-warp
 * of 2 columns x 4 runs stored 4 threads a bank group (measured 15.5
 * wavefronts per warp store, 4 the least) and no mapping avoided both
 * costs; the swizzles spread a row's units over the banks:
 *  - KS 1: a quarter-warp takes 2 neighbouring columns x the chunk's 4 runs
 *    (lane % 4 the run), two adjacent 64-byte rows: stores without
 *    conflict, and each corner load 2 lines (64 bytes of each where the
 *    chunk's 4 runs are one tap's channels);
 *  - KS 2 with 64-channel blocks (a step is one tap of 64 channels, the 8
 *    runs of a column one 128-byte line of xt): a quarter-warp takes one
 *    column x the step's 8 runs (lane % 8): each corner load 1 line, the
 *    stores one row, without conflict. */
template <int E, int BN, int NT, int KS>
__device__ __forceinline__ void gather(unsigned char *sb, const unsigned char *tab, const char *xs, int live, int wpl,
                                       int tid)
{
    static_assert(KS == 1 || KS == 2, "one chunk per step, or two");
    constexpr int PL_B = BN * CB * KS;
    constexpr int ITEMS = BN * 4 * KS / NT; /* columns per thread, the same run of each */
    /* columns whose loads are all issued before one is blended: all of the 64-k tile's (two, 8 loads);
     * two for the 32-k 16-bit tiles of 128 and 64 rows (two and four columns a thread), whose
     * registers hold them (bench/NOTES-gpu.md, v27); one for fp32 */
    constexpr int BATCH = KS == 2 ? ITEMS : E != 2 && ITEMS % 2 == 0 ? 2 : 1;
    static_assert(KS == 1 || ITEMS % 2 == 0, "KS 2: an even number of columns per thread");
    /* Item i's column cl and its unit's byte offset in the tile, from the
     * thread's first (cl0, d0) and offsets that are constants in i:
     *  - KS 1: cl = tid / 4 + i NT / 4; NT / 4 is a multiple of 8, so cl % 8
     *    and the swizzle are the same for every i: d = d0 + i NT 16;
     *  - KS 2: cl = (warp ITEMS + i) 4 + q (q = lane / 8 < 4, ITEMS even):
     *    cl / 8 = warp ITEMS / 2 + i / 2 and cl % 8 = (i % 2) 4 + q, so with
     *    d0 the offset for i = 0 (bit 9 clear), d = (d0 + 512 i) ^ ((i % 2) << 6).
     * Written so, the compiler keeps two values instead of rebuilding each
     * item's address from tid every step. */
    const int lane = tid & 31, warp = tid >> 5, r = KS == 2 ? lane & 7 : lane & 3, q = lane >> 3;
    const int cl0 = KS == 2 ? warp * ITEMS * 4 + q : tid >> 2;
    const int d0 = KS == 2 ? warp * ITEMS * 512 + q * 128 + ((r ^ q) << 4)
                           : (cl0 >> 3) * 512 + (cl0 & 7) * 64 + ((r ^ ((cl0 >> 1) & 3)) << 4);
    const unsigned char *tc = tab + cl0 * 16;
#pragma unroll
    for (int i0 = 0; i0 < ITEMS; i0 += BATCH) {
        uint4 v[BATCH][4];
        float4 w[BATCH];
#pragma unroll
        for (int b = 0; b < BATCH; b++) {
            const int i = i0 + b;
            const int co = (KS == 2 ? i * 4 : i * (NT / 4)) * 16; /* (cl - cl0) * 16 */
            const int4 o = *(const int4 *)(tc + co);
            w[b] = *(const float4 *)(tc + wpl + co);
            v[b][0] = v[b][1] = v[b][2] = v[b][3] = make_uint4(0, 0, 0, 0);
            if (KS == 2 || live) { /* KS 2: sc % 64 == 0, no K padding (fits) */
                v[b][0] = __ldg((const uint4 *)(xs + (unsigned)o.x));
                v[b][1] = __ldg((const uint4 *)(xs + (unsigned)o.y));
                v[b][2] = __ldg((const uint4 *)(xs + (unsigned)o.z));
                v[b][3] = __ldg((const uint4 *)(xs + (unsigned)o.w));
            }
        }
#pragma unroll
        for (int b = 0; b < BATCH; b++) {
            const int i = i0 + b;
            unsigned char *dst = sb + (KS == 2 ? (d0 + i * 512) ^ ((i & 1) << 6) : d0 + i * NT * 16);
            uint4 o, o2;
            blend4<E>(v[b][0], v[b][1], v[b][2], v[b][3], w[b], &o, &o2);
            *(uint4 *)dst = o;
            if constexpr (E == 2) *(uint4 *)(dst + PL_B) = o2;
        }
    }
}

/* Shared memory of one tile: A stages (KS chunks of every plane each; 4
 * stages for 16-bit KS 1 unless SST, else 3, where the A copies are always
 * issued after the barrier; 2 in the lean form), B stages (2 in the lean
 * form), the corner table, the run table. */
template <int E, int BM, int BN, int KS, int LEAN, int SST = 0> struct WgSmem {
    static constexpr int astages = LEAN ? 2 : KS == 1 && E != 2 && !SST ? ASTAGES : 3;
    static constexpr int bstages = LEAN ? 2 : BSTAGES;
    static constexpr size_t a_plane = (size_t)BM * CB * KS, b_plane = (size_t)BN * CB * KS;
    static constexpr size_t a_bytes = a_plane * Et<E>::planes, b_bytes = b_plane * Et<E>::planes;
    static constexpr size_t table_off = a_bytes * astages + b_bytes * bstages;
};
#endif /* DCN_WG_DEVICE */

#if DCN_WG_DEVICE
/* f[r * ntot] = acc[r] (old: f[r * ntot] + acc[r]) for the R accumulators,
 * 16 at a time with the 16 loads issued before the first store, so that
 * the round trips overlap (the compiler cannot reorder a load past a store
 * to memory it may share). */
template <int R> __device__ __forceinline__ void flush_acc(const float (&acc)[R], float *f, size_t ntot, int old)
{
#pragma unroll
    for (int r0 = 0; r0 < R; r0 += 16) {
        float o[16];
#pragma unroll
        for (int q = 0; q < 16; q++) o[q] = old ? f[(r0 + q) * ntot] : 0.f;
#pragma unroll
        for (int q = 0; q < 16; q++) f[(r0 + q) * ntot] = old ? o[q] + acc[r0 + q] : acc[r0 + q];
    }
}

/* The accumulators' values, plus the bias unless part is given, to their
 * destination: part (16-bit split-K's fp32 partial sums of this split,
 * [split][cout][ncols]) or y. Accumulator 4j + 2h + e is row row0 + lane/4
 * + 8h of the tile, column 8j + 2 (lane % 4) + e. */
template <int E, int BN>
__device__ __forceinline__ void emit(const float (&acc)[BN / 2], void *__restrict__ y, float *__restrict__ part,
                                     const void *__restrict__ bias, const WGeo &g, int m0, int c0, int grp, int split,
                                     int row0, int lane)
{
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int m = m0 + row0 + (lane >> 2) + 8 * h;
        if (m >= g.coutg) continue;
        const int oc = grp * g.coutg + m;
        const float bv = part ? 0.f : bias ? ldf<E>(bias, oc) : 0.f;
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
            const size_t yi = ((size_t)n * g.cout + oc) * g.hw + pos;
            if ((g.hw & 1) == 0 && col + 1 < g.ncols) {
                stf2<E>(y, yi, v0, v1); /* pos even, pos + 1 in the same image */
            } else {
                stf<E>(y, yi, v0);
                if (col + 1 < g.ncols) {
                    const int n1 = (col + 1) / g.hw, p1 = col + 1 - n1 * g.hw;
                    stf<E>(y, ((size_t)n1 * g.cout + oc) * g.hw + p1, v1);
                }
            }
        }
    }
}

/* The tile's output through shared memory: the accumulators plus the bias
 * (sbias, fp32, one per tile row), rounded once to the output type, are
 * written into st ([BM][BN], rows st_pitch<E, BN>() bytes apart: the pad
 * keeps the 8 rows a warp writes at once on distinct banks), then every
 * thread stores whole 16-byte runs of a row, so that a warp writes 512
 * consecutive bytes of y (the accumulators' own layout writes 16 bytes in
 * each of 8 rows per instruction; with strips (ST), 32 to 128 bytes in
 * each of the patch's rows). st is the A and B stages, free once every
 * warpgroup's MMAs are done: the caller passes a barrier first. Runs that
 * cross an image, leave the columns, or are not 16-byte aligned in y are
 * written element by element. */
template <int E, int BN> constexpr int st_pitch() { return BN * Et<E>::sz + (E == 2 ? 32 : 16); }

template <int E, int BM, int BN, int NT, bool ST>
__device__ __forceinline__ void emit_staged(const float (&acc)[BN / 2], unsigned char *st, const float *sbias,
                                            void *__restrict__ y, const WGeo &g, int m0, int c0, int grp, int row0,
                                            int lane, int tid)
{
    constexpr int P = st_pitch<E, BN>(), SZ = Et<E>::sz, EPR = 16 / SZ; /* elements per 16-byte run */
    constexpr int UPR = BN / EPR;                                          /* runs per row */
    static_assert(NT % UPR == 0, "a thread keeps one column run");
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int r = row0 + (lane >> 2) + 8 * h;
        const float bv = sbias[r];
        unsigned char *sr = st + r * P + 2 * (lane & 3) * SZ;
#pragma unroll
        for (int j = 0; j < BN / 8; j++) {
            const float v0 = acc[4 * j + 2 * h] + bv, v1 = acc[4 * j + 2 * h + 1] + bv;
            if constexpr (E == 2) *(float2 *)(sr + 8 * j * SZ) = make_float2(v0, v1);
            else *(uint32_t *)(sr + 8 * j * SZ) = f2e2<E>(v0, v1);
        }
    }
    __syncthreads();
    const int cu = tid % UPR, col = c0 + cu * EPR;
    if (col >= g.ncols) return;
    /* the run's first element: columns col.. row-major, or (ST) 8 neighbours in one row of the tile's
     * patch, whose rows are whole runs */
    int n, pos;
    if constexpr (ST) {
        const Patch pt = patch_at(g, c0, ilog2(BN));
        n = pt.n;
        pos = patch_pos(g, pt, cu * EPR);
    } else {
        n = col / g.hw;
        pos = col - n * g.hw;
    }
    /* the run lies in one image and inside the columns, and y's run is 16-byte aligned */
    const bool whole = col + EPR <= g.ncols && pos + EPR <= g.hw && g.hw % EPR == 0 && ((uintptr_t)y & 15) == 0;
    const int mend = min(BM, g.coutg - m0);
#pragma unroll 4
    for (int r = tid / UPR; r < mend; r += NT / UPR) {
        const int oc = grp * g.coutg + m0 + r;
        const unsigned char *sr = st + r * P + cu * 16;
        if (whole) {
            *(uint4 *)((char *)y + (((size_t)n * g.cout + oc) * g.hw + pos) * SZ) = *(const uint4 *)sr;
        } else {
            for (int e = 0; e < EPR && col + e < g.ncols; e++) {
                int ne = n, pe = pos + e; /* ST: the run's image and row */
                if constexpr (!ST) {
                    ne = (col + e) / g.hw;
                    pe = col + e - ne * g.hw;
                }
                const size_t yi = ((size_t)ne * g.cout + oc) * g.hw + pe;
                if constexpr (E == 2) ((float *)y)[yi] = ((const float *)sr)[e];
                else ((uint16_t *)y)[yi] = ((const uint16_t *)sr)[e];
            }
        }
    }
}
#endif /* DCN_WG_DEVICE */

/* One block: a BM x BN tile of y_g over the chunks [kc0, kc1) of K, KS
 * chunks per step (kc1 - kc0 and the chunks per segment are multiples of
 * KS). A2: fp32's lo plane of A (unused otherwise). LEAN: two A and two B
 * stages instead of three, so that two blocks of fp32 128x128 fit a
 * multiprocessor; each step then waits for its previous MMAs and passes a
 * barrier before it refills their stages (A of the next step and its
 * gather), a second barrier per step. */
template <int E, int BM, int BN, int MINB, int KS, int LEAN, int PERSIST, int SST = 0, int STRIP = 0>
__global__ void __launch_bounds__(BM * 2, MINB)
    dcn_wgmma(const void *__restrict__ xt, const void *__restrict__ off, const void *__restrict__ mask,
              const void *__restrict__ A, const void *__restrict__ A2, const void *__restrict__ bias,
              void *__restrict__ y, float *__restrict__ part, WGeo g)
{
#if DCN_WG_DEVICE
    constexpr int NT = BM * 2; /* BM / 64 warpgroups */
    constexpr int R = BN / 2;  /* accumulators per thread */
    constexpr int AP = BM * 4 * KS / NT; /* 16-byte A copies per thread, plane and step */
    constexpr int NPL = Et<E>::planes;
    static_assert(!SST || (E != 2 && KS == 1 && !LEAN && !PERSIST), "SST: 16-bit one-tile 32-k tiles");
    static_assert(!STRIP || (E != 2 && !SST), "strips: 16-bit, no segment copies");
    typedef WgSmem<E, BM, BN, KS, LEAN, SST> L;
    constexpr int AST = L::astages, BST = L::bstages;
    extern __shared__ __align__(128) unsigned char smem_raw[];
    /* the swizzled B stages need 1024-byte alignment (the launch gives 1 KiB to spare) */
    unsigned char *smem = smem_raw + ((1024u - (smem_addr(smem_raw) & 1023u)) & 1023u);
    unsigned char *sA = smem, *sB = smem + L::a_bytes * AST;
    unsigned char *tab = smem + L::table_off;
    RunInfo *runs = (RunInfo *)(smem + L::table_off + (size_t)g.kk * BN * sizeof(Corner));
    float *sbias = (float *)(runs + g.kcs * 4); /* the tile rows' bias (0 without one), for emit_staged */
    /* emit_staged's tile fits the stages (all but the fp32 lean form) */
    constexpr bool STAGED = (size_t)BM * st_pitch<E, BN>() <= L::table_off;
    static_assert(!STRIP || STAGED, "strips: the output goes through emit_staged");
    const int wpl = g.kk * BN * (int)sizeof(int4); /* the table's weight plane, after the offsets */

    const int tid = threadIdx.x, lane = tid & 31, wq = (tid >> 5) & 3;
    const int wg = __shfl_sync(0xffffffffu, tid >> 7, 0); /* the same in a warp: the descriptors go to uniform registers */
    /* the thread's run of the chunk (KS 1), or of the step (KS 2): see gather */
    const int rq = KS == 2 ? lane & 7 : lane & 3;
    /* PERSIST (a template argument, so that the one-tile form keeps its code): the grid is the blocks
     * that fit at once and each takes tiles blockIdx.x, blockIdx.x + gridDim.x, ..., so that the run
     * table, the block's launch and the wait for the layout kernel are paid once per block. With
     * g.stage as well, each tile's prologue copies the next tile's offsets and mask into stg
     * (stage_next), whose corner table is then built from shared memory. */
    __half *stg = (__half *)(sbias + BM); /* [3 kk][BN] (g.stage) */
    build_runs<E, BN, NT>(runs, g, tid);  /* once: the first tile's barriers order it before its reads */
    for (int tile = blockIdx.x, first = 1; tile < g.ntiles; tile += gridDim.x, first = 0) {
        const TileAt at = tile_at(g, tile);
        const int split = at.split, grp = at.grp;
        const int m0 = at.mtile * BM, c0 = at.ctile * BN;
        const int kc0 = split * g.cps, kc1 = min(g.nch, kc0 + g.cps);
        const int nst = (kc1 - kc0) / KS; /* steps */

        /* A of step j: BM/8 runs of 512 KS bytes (KS chunks are adjacent in A),
         * kbr * 128 bytes apart; this thread's copies advance by 512 KS bytes;
         * the lo plane (fp32) is the same copies from A2 into the stage's
         * second plane */
        /* copy i of a thread is row group mg0 + i * MGS, 16-byte unit w: its
         * destination is adst + i * MGS * 512 KS (a constant offset, so that the
         * compiler need not keep or rebuild one address per copy) */
        constexpr int MGS = NT / (32 * KS);
        /* copy i's source: 16-bit, asrc[0] + i * astr, one base and a 32-bit
         * stride (fits() keeps A under 2^31 elements, so i * astr < 4 GiB);
         * fp32, one pointer per copy. With a 64-bit pointer per copy the 16-bit
         * 64-k tile sits at its 128-register limit and ptxas makes the step's
         * sixth corner load wait for the first three (SASS: its wait mask holds
         * their scoreboard; ncu on F: 12% of the stall samples there); base and
         * stride free the registers for all eight to be in flight (H200: F fp16
         * -2%, bf16 -5%). fp32 measured 2% slower so, and keeps the pointers. */
        constexpr bool ASTRIDE = E != 2;
        const char *asrc[ASTRIDE ? 1 : AP];
        const int kbr = g.kpad / Et<E>::run;
        const ptrdiff_t a2d = (const char *)A2 - (const char *)A;
        const unsigned mg0 = (unsigned)tid / (32 * KS), aw = (unsigned)tid % (32 * KS);
        const unsigned astr = (unsigned)MGS * (unsigned)kbr * 128u; /* bytes between a thread's copies (ASTRIDE) */
        const uint32_t adst = smem_addr(sA) + mg0 * 512 * KS + aw * 16;
        {
            const char *Ab = (const char *)A + ((size_t)grp * (g.mpad / 8) + m0 / 8) * (size_t)kbr * 128;
#pragma unroll
            for (int i = 0; i < (ASTRIDE ? 1 : AP); i++)
                asrc[i] = Ab + ((size_t)(mg0 + i * MGS) * kbr + (size_t)kc0 * 4) * 128 + aw * 16;
        }
        auto load_a = [&](int j, int stage) {
            const uint32_t d = adst + stage * (uint32_t)L::a_bytes;
#pragma unroll
            for (int pl = 0; pl < NPL; pl++)
#pragma unroll
                for (int i = 0; i < AP; i++)
                    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(
                                     d + (uint32_t)(i * MGS * 512 * KS) + pl * (uint32_t)L::a_plane),
                                 "l"((ASTRIDE ? asrc[0] + (size_t)(i * astr) : asrc[ASTRIDE ? 0 : i]) +
                                     (size_t)j * 512 * KS + (pl ? a2d : 0)));
        };

        int seg = kc0 / g.kcs, jseg = kc0 - seg * g.kcs; /* segment, chunk within it */
        const char *xg = (const char *)xt + (size_t)(grp * g.cg) * Et<E>::sz;
        auto gather_step = [&](unsigned char *sb) {
            const RunInfo ri = runs[jseg * 4 + rq]; /* the thread's run of the step (gather) */
            gather<E, BN, NT, KS>(sb, tab + ri.row, xg + (size_t)(seg * g.sc + ri.c) * Et<E>::sz, ri.c >= 0, wpl, tid);
        };
        auto stage_seg = [&]() { /* SST: the next segment's offsets and mask, where the tile has one */
            if constexpr (SST)
                if (seg < (kc1 - 1) / g.kcs) stage_cols<E, BN, NT>(stg, g, off, mask, grp, seg + 1, c0, tid);
        };

        float acc[R];
#pragma unroll
        for (int i = 0; i < R; i++) acc[i] = 0.f;

        /* PRT_DCN_PROF (defined when compiling this file, never in a release
         * build): thread 0 of every fourth block takes the global timer (ns) at
         * six points of its tile (start; table built; first gather issued;
         * pipeline full; MMAs done; output written) and prints them with the
         * block, its multiprocessor and its steps ("PROF b sm steps t0..t5"),
         * which is how the fixed cost per tile was found (bench/NOTES-gpu.md,
         * v20). */
#ifdef PRT_DCN_PROF
        unsigned long long pt[6];
#define DCN_PROF_AT(k) if (tid == 0) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(pt[k]) :: "memory")
#else
#define DCN_PROF_AT(k)
#endif
        DCN_PROF_AT(0);
        if (!first) __syncthreads(); /* the previous tile's output has left the stages and sbias */
        float bv = 0.f; /* loaded here, stored after the table: one wait for both */
        if (STAGED && tid < BM && bias && m0 + tid < g.coutg) bv = ldf<E>(bias, grp * g.coutg + m0 + tid);
        if (!PERSIST || first || !g.stage)
            build_table<E, BN, NT, false, STRIP != 0>(tab, g, off, mask, grp, seg, c0, tid);
        else
            build_table<E, BN, NT, true, STRIP != 0>(tab, g, off, mask, grp, seg, c0, tid, stg);
        if (STAGED && tid < BM) sbias[tid] = bv;
        DCN_PROF_AT(1);
        if (first) {
            dep_wait();   /* xt and A: see dep_launch */
            dep_launch(); /* the split-K sum may start; it waits for this grid's end */
        }
        load_a(0, 0);
        cp_async_commit();
        if constexpr (PERSIST) {
            __syncthreads(); /* the table is built: every thread is done with stg */
            if (g.stage && tile + (int)gridDim.x < g.ntiles)
                stage_next<E, BN, NT, STRIP != 0>(stg, g, off, mask, tile + gridDim.x, tid); /* in A1's group */
            if (!LEAN && nst > 1) load_a(1, 1);
            cp_async_commit();
        } else {
            if (!LEAN && nst > 1) load_a(1, 1);
            stage_seg(); /* SST: the next segment's offsets and mask, in A1's group */
            cp_async_commit();
            __syncthreads();
        }
        gather_step(sB);
        DCN_PROF_AT(2);
        /* SST: a tile that starts on its first segment's last chunk (split-K) rebuilds the table in
         * step 0, before that step's wait: A1's group, with the copies, must have landed here */
        if (LEAN || (SST && jseg + 1 >= g.kcs)) cp_async_wait<0>();
        else cp_async_wait<1>();
        fence_async_smem();
        __syncthreads();
        DCN_PROF_AT(3);

        const uint64_t da0 = smem_desc(smem_addr(sA) + wg * 64 * CB * KS, 128, 512 * KS);
        const uint64_t db0 = smem_desc(smem_addr(sB), 16, 512 * KS, KS == 2 ? 1 : 2);
        const int late_a = !LEAN && (KS > 1 || E == 2 || !(g.flags & 1));
        int as = 0, bs = 0; /* A and B stages of step i */
        /* fp32: the steps run in segments of g.flush; after each but the last
         * the accumulators' sum so far is added (fp32, round to nearest) into
         * the destination and they restart at 0, so that the tensor cores'
         * accumulation (whose additions truncate) runs over g.flush steps at a
         * time rather than the whole of K. The destination is part in the
         * accumulators' own order, [r][block * NT + thread] (coalesced, and
         * simple: the epilogue's index arithmetic here made ptxas serialize
         * the kernel's wgmma, C7515); the last segment adds it back before the
         * epilogue, or with split-K leaves the sum there for wg_splitk_sum_f32.
         * The segments are an outer loop so that no wgmma is in flight where
         * the accumulators are read and reset. */
        const int fl = E == 2 && g.flush > 0 ? g.flush : nst;
        const size_t ntot = (size_t)g.ntiles * NT, gtid = (size_t)tile * NT + tid; /* fp32's part: [r][ntot] */
        int flushed = 0;
        for (int i0 = 0; i0 < nst; i0 += fl) {
            if (i0 > 0) {
                wg_wait<0>();
                acc_fence(acc);
                flush_acc<R>(acc, part + gtid, ntot, flushed);
#pragma unroll
                for (int r = 0; r < R; r++) acc[r] = 0.f;
                flushed = 1;
                acc_fence(acc);
            }
            const int i1 = min(nst, i0 + fl);
            for (int i = i0; i < i1; i++) {
                {
                    const uint64_t da = da0 + (uint64_t)((as * (uint32_t)L::a_bytes) >> 4);
                    const uint64_t db = db0 + (uint64_t)((bs * (uint32_t)L::b_bytes) >> 4);
                    wg_fence();
                    acc_fence(acc);
#pragma unroll
                    for (int ks = 0; ks < CB * KS / 32; ks++)
                        wgmma_slice<E, BN>(acc, da + ks * 16, db + ks * 2, (uint32_t)(L::a_plane >> 4),
                                           (uint32_t)(L::b_plane >> 4));
                    wg_commit();
                    acc_fence(acc);
                }
                if (LEAN) {
                    /* every warpgroup's MMAs of step i - 1 done: their A and B
                     * stages take step i + 1 */
                    wg_wait<1>();
                    acc_fence(acc);
                    __syncthreads();
                    if (i + 1 < nst) load_a(i + 1, as ^ 1);
                    cp_async_commit();
                }
                const int a2 = as + 2 >= AST ? as + 2 - AST : as + 2; /* A stage of step i + 2 */
                if (!late_a && !LEAN) {
                    if (i + 2 < nst) load_a(i + 2, a2);
                    cp_async_commit();
                }
                const int bn = bs == BST - 1 ? 0 : bs + 1;
                if (i + 1 < nst) {
                    jseg += KS;
                    if (jseg == g.kcs) { /* the next step opens a segment */
                        jseg = 0;
                        seg++;
                        /* SST: from its offsets and mask, copied at least two steps ago (a
                         * segment takes three or more, the host's condition) or in the
                         * prologue, whose wait covers them where this is step 0: every thread
                         * has waited for its copies and a barrier has passed since; the next
                         * segment's copies go into the group committed after this step's
                         * barrier */
                        build_table<E, BN, NT, SST != 0, STRIP != 0>(tab, g, off, mask, grp, seg, c0, tid, stg);
                        __syncthreads();
                        stage_seg();
                    }
                    gather_step(sB + bn * L::b_bytes);
                }
                if (late_a || LEAN) cp_async_wait<0>();
                else cp_async_wait<1>();
                fence_async_smem();
                if (!LEAN) {
                    wg_wait<1>();
                    acc_fence(acc);
                }
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
        }
        wg_wait<0>();
        acc_fence(acc);
        DCN_PROF_AT(4);

        if constexpr (E == 2) {
            if (g.split > 1) { /* this split's sum, in the accumulators' order */
                flush_acc<R>(acc, part + gtid, ntot, flushed);
                break; /* fp32 takes one tile a block (not PERSIST) */
            }
            if (flushed) {
#pragma unroll
                for (int r = 0; r < R; r++) acc[r] = part[(size_t)r * ntot + gtid] + acc[r];
            }
        }
        if (STAGED && g.split == 1) {
            cp_async_wait<0>();
            __syncthreads(); /* every warpgroup's MMAs are done: the stages are free */
            emit_staged<E, BM, BN, NT, STRIP != 0>(acc, smem, sbias, y, g, m0, c0, grp, wg * 64 + wq * 16, lane,
                                                   tid);
        } else {
            emit<E, BN>(acc, y, E == 2 ? NULL : part, bias, g, m0, c0, grp, split, wg * 64 + wq * 16, lane);
        }
#ifdef PRT_DCN_PROF
        DCN_PROF_AT(5);
        if (tid == 0 && tile % 4 == 0) {
            unsigned sm;
            asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
            printf("PROF %d %u %d %llu %llu %llu %llu %llu %llu\n", tile, sm, nst, pt[0], pt[1], pt[2], pt[3], pt[4],
                   pt[5]);
        }
#endif
        if constexpr (!PERSIST) break;
    } /* tiles */
#undef DCN_PROF_AT
#endif /* DCN_WG_DEVICE */
}

/* ---- grouped layers: few output channels per group ------------------------
 *
 * Where each group has few output channels (coutg <= 8 NJ, NJ <= 4: the
 * grouped convolutions of ResNeXt-style networks), the GEMM of a group is
 * small (coutg x cg kk x columns) and the work is the gather. The tiles above
 * pad coutg to 64 rows and rebuild the corner table for every group; this
 * kernel runs the MMAs with mma.sync m16n8k16 and the samples as the A
 * operand in registers, so there is no B tile in shared memory and no
 * barrier in the loop, and a block runs g.gl consecutive groups of one
 * column tile with one corner table (rebuilt only where the deformable
 * group changes).
 *
 * A warp owns 16 columns of the block's GR_BN: the MMA's rows are columns,
 * its N the group's output channels (NJ blocks of 8), its K a group's
 * cg kk in chunks of 4 runs of 8 channels (run r: tap r / (cg / 8),
 * channels (r % (cg / 8)) * 8 ..), padded with zero runs to whole chunks.
 * Lane l (g = l / 4, t = l % 4) blends run t of the chunk for the warp's
 * columns g and g + 8, one 16-byte value each (8 16-bit channels, fp32
 * weights, rounded once; fp32: 4 channels, below), and the k order of the
 * chunk's two k16 slices is permuted
 * so that these are exactly its A fragments: slice 0 takes channels 0-3 of
 * every run (the fragment's k 2t, 2t+1 <- channels 0, 1; k 2t+8, 2t+9 <- 2,
 * 3), slice 1 channels 4-7. The weights are packed in the same order
 * (pack_grouped_unit): one 16-byte load per lane, chunk and block of 8
 * output channels gives its B fragments of both slices. The accumulators
 * (fp32) take the bias and are rounded once in the epilogue. */
constexpr int GR_BN = 128, GR_NT = 256; /* columns and threads of a block: 8 warps of 16 columns */

#if DCN_GR_DEVICE
template <int E>
__device__ __forceinline__ void mma16816(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                         uint32_t b0, uint32_t b1)
{
    if constexpr (E == 1)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

__device__ __forceinline__ void mma1688_tf32(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                             uint32_t b0, uint32_t b1)
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
#endif

/* fp32 (E 2): runs of 4 channels, k8 TF32 slices (slice 0 channels 0-1 of
 * every run, slice 1 channels 2-3: the fragment's k t and t + 4), samples
 * and weights split into TF32 hi and lo (the wgmma kernel's 3xTF32, three
 * MMAs a slice), and the MMAs' sums added into fp32 accumulators of their
 * own every GR_FLUSH chunks (FLUSH_K's reason: the tensor cores' additions
 * truncate). */
constexpr int GR_FLUSH = (int)(FLUSH_K / 16);

template <int E, int NJ>
__global__ void __launch_bounds__(GR_NT, E == 2 ? 2 : 3)
    dcn_grouped(const void *__restrict__ xt, const void *__restrict__ off, const void *__restrict__ mask,
                const void *__restrict__ A, const void *__restrict__ A2, const void *__restrict__ bias,
                void *__restrict__ y, WGeo g)
{
#if DCN_GR_DEVICE
    extern __shared__ __align__(128) unsigned char smem_raw[];
    unsigned char *tab = smem_raw;
    const int wpl = g.kk * GR_BN * (int)sizeof(int4); /* the table's weight plane, after the offsets */
    const int tid = threadIdx.x, lane = tid & 31, t = lane & 3;
    const int cl0 = (tid >> 5) * 16 + (lane >> 2); /* the lane's columns cl0 and cl0 + 8 of the block */
    const int G = g.cin / g.cg, ctile = blockIdx.x % g.ctiles;
    const int g0 = blockIdx.x / g.ctiles * g.gl, g1 = min(G, g0 + g.gl);
    const int c0 = ctile * GR_BN;
    const int rpt = g.cg / Et<E>::run, nruns = g.kk * rpt, nchunks = (nruns + 3) / 4;
    int dprev = -1;
    for (int grp = g0; grp < g1; grp++) {
        const int d = dgroup_of(g, grp, 0);
        if (d != dprev) {
            if (dprev >= 0) __syncthreads(); /* every warp is done with the old table */
            build_table<E, GR_BN, GR_NT>(tab, g, off, mask, grp, 0, c0, tid);
            if (dprev < 0) dep_wait(); /* xt and A: see dep_launch */
            __syncthreads();
            dprev = d;
        }
        float acc[NJ][4], sum[E == 2 ? NJ : 1][4];
#pragma unroll
        for (int j = 0; j < NJ; j++) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
#pragma unroll
        for (int j = 0; j < (E == 2 ? NJ : 1); j++) sum[j][0] = sum[j][1] = sum[j][2] = sum[j][3] = 0.f;
        const char *xg = (const char *)xt + (size_t)grp * g.cg * Et<E>::sz;
        const size_t ao = (size_t)grp * nchunks * NJ * 32 + lane;
        const uint4 *ag = (const uint4 *)A + ao, *ag2 = (const uint4 *)A2 + ao;
        for (int c = 0; c < nchunks; c++) {
            const int run = 4 * c + t;
            uint4 u0 = make_uint4(0, 0, 0, 0), u1 = u0, l0 = u0, l1 = u0;
            if (run < nruns) {
                const int tap = run / rpt, cb = run - tap * rpt;
                const char *xs = xg + cb * 16;
                const unsigned char *te = tab + (tap * GR_BN + cl0) * 16; /* column cl0 + 8: 128 bytes on */
                const int4 o0 = *(const int4 *)te, o1 = *(const int4 *)(te + 128);
                const float4 w0 = *(const float4 *)(te + wpl), w1 = *(const float4 *)(te + wpl + 128);
                const uint4 p0 = __ldg((const uint4 *)(xs + (unsigned)o0.x));
                const uint4 p1 = __ldg((const uint4 *)(xs + (unsigned)o0.y));
                const uint4 p2 = __ldg((const uint4 *)(xs + (unsigned)o0.z));
                const uint4 p3 = __ldg((const uint4 *)(xs + (unsigned)o0.w));
                const uint4 q0 = __ldg((const uint4 *)(xs + (unsigned)o1.x));
                const uint4 q1 = __ldg((const uint4 *)(xs + (unsigned)o1.y));
                const uint4 q2 = __ldg((const uint4 *)(xs + (unsigned)o1.z));
                const uint4 q3 = __ldg((const uint4 *)(xs + (unsigned)o1.w));
                blend4<E>(p0, p1, p2, p3, w0, &u0, &l0);
                blend4<E>(q0, q1, q2, q3, w1, &u1, &l1);
            }
#pragma unroll
            for (int j = 0; j < NJ; j++) {
                const uint4 b = __ldg(ag + (c * NJ + j) * 32);
                if constexpr (E == 2) {
                    const uint4 bl = __ldg(ag2 + (c * NJ + j) * 32);
                    mma1688_tf32(acc[j], u0.x, u1.x, u0.y, u1.y, b.x, b.y);
                    mma1688_tf32(acc[j], u0.x, u1.x, u0.y, u1.y, bl.x, bl.y);
                    mma1688_tf32(acc[j], l0.x, l1.x, l0.y, l1.y, b.x, b.y);
                    mma1688_tf32(acc[j], u0.z, u1.z, u0.w, u1.w, b.z, b.w);
                    mma1688_tf32(acc[j], u0.z, u1.z, u0.w, u1.w, bl.z, bl.w);
                    mma1688_tf32(acc[j], l0.z, l1.z, l0.w, l1.w, b.z, b.w);
                } else {
                    mma16816<E>(acc[j], u0.x, u1.x, u0.y, u1.y, b.x, b.y);
                    mma16816<E>(acc[j], u0.z, u1.z, u0.w, u1.w, b.z, b.w);
                }
            }
            if constexpr (E == 2) {
                if ((c + 1) % GR_FLUSH == 0 || c + 1 == nchunks) {
#pragma unroll
                    for (int j = 0; j < NJ; j++)
#pragma unroll
                        for (int e = 0; e < 4; e++) {
                            sum[j][e] += acc[j][e];
                            acc[j][e] = 0.f;
                        }
                }
            }
        }
        if constexpr (E == 2) {
#pragma unroll
            for (int j = 0; j < NJ; j++)
#pragma unroll
                for (int e = 0; e < 4; e++) acc[j][e] = sum[j][e];
        }
        /* acc[j][e]: column cl0 + 8 (e / 2), output channel 8 j + 2 t + e % 2 */
#pragma unroll
        for (int j = 0; j < NJ; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int oc = 8 * j + 2 * t + (e & 1), col = c0 + cl0 + (e >> 1) * 8;
                if (oc >= g.coutg || col >= g.ncols) continue;
                const int n = col / g.hw, pos = col - n * g.hw, ocg = grp * g.coutg + oc;
                stf<E>(y, ((size_t)n * g.cout + ocg) * g.hw + pos, acc[j][e] + (bias ? ldf<E>(bias, ocg) : 0.f));
            }
    }
#endif /* DCN_GR_DEVICE */
}

/* ---- host side ---------------------------------------------------------- */

/* WG_256x128K64 takes two chunks (64 k) per step: half the barriers and
 * per-step bookkeeping, and both chunks' corner loads in flight together.
 * The WG_F32_ tiles are the fp32 (3xTF32) kernel, 16 k per step. */
enum {
    WG_256x128, WG_128x128, WG_64x128, WG_256x128K64, WG_F32_256x128, WG_F32_128x128, WG_F32_64x128,
    WG_GROUPED,     /* 16-bit, dcn_grouped (mma.sync; coutg <= 32), appended so that the tactic ids stay */
    WG_GROUPED_F32, /* the same in fp32 (3xTF32) */
    WG_COUNT
};
const int wg_bm[WG_COUNT] = {256, 128, 64, 256, 256, 128, 64, 32, 32};
const int wg_bn[WG_COUNT] = {128, 128, 128, 128, 128, 128, 128, GR_BN, GR_BN};
const int wg_minb[WG_COUNT] = {1, 2, 2, 1, 1, 2, 2, 3, 2};
const int wg_ks[WG_COUNT] = {1, 1, 1, 2, 1, 1, 1, 1, 1};
const int wg_f32[WG_COUNT] = {0, 0, 0, 0, 1, 1, 1, 0, 1};
const int wg_lean[WG_COUNT] = {0, 0, 0, 0, 0, 1, 0, 0, 0}; /* two A and B stages: two blocks a multiprocessor */
int grouped_tile(int t) { return t == WG_GROUPED || t == WG_GROUPED_F32; }

constexpr int64_t MPAD_ALIGN = 256; /* the largest BM: the workspace does not depend on the tile */
constexpr size_t SMEM_MAX = 227 * 1024;

int64_t round_up(int64_t v, int64_t a) { return (v + a - 1) / a * a; }
size_t a256(size_t v) { return (v + 255) & ~(size_t)255; }

/* k per chunk and bytes per element of tile t's type */
int64_t bk_of(int t) { return wg_f32[t] ? 16 : 32; }
int64_t esz_of(int t) { return wg_f32[t] ? 4 : 2; }

/* A and B stages, the corner table, the run table (kcs chunks per segment),
 * of tile t in its lean form or not. */
size_t tile_smem_as(int t, int lean, int64_t kk, int64_t kcs)
{
    const int ks = wg_ks[t], planes = wg_f32[t] ? 2 : 1;
    const int astages = lean ? 2 : ks == 1 && !wg_f32[t] ? ASTAGES : 3, bstages = lean ? 2 : BSTAGES;
    return (size_t)wg_bm[t] * CB * ks * planes * astages + (size_t)wg_bn[t] * CB * ks * planes * bstages +
           (size_t)kk * wg_bn[t] * sizeof(Corner) + (size_t)kcs * 4 * sizeof(RunInfo) + (size_t)wg_bm[t] * 4 +
           1024; /* the tile rows' bias; alignment */
}

size_t tile_smem(int t, int64_t kk, int64_t kcs) { return tile_smem_as(t, wg_lean[t], kk, kcs); }

size_t grouped_smem(int64_t kk) { return (size_t)kk * GR_BN * sizeof(Corner); }

/* Channels per segment and per block (see the file comment); 0 when the
 * group's channels and the deformable groups' channels do not nest. */
int64_t seg_channels(const prt__dcn_params *p, const prt__dcn_shape *s)
{
    const int64_t cg = s->cin / p->group, cpd = s->cin / p->deformable_group;
    if (cpd % cg == 0) return cg;
    if (cg % cpd == 0) return cpd;
    return 0;
}

/* 64 for the tiles of two chunks per step (fits requires sc % 64 == 0 there) */
int64_t block_channels(int64_t sc, int t)
{
    if (wg_ks[t] == 2) return 64;
    return sc % 32 == 0 ? 32 : sc % 16 == 0 ? 16 : 8;
}

int64_t kpad_of(const prt__dcn_params *p, const prt__dcn_shape *s, int64_t bk)
{
    const int64_t sc = seg_channels(p, s), kk = s->kh * s->kw;
    return (s->cin / p->group / sc) * round_up(sc * kk, bk);
}

int fits(const prt__dcn_params *p, const prt__dcn_shape *s, int t)
{
    const int64_t i31 = ((int64_t)1 << 31) - 1;
    if (t < 0 || t >= WG_COUNT || !prt__deform_conv_cuda_fused_fits(p, s)) return 0;
    const int64_t sc = seg_channels(p, s), kk = s->kh * s->kw, bk = bk_of(t);
    if (sc == 0 || sc % 8) return 0;
    /* byte offsets into xt and its zero row; 16-byte rows of A */
    if ((s->n * s->h * s->w + 1) * s->cin * esz_of(t) > i31 || kpad_of(p, s, bk) > i31 / 8) return 0;
    if (p->group * round_up(s->cout / p->group, MPAD_ALIGN) * kpad_of(p, s, bk) > i31) return 0;
    if (grouped_tile(t)) /* a group within one deformable group (sc == cg); the corner table */
        return s->cout / p->group <= 32 && sc == s->cin / p->group &&
               grouped_smem(kk) <= SMEM_MAX;
    const int64_t kcs = round_up(sc * kk, bk) / bk;
    if (wg_ks[t] == 2 && sc % 64) return 0; /* a step is one tap of a 64-channel block */
    if (kcs % wg_ks[t] || tile_smem(t, kk, kcs) > SMEM_MAX) return 0;
    const int64_t blocks = round_up(s->cout / p->group, wg_bm[t]) / wg_bm[t] *
                           ((s->n * s->hout * s->wout + wg_bn[t] - 1) / wg_bn[t]) * p->group * MAX_SPLIT;
    return blocks <= i31;
}

/* The dynamic shared memory tile t takes for the shape (it fits). */
size_t smem_of(const prt__dcn_params *p, const prt__dcn_shape *s, int t)
{
    const int64_t sc = seg_channels(p, s), kk = s->kh * s->kw, bk = bk_of(t);
    return grouped_tile(t) ? grouped_smem(kk) : tile_smem(t, kk, round_up(sc * kk, bk) / bk);
}

/* f(dev) >= 0 for the current device, asked once per device (0..63; the
 * others every time) and kept in cache as f + 1 (0: not asked yet); `none`
 * without a device, or where f fails (f < 0: not kept). */
template <typename F> int per_device(int (&cache)[64], int none, F f)
{
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) {
        cudaGetLastError();
        return none;
    }
    const int keep = dev >= 0 && dev < 64;
    if (keep) {
        const int c = __atomic_load_n(&cache[dev], __ATOMIC_ACQUIRE);
        if (c) return c - 1;
    }
    const int v = f(dev);
    if (v < 0) {
        cudaGetLastError();
        return none;
    }
    if (keep) __atomic_store_n(&cache[dev], v + 1, __ATOMIC_RELEASE);
    return v;
}

/* The current device's multiprocessors (0: none). */
int device_sms()
{
    static int cache[64];
    return per_device(cache, 0, [](int dev) {
        int v = 0;
        return cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, dev) == cudaSuccess ? v : -1;
    });
}

/* The current device's compute capability, 10 major + minor (0: none). */
int device_cc()
{
    static int cache[64];
    return per_device(cache, 0, [](int dev) {
        int major = 0, minor = 0;
        if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
            cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess)
            return -1;
        return 10 * major + minor;
    });
}

/* The most dynamic shared memory a block may take on the current device
 * (cudaDevAttrMaxSharedMemoryPerBlockOptin: 227 KB on compute capability
 * 9.0, 163 KB on 8.0, 99 KB on 8.6 and 8.9), at most SMEM_MAX; 0 without a
 * device. fits() does not ask it (the workspace never depends on the
 * device); whether a tile runs does. */
size_t smem_optin()
{
    static int cache[64];
    const int v = per_device(cache, 0, [](int dev) {
        int b = 0;
        return cudaDeviceGetAttribute(&b, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) == cudaSuccess ? b : -1;
    });
    return (size_t)v < SMEM_MAX ? (size_t)v : SMEM_MAX;
}

/* 16-bit split-K's partial sums, [split][cout][ncols] */
size_t part_bytes(const prt__dcn_shape *s)
{
    const int64_t b = MAX_SPLIT * s->cout * s->n * s->hout * s->wout * 4;
    return (size_t)(b < SPLIT_BYTES ? b : SPLIT_BYTES);
}

/* fp32's buffer of flushed and split-K sums in the accumulators' order:
 * every thread of every block of tile t with `split` splits, 4 bytes per
 * accumulator (BM x BN per block). */
size_t f32_buf_bytes(const prt__dcn_params *p, const prt__dcn_shape *s, int t, int64_t split)
{
    const int64_t mt = round_up(s->cout / p->group, wg_bm[t]) / wg_bm[t];
    const int64_t ct = (s->n * s->hout * s->wout + wg_bn[t] - 1) / wg_bn[t];
    return (size_t)(mt * ct * p->group * split * wg_bm[t] * wg_bn[t] * 4);
}

/* What the workspace holds for it: every fp32 tile that fits without
 * split-K, and at least SPLIT_BYTES (split_of keeps split-K within it). */
size_t f32_buf_reserve(const prt__dcn_params *p, const prt__dcn_shape *s)
{
    size_t r = (size_t)SPLIT_BYTES;
    for (int t = 0; t < WG_COUNT; t++) /* the grouped kernel keeps its sums in registers */
        if (wg_f32[t] && !grouped_tile(t) && fits(p, s, t) && f32_buf_bytes(p, s, t, 1) > r)
            r = f32_buf_bytes(p, s, t, 1);
    return r;
}

/* PRT_DCN_CUDA_SPLIT (environment, read per call, for benchmarks): the
 * number of K splits, 1..8, at least 2 chunks each and within the partial
 * sums' workspace; unset: enough to fill the device when the tiles fill less
 * than half of it, at least 8 chunks each. */
int split_of(const WGeo &g, const prt__dcn_params *p, const prt__dcn_shape *s, int64_t groups, int t)
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
    if (wg_f32[t]) {
        const size_t cap = f32_buf_reserve(p, s);
        while (sp > 1 && f32_buf_bytes(p, s, t, sp) > cap) sp--;
    } else {
        while (sp > 1 && (int64_t)sp * g.cout * g.ncols * 4 > SPLIT_BYTES) sp--;
    }
    return sp < 1 ? 1 : (int)sp;
}

/* Whether strips of th rows (col_place) cut every image of the shape into
 * whole tiles of bn columns made of whole 16-byte runs: th wout and, where
 * hout % th rows are left for an image's last strip, that count (a power
 * of two) times wout are multiples of bn, and bn / th and bn / (hout % th)
 * multiples of 8. Then hw and wout are multiples of 8 and every tile is a
 * patch inside one strip of one image. */
int strip_ok(int64_t hout, int64_t wout, int64_t th, int64_t bn)
{
    const int64_t hr = hout % th;
    return bn % th == 0 && (bn / th) % 8 == 0 && (th * wout) % bn == 0 &&
           (hr == 0 || ((hr & (hr - 1)) == 0 && (hr * wout) % bn == 0 && (bn / hr) % 8 == 0));
}

/* The strips' rows for tile t without split-K (1: row-major). Only the
 * 64-k tile has a strips form: the others (the 32-k tiles, whose segment
 * copies the strips would give up, and fp32 and the grouped kernel) are
 * row-major. PRT_DCN_CUDA_TH (environment, read per call, for tests and
 * benchmarks): 1 row-major; 2, 4 or 8 that many rows where strip_ok; unset
 * or 0, the default: the first of 8, 4 and 2 that the shape allows. */
int strip_rows(const prt__dcn_shape *s, int t)
{
    if (t != WG_256x128K64) return 1;
    const char *e = getenv("PRT_DCN_CUDA_TH");
    const int want = e && *e ? atoi(e) : 0;
    if (want == 2 || want == 4 || want == 8) return strip_ok(s->hout, s->wout, want, wg_bn[t]) ? want : 1;
    if (want != 0) return 1;
    for (int th = 8; th >= 2; th /= 2)
        if (strip_ok(s->hout, s->wout, th, wg_bn[t])) return th;
    return 1;
}

int wfail(char *err, size_t cap, int elt, const char *what, cudaError_t ce)
{
    if (err && cap)
        snprintf(err, cap, "ModulatedDeformConv2d CUDA (wgmma %s): %s failed: %s",
                 elt == PRT_DCN_F32 ? "fp32" : elt == PRT_DCN_BF16 ? "bf16" : "fp16", what, cudaGetErrorString(ce));
    return -1;
}

/* Whether the fused and grouped kernels go as programmatic dependents of
 * the layout kernel (dep_launch): compute capability 9.0 or more, unless
 * PRT_DCN_CUDA_PDL=0 (environment, read per call, for benchmarks). */
int pdl_on()
{
    const char *e = getenv("PRT_DCN_CUDA_PDL");
    return !(e && !strcmp(e, "0")) && device_cc() >= 90;
}

/* Shared memory of 16-bit tile (bm, bn, ks 1) with SST: three A stages
 * instead of four, and the next segment's 3 kk rows of bn 16-bit offsets and
 * mask (stage_cols). */
size_t sst_smem(size_t smem, int bm, int bn, int64_t kk)
{
    return smem - (size_t)(ASTAGES - 3) * bm * CB + (size_t)3 * kk * bn * 2;
}

/* Whether a 16-bit tile of one chunk a step and bm x bn, taking smem bytes
 * without it, copies each next segment's offsets and mask ahead (SST): K
 * holds more than one segment (of nch chunks, kcs a segment), a segment
 * takes at least three steps (so that the copies have landed before its
 * table is built from them), an image's columns (hw) are a multiple of 8
 * (stage_cols), and the copies fit in the fourth A stage they replace, so
 * that the blocks a multiprocessor and the shared-memory carveout stay as
 * they were (bench/NOTES-gpu.md, v27b: 7 KB more halved D's blocks). The
 * launch also needs both tensors 16-byte aligned and the A copies after the
 * barrier (not bit 0 of the flags) that three A stages rely on. Tiles of
 * more than SST_BM_MAX rows keep their fourth A stage: the 256-row tile, one
 * block a multiprocessor, measured up to 3% slower with the copies on
 * four of six shapes of two to eight deformable groups, where the 128-row
 * tile gained up to 5% on five and held on the sixth (bench/NOTES-gpu.md,
 * v27c). */
enum { SST_BM_MAX = 128 };
int seg_stage_ok(int64_t nch, int64_t kcs, int64_t hw, size_t smem, int bm, int bn, int64_t kk)
{
    return bm <= SST_BM_MAX && nch > kcs && kcs >= 3 && hw % 8 == 0 && sst_smem(smem, bm, bn, kk) <= smem;
}

/* kernel<<<grid, block, smem, st>>>(args...), as a programmatic dependent
 * of the kernel before it on st where pdl_on(). */
template <typename... P, typename... Args>
cudaError_t launch_dep(void (*kernel)(P...), unsigned grid, unsigned block, size_t smem, cudaStream_t st,
                       Args... args)
{
    cudaLaunchConfig_t cfg;
    cudaLaunchAttribute at[1];
    memset(&cfg, 0, sizeof cfg);
    memset(at, 0, sizeof at);
    cfg.gridDim = dim3(grid);
    cfg.blockDim = dim3(block);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = st;
    if (pdl_on()) {
        at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        at[0].val.programmaticStreamSerializationAllowed = 1;
        cfg.attrs = at;
        cfg.numAttrs = 1;
    }
    return cudaLaunchKernelEx(&cfg, kernel, args...);
}

/* Launches the tile's kernel over g.ntiles tiles (blocks). PERS (16-bit
 * tiles of one block a multiprocessor): where the tiles take more than one
 * wave, the persistent form (unless bit 2 of g.flags): a grid of the blocks
 * that fit at once, each taking every gridDim.x-th tile; and where a tile's
 * columns lie in one image and the offsets and mask are 16-byte aligned,
 * with the next tile's offsets and mask copied into shared memory during
 * the current one (unless bit 3, or where their 3 kk rows of BN elements
 * would leave fewer blocks a multiprocessor). STRIP: the kernels of the
 * strips' column order (g.th > 1, col_place), which take no segment copies. */
template <int E, int BM, int BN, int MINB, int KS, int LEAN = 0, int PERS = 0, int STRIP = 0>
cudaError_t launch_t(int64_t blocks, size_t smem, cudaStream_t st, const void *xt, const void *off, const void *mask,
                     const void *a, const void *a2, const void *bias, void *y, float *part, WGeo g)
{
    static unsigned long long raised = 0, raised_p = 0;
    auto k = dcn_wgmma<E, BM, BN, MINB, KS, LEAN, 0, 0, STRIP>;
    cudaError_t ce = (cudaError_t)prt__deform_conv_cuda_smem_limit((const void *)k, (int)SMEM_MAX, &raised);
    if (ce != cudaSuccess) return ce;
    g.ntiles = (int)blocks;
    g.stage = 0;
    const int sms = device_sms();
    if (PERS && E != 2 && !(g.flags & 4) && sms > 0 && (g.gridcap > 0 || blocks > (int64_t)MINB * sms)) {
        auto kp = dcn_wgmma<E, BM, BN, MINB, KS, LEAN, PERS, 0, STRIP>;
        int nb = 0;
        ce = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, k, BM * 2, smem);
        if (ce != cudaSuccess) return ce;
        const int64_t fit = g.gridcap > 0 ? g.gridcap : (int64_t)nb * sms;
        if (nb > 0 && blocks > fit) {
            ce = (cudaError_t)prt__deform_conv_cuda_smem_limit((const void *)kp, (int)SMEM_MAX, &raised_p);
            if (ce != cudaSuccess) return ce;
            const size_t big = smem + (size_t)3 * g.kk * BN * 2;
            int nbs = 0;
            if (!(g.flags & 8) && g.hw % BN == 0 && ((uintptr_t)off & 15) == 0 && ((uintptr_t)mask & 15) == 0 &&
                big <= smem_optin() &&
                cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nbs, kp, BM * 2, big) == cudaSuccess && nbs == nb) {
                g.stage = 1;
                smem = big;
            }
            cudaGetLastError(); /* a failed query of the larger size is not the launch's error */
            return launch_dep(kp, (unsigned)fit, BM * 2, smem, st, xt, off, mask, a, a2, bias, y, part, g);
        }
    }
    if constexpr (E != 2 && KS == 1 && !LEAN && BM <= SST_BM_MAX && !STRIP) {
        if (!(g.flags & 17) && seg_stage_ok(g.nch, g.kcs, g.hw, smem, BM, BN, g.kk) && ((uintptr_t)off & 15) == 0 &&
            ((uintptr_t)mask & 15) == 0) {
            static unsigned long long raised_s = 0;
            auto ks = dcn_wgmma<E, BM, BN, MINB, KS, LEAN, 0, 1>;
            const size_t sm = sst_smem(smem, BM, BN, g.kk);
            int nb = 0, nbs = 0;
            ce = (cudaError_t)prt__deform_conv_cuda_smem_limit((const void *)ks, (int)SMEM_MAX, &raised_s);
            if (ce != cudaSuccess) return ce;
            if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, k, BM * 2, smem) == cudaSuccess &&
                cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nbs, ks, BM * 2, sm) == cudaSuccess && nb > 0 &&
                nbs >= nb)
                return launch_dep(ks, (unsigned)blocks, BM * 2, sm, st, xt, off, mask, a, a2, bias, y, part, g);
            cudaGetLastError(); /* a failed query is not the launch's error */
        }
    }
    return launch_dep(k, (unsigned)blocks, BM * 2, smem, st, xt, off, mask, a, a2, bias, y, part, g);
}

/* The 16-bit tile for the element type (elt: PRT_DCN_F16 or PRT_DCN_BF16). */
template <int BM, int BN, int MINB, int KS>
cudaError_t launch16(int elt, int64_t blocks, size_t smem, cudaStream_t st, const void *xt, const void *off,
                     const void *mask, const void *a, const void *bias, void *y, float *part, const WGeo &g)
{
    constexpr int P = BM == 256; /* one block a multiprocessor: the persistent form where it takes waves */
    if constexpr (KS == 2) { /* the 64-k tile, the one with a strips form (strip_rows) */
        if (g.th > 1) {
            if (elt == PRT_DCN_BF16)
                return launch_t<1, BM, BN, MINB, KS, 0, P, 1>(blocks, smem, st, xt, off, mask, a, a, bias, y, part, g);
            return launch_t<0, BM, BN, MINB, KS, 0, P, 1>(blocks, smem, st, xt, off, mask, a, a, bias, y, part, g);
        }
    }
    if (elt == PRT_DCN_BF16)
        return launch_t<1, BM, BN, MINB, KS, 0, P>(blocks, smem, st, xt, off, mask, a, a, bias, y, part, g);
    return launch_t<0, BM, BN, MINB, KS, 0, P>(blocks, smem, st, xt, off, mask, a, a, bias, y, part, g);
}

/* wg_prep for the element type: x of n images to xt, and `units` 16-byte
 * units (rows) of A in the layout g.gl says. */
cudaError_t launch_prep(int elt, cudaStream_t st, const void *x, void *xt, const void *weight, void *a, void *a2,
                        const WGeo &g, int n, int units)
{
    const int pxt = (g.hw_in + 63) / 64, cht = (g.cin + 63) / 64, nxt = pxt * cht * n;
    const unsigned blocks = (unsigned)(nxt + (units + 255) / 256);
    if (elt == PRT_DCN_F32) wg_prep<2><<<blocks, 256, 0, st>>>(x, xt, weight, a, a2, g, pxt, cht, nxt, units);
    else if (elt == PRT_DCN_BF16) wg_prep<1><<<blocks, 256, 0, st>>>(x, xt, weight, a, a2, g, pxt, cht, nxt, units);
    else wg_prep<0><<<blocks, 256, 0, st>>>(x, xt, weight, a, a2, g, pxt, cht, nxt, units);
    return cudaGetLastError();
}

template <int E, int NJ>
cudaError_t launch_grouped(unsigned blocks, size_t smem, cudaStream_t st, const void *xt, const void *off,
                           const void *mask, const void *a, const void *a2, const void *bias, void *y, const WGeo &g)
{
    static unsigned long long raised = 0;
    const cudaError_t ce =
        (cudaError_t)prt__deform_conv_cuda_smem_limit((const void *)dcn_grouped<E, NJ>, (int)SMEM_MAX, &raised);
    if (ce != cudaSuccess) return ce;
    return launch_dep(dcn_grouped<E, NJ>, blocks, GR_NT, smem, st, xt, off, mask, a, a2, bias, y, g);
}

template <int E>
cudaError_t launch_grouped_e(unsigned blocks, size_t smem, cudaStream_t st, const void *xt, const void *off,
                             const void *mask, const void *a, const void *a2, const void *bias, void *y,
                             const WGeo &g)
{
    const int nj = gr_nj(g.coutg);
    if (nj == 1) return launch_grouped<E, 1>(blocks, smem, st, xt, off, mask, a, a2, bias, y, g);
    if (nj == 2) return launch_grouped<E, 2>(blocks, smem, st, xt, off, mask, a, a2, bias, y, g);
    return launch_grouped<E, 4>(blocks, smem, st, xt, off, mask, a, a2, bias, y, g);
}

/* The grouped kernel (dcn_grouped) with its operand layouts. Groups per
 * block g.gl: PRT_DCN_CUDA_GPB (environment, benchmarks), else the fewest
 * that make at most two blocks per multiprocessor, so that all of them run
 * in one wave, 16 warps a multiprocessor (each block builds the corner
 * table once for its groups). Case E on the H200 (33 column tiles, 32
 * groups), 1, 2, 3, 4, 5, 6 and 8 groups per block: 62, 67, 53.5, 52.5, 60,
 * 68 and 60 us; 2 left a second wave of one block per multiprocessor, 8
 * one block of 8 warps. */
int run_grouped(const prt__dcn_params *p, const prt__dcn_shape *s, int elt, const void *x, const void *offset,
                const void *mask, const void *weight, const void *bias, void *y, void *workspace, cudaStream_t st,
                WGeo &g, char *err, size_t cap)
{
    int sms = 132, dev = 0;
    const int G = (int)p->group, nj = gr_nj(g.coutg), f32 = elt == PRT_DCN_F32, esz = f32 ? 4 : 2;
    const int nchunks = (g.kk * (g.cg / (16 / esz)) + 3) / 4;
    g.ctiles = (g.ncols + GR_BN - 1) / GR_BN;
    if (cudaGetDevice(&dev) == cudaSuccess) cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    int64_t gpb = 1;
    while (gpb < G && (int64_t)g.ctiles * ((G + gpb - 1) / gpb) > 2 * (int64_t)sms) gpb++;
    const char *e = getenv("PRT_DCN_CUDA_GPB");
    if (e && *e) gpb = atoi(e);
    g.gl = (int)(gpb < 1 ? 1 : gpb > G ? G : gpb);
    char *ws = (char *)(((uintptr_t)workspace + 255) & ~(uintptr_t)255);
    void *xt = ws;
    char *a = ws + a256((size_t)((s->n * s->h * s->w + 1) * s->cin) * esz);
    const int units = G * nchunks * nj * 32; /* 16-byte units of A (of each plane in fp32) */
    char *a2 = f32 ? a + a256((size_t)units * 16) : a;
    cudaError_t ce = launch_prep(elt, st, x, xt, weight, a, a2, g, (int)s->n, units);
    if (ce != cudaSuccess) return wfail(err, cap, elt, "layout kernel", ce);
    const unsigned blocks = (unsigned)(g.ctiles * (int64_t)((G + g.gl - 1) / g.gl));
    const size_t smem = grouped_smem(g.kk);
    ce = f32                    ? launch_grouped_e<2>(blocks, smem, st, xt, offset, mask, a, a2, bias, y, g)
         : elt == PRT_DCN_BF16 ? launch_grouped_e<1>(blocks, smem, st, xt, offset, mask, a, a, bias, y, g)
                               : launch_grouped_e<0>(blocks, smem, st, xt, offset, mask, a, a, bias, y, g);
    if (ce != cudaSuccess) return wfail(err, cap, elt, "grouped kernel", ce);
    return 0;
}

/* Whether the image the driver loads for the current device holds the
 * kernel's code: its PTX architecture (10 major + minor) at least `lo` and
 * at most `hi` (an image built for an older architecture, or JIT-compiled
 * from its PTX, holds the empty body; DCN_WG_DEVICE, DCN_GR_DEVICE), on a
 * device of compute capability `cc_lo` .. `cc_hi`; asked once per device. */
int image_runs(const void *kernel, int lo, int hi, int cc_lo, int cc_hi, int (&cache)[64])
{
    return per_device(cache, 0, [&](int) {
        const int cc = device_cc();
        cudaFuncAttributes fa;
        if (cc == 0) return -1; /* not known: asked again next time */
        if (cc < cc_lo || cc > cc_hi) return 0;
        if (cudaFuncGetAttributes(&fa, kernel) != cudaSuccess) { /* no image for this device */
            cudaGetLastError();
            return 0;
        }
        return fa.ptxVersion >= lo && fa.ptxVersion <= hi ? 1 : 0;
    });
}

} // namespace

/* The wgmma tiles: a device of compute capability 9.0 running the sm_90a
 * image, the file's only image of PTX architecture 9.0 (a build with
 * PLUGRT_DCN_SM90A has no other; CMakeLists.txt), not one JIT-compiled from
 * the compute_80 PTX (CUDA_FORCE_PTX_JIT, say). */
extern "C" int prt__deform_conv_wgmma_available(void)
{
#ifdef PLUGRT_DCN_SM90A
    static int cache[64];
    return image_runs((const void *)dcn_wgmma<0, 64, 128, 2, 1, 0, 0>, 90, 90, 90, 90, cache);
#else
    return 0;
#endif
}

/* The grouped kernel (and the layout kernels it shares): compute
 * capability 8.0 or more and an image built for 8.0 or more. */
extern "C" int prt__deform_conv_grouped_available(void)
{
    static int cache[64];
    return image_runs((const void *)dcn_grouped<0, 1>, 80, 1 << 30, 80, 1 << 30, cache);
}

extern "C" int prt__deform_conv_wgmma_tile_available(int tile)
{
    if (tile < 0 || tile >= WG_COUNT) return 0;
    return grouped_tile(tile) ? prt__deform_conv_grouped_available() : prt__deform_conv_wgmma_available();
}

extern "C" int prt__deform_conv_wgmma_fits(const prt__dcn_params *p, const prt__dcn_shape *s, int tile)
{
    return fits(p, s, tile);
}

extern "C" int prt__deform_conv_wgmma_runs(const prt__dcn_params *p, const prt__dcn_shape *s, int tile)
{
    return fits(p, s, tile) && prt__deform_conv_wgmma_tile_available(tile) && smem_of(p, s, tile) <= smem_optin();
}

extern "C" int prt__deform_conv_wgmma_seg_staged(const prt__dcn_params *p, const prt__dcn_shape *s, int tile)
{
    if (!fits(p, s, tile) || wg_f32[tile] || grouped_tile(tile) || wg_ks[tile] != 1) return 0;
    const int64_t bk = bk_of(tile), kk = s->kh * s->kw;
    const int64_t kcs = round_up(seg_channels(p, s) * kk, bk) / bk;
    return seg_stage_ok(kpad_of(p, s, bk) / bk, kcs, s->hout * s->wout, tile_smem(tile, kk, kcs), wg_bm[tile],
                        wg_bn[tile], kk);
}

extern "C" int prt__deform_conv_wgmma_strips(const prt__dcn_shape *s, int tile)
{
    return tile >= 0 && tile < WG_COUNT ? strip_rows(s, tile) : 1;
}

extern "C" int prt__deform_conv_wgmma_tile_f32(int tile) { return tile >= 0 && tile < WG_COUNT && wg_f32[tile]; }

extern "C" int prt__deform_conv_wgmma_tile(const prt__dcn_params *p, const prt__dcn_shape *s, int elt)
{
    const int64_t coutg = s->cout / p->group;
    if (elt == PRT_DCN_F32) {
        const int t = coutg > 128 ? WG_F32_256x128 : coutg > 64 ? WG_F32_128x128 : WG_F32_64x128;
        return fits(p, s, t) ? t : -1;
    }
    const int t = coutg > 128 ? WG_256x128 : coutg > 64 ? WG_128x128 : WG_64x128;
    if (t == WG_256x128 && fits(p, s, WG_256x128K64)) return WG_256x128K64;
    return fits(p, s, t) ? t : -1;
}

/* The default policy's wgmma tile (bench/NOTES-gpu.md, H200). Both types:
 * the grouped kernel for more than one group where it fits (case E: fp16
 * 52.5 us against 83 for im2col + cuBLAS and 96 for the best wgmma tile;
 * fp32 65-69 us against 139-140 for wgmma3xtf32_64x128). 16-bit, one
 * group: the 256x128 tile with 64 k per step for at least 64 output
 * channels where it fits and its tiles give at least every other
 * multiprocessor a block (cases A and C: 54 us against 91 for im2col +
 * cuBLAS and 40 against 51 for the mma.sync kernel; case F); else, for
 * more than 64 output channels, 256x128 (above 128) or 128x128 whose tiles
 * give every multiprocessor at least one block (case D). fp32: wherever a tile fits,
 * the tile of prt__deform_conv_wgmma_tile (by output channels per group:
 * above 128 256x128, above 64 128x128, else 64x128; split-K fills the
 * device where the tiles are few); it measured faster than im2col + the
 * SGEMM on every case A-F. -1 otherwise (im2col + cuBLAS, or the mma.sync
 * kernel, runs). */
extern "C" int prt__deform_conv_wgmma_default_tile(const prt__dcn_params *p, const prt__dcn_shape *s, int elt)
{
    int sms = 132, dev = 0;
    const int64_t coutg = s->cout / p->group;
    if (p->group > 1 && prt__deform_conv_wgmma_runs(p, s, elt == PRT_DCN_F32 ? WG_GROUPED_F32 : WG_GROUPED))
        return elt == PRT_DCN_F32 ? WG_GROUPED_F32 : WG_GROUPED;
    if (!prt__deform_conv_wgmma_available()) return -1;
    if (elt == PRT_DCN_F32) return prt__deform_conv_wgmma_tile(p, s, elt);
    if (p->group != 1 || coutg < 64) return -1;
    if (cudaGetDevice(&dev) == cudaSuccess) cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    auto blocks = [&](int t) {
        return round_up(coutg, wg_bm[t]) / wg_bm[t] * ((s->n * s->hout * s->wout + wg_bn[t] - 1) / wg_bn[t]);
    };
    if (fits(p, s, WG_256x128K64) && 2 * blocks(WG_256x128K64) >= sms) return WG_256x128K64;
    if (coutg <= 64) return -1;
    const int t = coutg > 128 ? WG_256x128 : WG_128x128;
    return fits(p, s, t) && blocks(t) >= sms ? t : -1;
}

/* xt with its zero pixel row, A (two planes for fp32), the split-K partial
 * sums; 0 when no tile of the type fits. */
extern "C" size_t prt__deform_conv_wgmma_workspace(const prt__dcn_params *p, const prt__dcn_shape *s, int elt)
{
    int t, any = 0;
    const int f32 = elt == PRT_DCN_F32;
    for (t = 0; t < WG_COUNT; t++) any |= wg_f32[t] == f32 && fits(p, s, t);
    if (!any) return 0;
    const int64_t esz = f32 ? 4 : 2, bk = f32 ? 16 : 32;
    const size_t xt = (size_t)((s->n * s->h * s->w + 1) * s->cin) * esz;
    const size_t a = (size_t)(p->group * round_up(s->cout / p->group, MPAD_ALIGN) * kpad_of(p, s, bk)) * esz;
    return a256(xt) + a256(a) * (f32 ? 2 : 1) + a256(f32 ? f32_buf_reserve(p, s) : part_bytes(s)) + 256;
}

extern "C" int prt__deform_conv_wgmma(const prt__dcn_params *p, const prt__dcn_shape *s, int elt, int tile,
                                      const void *x, const void *offset, const void *mask, const void *weight,
                                      const void *bias, void *y, void *workspace, void *stream, char *err, size_t cap)
{
    cudaStream_t st = (cudaStream_t)stream;
    WGeo g;
    memset(&g, 0, sizeof g);
    if (!fits(p, s, tile) || wg_f32[tile] != (elt == PRT_DCN_F32)) {
        if (err && cap)
            snprintf(err, cap, "ModulatedDeformConv2d CUDA (wgmma): tile %d does not take this shape and type", tile);
        return -1;
    }
    if (!prt__deform_conv_wgmma_tile_available(tile)) {
        if (err && cap)
            snprintf(err, cap,
                     "ModulatedDeformConv2d CUDA (wgmma): tile %d needs %s, which this device or build lacks", tile,
                     grouped_tile(tile) ? "compute capability 8.0 and an image built for it"
                                        : "compute capability 9.0 and the sm_90a image (PLUGRT_DCN_SM90A)");
        return -1;
    }
    if (smem_of(p, s, tile) > smem_optin()) {
        if (err && cap)
            snprintf(err, cap,
                     "ModulatedDeformConv2d CUDA (wgmma): tile %d needs %zu bytes of shared memory for a %lldx%lld "
                     "kernel, the device gives a block at most %zu",
                     tile, smem_of(p, s, tile), (long long)s->kh, (long long)s->kw, smem_optin());
        return -1;
    }
    const int64_t G = p->group, esz = esz_of(tile), bk = bk_of(tile);
    prt__dcn_cuda_geo_set(&g, p, s);
    g.sc = (int)seg_channels(p, s);
    g.cw = (int)block_channels(g.sc, tile);
    g.kseg = g.sc * g.kk;
    g.kspad = (int)round_up(g.kseg, bk);
    g.kcs = g.kspad / (int)bk;
    g.kpad = (int)kpad_of(p, s, bk);
    g.nch = g.kpad / (int)bk;
    if (s->n == 0 || s->cout == 0 || g.hw == 0) return 0;
    g.zero = (int)(s->n * g.hw_in * g.cin * esz);
    {
        const char *e = getenv("PRT_DCN_CUDA_WGFLAGS");
        g.flags = e && *e ? atoi(e) : 0;
        e = getenv("PRT_DCN_CUDA_WGGRID");
        g.gridcap = e && *e ? atoi(e) : 0;
    }
    if (grouped_tile(tile)) return run_grouped(p, s, elt, x, offset, mask, weight, bias, y, workspace, st, g, err, cap);
    g.mpad = (int)round_up(g.coutg, wg_bm[tile]);
    g.mtiles = g.mpad / wg_bm[tile];
    g.ctiles = (g.ncols + wg_bn[tile] - 1) / wg_bn[tile];
    g.split = split_of(g, p, s, G, tile);
    g.cps = (int)round_up((g.nch + g.split - 1) / g.split, wg_ks[tile]); /* nch is a multiple of it */
    g.split = (g.nch + g.cps - 1) / g.cps;
    g.th = g.split == 1 ? strip_rows(s, tile) : 1; /* the strips need emit_staged (no split-K) */
    g.lth = ilog2(g.th);
    g.lhr = g.hout % g.th ? ilog2(g.hout % g.th) : 0;
    if (wg_f32[tile]) {
        /* k per flush: PRT_DCN_CUDA_F32_FLUSH (environment, benchmarks; 0: never), else FLUSH_K */
        const char *e = getenv("PRT_DCN_CUDA_F32_FLUSH");
        const int64_t fk = e && *e ? atoll(e) : FLUSH_K;
        g.flush = fk > 0 ? (int)((fk + bk * wg_ks[tile] - 1) / (bk * wg_ks[tile])) : 0;
    }

    char *ws = (char *)(((uintptr_t)workspace + 255) & ~(uintptr_t)255);
    void *xt = ws;
    const size_t abytes = a256((size_t)(G * round_up(g.coutg, MPAD_ALIGN) * g.kpad) * esz);
    char *a = ws + a256((size_t)((s->n * s->h * s->w + 1) * s->cin) * esz);
    char *a2 = wg_f32[tile] ? a + abytes : a;
    float *part = NULL; /* 16-bit: split-K's partial sums; fp32: the flushed and split sums (always given) */
    if (g.split > 1 || wg_f32[tile]) part = (float *)(a + abytes * (wg_f32[tile] ? 2 : 1));
    const int arows = (int)(G * g.mpad * (int64_t)g.kpad / (16 / esz)); /* 16-byte rows of A */
    cudaError_t ce = launch_prep(elt, st, x, xt, weight, a, a2, g, (int)s->n, arows);
    if (ce != cudaSuccess) return wfail(err, cap, elt, "layout kernel", ce);
    const int64_t blocks = (int64_t)g.mtiles * g.ctiles * g.split * G;
    const size_t smem = tile_smem(tile, g.kk, g.kcs);
    switch (tile) {
    case WG_256x128: ce = launch16<256, 128, 1, 1>(elt, blocks, smem, st, xt, offset, mask, a, bias, y, part, g); break;
    case WG_128x128: ce = launch16<128, 128, 2, 1>(elt, blocks, smem, st, xt, offset, mask, a, bias, y, part, g); break;
    case WG_256x128K64:
        ce = launch16<256, 128, 1, 2>(elt, blocks, smem, st, xt, offset, mask, a, bias, y, part, g);
        break;
    case WG_64x128: ce = launch16<64, 128, 2, 1>(elt, blocks, smem, st, xt, offset, mask, a, bias, y, part, g); break;
    case WG_F32_256x128:
        ce = launch_t<2, 256, 128, 1, 1>(blocks, smem, st, xt, offset, mask, a, a2, bias, y, part, g);
        break;
    case WG_F32_128x128:
        if (g.flags & 2) /* benchmarks: the form with three stages, one block a multiprocessor */
            ce = launch_t<2, 128, 128, 1, 1, 0>(blocks, tile_smem_as(tile, 0, g.kk, g.kcs), st, xt, offset, mask, a,
                                                a2, bias, y, part, g);
        else
            ce = launch_t<2, 128, 128, 2, 1, 1>(blocks, smem, st, xt, offset, mask, a, a2, bias, y, part, g);
        break;
    default: ce = launch_t<2, 64, 128, 2, 1>(blocks, smem, st, xt, offset, mask, a, a2, bias, y, part, g); break;
    }
    if (ce != cudaSuccess) return wfail(err, cap, elt, "fused kernel", ce);
    if (g.split > 1) {
        const int64_t total = (int64_t)g.cout * g.ncols;
        const unsigned nb = (unsigned)((total + 255) / 256);
        /* a programmatic dependent of the fused kernel, which lets it launch
         * once every tile has begun: its blocks wait (dep_wait) for the fused
         * grid's end and its partial sums, but the launch is paid before */
        if (elt == PRT_DCN_F32)
            ce = launch_dep(wg_splitk_sum_f32, nb, 256, 0, st, (const float *)part, bias, y, g, total, wg_bm[tile],
                            wg_bn[tile]);
        else if (elt == PRT_DCN_BF16)
            ce = launch_dep(wg_splitk_sum<1>, nb, 256, 0, st, (const float *)part, bias, y, g, total);
        else
            ce = launch_dep(wg_splitk_sum<0>, nb, 256, 0, st, (const float *)part, bias, y, g, total);
        if (ce != cudaSuccess) return wfail(err, cap, elt, "split-K sum kernel", ce);
    }
    return 0;
}
