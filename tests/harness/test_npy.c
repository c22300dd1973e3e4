/* .npy reader and writer: NumPy-written fixtures (tests/data/npy, made by
 * make_npy_fixtures.py) checked element by element against the formulas
 * that produced them; malformed headers and data built here. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"
#include "plugrt/npy.h"
#include "plugrt/op.h"
#include "prt_test.h"

static void fixture_path(char *buf, size_t cap, const char *name)
{
    snprintf(buf, cap, "%s/npy/%s", prt_test_data_dir(), name);
}

static void read_fixture(const char *name, prt_npy_array *a)
{
    char path[1024];
    prt_status s;
    fixture_path(path, sizeof path, name);
    s = prt_npy_read_file(path, a);
    CHECK_MSG(s == PRT_OK, "%s: %s", name, prt_last_error(a));
    if (s != PRT_OK) exit(1);
}

static void load_bytes(const char *name, uint8_t **buf, size_t *len)
{
    char path[1024], err[512];
    void *b;
    fixture_path(path, sizeof path, name);
    CHECK_OK(prt__read_file(path, &b, len, err, sizeof err));
    *buf = b;
}

static void check_shape(const prt_npy_array *a, int nb, const int64_t *d)
{
    int i;
    CHECK_EQ_INT(a->shape.nb, nb);
    for (i = 0; i < nb && i < a->shape.nb; i++) CHECK_EQ_INT(a->shape.d[i], d[i]);
}

/* An array poisoned so that a failed call that wrote to it is noticed. */
static prt_npy_array poisoned(void)
{
    prt_npy_array a;
    memset(&a, 0xa5, sizeof a);
    return a;
}

static int is_poisoned(const prt_npy_array *a)
{
    prt_npy_array p = poisoned();
    return memcmp(a, &p, sizeof p) == 0;
}

TEST(reads_c_order_f4)
{
    prt_npy_array a;
    const int64_t d[] = {2, 3, 4};
    int64_t i;
    read_fixture("c_f4_2x3x4.npy", &a);
    CHECK_EQ_INT(a.type, PRT_NPY_F4);
    check_shape(&a, 3, d);
    CHECK_EQ_INT(a.count, 24);
    CHECK_EQ_INT(a.nbytes, 96);
    for (i = 0; i < 24; i++) CHECK_EQ_INT(((float *)a.data)[i] == (float)(0.5 * (double)i - 3), 1);
    prt_npy_array_clear(&a);
    CHECK(a.data == NULL);
}

TEST(fortran_order_becomes_c_order)
{
    prt_npy_array c, f, g, h;
    const int64_t d4[] = {2, 3, 4, 5}, d2[] = {3, 5};
    int64_t i, j;
    read_fixture("c_f4_2x3x4.npy", &c);
    read_fixture("fortran_f4_2x3x4.npy", &f);
    CHECK_EQ_INT(f.nbytes, c.nbytes);
    CHECK(memcmp(c.data, f.data, c.nbytes) == 0);
    read_fixture("fortran_i4_2x3x4x5.npy", &g);
    CHECK_EQ_INT(g.type, PRT_NPY_I4);
    check_shape(&g, 4, d4);
    for (i = 0; i < 120; i++) CHECK_EQ_INT(((int32_t *)g.data)[i], i);
    read_fixture("fortran_i8_3x5.npy", &h);
    CHECK_EQ_INT(h.type, PRT_NPY_I8);
    check_shape(&h, 2, d2);
    for (i = 0; i < 3; i++)
        for (j = 0; j < 5; j++) CHECK_EQ_INT(((int64_t *)h.data)[i * 5 + j], 1000 * i + j);
    prt_npy_array_clear(&c);
    prt_npy_array_clear(&f);
    prt_npy_array_clear(&g);
    prt_npy_array_clear(&h);
}

