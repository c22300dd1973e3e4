/* See ocr_db.h. */
#include "ocr_db.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define OCR_PI 3.14159265358979323846

int ocr_db_mask(const float *prob, int h, int w, float thresh, uint8_t *mask)
{
    if (h <= 0 || w <= 0)
        return -1;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int on = 0;
            for (int dy = 0; dy < 2 && !on; dy++)
                for (int dx = 0; dx < 2 && !on; dx++) {
                    int sy = y - dy, sx = x - dx;
                    on = sy >= 0 && sx >= 0 && prob[(size_t)sy * w + sx] > thresh;
                }
            mask[(size_t)y * w + x] = (uint8_t)on;
        }
    return 0;
}

static int cmp_xy(const void *a, const void *b)
{
    const double *p = a, *q = b;
    if (p[0] != q[0])
        return p[0] < q[0] ? -1 : 1;
    return (p[1] > q[1]) - (p[1] < q[1]);
}

static double cross(const double *o, const double *a, const double *b)
{
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
}

/* Convex hull by the monotone chain; hull receives up to n + 1 points. */
static int hull_of(double *p, int n, double *hull)
{
    int k = 0;
    qsort(p, (size_t)n, 2 * sizeof(double), cmp_xy);
    for (int i = 0; i < n; i++) {
        while (k >= 2 && cross(&hull[2 * (k - 2)], &hull[2 * (k - 1)], &p[2 * i]) <= 0)
            k--;
        hull[2 * k] = p[2 * i], hull[2 * k + 1] = p[2 * i + 1], k++;
    }
    for (int i = n - 2, lo = k + 1; i >= 0; i--) {
        while (k >= lo && cross(&hull[2 * (k - 2)], &hull[2 * (k - 1)], &p[2 * i]) <= 0)
            k--;
        hull[2 * k] = p[2 * i], hull[2 * k + 1] = p[2 * i + 1], k++;
    }
    return n > 1 ? k - 1 : n;
}

int ocr_min_area_box(const float *pts, int n, ocr_quad *box, float *short_side)
{
    if (n <= 0)
        return -1;
    double *p = malloc(sizeof(double) * 2 * (size_t)n), *hull = malloc(sizeof(double) * 2 * ((size_t)n + 1));
    if (!p || !hull) {
        free(p), free(hull);
        return -1;
    }
    for (int i = 0; i < 2 * n; i++)
        p[i] = pts[i];
    int m = hull_of(p, n, hull);
    double best = INFINITY, c[4][2] = {{0}}, side = 0;
    for (int e = 0; e < m; e++) {
        const double *a = &hull[2 * e], *b = &hull[2 * ((e + 1) % m)];
        double ux = b[0] - a[0], uy = b[1] - a[1], len = hypot(ux, uy);
        if (len == 0) {
            if (m > 1)
                continue;
            ux = 1, uy = 0, len = 1;
        }
        ux /= len, uy /= len;
        double u0 = INFINITY, u1 = -INFINITY, v0 = INFINITY, v1 = -INFINITY;
        for (int i = 0; i < m; i++) {
            double dx = hull[2 * i] - a[0], dy = hull[2 * i + 1] - a[1];
            double u = dx * ux + dy * uy, v = -dx * uy + dy * ux;
            u0 = fmin(u0, u), u1 = fmax(u1, u), v0 = fmin(v0, v), v1 = fmax(v1, v);
        }
        double area = (u1 - u0) * (v1 - v0);
        if (area < best) {
            double us[4] = {u0, u1, u1, u0}, vs[4] = {v0, v0, v1, v1};
            best = area;
            for (int k = 0; k < 4; k++) {
                c[k][0] = a[0] + us[k] * ux - vs[k] * uy;
                c[k][1] = a[1] + us[k] * uy + vs[k] * ux;
            }
            side = fmin(u1 - u0, v1 - v0);
        }
    }
    free(p), free(hull);
    /* rapidocr's order: corners sorted by x; of the two left ones the lower y
     * first, likewise on the right */
    float s[4][2];
    for (int k = 0; k < 4; k++)
        s[k][0] = (float)c[k][0], s[k][1] = (float)c[k][1];
    for (int i = 1; i < 4; i++)
        for (int j = i; j > 0 && s[j][0] < s[j - 1][0]; j--) {
            float t0 = s[j][0], t1 = s[j][1];
            s[j][0] = s[j - 1][0], s[j][1] = s[j - 1][1];
            s[j - 1][0] = t0, s[j - 1][1] = t1;
        }
    int i1 = s[1][1] > s[0][1] ? 0 : 1, i4 = 1 - i1;
    int i2 = s[3][1] > s[2][1] ? 2 : 3, i3 = 5 - i2;
    const int idx[4] = {i1, i2, i3, i4};
    for (int k = 0; k < 4; k++)
        box->p[k][0] = s[idx[k]][0], box->p[k][1] = s[idx[k]][1];
    *short_side = (float)side;
    return 0;
}

