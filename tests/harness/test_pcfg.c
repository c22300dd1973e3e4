/* PluginConfig YAML reader: every file in tests/data/tensorrt/configs parses,
 * their irregular layouts are read as meant, malformed files fail clearly. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "harness/harness.h"
#include "plugrt/op.h"
#include "prt_test.h"

static prt_pcfg *load(const char *rel)
{
    char path[1024];
    prt_pcfg *cfg = NULL;
    prt_status s;
    snprintf(path, sizeof path, "%s/tensorrt/configs/%s", prt_test_data_dir(), rel);
    s = prt__pcfg_load_file(path, &cfg);
    CHECK_MSG(s == PRT_OK, "%s: %s", rel, prt_last_error(&cfg));
    if (s != PRT_OK) exit(1);
    return cfg;
}

static prt_pcfg *load_text(const char *text)
{
    prt_pcfg *cfg = NULL;
    prt_status s = prt__pcfg_load_mem(text, strlen(text), "test.yaml", &cfg);
    CHECK_MSG(s == PRT_OK, "%s", prt_last_error(&cfg));
    if (s != PRT_OK) exit(1);
    return cfg;
}

static void expect_fail(const char *text, prt_status want, const char *needle)
{
    prt_pcfg *cfg = (prt_pcfg *)(uintptr_t)0x1234;
    prt_status s = prt__pcfg_load_mem(text, strlen(text), "bad.yaml", &cfg);
    CHECK_MSG(s == want, "status %s, expected %s: %s", prt_status_name(s), prt_status_name(want),
              prt_last_error(&cfg));
    CHECK_STR_CONTAINS(prt_last_error(&cfg), needle);
    CHECK(cfg == (prt_pcfg *)(uintptr_t)0x1234);
}

static int has_warning(const prt_pcfg *cfg, const char *needle)
{
    int i;
    for (i = 0; i < cfg->nb_warnings; i++)
        if (strstr(cfg->warnings[i], needle)) return 1;
    return 0;
}

static int load_dir(const char *sub, int *nb_versions)
{
    char dir[1024];
    DIR *d;
    struct dirent *e;
    int n = 0;
    snprintf(dir, sizeof dir, "%s/tensorrt/configs%s", prt_test_data_dir(), sub);
    d = opendir(dir);
    CHECK_MSG(d != NULL, "cannot open %s", dir);
    if (!d) return 0;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        char path[2048];
        prt_pcfg *cfg = NULL;
        prt_status s;
        if (len < 5 || strcmp(e->d_name + len - 5, ".yaml") != 0) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        s = prt__pcfg_load_file(path, &cfg);
        CHECK_MSG(s == PRT_OK, "%s: %s", e->d_name, prt_last_error(&cfg));
        if (s == PRT_OK) {
            CHECK(cfg->name && cfg->name[0]);
            CHECK(cfg->nb_versions >= 1);
            *nb_versions += cfg->nb_versions;
            prt__pcfg_destroy(cfg);
        }
        n++;
    }
    closedir(d);
    return n;
}

TEST(every_shipped_yaml_parses)
{
    int versions = 0;
    CHECK_EQ_INT(load_dir("", &versions), 22);
    CHECK_EQ_INT(load_dir("/toplevel", &versions), 3);
    CHECK(versions >= 30);
}

TEST(modulated_deform_conv_in_detail)
{
    prt_pcfg *cfg = load("CustomModulatedDeformConv2d_PluginConfig.yaml");
    const prt_pcfg_version *v;
    const prt_pcfg_range *r;
    const prt_pcfg_option *o;
    CHECK(strcmp(cfg->name, "ModulatedDeformConv2d") == 0);
    CHECK_EQ_INT(cfg->nb_versions, 2);
    CHECK_EQ_INT(cfg->nb_warnings, 0);
    v = prt__pcfg_find_version(cfg, "2");
    CHECK(v && strcmp(v->interface, "IPluginV3") == 0);
    CHECK_EQ_INT(v->nb_inputs, 5);
    CHECK(strcmp(v->inputs[4], "bias") == 0);
    CHECK_EQ_INT(v->nb_outputs, 1);
    CHECK_EQ_INT(prt__pcfg_count_get(v->input_dims, v->nb_input_dims, "bias")->value, 1);
    CHECK_EQ_INT(v->nb_input_dim_constraints, 5);
    CHECK(strcmp(v->input_dim_constraints[0], "offset_0 == x_0") == 0);
    r = prt__pcfg_range_get(v->input_dim_ranges, v->nb_input_dim_ranges, "offset");
    CHECK(r != NULL);
    CHECK_EQ_INT(r->nb_min, 4);
    CHECK_EQ_INT(r->min[1].value, 2);
    CHECK_EQ_INT(r->min[1].inclusive, 1);
    CHECK_EQ_INT(r->nb_max, 4);
    CHECK(isinf(r->max[3].value) && r->max[3].value > 0);
    CHECK_EQ_INT(v->nb_combos, 2);
    CHECK(strcmp(v->combos[1].name, "combination2") == 0);
    CHECK(strcmp(prt__pcfg_pair_get(v->combos[1].types, v->combos[1].nb_types, "mask"), "float16") == 0);
    CHECK(strcmp(prt__pcfg_pair_get(v->output_dims, v->nb_output_dims, "output"),
                 "mask_0, weight_0, mask_2, mask_3") == 0);
    CHECK_EQ_INT(v->nb_attributes, 5);
    CHECK(strcmp(prt__pcfg_pair_get(v->attribute_types, v->nb_attribute_types, "stride"), "int32") == 0);
    CHECK_EQ_INT(prt__pcfg_count_get(v->attribute_lengths, v->nb_attribute_lengths, "stride")->value, 2);
    CHECK_EQ_INT(prt__pcfg_count_get(v->attribute_dims, v->nb_attribute_dims, "group")->value, 1);
    o = prt__pcfg_option_get(v, "padding");
    CHECK(o && o->kind == PRT_PCFG_OPTION_RANGE);
    CHECK_EQ_INT(o->range.nb_min, 2);
    CHECK_EQ_INT(o->range.min[0].value, 0);
    CHECK_EQ_INT(v->nb_attribute_dim_ranges, 5);
    CHECK_EQ_INT(v->nb_attributes_required, 5);
    CHECK(strcmp(v->golden_io_path, "plugin/CustomModulatedDeformConv2d_PluginGoldenIO.json") == 0);
    CHECK_NEAR(v->abs_tol, 1e-5, 0);
    CHECK_NEAR(v->rel_tol, 1e-5, 0);
    CHECK(isnan(v->fp16_atol));
    CHECK_EQ_INT(v->nb_configs, 1);
    CHECK(strcmp(v->configs[0].name, "config1") == 0);
    CHECK_EQ_INT(v->configs[0].nb_input_types, 5);
    CHECK_EQ_INT(v->configs[0].nb_attrs, 0); /* attribute_options: [] */
    CHECK_EQ_INT(v->configs[0].nb_output_types, 1);
    prt__pcfg_destroy(cfg);
}