TEST(reads_every_element_type)
{
    prt_npy_array a;
    int64_t i;
    read_fixture("f2_7.npy", &a);
    CHECK_EQ_INT(a.type, PRT_NPY_F2);
    CHECK_EQ_INT(a.count, 7);
    for (i = 0; i < 7; i++) CHECK_EQ_INT(prt_npy_get_f64(&a, i) == i * 0.25 - 1, 1);
    prt_npy_array_clear(&a);

    read_fixture("f8_5.npy", &a);
    CHECK_EQ_INT(a.type, PRT_NPY_F8);
    for (i = 0; i < 5; i++) CHECK_EQ_INT(((double *)a.data)[i] == (double)i / 3, 1);
    prt_npy_array_clear(&a);

    read_fixture("i1_8.npy", &a);
    CHECK_EQ_INT(a.type, PRT_NPY_I1);
    for (i = 0; i < 8; i++) CHECK_EQ_INT(((int8_t *)a.data)[i], i - 4);
    prt_npy_array_clear(&a);

    read_fixture("u1_6.npy", &a);
    CHECK_EQ_INT(a.type, PRT_NPY_U1);
    for (i = 0; i < 6; i++) CHECK_EQ_INT(((uint8_t *)a.data)[i], 250 + i);
    prt_npy_array_clear(&a);

    read_fixture("i4_6.npy", &a);
    CHECK_EQ_INT(a.type, PRT_NPY_I4);
    for (i = 0; i < 6; i++) CHECK_EQ_INT(((int32_t *)a.data)[i], i * -100000);
    prt_npy_array_clear(&a);

    read_fixture("i8_4.npy", &a);
    CHECK_EQ_INT(a.type, PRT_NPY_I8);
    for (i = 0; i < 4; i++) CHECK_EQ_INT(((int64_t *)a.data)[i], i * (INT64_C(1) << 40) - 5);
    prt_npy_array_clear(&a);

    read_fixture("b1_6.npy", &a);
    CHECK_EQ_INT(a.type, PRT_NPY_B1);
    for (i = 0; i < 6; i++) CHECK_EQ_INT(((uint8_t *)a.data)[i], i % 3 == 0);
    prt_npy_array_clear(&a);
}

TEST(header_versions_2_and_3)
{
    prt_npy_array c, v2, v3;
    read_fixture("c_f4_2x3x4.npy", &c);
    read_fixture("v2_f4_2x3x4.npy", &v2);
    read_fixture("v3_f4_2x3x4.npy", &v3);
    CHECK(prt_dims_equal(&c.shape, &v2.shape) && prt_dims_equal(&c.shape, &v3.shape));
    CHECK(memcmp(c.data, v2.data, c.nbytes) == 0);
    CHECK(memcmp(c.data, v3.data, c.nbytes) == 0);
    prt_npy_array_clear(&c);
    prt_npy_array_clear(&v2);
    prt_npy_array_clear(&v3);
}

TEST(scalar_and_empty_arrays)
{
    prt_npy_array a;
    read_fixture("scalar_f4.npy", &a);
    CHECK_EQ_INT(a.shape.nb, 0);
    CHECK_EQ_INT(a.count, 1);
    CHECK_EQ_INT(((float *)a.data)[0] == 3.5f, 1);
    prt_npy_array_clear(&a);
    read_fixture("empty_f4_0x3.npy", &a);
    CHECK_EQ_INT(a.shape.nb, 2);
    CHECK_EQ_INT(a.count, 0);
    CHECK_EQ_INT(a.nbytes, 0);
    prt_npy_array_clear(&a);
}

/* Build an image from a header dict and `data_len` bytes of data. */
static size_t build(uint8_t *buf, size_t cap, int major, const char *dict, size_t data_len)
{
    size_t pre = major == 1 ? 10 : 12, hl = strlen(dict), i;
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (uint8_t)major;
    buf[7] = 0;
    buf[8] = (uint8_t)hl;
    buf[9] = (uint8_t)(hl >> 8);
    if (major != 1) buf[10] = buf[11] = 0;
    memcpy(buf + pre, dict, hl);
    for (i = 0; i < data_len && pre + hl + i < cap; i++) buf[pre + hl + i] = (uint8_t)i;
    return pre + hl + data_len;
}

