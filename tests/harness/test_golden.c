/* Polygraphy golden-IO JSON reader and strict base64: the shipped golden
 * files, a Fortran-order input checked against NumPy's own decoding, and
 * malformed files built here. */
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "harness/harness.h"
#include "plugrt/op.h"
#include "prt_test.h"

/* ---- base64 ------------------------------------------------------------------------ */

static void b64_ok(const char *text, const char *want)
{
    uint8_t *out = NULL;
    size_t n = 99;
    char err[256] = "";
    prt_status s = prt__base64_decode(text, strlen(text), &out, &n, err, sizeof err);
    CHECK_MSG(s == PRT_OK, "\"%s\": %s", text, err);
    if (s != PRT_OK) return;
    CHECK_EQ_INT(n, strlen(want));
    CHECK(memcmp(out, want, n) == 0);
    prt__free(out);
}

static void b64_bad(const char *text, const char *needle)
{
    uint8_t *out = (uint8_t *)(uintptr_t)0x1234;
    size_t n = 99;
    char err[256] = "";
    prt_status s = prt__base64_decode(text, strlen(text), &out, &n, err, sizeof err);
    CHECK_MSG(s == PRT_STATUS_BAD_FORMAT, "\"%s\" accepted", text);
    CHECK_STR_CONTAINS(err, needle);
    CHECK(out == (uint8_t *)(uintptr_t)0x1234 && n == 99);
}

TEST(base64_rfc4648_vectors)
{
    b64_ok("", "");
    b64_ok("Zg==", "f");
    b64_ok("Zm8=", "fo");
    b64_ok("Zm9v", "foo");
    b64_ok("Zm9vYg==", "foob");
    b64_ok("Zm9vYmE=", "fooba");
    b64_ok("Zm9vYmFy", "foobar");
    b64_ok("+/+/", "\xfb\xff\xbf");
}

TEST(base64_is_strict)
{
    b64_bad("Zm9", "multiple of 4, found 3");
    b64_bad("Zm9v\n", "multiple of 4");
    b64_bad("Zm-v", "found '-' at offset 2");
    b64_bad("Zm v", "found byte 0x20 at offset 2");
    b64_bad("Z===", "padding '=' at offset 1");
    b64_bad("Zg=a", "padding '=' at offset 2");
    b64_bad("=Zm9", "padding '=' at offset 0");
    b64_bad("Zh==", "non-zero unused bits");
    b64_bad("Zm9=", "non-zero unused bits");
}

/* ---- golden files -------------------------------------------------------------------- */

static prt_golden *load(const char *rel)
{
    char path[1024];
    prt_golden *g = NULL;
    prt_status s;
    snprintf(path, sizeof path, "%s/tensorrt/configs/%s", prt_test_data_dir(), rel);
    s = prt__golden_load_file(path, &g);
    CHECK_MSG(s == PRT_OK, "%s: %s", rel, prt_last_error(&g));
    if (s != PRT_OK) exit(1);
    return g;
}

TEST(efficient_nms_golden)
{
    prt_golden *g = load("toplevel/EfficientNMSPlugin_PluginGoldenIO.json");
    const prt_golden_config *c;
    const prt_golden_case *k;
    const prt_golden_tensor *t;
    const prt_golden_attr *a;
    prt_npy_array ref;
    char path[1024];
    int64_t i;
    CHECK_EQ_INT(g->nb_configs, 2);
    CHECK_EQ_INT(g->nb_warnings, 0);
    c = prt__golden_find_config(g, "class_agnostic");
    CHECK(c && c->nb_cases == 1);
    k = &c->cases[0];
    CHECK_EQ_INT(k->nb_inputs, 2);
    CHECK_EQ_INT(k->nb_outputs, 2);
    CHECK_EQ_INT(k->nb_attrs, 7);
    t = prt__golden_case_input(k, "boxes");
    CHECK(t && t->array.type == PRT_NPY_F4 && t->array.shape.nb == 3 && t->array.shape.d[1] == 6);
    CHECK(prt__golden_case_input(k, "anchors") == NULL); /* optional input left out */
    /* "scores" is stored in Fortran order: compare with NumPy's C-order copy */
    t = prt__golden_case_input(k, "scores");
    snprintf(path, sizeof path, "%s/npy/nms_config1_scores_c.npy", prt_test_data_dir());
    CHECK_OK(prt_npy_read_file(path, &ref));
    CHECK(t && prt_dims_equal(&t->array.shape, &ref.shape));
    for (i = 0; i < ref.count; i++)
        CHECK_EQ_INT(((float *)t->array.data)[i] == ((float *)ref.data)[i], 1);
    CHECK_NEAR(((float *)t->array.data)[1], 0.22f, 0); /* [0][0][1] */
    CHECK_NEAR(((float *)t->array.data)[9], 0.93f, 0); /* [0][4][1] */
    prt_npy_array_clear(&ref);
    t = prt__golden_case_output(k, "num_detections");
    CHECK(t && t->array.type == PRT_NPY_I4 && t->array.count == 1);
    a = prt__golden_case_attr(k, "score_threshold");
    CHECK(a && a->kind == PRT_GOLDEN_ATTR_ARRAY && a->array.type == PRT_NPY_F4 && a->array.count == 1);
    a = prt__golden_case_attr(k, "max_output_boxes");
    CHECK(a && a->kind == PRT_GOLDEN_ATTR_INT && a->array.type == PRT_NPY_I8);
    CHECK_EQ_INT(*(int64_t *)a->array.data, 6);
    a = prt__golden_case_attr(k, "background_class");
    CHECK_EQ_INT(*(int64_t *)a->array.data, -1);
    a = prt__golden_case_attr(k, "class_agnostic");
    CHECK(a && a->kind == PRT_GOLDEN_ATTR_BOOL && *(uint8_t *)a->array.data == 1);
    a = prt__golden_case_attr(prt__golden_find_config(g, "config1")->cases, "class_agnostic");
    CHECK(a && *(uint8_t *)a->array.data == 0);
    prt__golden_destroy(g);
}

