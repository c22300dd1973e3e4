/* The model-free stages of examples/ocr/ against tests/data/ocr/stages.json,
 * written by make_expected.py from rapidocr-onnxruntime 1.4.4's own functions. */
#include "prt_test.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocr_db.h"
#include "ocr_image.h"
#include "ocr_stages.h"

static cJSON *load_json(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/ocr/stages.json", prt_test_data_dir());
    FILE *f = fopen(path, "rb");
    CHECK_MSG(f != NULL, "cannot open %s", path);
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    size_t got = fread(buf, 1, (size_t)n, f);
    fclose(f);
    buf[got] = '\0';
    cJSON *j = cJSON_Parse(buf);
    free(buf);
    CHECK(j != NULL);
    return j;
}

static int item_int(const cJSON *o, const char *k) { return cJSON_GetObjectItem(o, k)->valueint; }

TEST(ocr_det_size_matches_rapidocr)
{
    cJSON *j = load_json();
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(j, "det_size"))
    {
        int h = 0, w = 0;
        CHECK_EQ_INT(ocr_det_size(item_int(c, "h"), item_int(c, "w"), 736, &h, &w), 0);
        CHECK_EQ_INT(h, item_int(c, "out_h"));
        CHECK_EQ_INT(w, item_int(c, "out_w"));
    }
    int h = 7, w = 7;
    CHECK_EQ_INT(ocr_det_size(0, 10, 736, &h, &w), -1);
    CHECK_EQ_INT(h, 7); /* untouched on failure */
    cJSON_Delete(j);
}

static void quad_from(const cJSON *a, ocr_quad *q)
{
    for (int i = 0; i < 4; i++)
        for (int k = 0; k < 2; k++)
            q->p[i][k] = (float)cJSON_GetArrayItem(cJSON_GetArrayItem(a, i), k)->valuedouble;
}

static void check_quads(const ocr_quad *q, int n, const cJSON *want)
{
    CHECK_EQ_INT(n, cJSON_GetArraySize(want));
    for (int b = 0; b < n && b < cJSON_GetArraySize(want); b++) {
        ocr_quad w;
        quad_from(cJSON_GetArrayItem(want, b), &w);
        CHECK_MSG(memcmp(&w, &q[b], sizeof w) == 0, "box %d differs", b);
    }
}

TEST(ocr_boxes_filter_and_sort_match_rapidocr)
{
    cJSON *j = load_json();
    const cJSON *bx = cJSON_GetObjectItem(j, "boxes");
    const cJSON *in = cJSON_GetObjectItem(bx, "in");
    int n = cJSON_GetArraySize(in);
    ocr_quad *q = calloc((size_t)n, sizeof *q);
    for (int i = 0; i < n; i++)
        quad_from(cJSON_GetArrayItem(in, i), &q[i]);
    int kept = ocr_quads_filter(q, n, item_int(bx, "img_h"), item_int(bx, "img_w"));
    CHECK(kept > 0 && kept < n); /* the data has boxes dropped and kept */
    check_quads(q, kept, cJSON_GetObjectItem(bx, "filtered"));
    CHECK_EQ_INT(ocr_quads_sort(q, kept), 0);
    check_quads(q, kept, cJSON_GetObjectItem(bx, "sorted"));
    free(q);
    cJSON_Delete(j);
}

TEST(ocr_crop_widths_and_batches_match_rapidocr)
{
    cJSON *j = load_json();
    const cJSON *cr = cJSON_GetObjectItem(j, "crops");
    const cJSON *hwj = cJSON_GetObjectItem(cr, "hw");
    int n = cJSON_GetArraySize(hwj);
    int hw[64], order[32];
    CHECK(n <= 32);
    for (int i = 0; i < n; i++) {
        hw[2 * i] = cJSON_GetArrayItem(cJSON_GetArrayItem(hwj, i), 0)->valueint;
        hw[2 * i + 1] = cJSON_GetArrayItem(cJSON_GetArrayItem(hwj, i), 1)->valueint;
        CHECK_EQ_INT(ocr_resized_width(hw[2 * i], hw[2 * i + 1], 48, 192),
                     cJSON_GetArrayItem(cJSON_GetObjectItem(cr, "cls_resized"), i)->valueint);
    }
    CHECK_EQ_INT(ocr_aspect_order(hw, n, order), 0);
    for (int i = 0; i < n; i++)
        CHECK_EQ_INT(order[i], cJSON_GetArrayItem(cJSON_GetObjectItem(cr, "order"), i)->valueint);
    const cJSON *b;
    int beg = 0;
    cJSON_ArrayForEach(b, cJSON_GetObjectItem(cr, "rec_batches"))
    {
        int m = cJSON_GetArraySize(cJSON_GetObjectItem(b, "index")), bhw[12];
        for (int k = 0; k < m; k++) {
            bhw[2 * k] = hw[2 * order[beg + k]];
            bhw[2 * k + 1] = hw[2 * order[beg + k] + 1];
        }
        int width = ocr_rec_batch_width(bhw, m, 48, 320);
        CHECK_EQ_INT(width, item_int(b, "width"));
        for (int k = 0; k < m; k++)
            CHECK_EQ_INT(ocr_resized_width(bhw[2 * k], bhw[2 * k + 1], 48, width),
                         cJSON_GetArrayItem(cJSON_GetObjectItem(b, "resized"), k)->valueint);
        beg += m;
    }
    CHECK_EQ_INT(beg, n);
    cJSON_Delete(j);
}

