/* Symbolic shape expressions: builder, folding, evaluation, errors, text. */
#include "core/core.h"
#include "engine/expr.h"
#include "prt_test.h"

static prt__exprs *arena(void)
{
    prt__exprs *x = NULL;
    CHECK_OK(prt__exprs_create(&x));
    CHECK(x != NULL);
    return x;
}

static prt_dims dims2(int64_t a, int64_t b)
{
    prt_dims d;
    memset(&d, 0, sizeof d);
    d.nb = 2;
    d.d[0] = a;
    d.d[1] = b;
    return d;
}

TEST(builder_fields_and_constants)
{
    prt__exprs *x = arena();
    prt_expr_builder *eb = prt__exprs_builder(x);
    const prt_expr *c;
    int64_t v = -7;
    CHECK(eb->struct_size == sizeof(prt_expr_builder));
    CHECK(eb->abi_version == PRT_ABI_VERSION);
    c = eb->constant(eb, 42);
    CHECK(c != NULL);
    CHECK(eb->get_constant(eb, c, &v) == 1);
    CHECK_EQ_INT(v, 42);
    CHECK(prt__exprs_owns(x, c));
    CHECK(!prt__exprs_failed(x));
    prt__exprs_destroy(x);
}

TEST(folding_of_known_leaves)
{
    prt__exprs *x = arena();
    prt_expr_builder *eb = prt__exprs_builder(x);
    const prt_expr *h = prt__exprs_leaf(x, 0, 2, 10); /* known */
    const prt_expr *w = prt__exprs_leaf(x, 0, 3, -1); /* dynamic */
    const prt_expr *two = eb->constant(eb, 2), *three = eb->constant(eb, 3);
    const prt_expr *e1 = eb->operation(eb, PRT_EXPR_FLOOR_DIV,
                                       eb->operation(eb, PRT_EXPR_SUB,
                                                     eb->operation(eb, PRT_EXPR_SUM, h, two), three),
                                       two);
    const prt_expr *e2 = eb->operation(eb, PRT_EXPR_PROD, w, two);
    int64_t v = -1;
    CHECK(eb->get_constant(eb, e1, &v) == 1);
    CHECK_EQ_INT(v, 4); /* floor((10 + 2 - 3) / 2) */
    v = -1;
    CHECK(eb->get_constant(eb, e2, &v) == 0);
    CHECK_EQ_INT(v, -1); /* untouched */
    CHECK(eb->get_constant(eb, w, &v) == 0);
    prt__exprs_destroy(x);
}

TEST(every_operation_evaluates)
{
    static const struct { prt_expr_op op; int64_t a, b, want; } cases[] = {
        {PRT_EXPR_SUM, 7, -3, 4},        {PRT_EXPR_PROD, 7, -3, -21},
        {PRT_EXPR_MAX, 7, -3, 7},        {PRT_EXPR_MIN, 7, -3, -3},
        {PRT_EXPR_SUB, 7, -3, 10},       {PRT_EXPR_EQUAL, 5, 5, 1},
        {PRT_EXPR_EQUAL, 5, 6, 0},       {PRT_EXPR_LESS, 5, 6, 1},
        {PRT_EXPR_LESS, 6, 5, 0},        {PRT_EXPR_FLOOR_DIV, 7, 2, 3},
        {PRT_EXPR_FLOOR_DIV, -7, 2, -4}, {PRT_EXPR_FLOOR_DIV, 7, -2, -4},
        {PRT_EXPR_FLOOR_DIV, -7, -2, 3}, {PRT_EXPR_FLOOR_DIV, 6, 2, 3},
        {PRT_EXPR_CEIL_DIV, 7, 2, 4},    {PRT_EXPR_CEIL_DIV, -7, 2, -3},
        {PRT_EXPR_CEIL_DIV, 6, 3, 2},    {PRT_EXPR_CEIL_DIV, -7, -2, 4},
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        prt__exprs *x = arena();
        prt_expr_builder *eb = prt__exprs_builder(x);
        /* symbolic leaves evaluated with concrete dims */
        const prt_expr *a = prt__exprs_leaf(x, 0, 0, -1), *b = prt__exprs_leaf(x, 1, 1, -1);
        const prt_expr *e = eb->operation(eb, cases[i].op, a, b);
        prt_dims in[2];
        int64_t v = 0, k = 0;
        int dd = 5;
        in[0] = dims2(cases[i].a, 0);
        in[1] = dims2(0, cases[i].b);
        CHECK(e != NULL);
        if (cases[i].a >= 0 && cases[i].b >= 0) {
            CHECK_OK(prt__expr_eval(x, e, in, 2, &v, &dd));
            CHECK_MSG(v == cases[i].want, "case %zu: %lld != %lld", i, (long long)v,
                      (long long)cases[i].want);
            CHECK_EQ_INT(dd, 0);
        }
        /* the same with constants, folded */
        e = eb->operation(eb, cases[i].op, eb->constant(eb, cases[i].a), eb->constant(eb, cases[i].b));
        CHECK(eb->get_constant(eb, e, &k) == 1);
        CHECK_MSG(k == cases[i].want, "case %zu folded: %lld != %lld", i, (long long)k,
                  (long long)cases[i].want);
        CHECK_OK(prt__expr_eval(x, e, NULL, 0, &v, NULL));
        CHECK_EQ_INT(v, cases[i].want);
        prt__exprs_destroy(x);
    }
}