static double round_away(double v)
{
    return v < 0 ? (double)(int64_t)(v - 0.5) : (double)(int64_t)(v + 0.5);
}

int ocr_db_unclip(const ocr_quad *quad, double ratio, ocr_quad *box, float *short_side)
{
    double area = 0, perim = 0, src[4][2], nrm[4][2];
    for (int i = 0; i < 4; i++) {
        const float *a = quad->p[i], *b = quad->p[(i + 1) % 4];
        area += (double)a[0] * b[1] - (double)b[0] * a[1];
        perim += hypot((double)b[0] - a[0], (double)b[1] - a[1]);
        src[i][0] = trunc(a[0]), src[i][1] = trunc(a[1]);
    }
    if (perim <= 0)
        return -1;
    double delta = fabs(area) / 2 * ratio / perim;
    /* outward offset needs a counter-clockwise outline in y-up terms: the
     * signed area of the integer outline must be positive */
    double iarea = 0;
    for (int i = 0; i < 4; i++)
        iarea += src[i][0] * src[(i + 1) % 4][1] - src[(i + 1) % 4][0] * src[i][1];
    if (iarea < 0)
        for (int i = 0; i < 2; i++)
            for (int k = 0; k < 2; k++) {
                double t = src[i][k];
                src[i][k] = src[3 - i][k], src[3 - i][k] = t;
            }
    for (int i = 0; i < 4; i++) {
        double dx = src[(i + 1) % 4][0] - src[i][0], dy = src[(i + 1) % 4][1] - src[i][1], len = hypot(dx, dy);
        if (len == 0)
            return -1; /* degenerate outline: too small to box */
        nrm[i][0] = dy / len, nrm[i][1] = -dx / len;
    }
    double tol = fmin(0.25, delta * 0.25), steps_full = OCR_PI / acos(1 - tol / delta);
    if (steps_full > delta * OCR_PI)
        steps_full = delta * OCR_PI;
    double sn = sin(2 * OCR_PI / steps_full), cs = cos(2 * OCR_PI / steps_full), per_rad = steps_full / (2 * OCR_PI);
    float pts[2 * 4 * 64];
    int n = 0;
    for (int j = 0, k = 3; j < 4; k = j, j++) {
        double sin_a = nrm[k][0] * nrm[j][1] - nrm[j][0] * nrm[k][1];
        double cos_a = nrm[k][0] * nrm[j][0] + nrm[k][1] * nrm[j][1];
        if (fabs(sin_a * delta) < 1.0 && cos_a > 0) {
            pts[2 * n] = (float)round_away(src[j][0] + nrm[k][0] * delta);
            pts[2 * n + 1] = (float)round_away(src[j][1] + nrm[k][1] * delta);
            n++;
            continue;
        }
        sin_a = fmax(-1.0, fmin(1.0, sin_a));
        if (sin_a * delta < 0) {
            const double q[3][2] = {{src[j][0] + nrm[k][0] * delta, src[j][1] + nrm[k][1] * delta},
                                    {src[j][0], src[j][1]},
                                    {src[j][0] + nrm[j][0] * delta, src[j][1] + nrm[j][1] * delta}};
            for (int t = 0; t < 3; t++, n++)
                pts[2 * n] = (float)round_away(q[t][0]), pts[2 * n + 1] = (float)round_away(q[t][1]);
            continue;
        }
        int steps = (int)round_away(per_rad * fabs(atan2(sin_a, cos_a)));
        steps = steps < 1 ? 1 : steps > 60 ? 60 : steps;
        double x = nrm[k][0], y = nrm[k][1];
        for (int t = 0; t < steps; t++, n++) {
            pts[2 * n] = (float)round_away(src[j][0] + x * delta);
            pts[2 * n + 1] = (float)round_away(src[j][1] + y * delta);
            double x2 = x;
            x = x * cs - sn * y;
            y = x2 * sn + y * cs;
        }
        pts[2 * n] = (float)round_away(src[j][0] + nrm[j][0] * delta);
        pts[2 * n + 1] = (float)round_away(src[j][1] + nrm[j][1] * delta);
        n++;
    }
    return ocr_min_area_box(pts, n, box, short_side);
}