TEST(ocr_ctc_decode_matches_rapidocr)
{
    cJSON *j = load_json();
    const cJSON *c = cJSON_GetObjectItem(j, "ctc");
    const cJSON *syms = cJSON_GetObjectItem(c, "symbols");
    char path[] = "/tmp/ocr_dict_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    FILE *f = fdopen(fd, "w");
    const cJSON *s;
    cJSON_ArrayForEach(s, syms) fprintf(f, "%s\n", s->valuestring);
    fclose(f);
    ocr_dict d;
    CHECK_EQ_INT(ocr_dict_load(path, &d), 0);
    remove(path);
    CHECK_EQ_INT(d.n, cJSON_GetArraySize(syms) + 2);
    CHECK(strcmp(d.sym[0], "blank") == 0 && strcmp(d.sym[d.n - 1], " ") == 0);
    int t = item_int(c, "t"), nc = item_int(c, "c");
    const cJSON *pj = cJSON_GetObjectItem(c, "prob");
    int nseq = cJSON_GetArraySize(cJSON_GetObjectItem(c, "text"));
    float *prob = malloc(sizeof(float) * (size_t)cJSON_GetArraySize(pj));
    int i = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, pj) prob[i++] = (float)v->valuedouble;
    for (int q = 0; q < nseq; q++) {
        char text[256];
        double score = -1;
        CHECK_EQ_INT(ocr_ctc_decode(prob + (size_t)q * t * nc, t, nc, &d, text, sizeof text, &score), 0);
        const char *want = cJSON_GetArrayItem(cJSON_GetObjectItem(c, "text"), q)->valuestring;
        CHECK_MSG(strcmp(text, want) == 0, "sequence %d: got \"%s\", want \"%s\"", q, text, want);
        CHECK_NEAR(score, cJSON_GetArrayItem(cJSON_GetObjectItem(c, "score"), q)->valuedouble, 1e-9);
    }
    char small[4];
    double sc;
    CHECK_EQ_INT(ocr_ctc_decode(prob, t, nc, &d, small, sizeof small, &sc), -1); /* too long for 4 bytes */
    CHECK_EQ_INT(ocr_ctc_decode(prob, t, d.n + 1, &d, small, sizeof small, &sc), -1); /* more classes than symbols */
    ocr_dict bad;
    CHECK_EQ_INT(ocr_dict_load("/nonexistent/keys.txt", &bad), -1);
    free(prob);
    ocr_dict_free(&d);
    cJSON_Delete(j);
}

TEST(ocr_cls_rotation_rule_matches_rapidocr)
{
    cJSON *j = load_json();
    const cJSON *c = cJSON_GetObjectItem(j, "cls");
    int n = cJSON_GetArraySize(cJSON_GetObjectItem(c, "prob"));
    for (int i = 0; i < n; i++) {
        const cJSON *p = cJSON_GetArrayItem(cJSON_GetObjectItem(c, "prob"), i);
        float pr[2] = {(float)cJSON_GetArrayItem(p, 0)->valuedouble, (float)cJSON_GetArrayItem(p, 1)->valuedouble};
        CHECK_EQ_INT(ocr_cls_rotate(pr, 0.9f), cJSON_GetArrayItem(cJSON_GetObjectItem(c, "rotate"), i)->valueint);
    }
    cJSON_Delete(j);
}

static void bytes_from(const cJSON *a, uint8_t *d)
{
    int i = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, a) d[i++] = (uint8_t)v->valueint;
}

