/*
 * onnx/compute/conv_blk.c - blocked im2col + GEMM convolution, fp32.
 *
 * Per run: each group's weights [coutg][kd] are packed once for the GEMM
 * micro-kernels, and a table gives, for every row k = (c, i, j) of the
 * im2col matrix, where its taps read the input. Work items are blocks of
 * output columns (pixels) of one (image, group), for all its output
 * channels. The GEMM (prt__gemm_packed) asks for the im2col matrix one panel
 * of a few columns and one K chunk at a time and gets it written straight
 * into its packed buffer (L1-sized; no im2col matrix exists in memory); a 1x1
 * stride-1 unpadded kernel copies the input rows instead. After the GEMM the
 * block gets its bias and the epilogue, one output channel's segment at a
 * time, while it is still in cache.
 */
#include <string.h>

#include "../../common/cpu_gemm.h"
#include "conv.h"

#define BLK_W 256 /* output columns per block, at most */

typedef struct blk_tap {    /* row k = (c * kh + i) * kw + j of a group's im2col matrix */
    int64_t xoff;           /* c * h * w */
    int64_t dy, dx;         /* iy = oy * sh + dy, ix = ox * sw + dx */
    int64_t oxlo, oxhi;     /* the output columns whose ix lies in [0, w) */
} blk_tap;

typedef struct blk_job {
    const prt__conv_geo *g;
    const float *x, *b;
    float *y;
    const prt__gemm_pa *pa; /* one per group */
    const blk_tap *taps;
    const prt__conv_epi *epi;
    int64_t bw, nblk;       /* block width; blocks per (image, group) */
} blk_job;

typedef struct blk_item {
    const blk_job *j;
    const float *xg; /* the image and group's first input channel */
    int64_t c0;      /* the block's first output column */
} blk_item;

static int64_t blk_align(int64_t bytes) { return (bytes + 63) / 64 * 64; }

/* dst[kk * mr + q] = col[k0 + kk][c0 + n0 + q], zero past nw. */
static void blk_pack(void *arg, int64_t k0, int64_t kc, int64_t n0, int64_t nw, int64_t mr, float *dst)
{
    const blk_item *it = arg;
    const prt__conv_geo *g = it->j->g;
    const int64_t p0 = it->c0 + n0, hw = g->oh * g->ow;
    const int64_t oy0 = p0 / g->ow, ox0 = p0 % g->ow;
    int64_t kk, q, o;
    for (kk = 0; kk < kc; kk++) {
        float *d = dst + kk * mr;
        if (g->direct_1x1) {
            memcpy(d, it->xg + (k0 + kk) * hw + p0, (size_t)nw * sizeof(float));
        } else {
            const blk_tap *t = &it->j->taps[k0 + kk];
            int64_t oy = oy0, ox = ox0;
            for (q = 0; q < nw; oy++, ox = 0) { /* one output row's run of the panel at a time */
                const int64_t run = nw - q < g->ow - ox ? nw - q : g->ow - ox, iy = oy * g->sh + t->dy;
                float *dr = d + q; /* dr[o - ox] is output column o of this row */
                if (iy < 0 || iy >= g->h) {
                    memset(dr, 0, (size_t)run * sizeof(float));
                } else {
                    const float *row = it->xg + t->xoff + iy * g->w;
                    int64_t a = ox > t->oxlo ? ox : t->oxlo, b = ox + run < t->oxhi ? ox + run : t->oxhi;
                    if (a > ox + run) a = ox + run;
                    if (b < a) b = a;
                    for (o = ox; o < a; o++) dr[o - ox] = 0;
                    if (g->sw == 1 && b > a) {
                        if (b - a == 32) memcpy(dr + (a - ox), row + a + t->dx, 32 * sizeof(float));
                        else memcpy(dr + (a - ox), row + a + t->dx, (size_t)(b - a) * sizeof(float));
                    } else {
                        for (o = a; o < b; o++) dr[o - ox] = row[o * g->sw + t->dx];
                    }
                    for (o = b; o < ox + run; o++) dr[o - ox] = 0;
                }
                q += run;
            }
        }
        for (q = nw; q < mr; q++) d[q] = 0;
    }
}

