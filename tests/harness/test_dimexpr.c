/* Dimension expressions and constraints: the forms the shipped PluginConfig
 * files use, errors, and every expression in every shipped file. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "harness/harness.h"
#include "plugrt/op.h"
#include "prt_test.h"

/* ModulatedDeformConv2d: x [2,8,9,10], offset [2,18,7,8], mask [2,9,7,8],
 * weight [16,8,3,3], bias [16] */
static const int64_t x_d[] = {2, 8, 9, 10}, off_d[] = {2, 18, 7, 8}, mask_d[] = {2, 9, 7, 8},
                     w_d[] = {16, 8, 3, 3}, b_d[] = {16};
static const prt_dimexpr_sym mdc[] = {
    {"x", 4, x_d}, {"offset", 4, off_d}, {"mask", 4, mask_d}, {"weight", 4, w_d}, {"bias", 1, b_d},
};

static int holds(const char *text, const prt_dimexpr_sym *s, int n)
{
    int h = -1;
    char err[256];
    prt_status st = prt__dimexpr_check(text, s, n, &h, err, sizeof err);
    CHECK_MSG(st == PRT_OK, "%s: %s", text, err);
    return h;
}

TEST(constraints_of_modulated_deform_conv)
{
    CHECK_EQ_INT(holds("offset_0 == x_0", mdc, 5), 1);
    CHECK_EQ_INT(holds("mask_0 == x_0", mdc, 5), 1);
    CHECK_EQ_INT(holds("bias_0 == weight_0", mdc, 5), 1);
    CHECK_EQ_INT(holds("mask_2 == offset_2", mdc, 5), 1);
    CHECK_EQ_INT(holds("mask_3==offset_3", mdc, 5), 1);
    CHECK_EQ_INT(holds("mask_1 == x_1", mdc, 5), 0);
    CHECK_EQ_INT(holds("offset_1 == 2 * mask_1", mdc, 5), 1);
    CHECK_EQ_INT(holds("x_1 MULTIPLE_OF 4", mdc, 5), 1);
    CHECK_EQ_INT(holds("x_1 MULTIPLE_OF 3", mdc, 5), 0);
    CHECK_EQ_INT(holds("x_2 != x_3", mdc, 5), 1);
    CHECK_EQ_INT(holds("x_2 < x_3", mdc, 5), 1);
    CHECK_EQ_INT(holds("x_2 >= x_3", mdc, 5), 0);
    CHECK_EQ_INT(holds("x_2 <= 9", mdc, 5), 1);
    CHECK_EQ_INT(holds("x_2 > 9", mdc, 5), 0);
}

TEST(output_dims_lists)
{
    prt_dims d;
    char err[256];
    CHECK_OK(prt__dimexpr_eval_list("mask_0, weight_0, mask_2, mask_3", mdc, 5, &d, err, sizeof err));
    CHECK_EQ_INT(d.nb, 4);
    CHECK(d.d[0] == 2 && d.d[1] == 16 && d.d[2] == 7 && d.d[3] == 8);
    CHECK_OK(prt__dimexpr_eval_list("x_0, 1, 1", mdc, 5, &d, err, sizeof err));
    CHECK(d.nb == 3 && d.d[0] == 2 && d.d[1] == 1 && d.d[2] == 1);
    CHECK_OK(prt__dimexpr_eval_list("(x_2 + 2 * 1 - (3 - 1) - 1) / 1 + 1", mdc, 5, &d, err, sizeof err));
    CHECK(d.nb == 1 && d.d[0] == 9);
    CHECK_OK(prt__dimexpr_eval_list("", mdc, 5, &d, err, sizeof err));
    CHECK_EQ_INT(d.nb, 0);
}

TEST(names_with_underscores_and_bare_names)
{
    static const int64_t fm[] = {1, 256, 14, 14}, rois[] = {1, 100, 4, 1}, cw[] = {7}, nh[] = {12},
                         k[] = {64}, hs[] = {768};
    static const prt_dimexpr_sym s[] = {
        {"feature_maps", 4, fm}, {"rois", 4, rois}, {"crop_width", 1, cw}, {"crop_height", 1, cw},
        {"num_heads", 1, nh}, {"k", 1, k}, {"hidden_size", 1, hs},
    };
    prt_dims d;
    char err[256];
    CHECK_EQ_INT(holds("feature_maps_0 == rois_0", s, 7), 1);
    CHECK_EQ_INT(holds("rois_2 == 4", s, 7), 1);
    CHECK_OK(prt__dimexpr_eval_list("feature_maps_0, rois_1, feature_maps_1, crop_width_0, crop_height_0", s, 7,
                                    &d, err, sizeof err));
    CHECK(d.nb == 5 && d.d[1] == 100 && d.d[2] == 256 && d.d[3] == 7);
    CHECK_EQ_INT(holds("num_heads * k == hidden_size", s, 7), 1);
}

