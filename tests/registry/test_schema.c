/* Field-schema validation: every kind of bad field gets its message, widening
 * is accepted and converted, defaults are filled, bad schemas are refused
 * when a creator is registered. */
#include <math.h>

#include "core/core.h"
#include "plugrt/plugrt.h"
#include "fld.h"
#include "prt_test.h"
#include "registry/schema.h"

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#define CHECK_NO_LEAKS() CHECK(__lsan_do_recoverable_leak_check() == 0)
#else
#define CHECK_NO_LEAKS() ((void)0)
#endif

static prt_status dummy_create(const prt_plugin_creator *c, const prt_fields *fc, prt_phase phase,
                               prt_field_plugin **out, prt_msg *err)
{
    (void)c; (void)fc; (void)phase; (void)out;
    prt_msg_set(err, "not meant to be called");
    return PRT_STATUS_UNSUPPORTED;
}

static const int64_t def_groups = 1;
static const float def_alpha = 0.5f;
static const char def_mode[] = "bilinear";

static const prt_field_schema conv_fields[] = {
    {.name = "stride", .type = PRT_FIELD_INT32, .required = 1, .min_count = 2, .max_count = 2,
     .bounds = PRT_BOUND_MIN, .min = 1, .doc = "stride (h, w)"},
    {.name = "groups", .type = PRT_FIELD_INT64, .min_count = 1, .max_count = 1, .default_data = &def_groups,
     .default_count = 1, .bounds = PRT_BOUND_MIN, .min = 1},
    {.name = "alpha", .type = PRT_FIELD_FLOAT32, .min_count = 1, .max_count = 1, .default_data = &def_alpha,
     .default_count = 1, .bounds = PRT_BOUND_MIN_EXCL | PRT_BOUND_MAX, .min = 0, .max = 1},
    {.name = "beta", .type = PRT_FIELD_FLOAT64, .min_count = 0, .max_count = 4,
     .bounds = PRT_BOUND_MIN | PRT_BOUND_MAX_EXCL, .min = -1, .max = 1},
    {.name = "offsets", .type = PRT_FIELD_INT64, .min_count = 0, .max_count = PRT_COUNT_UNBOUNDED},
    {.name = "gain", .type = PRT_FIELD_FLOAT32, .min_count = 1, .max_count = 1},
    {.name = "mode", .type = PRT_FIELD_CHAR, .min_count = 1, .max_count = 32, .default_data = def_mode,
     .default_count = 8},
    {.name = "shape", .type = PRT_FIELD_DIMS, .min_count = 1, .max_count = 2},
    {.name = "flag", .type = PRT_FIELD_BOOL, .min_count = 1, .max_count = 1},
    {.name = "big", .type = PRT_FIELD_INT64, .min_count = 1, .max_count = 1, .bounds = PRT_BOUND_MAX,
     .max = 9007199254740992.0 /* 2^53 */},
    {.name = "small", .type = PRT_FIELD_INT16, .min_count = 1, .max_count = 3, .bounds = PRT_BOUND_MAX_EXCL,
     .max = 100},
    {.name = "half", .type = PRT_FIELD_FLOAT16, .min_count = 1, .max_count = 1},
    {.name = "wide", .type = PRT_FIELD_FLOAT64, .min_count = 1, .max_count = 2},
};

static const prt_plugin_creator conv = {
    sizeof(prt_plugin_creator), PRT_ABI_VERSION, "ModulatedDeformConv2d", "2", "", PRT_STYLE_FIELD,
    (int32_t)(sizeof conv_fields / sizeof conv_fields[0]), conv_fields, sizeof(prt_field_schema), 0,
    NULL, NULL, dummy_create, "test creator", NULL};


static const int32_t good_stride[2] = {1, 2};

/* Validate fields[0..n) plus a good "stride" (unless it is given); returns the
 * status, the message in err. */
static prt_status run(const prt_field *extra, int32_t n, char *err, size_t cap, prt_owned_fields **out)
{
    prt_field all[16];
    prt_fields fc;
    int32_t i, nb = 0, has_stride = 0;
    prt_owned_fields *sentinel = (prt_owned_fields *)(uintptr_t)0x1234, *o = sentinel;
    prt_status st;
    for (i = 0; i < n; i++) has_stride |= extra[i].name && strcmp(extra[i].name, "stride") == 0;
    if (!has_stride) all[nb++] = fld("stride", PRT_FIELD_INT32, good_stride, 2);
    for (i = 0; i < n; i++) all[nb++] = extra[i];
    fc.fields = all;
    fc.nb = nb;
    fc.reserved_ = 0;
    err[0] = 0;
    st = prt_fields_validate(&conv, &fc, &o, err, cap);
    if (st != PRT_OK) {
        CHECK_MSG(o == sentinel, "failed validation wrote *out");
        CHECK_MSG(err[0] != 0, "failed validation left no message");
        if (out) *out = NULL;
    } else if (out) {
        *out = o;
    } else {
        prt_owned_fields_free(o);
    }
    return st;
}

