/*
 * nms/nms_cpu.c - CPU execution of the NMS pipeline described in nms.h: a
 * plain reference (allocating, quadratic, used by the tests) and the fast
 * path the plugins run (per-segment candidate filtering, partial selection,
 * greedy NMS against the kept list with early exit, parallel over segments,
 * no allocation).
 */
#include <stdlib.h>
#include <string.h>

#include "nms.h"
#include "../plugin_alloc.h"

/* ---- what both paths share: reading candidates ------------------------- */

typedef struct nms_run {
    const prt__nms_params *p;
    prt__nms_io *io;
    int64_t keep_cap;   /* per segment, after the ONNX input is applied */
    float score_thr, iou_thr;
    int has_score_thr;
} nms_run;

static void nms_run_init(nms_run *r, const prt__nms_params *p, prt__nms_io *io)
{
    r->p = p;
    r->io = io;
    r->keep_cap = p->keep_cap;
    r->score_thr = p->score_thr;
    r->iou_thr = p->iou_thr;
    r->has_score_thr = p->has_score_thr;
    if (p->kind == PRT_NMS_ONNX) {
        int64_t m = io->max_per_class ? io->max_per_class[0] : 0;
        if (m < 0) m = 0;
        if (m < r->keep_cap) r->keep_cap = m;
        r->iou_thr = io->iou_thr ? io->iou_thr[0] : 0.0f;
        r->has_score_thr = io->score_thr != NULL;
        r->score_thr = io->score_thr ? io->score_thr[0] : 0.0f;
    }
}

static float nms_score(const nms_run *r, int64_t seg, int64_t idx)
{
    const prt__nms_params *p = r->p;
    int64_t b, c;
    switch (p->kind) {
    case PRT_NMS_EFFICIENT: return prt__nms_ld(r->io->scores, p->fp16, seg * p->N * p->C + idx);
    case PRT_NMS_ONNX: return ((const float *)r->io->scores)[seg * p->N + idx];
    default:
        b = seg / p->C;
        c = seg % p->C;
        return prt__nms_ld(r->io->scores, p->fp16, (b * p->N + idx) * p->C + c);
    }
}

static int64_t nms_class(const nms_run *r, int64_t seg, int64_t idx)
{
    return r->p->kind == PRT_NMS_EFFICIENT ? idx % r->p->C : seg % r->p->C;
}

static int nms_is_candidate(const nms_run *r, int64_t seg, int64_t idx, float *score)
{
    float s = nms_score(r, seg, idx);
    if (r->p->background >= 0 && nms_class(r, seg, idx) == r->p->background) return 0;
    if (r->has_score_thr && !prt_nms_passes(s, r->score_thr, r->p->score_ge)) return 0;
    *score = s;
    return 1;
}

/* Box of candidate (seg, idx): `out` as emitted, `iou` for the overlap. */
static void nms_box(const nms_run *r, int64_t seg, int64_t idx, float *out, prt_nms_box *iou)
{
    const prt__nms_params *p = r->p;
    int64_t b, n, c, l, k, base;
    float raw[4], anc[4] = {0, 0, 0, 0};
    if (p->kind == PRT_NMS_EFFICIENT) {
        b = seg; n = idx / p->C; c = idx % p->C;
    } else {
        b = seg / p->C; n = idx; c = seg % p->C;
    }
    l = p->box_classes == 1 ? 0 : c;
    base = ((b * p->N + n) * p->box_classes + l) * 4;
    if (p->kind == PRT_NMS_ONNX) {
        for (k = 0; k < 4; k++) raw[k] = ((const float *)r->io->boxes)[base + k];
    } else {
        for (k = 0; k < 4; k++) raw[k] = prt__nms_ld(r->io->boxes, p->fp16, base + k);
    }
    if (r->io->anchors && (p->box_mode == PRT_NMS_BOX_ANCHOR_CORNERS ||
                           p->box_mode == PRT_NMS_BOX_ANCHOR_CENTER)) {
        int64_t ab = ((p->anchors_batched ? b : 0) * p->N + n) * 4;
        for (k = 0; k < 4; k++) anc[k] = prt__nms_ld(r->io->anchors, p->fp16, ab + k);
    }
    prt_nms_decode(p->box_mode, raw, anc, out, iou,
                   !(p->kind == PRT_NMS_ONNX && p->box_mode == PRT_NMS_BOX_CENTER));
}

static float nms_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

