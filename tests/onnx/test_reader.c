/* tests/onnx/test_reader.c - the ONNX model reader (src/onnx/model.c,
 * tensor.c): good files, every truncation and bit flip of a small model,
 * each error message, every initializer type, external data. */
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"
#include "onnx/onnx_impl.h"
#include "prt_test.h"

static void *read_data(const char *name, size_t *len)
{
    char path[1024], err[512];
    void *buf = NULL;
    snprintf(path, sizeof path, "%s/onnx/%s", prt_test_data_dir(), name);
    if (prt__read_file(path, &buf, len, err, sizeof err) != PRT_OK) prt_test_fail(__FILE__, __LINE__, "%s", err);
    return buf;
}

static prt_status load(const char *name, prt_onnx_model **m, char *err, size_t cap)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/onnx/%s", prt_test_data_dir(), name);
    return prt_onnx_model_load(path, m, err, cap);
}

/* The load must fail with status s and a message holding each needle. */
static void expect_error(const char *name, prt_status s, const char *n1, const char *n2)
{
    prt_onnx_model *m = NULL;
    char err[1024] = "";
    CHECK_EQ_INT(load(name, &m, err, sizeof err), s);
    CHECK(m == NULL);
    CHECK_STR_CONTAINS(err, n1);
    if (n2) CHECK_STR_CONTAINS(err, n2);
}

TEST(reads_a_good_model)
{
    prt_onnx_model *m = NULL;
    prt_onnx_io io;
    const char *dom, *op;
    int64_t v;
    char err[512];
    CHECK_OK(load("relu_add.onnx", &m, err, sizeof err));
    CHECK_EQ_INT(prt_onnx_model_ir_version(m), 8);
    CHECK(strcmp(prt_onnx_model_producer(m), "plugrt-tests") == 0);
    CHECK_EQ_INT(prt_onnx_model_nb_opsets(m), 1);
    CHECK_OK(prt_onnx_model_opset(m, 0, &dom, &v));
    CHECK_EQ_INT(v, 14);
    CHECK_EQ_INT(prt_onnx_model_nb_inputs(m), 1);
    CHECK_EQ_INT(prt_onnx_model_nb_outputs(m), 1);
    CHECK_OK(prt_onnx_model_input(m, 0, &io));
    CHECK(strcmp(io.name, "x") == 0 && strcmp(io.elem_type, "float") == 0 && io.rank == 1 && io.dims[0] == 4);
    CHECK_EQ_INT(prt_onnx_model_nb_nodes(m), 3);
    CHECK_OK(prt_onnx_model_node(m, 2, NULL, &op, NULL));
    CHECK(strcmp(op, "Relu") == 0);
    CHECK(prt_onnx_model_input(m, 1, &io) != PRT_OK);
    prt_onnx_model_destroy(m);
}

TEST(dynamic_dims_keep_their_names)
{
    prt_onnx_model *m = NULL;
    prt_onnx_io io;
    char err[512];
    CHECK_OK(load("relu_dynamic.onnx", &m, err, sizeof err));
    CHECK_OK(prt_onnx_model_input(m, 0, &io));
    CHECK_EQ_INT(io.dims[0], -1);
    CHECK(io.dim_params[0] && strcmp(io.dim_params[0], "N") == 0);
    CHECK_EQ_INT(io.dims[1], 4);
    prt_onnx_model_destroy(m);
    m = NULL;
    CHECK_OK(load("minus_one_dim.onnx", &m, err, sizeof err));
    CHECK_OK(prt_onnx_model_input(m, 0, &io));
    CHECK(io.dims[0] == -1 && io.dim_params[0] == NULL);
    prt_onnx_model_destroy(m);
}

TEST(every_truncation_fails_cleanly)
{
    size_t len = 0, n;
    uint8_t *buf = read_data("relu_add.onnx", &len);
    CHECK(len > 100);
    for (n = 0; n < len; n++) {
        prt_onnx_model *m = NULL;
        char err[512] = "";
        uint8_t *copy = malloc(n ? n : 1);
        memcpy(copy, buf, n);
        CHECK_MSG(prt_onnx_model_parse(copy, n, NULL, &m, err, sizeof err) != PRT_OK, "prefix of %zu bytes loads",
                  n);
        CHECK_MSG(m == NULL && err[0], "prefix of %zu bytes: no message", n);
        free(copy);
    }
    prt__free(buf);
}

TEST(truncation_names_the_byte_and_the_node)
{
    size_t len = 0;
    uint8_t *buf = read_data("relu_add.onnx", &len);
    prt_onnx_model *m = NULL;
    char err[512] = "";
    /* cut inside the graph: the framing check says where */
    CHECK(prt_onnx_model_parse(buf, len - 30, NULL, &m, err, sizeof err) != PRT_OK);
    CHECK_STR_CONTAINS(err, "byte ");
    CHECK_STR_CONTAINS(err, "left");
    prt__free(buf);
}