/* Expect a failure whose message contains `needle`. */
static void expect_fail(const prt_field *f, int32_t n, const char *needle)
{
    char err[1024];
    prt_status st = run(f, n, err, sizeof err, NULL);
    CHECK_EQ_INT(st, PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(err, needle);
    CHECK_STR_CONTAINS(err, "ModulatedDeformConv2d v2: ");
}

static void expect_ok(const prt_field *f, int32_t n)
{
    char err[1024];
    prt_status st = run(f, n, err, sizeof err, NULL);
    CHECK_MSG(st == PRT_OK, "expected success, got %d: %s", (int)st, err);
}

TEST(schema_defaults_filled_and_order_normalized)
{
    char err[1024];
    prt_owned_fields *o = NULL;
    const prt_fields *fc;
    const prt_field *f;
    const float gain = 3.5f;
    prt_field in[1];
    in[0] = fld("gain", PRT_FIELD_FLOAT32, &gain, 1);
    CHECK_OK(run(in, 1, err, sizeof err, &o));
    fc = prt_owned_fields_get(o);
    CHECK(fc != NULL);
    if (!fc) return;
    /* stride (given), groups (default), alpha (default), gain (given), mode
     * (default); beta, offsets, ... have no default and stay absent. */
    CHECK_EQ_INT(fc->nb, 5);
    CHECK(strcmp(fc->fields[0].name, "stride") == 0);
    CHECK(strcmp(fc->fields[1].name, "groups") == 0);
    CHECK(strcmp(fc->fields[2].name, "alpha") == 0);
    CHECK(strcmp(fc->fields[3].name, "gain") == 0);
    CHECK(strcmp(fc->fields[4].name, "mode") == 0);
    f = prt_fields_find(fc, "groups");
    CHECK(f && f->type == PRT_FIELD_INT64 && f->count == 1 && *(const int64_t *)f->data == 1);
    f = prt_fields_find(fc, "alpha");
    CHECK(f && f->type == PRT_FIELD_FLOAT32 && f->count == 1 && *(const float *)f->data == 0.5f);
    f = prt_fields_find(fc, "mode");
    CHECK(f && f->type == PRT_FIELD_CHAR && f->count == 8 && memcmp(f->data, "bilinear", 8) == 0);
    f = prt_fields_find(fc, "stride");
    CHECK(f && f->count == 2 && ((const int32_t *)f->data)[0] == 1 && ((const int32_t *)f->data)[1] == 2);
    CHECK(f && f->data != (const void *)good_stride); /* a copy */
    CHECK(prt_fields_find(fc, "beta") == NULL);
    CHECK(prt_fields_find(fc, "offsets") == NULL);
    CHECK_NEAR(prt_fields_f64(fc, "gain", 0, -1), 3.5, 0);
    prt_owned_fields_free(o);
    prt_owned_fields_free(NULL);
    CHECK(prt_owned_fields_get(NULL) == NULL);
    CHECK_NO_LEAKS();
}

TEST(schema_empty_collection_and_null)
{
    char err[512];
    prt_owned_fields *o = NULL;
    prt_status st = prt_fields_validate(&conv, NULL, &o, err, sizeof err);
    CHECK_EQ_INT(st, PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(err, "ModulatedDeformConv2d v2: required field \"stride\" is missing");
    CHECK_STR_CONTAINS(err, "needs 2 values >= 1 of type int32");
    CHECK_EQ_INT(prt_fields_validate(NULL, NULL, &o, err, sizeof err), PRT_STATUS_INVALID_ARGUMENT);
    CHECK_EQ_INT(prt_fields_validate(&conv, NULL, NULL, err, sizeof err), PRT_STATUS_INVALID_ARGUMENT);
    /* a NULL / zero-sized message buffer is fine */
    CHECK_EQ_INT(prt_fields_validate(&conv, NULL, &o, NULL, 0), PRT_STATUS_INVALID_FIELD);
}

TEST(schema_unknown_field_lists_known)
{
    const float v = 1;
    prt_field in[1];
    in[0] = fld("betta", PRT_FIELD_FLOAT32, &v, 1);
    expect_fail(in, 1, "unknown field \"betta\" (known: stride, groups, alpha, beta, offsets, gain, mode, "
                       "shape, flag, big, small, half, wide)");
}

TEST(schema_duplicate_field)
{
    const float a = 0.5f, b = 0.25f;
    prt_field in[3];
    in[0] = fld("alpha", PRT_FIELD_FLOAT32, &a, 1);
    in[1] = fld("gain", PRT_FIELD_FLOAT32, &a, 1);
    in[2] = fld("alpha", PRT_FIELD_FLOAT32, &b, 1);
    expect_fail(in, 3, "field \"alpha\" given twice (entries 1 and 3)");
}

TEST(schema_wrong_type)
{
    const float s[2] = {1, 2};
    const int32_t i = 1;
    const char c = 'x';
    prt_field in[1];
    in[0] = fld("stride", PRT_FIELD_FLOAT32, s, 2);
    expect_fail(in, 1, "field \"stride\" needs int32 (or int8, int16, widened), got float32");
    in[0] = fld("gain", PRT_FIELD_INT32, &i, 1);
    expect_fail(in, 1, "field \"gain\" needs float32 (or float16, widened), got int32");
    in[0] = fld("flag", PRT_FIELD_INT8, &c, 1);
    expect_fail(in, 1, "field \"flag\" needs bool, got int8");
    in[0] = fld("mode", PRT_FIELD_BYTES, &c, 1);
    expect_fail(in, 1, "field \"mode\" needs char, got bytes");
    in[0] = fld("gain", (prt_field_type)42, &i, 1);
    expect_fail(in, 1, "field \"gain\" has type 42, expected float32");
}

TEST(schema_narrowing_refused)
{
    const int64_t s[2] = {1, 2};
    const double g = 1.0;
    prt_field in[1];
    in[0] = fld("stride", PRT_FIELD_INT64, s, 2);
    expect_fail(in, 1, "needs int32 (or int8, int16, widened), got int64, which would narrow: narrowing is "
                       "refused");
    in[0] = fld("gain", PRT_FIELD_FLOAT64, &g, 1);
    expect_fail(in, 1, "field \"gain\" needs float32 (or float16, widened), got float64, which would narrow");
}

TEST(schema_widening_accepted_and_converted)
{
    char err[1024];
    prt_owned_fields *o = NULL;
    const prt_fields *fc;
    const prt_field *f;
    const int8_t s8[2] = {3, 4};
    const int32_t g32 = 7;
    const int8_t off8[3] = {-3, 127, -128};
    const int16_t off16[1] = {-32768};
    const uint16_t half_alpha = 0x3400; /* 0.25 */
    const float w32[2] = {0.1f, -2.5f};
    const uint16_t w16 = 0xbc00;         /* -1 */
    const uint16_t h = 0x3c00;
    prt_field in[6];
    int k;
    in[0] = fld("stride", PRT_FIELD_INT8, s8, 2);
    in[1] = fld("groups", PRT_FIELD_INT32, &g32, 1);
    in[2] = fld("offsets", PRT_FIELD_INT8, off8, 3);
    in[3] = fld("alpha", PRT_FIELD_FLOAT16, &half_alpha, 1);
    in[4] = fld("wide", PRT_FIELD_FLOAT32, w32, 2);
    in[5] = fld("half", PRT_FIELD_FLOAT16, &h, 1);
    CHECK_OK(run(in, 6, err, sizeof err, &o));
    fc = prt_owned_fields_get(o);
    if (!fc) return;
    f = prt_fields_find(fc, "stride");
    CHECK(f && f->type == PRT_FIELD_INT32 && f->count == 2);
    if (f) CHECK(((const int32_t *)f->data)[0] == 3 && ((const int32_t *)f->data)[1] == 4);
    f = prt_fields_find(fc, "groups"); /* int32 -> int64 */
    CHECK(f && f->type == PRT_FIELD_INT64 && f->count == 1 && *(const int64_t *)f->data == 7);
    f = prt_fields_find(fc, "offsets"); /* int8 -> int64, sign kept */
    CHECK(f && f->type == PRT_FIELD_INT64 && f->count == 3);
    for (k = 0; f && k < 3; k++) CHECK_EQ_INT(((const int64_t *)f->data)[k], off8[k]);
    f = prt_fields_find(fc, "alpha"); /* float16 -> float32 */
    CHECK(f && f->type == PRT_FIELD_FLOAT32 && *(const float *)f->data == 0.25f);
    f = prt_fields_find(fc, "wide"); /* float32 -> float64, exact */
    CHECK(f && f->type == PRT_FIELD_FLOAT64 && f->count == 2);
    if (f) CHECK(((const double *)f->data)[0] == (double)0.1f && ((const double *)f->data)[1] == -2.5);
    f = prt_fields_find(fc, "half"); /* same type: bits kept */
    CHECK(f && f->type == PRT_FIELD_FLOAT16 && *(const uint16_t *)f->data == 0x3c00);
    prt_owned_fields_free(o);

    /* int16 -> int64 and float16 -> float64 */
    in[0] = fld("offsets", PRT_FIELD_INT16, off16, 1);
    in[1] = fld("wide", PRT_FIELD_FLOAT16, &w16, 1);
    CHECK_OK(run(in, 2, err, sizeof err, &o));
    fc = prt_owned_fields_get(o);
    if (!fc) return;
    f = prt_fields_find(fc, "offsets");
    CHECK(f && f->type == PRT_FIELD_INT64 && *(const int64_t *)f->data == -32768);
    f = prt_fields_find(fc, "wide");
    CHECK(f && f->type == PRT_FIELD_FLOAT64 && *(const double *)f->data == -1.0);
    prt_owned_fields_free(o);
    CHECK_NO_LEAKS();
}

TEST(schema_count_outside_range)
{
    const int32_t s[3] = {1, 1, 1};
    const int16_t sm[4] = {1, 2, 3, 4};
    const double b[5] = {0, 0, 0, 0, 0};
    prt_dims d[3];
    prt_field in[1];
    memset(d, 0, sizeof d);
    in[0] = fld("stride", PRT_FIELD_INT32, s, 1);
    expect_fail(in, 1, "field \"stride\" needs 2 values, got 1: 1");
    in[0] = fld("stride", PRT_FIELD_INT32, s, 3);
    expect_fail(in, 1, "field \"stride\" needs 2 values, got 3: [1, 1, 1]");
    in[0] = fld("small", PRT_FIELD_INT16, sm, 4);
    expect_fail(in, 1, "field \"small\" needs 1 to 3 values, got 4");
    in[0] = fld("small", PRT_FIELD_INT16, NULL, 0);
    expect_fail(in, 1, "field \"small\" needs 1 to 3 values, got 0");
    in[0] = fld("beta", PRT_FIELD_FLOAT64, b, 5);
    expect_fail(in, 1, "field \"beta\" needs at most 4 values, got 5");
    in[0] = fld("shape", PRT_FIELD_DIMS, d, 3);
    expect_fail(in, 1, "field \"shape\" needs 1 to 2 values, got 3");
    in[0] = fld("beta", PRT_FIELD_FLOAT64, NULL, 0); /* 0 is within [0, 4] */
    expect_ok(in, 1);
    in[0] = fld("small", PRT_FIELD_INT16, sm, 3);
    expect_ok(in, 1);
}

TEST(schema_bounds_message_exact)
{
    char err[1024];
    const int32_t s[2] = {0, 1};
    prt_field in[1];
    in[0] = fld("stride", PRT_FIELD_INT32, s, 2);
    CHECK_EQ_INT(run(in, 1, err, sizeof err, NULL), PRT_STATUS_INVALID_FIELD);
    CHECK(strcmp(err, "ModulatedDeformConv2d v2: field \"stride\" needs 2 values >= 1, got [0, 1] "
                      "(element 0 is 0)") == 0);
    if (strcmp(err, "ModulatedDeformConv2d v2: field \"stride\" needs 2 values >= 1, got [0, 1] "
                    "(element 0 is 0)") != 0)
        fprintf(stderr, "  got: %s\n", err);
}

TEST(schema_bounds_each_kind)
{
    const int32_t s_ok[2] = {1, 1}, s_bad[2] = {1, 0};
    float a;
    double b[3];
    int16_t sm[2];
    prt_field in[1];
    /* inclusive min (stride >= 1): 1 passes, 0 fails, element index reported */
    in[0] = fld("stride", PRT_FIELD_INT32, s_ok, 2);
    expect_ok(in, 1);
    in[0] = fld("stride", PRT_FIELD_INT32, s_bad, 2);
    expect_fail(in, 1, "(element 1 is 0)");
    /* exclusive min (alpha > 0): 0 fails, the smallest positive passes */
    in[0] = fld("alpha", PRT_FIELD_FLOAT32, &a, 1);
    a = 0.0f;
    expect_fail(in, 1, "field \"alpha\" needs 1 value in (0, 1], got 0");
    a = -0.0f;
    expect_fail(in, 1, "in (0, 1]");
    a = 1e-45f;
    expect_ok(in, 1);
    /* inclusive max (alpha <= 1): 1 passes, the next float fails */
    a = 1.0f;
    expect_ok(in, 1);
    a = nextafterf(1.0f, 2.0f);
    expect_fail(in, 1, "field \"alpha\" needs 1 value in (0, 1], got 1.00000012");
    /* exclusive max (beta < 1) and inclusive min (beta >= -1), every element */
    in[0] = fld("beta", PRT_FIELD_FLOAT64, b, 3);
    b[0] = -1.0; b[1] = 0.5; b[2] = nextafter(1.0, 0.0);
    expect_ok(in, 1);
    b[2] = 1.0;
    expect_fail(in, 1, "field \"beta\" needs at most 4 values in [-1, 1), got [-1, 0.5, 1] (element 2 is 1)");
    b[2] = 0.0; b[0] = nextafter(-1.0, -2.0);
    expect_fail(in, 1, "(element 0 is -1.0000000000000002)");
    /* exclusive max on int16 (small < 100) */
    in[0] = fld("small", PRT_FIELD_INT16, sm, 2);
    sm[0] = 99; sm[1] = -500;
    expect_ok(in, 1);
    sm[1] = 100;
    expect_fail(in, 1, "field \"small\" needs 1 to 3 values < 100, got [99, 100] (element 1 is 100)");
    /* int8 widened to int16 still checked */
    {
        const int8_t s8[1] = {127};
        in[0] = fld("small", PRT_FIELD_INT8, s8, 1);
        expect_fail(in, 1, "needs 1 to 3 values < 100, got 127");
    }
}

TEST(schema_int64_bounds_are_exact)
{
    int64_t v;
    prt_field in[1];
    in[0] = fld("big", PRT_FIELD_INT64, &v, 1);
    v = (int64_t)1 << 53;
    expect_ok(in, 1);
    v = ((int64_t)1 << 53) + 1; /* equal to the bound once rounded to double */
    expect_fail(in, 1, "field \"big\" needs 1 value <= 9007199254740992, got 9007199254740993");
    v = INT64_MAX;
    expect_fail(in, 1, "got 9223372036854775807");
    v = INT64_MIN;
    expect_ok(in, 1);
}

TEST(schema_nan_refused_only_where_bounds_exist)
{
    const float nan = NAN;
    const uint16_t hnan = 0x7e00;
    prt_field in[1];
    in[0] = fld("alpha", PRT_FIELD_FLOAT32, &nan, 1);
    expect_fail(in, 1, "field \"alpha\" needs 1 value in (0, 1], got NaN");
    in[0] = fld("alpha", PRT_FIELD_FLOAT16, &hnan, 1);
    expect_fail(in, 1, "got NaN");
    in[0] = fld("gain", PRT_FIELD_FLOAT32, &nan, 1); /* no bounds: any value */
    expect_ok(in, 1);
}

TEST(schema_missing_required)
{
    char err[1024];
    const float g = 1;
    prt_field in[1];
    prt_fields fc;
    prt_owned_fields *o = (prt_owned_fields *)(uintptr_t)0x99;
    in[0] = fld("gain", PRT_FIELD_FLOAT32, &g, 1);
    fc.fields = in;
    fc.nb = 1;
    fc.reserved_ = 0;
    CHECK_EQ_INT(prt_fields_validate(&conv, &fc, &o, err, sizeof err), PRT_STATUS_INVALID_FIELD);
    CHECK(strcmp(err, "ModulatedDeformConv2d v2: required field \"stride\" is missing (it needs 2 values "
                      ">= 1 of type int32)") == 0);
    CHECK(o == (prt_owned_fields *)(uintptr_t)0x99);
}

TEST(schema_bad_field_entries)
{
    const float g = 1;
    const uint8_t two = 2;
    prt_dims d;
    prt_field in[1];
    char err[256];
    prt_fields fc;
    prt_owned_fields *o = NULL;
    in[0] = fld(NULL, PRT_FIELD_FLOAT32, &g, 1);
    expect_fail(in, 1, "field entry 1 has no name");
    in[0] = fld("gain", PRT_FIELD_FLOAT32, &g, -1);
    expect_fail(in, 1, "field \"gain\" has count -1, expected 0 or more");
    in[0] = fld("gain", PRT_FIELD_FLOAT32, NULL, 1);
    expect_fail(in, 1, "field \"gain\" has 1 values but its data pointer is NULL");
    in[0] = fld("gain", PRT_FIELD_FLOAT32, &g, 1);
    in[0].reserved_ = 3;
    expect_fail(in, 1, "field \"gain\" has reserved_ 3, expected 0");
    in[0] = fld("flag", PRT_FIELD_BOOL, &two, 1);
    expect_fail(in, 1, "field \"flag\" needs bool values 0 or 1, got 2 at element 0");
    memset(&d, 0, sizeof d);
    d.nb = 9;
    in[0] = fld("shape", PRT_FIELD_DIMS, &d, 1);
    expect_fail(in, 1, "field \"shape\" needs dims with 0 to 8 extents");
    d.nb = 2;
    d.d[0] = 3;
    d.d[1] = -7;
    expect_fail(in, 1, "needs extents >= 0 (or -1 for dynamic), got -7 in dimension 1");
    d.d[1] = PRT_DIM_DYNAMIC;
    expect_ok(in, 1);
    fc.fields = NULL;
    fc.nb = 2;
    fc.reserved_ = 0;
    CHECK_EQ_INT(prt_fields_validate(&conv, &fc, &o, err, sizeof err), PRT_STATUS_INVALID_ARGUMENT);
    fc.fields = in;
    fc.nb = -1;
    CHECK_EQ_INT(prt_fields_validate(&conv, &fc, &o, err, sizeof err), PRT_STATUS_INVALID_ARGUMENT);
}

TEST(schema_message_truncates_safely)
{
    char err[16];
    const float v = 1;
    prt_field in[1];
    memset(err, 'x', sizeof err);
    in[0] = fld("betta", PRT_FIELD_FLOAT32, &v, 1);
    CHECK_EQ_INT(run(in, 1, err, sizeof err, NULL), PRT_STATUS_INVALID_FIELD);
    CHECK_EQ_INT(strlen(err), 15);
}

/* A creator built with a larger schema entry (appended members): the host
 * strides by field_schema_size. */
typedef struct big_schema {
    prt_field_schema s;
    int64_t appended[3];
} big_schema;

TEST(schema_larger_entry_stride)
{
    static big_schema fields[2];
    prt_plugin_creator c = conv;
    const float v = 2;
    prt_field in[1];
    prt_fields fc;
    prt_owned_fields *o = NULL;
    char err[512];
    memset(fields, 0x5a, sizeof fields);
    memset(&fields[0].s, 0, sizeof fields[0].s);
    memset(&fields[1].s, 0, sizeof fields[1].s);
    fields[0].s.name = "first";
    fields[0].s.type = PRT_FIELD_INT32;
    fields[0].s.max_count = PRT_COUNT_UNBOUNDED;
    fields[1].s.name = "second";
    fields[1].s.type = PRT_FIELD_FLOAT32;
    fields[1].s.required = 1;
    fields[1].s.min_count = fields[1].s.max_count = 1;
    c.fields = &fields[0].s;
    c.nb_fields = 2;
    c.field_schema_size = sizeof(big_schema);
    in[0] = fld("second", PRT_FIELD_FLOAT32, &v, 1);
    fc.fields = in;
    fc.nb = 1;
    fc.reserved_ = 0;
    CHECK_OK(prt_fields_validate(&c, &fc, &o, err, sizeof err));
    CHECK(o && prt_owned_fields_get(o)->nb == 1);
    prt_owned_fields_free(o);
    in[0] = fld("third", PRT_FIELD_FLOAT32, &v, 1);
    CHECK_EQ_INT(prt_fields_validate(&c, &fc, &o, err, sizeof err), PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(err, "(known: first, second)");
}

TEST(schema_validate_alloc_failure)
{
    char err[512];
    const float g = 1;
    const int32_t g32 = 4;
    prt_field in[3];
    prt_fields fc;
    long n;
    int ok = 0;
    in[0] = fld("stride", PRT_FIELD_INT32, good_stride, 2);
    in[1] = fld("gain", PRT_FIELD_FLOAT32, &g, 1);
    in[2] = fld("groups", PRT_FIELD_INT32, &g32, 1);
    fc.fields = in;
    fc.nb = 3;
    fc.reserved_ = 0;
    for (n = 0; n < 50 && !ok; n++) {
        prt_owned_fields *o = (prt_owned_fields *)(uintptr_t)0x77;
        prt_status st;
        prt__alloc_fail_after(n);
        st = prt_fields_validate(&conv, &fc, &o, err, sizeof err);
        prt__alloc_fail_after(-1);
        if (st == PRT_OK) {
            ok = 1;
            CHECK(prt_fields_find(prt_owned_fields_get(o), "groups") != NULL);
            prt_owned_fields_free(o);
        } else {
            CHECK_EQ_INT(st, PRT_STATUS_OUT_OF_MEMORY);
            CHECK(o == (prt_owned_fields *)(uintptr_t)0x77);
            CHECK_STR_CONTAINS(err, "out of memory");
        }
    }
    CHECK(ok);
    CHECK_NO_LEAKS();
}

/* ---- bad schemas are refused at registration ------------------------------ */

static void expect_bad_schema(const prt_field_schema *s, int32_t n, uint32_t entry_size, const char *needle)
{
    prt_registry *r = NULL;
    prt_plugin_creator c = conv;
    int32_t nb = -1;
    c.fields = s;
    c.nb_fields = n;
    c.field_schema_size = entry_size;
    CHECK_OK(prt_registry_create(NULL, &r));
    if (!r) return;
    CHECK_EQ_INT(prt_registry_add(r, &c, "test"), PRT_STATUS_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(prt_registry_last_error(r), needle);
    CHECK_STR_CONTAINS(prt_registry_last_error(r), "ModulatedDeformConv2d v2: ");
    CHECK_OK(prt_registry_list(r, NULL, 0, &nb));
    CHECK_EQ_INT(nb, 0);
    prt_registry_destroy(r);
}

TEST(schema_bad_schemas_refused_at_registration)
{
    static const int32_t three[3] = {1, 2, 3};
    static const int32_t zero = 0;
    static const double dnan = NAN;
    static const uint8_t bool2 = 2;
    prt_field_schema s[2];
    const uint32_t sz = sizeof(prt_field_schema);
    memset(s, 0, sizeof s);
    s[0].name = "k";
    s[0].type = PRT_FIELD_INT32;
    s[0].min_count = 1;
    s[0].max_count = 1;
    s[1] = s[0];
    s[1].name = "j";

    s[0].type = (prt_field_type)77;
    expect_bad_schema(s, 2, sz, "schema field \"k\" has type 77, expected a prt_field_type");
    s[0].type = PRT_FIELD_INT32;
    s[0].min_count = 3;
    s[0].max_count = 2;
    expect_bad_schema(s, 2, sz, "schema field \"k\" has count range [3, 2]");
    s[0].min_count = -1;
    s[0].max_count = 2;
    expect_bad_schema(s, 2, sz, "count range [-1, 2]");
    s[0].min_count = 1;
    s[0].max_count = -5;
    expect_bad_schema(s, 2, sz, "count range [1, -5]");
    s[0].max_count = 2;
    s[0].default_data = three;
    s[0].default_count = 3;
    expect_bad_schema(s, 2, sz, "schema field \"k\" needs 1 to 2 values, but its default has 3 values");
    s[0].default_count = 1;
    s[0].bounds = PRT_BOUND_MIN_EXCL;
    s[0].min = 1;
    expect_bad_schema(s, 2, sz, "the default of schema field \"k\" needs 1 to 2 values > 1, got 1");
    s[0].default_data = &zero;
    s[0].bounds = PRT_BOUND_MIN;
    expect_bad_schema(s, 2, sz, "the default of schema field \"k\" needs 1 to 2 values >= 1, got 0");
    s[0].bounds = 0;
    s[0].default_data = NULL;
    s[0].default_count = 1;
    expect_bad_schema(s, 2, sz, "has default_count 1 but no default_data");
    s[0].default_count = 0;
    s[0].required = 1;
    s[0].default_data = &zero;
    expect_bad_schema(s, 2, sz, "is required and also has a default");
    s[0].required = 0;
    s[0].default_data = NULL;
    s[1].name = NULL;
    expect_bad_schema(s, 2, sz, "schema entry 1 has no name");
    s[1].name = "";
    expect_bad_schema(s, 2, sz, "schema entry 1 has no name");
    s[1].name = "k";
    expect_bad_schema(s, 2, sz, "schema names field \"k\" twice (entries 0 and 1)");
    s[1].name = "j";
    s[0].type = PRT_FIELD_CHAR;
    s[0].bounds = PRT_BOUND_MAX;
    expect_bad_schema(s, 2, sz, "has value bounds but type char");
    s[0].type = PRT_FIELD_FLOAT64;
    s[0].max = NAN;
    expect_bad_schema(s, 2, sz, "schema field \"k\" has a NaN bound");
    s[0].max = 1;
    s[0].min = 1;
    s[0].bounds = PRT_BOUND_MIN | PRT_BOUND_MAX_EXCL;
    expect_bad_schema(s, 2, sz, "schema field \"k\" allows no value: in [1, 1)");
    s[0].min = 2;
    s[0].bounds = PRT_BOUND_MIN | PRT_BOUND_MAX;
    expect_bad_schema(s, 2, sz, "allows no value: in [2, 1]");
    s[0].bounds = 0x40;
    expect_bad_schema(s, 2, sz, "unknown bound flags 0x40");
    s[0].bounds = PRT_BOUND_MIN;
    s[0].min = 0;
    s[0].default_data = &dnan;
    s[0].default_count = 1;
    expect_bad_schema(s, 2, sz, "the default of schema field \"k\" needs 1 to 2 values >= 0, got NaN");
    s[0].type = PRT_FIELD_BOOL;
    s[0].bounds = 0;
    s[0].default_data = &bool2;
    expect_bad_schema(s, 2, sz, "the default of schema field \"k\" needs bool values 0 or 1");
    s[0].default_data = NULL;
    s[0].default_count = 0;
    expect_bad_schema(s, 2, 40, "field_schema_size is 40, expected sizeof(prt_field_schema)");
    expect_bad_schema(s, 2, sz + 4, "a multiple of 8");
    expect_bad_schema(NULL, 2, sz, "nb_fields is 2 but the schema array is NULL");
    expect_bad_schema(s, -1, sz, "schema has -1 entries");
    CHECK_NO_LEAKS();
}

TEST(schema_good_schema_registers)
{
    prt_registry *r = NULL;
    const prt_plugin_creator *found = NULL;
    CHECK_OK(prt_registry_create(NULL, &r));
    CHECK_OK(prt_registry_add(r, &conv, "test"));
    CHECK_OK(prt_registry_find(r, "ModulatedDeformConv2d", "2", NULL, &found, NULL));
    CHECK(found == &conv);
    prt_registry_destroy(r);
    CHECK_NO_LEAKS();
}

/* Random collections: validation never crashes, and whatever it accepts is
 * normalized: schema types, counts within range, values within bounds,
 * required fields present, values equal to the input's. */
TEST(schema_random_collections_property)
{
    static const char *names[] = {"stride", "groups", "alpha", "beta", "offsets", "gain", "mode", "shape",
                                  "flag", "big", "small", "half", "wide", "nope"};
    static int64_t pool[64];
    uint32_t seed = 2024;
    int iter, nb_ok = 0, nb_bad = 0;
    int k;
#define RND() (seed = seed * 1103515245u + 12345u, (seed >> 8))
    for (iter = 0; iter < 4000; iter++) {
        prt_field in[6];
        prt_fields fc;
        prt_owned_fields *o = NULL;
        char err[512];
        int32_t n = 1 + (int32_t)(RND() % 5), i, j;
        prt_status st;
        for (k = 0; k < 64; k++) {
            /* small integers and floats of either sign, now and then 0 */
            uint32_t r = RND();
            if (r % 3 == 0) {
                pool[k] = (int64_t)(r % 7) - 2;
            } else {
                float f = (float)((int)(r % 9) - 3) * 0.25f;
                double dd = (double)f;
                memcpy(&pool[k], r % 2 ? (const void *)&dd : (const void *)&f, r % 2 ? 8 : 4);
            }
        }
        in[0] = fld("stride", PRT_FIELD_INT32, good_stride, 2);
        for (i = 1; i < n; i++) {
            in[i] = fld(names[RND() % 14], (prt_field_type)(RND() % 11), &pool[RND() % 8], (int64_t)(RND() % 4));
            if (in[i].type == PRT_FIELD_DIMS) in[i].count = in[i].count > 1 ? 1 : in[i].count;
            if (in[i].type == PRT_FIELD_DIMS) {
                prt_dims *d = (prt_dims *)(void *)&pool[32];
                memset(d, 0, sizeof *d);
                d->nb = (int32_t)(RND() % 3);
                d->d[0] = 4;
                in[i].data = d;
            }
        }
        fc.fields = in;
        fc.nb = n;
        fc.reserved_ = 0;
        st = prt_fields_validate(&conv, &fc, &o, err, sizeof err);
        if (st != PRT_OK) {
            CHECK_EQ_INT(st, PRT_STATUS_INVALID_FIELD);
            CHECK(strncmp(err, "ModulatedDeformConv2d v2: ", 26) == 0);
            nb_bad++;
            continue;
        }
        nb_ok++;
        {
            const prt_fields *out = prt_owned_fields_get(o);
            CHECK(prt_fields_find(out, "stride") != NULL);
            for (j = 0; j < out->nb; j++) {
                const prt_field *f = &out->fields[j];
                const prt_field_schema *s = NULL;
                const prt_field *src = prt_fields_find(&fc, f->name);
                int32_t e;
                for (k = 0; k < conv.nb_fields; k++)
                    if (strcmp(conv_fields[k].name, f->name) == 0) s = &conv_fields[k];
                CHECK(s != NULL);
                if (!s) continue;
                CHECK_EQ_INT(f->type, s->type);
                CHECK(f->count >= s->min_count && (s->max_count < 0 || f->count <= s->max_count));
                for (e = 0; e < f->count; e++) {
                    double v, w;
                    if (prt_field_get_f64(f, e, &v) != 0) continue; /* char, bytes, dims */
                    if (s->bounds & (PRT_BOUND_MIN | PRT_BOUND_MIN_EXCL))
                        CHECK((s->bounds & PRT_BOUND_MIN_EXCL) ? v > s->min : v >= s->min);
                    if (s->bounds & (PRT_BOUND_MAX | PRT_BOUND_MAX_EXCL))
                        CHECK((s->bounds & PRT_BOUND_MAX_EXCL) ? v < s->max : v <= s->max);
                    if (src && prt_field_get_f64(src, e, &w) == 0) CHECK(v == w || (v != v && w != w));
                }
            }
        }
        prt_owned_fields_free(o);
    }
#undef RND
    CHECK_MSG(nb_ok > 100 && nb_bad > 100, "%d accepted, %d refused", nb_ok, nb_bad);
    CHECK_NO_LEAKS();
}
