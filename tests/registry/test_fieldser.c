/* Field collections on the wire: round trips of every type, the exact
 * little-endian layout, truncation at every byte and random corruption give
 * errors (never crashes), bad input to the writer, allocation failures. */
#include "core/core.h"
#include "plugrt/plugrt.h"
#include "fld.h"
#include "prt_test.h"
#include "registry/fieldser.h"
#include "registry/schema.h"

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#define CHECK_NO_LEAKS() CHECK(__lsan_do_recoverable_leak_check() == 0)
#else
#define CHECK_NO_LEAKS() ((void)0)
#endif


static const int8_t v_i8[3] = {-128, 0, 127};
static const int16_t v_i16[3] = {-32768, 1, 32767};
static const int32_t v_i32[3] = {INT32_MIN, -1, INT32_MAX};
static const int64_t v_i64[3] = {INT64_MIN, 0x0102030405060708LL, INT64_MAX};
static const uint16_t v_f16[4] = {0x3c00, 0xfc00, 0x7e01, 0x0001}; /* 1, -inf, NaN payload, subnormal */
static const char v_chr[5] = {'a', 0, 'b', '\n', (char)0xff};
static const uint8_t v_bool[4] = {1, 0, 0, 1};
static const uint8_t v_bytes[6] = {0, 255, 1, 128, 127, 0};
static float v_f32[4];
static double v_f64[4];
static prt_dims v_dims[3];

static const char *const v_strings[3] = {"relu", "", "tanh with spaces"};
static const float v_tensor0[6] = {1.5f, -2.0f, 0.0f, 3.25f, 1e-30f, -7.0f};
static const int64_t v_tensor1[1] = {-42};
static prt_field_tensor v_tensors[3];
static const char v_graph_body[] = "{\"inputs\": [], \"layers\": [], \"outputs\": []}";
static const uint8_t v_onnx_body[3] = {0x0a, 0x00, 0xff};
static prt_field_graph v_graphs[2];

static prt_field all_fields[16];

/* Tensors: a 2x3 float32, a 0-d int64, an empty [0, 4] float16. Graphs: a
 * JSON body, an ONNX body. */
static void compound_values(void)
{
    memset(v_tensors, 0, sizeof v_tensors);
    v_tensors[0].dtype = PRT_DTYPE_F32;
    v_tensors[0].dims.nb = 2;
    v_tensors[0].dims.d[0] = 2;
    v_tensors[0].dims.d[1] = 3;
    v_tensors[0].data = v_tensor0;
    v_tensors[1].dtype = PRT_DTYPE_I64;
    v_tensors[1].data = v_tensor1;
    v_tensors[2].dtype = PRT_DTYPE_F16;
    v_tensors[2].dims.nb = 2;
    v_tensors[2].dims.d[1] = 4;
    memset(v_graphs, 0, sizeof v_graphs);
    v_graphs[0].name = "then_branch";
    v_graphs[0].format = PRT_GRAPH_NETWORK_JSON;
    v_graphs[0].data = v_graph_body;
    v_graphs[0].size = (int64_t)strlen(v_graph_body);
    v_graphs[1].name = "body";
    v_graphs[1].format = PRT_GRAPH_ONNX;
    v_graphs[1].data = v_onnx_body;
    v_graphs[1].size = 3;
}

/* One field of every type (some with several elements, one empty, one with
 * a NaN payload) whose bytes must come back bit for bit. */
