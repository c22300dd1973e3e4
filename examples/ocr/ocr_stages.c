/* See ocr_stages.h. */
#include "ocr_stages.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ocr_det_size(int h, int w, int limit_side, int *out_h, int *out_w)
{
    double ratio = 1.0;
    int min_side = h < w ? h : w;
    if (h <= 0 || w <= 0 || limit_side <= 0)
        return -1;
    if (min_side < limit_side)
        ratio = (double)limit_side / (h < w ? h : w);
    int rh = (int)(nearbyint((double)(int)(h * ratio) / 32.0) * 32.0);
    int rw = (int)(nearbyint((double)(int)(w * ratio) / 32.0) * 32.0);
    if (rh <= 0 || rw <= 0)
        return -1;
    *out_h = rh;
    *out_w = rw;
    return 0;
}

int ocr_resized_width(int h, int w, int dst_h, int max_w)
{
    double ratio = (double)w / (double)h;
    double c = ceil(dst_h * ratio);
    return c > max_w ? max_w : (int)c;
}

int ocr_rec_batch_width(const int *hw, int n, int dst_h, int base_w)
{
    double m = (double)base_w / dst_h;
    for (int i = 0; i < n; i++) {
        double r = hw[2 * i + 1] * 1.0 / hw[2 * i];
        if (r > m)
            m = r;
    }
    return (int)(dst_h * m);
}

int ocr_aspect_order(const int *hw, int n, int *order)
{
    if (n < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        if (hw[2 * i] <= 0)
            return -1;
        order[i] = i;
    }
    /* insertion sort: stable, as numpy's argsort is for the small counts of
     * an image's text lines */
    for (int i = 1; i < n; i++) {
        int k = order[i];
        double rk = hw[2 * k + 1] / (double)hw[2 * k];
        int j = i - 1;
        while (j >= 0 && hw[2 * order[j] + 1] / (double)hw[2 * order[j]] > rk) {
            order[j + 1] = order[j];
            j--;
        }
        order[j + 1] = k;
    }
    return 0;
}

static void sort_pair_by(float a[2], float b[2], int axis)
{
    if (b[axis] < a[axis]) {
        float t0 = a[0], t1 = a[1];
        a[0] = b[0], a[1] = b[1];
        b[0] = t0, b[1] = t1;
    }
}

void ocr_quad_order_clip(ocr_quad *q, int img_h, int img_w)
{
    float s[4][2];
    memcpy(s, q->p, sizeof s);
    /* stable sort of the four points by x */
    for (int i = 1; i < 4; i++)
        for (int j = i; j > 0 && s[j][0] < s[j - 1][0]; j--)
            sort_pair_by(s[j - 1], s[j], 0);
    sort_pair_by(s[0], s[1], 1); /* left: top-left, bottom-left */
    sort_pair_by(s[2], s[3], 1); /* right: top-right, bottom-right */
    const float *ord[4] = {s[0], s[2], s[3], s[1]};
    for (int i = 0; i < 4; i++) {
        float x = fminf(fmaxf(ord[i][0], 0.0f), (float)(img_w - 1));
        float y = fminf(fmaxf(ord[i][1], 0.0f), (float)(img_h - 1));
        q->p[i][0] = truncf(x);
        q->p[i][1] = truncf(y);
    }
}

static int dist_int(const float *a, const float *b)
{
    double dx = (double)a[0] - b[0], dy = (double)a[1] - b[1];
    return (int)sqrt(dx * dx + dy * dy);
}

int ocr_quads_filter(ocr_quad *q, int n, int img_h, int img_w)
{
    int kept = 0;
    for (int i = 0; i < n; i++) {
        ocr_quad b = q[i];
        ocr_quad_order_clip(&b, img_h, img_w);
        if (dist_int(b.p[0], b.p[1]) <= 3 || dist_int(b.p[0], b.p[3]) <= 3)
            continue;
        q[kept++] = b;
    }
    return kept;
}

static int before(const ocr_quad *a, const ocr_quad *b)
{
    if (a->p[0][1] != b->p[0][1])
        return a->p[0][1] < b->p[0][1];
    return a->p[0][0] < b->p[0][0];
}

int ocr_quads_sort(ocr_quad *q, int n)
{
    if (n < 0)
        return -1;
    for (int i = 1; i < n; i++) /* stable, as Python's sorted */
        for (int j = i; j > 0 && before(&q[j], &q[j - 1]); j--) {
            ocr_quad t = q[j];
            q[j] = q[j - 1];
            q[j - 1] = t;
        }
    for (int i = 0; i + 1 < n; i++)
        for (int j = i; j >= 0; j--) {
            if (fabsf(q[j + 1].p[0][1] - q[j].p[0][1]) < 10 && q[j + 1].p[0][0] < q[j].p[0][0]) {
                ocr_quad t = q[j];
                q[j] = q[j + 1];
                q[j + 1] = t;
            } else {
                break;
            }
        }
    return 0;
}

int ocr_cls_rotate(const float prob[2], float thresh)
{
    return prob[1] > prob[0] && prob[1] > thresh;
}

void ocr_dict_free(ocr_dict *d)
{
    if (!d || !d->sym)
        return;
    for (int i = 0; i < d->n; i++)
        free(d->sym[i]);
    free(d->sym);
    d->sym = NULL;
    d->n = 0;
}

static int dict_push(ocr_dict *d, int *cap, const char *s, size_t len)
{
    if (d->n == *cap) {
        int nc = *cap ? *cap * 2 : 256;
        char **ns = realloc(d->sym, (size_t)nc * sizeof *ns);
        if (!ns)
            return -1;
        d->sym = ns;
        *cap = nc;
    }
    char *c = malloc(len + 1);
    if (!c)
        return -1;
    memcpy(c, s, len);
    c[len] = '\0';
    d->sym[d->n++] = c;
    return 0;
}

int ocr_dict_load(const char *path, ocr_dict *out)
{
    ocr_dict d = {0};
    int cap = 0;
    char line[4096];
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "ocr: cannot open dictionary %s\n", path);
        return -1;
    }
    if (dict_push(&d, &cap, "blank", 5))
        goto fail;
    while (fgets(line, sizeof line, f)) {
        size_t len = strlen(line);
        if (len && line[len - 1] == '\n')
            len--;
        if (len && line[len - 1] == '\r')
            len--;
        if (dict_push(&d, &cap, line, len))
            goto fail;
    }
    if (ferror(f) || dict_push(&d, &cap, " ", 1))
        goto fail;
    fclose(f);
    *out = d;
    return 0;
fail:
    fprintf(stderr, "ocr: cannot read dictionary %s\n", path);
    fclose(f);
    ocr_dict_free(&d);
    return -1;
}

int ocr_ctc_decode(const float *prob, int t, int c, const ocr_dict *d, char *text, size_t cap,
                   double *score)
{
    size_t len = 0;
    double sum = 0.0;
    int kept = 0, prev = -1;
    if (t < 0 || c <= 0 || c > d->n || cap == 0)
        return -1;
    for (int i = 0; i < t; i++) {
        const float *row = prob + (size_t)i * c;
        int best = 0;
        for (int k = 1; k < c; k++)
            if (row[k] > row[best])
                best = k;
        int keep = best != 0 && best != prev;
        prev = best;
        if (!keep)
            continue;
        size_t sl = strlen(d->sym[best]);
        if (len + sl + 1 > cap)
            return -1;
        memcpy(text + len, d->sym[best], sl);
        len += sl;
        sum += row[best];
        kept++;
    }
    text[len] = '\0';
    *score = kept ? sum / kept : 0.0;
    return 0;
}