TEST(efficient_nms_enums_and_config_values)
{
    prt_pcfg *cfg = load("EfficientNMSPlugin_PluginConfig.yaml");
    const prt_pcfg_version *v = &cfg->versions[0];
    const prt_pcfg_option *o;
    const prt_pcfg_config *c;
    int i;
    CHECK(strcmp(v->interface, "IPluginV2DynamicExt") == 0); /* from the top level */
    o = prt__pcfg_option_get(v, "box_coding");
    CHECK(o && o->kind == PRT_PCFG_OPTION_ENUM);
    CHECK_EQ_INT(o->nb_values, 2);
    CHECK(o->values[1].is_int && o->values[1].i == 1);
    o = prt__pcfg_option_get(v, "iou_threshold");
    CHECK(o && o->kind == PRT_PCFG_OPTION_RANGE);
    CHECK_EQ_INT(o->range.min[0].inclusive, 0); /* "0": exclusive */
    CHECK(!prt__pcfg_bounds_allow(&o->range.min[0], &o->range.max[0], 0.0));
    CHECK(prt__pcfg_bounds_allow(&o->range.min[0], &o->range.max[0], 0.5));
    o = prt__pcfg_option_get(v, "background_class");
    CHECK(prt__pcfg_bounds_allow(&o->range.min[0], &o->range.max[0], -1e300));
    CHECK_EQ_INT(v->nb_configs, 2);
    c = &v->configs[1];
    CHECK(strcmp(c->name, "class_agnostic") == 0);
    CHECK_EQ_INT(c->nb_attrs, 4);
    for (i = 0; i < c->nb_attrs; i++)
        if (!strcmp(c->attrs[i].name, "background_class")) {
            CHECK(c->attrs[i].has_value && !c->attrs[i].value_is_list);
            CHECK(c->attrs[i].values[0].is_int && c->attrs[i].values[0].i == -1);
            CHECK(strcmp(c->attrs[i].shape, "1") == 0);
        }
    CHECK_EQ_INT(c->nb_output_types, 2);
    prt__pcfg_destroy(cfg);
}