TEST(ocr_resize_matches_opencv)
{
    cJSON *j = load_json();
    const cJSON *c;
    int worst = 0, nb_diff = 0, nb = 0;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(j, "resize"))
    {
        ocr_image src, dst = {0};
        CHECK_EQ_INT(ocr_image_alloc(&src, item_int(c, "h"), item_int(c, "w"), 3), 0);
        bytes_from(cJSON_GetObjectItem(c, "src"), src.data);
        int dh = item_int(c, "dst_h"), dw = item_int(c, "dst_w");
        CHECK_EQ_INT(ocr_image_resize(&src, dh, dw, &dst), 0);
        CHECK(dst.h == dh && dst.w == dw && dst.c == 3);
        int i = 0;
        const cJSON *v;
        cJSON_ArrayForEach(v, cJSON_GetObjectItem(c, "dst"))
        {
            int d = abs((int)dst.data[i++] - v->valueint);
            worst = d > worst ? d : worst;
            nb_diff += d != 0;
            nb++;
        }
        CHECK_EQ_INT(i, dh * dw * 3);
        ocr_image_free(&src);
        ocr_image_free(&dst);
    }
    /* OpenCV 5.0 differs by 1 in about 1% of the values when enlarging (ocr_image.h) */
    CHECK_MSG(worst <= 1 && nb_diff * 50 < nb, "max |diff| %d, %d of %d values differ", worst, nb_diff, nb);
    ocr_image bad;
    CHECK_EQ_INT(ocr_image_alloc(&bad, 0, 5, 3), -1);
    cJSON_Delete(j);
}

TEST(ocr_cls_input_matches_rapidocr)
{
    cJSON *j = load_json();
    const cJSON *c = cJSON_GetObjectItem(j, "cls_norm");
    ocr_image src, rs;
    int nb_diff = 0;
    int h = item_int(c, "h"), w = item_int(c, "w");
    CHECK_EQ_INT(ocr_image_alloc(&src, h, w, 3), 0);
    bytes_from(cJSON_GetObjectItem(c, "src"), src.data);
    int rw = ocr_resized_width(h, w, 48, 192);
    CHECK_EQ_INT(ocr_image_resize(&src, 48, rw, &rs), 0);
    float *x = malloc(sizeof(float) * 3 * 48 * 192);
    CHECK_EQ_INT(ocr_image_normalize(&rs, 192, x), 0);
    int i = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, cJSON_GetObjectItem(c, "dst"))
    {
        double d = fabs(x[i] - v->valuedouble);
        /* exact up to rounding, or one 8-bit level (2/255) from the resize */
        CHECK_MSG(d <= 1e-6 || fabs(d - 2.0 / 255) <= 1e-6, "element %d: %g, rapidocr %g", i, x[i], v->valuedouble);
        nb_diff += d > 1e-6;
        i++;
    }
    CHECK_EQ_INT(i, 3 * 48 * 192);
    CHECK_MSG(nb_diff * 50 < i, "%d of %d values differ", nb_diff, i);
    CHECK_EQ_INT(ocr_image_normalize(&rs, rw - 1, x), -1); /* narrower than the image */
    free(x);
    ocr_image_free(&src);
    ocr_image_free(&rs);
    cJSON_Delete(j);
}

TEST(ocr_db_mask_matches_rapidocr)
{
    cJSON *j = load_json();
    const cJSON *c = cJSON_GetObjectItem(j, "db_mask");
    int h = item_int(c, "h"), w = item_int(c, "w"), i = 0, on = 0;
    float prob[256];
    uint8_t mask[256];
    const cJSON *v;
    CHECK(h * w <= 256);
    cJSON_ArrayForEach(v, cJSON_GetObjectItem(c, "prob")) prob[i++] = (float)v->valuedouble;
    CHECK_EQ_INT(ocr_db_mask(prob, h, w, 0.3f, mask), 0);
    i = 0;
    cJSON_ArrayForEach(v, cJSON_GetObjectItem(c, "mask"))
    {
        CHECK_MSG(mask[i] == v->valueint, "pixel (%d, %d): %d, rapidocr %d", i / w, i % w, mask[i], v->valueint);
        on += v->valueint;
        i++;
    }
    CHECK(on > 0 && on < h * w); /* the data has both */
    cJSON_Delete(j);
}

