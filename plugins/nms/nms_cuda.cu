/*
 * nms/nms_cuda.cu - CUDA execution of the NMS pipeline of nms.h, all on one
 * stream without host synchronisation (ONNX reports its row count with
 * prt_exec.set_output_extent_device; only a host without that member makes
 * the plugin copy the count back and wait for it):
 *   1. filter: one pass over the scores; each candidate's 64-bit key (score,
 *      index) goes to its segment's slice (atomic slot, order irrelevant:
 *      the keys are unique and fully ordered),
 *   2. cub::DeviceSegmentedSort, keys descending, in batches of at most
 *      kSortBatch segments (see there),
 *   3. greedy NMS, in one of two ways chosen from the run's shapes:
 *      - many or short segments: one block per segment, in tiles of 32
 *        sorted boxes: one warp resolves a tile with an IoU bitmask (bit k of
 *        lane i: box i suppresses box k) and a serial scan of it, then the
 *        whole block lets the tile's kept boxes suppress every later box;
 *        stops once the segment's keep cap is reached,
 *      - few long segments (the bitmask path): the sorted candidates are
 *        taken in chunks of up to 4096 rows. For each chunk a kernel over
 *        the whole GPU computes, in 64x64 tiles, the suppression bits of
 *        every chunk row still standing against every later candidate still
 *        standing (row i, word w: bit k set if i suppresses candidate
 *        64w + k > i); then one block per segment walks the chunk's rows in
 *        order 64 at a time, applies the greedy rule inside the 64 with the
 *        diagonal words, and ORs the kept rows' words into the segment's
 *        "removed" bitmap. Rows and columns already removed are skipped, so
 *        later chunks cost little once most boxes are suppressed; a segment
 *        stops at its keep cap,
 *   4. per image: BatchedNMS merges the classes (each kept box finds its row
 *      by binary searches in the other classes' lists), EfficientNMS emits
 *      its list, ONNX scans the counts and scatters rows.
 */
#include <cub/cub.cuh>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "nms.h"

namespace {

constexpr int kBlock = 256;
constexpr int kTile = 32;

struct dev_io {
    const void *boxes, *scores, *anchors;
    const int64_t *max_per_class;
    const float *iou_thr, *score_thr;
    int32_t *num_det;
    void *out_boxes, *out_scores, *out_classes;
    int64_t *selected;
};

struct layout {
    size_t counts, keys_in, keys_out, begin, end, boxes, classes, removed, kept, kept_n, offsets, temp;
    size_t remv, mask, done;
    size_t temp_bytes, nonmask, total;
    int64_t nseg, cap, pre_len, keep_len;
    int use_mask;     /* bitmask path for step 3 */
    int64_t nblk;     /* 64-bit words per segment row: ceil(pre_len / 64) */
    int64_t mrows;    /* rows per chunk (a multiple of 64) */
};

/* The bitmask path: at most this many segments, each at least this long,
 * chunks of at most kMaskChunkBlocks x 64 rows, all masks within the budget. */
/* CUB's segmented sort splits more than PARTITIONING_THRESHOLD segments (300
 * or 500, by architecture) into size groups, then copies the group sizes to
 * the host and waits for them (unless built with relocatable device code):
 * a host synchronisation inside the enqueue, which also makes the enqueue
 * impossible to capture into a CUDA graph (seen with NMS-T's 2560 segments).
 * Segments are therefore sorted in batches of at most kSortBatch, where CUB
 * takes its one-kernel path (one block per segment). */
constexpr int64_t kSortBatch = 300;
constexpr int64_t kMaskMaxSegs = 64;
constexpr int64_t kMaskMinLen = 1024;
constexpr int64_t kMaskChunkBlocks = 64;
constexpr int64_t kMaskBudget = (int64_t)256 << 20;
constexpr int kMaskScanThreads = 1024;

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

/* One candidate test; the index arithmetic only runs for candidates. */
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
    int has_thr = p.has_score_thr;
    float thr = p.score_thr;
    if (p.kind == PRT_NMS_ONNX) {
        has_thr = io.score_thr != nullptr;
        thr = has_thr ? io.score_thr[0] : 0.0f;
    }
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

__global__ void __launch_bounds__(kBlock) offsets_kernel(const unsigned *counts, int *begin, int *end, int64_t nseg, int64_t cap)
{
    int64_t s = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= nseg) return;
    begin[s] = (int)(s * cap);
    end[s] = (int)(s * cap + counts[s]);
}

