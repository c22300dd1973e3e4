/*
 * nms/nms_cuda.cu - CUDA execution of the NMS pipeline of nms.h, all on one
 * stream without host synchronisation (ONNX reports its row count with
 * prt_exec.set_output_extent_device; only a host without that member makes
 * the plugin copy the count back and wait for it). Two ways, chosen from the
 * run's shapes:
 *
 *   segment path (at most kSegMaxPre candidates per segment enter NMS: every
 *   BatchedNMS and EfficientNMS run, ONNX with N <= kSegMaxPre): one block per
 *   segment (1024 threads when every segment has a multiprocessor, else 256)
 *   does everything in shared memory:
 *     1. collect the segment's candidate keys (64-bit: score, index): with
 *        few, short segments the block reads its scores itself ("direct");
 *        otherwise one pass over all scores (filter_kernel) has already put
 *        them into the segment's slice of the key buffer (atomic slots),
 *     2. with more candidates than enter NMS, a radix select (8 bits a
 *        pass, from the top) finds the pre_len-th largest key,
 *     3. sort those keys, descending (by rank when few, else bitonic);
 *        decode their boxes,
 *     4. greedy NMS in tiles of 64 sorted boxes (block_greedy): the block
 *        builds the tile's IoU bitmask, one warp walks it in order, then the
 *        block lets the tile's kept boxes remove every later box; stops at
 *        the segment's keep cap. EfficientNMS writes its rows here.
 *   Then per image: BatchedNMS merges the classes (batched_out_kernel: the
 *   out_cap best of all kept boxes by a radix select, then in order), ONNX
 *   scans the counts and scatters rows.
 *
 *   long path (ONNX with N > kSegMaxPre): the scores become sort keys that
 *   also hold the segment (long_keys_kernel), one cub::DeviceRadixSort over
 *   the whole GPU orders every segment at once, then one cooperative kernel
 *   (long_kernel) runs greedy NMS over windows of each segment's sorted
 *   candidates: (A) the whole grid tests every window candidate against the
 *   boxes the segment has kept so far, (B) one block per segment takes the
 *   window's survivors, at most kLongSurv of them, in order through
 *   block_greedy and appends the kept ones; grid-wide barriers between the
 *   phases. Windows grow while few candidates survive them. ONNX's scan and
 *   scatter kernels follow.
 *
 * Both make exactly the IoU decisions of the CPU's greedy walk, in the same
 * order, so the result is bit-identical.
 */
#include <cooperative_groups.h>
#include <cub/cub.cuh>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "nms.h"

namespace cg = cooperative_groups;

