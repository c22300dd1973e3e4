/* The OCR example: detection -> boxes -> angle classification -> recognition
 * -> CTC decoding over the PaddleOCR models of rapidocr-onnxruntime 1.4.4,
 * run by libplugrt through its public headers; prints one recognized line per
 * output line, in reading order, as rapidocr-onnxruntime does.
 *   ocr MODELS_DIR IMAGE.png
 * MODELS_DIR holds the three models and ppocr_keys_v1.txt
 * (scripts/fetch_models.sh). See README.md in this folder. */
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocr_db.h"
#include "ocr_image.h"
#include "ocr_model.h"
#include "ocr_stages.h"

enum { BATCH = 6, MAX_BOXES = 1000 };

/* 8-bit PNG into 3-channel BGR (gray replicated, alpha dropped). */
static int load_png(const char *path, ocr_image *out)
{
    png_image pi;
    memset(&pi, 0, sizeof pi);
    pi.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file(&pi, path)) {
        fprintf(stderr, "ocr: %s: %s\n", path, pi.message);
        return -1;
    }
    pi.format = PNG_FORMAT_BGR;
    ocr_image im;
    if (ocr_image_alloc(&im, (int)pi.height, (int)pi.width, 3)) {
        png_image_free(&pi);
        fprintf(stderr, "ocr: %s: %ux%u is too large\n", path, pi.width, pi.height);
        return -1;
    }
    if (!png_image_finish_read(&pi, NULL, im.data, 0, NULL)) {
        fprintf(stderr, "ocr: %s: %s\n", path, pi.message);
        ocr_image_free(&im);
        return -1;
    }
    *out = im;
    return 0;
}

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, name);
    return p;
}

/* Detection: boxes in reading order; returns their count or -1. */
static int detect(const char *model, const ocr_image *img, ocr_quad *boxes)
{
    int dh, dw, n = -1, nr = 0;
    ocr_image rs = {0};
    float *x = NULL, *prob = NULL, *sides = NULL;
    uint8_t *mask = NULL;
    ocr_quad *reg = NULL;
    char err[1024];
    int64_t yd[8];
    int ynb;
    if (ocr_det_size(img->h, img->w, 736, &dh, &dw) || ocr_image_resize(img, dh, dw, &rs))
        goto done;
    x = malloc(sizeof(float) * 3 * (size_t)dh * dw);
    if (!x || ocr_image_normalize(&rs, dw, x))
        goto done;
    const int64_t xd[4] = {1, 3, dh, dw};
    if (ocr_model_run(model, x, xd, &prob, yd, &ynb, err, sizeof err)) {
        fprintf(stderr, "ocr: detection: %s\n", err);
        goto done;
    }
    if (ynb != 4 || yd[0] != 1 || yd[1] != 1) {
        fprintf(stderr, "ocr: detection: expected a [1, 1, h, w] map\n");
        goto done;
    }
    int mh = (int)yd[2], mw = (int)yd[3];
    mask = malloc((size_t)mh * mw);
    reg = malloc(sizeof *reg * MAX_BOXES);
    sides = malloc(sizeof *sides * MAX_BOXES);
    if (!mask || !reg || !sides || ocr_db_mask(prob, mh, mw, 0.3f, mask) ||
        ocr_db_regions(mask, mh, mw, reg, sides, MAX_BOXES, &nr))
        goto done;
    n = 0;
    for (int i = 0; i < nr && i < MAX_BOXES; i++) {
        double score;
        ocr_quad b;
        float side;
        if (sides[i] < 3 || ocr_db_box_score(prob, mh, mw, &reg[i], &score) || 0.5 > score)
            continue;
        if (ocr_db_unclip(&reg[i], 1.6, &b, &side) || side < 5)
            continue;
        ocr_db_box_to_image(&b, mh, mw, img->h, img->w);
        boxes[n++] = b;
    }
    n = ocr_quads_filter(boxes, n, img->h, img->w);
    ocr_quads_sort(boxes, n);
done:
    ocr_image_free(&rs);
    free(x), free(prob), free(mask), free(reg), free(sides);
    return n;
}

/* One batch of crops (indices idx[0..m)) resized to height 48 and padded to
 * width, normalized into x. */