/* The read must fail with `want` and a message containing `needle`, and
 * leave the poisoned output alone. */
static void expect_fail(const uint8_t *buf, size_t len, prt_status want, const char *needle)
{
    prt_npy_array a = poisoned();
    prt_status s = prt_npy_read_mem(buf, len, &a);
    CHECK_MSG(s == want, "status %s, expected %s (%s)", prt_status_name(s), prt_status_name(want),
              prt_last_error(&a));
    CHECK_STR_CONTAINS(prt_last_error(&a), needle);
    CHECK(is_poisoned(&a));
}

TEST(bad_headers_are_clear_errors)
{
    uint8_t b[512];
    size_t n;
    memcpy(b, "\x93NUMPZ\x01\x00", 8);
    expect_fail(b, 8, PRT_STATUS_BAD_FORMAT, "bad magic");
    expect_fail((const uint8_t *)"PK\x03\x04", 4, PRT_STATUS_BAD_FORMAT, "bad magic");
    expect_fail((const uint8_t *)"", 0, PRT_STATUS_TRUNCATED, "ends early");

    n = build(b, sizeof b, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", 8);
    b[6] = 4;
    expect_fail(b, n, PRT_STATUS_VERSION_MISMATCH, "found 4.0");

    n = build(b, sizeof b, 1, "{'descr': '<f4', 'shape': (2,), }\n", 8);
    expect_fail(b, n, PRT_STATUS_BAD_FORMAT, "missing 'fortran_order'");
    n = build(b, sizeof b, 1, "{'fortran_order': False, }\n", 8);
    expect_fail(b, n, PRT_STATUS_BAD_FORMAT, "missing 'descr' 'shape'");
    n = build(b, sizeof b, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}\n", 8);
    expect_fail(b, n, PRT_STATUS_BAD_FORMAT, "unexpected key 'x'");
    n = build(b, sizeof b, 1, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}\n", 8);
    expect_fail(b, n, PRT_STATUS_BAD_FORMAT, "appears twice");
    n = build(b, sizeof b, 1, "{'descr': '<f4', 'fortran_order': maybe, 'shape': (2,)}\n", 8);
    expect_fail(b, n, PRT_STATUS_BAD_FORMAT, "'fortran_order' must be True or False");
    n = build(b, sizeof b, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)\n", 8);
    expect_fail(b, n, PRT_STATUS_BAD_FORMAT, "expected ',' or '}'");
    n = build(b, sizeof b, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x\n", 8);
    expect_fail(b, n, PRT_STATUS_BAD_FORMAT, "after the dict");
    n = build(b, sizeof b, 1, "{'descr: '<f4', 'fortran_order': False, 'shape': (2,)}\n", 8);
    expect_fail(b, n, PRT_STATUS_BAD_FORMAT, "npy: header");
}

TEST(unknown_and_big_endian_dtypes_are_refused)
{
    uint8_t b[512], *f;
    size_t n, len;
    n = build(b, sizeof b, 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }\n", 8);
    expect_fail(b, n, PRT_STATUS_UNSUPPORTED,
                "expected one of <f2 <f4 <f8 |i1 |u1 <i4 <i8 |b1, found '>f4'");
    n = build(b, sizeof b, 1, "{'descr': '<U3', 'fortran_order': False, 'shape': (2,), }\n", 24);
    expect_fail(b, n, PRT_STATUS_UNSUPPORTED, "found '<U3'");
    n = build(b, sizeof b, 1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }\n", 8);
    expect_fail(b, n, PRT_STATUS_UNSUPPORTED, "structured");
    load_bytes("be_f4_3.npy", &f, &len);
    expect_fail(f, len, PRT_STATUS_UNSUPPORTED, "found '>f4'");
    prt__free(f);
    load_bytes("c8_2.npy", &f, &len);
    expect_fail(f, len, PRT_STATUS_UNSUPPORTED, "found '<c8'");
    prt__free(f);
}

TEST(bad_shapes_are_refused)
{
    uint8_t b[512];
    size_t n;
    n = build(b, sizeof b, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }\n", 0);
    expect_fail(b, n, PRT_STATUS_BAD_FORMAT, "negative");
    n = build(b, sizeof b, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }\n", 0);
    expect_fail(b, n, PRT_STATUS_BAD_FORMAT, "does not fit in 64 bits");
    n = build(b, sizeof b, 1,
              "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }\n", 0);
    expect_fail(b, n, PRT_STATUS_BAD_FORMAT, "overflows");
    n = build(b, sizeof b, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }\n", 4);
    expect_fail(b, n, PRT_STATUS_UNSUPPORTED, "more than 8 dimensions");
    n = build(b, sizeof b, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }\n", 0);
    expect_fail(b, n, PRT_STATUS_BAD_FORMAT, "expected a dimension");
}

TEST(data_length_must_match_the_shape)
{
    uint8_t b[512];
    size_t n;
    n = build(b, sizeof b, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", 20);
    expect_fail(b, n, PRT_STATUS_TRUNCATED, "needs 24 bytes, found 20");
    n = build(b, sizeof b, 2, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", 30);
    expect_fail(b, n, PRT_STATUS_BAD_FORMAT, "6 trailing bytes");
    n = build(b, sizeof b, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", 24);
    b[8] = 0xff; /* header length beyond the buffer */
    expect_fail(b, n, PRT_STATUS_TRUNCATED, "header ends early");
}

TEST(truncated_at_every_byte_fails_cleanly)
{
    static const char *const names[] = {"fortran_i4_2x3x4x5.npy", "v3_f4_2x3x4.npy", "b1_6.npy"};
    size_t k, cut;
    for (k = 0; k < sizeof names / sizeof names[0]; k++) {
        uint8_t *f, *copy;
        size_t len;
        load_bytes(names[k], &f, &len);
        for (cut = 0; cut < len; cut++) {
            prt_npy_array a = poisoned();
            prt_status s;
            copy = malloc(cut ? cut : 1); /* exact size, so ASan sees any overread */
            memcpy(copy, f, cut);
            s = prt_npy_read_mem(copy, cut, &a);
            CHECK_MSG(s != PRT_OK, "%s cut at %zu was accepted", names[k], cut);
            CHECK(s == PRT_STATUS_TRUNCATED || s == PRT_STATUS_BAD_FORMAT);
            CHECK(prt_last_error(&a)[0] != 0);
            CHECK(is_poisoned(&a));
            free(copy);
        }
        prt__free(f);
    }
}

TEST(bit_flips_never_crash)
{
    uint8_t *f;
    size_t len, i;
    int bit;
    load_bytes("fortran_i8_3x5.npy", &f, &len);
    for (i = 0; i < 128 && i < len; i++)
        for (bit = 0; bit < 8; bit++) {
            prt_npy_array a = poisoned();
            f[i] ^= (uint8_t)(1u << bit);
            if (prt_npy_read_mem(f, len, &a) == PRT_OK) prt_npy_array_clear(&a);
            else CHECK(is_poisoned(&a));
            f[i] ^= (uint8_t)(1u << bit);
        }
    prt__free(f);
}

TEST(write_then_read_round_trips)
{
    prt_npy_type t;
    for (t = PRT_NPY_F2; t < PRT_NPY_COUNT_; t++) {
        prt_npy_array a, b;
        prt_dims sh;
        void *buf;
        size_t len, i;
        memset(&sh, 0, sizeof sh);
        sh.nb = 3;
        sh.d[0] = 2;
        sh.d[1] = 1;
        sh.d[2] = 5;
        CHECK_OK(prt_npy_array_alloc(&a, t, &sh));
        for (i = 0; i < a.nbytes; i++) ((uint8_t *)a.data)[i] = (uint8_t)(t == PRT_NPY_B1 ? i & 1 : i * 7 + 1);
        CHECK_OK(prt_npy_write_mem(&a, &buf, &len));
        CHECK_EQ_INT((len - a.nbytes) % 64, 0); /* header padded to 64 bytes */
        CHECK_OK(prt_npy_read_mem(buf, len, &b));
        CHECK_EQ_INT(b.type, t);
        CHECK(prt_dims_equal(&a.shape, &b.shape));
        CHECK(a.nbytes == b.nbytes && memcmp(a.data, b.data, a.nbytes) == 0);
        prt_npy_free(buf);
        prt_npy_array_clear(&a);
        prt_npy_array_clear(&b);
    }
}

TEST(write_matches_numpy_bytes)
{
    prt_npy_array a;
    uint8_t *f;
    void *buf;
    size_t len, flen;
    read_fixture("c_f4_2x3x4.npy", &a);
    load_bytes("c_f4_2x3x4.npy", &f, &flen);
    CHECK_OK(prt_npy_write_mem(&a, &buf, &len));
    CHECK_EQ_INT(len, flen);
    CHECK(memcmp(buf, f, flen) == 0);
    prt_npy_free(buf);
    prt__free(f);
    prt_npy_array_clear(&a);
}

TEST(write_file_and_read_file)
{
    prt_npy_array a, b;
    char path[256];
    read_fixture("fortran_i8_3x5.npy", &a);
    snprintf(path, sizeof path, "/tmp/prt_test_npy_%d.npy", (int)getpid());
    CHECK_OK(prt_npy_write_file(&a, path));
    CHECK_OK(prt_npy_read_file(path, &b));
    CHECK(memcmp(a.data, b.data, a.nbytes) == 0);
    remove(path);
    CHECK_EQ_INT(prt_npy_read_file("/nonexistent/x.npy", &b), PRT_STATUS_IO_ERROR);
    CHECK_STR_CONTAINS(prt_last_error(&b), "/nonexistent/x.npy");
    prt_npy_array_clear(&a);
    prt_npy_array_clear(&b);
}

TEST(convert_to_dtypes)
{
    prt_npy_array a;
    float f[5];
    uint16_t h[5];
    int32_t i32[6], keep[6];
    int64_t i;
    read_fixture("f8_5.npy", &a);
    CHECK_OK(prt_npy_convert(&a, PRT_DTYPE_F32, f, sizeof f));
    for (i = 0; i < 5; i++) CHECK_EQ_INT(f[i] == (float)((double)i / 3), 1);
    CHECK_OK(prt_npy_convert(&a, PRT_DTYPE_F16, h, sizeof h));
    for (i = 0; i < 5; i++) CHECK_EQ_INT(h[i], prt_f32_to_f16((float)((double)i / 3)));
    /* 1/3 is not an integer: refused, destination untouched */
    memset(i32, 0x5a, sizeof i32);
    memcpy(keep, i32, sizeof keep);
    CHECK_EQ_INT(prt_npy_convert(&a, PRT_DTYPE_I32, i32, 5 * 4), PRT_STATUS_TYPE_MISMATCH);
    CHECK_STR_CONTAINS(prt_last_error(&a), "element 1");
    CHECK(memcmp(i32, keep, sizeof keep) == 0);
    CHECK_EQ_INT(prt_npy_convert(&a, PRT_DTYPE_F32, f, sizeof f - 4), PRT_STATUS_SHAPE_MISMATCH);
    prt_npy_array_clear(&a);

    read_fixture("i8_4.npy", &a); /* 2^40 * i - 5 does not fit in int32 from i = 1 */
    CHECK_EQ_INT(prt_npy_convert(&a, PRT_DTYPE_I32, i32, 4 * 4), PRT_STATUS_TYPE_MISMATCH);
    CHECK(memcmp(i32, keep, sizeof keep) == 0);
    prt_npy_array_clear(&a);

    read_fixture("i4_6.npy", &a);
    CHECK_OK(prt_npy_convert(&a, PRT_DTYPE_I32, i32, sizeof i32));
    for (i = 0; i < 6; i++) CHECK_EQ_INT(i32[i], i * -100000);
    prt_npy_array_clear(&a);
}

TEST(type_tables)
{
    prt_dtype dt;
    prt_npy_type t;
    CHECK(strcmp(prt_npy_type_descr(PRT_NPY_B1), "|b1") == 0);
    CHECK_EQ_INT(prt_npy_type_size(PRT_NPY_F8), 8);
    CHECK_EQ_INT(prt_npy_type_to_dtype(PRT_NPY_F8, &dt), PRT_STATUS_UNSUPPORTED);
    CHECK_OK(prt_npy_type_to_dtype(PRT_NPY_U1, &dt));
    CHECK_EQ_INT(dt, PRT_DTYPE_U8);
    CHECK_EQ_INT(prt_npy_type_from_dtype(PRT_DTYPE_BF16, &t), PRT_STATUS_UNSUPPORTED);
    CHECK_OK(prt_npy_type_from_dtype(PRT_DTYPE_I64, &t));
    CHECK_EQ_INT(t, PRT_NPY_I8);
}

TEST(allocation_failures_are_atomic)
{
    uint8_t *f;
    size_t len;
    long n;
    load_bytes("fortran_f4_2x3x4.npy", &f, &len);
    for (n = 0;; n++) {
        prt_npy_array a = poisoned();
        prt_status s;
        prt__alloc_fail_after(n);
        s = prt_npy_read_mem(f, len, &a);
        prt__alloc_fail_after(-1);
        if (s == PRT_OK) {
            prt_npy_array_clear(&a);
            break;
        }
        CHECK_EQ_INT(s, PRT_STATUS_OUT_OF_MEMORY);
        CHECK(is_poisoned(&a));
    }
    CHECK(n >= 1);
    prt__free(f);
}

size_t prt_test_npy_cxx_size(void);

TEST(header_compiles_as_cxx)
{
    CHECK_EQ_INT(prt_test_npy_cxx_size(), 8 + sizeof(prt_npy_array));
}

TEST(writer_refuses_inconsistent_arrays)
{
    prt_npy_array a;
    prt_dims sh;
    void *buf = (void *)(uintptr_t)0x1234;
    size_t len = 77;
    memset(&sh, 0, sizeof sh);
    sh.nb = 2;
    sh.d[0] = 2;
    sh.d[1] = 3;
    CHECK_OK(prt_npy_array_alloc(&a, PRT_NPY_I4, &sh));
    a.count = 5;
    CHECK_EQ_INT(prt_npy_write_mem(&a, &buf, &len), PRT_STATUS_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(prt_last_error(&a), "do not match the shape (6 elements, 24 bytes)");
    CHECK(buf == (void *)(uintptr_t)0x1234 && len == 77);
    a.count = 6;
    a.type = (prt_npy_type)42;
    CHECK_EQ_INT(prt_npy_write_mem(&a, &buf, &len), PRT_STATUS_INVALID_ARGUMENT);
    a.type = PRT_NPY_I4;
    a.shape.d[1] = -3;
    CHECK_EQ_INT(prt_npy_write_mem(&a, &buf, &len), PRT_STATUS_INVALID_ARGUMENT);
    a.shape.d[1] = 3;
    CHECK_EQ_INT(prt_npy_write_file(&a, "/nonexistent/dir/x.npy"), PRT_STATUS_IO_ERROR);
    CHECK_STR_CONTAINS(prt_last_error(&a), "cannot create \"/nonexistent/dir/x.npy\"");
    prt_npy_array_clear(&a);
    prt_npy_array_clear(NULL);
}
