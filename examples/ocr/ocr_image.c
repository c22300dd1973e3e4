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