TEST(every_bit_flip_is_handled)
{
    size_t len = 0, i;
    uint8_t *buf = read_data("relu_add.onnx", &len);
    int b, loaded = 0, refused = 0;
    for (i = 0; i < len; i++)
        for (b = 0; b < 8; b++) {
            prt_onnx_model *m = NULL;
            char err[512] = "";
            buf[i] ^= (uint8_t)(1u << b);
            if (prt_onnx_model_parse(buf, len, NULL, &m, err, sizeof err) == PRT_OK) {
                loaded++;
                prt_onnx_model_destroy(m);
            } else {
                CHECK_MSG(err[0], "flip at byte %zu bit %d: no message", i, b);
                refused++;
            }
            buf[i] ^= (uint8_t)(1u << b);
        }
    CHECK(refused > 0 && loaded > 0);
    prt__free(buf);
}

TEST(error_messages)
{
    prt_onnx_model *m = NULL;
    char err[512] = "";
    CHECK_EQ_INT(prt_onnx_model_parse("", 0, NULL, &m, err, sizeof err), PRT_STATUS_TRUNCATED);
    CHECK_STR_CONTAINS(err, "empty");
    CHECK(prt_onnx_model_parse("{\"layers\": []}", 14, NULL, &m, err, sizeof err) != PRT_OK);
    expect_error("cycle.onnx", PRT_STATUS_BAD_FORMAT, "cycle", "\"first\" (Add)");
    expect_error("missing_init.onnx", PRT_STATUS_NOT_FOUND, "\"needs_w\" (Add)", "input 1 \"w\"");
    expect_error("ir2.onnx", PRT_STATUS_VERSION_MISMATCH, "IR version 2", "3 to 13");
    expect_error("huge_dim.onnx", PRT_STATUS_SHAPE_MISMATCH, "graph input \"x\" dim 0", "2^40");
    expect_error("shape_conflict.onnx", PRT_STATUS_SHAPE_MISMATCH, "initializer \"w\" dim 0 is 2", "says 3");
}

TEST(sniff_tells_onnx_from_others)
{
    size_t len = 0;
    uint8_t *buf = read_data("relu_add.onnx", &len);
    CHECK(prt_onnx_sniff(buf, len));
    CHECK(!prt_onnx_sniff("{\"inputs\": []}", 14));
    CHECK(!prt_onnx_sniff("PRTPLAN", 7));
    CHECK(!prt_onnx_sniff(NULL, 0));
    CHECK(prt_onnx_sniff("\x32\x02" "ab", 4));  /* doc_string first */
    CHECK(!prt_onnx_sniff("\x32\x09" "ab", 4)); /* its length runs past the end */
    CHECK(!prt_onnx_sniff("\x2a\x02" "ab", 4)); /* model_version with a length: wrong wire type */
    prt__free(buf);
}

/* Every initializer type: typed fields and raw_data decode alike. */
TEST(initializer_types_typed_and_raw)
{
    prt_onnx_model *m = NULL;
    char err[512];
    size_t i;
    const PrtOnnx__Graph *g;
    CHECK_OK(load("dtypes.onnx", &m, err, sizeof err));
    g = m->pb->graph;
    CHECK_EQ_INT(g->n_initializer, 16);
    for (i = 0; i + 1 < g->n_initializer; i += 2) {
        prt__onnx_value raw, typed;
        CHECK_OK(prt__onnx_value_decode(g->initializer[i], NULL, "raw", &raw, err, sizeof err));
        CHECK_OK(prt__onnx_value_decode(g->initializer[i + 1], NULL, "typed", &typed, err, sizeof err));
        CHECK_EQ_INT(raw.onnx_type, typed.onnx_type);
        CHECK_EQ_INT(raw.nbytes, typed.nbytes);
        CHECK_EQ_INT(raw.nbytes, 2 * prt__onnx_type_size(raw.onnx_type));
        CHECK_MSG(memcmp(raw.data, typed.data, raw.nbytes) == 0, "%s: raw and typed differ",
                  prt__onnx_type_name(raw.onnx_type));
        prt__onnx_value_free(&raw);
        prt__onnx_value_free(&typed);
    }
    {
        prt__onnx_value v;
        CHECK_OK(prt__onnx_value_decode(g->initializer[11], NULL, "i64", &v, err, sizeof err));
        CHECK_EQ_INT(((int64_t *)v.data)[1], (int64_t)1 << 40);
        prt__onnx_value_free(&v);
    }
    prt_onnx_model_destroy(m);
}