namespace {

constexpr int kBlock = 256;
constexpr int kTile = 64;
/* The segment path: candidates per segment that enter NMS, at most. */
constexpr int64_t kSegMaxPre = 4096;
/* Threads per segment block: many when the segments fit on the GPU at
 * once (latency), else few (more blocks per multiprocessor). */
constexpr int kSegMaxThreads = 1024;
constexpr int kSegThreads = 256;
/* Sorts of at most this many keys rank each key by counting (one barrier),
 * larger ones are bitonic. */
constexpr int kRankSortMax = 512;
/* Direct collection (no filter pass, no memset): at most this many
 * segments (one wave of blocks) of at most this many scores each. */
constexpr int64_t kDirectMaxSegs = 256;
constexpr int64_t kDirectMaxLen = 16384;
constexpr int kDirectLoads = 8;
/* The long path: threads per block (one block per multiprocessor), window
 * survivors resolved per round, first and largest window. */
constexpr int kLongThreads = 512;
constexpr int kLongSurv = 1024;
constexpr int64_t kLongWin0 = 512;
constexpr int64_t kLongWinMax = 65536;

struct dev_io {
    const void *boxes, *scores, *anchors;
    const int64_t *max_per_class;
    const float *iou_thr, *score_thr;
    int32_t *num_det;
    void *out_boxes, *out_scores, *out_classes;
    int64_t *selected;
};

/* One segment of the long path between rounds. */
struct long_state {
    int64_t K;    /* candidates */
    int64_t p;    /* first position not yet decided (a multiple of 32 until the end) */
    int64_t nk;   /* kept so far */
    int64_t W;    /* next window */
    int64_t done;
};

struct layout {
    int64_t nseg, cap, pre_len, keep_len;
    int use_long;    /* the long path */
    int direct;      /* segment path: blocks collect their own candidates */
    int n2cap;       /* segment path: keys sorted in shared memory, at most */
    size_t smem;     /* segment path: dynamic shared memory per block */
    int ib, kbits;   /* long path: index bits and sort key bits */
    size_t counts, keys_in, keys_out, boxes, kept, kept_n, kept_pos, offsets, surv, state, temp;
    size_t temp_bytes, total;
};

size_t align256(size_t x) { return (x + 255) & ~(size_t)255; }

__device__ __forceinline__ float ld(const void *p, int fp16, int64_t i)
{
    return fp16 ? __half2float(((const __half *)p)[i]) : ((const float *)p)[i];
}

__device__ __forceinline__ void st(void *p, int fp16, int64_t i, float v)
{
    if (fp16)
        ((__half *)p)[i] = __float2half_rn(v);
    else
        ((float *)p)[i] = v;
}

__device__ __forceinline__ int64_t cls_of(const prt__nms_params &p, int64_t seg, int64_t idx)
{
    return p.kind == PRT_NMS_EFFICIENT ? idx % p.C : seg % p.C;
}

__device__ void dev_box(const prt__nms_params &p, const dev_io &io, int64_t seg, int64_t idx, float *out,
                        prt_nms_box *iou)
{
    int64_t b, n, c;
    if (p.kind == PRT_NMS_EFFICIENT) {
        b = seg; n = idx / p.C; c = idx % p.C;
    } else {
        b = seg / p.C; n = idx; c = seg % p.C;
    }
    int64_t l = p.box_classes == 1 ? 0 : c;
    int64_t base = ((b * p.N + n) * p.box_classes + l) * 4;
    float raw[4], anc[4] = {0, 0, 0, 0};
    int fp16 = p.kind == PRT_NMS_ONNX ? 0 : p.fp16;
    for (int k = 0; k < 4; k++) raw[k] = ld(io.boxes, fp16, base + k);
    if (io.anchors && (p.box_mode == PRT_NMS_BOX_ANCHOR_CORNERS || p.box_mode == PRT_NMS_BOX_ANCHOR_CENTER)) {
        int64_t ab = ((p.anchors_batched ? b : 0) * p.N + n) * 4;
        for (int k = 0; k < 4; k++) anc[k] = ld(io.anchors, fp16, ab + k);
    }
    prt_nms_decode(p.box_mode, raw, anc, out, iou, !(p.kind == PRT_NMS_ONNX && p.box_mode == PRT_NMS_BOX_CENTER));
}

/* The score test of this run (ONNX: from its optional input). */
__device__ __forceinline__ void score_rule(const prt__nms_params &p, const dev_io &io, int *has_thr, float *thr)
{
    *has_thr = p.has_score_thr;
    *thr = p.score_thr;
    if (p.kind == PRT_NMS_ONNX) {
        *has_thr = io.score_thr != nullptr;
        *thr = *has_thr ? io.score_thr[0] : 0.0f;
    }
}

/* The segment's keep cap and IoU threshold, after the ONNX inputs. */
__device__ __forceinline__ int64_t seg_keep_cap(const prt__nms_params &p, const dev_io &io, int64_t keep_len)
{
    int64_t keep_cap = p.keep_cap < keep_len ? p.keep_cap : keep_len;
    if (p.kind == PRT_NMS_ONNX) {
        int64_t m = io.max_per_class ? io.max_per_class[0] : 0;
        if (m < 0) m = 0;
        if (m < keep_cap) keep_cap = m;
    }
    return keep_cap;
}

__device__ __forceinline__ float seg_iou_thr(const prt__nms_params &p, const dev_io &io)
{
    if (p.kind == PRT_NMS_ONNX) return io.iou_thr ? io.iou_thr[0] : 0.0f;
    return p.iou_thr;
}

/* Does the earlier box a (class ca) suppress the later box b? */
__device__ __forceinline__ bool pair_suppresses(const prt__nms_params &p, int check_cls, float thr, const prt_nms_box &a,
                                                int ca, const prt_nms_box &b, int cb)
{
    if (check_cls && ca != cb) return false;
    return prt_nms_suppresses(prt_nms_iou(a, b, p.size_off), thr, p.iou_ge) != 0;
}

/* ---- the filter pass (segment path with many or long segments) --------- */

/* One candidate test; the index arithmetic only runs for candidates, each
 * of which takes its segment's next slot with an atomic of its own. */
__device__ __forceinline__ void filter_one(const prt__nms_params &p, int has_thr, float thr, float s, int64_t e,
                                           unsigned *counts, uint64_t *keys, int64_t cap)
{
    if (has_thr && !prt_nms_passes(s, thr, p.score_ge)) return;
    int64_t seg, idx, c;
    if (p.kind == PRT_NMS_ONNX) {
        /* scores [B, C, N] */
        seg = e / p.N;
        idx = e - seg * p.N;
        c = seg % p.C;
    } else if (p.kind == PRT_NMS_EFFICIENT) {
        seg = e / (p.N * p.C);
        idx = e - seg * (p.N * p.C);
        c = idx % p.C;
    } else {
        /* scores [B, N, C] */
        int64_t b = e / (p.N * p.C), r = e - b * (p.N * p.C);
        idx = r / p.C;
        c = r - idx * p.C;
        seg = b * p.C + c;
    }
    if (p.background >= 0 && c == p.background) return;
    unsigned pos = atomicAdd(&counts[seg], 1u);
    keys[seg * cap + pos] = prt_nms_key(s, (uint32_t)idx);
}

__global__ void __launch_bounds__(kBlock) filter_kernel(prt__nms_params p, dev_io io, unsigned *counts, uint64_t *keys, int64_t cap,
                              int64_t total)
{
    int has_thr;
    float thr;
    score_rule(p, io, &has_thr, &thr);
    const int fp16 = p.kind == PRT_NMS_ONNX ? 0 : p.fp16;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    int64_t start = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (!fp16 && ((uintptr_t)io.scores & 15) == 0) {
        /* fp32: 16-byte loads, then the tail */
        const float4 *s4 = (const float4 *)io.scores;
        const int64_t n4 = total / 4;
        for (int64_t e = start; e < n4; e += stride) {
            float4 v = s4[e];
            filter_one(p, has_thr, thr, v.x, 4 * e + 0, counts, keys, cap);
            filter_one(p, has_thr, thr, v.y, 4 * e + 1, counts, keys, cap);
            filter_one(p, has_thr, thr, v.z, 4 * e + 2, counts, keys, cap);
            filter_one(p, has_thr, thr, v.w, 4 * e + 3, counts, keys, cap);
        }
        start += n4 * 4;
    }
    for (int64_t e = start; e < total; e += stride) filter_one(p, has_thr, thr, ld(io.scores, fp16, e), e, counts, keys, cap);
}

/* ---- block-wide building blocks ---------------------------------------- */

/* Descending bitonic sort of n2 keys (a power of two) in shared memory.
 * The caller synchronises before; the keys are sorted for the whole block
 * on return. */
__device__ void block_sort_desc(uint64_t *sk, int n2)
{
    const int half = n2 >> 1;
    for (int k = 2; k <= n2; k <<= 1) {
        for (int j = k >> 1; j > 0; j >>= 1) {
            for (int q = threadIdx.x; q < half; q += blockDim.x) {
                const int i = ((q & ~(j - 1)) << 1) | (q & (j - 1)), ixj = i + j;
                const uint64_t x = sk[i], y = sk[ixj];
                if ((i & k) == 0 ? x < y : x > y) {
                    sk[i] = y;
                    sk[ixj] = x;
                }
            }
            __syncthreads();
        }
    }
}

/* The same for any n keys: padded with zero keys to a power of two (the
 * buffer must hold it). The caller synchronises before. */
__device__ void block_sort_desc_pad(uint64_t *sk, int n)
{
    int n2 = 1;
    while (n2 < n) n2 <<= 1;
    for (int i = n + (int)threadIdx.x; i < n2; i += blockDim.x) sk[i] = 0;
    __syncthreads();
    block_sort_desc(sk, n2);
}

/* The need-th largest of the n distinct keys k[0..n) (1 <= need <= n):
 * exactly `need` keys are >= the value returned. A radix select over 8-bit
 * digits from the top, which stops once every key sharing the prefix found
 * so far is taken. Every thread of the block calls it. */
__device__ uint64_t block_select(const uint64_t *k, int64_t n, int64_t need)
{
    __shared__ unsigned hist[256];
    __shared__ int s_digit;
    __shared__ unsigned s_above;
    uint64_t prefix = 0;
    unsigned left = (unsigned)need;
    for (int shift = 56; shift >= 0; shift -= 8) {
        const uint64_t hmask = shift == 56 ? 0ull : ~0ull << (shift + 8);
        for (int i = threadIdx.x; i < 256; i += blockDim.x) hist[i] = 0;
        __syncthreads();
        for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
            const uint64_t key = k[i];
            if ((key & hmask) == prefix) atomicAdd(&hist[(unsigned)(key >> shift) & 255u], 1u);
        }
        __syncthreads();
        if (threadIdx.x < 32) {
            /* lane l holds digits 255 - 8l down to 248 - 8l */
            const int lane = threadIdx.x;
            unsigned c[8], sum = 0, inc;
#pragma unroll
            for (int q = 0; q < 8; q++) {
                c[q] = hist[255 - 8 * lane - q];
                sum += c[q];
            }
            inc = sum;
#pragma unroll
            for (int o = 1; o < 32; o <<= 1) {
                const unsigned v = __shfl_up_sync(0xffffffffu, inc, o);
                if (lane >= o) inc += v;
            }
            unsigned cum = inc - sum;
            if (cum < left && left <= inc) {
#pragma unroll
                for (int q = 0; q < 8; q++) {
                    if (cum + c[q] >= left) {
                        s_digit = 255 - 8 * lane - q;
                        s_above = cum;
                        break;
                    }
                    cum += c[q];
                }
            }
        }
        __syncthreads();
        const int d = s_digit;
        left -= s_above;
        prefix |= (uint64_t)d << shift;
        const bool all = hist[d] == left;
        __syncthreads(); /* before hist is cleared again */
        if (all) break;
    }
    return prefix;
}