TEST(disentangled_attention_golden)
{
    prt_golden *g = load("toplevel/DisentangledAttention_PluginGoldenIO.json");
    const prt_golden_config *c = prt__golden_find_config(g, "config_fp16");
    const prt_golden_attr *a;
    int32_t span;
    CHECK_EQ_INT(g->nb_configs, 3);
    CHECK(c && c->nb_cases == 1);
    CHECK_EQ_INT(prt__golden_case_input(c->cases, "data0")->array.type, PRT_NPY_F2);
    CHECK_EQ_INT(prt__golden_case_input(c->cases, "data0")->array.count, 64 * 64);
    CHECK_EQ_INT(prt__golden_case_output(c->cases, "output")->array.type, PRT_NPY_F4);
    a = prt__golden_case_attr(c->cases, "factor");
    CHECK(a && a->kind == PRT_GOLDEN_ATTR_FLOAT);
    CHECK_NEAR(prt_npy_get_f64(&a->array, 0), 0.1, 0);
    a = prt__golden_case_attr(c->cases, "span");
    CHECK_OK(prt_npy_convert(&a->array, PRT_DTYPE_I32, &span, sizeof span));
    CHECK_EQ_INT(span, 4);
    prt__golden_destroy(g);
}

/* ---- hand-made files --------------------------------------------------------------------- */

static void b64_encode(const uint8_t *in, size_t n, char *out)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t i, o = 0;
    for (i = 0; i + 2 < n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
        out[o++] = tab[v >> 18];
        out[o++] = tab[(v >> 12) & 63];
        out[o++] = tab[(v >> 6) & 63];
        out[o++] = tab[v & 63];
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)in[i] << 16;
        out[o++] = tab[v >> 18];
        out[o++] = tab[(v >> 12) & 63];
        out[o++] = '=';
        out[o++] = '=';
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;
        out[o++] = tab[v >> 18];
        out[o++] = tab[(v >> 12) & 63];
        out[o++] = tab[(v >> 6) & 63];
        out[o++] = '=';
    }
    out[o] = 0;
}

/* A golden file with one input "x" holding `npy` (raw .npy bytes). */
static void golden_with(char *buf, size_t cap, const uint8_t *npy, size_t n, const char *attrs)
{
    char *b64 = malloc(n * 4 / 3 + 8);
    b64_encode(npy, n, b64);
    snprintf(buf, cap,
             "{\"cfg\": [{\"inputs\": {\"x\": {\"array\": \"%s\", \"polygraphy_class\": \"ndarray\"}},"
             " \"attributes\": {%s}, \"outputs\": {}}]}",
             b64, attrs);
    free(b64);
}

static size_t npy_image(uint8_t *buf, const char *dict, size_t data_len)
{
    size_t hl = strlen(dict), i;
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (uint8_t)hl;
    buf[9] = 0;
    memcpy(buf + 10, dict, hl);
    for (i = 0; i < data_len; i++) buf[10 + hl + i] = (uint8_t)(i * 37);
    return 10 + hl + data_len;
}

static void golden_fail(const char *text, prt_status want, const char *needle)
{
    prt_golden *g = (prt_golden *)(uintptr_t)0x1234;
    prt_status s = prt__golden_load_mem(text, strlen(text), "bad.json", &g);
    CHECK_MSG(s == want, "status %s, expected %s: %s", prt_status_name(s), prt_status_name(want),
              prt_last_error(&g));
    CHECK_STR_CONTAINS(prt_last_error(&g), needle);
    CHECK(g == (prt_golden *)(uintptr_t)0x1234);
}