static int batch_input(ocr_image *crops, const int *idx, int m, int width, float *x)
{
    for (int k = 0; k < m; k++) {
        ocr_image *c = &crops[idx[k]], rs;
        int rw = ocr_resized_width(c->h, c->w, 48, width);
        if (ocr_image_resize(c, 48, rw, &rs))
            return -1;
        int r = ocr_image_normalize(&rs, width, x + (size_t)k * 3 * 48 * width);
        ocr_image_free(&rs);
        if (r)
            return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int rc = 1, n = 0;
    ocr_image img = {0};
    ocr_image *crops = NULL;
    ocr_quad *boxes = NULL;
    ocr_dict dict = {0};
    int *hw = NULL, *order = NULL;
    char *det = NULL, *cls = NULL, *rec = NULL, *keys = NULL, **text = NULL;
    double *score = NULL;
    if (argc != 3) {
        fprintf(stderr, "usage: ocr MODELS_DIR IMAGE.png   (MODELS_DIR: scripts/fetch_models.sh prints it)\n");
        return 2;
    }
    det = join(argv[1], "ch_PP-OCRv4_det_infer.onnx");
    cls = join(argv[1], "ch_ppocr_mobile_v2.0_cls_infer.onnx");
    rec = join(argv[1], "ch_PP-OCRv4_rec_infer.onnx");
    keys = join(argv[1], "ppocr_keys_v1.txt");
    boxes = malloc(sizeof *boxes * MAX_BOXES);
    if (!det || !cls || !rec || !keys || !boxes || ocr_dict_load(keys, &dict) || load_png(argv[2], &img))
        goto done;
    /* rapidocr's bounds on the image: longer side <= 2000, shorter >= 30 */
    if (img.h > 2000 || img.w > 2000 || img.h < 30 || img.w < 30) {
        fprintf(stderr, "ocr: %s is %dx%d; this example takes sides of 30 to 2000 pixels\n", argv[2], img.w, img.h);
        goto done;
    }
    n = detect(det, &img, boxes);
    if (n < 0)
        goto done;
    crops = calloc((size_t)n + 1, sizeof *crops);
    hw = malloc(sizeof(int) * 2 * ((size_t)n + 1));
    order = malloc(sizeof(int) * ((size_t)n + 1));
    text = calloc((size_t)n + 1, sizeof *text);
    score = calloc((size_t)n + 1, sizeof *score);
    if (!crops || !hw || !order || !text || !score)
        goto done;
    for (int i = 0; i < n; i++) {
        if (ocr_image_crop(&img, (const float(*)[2])boxes[i].p, &crops[i]))
            goto done;
        hw[2 * i] = crops[i].h, hw[2 * i + 1] = crops[i].w;
    }
    char err[1024];
    /* angle classification, batches of 6 by aspect ratio */
    ocr_aspect_order(hw, n, order);
    for (int b = 0; b < n; b += BATCH) {
        int m = n - b < BATCH ? n - b : BATCH;
        float *x = malloc(sizeof(float) * (size_t)m * 3 * 48 * 192), *y = NULL;
        int64_t yd[8], xd[4] = {m, 3, 48, 192};
        int ynb;
        if (!x || batch_input(crops, order + b, m, 192, x) || ocr_model_run(cls, x, xd, &y, yd, &ynb, err, sizeof err)) {
            fprintf(stderr, "ocr: classification: %s\n", x ? err : "out of memory");
            free(x);
            goto done;
        }
        for (int k = 0; k < m; k++)
            if (ocr_cls_rotate(y + 2 * k, 0.9f))
                ocr_image_rotate180(&crops[order[b + k]]);
        free(x), free(y);
    }
    /* recognition, batches of 6 by aspect ratio, each as wide as its widest */
    for (int b = 0; b < n; b += BATCH) {
        int m = n - b < BATCH ? n - b : BATCH, bhw[2 * BATCH];
        for (int k = 0; k < m; k++)
            bhw[2 * k] = hw[2 * order[b + k]], bhw[2 * k + 1] = hw[2 * order[b + k] + 1];
        int width = ocr_rec_batch_width(bhw, m, 48, 320);
        float *x = malloc(sizeof(float) * (size_t)m * 3 * 48 * width), *y = NULL;
        int64_t yd[8], xd[4] = {m, 3, 48, width};
        int ynb;
        if (!x || batch_input(crops, order + b, m, width, x) || ocr_model_run(rec, x, xd, &y, yd, &ynb, err, sizeof err)) {
            fprintf(stderr, "ocr: recognition: %s\n", x ? err : "out of memory");
            free(x);
            goto done;
        }
        for (int k = 0; k < m && ynb == 3; k++) {
            int i = order[b + k];
            size_t cap = 4 * (size_t)yd[1] + 1;
            text[i] = malloc(cap);
            if (!text[i] || ocr_ctc_decode(y + (size_t)k * yd[1] * yd[2], (int)yd[1], (int)yd[2], &dict, text[i], cap,
                                           &score[i])) {
                fprintf(stderr, "ocr: recognition: %lld classes for a dictionary of %d symbols\n",
                        (long long)yd[2], dict.n);
                free(x), free(y);
                goto done;
            }
        }
        free(x), free(y);
    }
    for (int i = 0; i < n; i++)
        if (text[i] && score[i] >= 0.5)
            printf("%s\n", text[i]);
    rc = 0;
done:
    for (int i = 0; crops && i < n; i++)
        ocr_image_free(&crops[i]);
    for (int i = 0; text && i < n; i++)
        free(text[i]);
    free(crops), free(hw), free(order), free(text), free(score), free(boxes);
    free(det), free(cls), free(rec), free(keys);
    ocr_dict_free(&dict);
    ocr_image_free(&img);
    return rc;
}