/* Greedy NMS over box[0..n) of one segment, in sorted order, inside one
 * block; rem[i] != 0 marks a box already removed. The boxes are taken kTile
 * at a time: the block builds the tile's suppression bitmask (row r, bit k:
 * box t0 + r suppresses box t0 + k > t0 + r, both standing; one thread per
 * pair), one warp walks it in order and keeps what stands, then the block
 * tests every (later standing box, kept box) pair, one per thread, and
 * removes what the kept boxes suppress. keep(i, slot) is called by one thread
 * for each kept box, in order, slot counting on from `total`; stops at
 * keep_cap. Returns the new total. Every thread of the block calls it (a
 * multiple of 32 threads); the caller synchronises before (box, cls and rem
 * written). */
template <class Keep>
__device__ int64_t block_greedy(const prt__nms_params &p, float thr, int check_cls, const prt_nms_box *box,
                                const int *cls, unsigned char *rem, int64_t n, int64_t total, int64_t keep_cap,
                                Keep keep)
{
    __shared__ unsigned s_mask[2 * kTile]; /* row r: columns 0-31 in [2r], 32-63 in [2r + 1] */
    __shared__ int s_kept[kTile];
    __shared__ int s_nk;
    const int lane = threadIdx.x & 31;
    for (int64_t t0 = 0; t0 < n && total < keep_cap; t0 += kTile) {
        /* the same in every warp: rem is not written until the barriers below */
        const unsigned lo = __ballot_sync(0xffffffffu, t0 + lane < n && !rem[t0 + lane]);
        const unsigned hi = __ballot_sync(0xffffffffu, t0 + 32 + lane < n && !rem[t0 + 32 + lane]);
        const uint64_t alive = (uint64_t)lo | (uint64_t)hi << 32;
        if (alive == 0) continue;
        /* each warp fills half rows: kTile * kTile is a multiple of blockDim.x */
        for (int u = threadIdx.x; u < kTile * kTile; u += blockDim.x) {
            const int r = u / kTile, k = u % kTile;
            /* a half row whose row is removed, whose columns are all removed
             * or at or before the row, has no bits: the same in the whole warp */
            const uint64_t cols = alive >> (k & ~31) & 0xffffffffu;
            if (!((alive >> r) & 1u) || cols == 0 || (k | 31) <= r) {
                if (lane == 0) s_mask[u / 32] = 0;
                continue;
            }
            bool s = false;
            if (k > r && ((alive >> k) & 1u)) {
                const int64_t i = t0 + r, j = t0 + k;
                s = pair_suppresses(p, check_cls, thr, box[i], check_cls ? cls[i] : 0, box[j], check_cls ? cls[j] : 0);
            }
            const unsigned m = __ballot_sync(0xffffffffu, s);
            if (lane == 0) s_mask[u / 32] = m;
        }
        __syncthreads();
        if (threadIdx.x < 32) {
            uint64_t a = alive;
            int nk = 0;
            while (a && total + nk < keep_cap) {
                const int i = __ffsll((long long)a) - 1;
                if (lane == 0) {
                    s_kept[nk] = (int)(t0 + i);
                    keep(t0 + i, total + nk);
                }
                nk++;
                a &= ~(1ull << i);
                a &= ~((uint64_t)s_mask[2 * i] | (uint64_t)s_mask[2 * i + 1] << 32);
            }
            if (lane == 0) s_nk = nk;
        }
        __syncthreads();
        const int nk = s_nk;
        total += nk;
        if (total < keep_cap) {
            /* n <= 2^16 here (4096 in shared memory, kLongSurv): 32-bit pair indices */
            const int j0 = (int)t0 + kTile, pairs = ((int)n - j0) * nk;
            for (int u = threadIdx.x; u < pairs; u += blockDim.x) {
                const int j = j0 + (int)((unsigned)u / (unsigned)nk);
                const int i = s_kept[(unsigned)u % (unsigned)nk];
                if (rem[j]) continue;
                if (pair_suppresses(p, check_cls, thr, box[i], check_cls ? cls[i] : 0, box[j], check_cls ? cls[j] : 0))
                    rem[j] = 1; /* several threads may store the same 1 */
            }
        }
        __syncthreads();
    }
    return total;
}

/* ---- rows ---------------------------------------------------------------- */

__device__ void emit(const prt__nms_params &p, const dev_io &io, int64_t b, int64_t row, int64_t seg,
                     int64_t idx, float score)
{
    float o[4];
    prt_nms_box unused;
    int64_t r = b * p.out_cap + row;
    dev_box(p, io, seg, idx, o, &unused);
    for (int k = 0; k < 4; k++) {
        float v = o[k];
        if (p.clip) v = v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
        st(io.out_boxes, p.fp16, r * 4 + k, v);
    }
    int64_t c = cls_of(p, seg, idx);
    if (p.kind == PRT_NMS_BATCHED) {
        st(io.out_scores, p.fp16, r, score);
        st(io.out_classes, p.fp16, r, (float)c);
    } else {
        st(io.out_scores, p.fp16, r, p.activation ? 1.0f / (1.0f + expf(-score)) : score);
        ((int32_t *)io.out_classes)[r] = (int32_t)c;
    }
}

__device__ void pad(const prt__nms_params &p, const dev_io &io, int64_t b, int64_t row)
{
    int64_t r = b * p.out_cap + row;
    for (int k = 0; k < 4; k++) st(io.out_boxes, p.fp16, r * 4 + k, 0.0f);
    st(io.out_scores, p.fp16, r, 0.0f);
    if (p.kind == PRT_NMS_BATCHED)
        st(io.out_classes, p.fp16, r, -1.0f);
    else
        ((int32_t *)io.out_classes)[r] = 0;
}

/* ---- the segment path ---------------------------------------------------- */