/* Write output row `row` of image b for candidate (seg, idx, score). */
static void nms_emit(const nms_run *r, int64_t b, int64_t row, int64_t seg, int64_t idx, float score)
{
    const prt__nms_params *p = r->p;
    prt__nms_io *io = r->io;
    float box[4];
    prt_nms_box unused;
    int64_t o = b * p->out_cap + row, k, c = nms_class(r, seg, idx);
    nms_box(r, seg, idx, box, &unused);
    for (k = 0; k < 4; k++) {
        float v = box[k];
        if (p->clip) v = v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
        prt__nms_st(io->out_boxes, p->fp16, o * 4 + k, v);
    }
    if (p->kind == PRT_NMS_BATCHED) {
        prt__nms_st(io->out_scores, p->fp16, o, score);
        prt__nms_st(io->out_classes, p->fp16, o, (float)c);
    } else {
        prt__nms_st(io->out_scores, p->fp16, o, p->activation ? nms_sigmoid(score) : score);
        ((int32_t *)io->out_classes)[o] = (int32_t)c;
    }
}

static void nms_pad(const nms_run *r, int64_t b, int64_t from)
{
    const prt__nms_params *p = r->p;
    prt__nms_io *io = r->io;
    int64_t row, k;
    for (row = from; row < p->out_cap; row++) {
        int64_t o = b * p->out_cap + row;
        for (k = 0; k < 4; k++) prt__nms_st(io->out_boxes, p->fp16, o * 4 + k, 0.0f);
        prt__nms_st(io->out_scores, p->fp16, o, 0.0f);
        if (p->kind == PRT_NMS_BATCHED)
            prt__nms_st(io->out_classes, p->fp16, o, -1.0f);
        else
            ((int32_t *)io->out_classes)[o] = 0;
    }
}

static int nms_pair_applies(const nms_run *r, int64_t ca, int64_t cb)
{
    return r->p->kind != PRT_NMS_EFFICIENT || r->p->agnostic || ca == cb;
}

/* ---- the reference ------------------------------------------------------ */

typedef struct ref_cand {
    float score;
    int64_t idx;   /* candidate index within the segment */
    int64_t cls;
    int64_t rank;  /* BatchedNMS merge: position among the class's kept boxes */
} ref_cand;

static int ref_cmp_score_idx(const void *a, const void *b)
{
    const ref_cand *x = (const ref_cand *)a, *y = (const ref_cand *)b;
    if (x->score > y->score) return -1;
    if (x->score < y->score) return 1;
    return x->idx < y->idx ? -1 : (x->idx > y->idx);
}

static int ref_cmp_merge(const void *a, const void *b)
{
    const ref_cand *x = (const ref_cand *)a, *y = (const ref_cand *)b;
    if (x->score > y->score) return -1;
    if (x->score < y->score) return 1;
    if (x->cls != y->cls) return x->cls < y->cls ? -1 : 1;
    return x->rank < y->rank ? -1 : (x->rank > y->rank);
}