TEST(hand_made_golden_attributes)
{
    static char text[4096];
    uint8_t npy[256];
    size_t n = npy_image(npy, "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }\n", 16);
    prt_golden *g;
    const prt_golden_attr *a;
    golden_with(text, sizeof text, npy, n,
                "\"l\": [1, 2, 3], \"f\": [0.5, 1], \"b\": [true, false], \"s\": \"add\", \"n\": null");
    CHECK_OK(prt__golden_load_mem(text, strlen(text), "x.json", &g));
    CHECK_EQ_INT(prt__golden_case_input(g->configs[0].cases, "x")->array.count, 2);
    a = prt__golden_case_attr(g->configs[0].cases, "l");
    CHECK(a && a->kind == PRT_GOLDEN_ATTR_LIST && a->array.type == PRT_NPY_I8 && a->array.count == 3);
    CHECK_EQ_INT(((int64_t *)a->array.data)[2], 3);
    a = prt__golden_case_attr(g->configs[0].cases, "f");
    CHECK(a && a->array.type == PRT_NPY_F8 && ((double *)a->array.data)[1] == 1.0);
    a = prt__golden_case_attr(g->configs[0].cases, "b");
    CHECK(a && a->array.type == PRT_NPY_B1 && ((uint8_t *)a->array.data)[0] == 1);
    a = prt__golden_case_attr(g->configs[0].cases, "s");
    CHECK(a && a->kind == PRT_GOLDEN_ATTR_STRING && strcmp(a->text, "add") == 0);
    CHECK(prt__golden_case_attr(g->configs[0].cases, "n") == NULL);
    CHECK_EQ_INT(g->nb_warnings, 1);
    prt__golden_destroy(g);
}

TEST(malformed_golden_files_are_clear_errors)
{
    static char text[4096];
    uint8_t npy[256];
    size_t n;

    golden_fail("{\"cfg\": [", PRT_STATUS_BAD_FORMAT, "bad.json: malformed JSON at line 1");
    golden_fail("[1, 2]", PRT_STATUS_BAD_FORMAT, "expected an object of config name to list of cases, found a list");
    golden_fail("{\"cfg\": 3}", PRT_STATUS_BAD_FORMAT, "cfg: expected a list of cases, found a number");
    golden_fail("{\"cfg\": [3]}", PRT_STATUS_BAD_FORMAT, "cfg[0]: expected a case object");
    golden_fail("{\"cfg\": [{\"inputs\": {\"x\": 5}}]}", PRT_STATUS_BAD_FORMAT,
                "cfg[0].inputs.x: expected {\"array\"");
    golden_fail("{\"cfg\": [{\"inputs\": {\"x\": {\"array\": \"k05VTVBZ\", \"polygraphy_class\": \"tensor\"}}}]}",
                PRT_STATUS_UNSUPPORTED, "expected polygraphy_class \"ndarray\", found \"tensor\"");
    /* bad base64 */
    golden_fail("{\"cfg\": [{\"inputs\": {\"x\": {\"array\": \"k05V*VBZ\"}}}]}", PRT_STATUS_BAD_FORMAT,
                "cfg[0].inputs.x: base64: expected A-Z a-z 0-9 + / or final '=' padding, found '*' at offset 4");
    /* a .npy with a wrong header */
    n = npy_image(npy, "{'descr': '<f4', 'fortran_order': False}\n", 0);
    golden_with(text, sizeof text, npy, n, "");
    golden_fail(text, PRT_STATUS_BAD_FORMAT, "cfg[0].inputs.x: npy: header dict is missing 'shape'");
    /* a shape that does not match its data */
    n = npy_image(npy, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }\n", 20);
    golden_with(text, sizeof text, npy, n, "");
    golden_fail(text, PRT_STATUS_TRUNCATED, "shape [3, 2] of <f4 needs 24 bytes, found 20");
    /* an unknown dtype */
    n = npy_image(npy, "{'descr': '<c16', 'fortran_order': False, 'shape': (1,), }\n", 16);
    golden_with(text, sizeof text, npy, n, "");
    golden_fail(text, PRT_STATUS_UNSUPPORTED, "expected one of <f2 <f4 <f8 |i1 |u1 <i4 <i8 |b1, found '<c16'");
    /* attributes */
    n = npy_image(npy, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }\n", 4);
    golden_with(text, sizeof text, npy, n, "\"a\": [1, \"x\"]");
    golden_fail(text, PRT_STATUS_BAD_FORMAT, "cfg[0].attributes.a: expected a list of numbers or booleans, found a string at index 1");
    golden_with(text, sizeof text, npy, n, "\"a\": [1, true]");
    golden_fail(text, PRT_STATUS_BAD_FORMAT, "found both");
    golden_with(text, sizeof text, npy, n, "\"a\": [[1]]");
    golden_fail(text, PRT_STATUS_BAD_FORMAT, "found a list at index 0");
}

TEST(allocation_failures_are_atomic)
{
    char path[1024];
    long n;
    snprintf(path, sizeof path, "%s/tensorrt/configs/toplevel/EfficientNMSPlugin_PluginGoldenIO.json",
             prt_test_data_dir());
    for (n = 0;; n++) {
        prt_golden *g = (prt_golden *)(uintptr_t)0x1234;
        prt_status s;
        prt__alloc_fail_after(n);
        s = prt__golden_load_file(path, &g);
        prt__alloc_fail_after(-1);
        if (s == PRT_OK) {
            prt__golden_destroy(g);
            break;
        }
        CHECK_EQ_INT(s, PRT_STATUS_OUT_OF_MEMORY);
        CHECK(g == (prt_golden *)(uintptr_t)0x1234);
    }
    CHECK(n >= 10);
}