static prt_fields every_type(void)
{
    prt_fields fc;
    uint32_t nanbits = 0x7fc00123u;
    uint64_t dnan = 0xfff8000000000abcULL;
    memcpy(&v_f32[0], &nanbits, 4);
    v_f32[1] = -0.0f;
    v_f32[2] = 3.14159274f;
    v_f32[3] = 1e-42f;
    memcpy(&v_f64[0], &dnan, 8);
    v_f64[1] = -1.0 / 3.0;
    v_f64[2] = 1e308;
    v_f64[3] = 5e-324;
    memset(v_dims, 0, sizeof v_dims);
    v_dims[0].nb = 4;
    v_dims[0].d[0] = 1; v_dims[0].d[1] = PRT_DIM_DYNAMIC; v_dims[0].d[2] = (int64_t)1 << 40; v_dims[0].d[3] = 0;
    v_dims[1].nb = 0; /* scalar */
    v_dims[2].nb = PRT_MAX_DIMS;
    {
        int k;
        for (k = 0; k < PRT_MAX_DIMS; k++) v_dims[2].d[k] = k + 1;
    }
    all_fields[0] = fld("i8", PRT_FIELD_INT8, v_i8, 3);
    all_fields[1] = fld("i16", PRT_FIELD_INT16, v_i16, 3);
    all_fields[2] = fld("i32", PRT_FIELD_INT32, v_i32, 3);
    all_fields[3] = fld("i64", PRT_FIELD_INT64, v_i64, 3);
    all_fields[4] = fld("f16", PRT_FIELD_FLOAT16, v_f16, 4);
    all_fields[5] = fld("f32", PRT_FIELD_FLOAT32, v_f32, 4);
    all_fields[6] = fld("f64", PRT_FIELD_FLOAT64, v_f64, 4);
    all_fields[7] = fld("chars", PRT_FIELD_CHAR, v_chr, 5);
    all_fields[8] = fld("dims", PRT_FIELD_DIMS, v_dims, 3);
    all_fields[9] = fld("bool", PRT_FIELD_BOOL, v_bool, 4);
    all_fields[10] = fld("bytes", PRT_FIELD_BYTES, v_bytes, 6);
    all_fields[11] = fld("empty", PRT_FIELD_INT32, NULL, 0);
    all_fields[12] = fld("a longer name with spaces", PRT_FIELD_INT8, v_i8, 1);
    compound_values();
    all_fields[13] = fld("strings", PRT_FIELD_STRINGS, v_strings, 3);
    all_fields[14] = fld("tensors", PRT_FIELD_TENSOR, v_tensors, 3);
    all_fields[15] = fld("graphs", PRT_FIELD_GRAPH, v_graphs, 2);
    fc.fields = all_fields;
    fc.nb = 16;
    fc.reserved_ = 0;
    return fc;
}

/* Serialize into a new malloc'ed buffer. */
static uint8_t *serialize(const prt_fields *fc, size_t *len)
{
    char err[256];
    prt_writer w = prt_writer_init(NULL, 0);
    uint8_t *buf;
    CHECK_OK(prt__fields_write(&w, fc, err, sizeof err));
    *len = w.len;
    buf = malloc(w.len + 1);
    w = prt_writer_init(buf, *len);
    CHECK_OK(prt__fields_write(&w, fc, err, sizeof err));
    CHECK_EQ_INT(w.len, *len);
    return buf;
}

/* Element i of two compound fields holds the same values. */
static int same_compound(const prt_field *a, const prt_field *b, int64_t i)
{
    if (a->type == PRT_FIELD_STRINGS)
        return strcmp(prt_field_get_string(a, i), prt_field_get_string(b, i)) == 0;
    if (a->type == PRT_FIELD_TENSOR) {
        const prt_field_tensor *x = prt_field_get_tensor(a, i), *y = prt_field_get_tensor(b, i);
        int64_t n = prt_dims_volume(&x->dims) * (int64_t)prt_dtype_size(x->dtype);
        return x->dtype == y->dtype && prt_dims_equal(&x->dims, &y->dims) &&
               (n == 0 ? y->data == NULL : memcmp(x->data, y->data, (size_t)n) == 0 && (uintptr_t)y->data % 8 == 0);
    }
    {
        const prt_field_graph *x = prt_field_get_graph(a, i), *y = prt_field_get_graph(b, i);
        return strcmp(x->name, y->name) == 0 && x->format == y->format && x->size == y->size &&
               (x->size == 0 || memcmp(x->data, y->data, (size_t)x->size) == 0);
    }
}