TEST(division_by_zero_and_overflow_fail)
{
    prt__exprs *x = arena();
    prt_expr_builder *eb = prt__exprs_builder(x);
    const prt_expr *a = prt__exprs_leaf(x, 0, 0, -1), *b = prt__exprs_leaf(x, 0, 1, -1);
    const prt_expr *div = eb->operation(eb, PRT_EXPR_FLOOR_DIV, a, b);
    const prt_expr *cdiv = eb->operation(eb, PRT_EXPR_CEIL_DIV, a, b);
    const prt_expr *prod = eb->operation(eb, PRT_EXPR_PROD, a, b);
    const prt_expr *sum = eb->operation(eb, PRT_EXPR_SUM, a, b);
    const prt_expr *big = eb->constant(eb, INT64_MAX), *one = eb->constant(eb, 1);
    const prt_expr *ofl = eb->operation(eb, PRT_EXPR_SUM, big, one);
    const prt_expr *minv = eb->constant(eb, INT64_MIN), *m1 = eb->constant(eb, -1);
    const prt_expr *ofl2 = eb->operation(eb, PRT_EXPR_FLOOR_DIV, minv, m1);
    const prt_expr *zdiv = eb->operation(eb, PRT_EXPR_FLOOR_DIV, one, eb->constant(eb, 0));
    prt_dims in = dims2(10, 0);
    int64_t v = 77, k;
    CHECK(prt__expr_eval(x, div, &in, 1, &v, NULL) == -1);
    CHECK(prt__expr_eval(x, cdiv, &in, 1, &v, NULL) == -1);
    CHECK_EQ_INT(v, 77);
    in = dims2(INT64_MAX / 2, 3);
    CHECK(prt__expr_eval(x, prod, &in, 1, &v, NULL) == -1);
    in = dims2(INT64_MAX, 1);
    CHECK(prt__expr_eval(x, sum, &in, 1, &v, NULL) == -1);
    /* unfoldable constants stay unknown and fail evaluation */
    CHECK(eb->get_constant(eb, ofl, &k) == 0);
    CHECK(eb->get_constant(eb, ofl2, &k) == 0);
    CHECK(eb->get_constant(eb, zdiv, &k) == 0);
    CHECK(prt__expr_eval(x, ofl, NULL, 0, &v, NULL) == -1);
    CHECK(prt__expr_eval(x, ofl2, NULL, 0, &v, NULL) == -1);
    CHECK(prt__expr_eval(x, zdiv, NULL, 0, &v, NULL) == -1);
    CHECK_EQ_INT(v, 77);
    prt__exprs_destroy(x);
}