__global__ void __launch_bounds__(kBlock) greedy_kernel(prt__nms_params p, dev_io io, const unsigned *counts, const uint64_t *keys_sorted,
                              int64_t cap, int64_t pre_len, int64_t keep_len, prt_nms_box *boxes_ws,
                              int *classes_ws, unsigned char *removed_ws, uint64_t *kept, int *kept_n)
{
    __shared__ prt_nms_box s_box[kTile];
    __shared__ int s_cls[kTile];
    __shared__ int s_nk;
    __shared__ int s_total;
    const int64_t seg = blockIdx.x;
    const int tid = threadIdx.x;
    int64_t K = counts[seg];
    if (K > pre_len) K = pre_len;
    const uint64_t *keys = keys_sorted + seg * cap;
    prt_nms_box *box = boxes_ws + seg * pre_len;
    int *cls = classes_ws + seg * pre_len;
    unsigned char *rem = removed_ws + seg * pre_len;
    uint64_t *out = kept + seg * (keep_len ? keep_len : 1);

    int64_t keep_cap = p.keep_cap < keep_len ? p.keep_cap : keep_len;
    float iou_thr = p.iou_thr;
    if (p.kind == PRT_NMS_ONNX) {
        int64_t m = io.max_per_class ? io.max_per_class[0] : 0;
        if (m < 0) m = 0;
        if (m < keep_cap) keep_cap = m;
        iou_thr = io.iou_thr ? io.iou_thr[0] : 0.0f;
    }
    const int check_cls = p.kind == PRT_NMS_EFFICIENT && !p.agnostic;

    for (int64_t i = tid; i < K; i += blockDim.x) {
        float o[4];
        int64_t idx = prt_nms_key_idx(keys[i]);
        dev_box(p, io, seg, idx, o, &box[i]);
        cls[i] = (int)cls_of(p, seg, idx);
        rem[i] = 0;
    }
    if (tid == 0) s_total = 0;
    __syncthreads();

    for (int64_t t0 = 0; t0 < K; t0 += kTile) {
        if (s_total >= keep_cap) break;
        if (tid < 32) {
            const int lane = tid;
            const int64_t j = t0 + lane;
            const int valid = j < K && !rem[j];
            unsigned alive = __ballot_sync(0xffffffffu, valid);
            int total = s_total, nk = 0;
            if (alive) {
                unsigned mask = 0;
                if (valid) {
                    prt_nms_box bj = box[j];
                    int cj = cls[j];
                    for (int k = lane + 1; k < kTile && t0 + k < K; k++) {
                        if (!(alive >> k & 1u)) continue;
                        if (check_cls && cls[t0 + k] != cj) continue;
                        if (prt_nms_suppresses(prt_nms_iou(bj, box[t0 + k], p.size_off), iou_thr, p.iou_ge))
                            mask |= 1u << k;
                    }
                }
                /* Serial scan over the tile in sorted order; `alive` and the
                 * chosen lane are the same in every lane. */
                while (alive) {
                    const int i = __ffs(alive) - 1;
                    const unsigned mi = __shfl_sync(0xffffffffu, mask, i);
                    if (total + nk >= keep_cap) break;
                    if (lane == 0) {
                        s_box[nk] = box[t0 + i];
                        s_cls[nk] = cls[t0 + i];
                        out[total + nk] = keys[t0 + i];
                    }
                    nk++;
                    alive &= ~(1u << i);
                    alive &= ~mi;
                }
            }
            if (lane == 0) {
                s_nk = nk;
                s_total = total + nk;
            }
        }
        __syncthreads();
        const int nk = s_nk;
        if (nk > 0 && s_total < keep_cap) {
            for (int64_t j = t0 + kTile + tid; j < K; j += blockDim.x) {
                if (rem[j]) continue;
                prt_nms_box bj = box[j];
                int cj = cls[j];
                for (int q = 0; q < nk; q++) {
                    if (check_cls && s_cls[q] != cj) continue;
                    if (prt_nms_suppresses(prt_nms_iou(s_box[q], bj, p.size_off), iou_thr, p.iou_ge)) {
                        rem[j] = 1;
                        break;
                    }
                }
            }
        }
        __syncthreads();
    }
    if (tid == 0) kept_n[seg] = s_total;
}