TEST(irregular_layouts_are_read)
{
    prt_pcfg *cfg;
    const prt_pcfg_version *v;
    const prt_pcfg_range *r;
    const prt_pcfg_option *o;
    int i;

    /* attribute_dim_range as a list of {min} and {max}; a range naming no attribute */
    cfg = load("CustomEmbLayerNormPluginDynamic_PluginConfig.yaml");
    v = &cfg->versions[0];
    CHECK(strcmp(v->interface, "IPluginV3") == 0);
    r = prt__pcfg_range_get(v->attribute_dim_ranges, v->nb_attribute_dim_ranges,
                            "bert_embeddings_token_type_embeddings");
    CHECK(r && r->nb_min == 2 && r->nb_max == 2);
    CHECK(has_warning(cfg, "\"bert_embeddings_word_embedding\" is not one of the attributes"));
    CHECK(strcmp(v->golden_reference_script, "plugin/CustomEmbLayerNormPluginDynamic_PluginReference.py") == 0);
    CHECK(v->configs[0].attrs[3].shape && !v->configs[0].attrs[3].has_value);
    prt__pcfg_destroy(cfg);

    /* supported_input_types as a list of one-key maps */
    cfg = load("CustomSkipLayerNormPluginDynamic_PluginConfig.yaml");
    v = prt__pcfg_find_version(cfg, "6");
    CHECK(v && v->nb_combos == 2 && strcmp(v->combos[1].name, "combination2") == 0);
    CHECK(v->configs[0].attrs[0].has_value && v->configs[0].attrs[0].values[0].i == 0);
    prt__pcfg_destroy(cfg);

    /* from_shape */
    cfg = load("CustomFCPluginDynamic_PluginConfig.yaml");
    o = prt__pcfg_option_get(&cfg->versions[0], "out_dims");
    CHECK(o && o->kind == PRT_PCFG_OPTION_FROM_SHAPE && strcmp(o->from_shape, "W_1") == 0);
    CHECK_NEAR(cfg->versions[0].fp16_atol, 1e-3, 0);
    prt__pcfg_destroy(cfg);

    /* list values in configs; attribute_length -1 */
    cfg = load("GridAnchor_TRT_PluginConfig.yaml");
    v = &cfg->versions[0];
    CHECK_EQ_INT(v->nb_inputs, 0);
    CHECK_EQ_INT(prt__pcfg_count_get(v->attribute_lengths, v->nb_attribute_lengths, "aspectRatios")->value, -1);
    for (i = 0; i < v->configs[0].nb_attrs; i++)
        if (!strcmp(v->configs[0].attrs[i].name, "variance")) {
            CHECK(v->configs[0].attrs[i].value_is_list);
            CHECK_EQ_INT(v->configs[0].attrs[i].nb_values, 4);
            CHECK_NEAR(v->configs[0].attrs[i].values[2].num, 0.2, 0);
        }
    prt__pcfg_destroy(cfg);

    /* choices in configs; string enums; bf16 tolerances */
    cfg = load("ScatterElementsPlugin_PluginConfig.yaml");
    v = &cfg->versions[0];
    CHECK_EQ_INT(v->nb_combos, 5);
    CHECK_EQ_INT(v->nb_configs, 5);
    CHECK_EQ_INT(v->configs[0].attrs[0].nb_choices, 3);
    CHECK_EQ_INT(v->configs[0].attrs[0].choices[0].i, -1);
    CHECK(strcmp(v->configs[0].attrs[1].choices[3].text, "max") == 0);
    CHECK(!v->configs[0].attrs[1].choices[3].is_number);
    CHECK_NEAR(v->bf16_rtol, 5e-2, 0);
    o = prt__pcfg_option_get(v, "reduction");
    CHECK(o && o->kind == PRT_PCFG_OPTION_ENUM && o->nb_values == 4);
    prt__pcfg_destroy(cfg);

    /* input_dims naming things that are not inputs */
    cfg = load("CropAndResizeDynamic_PluginConfig.yaml");
    CHECK(has_warning(cfg, "\"input1\" is not one of the inputs"));
    CHECK_EQ_INT(cfg->versions[1].configs[1].attrs[0].values[0].i, 14);
    prt__pcfg_destroy(cfg);

    /* attribute_constraints */
    cfg = load("CustomQKVToContextPluginDynamic_PluginConfig.yaml");
    CHECK_EQ_INT(cfg->versions[0].nb_attribute_constraints, 1);
    CHECK_EQ_INT(cfg->nb_versions, 2);
    prt__pcfg_destroy(cfg);
}