/* The t-th score of segment seg, as an element index of the scores tensor. */
__device__ __forceinline__ int64_t seg_elem(const prt__nms_params &p, int64_t seg, int64_t t, int64_t len)
{
    if (p.kind == PRT_NMS_BATCHED) { /* [B, N, C], segment (b, c) */
        const int64_t b = seg / p.C;
        return (b * p.N + t) * p.C + (seg - b * p.C);
    }
    return seg * len + t; /* ONNX [B, C, N], EfficientNMS [B, N * C] */
}

/* One block per segment (any multiple of 32 threads up to kSegMaxThreads).
 * Dynamic shared memory: n2cap keys, then pre_len boxes, classes and removed
 * flags. `keys` is the segment's slice of the key buffer (cap entries):
 * filled by filter_kernel (counts[seg] of them), or by this kernel when
 * `direct`. */
__global__ void __launch_bounds__(kSegMaxThreads)
segment_kernel(prt__nms_params p, dev_io io, const unsigned *counts, uint64_t *keys, int64_t cap, int64_t pre_len,
               int n2cap, int64_t keep_len, uint64_t *kept, int *kept_n, int direct)
{
    extern __shared__ uint64_t s_dyn[];
    uint64_t *s_key = s_dyn;
    prt_nms_box *s_box = (prt_nms_box *)(s_key + n2cap);
    int *s_cls = (int *)(s_box + pre_len);
    unsigned char *s_rem = (unsigned char *)(s_cls + pre_len);
    __shared__ unsigned s_n;
    const int64_t seg = blockIdx.x;
    const int tid = threadIdx.x, nt = blockDim.x, lane = tid & 31;
    uint64_t *gk = keys + seg * cap;
    int64_t K;
    if (tid == 0) s_n = 0;
    __syncthreads();
    if (direct) {
        int has_thr;
        float thr;
        score_rule(p, io, &has_thr, &thr);
        const int fp16 = p.kind == PRT_NMS_ONNX ? 0 : p.fp16;
        const bool eff = p.kind == PRT_NMS_EFFICIENT;
        /* BatchedNMS's background class has no candidates at all */
        const bool none = !eff && p.background >= 0 && seg % p.C == p.background;
        /* alike in every lane of a warp; kDirectLoads loads in flight per thread */
        for (int64_t t0 = tid; t0 - lane < cap && !none; t0 += kDirectLoads * nt) {
            float s[kDirectLoads];
#pragma unroll
            for (int q = 0; q < kDirectLoads; q++) {
                const int64_t t = t0 + q * nt;
                s[q] = t < cap ? ld(io.scores, fp16, seg_elem(p, seg, t, cap)) : 0.0f;
            }
#pragma unroll
            for (int q = 0; q < kDirectLoads; q++) {
                const int64_t t = t0 + q * nt;
                const bool ok = t < cap && (!has_thr || prt_nms_passes(s[q], thr, p.score_ge)) &&
                                !(eff && p.background >= 0 && t % p.C == p.background);
                const unsigned m = __ballot_sync(0xffffffffu, ok);
                unsigned pos = 0;
                if (lane == 0 && m) pos = atomicAdd(&s_n, (unsigned)__popc(m));
                pos = __shfl_sync(0xffffffffu, pos, 0) + __popc(m & ((1u << lane) - 1u));
                if (ok) {
                    const uint64_t key = prt_nms_key(s[q], (uint32_t)t);
                    gk[pos] = key;
                    if (pos < (unsigned)n2cap) s_key[pos] = key;
                }
            }
        }
        __syncthreads();
        K = s_n;
    } else {
        K = counts[seg];
        if (K <= pre_len)
            for (int64_t i = tid; i < K; i += nt) s_key[i] = gk[i];
    }
    if (K > pre_len) {
        /* the pre_len best, in any order */
        const uint64_t t = block_select(gk, K, pre_len);
        if (tid == 0) s_n = 0;
        __syncthreads();
        for (int64_t i = tid; i < K; i += nt) {
            const uint64_t key = gk[i];
            if (key >= t) s_key[atomicAdd(&s_n, 1u)] = key;
        }
        K = pre_len;
    }
    __syncthreads();
    if (K <= nt && K <= kRankSortMax) {
        /* few keys: each thread places its key at its rank */
        const uint64_t mine = tid < K ? s_key[tid] : 0;
        int r = 0;
        if (tid < K)
            for (int j = 0; j < (int)K; j++) r += s_key[j] > mine;
        __syncthreads();
        if (tid < K) s_key[r] = mine;
    } else {
        block_sort_desc_pad(s_key, (int)K);
    }
    __syncthreads();
    for (int64_t i = tid; i < K; i += nt) {
        float o[4];
        const int64_t idx = prt_nms_key_idx(s_key[i]);
        dev_box(p, io, seg, idx, o, &s_box[i]);
        s_cls[i] = (int)cls_of(p, seg, idx);
        s_rem[i] = 0;
    }
    __syncthreads();
    uint64_t *out = kept + seg * (keep_len ? keep_len : 1);
    const int check_cls = p.kind == PRT_NMS_EFFICIENT && !p.agnostic;
    const int64_t total = block_greedy(p, seg_iou_thr(p, io), check_cls, s_box, s_cls, s_rem, K, 0,
                                       seg_keep_cap(p, io, keep_len),
                                       [&](int64_t i, int64_t slot) { out[slot] = s_key[i]; });
    if (tid == 0) kept_n[seg] = (int)total;
    if (p.kind == PRT_NMS_EFFICIENT) {
        /* the segment is the image: its rows */
        const int64_t n = total < p.out_cap ? total : p.out_cap;
        for (int64_t r = tid; r < p.out_cap; r += nt) {
            if (r < n)
                emit(p, io, seg, r, seg, prt_nms_key_idx(out[r]), prt_nms_key_score(out[r]));
            else
                pad(p, io, seg, r);
        }
        if (tid == 0) io.num_det[seg] = (int32_t)n;
    }
}

/* Entries of a descending list whose score is > s (or >= s when `ge`). */
__device__ int count_above(const uint64_t *k, int n, float s, int ge)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = (lo + hi) >> 1;
        float v = prt_nms_key_score(k[mid]);
        if (ge ? v >= s : v > s)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* BatchedNMS merge key: orderable score (32 bits), then 0xFFFFF - class
 * (20 bits), then 0xFFF - rank (12 bits), so that descending order is
 * score desc, class asc, rank asc. Needs C <= 2^20 and rank < 4096. */
constexpr int kMergeThreads = 1024;
constexpr int kMergeMax = 8192; /* keys sorted in shared memory (64 KiB) */

__device__ __forceinline__ uint64_t merge_key(uint64_t key, int64_t c, int64_t j)
{
    return (key & 0xffffffff00000000ull) | ((uint64_t)(0xfffff - c) << 12) | (uint64_t)(0xfff - j);
}