TEST(arithmetic)
{
    int64_t v;
    CHECK_OK(prt__dimexpr_eval("7 / 2", NULL, 0, &v, NULL, 0));
    CHECK_EQ_INT(v, 3);
    CHECK_OK(prt__dimexpr_eval("-7 / 2", NULL, 0, &v, NULL, 0));
    CHECK_EQ_INT(v, -4); /* floors */
    CHECK_OK(prt__dimexpr_eval("-7 % 2", NULL, 0, &v, NULL, 0));
    CHECK_EQ_INT(v, 1);
    CHECK_OK(prt__dimexpr_eval("2 + 3 * 4 - -1", NULL, 0, &v, NULL, 0));
    CHECK_EQ_INT(v, 15);
    CHECK_OK(prt__dimexpr_eval("(2 + 3) * 4", NULL, 0, &v, NULL, 0));
    CHECK_EQ_INT(v, 20);
}

static void expect_err(const char *text, prt_status want, const char *needle)
{
    int64_t v = 77;
    int h = 77;
    char err[256];
    prt_status s = strpbrk(text, "=<>~")
                       ? prt__dimexpr_check(text, mdc, 5, &h, err, sizeof err)
                       : prt__dimexpr_eval(text, mdc, 5, &v, err, sizeof err);
    CHECK_MSG(s == want, "%s: %s (%s)", text, prt_status_name(s), err);
    CHECK_STR_CONTAINS(err, needle);
    CHECK(v == 77 && h == 77);
}

TEST(errors_are_clear)
{
    expect_err("y_0 == x_0", PRT_STATUS_NOT_FOUND, "unknown name \"y_0\"");
    expect_err("x_7", PRT_STATUS_SHAPE_MISMATCH, "index 7 of \"x\", which has 4 values");
    expect_err("x_0 ~ x_1", PRT_STATUS_BAD_FORMAT, "expected ==, !=, <=, >=, <, > or MULTIPLE_OF, found \"~ x_1\"");
    expect_err("x_0 MULTIPLE_OFx_1", PRT_STATUS_BAD_FORMAT, "unexpected \"MULTIPLE_OFx_1\"");
    expect_err("x_0 +", PRT_STATUS_BAD_FORMAT, "expected a number, a name or '('");
    expect_err("(x_0", PRT_STATUS_BAD_FORMAT, "expected ')'");
    expect_err("x_0 / (x_0 - 2)", PRT_STATUS_BAD_FORMAT, "division by zero");
    expect_err("9223372036854775807 + 1", PRT_STATUS_BAD_FORMAT, "overflow");
    expect_err("4294967296 * 4294967296", PRT_STATUS_BAD_FORMAT, "overflow");
    expect_err("99999999999999999999", PRT_STATUS_BAD_FORMAT, "too large");
    expect_err("x_0 x_1", PRT_STATUS_BAD_FORMAT, "unexpected \"x_1\"");
    expect_err("3x", PRT_STATUS_BAD_FORMAT, "after a number");
    expect_err("((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((1", PRT_STATUS_BAD_FORMAT,
               "nested too deeply");
}

/* Every constraint and output_dims in every shipped file evaluates when
 * each input and attribute is given (or names only symbols it lacks). */
TEST(every_shipped_expression_parses)
{
    static const int64_t twos[PRT_MAX_DIMS] = {2, 2, 2, 2, 2, 2, 2, 2};
    char dir[1024];
    DIR *d;
    struct dirent *e;
    int checked = 0;
    snprintf(dir, sizeof dir, "%s/tensorrt/configs", prt_test_data_dir());
    d = opendir(dir);
    CHECK(d != NULL);
    if (!d) return;
    while ((e = readdir(d))) {
        char path[2048];
        prt_pcfg *cfg;
        int vi;
        if (!strstr(e->d_name, ".yaml")) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (prt__pcfg_load_file(path, &cfg) != PRT_OK) {
            CHECK_MSG(0, "%s", prt_last_error(&cfg));
            continue;
        }
        for (vi = 0; vi < cfg->nb_versions; vi++) {
            const prt_pcfg_version *v = &cfg->versions[vi];
            prt_dimexpr_sym syms[64];
            int n = 0, i;
            char err[256];
            for (i = 0; i < v->nb_inputs && n < 64; i++) syms[n++] = (prt_dimexpr_sym){v->inputs[i], 8, twos};
            for (i = 0; i < v->nb_attributes && n < 64; i++)
                syms[n++] = (prt_dimexpr_sym){v->attributes[i], 8, twos};
            for (i = 0; i < v->nb_input_dim_constraints; i++) {
                int h;
                prt_status s = prt__dimexpr_check(v->input_dim_constraints[i], syms, n, &h, err, sizeof err);
                CHECK_MSG(s == PRT_OK, "%s v%s: %s", e->d_name, v->version, err);
                checked++;
            }
            for (i = 0; i < v->nb_attribute_constraints; i++) {
                int h;
                prt_status s = prt__dimexpr_check(v->attribute_constraints[i], syms, n, &h, err, sizeof err);
                CHECK_MSG(s == PRT_OK || s == PRT_STATUS_NOT_FOUND, "%s v%s: %s", e->d_name, v->version, err);
                checked++;
            }
            for (i = 0; i < v->nb_output_dims; i++) {
                prt_dims od;
                prt_status s = prt__dimexpr_eval_list(v->output_dims[i].value, syms, n, &od, err, sizeof err);
                CHECK_MSG(s == PRT_OK, "%s v%s: %s", e->d_name, v->version, err);
                checked++;
            }
        }
        prt__pcfg_destroy(cfg);
    }
    closedir(d);
    CHECK(checked >= 40);
}