static int same_field(const prt_field *a, const prt_field *b)
{
    if (strcmp(a->name, b->name) != 0 || a->type != b->type || a->count != b->count) return 0;
    if (a->type == PRT_FIELD_STRINGS || a->type == PRT_FIELD_TENSOR || a->type == PRT_FIELD_GRAPH) {
        int64_t i;
        for (i = 0; i < a->count; i++)
            if (!same_compound(a, b, i)) return 0;
        return 1;
    }
    if (a->type == PRT_FIELD_DIMS) {
        int64_t i;
        for (i = 0; i < a->count; i++) {
            const prt_dims *x = (const prt_dims *)a->data + i, *y = (const prt_dims *)b->data + i;
            if (!prt_dims_equal(x, y)) return 0;
        }
        return 1;
    }
    return a->count == 0 || memcmp(a->data, b->data, (size_t)a->count * prt_field_type_size(a->type)) == 0;
}

TEST(fieldser_round_trip_every_type)
{
    prt_fields fc = every_type();
    size_t len;
    uint8_t *buf = serialize(&fc, &len);
    prt_reader r = prt_reader_init(buf, len);
    prt_owned_fields *o = NULL;
    const prt_fields *back;
    char err[256];
    int32_t i;
    CHECK_OK(prt__fields_read(&r, &o, err, sizeof err));
    CHECK_EQ_INT(prt_reader_left(&r), 0);
    back = prt_owned_fields_get(o);
    CHECK(back && back->nb == fc.nb);
    for (i = 0; back && i < fc.nb && i < back->nb; i++) {
        CHECK_MSG(same_field(&fc.fields[i], &back->fields[i]), "field %d (%s) differs after a round trip", (int)i,
                  fc.fields[i].name);
        if (back->fields[i].count)
            CHECK_EQ_INT((uintptr_t)back->fields[i].data % 8, 0);
    }
    /* And again: the copy serializes to the same bytes. */
    {
        size_t len2;
        uint8_t *buf2 = serialize(back, &len2);
        CHECK(len2 == len && memcmp(buf, buf2, len) == 0);
        free(buf2);
    }
    prt_owned_fields_free(o);
    free(buf);
    CHECK_NO_LEAKS();
}

TEST(fieldser_exact_little_endian_layout)
{
    static const int32_t v = 0x01020304;
    static const uint16_t h = 0xabcd;
    static const uint8_t expect[] = {
        2, 0, 0, 0,                           /* two fields */
        1, 0, 0, 0, 'a',                      /* name "a" */
        2, 0, 0, 0,                           /* INT32 */
        1, 0, 0, 0, 0, 0, 0, 0,               /* one element */
        4, 3, 2, 1,                           /* 0x01020304 */
        2, 0, 0, 0, 'h', 'f',                 /* "hf" */
        4, 0, 0, 0,                           /* FLOAT16 */
        1, 0, 0, 0, 0, 0, 0, 0, 0xcd, 0xab};
    prt_field f[2];
    prt_fields fc;
    size_t len;
    uint8_t *buf;
    f[0] = fld("a", PRT_FIELD_INT32, &v, 1);
    f[1] = fld("hf", PRT_FIELD_FLOAT16, &h, 1);
    fc.fields = f;
    fc.nb = 2;
    fc.reserved_ = 0;
    buf = serialize(&fc, &len);
    CHECK_EQ_INT(len, sizeof expect);
    CHECK(len == sizeof expect && memcmp(buf, expect, len) == 0);
    free(buf);
}

TEST(fieldser_dims_and_bool_layout)
{
    prt_dims d;
    const uint8_t b = 7; /* written as 1 */
    prt_field f[2];
    prt_fields fc;
    size_t len;
    uint8_t *buf;
    memset(&d, 0xee, sizeof d);
    d.nb = 1;
    d.reserved_ = 0;
    d.d[0] = -1;
    f[0] = fld("d", PRT_FIELD_DIMS, &d, 1);
    f[1] = fld("b", PRT_FIELD_BOOL, &b, 1);
    fc.fields = f;
    fc.nb = 2;
    fc.reserved_ = 0;
    buf = serialize(&fc, &len);
    CHECK_EQ_INT(len, 4 + (4 + 1 + 4 + 8 + 72) + (4 + 1 + 4 + 8 + 1));
    if (len == 4 + 89 + 18) {
        const uint8_t *p = buf + 4 + 4 + 1 + 4 + 8;
        int k;
        CHECK(p[0] == 1 && p[1] == 0 && p[2] == 0 && p[3] == 0); /* nb */
        CHECK(p[4] == 0 && p[5] == 0 && p[6] == 0 && p[7] == 0); /* reserved */
        for (k = 0; k < 8; k++) CHECK_EQ_INT(p[8 + k], 0xff);    /* -1 */
        for (k = 16; k < 72; k++) CHECK_EQ_INT(p[k], 0);         /* unused extents: zero */
        CHECK_EQ_INT(buf[len - 1], 1);
    }
    free(buf);
}

