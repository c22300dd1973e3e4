/* tests/onnx/test_models.c - the real OCR models of rapidocr-onnxruntime
 * 1.4.4 (scripts/fetch_models.sh puts them in .models/; scripts/test.sh
 * fetches them first): each is read and checked, and an import reports
 * every node it cannot import without crashing. Skips when the models are
 * not fetched. */
#include <sys/stat.h>

#include "prt_test.h"
#include "plugrt/onnx.h"

typedef struct counts {
    int issues;
} counts;

static void on_issue(void *u, const char *node, const char *op, const char *dom, const char *why)
{
    counts *c = u;
    (void)node; (void)op; (void)dom;
    if (!why || !why[0]) prt_test_fail(__FILE__, __LINE__, "an issue without a reason");
    c->issues++;
}

static void check_model(const char *file, int64_t ir, int64_t opset, int32_t nodes, int convs)
{
    char path[1024], err[2048];
    struct stat st;
    prt_onnx_model *m = NULL;
    prt_network *net = NULL;
    prt_onnx_import_config ic;
    counts c = {0};
    int32_t i, n_conv = 0;
    const char *dom;
    int64_t v;
    snprintf(path, sizeof path, "%s/.models/rapidocr-onnxruntime-1.4.4/%s", PRT_SOURCE_DIR, file);
    if (stat(path, &st) != 0) SKIP("OCR models not fetched (scripts/fetch_models.sh)");
    CHECK_MSG(prt_onnx_model_load(path, &m, err, sizeof err) == PRT_OK, "%s", err);
    CHECK_EQ_INT(prt_onnx_model_ir_version(m), ir);
    CHECK_OK(prt_onnx_model_opset(m, 0, &dom, &v));
    CHECK_EQ_INT(v, opset);
    CHECK_EQ_INT(prt_onnx_model_nb_inputs(m), 1);
    CHECK_EQ_INT(prt_onnx_model_nb_nodes(m), nodes);
    for (i = 0; i < nodes; i++) {
        const char *op;
        CHECK_OK(prt_onnx_model_node(m, i, NULL, &op, NULL));
        n_conv += strcmp(op, "Conv") == 0;
    }
    CHECK_EQ_INT(n_conv, convs);
    prt_onnx_import_config_init(&ic);
    ic.keep_going = 1;
    ic.issue = on_issue;
    ic.issue_user = &c;
    if (prt_onnx_import(m, NULL, &ic, &net, err, sizeof err) == PRT_OK) {
        CHECK_EQ_INT(c.issues, 0);
        prt_network_destroy(net);
    } else {
        CHECK(c.issues > 0 || err[0]);
        printf("  %s: %d node(s) not importable yet\n", file, c.issues);
    }
    prt_onnx_model_destroy(m);
}

TEST(ocr_det) { check_model("ch_PP-OCRv4_det_infer.onnx", 8, 12, 672, 62); }
TEST(ocr_rec) { check_model("ch_PP-OCRv4_rec_infer.onnx", 8, 12, 860, 38); }
TEST(ocr_cls) { check_model("ch_ppocr_mobile_v2.0_cls_infer.onnx", 7, 11, 566, 53); }