prt_status prt__nms_reference(const prt__nms_params *p, prt__nms_io *io)
{
    nms_run r;
    int64_t nseg = prt__nms_segments(p), len = prt__nms_seg_len(p), seg, i, j, b;
    int64_t nsel = 0;
    ref_cand *cand = NULL, *pool = NULL;
    unsigned char *removed = NULL;
    prt_nms_box *boxes = NULL;
    int64_t *kept_n = NULL;
    ref_cand *kept = NULL;
    int64_t keep_len;
    float dummy[4];
    prt_status st = PRT_STATUS_OUT_OF_MEMORY;

    nms_run_init(&r, p, io);
    /* Only the ONNX cap is part of the selection; the other variants keep
     * every survivor here and truncate when merging. */
    keep_len = p->kind == PRT_NMS_ONNX && r.keep_cap < len ? r.keep_cap : len;
    cand = (ref_cand *)prt_plugin_malloc(sizeof(*cand) * (size_t)(len ? len : 1));
    removed = (unsigned char *)prt_plugin_malloc((size_t)(len ? len : 1));
    boxes = (prt_nms_box *)prt_plugin_malloc(sizeof(*boxes) * (size_t)(len ? len : 1));
    kept_n = (int64_t *)prt_plugin_calloc((size_t)(nseg ? nseg : 1), sizeof(int64_t));
    kept = (ref_cand *)prt_plugin_malloc(sizeof(*kept) * (size_t)(nseg * (keep_len ? keep_len : 1) + 1));
    pool = (ref_cand *)prt_plugin_malloc(sizeof(*pool) * (size_t)(p->C * (keep_len ? keep_len : 1) + 1));
    if (!cand || !removed || !boxes || !kept_n || !kept || !pool) goto done;

    for (seg = 0; seg < nseg; seg++) {
        int64_t k = 0, nk = 0;
        for (i = 0; i < len; i++) {
            float s;
            if (!nms_is_candidate(&r, seg, i, &s)) continue;
            cand[k].score = s;
            cand[k].idx = i;
            cand[k].cls = nms_class(&r, seg, i);
            cand[k].rank = 0;
            k++;
        }
        qsort(cand, (size_t)k, sizeof(*cand), ref_cmp_score_idx);
        if (k > p->pre_cap) k = p->pre_cap;
        for (i = 0; i < k; i++) {
            removed[i] = 0;
            nms_box(&r, seg, cand[i].idx, dummy, &boxes[i]);
        }
        /* Greedy: each box still standing suppresses every later one. */
        for (i = 0; i < k; i++) {
            if (removed[i]) continue;
            for (j = i + 1; j < k; j++) {
                if (!nms_pair_applies(&r, cand[i].cls, cand[j].cls)) continue;
                if (prt_nms_suppresses(prt_nms_iou(boxes[i], boxes[j], p->size_off), r.iou_thr,
                                       p->iou_ge))
                    removed[j] = 1;
            }
        }
        for (i = 0; i < k && nk < keep_len; i++) {
            if (removed[i]) continue;
            kept[seg * keep_len + nk] = cand[i];
            kept[seg * keep_len + nk].rank = nk;
            nk++;
        }
        kept_n[seg] = nk;
    }

    if (p->kind == PRT_NMS_ONNX) {
        for (seg = 0; seg < nseg; seg++) {
            for (i = 0; i < kept_n[seg]; i++) {
                io->selected[nsel * 3 + 0] = seg / p->C;
                io->selected[nsel * 3 + 1] = seg % p->C;
                io->selected[nsel * 3 + 2] = kept[seg * keep_len + i].idx;
                nsel++;
            }
        }
        io->nb_selected = nsel;
    } else if (p->kind == PRT_NMS_EFFICIENT) {
        for (b = 0; b < p->B; b++) {
            int64_t n = kept_n[b] < p->out_cap ? kept_n[b] : p->out_cap;
            for (i = 0; i < n; i++) nms_emit(&r, b, i, b, kept[b * keep_len + i].idx, kept[b * keep_len + i].score);
            nms_pad(&r, b, n);
            io->num_det[b] = (int32_t)n;
        }
    } else {
        for (b = 0; b < p->B; b++) {
            int64_t m = 0, c, n;
            for (c = 0; c < p->C; c++)
                for (i = 0; i < kept_n[b * p->C + c]; i++) pool[m++] = kept[(b * p->C + c) * keep_len + i];
            qsort(pool, (size_t)m, sizeof(*pool), ref_cmp_merge);
            n = m < p->out_cap ? m : p->out_cap;
            for (i = 0; i < n; i++) nms_emit(&r, b, i, b * p->C + pool[i].cls, pool[i].idx, pool[i].score);
            nms_pad(&r, b, n);
            io->num_det[b] = (int32_t)n;
        }
    }
    st = PRT_OK;
done:
    prt_plugin_free(cand);
    prt_plugin_free(removed);
    prt_plugin_free(boxes);
    prt_plugin_free(kept_n);
    prt_plugin_free(kept);
    prt_plugin_free(pool);
    return st;
}

/* ---- the fast path ------------------------------------------------------ */

#define NMS_CPU_SLOTS 16

typedef struct nms_ws {
    uint64_t *kept;     /* [nseg][keep_len] sort keys of the kept boxes */
    int64_t *kept_n;    /* [nseg] */
    int64_t *cursor;    /* [nseg]: BatchedNMS merge positions */
    uint64_t *scratch;  /* [slots][slot_words] */
    int64_t slot_words;
} nms_ws;

static int64_t nms_keep_len(const prt__nms_params *p)
{
    int64_t pre = prt__nms_pre_len(p);
    return p->keep_cap < pre ? p->keep_cap : pre;
}

/* Per slot: candidate keys (seg_len), kept boxes (keep_len x 16 bytes) and
 * their classes (keep_len x 8 bytes). */
static int64_t nms_slot_words(const prt__nms_params *p)
{
    int64_t kl = nms_keep_len(p);
    return prt__nms_seg_len(p) + kl * 3 + 1;
}

static int64_t nms_round8(int64_t x) { return (x + 7) & ~(int64_t)7; }

