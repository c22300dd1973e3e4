/* Writes one plugin record per bundled creator into corpus/record/, made
 * from each creator's schema defaults plus the values below for required
 * fields, as seeds for fuzz_record. Not a test:
 *   make_record_seeds tests/fuzz                                           */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugrt/op.h"

typedef struct {
    const char *name;
    const char *version;
    const char *ns;
    prt_field fields[12];
    int nb;
} seed;

static const int64_t two_ones[2] = {1, 1}, two_zeros[2] = {0, 0}, one = 1;
static const int32_t i_one = 1, i_zero = 0, i_three = 3, i_ten = 10, i_twenty = 20, i_m1 = -1, i_hundred = 100;
static const float f_half = 0.5f, f_tenth = 0.1f, f_beta = 1.5f, weights[3] = {1.0f, 0.5f, 2.0f};

#define F(n, t, p, c) {n, p, t, 0, c}

static const seed seeds[] = {
    {"Swish", "1", "", {F("beta", PRT_FIELD_FLOAT32, &f_beta, 1)}, 1},
    {"Swish", "2", "", {F("beta", PRT_FIELD_FLOAT32, &f_beta, 1), F("weights", PRT_FIELD_FLOAT32, weights, 3)}, 2},
    {"ModulatedDeformConv2d", "1", "",
     {F("stride", PRT_FIELD_INT64, two_ones, 2), F("padding", PRT_FIELD_INT64, two_zeros, 2),
      F("dilation", PRT_FIELD_INT64, two_ones, 2), F("group", PRT_FIELD_INT64, &one, 1),
      F("deformable_group", PRT_FIELD_INT64, &one, 1)}, 5},
    {"ModulatedDeformConv2d", "2", "",
     {F("stride", PRT_FIELD_INT64, two_ones, 2), F("padding", PRT_FIELD_INT64, two_zeros, 2),
      F("dilation", PRT_FIELD_INT64, two_ones, 2), F("group", PRT_FIELD_INT64, &one, 1),
      F("deformable_group", PRT_FIELD_INT64, &one, 1)}, 5},
    {"BatchedNMS_TRT", "1", "",
     {F("shareLocation", PRT_FIELD_INT32, &i_one, 1), F("backgroundLabelId", PRT_FIELD_INT32, &i_m1, 1),
      F("numClasses", PRT_FIELD_INT32, &i_three, 1), F("topK", PRT_FIELD_INT32, &i_twenty, 1),
      F("keepTopK", PRT_FIELD_INT32, &i_ten, 1), F("scoreThreshold", PRT_FIELD_FLOAT32, &f_tenth, 1),
      F("iouThreshold", PRT_FIELD_FLOAT32, &f_half, 1)}, 7},
    {"BatchedNMSDynamic_TRT", "1", "",
     {F("shareLocation", PRT_FIELD_INT32, &i_zero, 1), F("backgroundLabelId", PRT_FIELD_INT32, &i_zero, 1),
      F("numClasses", PRT_FIELD_INT32, &i_three, 1), F("topK", PRT_FIELD_INT32, &i_twenty, 1),
      F("keepTopK", PRT_FIELD_INT32, &i_ten, 1), F("scoreThreshold", PRT_FIELD_FLOAT32, &f_tenth, 1),
      F("iouThreshold", PRT_FIELD_FLOAT32, &f_half, 1)}, 7},
    {"EfficientNMS_TRT", "1", "",
     {F("score_threshold", PRT_FIELD_FLOAT32, &f_tenth, 1), F("iou_threshold", PRT_FIELD_FLOAT32, &f_half, 1),
      F("max_output_boxes", PRT_FIELD_INT32, &i_hundred, 1), F("background_class", PRT_FIELD_INT32, &i_m1, 1),
      F("score_activation", PRT_FIELD_INT32, &i_zero, 1), F("box_coding", PRT_FIELD_INT32, &i_one, 1)}, 6},
    {"NonMaxSuppression", "1", "", {{0}}, 0},
    {"Scale", "1", "template", {{0}}, 0},
};

int main(int argc, char **argv)
{
    size_t i;
    int bad = 0;
    if (argc != 2) {
        fprintf(stderr, "usage: make_record_seeds FUZZ_DIR\n");
        return 2;
    }
    for (i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        const seed *s = &seeds[i];
        prt_fields fc = {s->fields, s->nb, 0};
        prt_op *op = NULL;
        size_t len = 0;
        void *buf;
        char path[1024];
        FILE *f;
        if (prt_op_create(prt_registry_global(), s->name, s->version, s->ns, &fc, &op) != PRT_OK) {
            fprintf(stderr, "%s v%s: %s\n", s->name, s->version, prt_op_last_error(NULL));
            bad = 1;
            continue;
        }
        if (prt_op_serialize(op, NULL, 0, &len) != PRT_OK || !(buf = malloc(len)) ||
            prt_op_serialize(op, buf, len, &len) != PRT_OK) {
            fprintf(stderr, "%s v%s: %s\n", s->name, s->version, prt_op_last_error(op));
            return 1;
        }
        snprintf(path, sizeof path, "%s/corpus/record/%s_v%s.record", argv[1], s->name, s->version);
        f = fopen(path, "wb");
        if (!f || fwrite(buf, 1, len, f) != len || fclose(f) != 0) {
            fprintf(stderr, "cannot write %s\n", path);
            return 1;
        }
        printf("%s (%zu bytes)\n", path, len);
        free(buf);
        prt_op_destroy(op);
    }
    return bad;
}