/* Row `row` of image b: the kept box named by merge key mk. */
__device__ void merge_emit(const prt__nms_params &p, const dev_io &io, const uint64_t *kept, int64_t row_len, int64_t b,
                           int64_t row, uint64_t mk)
{
    const int64_t c = 0xfffff - (int64_t)((mk >> 12) & 0xfffff), j = 0xfff - (int64_t)(mk & 0xfff);
    const uint64_t key = kept[(b * p.C + c) * row_len + j];
    emit(p, io, b, row, b * p.C + c, prt_nms_key_idx(key), prt_nms_key_score(key));
}

/* Per image: the kept boxes of all classes in (score desc, class asc, rank
 * asc) order, the first out_cap of them as rows. With at most kMergeMax
 * kept boxes (and use_sort): their merge keys in shared memory, the out_cap
 * best found by a radix select, then ordered by rank or bitonic sort; with
 * more, each kept box finds its row by binary searches in the other
 * classes' lists. */
__global__ void __launch_bounds__(kMergeThreads)
batched_out_kernel(prt__nms_params p, dev_io io, const uint64_t *kept, const int *kept_n, int64_t keep_len,
                   int use_sort)
{
    typedef cub::BlockScan<int, kMergeThreads> scan_t;
    extern __shared__ uint64_t sk[];
    __shared__ typename scan_t::TempStorage scan_tmp;
    __shared__ int s_off[kMergeThreads + 1];
    __shared__ unsigned s_n;
    const int64_t b = blockIdx.x;
    const int64_t row_len = keep_len ? keep_len : 1;
    const int tid = threadIdx.x;
    int64_t total = 0;
    /* Gather the merge keys, kMergeThreads classes at a time: offsets by a
     * scan of the counts, then one thread per kept box. */
    for (int64_t c0 = 0; c0 < p.C; c0 += kMergeThreads) {
        const int64_t c = c0 + tid;
        const int n = c < p.C ? kept_n[b * p.C + c] : 0;
        int off, agg;
        scan_t(scan_tmp).ExclusiveSum(n, off, agg);
        s_off[tid] = off;
        if (tid == 0) s_off[kMergeThreads] = agg;
        __syncthreads();
        for (int t = tid; t < agg; t += kMergeThreads) {
            int lo = 0, hi = kMergeThreads; /* the class: last offset <= t */
            while (hi - lo > 1) {
                const int mid = (lo + hi) >> 1;
                if (s_off[mid] <= t)
                    lo = mid;
                else
                    hi = mid;
            }
            const int64_t j = t - s_off[lo], slot = total + t;
            if (use_sort && slot < kMergeMax) sk[slot] = merge_key(kept[(b * p.C + c0 + lo) * row_len + j], c0 + lo, j);
        }
        total += agg;
        __syncthreads();
    }
    const int64_t nrows = total < p.out_cap ? total : p.out_cap;
    if (use_sort && total <= kMergeMax) {
        int64_t n = total;
        if (n > nrows) {
            /* keep the nrows best (in any order), in front */
            const uint64_t t = block_select(sk, n, nrows);
            uint64_t mine[kMergeMax / kMergeThreads];
#pragma unroll
            for (int q = 0; q < kMergeMax / kMergeThreads; q++) {
                const int64_t i = tid + q * kMergeThreads;
                mine[q] = i < n ? sk[i] : 0;
            }
            if (tid == 0) s_n = 0;
            __syncthreads();
#pragma unroll
            for (int q = 0; q < kMergeMax / kMergeThreads; q++)
                if (tid + q * kMergeThreads < n && mine[q] >= t) sk[atomicAdd(&s_n, 1u)] = mine[q];
            __syncthreads();
            n = nrows;
        }
        if (n <= kRankSortMax) {
            /* each key's row is its rank */
            for (int64_t i = tid; i < n; i += kMergeThreads) {
                const uint64_t mk = sk[i];
                int r = 0;
                for (int j = 0; j < (int)n; j++) r += sk[j] > mk;
                merge_emit(p, io, kept, row_len, b, r, mk);
            }
        } else {
            block_sort_desc_pad(sk, (int)n);
            for (int64_t r = tid; r < n; r += kMergeThreads) merge_emit(p, io, kept, row_len, b, r, sk[r]);
        }
    } else {
        /* Each kept box finds its row by counting, in every other class,
         * the boxes that come before it. */
        for (int64_t e = tid; e < p.C * row_len; e += blockDim.x) {
            int64_t c = e / row_len, j = e - c * row_len, seg = b * p.C + c;
            if (j >= kept_n[seg]) continue;
            uint64_t key = kept[seg * row_len + j];
            float s = prt_nms_key_score(key);
            int64_t pos = j;
            for (int64_t c2 = 0; c2 < p.C && pos < p.out_cap; c2++) {
                if (c2 == c) continue;
                pos += count_above(kept + (b * p.C + c2) * row_len, kept_n[b * p.C + c2], s, c2 < c);
            }
            if (pos < p.out_cap) emit(p, io, b, pos, seg, prt_nms_key_idx(key), s);
        }
    }
    for (int64_t r = nrows + tid; r < p.out_cap; r += blockDim.x) pad(p, io, b, r);
    if (tid == 0) io.num_det[b] = (int32_t)nrows;
}

/* One block: exclusive scan of the kept counts into offsets[0..nseg]. */
constexpr int kScanThreads = 256;

__global__ void __launch_bounds__(kScanThreads) onnx_scan_kernel(const int *kept_n, int64_t *offsets, int64_t nseg)
{
    typedef cub::BlockScan<int64_t, kScanThreads> scan_t;
    __shared__ typename scan_t::TempStorage tmp;
    __shared__ int64_t carry;
    if (threadIdx.x == 0) carry = 0;
    __syncthreads();
    for (int64_t base = 0; base < nseg; base += kScanThreads) {
        int64_t i = base + threadIdx.x;
        int64_t v = i < nseg ? kept_n[i] : 0, ex, agg;
        scan_t(tmp).ExclusiveSum(v, ex, agg);
        if (i < nseg) offsets[i] = carry + ex;
        __syncthreads();
        if (threadIdx.x == 0) carry += agg;
        __syncthreads();
    }
    if (threadIdx.x == 0) offsets[nseg] = carry;
}

__global__ void __launch_bounds__(kBlock) onnx_out_kernel(prt__nms_params p, const uint64_t *kept, const int *kept_n,
                                const int64_t *offsets, int64_t keep_len, int64_t *sel)
{
    const int64_t seg = blockIdx.x;
    const int64_t row_len = keep_len ? keep_len : 1;
    for (int64_t j = threadIdx.x; j < kept_n[seg]; j += blockDim.x) {
        int64_t r = offsets[seg] + j;
        sel[r * 3 + 0] = seg / p.C;
        sel[r * 3 + 1] = seg % p.C;
        sel[r * 3 + 2] = prt_nms_key_idx(kept[seg * row_len + j]);
    }
}