static nms_ws nms_ws_layout(const prt__nms_params *p, void *base, size_t *total)
{
    /* Offsets first, as integers; pointers only into a real workspace
     * (sizing passes base = NULL, and NULL + offset is undefined). */
    nms_ws w;
    int64_t nseg = prt__nms_segments(p), kl = nms_keep_len(p);
    int64_t o_kept, o_kept_n, o_cursor, o_scratch, off = 0;
    uint8_t *b = (uint8_t *)base;
    memset(&w, 0, sizeof w);
    w.slot_words = nms_slot_words(p);
    o_kept = off;
    off += nms_round8(nseg * (kl ? kl : 1) * 8);
    o_kept_n = off;
    off += nms_round8((nseg + 1) * 8);
    o_cursor = off;
    off += nms_round8((nseg + 1) * 8);
    o_scratch = off;
    off += NMS_CPU_SLOTS * w.slot_words * 8;
    if (total) *total = (size_t)off;
    if (b) {
        w.kept = (uint64_t *)(b + o_kept);
        w.kept_n = (int64_t *)(b + o_kept_n);
        w.cursor = (int64_t *)(b + o_cursor);
        w.scratch = (uint64_t *)(b + o_scratch);
    }
    return w;
}

size_t prt__nms_cpu_workspace(const prt__nms_params *p)
{
    size_t total;
    (void)nms_ws_layout(p, NULL, &total);
    return total;
}

static void nms_swap(uint64_t *a, uint64_t *b)
{
    uint64_t t = *a;
    *a = *b;
    *b = t;
}

/* Reorder k[0..n) so that its m largest keys come first (any order). */
static void nms_select_top(uint64_t *k, int64_t n, int64_t m)
{
    int64_t lo = 0, hi = n - 1;
    uint32_t rng = 2463534242u;
    while (lo < hi) {
        int64_t i, st;
        uint64_t pivot;
        rng ^= rng << 13; rng ^= rng >> 17; rng ^= rng << 5;
        nms_swap(&k[lo + (int64_t)(rng % (uint32_t)(hi - lo + 1))], &k[hi]);
        pivot = k[hi];
        for (st = lo, i = lo; i < hi; i++)
            if (k[i] > pivot) nms_swap(&k[i], &k[st++]);
        nms_swap(&k[st], &k[hi]);
        if (st == m - 1 || st == m) return;
        if (st < m) lo = st + 1;
        else hi = st - 1;
    }
}

/* In-place heap sort into descending order (no allocation, unlike qsort). */
static void nms_sift_down(uint64_t *k, int64_t root, int64_t n)
{
    for (;;) {
        int64_t child = 2 * root + 1;
        if (child >= n) return;
        /* a min-heap: the smallest key rises, and is moved to the end */
        if (child + 1 < n && k[child + 1] < k[child]) child++;
        if (k[root] <= k[child]) return;
        nms_swap(&k[root], &k[child]);
        root = child;
    }
}

static void nms_sort_desc(uint64_t *k, int64_t n)
{
    int64_t i;
    for (i = n / 2 - 1; i >= 0; i--) nms_sift_down(k, i, n);
    for (i = n - 1; i > 0; i--) {
        nms_swap(&k[0], &k[i]);
        nms_sift_down(k, 0, i);
    }
}

typedef struct nms_fast {
    nms_run r;
    nms_ws w;
    int64_t nseg, nslots, keep_len, row;
} nms_fast;

static void nms_segment(const nms_fast *f, int64_t seg, uint64_t *scr)
{
    const nms_run *r = &f->r;
    const prt__nms_params *p = r->p;
    int64_t len = prt__nms_seg_len(p), k = 0, i, nk = 0;
    int64_t kl = f->keep_len;
    uint64_t *keys = scr;
    prt_nms_box *kb = (prt_nms_box *)(scr + len);
    int64_t *kc = (int64_t *)(scr + len + kl * 2);
    uint64_t *out = f->w.kept + seg * f->row;
    float dummy[4];

    if (kl > 0) {
        for (i = 0; i < len; i++) {
            float s;
            if (nms_is_candidate(r, seg, i, &s)) keys[k++] = prt_nms_key(s, (uint32_t)i);
        }
        if (k > p->pre_cap) {
            nms_select_top(keys, k, p->pre_cap);
            k = p->pre_cap;
        }
        nms_sort_desc(keys, k);
    }
    for (i = 0; i < k && nk < kl; i++) {
        int64_t idx = prt_nms_key_idx(keys[i]), c = nms_class(r, seg, idx), j;
        prt_nms_box bx;
        int dead = 0;
        nms_box(r, seg, idx, dummy, &bx);
        for (j = 0; j < nk && !dead; j++)
            dead = nms_pair_applies(r, kc[j], c) &&
                   prt_nms_suppresses(prt_nms_iou(kb[j], bx, p->size_off), r->iou_thr, p->iou_ge);
        if (dead) continue;
        kb[nk] = bx;
        kc[nk] = c;
        out[nk++] = keys[i];
    }
    f->w.kept_n[seg] = nk;
}