TEST(fieldser_truncation_at_every_byte)
{
    prt_fields fc = every_type();
    size_t len, cut;
    uint8_t *buf = serialize(&fc, &len);
    char err[256];
    for (cut = 0; cut < len; cut++) {
        /* A copy of exactly `cut` bytes, so ASan sees any read past it. */
        uint8_t *part = malloc(cut ? cut : 1);
        prt_reader r;
        prt_owned_fields *o = (prt_owned_fields *)(uintptr_t)0x55;
        prt_status st;
        memcpy(part, buf, cut);
        r = prt_reader_init(part, cut);
        err[0] = 0;
        st = prt__fields_read(&r, &o, err, sizeof err);
        CHECK_MSG(st == PRT_STATUS_TRUNCATED, "cut at %zu: status %d (%s)", cut, (int)st, err);
        CHECK(o == (prt_owned_fields *)(uintptr_t)0x55);
        CHECK(err[0] != 0);
        CHECK(r.failed);
        free(part);
    }
    free(buf);
    CHECK_NO_LEAKS();
}

TEST(fieldser_random_corruption)
{
    prt_fields fc = every_type();
    size_t len;
    uint8_t *buf = serialize(&fc, &len);
    uint8_t *bad = malloc(len);
    uint32_t seed = 12345;
    int iter, nb_ok = 0, nb_err = 0;
    char err[256];
    for (iter = 0; iter < 3000; iter++) {
        int flips = 1 + iter % 3, k;
        prt_reader r;
        prt_owned_fields *o = NULL;
        prt_status st;
        memcpy(bad, buf, len);
        for (k = 0; k < flips; k++) {
            seed = seed * 1664525u + 1013904223u;
            bad[(seed >> 8) % len] ^= (uint8_t)(1u << ((seed >> 4) & 7));
        }
        r = prt_reader_init(bad, len);
        st = prt__fields_read(&r, &o, err, sizeof err);
        if (st == PRT_OK) {
            /* What was accepted is well formed: it serializes again. */
            const prt_fields *back = prt_owned_fields_get(o);
            prt_writer w = prt_writer_init(NULL, 0);
            CHECK_OK(prt__fields_write(&w, back, err, sizeof err));
            CHECK(w.len <= len);
            prt_owned_fields_free(o);
            nb_ok++;
        } else {
            CHECK(st == PRT_STATUS_TRUNCATED || st == PRT_STATUS_BAD_FORMAT);
            CHECK(err[0] != 0);
            nb_err++;
        }
    }
    /* Flips in payload bytes go unnoticed, flips in lengths and types do not. */
    CHECK(nb_ok > 0 && nb_err > 0);
    free(bad);
    free(buf);
    CHECK_NO_LEAKS();
}

static prt_status read_bytes(const uint8_t *b, size_t n, char *err, size_t cap)
{
    prt_reader r = prt_reader_init(b, n);
    prt_owned_fields *o = NULL;
    prt_status st = prt__fields_read(&r, &o, err, cap);
    prt_owned_fields_free(o);
    return st;
}

