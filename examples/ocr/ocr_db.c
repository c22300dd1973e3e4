/* See ocr_db.h. */
#include "ocr_db.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
