/* tests/plugins/nms/test_nms_capacity.c - NonMaxSuppression refuses an
 * output that cannot hold every row the run may select. */
#include <stdlib.h>
#include <string.h>

#include "nms_harness.h"
#include "plugins/nms/nms.h"
#include "prt_test.h"

/* boxes [1, 4, 4], scores [1, 2, 4]: up to 1*2*4 = 8 selected rows of 3. */
static prt_status run_onnx(int64_t rows, int64_t *out, size_t out_len, char *msg, size_t cap)
{
    prt_fields fc = {NULL, 0, 0};
    prt_field_plugin *p = NULL;
    char e[256] = "";
    prt_msg err = {e, sizeof e};
    prt_tensor_desc in[5], od[1];
    float boxes[16], scores[8];
    const void *ins[5] = {NULL, NULL, NULL, NULL, NULL};
    int64_t max_per_class = 4;
    void *outs[1], *ws;
    th_exec t;
    prt_status s;
    int k;
    CHECK_OK(prt__nms_onnx_creator.create_field(&prt__nms_onnx_creator, &fc, PRT_PHASE_RUNTIME, &p, &err));
    if (!p) return PRT_STATUS_INTERNAL;
    memset(in, 0, sizeof in);
    memset(od, 0, sizeof od);
    in[0].dtype = in[1].dtype = PRT_DTYPE_F32;
    in[0].dims.nb = in[1].dims.nb = 3;
    in[0].dims.d[0] = 1, in[0].dims.d[1] = 4, in[0].dims.d[2] = 4;
    in[1].dims.d[0] = 1, in[1].dims.d[1] = 2, in[1].dims.d[2] = 4;
    for (k = 2; k < 5; k++) { /* max_output_boxes_per_class 4; no thresholds */
        in[k].dtype = k == 2 ? PRT_DTYPE_I64 : PRT_DTYPE_F32;
        in[k].dims.nb = 1;
        in[k].dims.d[0] = 1;
    }
    ins[2] = &max_per_class;
    od[0].dtype = PRT_DTYPE_I64;
    od[0].dims.nb = 2;
    od[0].dims.d[0] = rows;
    od[0].dims.d[1] = 3;
    for (k = 0; k < 4; k++) { /* disjoint boxes, all kept */
        boxes[4 * k] = (float)(2 * k), boxes[4 * k + 1] = 0, boxes[4 * k + 2] = (float)(2 * k + 1), boxes[4 * k + 3] = 1;
    }
    for (k = 0; k < 8; k++) scores[k] = 0.5f + 0.01f * (float)k;
    ins[0] = boxes;
    ins[1] = scores;
    outs[0] = out;
    memset(out, 0xa5, out_len);
    th_exec_init(&t, PRT_DEVICE_CPU, 1, NULL);
    ws = calloc(1, 1 << 20); /* more than NMS over 8 candidates needs */
    s = p->ops->runtime->enqueue(p, in, od, ins, outs, ws, &t.ex);
    free(ws);
    snprintf(msg, cap, "%s", t.error);
    p->ops->destroy(p);
    return s;
}

TEST(onnx_nms_refuses_an_output_smaller_than_its_upper_bound)
{
    int64_t out[64];
    char msg[512];
    size_t k;
    CHECK_EQ_INT(run_onnx(0, out, sizeof out, msg, sizeof msg), PRT_STATUS_SHAPE_MISMATCH);
    CHECK_STR_CONTAINS(msg, "output 0 must hold [8, 3] (B*C*N rows), the host gives [0, 3]");
    for (k = 0; k < sizeof out; k++) CHECK(((uint8_t *)out)[k] == 0xa5);
    CHECK_EQ_INT(run_onnx(7, out, sizeof out, msg, sizeof msg), PRT_STATUS_SHAPE_MISMATCH);
    CHECK_OK(run_onnx(8, out, sizeof out, msg, sizeof msg));
    CHECK_EQ_INT(out[0], 0); /* batch 0, class 0, its best box (3) */
    CHECK_EQ_INT(out[2], 3);
}