TEST(unknown_keys_are_warnings)
{
    prt_pcfg *cfg = load_text("name: X\n"
                              "colour: blue\n"
                              "versions:\n"
                              "  \"1\":\n"
                              "    inputs: [a]\n"
                              "    flavour: 3\n"
                              "    inputs: [b]\n"
                              "    configs:\n"
                              "      c1:\n"
                              "        input_types: {a: float32}\n"
                              "        mood: 1\n");
    CHECK_EQ_INT(cfg->nb_warnings, 4);
    CHECK(has_warning(cfg, "test.yaml:2:1: unknown top-level key \"colour\""));
    CHECK(has_warning(cfg, "test.yaml:6:5: versions.1.flavour: unknown key"));
    CHECK(has_warning(cfg, "versions.1: key \"inputs\" appears twice"));
    CHECK(has_warning(cfg, "versions.1.configs.c1.mood"));
    CHECK(strcmp(cfg->versions[0].inputs[0], "a") == 0);
    CHECK(isnan(cfg->versions[0].abs_tol));
    prt__pcfg_destroy(cfg);
}

TEST(malformed_files_are_clear_errors)
{
    expect_fail("name: X\nversions: {\"1\": [a, b}\n", PRT_STATUS_BAD_FORMAT, "bad.yaml:2:");
    expect_fail("name: X\nversions: {\"1\": [a, b}\n", PRT_STATUS_BAD_FORMAT, "malformed YAML");
    expect_fail("", PRT_STATUS_BAD_FORMAT, "no document");
    expect_fail("- a\n- b\n", PRT_STATUS_BAD_FORMAT, "expected a map, found a list");
    expect_fail("versions:\n  \"1\": {}\n", PRT_STATUS_BAD_FORMAT, "missing key \"name\"");
    expect_fail("name: X\n", PRT_STATUS_BAD_FORMAT, "missing key \"versions\"");
    expect_fail("name: X\nversions: {}\n", PRT_STATUS_BAD_FORMAT, "at least one version");
    expect_fail("name: X\nversions:\n  \"1\":\n    abs_tol: tiny\n", PRT_STATUS_BAD_FORMAT,
                "bad.yaml:4:14: versions.1.abs_tol: expected a number, found \"tiny\"");
    expect_fail("name: X\nversions:\n  \"1\":\n    inputs: {a: 1}\n", PRT_STATUS_BAD_FORMAT,
                "versions.1.inputs: expected a list of names, found a map");
    expect_fail("name: X\nversions:\n  \"1\":\n    input_dims: {a: four}\n", PRT_STATUS_BAD_FORMAT,
                "versions.1.input_dims.a: expected an integer, found \"four\"");
    expect_fail("name: [X]\nversions: {\"1\": {}}\n", PRT_STATUS_BAD_FORMAT, "name: expected a scalar");
    expect_fail("name: X\nversions:\n  \"1\":\n    configs:\n      c: {attribute_options: 3}\n",
                PRT_STATUS_BAD_FORMAT, "expected a map of attribute name");
    expect_fail("name: X\nversions:\n  \"1\":\n    input_dim_range: {a: [1, 2, 3]}\n", PRT_STATUS_BAD_FORMAT,
                "expected {min, max}");
    expect_fail("name: \xc3\x28\n", PRT_STATUS_BAD_FORMAT, "malformed YAML");
}