/* ---- the bitmask path --------------------------------------------------- */

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

__device__ __forceinline__ int64_t seg_count(const unsigned *counts, int64_t seg, int64_t pre_len)
{
    int64_t K = counts[seg];
    return K < pre_len ? K : pre_len;
}

/* Decode the sorted candidates of every segment (blockIdx.y), mark the
 * positions past the segment's count as removed, reset the kept counts. */
__global__ void __launch_bounds__(kBlock)
mask_init_kernel(prt__nms_params p, dev_io io, const unsigned *counts, const uint64_t *keys_sorted, int64_t cap,
                 int64_t pre_len, int64_t nblk, prt_nms_box *boxes_ws, int *classes_ws, uint64_t *remv, int *kept_n,
                 int *done)
{
    const int64_t seg = blockIdx.y;
    const int64_t K = seg_count(counts, seg, pre_len);
    const uint64_t *keys = keys_sorted + seg * cap;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    const int64_t start = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (int64_t i = start; i < K; i += stride) {
        float o[4];
        const int64_t idx = prt_nms_key_idx(keys[i]);
        dev_box(p, io, seg, idx, o, &boxes_ws[seg * pre_len + i]);
        classes_ws[seg * pre_len + i] = (int)cls_of(p, seg, idx);
    }
    for (int64_t w = start; w < nblk; w += stride) {
        const int64_t lo = w * 64;
        remv[seg * nblk + w] = lo >= K ? ~0ull : (K - lo >= 64 ? 0ull : (~0ull << (K - lo)));
    }
    if (start == 0) {
        kept_n[seg] = 0;
        done[seg] = 0;
    }
}

/* Chunk rows [r0, r0 + mrows) of every segment (blockIdx.y): for each row i
 * still standing and each word w >= i / 64 whose candidates are not all
 * removed, mask[i - r0][w] bit k = row i suppresses candidate 64w + k
 * (> i, still standing). Blocks of 64 threads (one per row) stride over the
 * tiles. Words left unwritten are never read: the scan reads only rows it
 * keeps (standing now, so standing here) and skips fully removed words. */
__global__ void __launch_bounds__(64)
mask_tile_kernel(prt__nms_params p, dev_io io, const unsigned *counts, int64_t pre_len, int64_t nblk, int64_t mrows,
                 int64_t r0, const prt_nms_box *boxes_ws, const int *classes_ws, const uint64_t *remv, uint64_t *mask,
                 const int *done)
{
    __shared__ prt_nms_box s_box[64];
    __shared__ int s_cls[64];
    const int64_t seg = blockIdx.y;
    const int tid = threadIdx.x;
    if (done[seg]) return;
    const int64_t K = seg_count(counts, seg, pre_len);
    if (r0 >= K) return;
    const float thr = seg_iou_thr(p, io);
    const int check_cls = p.kind == PRT_NMS_EFFICIENT && !p.agnostic;
    const int64_t rows = mrows < K - r0 ? mrows : K - r0;
    const int64_t gb0 = r0 / 64, rblocks = (rows + 63) / 64, ncol = (K + 63) / 64 - gb0;
    const prt_nms_box *box = boxes_ws + seg * pre_len;
    const int *cls = classes_ws + seg * pre_len;
    const uint64_t *rm = remv + seg * nblk;
    uint64_t *mk = mask + seg * mrows * nblk;
    for (int64_t t = blockIdx.x; t < rblocks * ncol; t += gridDim.x) {
        const int64_t gb = gb0 + t / ncol, w = gb0 + t % ncol;
        if (w < gb) continue;
        /* the same values in every thread: the branches are uniform */
        const uint64_t rrem = rm[gb], crem = rm[w];
        if (rrem == ~0ull || crem == ~0ull) continue;
        __syncthreads(); /* the previous tile is done with s_box */
        {
            const int64_t j = w * 64 + tid;
            if (j < K) {
                s_box[tid] = box[j];
                s_cls[tid] = cls[j];
            }
        }
        __syncthreads();
        const int64_t i = gb * 64 + tid;
        if (i < K && !((rrem >> tid) & 1ull)) {
            uint64_t live = ~crem, bits = 0;
            if (w == gb) live &= tid == 63 ? 0ull : (~0ull << (tid + 1));
            const prt_nms_box bi = box[i];
            const int ci = cls[i];
            while (live) {
                const int k = __ffsll((long long)live) - 1;
                live &= live - 1;
                if (pair_suppresses(p, check_cls, thr, bi, ci, s_box[k], s_cls[k])) bits |= 1ull << k;
            }
            mk[(i - r0) * nblk + w] = bits;
        }
    }
}