/* ---- the long path (ONNX, N > kSegMaxPre) --------------------------------- */

/* Sort keys for all segments at once: (nseg - 1 - segment) in the top bits,
 * then the orderable score (32 bits), then (2^ib - 1 - n) in the low ib
 * bits, 2^ib > N; a box that fails the score test gets only the segment
 * bits. One descending sort then leaves segment s in [s N, (s + 1) N): its
 * candidates (score desc, index asc), then its failures, the only keys whose
 * low 32 + ib bits are all zero. */
__device__ __forceinline__ uint64_t long_key(int has_thr, float thr, float s, int64_t e, int64_t N, int ib,
                                             int64_t segmax)
{
    const int64_t seg = e / N, n = e - seg * N;
    const uint64_t hi = (uint64_t)(segmax - seg) << (32 + ib);
    if (has_thr && !prt_nms_passes(s, thr, 0)) return hi;
    return hi | ((prt_nms_key(s, 0) >> 32) << ib) | (((1ull << ib) - 1) - (uint64_t)n);
}

__global__ void __launch_bounds__(kBlock)
long_keys_kernel(dev_io io, uint64_t *keys, int64_t total, int64_t N, int ib, int64_t segmax)
{
    const int has_thr = io.score_thr != nullptr;
    const float thr = has_thr ? io.score_thr[0] : 0.0f;
    const float *sc = (const float *)io.scores;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    int64_t start = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (((uintptr_t)sc & 15) == 0) {
        const float4 *s4 = (const float4 *)sc;
        const int64_t n4 = total / 4;
        for (int64_t e = start; e < n4; e += stride) {
            const float4 v = s4[e];
            keys[4 * e + 0] = long_key(has_thr, thr, v.x, 4 * e + 0, N, ib, segmax);
            keys[4 * e + 1] = long_key(has_thr, thr, v.y, 4 * e + 1, N, ib, segmax);
            keys[4 * e + 2] = long_key(has_thr, thr, v.z, 4 * e + 2, N, ib, segmax);
            keys[4 * e + 3] = long_key(has_thr, thr, v.w, 4 * e + 3, N, ib, segmax);
        }
        start += n4 * 4;
    }
    for (int64_t e = start; e < total; e += stride) keys[e] = long_key(has_thr, thr, sc[e], e, N, ib, segmax);
}

/* Greedy NMS of every segment in rounds, one block per multiprocessor,
 * launched cooperatively (grid-wide barriers). Per segment, a round takes
 * the window of W sorted candidates from position p:
 *   A. the whole grid tests each window candidate against the segment's
 *      kept boxes (all before p; each block stages them in shared memory);
 *      bit t of surv: candidate p + t still stands,
 *   B. one block lists the standing ones in order, at most kLongSurv (with
 *      more, the window ends at the multiple of 32 at or below the next
 *      one's position; the rest are tested again next round), runs
 *      block_greedy over them and appends the kept ones; the window grows
 *      4x when at most half of kLongSurv stood, halves when it was cut.
 * A candidate stands in A exactly when no kept box before the window
 * suppresses it, and B applies the greedy rule inside the window in order:
 * the decisions of the sequential walk. keys: sorted (long_key); kept gets
 * standard keys (prt_nms_key, score 0) for onnx_out_kernel. */