static int round_half_down(double v)
{
    return (int)-floor(-v + 0.5);
}

static void span_mark(int *lo, int *hi, int y0, int rows, int x, int y)
{
    if (y < y0 || y >= y0 + rows)
        return;
    if (x < lo[y - y0])
        lo[y - y0] = x;
    if (x > hi[y - y0])
        hi[y - y0] = x;
}

int ocr_db_box_score(const float *prob, int h, int w, const ocr_quad *quad, double *score)
{
    int p[4][2];
    double fx0 = INFINITY, fx1 = -INFINITY, fy0 = INFINITY, fy1 = -INFINITY;
    if (h <= 0 || w <= 0)
        return -1;
    for (int i = 0; i < 4; i++) {
        fx0 = fmin(fx0, quad->p[i][0]), fx1 = fmax(fx1, quad->p[i][0]);
        fy0 = fmin(fy0, quad->p[i][1]), fy1 = fmax(fy1, quad->p[i][1]);
    }
    int xmin = (int)fmin(fmax(floor(fx0), 0), w - 1), xmax = (int)fmin(fmax(ceil(fx1), 0), w - 1);
    int ymin = (int)fmin(fmax(floor(fy0), 0), h - 1), ymax = (int)fmin(fmax(ceil(fy1), 0), h - 1);
    int rows = ymax - ymin + 1, cols = xmax - xmin + 1;
    int *lo = malloc(sizeof(int) * (size_t)rows), *hi = malloc(sizeof(int) * (size_t)rows);
    if (!lo || !hi) {
        free(lo), free(hi);
        return -1;
    }
    for (int i = 0; i < 4; i++) { /* corners relative to the box, truncated */
        p[i][0] = (int)(quad->p[i][0] - xmin);
        p[i][1] = (int)(quad->p[i][1] - ymin);
    }
    for (int r = 0; r < rows; r++)
        lo[r] = INT32_MAX, hi[r] = INT32_MIN;
    for (int i = 0; i < 4; i++) {
        int x0 = p[i][0], y0 = p[i][1], dx = p[(i + 1) % 4][0] - x0, dy = p[(i + 1) % 4][1] - y0;
        int n = abs(dx) > abs(dy) ? abs(dx) : abs(dy);
        for (int k = 0; k <= n; k++) {
            int x, y;
            if (abs(dx) >= abs(dy)) {
                x = x0 + (dx >= 0 ? k : -k);
                y = dx ? round_half_down(y0 + (double)(x - x0) * dy / dx) : y0;
            } else {
                y = y0 + (dy >= 0 ? k : -k);
                x = round_half_down(x0 + (double)(y - y0) * dx / dy);
            }
            span_mark(lo, hi, 0, rows, x, y);
        }
    }
    double sum = 0;
    int64_t count = 0;
    for (int r = 0; r < rows; r++) {
        int a = lo[r] < 0 ? 0 : lo[r], b = hi[r] >= cols ? cols - 1 : hi[r];
        for (int x = a; x <= b; x++, count++)
            sum += prob[(size_t)(ymin + r) * w + xmin + x];
    }
    free(lo), free(hi);
    *score = count ? sum / (double)count : 0.0;
    return 0;
}