TEST(ocr_min_area_box_matches_rapidocr)
{
    cJSON *j = load_json();
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(j, "min_area"))
    {
        float pts[128];
        int n = 0;
        const cJSON *v;
        cJSON_ArrayForEach(v, cJSON_GetObjectItem(c, "pts")) pts[n++] = (float)v->valuedouble;
        ocr_quad q, want;
        float side = -1;
        CHECK_EQ_INT(ocr_min_area_box(pts, n / 2, &q, &side), 0);
        quad_from(cJSON_GetObjectItem(c, "box"), &want);
        for (int k = 0; k < 4; k++)
            CHECK_MSG(fabsf(q.p[k][0] - want.p[k][0]) <= 1e-3f && fabsf(q.p[k][1] - want.p[k][1]) <= 1e-3f,
                      "corner %d: (%g, %g), rapidocr (%g, %g)", k, q.p[k][0], q.p[k][1], want.p[k][0],
                      want.p[k][1]);
        CHECK_NEAR(side, cJSON_GetObjectItem(c, "side")->valuedouble, 1e-3);
    }
    ocr_quad q;
    float s;
    CHECK_EQ_INT(ocr_min_area_box(NULL, 0, &q, &s), -1);
    cJSON_Delete(j);
}

TEST(ocr_db_unclip_matches_rapidocr)
{
    cJSON *j = load_json();
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(j, "unclip"))
    {
        ocr_quad in, got, want;
        float side = -1;
        quad_from(cJSON_GetObjectItem(c, "box"), &in);
        quad_from(cJSON_GetObjectItem(c, "out"), &want);
        CHECK_EQ_INT(ocr_db_unclip(&in, 1.6, &got, &side), 0);
        for (int k = 0; k < 4; k++)
            CHECK_MSG(fabsf(got.p[k][0] - want.p[k][0]) <= 1e-3f && fabsf(got.p[k][1] - want.p[k][1]) <= 1e-3f,
                      "corner %d: (%g, %g), rapidocr (%g, %g)", k, got.p[k][0], got.p[k][1], want.p[k][0],
                      want.p[k][1]);
        CHECK_NEAR(side, cJSON_GetObjectItem(c, "side")->valuedouble, 1e-3);
    }
    cJSON_Delete(j);
}

TEST(ocr_db_box_score_matches_rapidocr)
{
    cJSON *j = load_json();
    const cJSON *c = cJSON_GetObjectItem(j, "box_score"), *b, *v;
    int h = item_int(c, "h"), w = item_int(c, "w"), i = 0;
    float *prob = malloc(sizeof(float) * (size_t)h * w);
    cJSON_ArrayForEach(v, cJSON_GetObjectItem(c, "prob")) prob[i++] = (float)v->valuedouble;
    double worst = 0;
    cJSON_ArrayForEach(b, cJSON_GetObjectItem(c, "boxes"))
    {
        ocr_quad q;
        double s = -1;
        quad_from(cJSON_GetObjectItem(b, "box"), &q);
        CHECK_EQ_INT(ocr_db_box_score(prob, h, w, &q, &s), 0);
        worst = fmax(worst, fabs(s - cJSON_GetObjectItem(b, "score")->valuedouble));
    }
    /* a few outline pixels of slanted boxes may differ from cv2.fillPoly's
     * (ocr_db.h); on this noise map that moves small boxes' means by <= 0.025 */
    CHECK_MSG(worst <= 0.025, "worst |score - rapidocr| %g", worst);
    /* an axis-aligned box covers exactly its rows and columns, both ends included */
    ocr_quad q = {{{2.7f, 3.2f}, {10.0f, 3.0f}, {10.0f, 7.0f}, {2.0f, 7.0f}}};
    double want = 0, got = -1;
    for (int y = 3; y <= 7; y++)
        for (int x = 2; x <= 10; x++)
            want += prob[y * w + x];
    want /= 45;
    CHECK_EQ_INT(ocr_db_box_score(prob, h, w, &q, &got), 0);
    CHECK_NEAR(got, want, 1e-12);
    free(prob);
    cJSON_Delete(j);
}

TEST(ocr_db_box_to_image_matches_rapidocr)
{
    cJSON *j = load_json();
    const cJSON *c = cJSON_GetObjectItem(j, "to_image"), *b;
    int n = 0;
    cJSON_ArrayForEach(b, cJSON_GetObjectItem(c, "boxes"))
    {
        ocr_quad q, want;
        quad_from(cJSON_GetObjectItem(b, "box"), &q);
        quad_from(cJSON_GetObjectItem(b, "out"), &want);
        ocr_db_box_to_image(&q, item_int(c, "map_h"), item_int(c, "map_w"), item_int(c, "img_h"),
                            item_int(c, "img_w"));
        CHECK_MSG(memcmp(&q, &want, sizeof q) == 0, "box %d differs", n);
        n++;
    }
    CHECK(n > 0);
    cJSON_Delete(j);
}