static void nms_slots_fn(void *arg, int64_t begin, int64_t end)
{
    const nms_fast *f = (const nms_fast *)arg;
    int64_t slot, seg;
    for (slot = begin; slot < end; slot++) {
        uint64_t *scr = f->w.scratch + slot * f->w.slot_words;
        for (seg = slot; seg < f->nseg; seg += f->nslots) nms_segment(f, seg, scr);
    }
}

/* Per image: merge or emit, then pad. */
static void nms_images_fn(void *arg, int64_t begin, int64_t end)
{
    const nms_fast *f = (const nms_fast *)arg;
    const nms_run *r = &f->r;
    const prt__nms_params *p = r->p;
    int64_t b, kl = f->row;
    for (b = begin; b < end; b++) {
        int64_t n = 0;
        if (p->kind == PRT_NMS_EFFICIENT) {
            const uint64_t *k = f->w.kept + b * kl;
            n = f->w.kept_n[b] < p->out_cap ? f->w.kept_n[b] : p->out_cap;
            for (int64_t i = 0; i < n; i++)
                nms_emit(r, b, i, b, prt_nms_key_idx(k[i]), prt_nms_key_score(k[i]));
        } else {
            /* C-way merge of the per-class lists, each already in order:
             * higher score first, then the lower class, then the rank. */
            int64_t c, *cur = f->w.cursor + b * p->C;
            for (c = 0; c < p->C; c++) cur[c] = 0;
            while (n < p->out_cap) {
                int64_t best = -1;
                float bs = 0.0f;
                for (c = 0; c < p->C; c++) {
                    int64_t seg = b * p->C + c;
                    float s;
                    if (cur[c] >= f->w.kept_n[seg]) continue;
                    s = prt_nms_key_score(f->w.kept[seg * kl + cur[c]]);
                    if (best < 0 || s > bs) {
                        best = c;
                        bs = s;
                    }
                }
                if (best < 0) break;
                {
                    int64_t seg = b * p->C + best;
                    nms_emit(r, b, n, seg, prt_nms_key_idx(f->w.kept[seg * kl + cur[best]]), bs);
                    cur[best]++;
                    n++;
                }
            }
        }
        nms_pad(r, b, n);
        r->io->num_det[b] = (int32_t)n;
    }
}

static void nms_serial_for(prt_exec *ex, int64_t n, int64_t grain, prt_range_fn fn, void *arg)
{
    (void)ex;
    (void)grain;
    if (n > 0) fn(arg, 0, n);
}

prt_status prt__nms_cpu_run(const prt__nms_params *p, prt__nms_io *io, void *ws, prt_exec *ex)
{
    nms_fast f;
    void (*pfor)(prt_exec *, int64_t, int64_t, prt_range_fn, void *) =
        ex && ex->parallel_for ? ex->parallel_for : nms_serial_for;
    int64_t threads = ex && ex->nb_threads > 0 ? ex->nb_threads : 1;
    nms_run_init(&f.r, p, io);
    f.w = nms_ws_layout(p, ws, NULL);
    f.nseg = prt__nms_segments(p);
    f.keep_len = nms_keep_len(p);
    if (f.r.keep_cap < f.keep_len) f.keep_len = f.r.keep_cap;
    f.nslots = NMS_CPU_SLOTS < threads ? NMS_CPU_SLOTS : threads;
    if (f.nslots > f.nseg) f.nslots = f.nseg;
    if (f.nslots < 1) f.nslots = 1;
    /* Rows are laid out for the maximum keep length; a smaller run keep
     * length (ONNX input) uses a prefix of each row. */
    f.row = nms_keep_len(p) ? nms_keep_len(p) : 1;
    if (f.nseg > 0) pfor(ex, f.nslots, 1, nms_slots_fn, &f);

    if (p->kind == PRT_NMS_ONNX) {
        int64_t seg, i, nsel = 0, kl = f.row;
        for (seg = 0; seg < f.nseg; seg++)
            for (i = 0; i < f.w.kept_n[seg]; i++) {
                io->selected[nsel * 3 + 0] = seg / p->C;
                io->selected[nsel * 3 + 1] = seg % p->C;
                io->selected[nsel * 3 + 2] = prt_nms_key_idx(f.w.kept[seg * kl + i]);
                nsel++;
            }
        io->nb_selected = nsel;
    } else if (p->B > 0) {
        pfor(ex, p->B, 1, nms_images_fn, &f);
    }
    return PRT_OK;
}