void ocr_db_box_to_image(ocr_quad *q, int map_h, int map_w, int img_h, int img_w)
{
    for (int i = 0; i < 4; i++) {
        double x = nearbyint((double)q->p[i][0] / map_w * img_w);
        double y = nearbyint((double)q->p[i][1] / map_h * img_h);
        q->p[i][0] = (float)fmin(fmax(x, 0), img_w);
        q->p[i][1] = (float)fmin(fmax(y, 0), img_h);
    }
}

/* Flood fill of the region of mask value `val` holding `start`, labelling it
 * `lab`; 8-connected when conn8. Collects the region's pixels into q (a queue
 * of h * w indices) and returns their count; *edge is set when one touches
 * the map's edge. */
static int flood(const uint8_t *mask, int h, int w, int32_t *label, int32_t *q, int start, int val, int lab,
                 int conn8, int *edge)
{
    static const int d8[8][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}, {1, 1}, {1, -1}, {-1, 1}, {-1, -1}};
    int head = 0, tail = 0;
    q[tail++] = start;
    label[start] = lab;
    while (head < tail) {
        int i = q[head++], y = i / w, x = i % w;
        if (x == 0 || y == 0 || x == w - 1 || y == h - 1)
            *edge = 1;
        for (int k = 0; k < (conn8 ? 8 : 4); k++) {
            int nx = x + d8[k][0], ny = y + d8[k][1];
            if (nx < 0 || ny < 0 || nx >= w || ny >= h)
                continue;
            int j = ny * w + nx;
            if (!label[j] && (mask[j] != 0) == val) {
                label[j] = lab;
                q[tail++] = j;
            }
        }
    }
    return tail;
}

static int is_one(const uint8_t *mask, int h, int w, int x, int y)
{
    return x >= 0 && y >= 0 && x < w && y < h && mask[y * w + x];
}

int ocr_db_regions(const uint8_t *mask, int h, int w, ocr_quad *boxes, float *sides, int cap, int *n)
{
    static const int d4[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
    int ret = -1, count = 0, lab = 0;
    if (h <= 0 || w <= 0 || (size_t)h * w > INT32_MAX / 2)
        return -1;
    size_t hw = (size_t)h * w;
    int32_t *label = calloc(hw, sizeof *label), *q = malloc(hw * sizeof *q);
    float *pts = malloc(hw * 2 * sizeof *pts);
    if (!label || !q || !pts)
        goto done;
    for (int pass = 0; pass < 2; pass++) /* regions of ones, then holes */
        for (size_t s0 = 0; s0 < hw; s0++) {
            int val = pass == 0;
            if (label[s0] || (mask[s0] != 0) != val)
                continue;
            int edge = 0, np = 0;
            int m = flood(mask, h, w, label, q, (int)s0, val, ++lab, val, &edge);
            if (!val && edge)
                continue; /* background, not a hole */
            for (int t = 0; t < m; t++) {
                int x = q[t] % w, y = q[t] / w;
                for (int k = 0; k < 4; k++) {
                    int nx = x + d4[k][0], ny = y + d4[k][1];
                    if (val && !is_one(mask, h, w, nx, ny)) { /* a border pixel of the region */
                        pts[2 * np] = (float)x, pts[2 * np + 1] = (float)y, np++;
                        break;
                    }
                    if (!val && is_one(mask, h, w, nx, ny) && np < (int)hw) /* a one around the hole */
                        pts[2 * np] = (float)nx, pts[2 * np + 1] = (float)ny, np++;
                }
            }
            if (count < cap && ocr_min_area_box(pts, np, &boxes[count], &sides[count]))
                goto done;
            count++;
        }
    *n = count;
    ret = 0;
done:
    free(label), free(q), free(pts);
    return ret;
}