__global__ void __launch_bounds__(kLongThreads, 1)
long_kernel(prt__nms_params p, dev_io io, const uint64_t *keys, int64_t N, int ib, int64_t nseg, prt_nms_box *boxes,
            int *kept_pos, uint64_t *kept, int *kept_n, unsigned *surv, long_state *st)
{
    typedef cub::BlockScan<int, kLongThreads> scan_t;
    __shared__ typename scan_t::TempStorage scan_tmp;
    __shared__ int s_pos[kLongSurv + 1];
    __shared__ prt_nms_box s_box[kLongSurv];
    __shared__ unsigned char s_rem[kLongSurv];
    cg::grid_group grid = cg::this_grid();
    const int tid = threadIdx.x;
    const int64_t gtid = (int64_t)blockIdx.x * blockDim.x + tid, gsize = (int64_t)gridDim.x * blockDim.x;
    const uint64_t low = (1ull << (32 + ib)) - 1, imask = (1ull << ib) - 1;
    const int64_t keep_cap = seg_keep_cap(p, io, N), sw = kLongWinMax / 32;
    const float thr = seg_iou_thr(p, io);

    /* decode; the last candidate of each segment sets its count */
    for (int64_t e = gtid; e < nseg * N; e += gsize) {
        const int64_t s = e / N, i = e - s * N;
        const bool real = (keys[e] & low) != 0;
        if (real) {
            float o[4];
            dev_box(p, io, s, (int64_t)(imask - (keys[e] & imask)), o, &boxes[e]);
        }
        const bool next = i + 1 < N && (keys[e + 1] & low) != 0;
        if (real ? !next : i == 0) {
            const int64_t K = real ? i + 1 : 0;
            st[s].K = K;
            st[s].p = 0;
            st[s].nk = 0;
            st[s].W = kLongWin0;
            st[s].done = K == 0 || keep_cap <= 0;
            kept_n[s] = 0;
        }
    }
    grid.sync();
    for (;;) {
        int act = 0;
        for (int64_t s = tid; s < nseg; s += blockDim.x) act |= !st[s].done;
        if (!__syncthreads_or(act)) break; /* the same in every block */
        /* A */
        for (int64_t s = 0; s < nseg; s++) {
            if (st[s].done) continue;
            const int64_t p0 = st[s].p, len = st[s].W < st[s].K - p0 ? st[s].W : st[s].K - p0, nk = st[s].nk;
            const prt_nms_box *bx = boxes + s * N;
            const int *kp = kept_pos + s * N;
            /* alike in every thread of a block; p0 and gsize are multiples of 32 */
            for (int64_t t0 = (int64_t)blockIdx.x * blockDim.x; t0 < len; t0 += gsize) {
                const int64_t t = t0 + tid;
                bool stands = t < len;
                const prt_nms_box b = bx[p0 + (stands ? t : 0)];
                /* the kept boxes, kLongSurv at a time through shared memory */
                for (int64_t c0 = 0; c0 < nk; c0 += kLongSurv) {
                    const int cn = (int)(nk - c0 < kLongSurv ? nk - c0 : kLongSurv);
                    __syncthreads();
                    for (int i = tid; i < cn; i += kLongThreads) s_box[i] = bx[kp[c0 + i]];
                    __syncthreads();
                    int q = 0;
                    for (; stands && q + 4 <= cn; q += 4) {
                        const bool h0 = pair_suppresses(p, 0, thr, s_box[q], 0, b, 0);
                        const bool h1 = pair_suppresses(p, 0, thr, s_box[q + 1], 0, b, 0);
                        const bool h2 = pair_suppresses(p, 0, thr, s_box[q + 2], 0, b, 0);
                        const bool h3 = pair_suppresses(p, 0, thr, s_box[q + 3], 0, b, 0);
                        if (h0 || h1 || h2 || h3) stands = false;
                    }
                    for (; stands && q < cn; q++)
                        if (pair_suppresses(p, 0, thr, s_box[q], 0, b, 0)) stands = false;
                    if (!__syncthreads_or(stands)) break;
                }
                const unsigned m = __ballot_sync(0xffffffffu, stands);
                if ((tid & 31) == 0 && t < ((len + 31) & ~31)) surv[s * sw + t / 32] = m;
            }
        }
        grid.sync();
        /* B */
        for (int64_t s = blockIdx.x; s < nseg; s += gridDim.x) {
            if (st[s].done) continue;
            const int64_t p0 = st[s].p, W = st[s].W, K = st[s].K, nk0 = st[s].nk;
            const int64_t len = W < K - p0 ? W : K - p0, nw = (len + 31) / 32;
            int base = 0; /* standing candidates seen so far */
            for (int64_t w0 = 0; w0 < nw && base <= kLongSurv; w0 += kLongThreads) {
                const int64_t w = w0 + tid;
                unsigned bits = w < nw ? surv[s * sw + w] : 0u;
                int off, agg;
                scan_t(scan_tmp).ExclusiveSum(__popc(bits), off, agg);
                off += base;
                while (bits && off <= kLongSurv) {
                    s_pos[off++] = (int)(p0 + w * 32 + __ffs(bits) - 1);
                    bits &= bits - 1;
                }
                base += agg;
                __syncthreads();
            }
            int64_t pend = p0 + len, m = base;
            if (base > kLongSurv) {
                int lo = 0, hi = kLongSurv;
                pend = s_pos[kLongSurv] & ~31;
                while (lo < hi) {
                    const int mid = (lo + hi) >> 1;
                    if (s_pos[mid] < pend)
                        lo = mid + 1;
                    else
                        hi = mid;
                }
                m = lo;
            }
            const prt_nms_box *bx = boxes + s * N;
            for (int64_t i = tid; i < m; i += kLongThreads) {
                s_box[i] = bx[s_pos[i]];
                s_rem[i] = 0;
            }
            __syncthreads();
            const uint64_t *sk = keys + s * N;
            int *kp = kept_pos + s * N;
            uint64_t *ko = kept + s * N;
            const int64_t total = block_greedy(p, thr, 0, s_box, nullptr, s_rem, m, nk0, keep_cap,
                                               [&](int64_t i, int64_t slot) {
                                                   const int pos = s_pos[i];
                                                   kp[slot] = pos;
                                                   ko[slot] = prt_nms_key(0.0f, (uint32_t)(imask - (sk[pos] & imask)));
                                               });
            if (tid == 0) {
                int64_t w2 = W;
                if (base > kLongSurv)
                    w2 = W / 2 > 64 ? W / 2 : 64;
                else if (2 * base <= kLongSurv)
                    w2 = 4 * W < kLongWinMax ? 4 * W : kLongWinMax;
                st[s].p = pend;
                st[s].nk = total;
                st[s].W = w2;
                st[s].done = total >= keep_cap || pend >= K;
                kept_n[s] = (int)total;
            }
            __syncthreads(); /* shared memory is reused by the next segment */
        }
        grid.sync();
    }
}

int bits_of(int64_t x)
{
    int b = 0;
    while (x > 0) {
        b++;
        x >>= 1;
    }
    return b;
}

/* The workspace of one path for these shapes. */
layout make_layout(const prt__nms_params *p, int use_long)
{
    layout L;
    memset(&L, 0, sizeof L);
    L.nseg = prt__nms_segments(p);
    L.cap = prt__nms_seg_len(p);
    L.pre_len = prt__nms_pre_len(p);
    L.keep_len = p->keep_cap < L.pre_len ? p->keep_cap : L.pre_len;
    L.use_long = use_long;
    const int64_t nseg = L.nseg ? L.nseg : 1;
    const int64_t items = L.nseg * L.cap ? L.nseg * L.cap : 1;
    const int64_t keep_len = L.keep_len ? L.keep_len : 1;
    size_t off = 0;
    L.counts = off; off += align256(nseg * sizeof(unsigned));
    L.keys_in = off; off += align256(items * sizeof(uint64_t));
    L.kept = off; off += align256(nseg * keep_len * sizeof(uint64_t));
    L.kept_n = off; off += align256(nseg * sizeof(int));
    L.offsets = off; off += align256((nseg + 1) * sizeof(int64_t));
    if (!use_long) {
        L.direct = L.nseg <= kDirectMaxSegs && L.cap <= kDirectMaxLen;
        const int64_t pre = L.pre_len < kSegMaxPre ? L.pre_len : kSegMaxPre;
        L.n2cap = 1;
        while (L.n2cap < pre) L.n2cap <<= 1;
        L.smem = (size_t)L.n2cap * sizeof(uint64_t) + (size_t)pre * (sizeof(prt_nms_box) + sizeof(int) + 1);
    } else {
        L.ib = bits_of(L.cap);
        L.kbits = bits_of(L.nseg - 1) + 32 + L.ib;
        L.keys_out = off; off += align256(items * sizeof(uint64_t));
        L.boxes = off; off += align256(items * sizeof(prt_nms_box));
        L.kept_pos = off; off += align256(items * sizeof(int));
        L.surv = off; off += align256(nseg * (kLongWinMax / 32) * sizeof(unsigned));
        L.state = off; off += align256(nseg * sizeof(long_state));
        L.temp = off;
        if (items < INT32_MAX)
            cub::DeviceRadixSort::SortKeysDescending((void *)nullptr, L.temp_bytes, (const uint64_t *)nullptr,
                                                     (uint64_t *)nullptr, (int)items, 0, 64, (cudaStream_t)0);
        off += align256(L.temp_bytes ? L.temp_bytes : 1);
    }
    L.total = off;
    return L;
}

/* The long path takes the ONNX segments whose candidates all enter NMS and
 * may be more than the segment path holds in shared memory. */
int takes_long(const prt__nms_params *p) { return prt__nms_pre_len(p) > kSegMaxPre; }

} // namespace

extern "C" size_t prt__nms_cuda_workspace(const prt__nms_params *p)
{
    /* Smaller shapes may take the other path: the larger of the two. Both
     * grow with B, N and C. */
    size_t w = make_layout(p, 0).total;
    if (takes_long(p)) {
        const size_t l = make_layout(p, 1).total;
        if (l > w) w = l;
    }
    return w + 256;
}