TEST(bad_bounds_are_warnings)
{
    prt_pcfg *cfg = load_text("name: X\nversions:\n  \"1\":\n    input_dim_range:\n"
                              "      a: {min: \"=1, lots\", max: \"=pinf, =ninf\"}\n");
    const prt_pcfg_range *r = &cfg->versions[0].input_dim_ranges[0];
    CHECK_EQ_INT(r->nb_min, 0);
    CHECK_EQ_INT(r->nb_max, 2);
    CHECK(strcmp(r->min_text, "=1, lots") == 0);
    CHECK(has_warning(cfg, "the range is not checked"));
    prt__pcfg_destroy(cfg);
}

TEST(bounds_parser)
{
    prt_pcfg_bound b[4];
    CHECK_EQ_INT(prt__pcfg_parse_bounds("=1, 0.5 ,=pinf, ninf", b, 4), 4);
    CHECK(b[0].inclusive && b[0].value == 1);
    CHECK(!b[1].inclusive && b[1].value == 0.5);
    CHECK(b[2].inclusive && isinf(b[2].value) && b[2].value > 0);
    CHECK(!b[3].inclusive && isinf(b[3].value) && b[3].value < 0);
    CHECK_EQ_INT(prt__pcfg_parse_bounds("=1, =2", b, 1), -1);
    CHECK_EQ_INT(prt__pcfg_parse_bounds("", b, 4), -1);
    CHECK_EQ_INT(prt__pcfg_parse_bounds("1,,2", b, 4), -1);
    CHECK(prt__pcfg_bounds_allow(&b[0], &b[2], 1));
    CHECK(!prt__pcfg_bounds_allow(&b[1], &b[2], 0.5));
    CHECK(prt__pcfg_bounds_allow(&b[1], &b[2], 0.50001));
    CHECK(!prt__pcfg_bounds_allow(&b[0], &b[2], NAN));
}

TEST(dtype_names)
{
    prt_dtype dt;
    CHECK_OK(prt__pcfg_dtype("float16", &dt));
    CHECK_EQ_INT(dt, PRT_DTYPE_F16);
    CHECK_OK(prt__pcfg_dtype("bfloat16", &dt));
    CHECK_EQ_INT(dt, PRT_DTYPE_BF16);
    CHECK_EQ_INT(prt__pcfg_dtype("char", &dt), PRT_STATUS_NOT_FOUND);
}

TEST(golden_path_is_resolved_next_to_the_yaml)
{
    prt_pcfg *cfg = load("toplevel/DisentangledAttention_PluginConfig.yaml");
    char buf[2048];
    /* "plugin/disentangledAttentionPlugin/X.json": found by its base name */
    CHECK(prt__pcfg_resolve_path(cfg, cfg->versions[0].golden_io_path, buf, sizeof buf));
    CHECK_STR_CONTAINS(buf, "toplevel/DisentangledAttention_PluginGoldenIO.json");
    CHECK(!prt__pcfg_resolve_path(cfg, "nowhere/none.json", buf, sizeof buf));
    prt__pcfg_destroy(cfg);
}

