/* tests/compat/test_nms.c - BatchedNMSPlugin (trt_nms/), a TensorRT plugin in
 * the style of the UFF-era batchedNMSPlugin (NMSParameters blob, ASSERT on its
 * length, fields parsed in createPlugin), compiled unchanged against
 * include/plugrt/compat, runs beside plugrt's own BatchedNMS_TRT in one
 * network and plan and gives the same detections. */
#include <stdio.h>

#include "compat_util.h"
#include "prt_test.h"

enum { B = 2, N = 64, C = 4, K = 10 };

static void make_inputs(float *boxes, int L, float *scores, unsigned seed)
{
    float centers[8 * 2], noise[B * N * 4 * 4];
    int b, n, l, k;
    compat_fill(centers, 16, seed, 0.05f, 0.95f);
    compat_fill(noise, (size_t)B * N * L * 4, seed + 1, -0.06f, 0.06f);
    compat_fill(scores, (size_t)B * N * C, seed + 2, 0.0f, 1.0f);
    for (b = 0; b < B; b++)
        for (n = 0; n < N; n++)
            for (l = 0; l < L; l++) {
                float *bx = boxes + (((size_t)b * N + n) * L + l) * 4;
                const float *ctr = centers + 2 * ((n + l) % 8);
                const float *z = noise + (((size_t)b * N + n) * L + l) * 4;
                for (k = 0; k < 4; k++) bx[k] = ctr[k % 2] + (k < 2 ? -0.12f : 0.12f) + z[k];
            }
}

static void agree(int share_location, int background, unsigned seed)
{
    char json[4096], err[1024] = "";
    int L = share_location ? 1 : C, i, o;
    static float boxes[B * N * C * 4], scores[B * N * C];
    int32_t num[2][B];
    float ob[2][B * K * 4], os[2][B * K], oc[2][B * K];
    const char *fields_fmt =
        "{\"shareLocation\": %d, \"backgroundLabelId\": %d, \"numClasses\": %d, \"topK\": 20, \"keepTopK\": %d,"
        " \"scoreThreshold\": 0.3, \"iouThreshold\": 0.5, \"isNormalized\": 1, \"clipBoxes\": 1}";
    char fields[512];
    compat_io in[2] = {{"boxes", CDIMS(B, N, L, 4), boxes, sizeof(float) * B * N * L * 4},
                       {"scores", CDIMS(B, N, C), scores, sizeof scores}};
    compat_io out[8] = {
        {"n0", {0}, num[0], sizeof num[0]}, {"b0", {0}, ob[0], sizeof ob[0]}, {"s0", {0}, os[0], sizeof os[0]},
        {"c0", {0}, oc[0], sizeof oc[0]},   {"n1", {0}, num[1], sizeof num[1]}, {"b1", {0}, ob[1], sizeof ob[1]},
        {"s1", {0}, os[1], sizeof os[1]},   {"c1", {0}, oc[1], sizeof oc[1]}};
    snprintf(fields, sizeof fields, fields_fmt, share_location, background, C, K);
    snprintf(json, sizeof json,
             "{\"name\": \"nms_pair\", \"inputs\": ["
             "{\"name\": \"boxes\", \"dtype\": \"f32\", \"dims\": [-1, %d, %d, 4]},"
             "{\"name\": \"scores\", \"dtype\": \"f32\", \"dims\": [-1, %d, %d]}],"
             " \"layers\": ["
             "{\"name\": \"ours\", \"plugin\": \"BatchedNMS_TRT\", \"version\": \"1\", \"fields\": %s,"
             " \"inputs\": [\"boxes\", \"scores\"], \"outputs\": [\"n0\", \"b0\", \"s0\", \"c0\"]},"
             "{\"name\": \"trt\", \"plugin\": \"BatchedNMSPlugin\", \"version\": \"1\", \"fields\": %s,"
             " \"inputs\": [\"boxes\", \"scores\"], \"outputs\": [\"n1\", \"b1\", \"s1\", \"c1\"]}],"
             " \"outputs\": [\"n0\", \"b0\", \"s0\", \"c0\", \"n1\", \"b1\", \"s1\", \"c1\"]}",
             N, L, N, C, fields, fields);
    make_inputs(boxes, L, scores, seed);
    memset(num, 0x55, sizeof num);
    CHECK_MSG(compat_run(NULL, json, PRT_DEVICE_CPU, in, 2, out, 8, err, sizeof err) == PRT_OK, "%s", err);
    for (i = 0; i < B; i++) {
        CHECK_MSG(num[0][i] == num[1][i], "image %d: %d detections from BatchedNMS_TRT, %d from BatchedNMSPlugin", i,
                  num[0][i], num[1][i]);
        CHECK_MSG(num[0][i] > 0 && num[0][i] <= K, "image %d: %d detections", i, num[0][i]);
    }
    for (o = 0; o < B * K; o++) {
        CHECK_MSG(os[0][o] == os[1][o] && oc[0][o] == oc[1][o], "row %d: score %g class %g vs score %g class %g", o,
                  os[0][o], oc[0][o], os[1][o], oc[1][o]);
        for (i = 0; i < 4; i++) CHECK_MSG(ob[0][o * 4 + i] == ob[1][o * 4 + i], "row %d box[%d] differs", o, i);
    }
}

TEST(trt_nms_agrees_with_batched_nms_shared_location)
{
    agree(1, -1, 11);
}

TEST(trt_nms_agrees_with_batched_nms_per_class_boxes_and_background)
{
    agree(0, 0, 23);
}

/* The creator checks the blob length before the ASSERTing constructor reads
 * it; the adapter turns the refusal into a message. */
TEST(trt_nms_short_blob_is_refused_with_a_message)
{
    const prt_plugin_creator *c = NULL;
    prt_blob_plugin *p = NULL;
    char buf[256] = "";
    prt_msg m = {buf, sizeof buf};
    static const unsigned char blob[3] = {1, 2, 3};
    CHECK_OK(prt_registry_find(prt_registry_global(), "BatchedNMSPlugin", "1", "", &c, NULL));
    CHECK(c->deserialize_blob(c, blob, sizeof blob, &p, &m) != PRT_OK);
    CHECK(p == NULL);
    CHECK_STR_CONTAINS(buf, "deserializePlugin returned nullptr");
}