TEST(fieldser_bad_format_messages)
{
    char err[256];
    static const uint8_t bad_type[] = {1, 0, 0, 0, 1, 0, 0, 0, 'x', 99, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    static const uint8_t bad_bool[] = {1, 0, 0, 0, 1, 0, 0, 0, 'x', 9, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2};
    static const uint8_t huge_count[] = {1, 0, 0, 0, 1, 0, 0, 0, 'x', 3, 0, 0, 0,
                                         0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 2};
    static const uint8_t many_fields[] = {0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0};
    static const uint8_t nul_name[] = {1, 0, 0, 0, 2, 0, 0, 0, 'x', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    static const uint8_t empty_name[] = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    uint8_t dims[4 + 4 + 1 + 4 + 8 + 72];
    CHECK_EQ_INT(read_bytes(bad_type, sizeof bad_type, err, sizeof err), PRT_STATUS_BAD_FORMAT);
    CHECK_STR_CONTAINS(err, "field 0 (\"x\"): type 99 is not a field type");
    CHECK_EQ_INT(read_bytes(bad_bool, sizeof bad_bool, err, sizeof err), PRT_STATUS_BAD_FORMAT);
    CHECK_STR_CONTAINS(err, "bool element 0 at byte 21 is 2, expected 0 or 1");
    CHECK_EQ_INT(read_bytes(huge_count, sizeof huge_count, err, sizeof err), PRT_STATUS_BAD_FORMAT);
    CHECK_STR_CONTAINS(err, "do not fit in the 2 bytes left");
    CHECK_EQ_INT(read_bytes(many_fields, sizeof many_fields, err, sizeof err), PRT_STATUS_TRUNCATED);
    CHECK_STR_CONTAINS(err, "claims 2147483647 fields; 4 bytes are left");
    CHECK_EQ_INT(read_bytes(nul_name, sizeof nul_name, err, sizeof err), PRT_STATUS_BAD_FORMAT);
    CHECK_STR_CONTAINS(err, "holds a NUL byte");
    CHECK_EQ_INT(read_bytes(empty_name, sizeof empty_name, err, sizeof err), PRT_STATUS_BAD_FORMAT);
    CHECK_STR_CONTAINS(err, "is empty");
    /* dims: nb 9 */
    memset(dims, 0, sizeof dims);
    dims[0] = 1;
    dims[4] = 1;
    dims[8] = 'd';
    dims[9] = PRT_FIELD_DIMS;
    dims[13] = 1;
    dims[21] = 9;
    CHECK_EQ_INT(read_bytes(dims, sizeof dims, err, sizeof err), PRT_STATUS_BAD_FORMAT);
    CHECK_STR_CONTAINS(err, "dims element 0 at byte 21 is malformed (nb 9");
    dims[21] = 1;
    dims[29] = 5;                                   /* d[0] = 5 */
    CHECK_OK(read_bytes(dims, sizeof dims, err, sizeof err));
    dims[37] = 1;                                   /* unused d[1] non-zero */
    CHECK_EQ_INT(read_bytes(dims, sizeof dims, err, sizeof err), PRT_STATUS_BAD_FORMAT);
    dims[37] = 0;
    dims[25] = 1;                                   /* reserved non-zero */
    CHECK_EQ_INT(read_bytes(dims, sizeof dims, err, sizeof err), PRT_STATUS_BAD_FORMAT);
    /* the empty collection */
    {
        static const uint8_t none[] = {0, 0, 0, 0};
        prt_reader r = prt_reader_init(none, sizeof none);
        prt_owned_fields *o = NULL;
        CHECK_OK(prt__fields_read(&r, &o, err, sizeof err));
        CHECK(o && prt_owned_fields_get(o)->nb == 0);
        prt_owned_fields_free(o);
    }
}

TEST(fieldser_reads_in_sequence_and_leaves_the_rest)
{
    prt_fields fc = every_type();
    size_t len;
    uint8_t *buf = serialize(&fc, &len);
    uint8_t *two = malloc(2 * len + 3);
    prt_reader r;
    prt_owned_fields *a = NULL, *b = NULL;
    char err[256];
    memcpy(two, buf, len);
    memcpy(two + len, buf, len);
    memcpy(two + 2 * len, "xyz", 3);
    r = prt_reader_init(two, 2 * len + 3);
    CHECK_OK(prt__fields_read(&r, &a, err, sizeof err));
    CHECK_EQ_INT(r.pos, len);
    CHECK_OK(prt__fields_read(&r, &b, err, sizeof err));
    CHECK_EQ_INT(prt_reader_left(&r), 3);
    CHECK(a && b && prt_owned_fields_get(b)->nb == fc.nb);
    prt_owned_fields_free(a);
    prt_owned_fields_free(b);
    free(two);
    free(buf);
}

TEST(fieldser_writer_refuses_bad_fields)
{
    char err[256];
    uint8_t buf[256];
    const int32_t v = 1;
    prt_dims d;
    prt_field f[1];
    prt_fields fc;
    prt_writer w;
    fc.fields = f;
    fc.nb = 1;
    fc.reserved_ = 0;
    f[0] = fld("x", (prt_field_type)99, &v, 1);
    w = prt_writer_init(buf, sizeof buf);
    CHECK_EQ_INT(prt__fields_write(&w, &fc, err, sizeof err), PRT_STATUS_INVALID_ARGUMENT);
    CHECK(w.failed && w.len == 0);
    CHECK_STR_CONTAINS(err, "unknown type");
    f[0] = fld("x", PRT_FIELD_INT32, &v, -2);
    w = prt_writer_init(buf, sizeof buf);
    CHECK_EQ_INT(prt__fields_write(&w, &fc, err, sizeof err), PRT_STATUS_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(err, "negative count");
    f[0] = fld("x", PRT_FIELD_INT32, NULL, 2);
    w = prt_writer_init(buf, sizeof buf);
    CHECK_EQ_INT(prt__fields_write(&w, &fc, err, sizeof err), PRT_STATUS_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(err, "NULL data pointer");
    f[0] = fld(NULL, PRT_FIELD_INT32, &v, 1);
    w = prt_writer_init(buf, sizeof buf);
    CHECK_EQ_INT(prt__fields_write(&w, &fc, err, sizeof err), PRT_STATUS_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(err, "has no name");
    memset(&d, 0, sizeof d);
    d.nb = -1;
    f[0] = fld("d", PRT_FIELD_DIMS, &d, 1);
    w = prt_writer_init(buf, sizeof buf);
    CHECK_EQ_INT(prt__fields_write(&w, &fc, err, sizeof err), PRT_STATUS_INVALID_ARGUMENT);
    /* overflow of the writer's buffer */
    f[0] = fld("x", PRT_FIELD_INT32, &v, 1);
    w = prt_writer_init(buf, 10);
    CHECK_EQ_INT(prt__fields_write(&w, &fc, err, sizeof err), PRT_STATUS_INVALID_ARGUMENT);
    CHECK(w.failed);
    CHECK_STR_CONTAINS(err, "does not fit in the 10-byte buffer");
    /* NULL collection writes an empty one */
    w = prt_writer_init(buf, sizeof buf);
    CHECK_OK(prt__fields_write(&w, NULL, err, sizeof err));
    CHECK_EQ_INT(w.len, 4);
}

TEST(fieldser_read_alloc_failure)
{
    prt_fields fc = every_type();
    size_t len;
    uint8_t *buf = serialize(&fc, &len);
    char err[256];
    long n;
    int ok = 0;
    for (n = 0; n < 20 && !ok; n++) {
        prt_reader r = prt_reader_init(buf, len);
        prt_owned_fields *o = (prt_owned_fields *)(uintptr_t)0x66;
        prt_status st;
        prt__alloc_fail_after(n);
        st = prt__fields_read(&r, &o, err, sizeof err);
        prt__alloc_fail_after(-1);
        if (st == PRT_OK) {
            ok = 1;
            CHECK_EQ_INT(prt_owned_fields_get(o)->nb, fc.nb);
            prt_owned_fields_free(o);
        } else {
            CHECK_EQ_INT(st, PRT_STATUS_OUT_OF_MEMORY);
            CHECK(o == (prt_owned_fields *)(uintptr_t)0x66);
            CHECK_EQ_INT(r.pos, 0); /* the reader did not move */
            CHECK(!r.failed);
        }
    }
    CHECK(ok);
    free(buf);
    CHECK_NO_LEAKS();
}