TEST(allocation_failures_are_atomic)
{
    char path[1024];
    long n;
    snprintf(path, sizeof path, "%s/tensorrt/configs/CustomEmbLayerNormPluginDynamic_PluginConfig.yaml",
             prt_test_data_dir());
    for (n = 0;; n++) {
        prt_pcfg *cfg = (prt_pcfg *)(uintptr_t)0x1234;
        prt_status s;
        prt__alloc_fail_after(n);
        s = prt__pcfg_load_file(path, &cfg);
        prt__alloc_fail_after(-1);
        if (s == PRT_OK) {
            prt__pcfg_destroy(cfg);
            break;
        }
        CHECK_EQ_INT(s, PRT_STATUS_OUT_OF_MEMORY);
        CHECK(cfg == (prt_pcfg *)(uintptr_t)0x1234);
    }
    CHECK(n >= 3);
}

TEST(check_inputs_against_a_version)
{
    prt_pcfg *cfg = load("CustomModulatedDeformConv2d_PluginConfig.yaml");
    const prt_pcfg_version *v = prt__pcfg_find_version(cfg, "1");
    int64_t x[] = {2, 8, 9, 10}, off[] = {2, 18, 7, 8}, mask[] = {2, 9, 7, 8}, w[] = {16, 8, 3, 3}, b[] = {16};
    prt_dimexpr_sym s[] = {{"x", 4, x}, {"offset", 4, off}, {"mask", 4, mask}, {"weight", 4, w}, {"bias", 1, b}};
    char err[256];
    int skipped = -1;
    CHECK_OK(prt__pcfg_check_inputs(v, s, 5, &skipped, err, sizeof err));
    CHECK_EQ_INT(skipped, 0);
    mask[0] = 3;
    CHECK_EQ_INT(prt__pcfg_check_inputs(v, s, 5, NULL, err, sizeof err), PRT_STATUS_SHAPE_MISMATCH);
    CHECK_STR_CONTAINS(err, "constraint \"mask_0 == x_0\" is false");
    mask[0] = 2;
    off[1] = 1; /* min "=1, =2, =1, =1" */
    CHECK_EQ_INT(prt__pcfg_check_inputs(v, s, 5, NULL, err, sizeof err), PRT_STATUS_SHAPE_MISMATCH);
    CHECK_STR_CONTAINS(err, "input \"offset\" dim 1 = 1 breaks min \"=1, =2, =1, =1\"");
    off[1] = 18;
    s[4].nb = 2; /* bias has rank 1 */
    CHECK_EQ_INT(prt__pcfg_check_inputs(v, s, 5, NULL, err, sizeof err), PRT_STATUS_SHAPE_MISMATCH);
    CHECK_STR_CONTAINS(err, "input \"bias\" needs 1 dims (input_dims), found 2");
    /* without bias the constraint on it cannot be checked */
    CHECK_OK(prt__pcfg_check_inputs(v, s, 4, &skipped, err, sizeof err));
    CHECK_EQ_INT(skipped, 1);
    prt__pcfg_destroy(cfg);

    cfg = load("MultilevelProposeROI_PluginConfig.yaml"); /* no inputs at all: nothing to check */
    CHECK_OK(prt__pcfg_check_inputs(&cfg->versions[0], NULL, 0, NULL, err, sizeof err));
    prt__pcfg_destroy(cfg);

    cfg = load("CustomFCPluginDynamic_PluginConfig.yaml"); /* max "=pinf, =pinf, =pinf, =1, =1" */
    {
        int64_t in[] = {4, 3, 8, 2, 1}, W[] = {8, 16};
        prt_dimexpr_sym s2[] = {{"input", 5, in}, {"W", 2, W}};
        CHECK_EQ_INT(prt__pcfg_check_inputs(&cfg->versions[0], s2, 2, NULL, err, sizeof err),
                     PRT_STATUS_SHAPE_MISMATCH);
        CHECK_STR_CONTAINS(err, "dim 3 = 2 breaks max");
        in[3] = 1;
        CHECK_OK(prt__pcfg_check_inputs(&cfg->versions[0], s2, 2, NULL, err, sizeof err));
        W[0] = 9; /* "input_2 == W_0" */
        CHECK_EQ_INT(prt__pcfg_check_inputs(&cfg->versions[0], s2, 2, NULL, err, sizeof err),
                     PRT_STATUS_SHAPE_MISMATCH);
    }
    prt__pcfg_destroy(cfg);
}
