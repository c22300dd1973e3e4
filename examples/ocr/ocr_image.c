/* See ocr_image.h. */
#include "ocr_image.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { COEF_BITS = 11, COEF_ONE = 1 << COEF_BITS };

int ocr_image_alloc(ocr_image *im, int h, int w, int c)
{
    if (h <= 0 || w <= 0 || c <= 0 || (size_t)h * w > (SIZE_MAX / 4) / (size_t)c)
        return -1;
    uint8_t *d = calloc((size_t)h * w * c, 1);
    if (!d)
        return -1;
    *im = (ocr_image){.h = h, .w = w, .c = c, .data = d};
    return 0;
}

void ocr_image_free(ocr_image *im)
{
    if (!im)
        return;
    free(im->data);
    im->data = NULL;
}

/* Source index and weight of the first of two taps for each destination
 * index along one axis. */
static void taps(int ssize, int dsize, int *idx, int16_t *w)
{
    double scale = 1.0 / ((double)dsize / ssize);
    for (int d = 0; d < dsize; d++) {
        float f = (float)((d + 0.5) * scale - 0.5);
        int s = (int)floorf(f);
        f -= (float)s;
        if (s < 0)
            s = 0, f = 0;
        if (s >= ssize - 1)
            s = ssize - 1, f = 0;
        idx[d] = s;
        /* each weight rounded on its own: the two may not sum to 2^11 */
        w[2 * d] = (int16_t)lrintf((1.0f - f) * COEF_ONE);
        w[2 * d + 1] = (int16_t)lrintf(f * COEF_ONE);
    }
}