TEST(tensor_files)
{
    char path[1024], err[512];
    prt_onnx_tensor *t = NULL;
    snprintf(path, sizeof path, "%s/onnx_node/test_nonmaxsuppression_two_batches/test_data_set_0/input_0.pb",
             prt_test_data_dir());
    CHECK_OK(prt_onnx_tensor_load(path, &t, err, sizeof err));
    CHECK_EQ_INT(t->dtype, PRT_DTYPE_F32);
    CHECK_EQ_INT(t->dims.nb, 3);
    CHECK_EQ_INT(t->nbytes, (size_t)prt_dims_volume(&t->dims) * 4);
    prt_onnx_tensor_destroy(t);
    CHECK(prt_onnx_tensor_parse("\x08", 1, &t, err, sizeof err) != PRT_OK);
    CHECK(err[0]);
}

TEST(external_data)
{
    prt_onnx_model *m = NULL;
    prt__onnx_value v;
    char err[1024] = "";
    CHECK_OK(load("ext_good.onnx", &m, err, sizeof err));
    CHECK_OK(prt__onnx_value_decode(m->pb->graph->initializer[0], m->base_dir, "w", &v, err, sizeof err));
    CHECK_EQ_INT(v.nbytes, 16);
    CHECK(((float *)v.data)[0] == 1 && ((float *)v.data)[3] == 4);
    prt__onnx_value_free(&v);
    /* from memory without a folder: refused */
    CHECK_EQ_INT(prt__onnx_value_decode(m->pb->graph->initializer[0], NULL, "w", &v, err, sizeof err),
                 PRT_STATUS_UNSUPPORTED);
    CHECK_STR_CONTAINS(err, "folder");
    prt_onnx_model_destroy(m);
    m = NULL;
    CHECK_OK(load("ext_escape.onnx", &m, err, sizeof err));
    CHECK_EQ_INT(prt__onnx_value_decode(m->pb->graph->initializer[0], m->base_dir, "w", &v, err, sizeof err),
                 PRT_STATUS_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(err, "\"../escape.bin\" must be a relative path inside the model's folder");
    prt_onnx_model_destroy(m);
    m = NULL;
    CHECK_OK(load("ext_short.onnx", &m, err, sizeof err));
    CHECK_EQ_INT(prt__onnx_value_decode(m->pb->graph->initializer[0], m->base_dir, "w", &v, err, sizeof err),
                 PRT_STATUS_TRUNCATED);
    CHECK_STR_CONTAINS(err, "has 8 bytes; needs 16 bytes at offset 0");
    prt_onnx_model_destroy(m);
}

/* A FIFO where the external data should be is refused at once instead of
 * waiting for a writer. */
TEST(external_data_fifo_refused_without_blocking)
{
    char dir[] = "/tmp/prt_onnx_fifoXXXXXX", path[1200], src[1024];
    prt_onnx_model *m = NULL;
    prt__onnx_value v;
    char err[1024] = "";
    size_t len = 0;
    uint8_t *buf;
    FILE *f;
    CHECK(mkdtemp(dir) != NULL);
    snprintf(src, sizeof src, "ext_good.onnx");
    buf = read_data(src, &len);
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    f = fopen(path, "wb");
    CHECK(f && fwrite(buf, 1, len, f) == len);
    fclose(f);
    prt__free(buf);
    snprintf(path, sizeof path, "%s/ext_good.bin", dir);
    CHECK(mkfifo(path, 0600) == 0);
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    CHECK_OK(prt_onnx_model_load(path, &m, err, sizeof err));
    CHECK_EQ_INT(prt__onnx_value_decode(m->pb->graph->initializer[0], m->base_dir, "w", &v, err, sizeof err),
                 PRT_STATUS_IO_ERROR);
    CHECK_STR_CONTAINS(err, "cannot be read as a regular file");
    prt_onnx_model_destroy(m);
    snprintf(path, sizeof path, "%s/ext_good.bin", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    unlink(path);
    rmdir(dir);
}

TEST(failed_allocations_fail_cleanly)
{
    size_t len = 0;
    uint8_t *buf = read_data("relu_add.onnx", &len);
    long n;
    int ok = 0;
    for (n = 0; n < 400 && !ok; n++) {
        prt_onnx_model *m = NULL;
        char err[512] = "";
        prt_status s;
        prt__alloc_fail_after(n);
        s = prt_onnx_model_parse(buf, len, NULL, &m, err, sizeof err);
        prt__alloc_fail_after(-1);
        if (s == PRT_OK) {
            ok = 1;
            prt_onnx_model_destroy(m);
        } else {
            CHECK_MSG(m == NULL && err[0], "allocation %ld: no message", n);
        }
    }
    CHECK(ok);
    prt__free(buf);
}