/* One block per segment: the greedy rule over the chunk's rows, 64 at a
 * time, in sorted order. Appends kept keys to the segment's list. */
__global__ void __launch_bounds__(kMaskScanThreads)
mask_scan_kernel(prt__nms_params p, dev_io io, const unsigned *counts, const uint64_t *keys_sorted, int64_t cap,
                 int64_t pre_len, int64_t nblk, int64_t mrows, int64_t r0, int64_t keep_len, uint64_t *remv,
                 const uint64_t *mask, uint64_t *kept, int *kept_n, int *done)
{
    __shared__ uint64_t s_diag[64];
    __shared__ uint64_t s_key[64];
    __shared__ uint64_t s_kb;
    __shared__ int64_t s_total;
    const int64_t seg = blockIdx.x;
    const int tid = threadIdx.x;
    if (done[seg]) return;
    const int64_t K = seg_count(counts, seg, pre_len);
    if (r0 >= K) return;
    const int64_t keep_cap = seg_keep_cap(p, io, keep_len);
    const int64_t rows = mrows < K - r0 ? mrows : K - r0;
    const int64_t gb0 = r0 / 64, gb1 = (r0 + rows + 63) / 64, kblk = (K + 63) / 64;
    uint64_t *rm = remv + seg * nblk;
    const uint64_t *mk = mask + seg * mrows * nblk;
    const uint64_t *keys = keys_sorted + seg * cap;
    uint64_t *out = kept + seg * (keep_len ? keep_len : 1);
    if (tid == 0) s_total = kept_n[seg];
    __syncthreads();
    int64_t total = s_total;
    for (int64_t gb = gb0; gb < gb1 && total < keep_cap; gb++) {
        /* written before the last barrier; the same in every thread */
        const uint64_t alive = ~rm[gb];
        if (alive == 0) continue;
        if (tid < 64) {
            const int a = (int)((alive >> tid) & 1ull);
            s_diag[tid] = a ? mk[(gb * 64 + tid - r0) * nblk + gb] : 0ull;
            s_key[tid] = a ? keys[gb * 64 + tid] : 0ull;
        }
        __syncthreads();
        if (tid == 0) {
            uint64_t a = alive, kb = 0;
            int64_t n = total;
            while (a && n < keep_cap) {
                const int k = __ffsll((long long)a) - 1;
                kb |= 1ull << k;
                out[n++] = s_key[k];
                a &= ~(1ull << k);
                a &= ~s_diag[k];
            }
            s_kb = kb;
            s_total = n;
        }
        __syncthreads();
        const uint64_t kb = s_kb;
        total = s_total;
        if (kb && total < keep_cap) {
            for (int64_t w = gb + 1 + tid; w < kblk; w += blockDim.x) {
                const uint64_t cur = rm[w];
                if (cur == ~0ull) continue;
                uint64_t acc = 0, b = kb;
                while (b) {
                    const int k = __ffsll((long long)b) - 1;
                    b &= b - 1;
                    acc |= mk[(gb * 64 + k - r0) * nblk + w];
                }
                rm[w] = cur | acc;
            }
        }
        __syncthreads();
    }
    if (tid == 0) {
        kept_n[seg] = (int)total;
        if (total >= keep_cap) done[seg] = 1;
    }
}

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