static void blk_range(void *arg, int64_t begin, int64_t end)
{
    const blk_job *j = arg;
    const prt__conv_geo *g = j->g;
    const int64_t hw = g->oh * g->ow;
    int64_t t, m, i;
    for (t = begin; t < end; t++) {
        const int64_t img = t / (g->g * j->nblk), grp = t / j->nblk % g->g, c0 = t % j->nblk * j->bw;
        const int64_t nb = hw - c0 < j->bw ? hw - c0 : j->bw;
        const blk_item it = {j, j->x + (img * g->cin + grp * g->cg) * g->h * g->w, c0};
        float *yb = j->y + (img * g->cout + grp * g->coutg) * hw + c0;
        prt__gemm_packed(&j->pa[grp], nb, blk_pack, (void *)&it, yb, hw);
        for (m = 0; m < g->coutg; m++) {
            float *row = yb + m * hw;
            if (j->b) {
                const float bias = j->b[grp * g->coutg + m];
                for (i = 0; i < nb; i++) row[i] += bias;
            }
            if (j->epi && j->epi->fn) j->epi->fn(j->epi->arg, j->y, row - j->y, row - j->y + nb);
        }
    }
}

/* Workspace: the tap table, the groups' packing records, the packed weights. */
static void blk_layout(const prt__conv_geo *g, int64_t *taps_b, int64_t *pa_b, int64_t *per_group)
{
    *taps_b = blk_align((int64_t)sizeof(blk_tap) * (g->kd > 0 ? g->kd : 1));
    *pa_b = blk_align((int64_t)sizeof(prt__gemm_pa) * g->g);
    *per_group = (int64_t)prt__gemm_pack_a_floats(g->coutg, g->kd);
}

size_t prt__conv_blk_workspace(const prt__conv_geo *g)
{
    int64_t tb, pb, per;
    blk_layout(g, &tb, &pb, &per);
    return (size_t)(tb + pb) + (size_t)(g->g * per) * sizeof(float);
}

void prt__conv_blk_run(const prt__conv_geo *g, const float *x, const float *w, const float *b, float *y, void *ws,
                       const prt__conv_epi *epi, prt_exec *ex)
{
    const int64_t hw = g->oh * g->ow, threads = ex && ex->nb_threads > 1 ? ex->nb_threads : 1;
    int64_t tb, pb, per, k, grp, items;
    blk_tap *taps = ws;
    prt__gemm_pa *pa;
    float *ap;
    blk_job j;
    blk_layout(g, &tb, &pb, &per);
    pa = (prt__gemm_pa *)((char *)ws + tb);
    ap = (float *)((char *)ws + tb + pb);
    for (k = 0; k < g->kd; k++) {
        const int64_t c = k / (g->kh * g->kw), i = k / g->kw % g->kh, jj = k % g->kw;
        blk_tap *t = &taps[k];
        t->xoff = c * g->h * g->w;
        t->dy = i * g->dh - g->ph;
        t->dx = jj * g->dw - g->pw;
        t->oxlo = t->dx >= 0 ? 0 : (-t->dx + g->sw - 1) / g->sw;
        t->oxhi = g->w - 1 - t->dx >= 0 ? (g->w - 1 - t->dx) / g->sw + 1 : 0;
        if (t->oxlo > g->ow) t->oxlo = g->ow;
        if (t->oxhi > g->ow) t->oxhi = g->ow;
    }
    for (grp = 0; grp < g->g; grp++)
        prt__gemm_pack_a(g->coutg, g->kd, w + grp * g->coutg * g->kd, g->kd, 1, ap + grp * per, &pa[grp]);
    memset(&j, 0, sizeof j);
    j.g = g;
    j.x = x;
    j.b = b;
    j.y = y;
    j.pa = pa;
    j.taps = taps;
    j.epi = epi;
    /* The split changes no result (see conv.h): narrower blocks while there are too few for the threads. */
    j.bw = BLK_W;
    for (;;) {
        j.nblk = (hw + j.bw - 1) / j.bw;
        items = g->n * g->g * j.nblk;
        if (items >= 4 * threads || j.bw <= 32) break;
        j.bw /= 2;
    }
    if (items <= 0) return;
    if (threads == 1 || items == 1 || g->n * g->cout * hw * (g->kd + 1) < 131072) blk_range(&j, 0, items);
    else ex->parallel_for(ex, items, 1, blk_range, &j);
}