TEST(leaves_outside_inputs_and_dynamic_extents)
{
    prt__exprs *x = arena();
    const prt_expr *sym = prt__exprs_leaf(x, 1, 0, -1);
    const prt_expr *known = prt__exprs_leaf(x, 3, 0, 9);
    prt_dims in = dims2(4, PRT_DIM_DYNAMIC);
    const prt_expr *dyn = prt__exprs_leaf(x, 0, 1, -1);
    int64_t v = 0;
    CHECK(prt__expr_eval(x, sym, &in, 1, &v, NULL) == -1); /* input 1 not given */
    CHECK_OK(prt__expr_eval(x, known, &in, 1, &v, NULL));   /* known value used */
    CHECK_EQ_INT(v, 9);
    CHECK(prt__expr_eval(x, dyn, &in, 1, &v, NULL) == -1);  /* -1 extent */
    CHECK(prt__exprs_leaf(x, -1, 0, 1) == NULL);
    CHECK(prt__exprs_leaf(x, 0, PRT_MAX_DIMS, 1) == NULL);
    prt__exprs_destroy(x);
}

TEST(foreign_and_null_nodes_are_refused)
{
    prt__exprs *x = arena(), *y = arena();
    prt_expr_builder *eb = prt__exprs_builder(x);
    const prt_expr *mine = eb->constant(eb, 3);
    const prt_expr *theirs = prt__exprs_const(y, 4);
    int64_t v = 0;
    int fake[16] = {0};
    char buf[64];
    CHECK(!prt__exprs_owns(x, theirs));
    CHECK(!prt__exprs_owns(x, (const prt_expr *)fake));
    CHECK(!prt__exprs_owns(x, (const prt_expr *)((const char *)mine + 1)));
    CHECK(eb->operation(eb, PRT_EXPR_SUM, mine, theirs) == NULL);
    CHECK(eb->operation(eb, PRT_EXPR_SUM, mine, NULL) == NULL);
    CHECK(eb->operation(eb, (prt_expr_op)99, mine, mine) == NULL);
    CHECK(eb->data_dependent(eb, NULL) == NULL);
    CHECK(eb->get_constant(eb, theirs, &v) == 0);
    CHECK(prt__expr_eval(x, theirs, NULL, 0, &v, NULL) == -1);
    CHECK(prt__expr_eval(x, NULL, NULL, 0, &v, NULL) == -1);
    CHECK_STR_CONTAINS(prt__expr_str(x, theirs, buf, sizeof buf), "foreign");
    CHECK(!prt__exprs_failed(x)); /* bad arguments are not memory failures */
    prt__exprs_destroy(x);
    prt__exprs_destroy(y);
}

TEST(data_dependent_evaluates_to_upper_bound)
{
    prt__exprs *x = arena();
    prt_expr_builder *eb = prt__exprs_builder(x);
    const prt_expr *n = prt__exprs_leaf(x, 0, 0, -1);
    const prt_expr *dd = eb->data_dependent(eb, eb->operation(eb, PRT_EXPR_MIN, n, eb->constant(eb, 100)));
    const prt_expr *four = eb->operation(eb, PRT_EXPR_PROD, dd, eb->constant(eb, 4));
    const prt_expr *known_upper = eb->data_dependent(eb, eb->constant(eb, 8));
    prt_dims in = dims2(30, 1);
    int64_t v = 0;
    int flag = 0;
    CHECK_OK(prt__expr_eval(x, dd, &in, 1, &v, &flag));
    CHECK_EQ_INT(v, 30);
    CHECK_EQ_INT(flag, 1);
    flag = 0;
    CHECK_OK(prt__expr_eval(x, four, &in, 1, &v, &flag));
    CHECK_EQ_INT(v, 120);
    CHECK_EQ_INT(flag, 1);
    in.d[0] = 500;
    CHECK_OK(prt__expr_eval(x, dd, &in, 1, &v, &flag));
    CHECK_EQ_INT(v, 100);
    /* never a constant, even with a constant bound */
    CHECK(eb->get_constant(eb, known_upper, &v) == 0);
    prt__exprs_destroy(x);
}