int ocr_image_resize(const ocr_image *src, int dst_h, int dst_w, ocr_image *dst)
{
    int ret = -1, c = src->c;
    ocr_image out;
    int *xi = malloc(sizeof(int) * (size_t)dst_w), *yi = malloc(sizeof(int) * (size_t)dst_h);
    int16_t *xw = malloc(sizeof(int16_t) * 2 * (size_t)dst_w), *yw = malloc(sizeof(int16_t) * 2 * (size_t)dst_h);
    int32_t *rows = malloc(sizeof(int32_t) * 2 * (size_t)dst_w * c);
    if (!xi || !yi || !xw || !yw || !rows || ocr_image_alloc(&out, dst_h, dst_w, c))
        goto done;
    taps(src->w, dst_w, xi, xw);
    taps(src->h, dst_h, yi, yw);
    for (int y = 0; y < dst_h; y++) {
        int sy[2] = {yi[y], yi[y] + 1 < src->h ? yi[y] + 1 : yi[y]};
        for (int r = 0; r < 2; r++) { /* horizontal pass: value * 2^11 */
            const uint8_t *s = src->data + (size_t)sy[r] * src->w * c;
            int32_t *d = rows + (size_t)r * dst_w * c;
            for (int x = 0; x < dst_w; x++) {
                int x0 = xi[x], x1 = x0 + 1 < src->w ? x0 + 1 : x0;
                int a0 = xw[2 * x], a1 = xw[2 * x + 1];
                for (int k = 0; k < c; k++)
                    d[x * c + k] = s[x0 * c + k] * a0 + s[x1 * c + k] * a1;
            }
        }
        /* vertical pass rounded as OpenCV's vectorized 8-bit path does */
        int b0 = yw[2 * y], b1 = yw[2 * y + 1];
        uint8_t *o = out.data + (size_t)y * dst_w * c;
        for (int i = 0; i < dst_w * c; i++) {
            int v = (((b0 * (rows[i] >> 4)) >> 16) + ((b1 * (rows[dst_w * c + i] >> 4)) >> 16) + 2) >> 2;
            o[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
    }
    *dst = out;
    ret = 0;
done:
    free(xi), free(yi), free(xw), free(yw), free(rows);
    return ret;
}

int ocr_image_normalize(const ocr_image *src, int dst_w, float *dst)
{
    if (dst_w < src->w)
        return -1;
    for (int k = 0; k < src->c; k++)
        for (int y = 0; y < src->h; y++) {
            float *d = dst + ((size_t)k * src->h + y) * dst_w;
            const uint8_t *s = src->data + (size_t)y * src->w * src->c + k;
            for (int x = 0; x < src->w; x++)
                d[x] = ((float)s[x * src->c] / 255.0f - 0.5f) / 0.5f;
            memset(d + src->w, 0, sizeof(float) * (size_t)(dst_w - src->w));
        }
    return 0;
}

/* Solves the 8 x 8 system of the perspective transform taking src[i] to
 * dst[i]; m receives the 3 x 3 matrix (m[8] = 1). Gaussian elimination with
 * partial pivoting; -1 when singular. */
static int perspective(const double src[4][2], const double dst[4][2], double m[9])
{
    double a[8][9] = {{0}};
    for (int i = 0; i < 4; i++) {
        double x = src[i][0], y = src[i][1], u = dst[i][0], v = dst[i][1];
        double r0[9] = {x, y, 1, 0, 0, 0, -x * u, -y * u, u}, r1[9] = {0, 0, 0, x, y, 1, -x * v, -y * v, v};
        memcpy(a[i], r0, sizeof r0);
        memcpy(a[i + 4], r1, sizeof r1);
    }
    for (int c = 0; c < 8; c++) {
        int p = c;
        for (int r = c + 1; r < 8; r++)
            if (fabs(a[r][c]) > fabs(a[p][c]))
                p = r;
        if (fabs(a[p][c]) < 1e-12)
            return -1;
        for (int k = 0; k < 9; k++) {
            double t = a[c][k];
            a[c][k] = a[p][k], a[p][k] = t;
        }
        for (int r = 0; r < 8; r++) {
            if (r == c)
                continue;
            double f = a[r][c] / a[c][c];
            for (int k = c; k < 9; k++)
                a[r][k] -= f * a[c][k];
        }
    }
    for (int i = 0; i < 8; i++)
        m[i] = a[i][8] / a[i][i];
    m[8] = 1;
    return 0;
}

static void cubic_weights(float t, float w[4])
{
    const float A = -0.75f;
    w[0] = ((A * (t + 1) - 5 * A) * (t + 1) + 8 * A) * (t + 1) - 4 * A;
    w[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
    w[2] = ((A + 2) * (1 - t) - (A + 3)) * (1 - t) * (1 - t) + 1;
    w[3] = 1.f - w[0] - w[1] - w[2];
}

enum { TAB = 32, REMAP_BITS = 15 };

/* 4 x 4 fixed-point weights for the fractions (fy, fx) in 1/32 steps; the sum
 * made exactly 2^15 by moving the rounding error onto the largest (or
 * smallest) of the four central weights. */
static void cubic_table(int fy, int fx, int32_t t[16])
{
    float wy[4], wx[4];
    int sum = 0;
    cubic_weights((float)fy / TAB, wy);
    cubic_weights((float)fx / TAB, wx);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            float v = wy[i] * wx[j] * (1 << REMAP_BITS);
            t[i * 4 + j] = (int32_t)lrintf(v);
            sum += t[i * 4 + j];
        }
    int diff = sum - (1 << REMAP_BITS);
    if (diff) {
        int mi = 5, ma = 5;
        for (int i = 1; i < 3; i++)
            for (int j = 1; j < 3; j++) {
                int k = i * 4 + j;
                if (t[k] < t[mi])
                    mi = k;
                else if (t[k] > t[ma])
                    ma = k;
            }
        if (diff < 0)
            t[ma] -= diff;
        else
            t[mi] -= diff;
    }
}

static int clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

int ocr_image_crop(const ocr_image *src, const float quad[4][2], ocr_image *dst)
{
    double q[4][2], d[4][2], m[9];
    for (int i = 0; i < 4; i++)
        q[i][0] = quad[i][0], q[i][1] = quad[i][1];
    /* the sides as numpy measures them, in float32 */
    float s01 = hypotf(quad[0][0] - quad[1][0], quad[0][1] - quad[1][1]);
    float s23 = hypotf(quad[2][0] - quad[3][0], quad[2][1] - quad[3][1]);
    float s03 = hypotf(quad[0][0] - quad[3][0], quad[0][1] - quad[3][1]);
    float s12 = hypotf(quad[1][0] - quad[2][0], quad[1][1] - quad[2][1]);
    int cw = (int)fmaxf(s01, s23), ch = (int)fmaxf(s03, s12);
    if (cw <= 0 || ch <= 0)
        return -1;
    double dd[4][2] = {{0, 0}, {cw, 0}, {cw, ch}, {0, ch}};
    memcpy(d, dd, sizeof d);
    if (perspective(d, q, m)) /* from the crop back into the image */
        return -1;
    ocr_image out;
    if (ocr_image_alloc(&out, ch, cw, src->c))
        return -1;
    int c = src->c;
    for (int y = 0; y < ch; y++)
        for (int x = 0; x < cw; x++) {
            double W = m[6] * x + m[7] * y + m[8];
            W = W != 0 ? TAB / W : 0;
            double fX = fmax((double)INT32_MIN, fmin((double)INT32_MAX, (m[0] * x + m[1] * y + m[2]) * W));
            double fY = fmax((double)INT32_MIN, fmin((double)INT32_MAX, (m[3] * x + m[4] * y + m[5]) * W));
            long X = lrint(fX), Y = lrint(fY);
            int sx = (int)(X >> 5) - 1, sy = (int)(Y >> 5) - 1;
            int32_t t[16];
            cubic_table((int)(Y & (TAB - 1)), (int)(X & (TAB - 1)), t);
            uint8_t *o = out.data + ((size_t)y * cw + x) * c;
            for (int k = 0; k < c; k++) {
                int64_t sum = 0;
                for (int i = 0; i < 4; i++) {
                    int yy = clampi(sy + i, 0, src->h - 1);
                    for (int j = 0; j < 4; j++) {
                        int xx = clampi(sx + j, 0, src->w - 1);
                        sum += (int64_t)t[i * 4 + j] * src->data[((size_t)yy * src->w + xx) * c + k];
                    }
                }
                int64_t v = (sum + (1 << (REMAP_BITS - 1))) >> REMAP_BITS;
                o[k] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
            }
        }
    if (ch * 2 >= cw * 3) { /* height / width >= 1.5: turn counter-clockwise */
        ocr_image r;
        if (ocr_image_alloc(&r, cw, ch, c)) {
            ocr_image_free(&out);
            return -1;
        }
        for (int y = 0; y < cw; y++)
            for (int x = 0; x < ch; x++)
                memcpy(r.data + ((size_t)y * ch + x) * c, out.data + ((size_t)x * cw + (cw - 1 - y)) * c, (size_t)c);
        ocr_image_free(&out);
        out = r;
    }
    *dst = out;
    return 0;
}

void ocr_image_rotate180(ocr_image *im)
{
    size_t n = (size_t)im->h * im->w, c = (size_t)im->c;
    for (size_t i = 0; i < n / 2; i++)
        for (size_t k = 0; k < c; k++) {
            uint8_t t = im->data[i * c + k];
            im->data[i * c + k] = im->data[(n - 1 - i) * c + k];
            im->data[(n - 1 - i) * c + k] = t;
        }
}