__global__ void __launch_bounds__(kMergeThreads)
batched_out_kernel(prt__nms_params p, dev_io io, const uint64_t *kept, const int *kept_n, int64_t keep_len,
                   int use_sort)
{
    extern __shared__ uint64_t sk[];
    __shared__ int s_total;
    const int64_t b = blockIdx.x;
    const int64_t row_len = keep_len ? keep_len : 1;
    const int tid = threadIdx.x;
    if (tid == 0) s_total = 0;
    __syncthreads();
    /* Gather the kept boxes of every class (in any order). */
    for (int64_t e = tid; e < p.C * row_len; e += blockDim.x) {
        int64_t c = e / row_len, j = e - c * row_len, seg = b * p.C + c;
        if (j >= kept_n[seg]) continue;
        int slot = atomicAdd(&s_total, 1);
        if (use_sort && slot < kMergeMax) sk[slot] = merge_key(kept[seg * row_len + j], c, j);
    }
    __syncthreads();
    const int64_t total = s_total;
    const int64_t nrows = total < p.out_cap ? total : p.out_cap;
    if (use_sort && total <= kMergeMax) {
        /* Bitonic sort, descending, padded with zero keys. */
        int n2 = 1;
        while (n2 < total) n2 <<= 1;
        for (int i = (int)total + tid; i < n2; i += blockDim.x) sk[i] = 0;
        __syncthreads();
        for (int k = 2; k <= n2; k <<= 1) {
            for (int j = k >> 1; j > 0; j >>= 1) {
                for (int i = tid; i < n2; i += blockDim.x) {
                    int ixj = i ^ j;
                    if (ixj > i) {
                        uint64_t x = sk[i], y = sk[ixj];
                        if ((i & k) == 0 ? x < y : x > y) {
                            sk[i] = y;
                            sk[ixj] = x;
                        }
                    }
                }
                __syncthreads();
            }
        }
        for (int64_t r = tid; r < nrows; r += blockDim.x) {
            uint64_t mk = sk[r];
            int64_t c = 0xfffff - (int64_t)((mk >> 12) & 0xfffff), j = 0xfff - (int64_t)(mk & 0xfff);
            int64_t seg = b * p.C + c;
            uint64_t key = kept[seg * row_len + j];
            emit(p, io, b, r, seg, prt_nms_key_idx(key), prt_nms_key_score(key));
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

__global__ void __launch_bounds__(kBlock) efficient_out_kernel(prt__nms_params p, dev_io io, const uint64_t *kept, const int *kept_n,
                                     int64_t keep_len)
{
    const int64_t b = blockIdx.x;
    const int64_t row_len = keep_len ? keep_len : 1;
    int64_t n = kept_n[b] < p.out_cap ? kept_n[b] : p.out_cap;
    for (int64_t r = threadIdx.x; r < p.out_cap; r += blockDim.x) {
        if (r < n) {
            uint64_t key = kept[b * row_len + r];
            emit(p, io, b, r, b, prt_nms_key_idx(key), prt_nms_key_score(key));
        } else {
            pad(p, io, b, r);
        }
    }
    if (threadIdx.x == 0) io.num_det[b] = (int32_t)n;
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

layout make_layout(const prt__nms_params *p)
{
    layout L;
    L.nseg = prt__nms_segments(p);
    L.cap = prt__nms_seg_len(p);
    L.pre_len = prt__nms_pre_len(p);
    L.keep_len = p->keep_cap < L.pre_len ? p->keep_cap : L.pre_len;
    const int64_t nseg = L.nseg ? L.nseg : 1;
    const int64_t items = L.nseg * L.cap;
    size_t off = 0;
    L.counts = off; off += align256(nseg * sizeof(unsigned));
    L.keys_in = off; off += align256((items ? items : 1) * sizeof(uint64_t));
    L.keys_out = off; off += align256((items ? items : 1) * sizeof(uint64_t));
    L.begin = off; off += align256(nseg * sizeof(int));
    L.end = off; off += align256(nseg * sizeof(int));
    L.boxes = off; off += align256(nseg * (L.pre_len ? L.pre_len : 1) * sizeof(prt_nms_box));
    L.classes = off; off += align256(nseg * (L.pre_len ? L.pre_len : 1) * sizeof(int));
    L.removed = off; off += align256(nseg * (L.pre_len ? L.pre_len : 1));
    L.kept = off; off += align256(nseg * (L.keep_len ? L.keep_len : 1) * sizeof(uint64_t));
    L.kept_n = off; off += align256(nseg * sizeof(int));
    L.offsets = off; off += align256((nseg + 1) * sizeof(int64_t));
    L.temp = off;
    L.temp_bytes = 0;
    if (items > 0 && items < INT32_MAX) {
        cub::DeviceSegmentedSort::SortKeysDescending((void *)nullptr, L.temp_bytes, (const uint64_t *)nullptr,
                                                     (uint64_t *)nullptr, (int)items,
                                                     (int)(L.nseg < kSortBatch ? L.nseg : kSortBatch),
                                                     (const int *)nullptr, (const int *)nullptr, (cudaStream_t)0);
    }
    off += align256(L.temp_bytes ? L.temp_bytes : 1);
    L.nonmask = off;
    /* The bitmask path for few long segments, if its masks fit the budget.
     * Its buffers come last, so that prt__nms_cuda_workspace can add a bound
     * that holds for every smaller shape (which may take this path when the
     * max shapes do not). */
    L.use_mask = 0;
    L.nblk = (L.pre_len + 63) / 64;
    L.mrows = 0;
    L.remv = L.mask = L.done = off;
    if (L.nseg >= 1 && L.nseg <= kMaskMaxSegs && L.pre_len >= kMaskMinLen) {
        int64_t rb = L.nblk < kMaskChunkBlocks ? L.nblk : kMaskChunkBlocks;
        while (rb > 1 && L.nseg * rb * 64 * L.nblk * 8 > kMaskBudget) rb = (rb + 1) / 2;
        if (L.nseg * rb * 64 * L.nblk * 8 <= kMaskBudget) {
            L.use_mask = 1;
            L.mrows = rb * 64;
            L.remv = off; off += align256(L.nseg * L.nblk * sizeof(uint64_t));
            L.mask = off; off += align256(L.nseg * L.mrows * L.nblk * sizeof(uint64_t));
            L.done = off; off += align256(L.nseg * sizeof(int));
        }
    }
    L.total = off;
    return L;
}

/* The most the bitmask buffers take for these shapes or any smaller ones:
 * at most kMaskMaxSegs segments of at most nblk words, masks within the
 * budget. */
size_t mask_bound(const layout &L)
{
    if (L.pre_len < kMaskMinLen || L.nseg < 1) return 0;
    const int64_t segs = L.nseg < kMaskMaxSegs ? L.nseg : kMaskMaxSegs;
    int64_t mask = segs * kMaskChunkBlocks * 64 * L.nblk * 8;
    if (mask > kMaskBudget) mask = kMaskBudget;
    return align256(segs * L.nblk * sizeof(uint64_t)) + align256(mask) + align256(segs * sizeof(int));
}

} // namespace

extern "C" size_t prt__nms_cuda_workspace(const prt__nms_params *p)
{
    const layout L = make_layout(p);
    return L.nonmask + mask_bound(L) + 256;
}

extern "C" const char *prt__nms_cuda_error_string(int err) { return cudaGetErrorString((cudaError_t)err); }

extern "C" int prt__nms_cuda_run(const prt__nms_params *p, prt__nms_io *io, void *ws, size_t ws_size,
                                 void *stream_ptr)
{
    cudaStream_t stream = (cudaStream_t)stream_ptr;
    layout L = make_layout(p);
    if (L.nseg * L.cap >= INT32_MAX) return (int)cudaErrorInvalidValue;
    if (ws == nullptr) return (int)cudaErrorInvalidValue;
    uint8_t *base = (uint8_t *)(((uintptr_t)ws + 255) & ~(uintptr_t)255);
    if ((size_t)(base - (uint8_t *)ws) + L.total > ws_size) return (int)cudaErrorInvalidValue;
    unsigned *counts = (unsigned *)(base + L.counts);
    uint64_t *keys_in = (uint64_t *)(base + L.keys_in);
    uint64_t *keys_out = (uint64_t *)(base + L.keys_out);
    int *begin = (int *)(base + L.begin), *end = (int *)(base + L.end);
    prt_nms_box *boxes = (prt_nms_box *)(base + L.boxes);
    int *classes = (int *)(base + L.classes);
    unsigned char *removed = base + L.removed;
    uint64_t *kept = (uint64_t *)(base + L.kept);
    int *kept_n = (int *)(base + L.kept_n);
    int64_t *offsets = (int64_t *)(base + L.offsets);
    uint64_t *remv = (uint64_t *)(base + L.remv);
    uint64_t *mask = (uint64_t *)(base + L.mask);
    int *done = (int *)(base + L.done);
    void *temp = base + L.temp;
    size_t temp_bytes = L.temp_bytes;
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
    if ((e = cudaMemsetAsync(counts, 0, L.nseg * sizeof(unsigned), stream)) != cudaSuccess) return (int)e;
    if (items > 0) {
        int64_t blocks = (items + kBlock - 1) / kBlock;
        if (blocks > 132 * 32) blocks = 132 * 32;
        filter_kernel<<<(unsigned)blocks, kBlock, 0, stream>>>(*p, d, counts, keys_in, L.cap, items);
        offsets_kernel<<<(unsigned)((L.nseg + kBlock - 1) / kBlock), kBlock, 0, stream>>>(counts, begin, end, L.nseg,
                                                                                          L.cap);
        for (int64_t s0 = 0; s0 < L.nseg; s0 += kSortBatch) {
            const int64_t ns = L.nseg - s0 < kSortBatch ? L.nseg - s0 : kSortBatch;
            e = cub::DeviceSegmentedSort::SortKeysDescending(temp, temp_bytes, keys_in, keys_out, (int)items, (int)ns,
                                                             begin + s0, end + s0, stream);
            if (e != cudaSuccess) return (int)e;
        }
    }
    if (L.use_mask) {
        const int64_t pre_len = L.pre_len;
        int64_t init_blocks = (pre_len + kBlock - 1) / kBlock;
        if (init_blocks > 512) init_blocks = 512;
        /* tile blocks per segment: about 4096 blocks of 64 threads in all */
        int64_t tile_blocks = (L.mrows / 64) * L.nblk, per_seg = 4096 / L.nseg;
        if (per_seg < 1) per_seg = 1;
        if (tile_blocks > per_seg) tile_blocks = per_seg;
        mask_init_kernel<<<dim3((unsigned)init_blocks, (unsigned)L.nseg), kBlock, 0, stream>>>(
            *p, d, counts, keys_out, L.cap, pre_len, L.nblk, boxes, classes, remv, kept_n, done);
        for (int64_t r0 = 0; r0 < pre_len; r0 += L.mrows) {
            mask_tile_kernel<<<dim3((unsigned)tile_blocks, (unsigned)L.nseg), 64, 0, stream>>>(
                *p, d, counts, pre_len, L.nblk, L.mrows, r0, boxes, classes, remv, mask, done);
            mask_scan_kernel<<<(unsigned)L.nseg, kMaskScanThreads, 0, stream>>>(
                *p, d, counts, keys_out, L.cap, pre_len, L.nblk, L.mrows, r0, L.keep_len, remv, mask, kept, kept_n,
                done);
        }
    } else {
        greedy_kernel<<<(unsigned)L.nseg, kBlock, 0, stream>>>(*p, d, counts, keys_out, L.cap,
                                                               L.pre_len ? L.pre_len : 1, L.keep_len, boxes, classes,
                                                               removed, kept, kept_n);
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
    } else if (p->kind == PRT_NMS_EFFICIENT) {
        if (p->B > 0) efficient_out_kernel<<<(unsigned)p->B, kBlock, 0, stream>>>(*p, d, kept, kept_n, L.keep_len);
    } else {
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