TEST(shared_subexpressions_evaluate_quickly)
{
    /* e = e + e, 200 times: 2^200 paths, linear with memoization; the value
     * overflows after 62 doublings, which must be reported, not wrapped. */
    prt__exprs *x = arena();
    prt_expr_builder *eb = prt__exprs_builder(x);
    const prt_expr *e = prt__exprs_leaf(x, 0, 0, -1);
    prt_dims in = dims2(1, 1);
    int64_t v = 0;
    int i;
    for (i = 0; i < 40; i++) e = eb->operation(eb, PRT_EXPR_SUM, e, e);
    CHECK_OK(prt__expr_eval(x, e, &in, 1, &v, NULL));
    CHECK_EQ_INT(v, (int64_t)1 << 40);
    for (i = 0; i < 160; i++) e = eb->operation(eb, PRT_EXPR_SUM, e, e);
    CHECK(prt__expr_eval(x, e, &in, 1, &v, NULL) == -1);
    prt__exprs_destroy(x);
}

TEST(deep_chains_and_many_nodes)
{
    prt__exprs *x = arena();
    prt_expr_builder *eb = prt__exprs_builder(x);
    const prt_expr *e = prt__exprs_leaf(x, 0, 0, -1), *one = eb->constant(eb, 1);
    const prt_expr *first = e;
    prt_dims in = dims2(5, 1);
    int64_t v = 0;
    int i;
    char buf[128];
    for (i = 0; i < 5000; i++) e = eb->operation(eb, PRT_EXPR_SUM, e, one);
    CHECK_OK(prt__expr_eval(x, e, &in, 1, &v, NULL));
    CHECK_EQ_INT(v, 5005);
    CHECK(prt__exprs_owns(x, first)); /* nodes never move */
    /* a chain past the depth limit fails cleanly */
    for (i = 0; i < 20000; i++) e = eb->operation(eb, PRT_EXPR_SUM, e, one);
    CHECK(e != NULL);
    CHECK(prt__expr_eval(x, e, &in, 1, &v, NULL) == -1);
    prt__expr_str(x, e, buf, sizeof buf); /* truncated, bounded */
    CHECK(strlen(buf) < sizeof buf);
    prt__exprs_destroy(x);
}

TEST(to_string)
{
    prt__exprs *x = arena();
    prt_expr_builder *eb = prt__exprs_builder(x);
    const prt_expr *h = prt__exprs_leaf(x, 0, 2, -1);
    const prt_expr *e = eb->operation(
        eb, PRT_EXPR_SUM,
        eb->operation(eb, PRT_EXPR_FLOOR_DIV,
                      eb->operation(eb, PRT_EXPR_SUB, eb->operation(eb, PRT_EXPR_SUM, h, eb->constant(eb, 2)),
                                    eb->constant(eb, 3)),
                      eb->constant(eb, 1)),
        eb->constant(eb, 1));
    const prt_expr *p = eb->operation(eb, PRT_EXPR_PROD, eb->operation(eb, PRT_EXPR_SUM, h, h),
                                      eb->data_dependent(eb, eb->constant(eb, 5)));
    char buf[128], tiny[8];
    CHECK(strcmp(prt__expr_str(x, e, buf, sizeof buf), "floor_div(in0.d2 + 2 - 3, 1) + 1") == 0);
    CHECK(strcmp(prt__expr_str(x, p, buf, sizeof buf), "(in0.d2 + in0.d2) * data_dependent(5)") == 0);
    prt__expr_str(x, e, tiny, sizeof tiny);
    CHECK(strlen(tiny) == sizeof tiny - 1);
    CHECK(strcmp(prt__expr_str(x, NULL, buf, sizeof buf), "(null)") == 0);
    prt__exprs_destroy(x);
}

TEST(out_of_memory_is_remembered)
{
    prt__exprs *x = arena();
    prt_expr_builder *eb = prt__exprs_builder(x);
    const prt_expr *e = NULL;
    int i, nulls = 0;
    prt__alloc_fail_after(0);
    for (i = 0; i < 100; i++) {
        e = eb->constant(eb, i);
        if (!e) nulls++;
    }
    prt__alloc_fail_after(-1);
    CHECK(nulls > 0);
    CHECK(prt__exprs_failed(x));
    prt__exprs_destroy(x);
    /* creation itself fails cleanly */
    x = (prt__exprs *)&i;
    prt__alloc_fail_after(0);
    CHECK(prt__exprs_create(&x) == PRT_STATUS_OUT_OF_MEMORY);
    prt__alloc_fail_after(-1);
    CHECK(x == (prt__exprs *)&i);
}