extern "C" const char *prt__nms_cuda_error_string(int err) { return cudaGetErrorString((cudaError_t)err); }

extern "C" int prt__nms_cuda_run(const prt__nms_params *p, prt__nms_io *io, void *ws, size_t ws_size,
                                 void *stream_ptr)
{
    cudaStream_t stream = (cudaStream_t)stream_ptr;
    const int use_long = takes_long(p);
    if (use_long && p->kind != PRT_NMS_ONNX) return (int)cudaErrorInvalidValue;
    layout L = make_layout(p, use_long);
    if (L.nseg * L.cap >= INT32_MAX) return (int)cudaErrorInvalidValue;
    if (use_long && L.kbits > 64) return (int)cudaErrorInvalidValue;
    if (ws == nullptr) return (int)cudaErrorInvalidValue;
    uint8_t *base = (uint8_t *)(((uintptr_t)ws + 255) & ~(uintptr_t)255);
    if ((size_t)(base - (uint8_t *)ws) + L.total > ws_size) return (int)cudaErrorInvalidValue;
    unsigned *counts = (unsigned *)(base + L.counts);
    uint64_t *keys_in = (uint64_t *)(base + L.keys_in);
    uint64_t *kept = (uint64_t *)(base + L.kept);
    int *kept_n = (int *)(base + L.kept_n);
    int64_t *offsets = (int64_t *)(base + L.offsets);
    /* ONNX: the number of selected rows, an int64 in the workspace */
    int64_t *count = offsets + L.nseg;

    dev_io d;
    d.boxes = io->boxes; d.scores = io->scores; d.anchors = io->anchors;
    d.max_per_class = io->max_per_class; d.iou_thr = io->iou_thr; d.score_thr = io->score_thr;
    d.num_det = io->num_det; d.out_boxes = io->out_boxes; d.out_scores = io->out_scores;
    d.out_classes = io->out_classes; d.selected = io->selected;

    cudaError_t e;
    io->dev_count = nullptr;
    if (L.nseg == 0) {
        io->nb_selected = 0;
        if (p->kind == PRT_NMS_ONNX && io->count_on_device) {
            if ((e = cudaMemsetAsync(count, 0, sizeof *count, stream)) != cudaSuccess) return (int)e;
            io->dev_count = count;
        }
        return 0;
    }
    const int64_t items = L.nseg * L.cap;
    if (!use_long) {
        if (!L.direct) {
            if ((e = cudaMemsetAsync(counts, 0, L.nseg * sizeof(unsigned), stream)) != cudaSuccess) return (int)e;
            if (items > 0) {
                int64_t blocks = (items + kBlock - 1) / kBlock;
                if (blocks > 132 * 32) blocks = 132 * 32;
                filter_kernel<<<(unsigned)blocks, kBlock, 0, stream>>>(*p, d, counts, keys_in, L.cap, items);
            }
        }
        if (L.smem > 48 * 1024 &&
            (e = cudaFuncSetAttribute(segment_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)L.smem)) !=
                cudaSuccess)
            return (int)e;
        int dev = 0, sms = 0;
        if ((e = cudaGetDevice(&dev)) != cudaSuccess) return (int)e;
        if ((e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess) return (int)e;
        const int threads = L.nseg <= sms ? kSegMaxThreads : kSegThreads;
        segment_kernel<<<(unsigned)L.nseg, threads, L.smem, stream>>>(*p, d, counts, keys_in, L.cap, L.pre_len,
                                                                           L.n2cap, L.keep_len, kept, kept_n,
                                                                           L.direct);
    } else {
        uint64_t *keys_out = (uint64_t *)(base + L.keys_out);
        prt_nms_box *boxes = (prt_nms_box *)(base + L.boxes);
        int *kept_pos = (int *)(base + L.kept_pos);
        unsigned *surv = (unsigned *)(base + L.surv);
        long_state *state = (long_state *)(base + L.state);
        size_t temp_bytes = L.temp_bytes;
        int64_t blocks = (items / 4 + kBlock - 1) / kBlock;
        int dev = 0, sms = 0, coop = 0;
        if ((e = cudaGetDevice(&dev)) != cudaSuccess) return (int)e;
        if ((e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess) return (int)e;
        if ((e = cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev)) != cudaSuccess) return (int)e;
        if (!coop) return (int)cudaErrorNotSupported;
        if (blocks < 1) blocks = 1;
        if (blocks > 132 * 32) blocks = 132 * 32;
        long_keys_kernel<<<(unsigned)blocks, kBlock, 0, stream>>>(d, keys_in, items, L.cap, L.ib, L.nseg - 1);
        e = cub::DeviceRadixSort::SortKeysDescending(base + L.temp, temp_bytes, keys_in, keys_out, (int)items, 0,
                                                     L.kbits, stream);
        if (e != cudaSuccess) return (int)e;
        prt__nms_params pp = *p;
        const uint64_t *ck = keys_out;
        int64_t N = L.cap, nseg = L.nseg;
        int ib = L.ib;
        void *args[] = {&pp, &d, &ck, &N, &ib, &nseg, &boxes, &kept_pos, &kept, &kept_n, &surv, &state};
        e = cudaLaunchCooperativeKernel((const void *)long_kernel, dim3((unsigned)sms), dim3(kLongThreads), args, 0,
                                        stream);
        if (e != cudaSuccess) return (int)e;
    }
    if (p->kind == PRT_NMS_BATCHED) {
        const int use_sort = p->C <= (1 << 20) && L.keep_len <= 4096;
        const size_t smem = use_sort ? kMergeMax * sizeof(uint64_t) : 0;
        if (use_sort && (e = cudaFuncSetAttribute(batched_out_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                  (int)smem)) != cudaSuccess)
            return (int)e;
        if (p->B > 0)
            batched_out_kernel<<<(unsigned)p->B, kMergeThreads, smem, stream>>>(*p, d, kept, kept_n, L.keep_len,
                                                                                 use_sort);
    } else if (p->kind == PRT_NMS_ONNX) {
        /* the scan writes the total to offsets[nseg] == *count */
        onnx_scan_kernel<<<1, kScanThreads, 0, stream>>>(kept_n, offsets, L.nseg);
        onnx_out_kernel<<<(unsigned)L.nseg, kBlock, 0, stream>>>(*p, kept, kept_n, offsets, L.keep_len, io->selected);
        if (io->count_on_device) {
            io->dev_count = count;
        } else {
            /* A host without set_output_extent_device: wait for the count. */
            int64_t total = 0;
            if ((e = cudaMemcpyAsync(&total, count, sizeof total, cudaMemcpyDeviceToHost, stream)) != cudaSuccess)
                return (int)e;
            if ((e = cudaStreamSynchronize(stream)) != cudaSuccess) return (int)e;
            io->nb_selected = total;
        }
    }
    return (int)cudaGetLastError();
}