static int quad_near(const ocr_quad *a, const ocr_quad *b, float tol)
{
    for (int k = 0; k < 4; k++)
        if (fabsf(a->p[k][0] - b->p[k][0]) > tol || fabsf(a->p[k][1] - b->p[k][1]) > tol)
            return 0;
    return 1;
}

TEST(ocr_db_regions_match_rapidocr_contours)
{
    cJSON *j = load_json();
    const cJSON *c = cJSON_GetObjectItem(j, "regions"), *v, *b;
    int h = item_int(c, "h"), w = item_int(c, "w"), i = 0, n = -1;
    uint8_t *mask = malloc((size_t)h * w);
    cJSON_ArrayForEach(v, cJSON_GetObjectItem(c, "mask")) mask[i++] = (uint8_t)v->valueint;
    ocr_quad boxes[32];
    float sides[32];
    int used[32] = {0};
    CHECK_EQ_INT(ocr_db_regions(mask, h, w, boxes, sides, 32, &n), 0);
    CHECK_EQ_INT(n, cJSON_GetArraySize(cJSON_GetObjectItem(c, "boxes")));
    cJSON_ArrayForEach(b, cJSON_GetObjectItem(c, "boxes"))
    {
        ocr_quad want;
        int found = -1;
        quad_from(cJSON_GetObjectItem(b, "box"), &want);
        for (int k = 0; k < n && k < 32 && found < 0; k++)
            if (!used[k] && quad_near(&boxes[k], &want, 1e-3f) &&
                fabs(sides[k] - cJSON_GetObjectItem(b, "side")->valuedouble) <= 1e-3)
                found = k;
        CHECK_MSG(found >= 0, "no region gives the box (%g, %g) (%g, %g) (%g, %g) (%g, %g)", want.p[0][0],
                  want.p[0][1], want.p[1][0], want.p[1][1], want.p[2][0], want.p[2][1], want.p[3][0], want.p[3][1]);
        if (found >= 0)
            used[found] = 1;
    }
    free(mask);
    cJSON_Delete(j);
}

TEST(ocr_crop_matches_rapidocr)
{
    cJSON *j = load_json();
    const cJSON *c = cJSON_GetObjectItem(j, "crop"), *k, *v;
    ocr_image page;
    CHECK_EQ_INT(ocr_image_alloc(&page, item_int(c, "h"), item_int(c, "w"), 3), 0);
    bytes_from(cJSON_GetObjectItem(c, "src"), page.data);
    int worst = 0, nb_diff = 0, nb = 0;
    cJSON_ArrayForEach(k, cJSON_GetObjectItem(c, "cases"))
    {
        float quad[4][2];
        ocr_quad q;
        ocr_image crop;
        quad_from(cJSON_GetObjectItem(k, "quad"), &q);
        memcpy(quad, q.p, sizeof quad);
        CHECK_EQ_INT(ocr_image_crop(&page, quad, &crop), 0);
        CHECK_EQ_INT(crop.h, item_int(k, "h"));
        CHECK_EQ_INT(crop.w, item_int(k, "w"));
        int i = 0;
        if (crop.h == item_int(k, "h") && crop.w == item_int(k, "w"))
            cJSON_ArrayForEach(v, cJSON_GetObjectItem(k, "dst"))
            {
                int d = abs((int)crop.data[i++] - v->valueint);
                worst = d > worst ? d : worst;
                nb_diff += d != 0;
                nb++;
            }
        ocr_image_free(&crop);
    }
    /* OpenCV 5.0's warpPerspective differs by 1 in about 13% of the values (ocr_image.h) */
    CHECK_MSG(worst <= 1 && nb_diff * 5 < nb, "max |diff| %d, %d of %d values differ", worst, nb_diff, nb);
    ocr_image_rotate180(&page);
    int i = 0, same = 1;
    cJSON_ArrayForEach(v, cJSON_GetObjectItem(c, "rot180")) same &= page.data[i++] == v->valueint;
    CHECK(same);
    ocr_image_free(&page);
    cJSON_Delete(j);
}
