/*
 * test_runner.c - the conformance runner against test-only plugins that are
 * right or deliberately wrong (conftoy.c, loaded as a plugin library):
 * golden data made with `golden make` from the right plugin, then each
 * wrong version must fail with a message that points at what is wrong; the
 * CLI's exit status (0 pass, 1 fail, 2 usage), table and JSON output.
 */
#include <cjson/cJSON.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness/harness.h"
#include "plugrt/harness.h"
#include "plugrt/plugrt.h"
#include "prt_test.h"

/* Tolerance: exactly one float32 ulp in [1, 2). */
#define ONE_ULP_AT_1 "1.1920928955078125e-07"

static char tmpdir[64];
static char yaml_path[256], golden_path[256];

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static void append_version(char *buf, size_t cap, const char *v)
{
    size_t n = strlen(buf);
    snprintf(buf + n, cap - n,
             "  \"%s\":\n"
             "    inputs: [x, b]\n"
             "    outputs: [y]\n"
             "    input_dims:\n      x: 2\n      b: 1\n"
             "    input_dim_constraints:\n      - \"b_0 == x_1\"\n"
             "    input_dim_range:\n"
             "      x:\n        min: \"=1, =1\"\n        max: \"=pinf, =pinf\"\n"
             "      b:\n        min: \"=1\"\n        max: \"=pinf\"\n"
             "    supported_input_types:\n      combination1:\n        x: float32\n        b: float32\n"
             "    output_dims:\n      y: \"x_0, x_1\"\n"
             "    attributes: [alpha, beta]\n"
             "    attribute_types:\n      alpha: float32\n      beta: float32\n"
             "    attribute_length:\n      alpha: 1\n      beta: 1\n"
             "    attribute_options:\n"
             "      alpha:\n        min: \"0\"\n        max: \"=100\"\n"
             "      beta:\n        min: \"ninf\"\n        max: \"pinf\"\n"
             "    attributes_required: [alpha]\n"
             "    golden_io_path: \"ConfAffine_PluginGoldenIO.json\"\n"
             "    abs_tol: " ONE_ULP_AT_1 "\n"
             "    rel_tol: 0\n"
             "    configs:\n"
             "      plain:\n"
             "        input_types:\n          x: float32\n          b: float32\n"
             "        attribute_options:\n"
             "          alpha:\n            value: 1.0\n            shape: \"1\"\n"
             "          beta:\n            value: 0.0\n            shape: \"1\"\n"
             "        output_types:\n          y: float32\n"
             "      shifted:\n"
             "        input_types:\n          x: float32\n          b: float32\n"
             "        attribute_options:\n"
             "          alpha:\n            value: 1.0\n            shape: \"1\"\n"
             "          beta:\n            value: 0.25\n            shape: \"1\"\n"
             "        output_types:\n          y: float32\n",
             v);
}

static prt_registry *toy_registry(void)
{
    prt_registry *r = NULL;
    prt_library *lib = NULL;
    CHECK_OK(prt_registry_create(prt_registry_global(), &r));
    if (prt_registry_load_library(r, PRT_CONFTOY_PATH, &lib) != PRT_OK)
        CHECK_MSG(0, "loading %s: %s", PRT_CONFTOY_PATH, prt_registry_last_error(r));
    return r;
}

/* The folder goes when the test case's process exits. */
static void remove_tmpdir(void)
{
    char cmd[128];
    if (strncmp(tmpdir, "/tmp/prt_conf_", 14) != 0) return;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
}

/* A folder with the YAML (versions 1..7), x.npy in [1, 2), b.npy = 0, and
 * golden data made by `golden make` from version 1 (the right plugin). */
static void setup(void)
{
    char text[32768] = "name: ConfAffine\nversions:\n", px[300], pb[300], err[1024];
    prt_npy_array x, b;
    prt_dims dx = {2, 0, {2, 4}}, db = {1, 0, {4}};
    prt_harness_golden_input ins[2];
    prt_harness_golden_opts o;
    prt_registry *r;
    int v, i;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/prt_conf_XXXXXX");
    CHECK(mkdtemp(tmpdir) != NULL);
    atexit(remove_tmpdir);
    for (v = 1; v <= 7; v++) {
        char vs[4];
        snprintf(vs, sizeof vs, "%d", v);
        append_version(text, sizeof text, vs);
    }
    snprintf(yaml_path, sizeof yaml_path, "%s/ConfAffine_PluginConfig.yaml", tmpdir);
    snprintf(golden_path, sizeof golden_path, "%s/ConfAffine_PluginGoldenIO.json", tmpdir);
    write_text(yaml_path, text);

    memset(&x, 0, sizeof x);
    memset(&b, 0, sizeof b);
    CHECK_OK(prt_npy_array_alloc(&x, PRT_NPY_F4, &dx));
    CHECK_OK(prt_npy_array_alloc(&b, PRT_NPY_F4, &db));
    for (i = 0; i < 8; i++) ((float *)x.data)[i] = 1.0f + 0.1f * (float)i; /* all in [1, 2) */
    snprintf(px, sizeof px, "%s/x.npy", tmpdir);
    CHECK_OK(prt_npy_write_file(&x, px));
    snprintf(pb, sizeof pb, "%s/b.npy", tmpdir);
    CHECK_OK(prt_npy_write_file(&b, pb));
    prt_npy_array_clear(&x);
    prt_npy_array_clear(&b);

    memset(ins, 0, sizeof ins);
    ins[0].input = "x";
    ins[0].npy = px;
    ins[1].input = "b";
    ins[1].npy = pb;
    prt_harness_golden_opts_init(&o);
    o.seed = 0;
    r = toy_registry();
    o.yaml_path = yaml_path;
    o.out_path = golden_path;
    o.version = "1";
    o.inputs = ins;
    o.nb_inputs = 2;
    o.cases = 1;
    o.use_plugin = 1;
    o.registry = r;
    if (prt_harness_golden_make(&o, err, sizeof err) != PRT_OK) CHECK_MSG(0, "golden make: %s", err);
    prt_registry_destroy(r);
}

/* Run `version` of `yaml` through registry r; the report goes to *report. */
static prt_harness_summary run_opts(const char *yaml, prt_registry *r, const char *version, const char *ns,
                                   const char *config, int json, int verbose, char **report)
{
    prt_harness_test_opts o;
    prt_harness_summary sum;
    const char *configs[1];
    char err[1024];
    size_t len = 0;
    FILE *f;
    prt_harness_test_opts_init(&o);
    o.cpu = o.cuda = 0;
    memset(&sum, 0, sizeof sum);
    f = open_memstream(report, &len);
    o.yaml_path = yaml;
    o.version = version;
    o.plugin_namespace = ns;
    if (config) {
        configs[0] = config;
        o.configs = configs;
        o.nb_configs = 1;
    }
    o.cpu = 1;
    o.registry = r;
    o.nb_threads = 1;
    o.verbose = verbose;
    o.json = json;
    o.out = f;
    if (prt_harness_test_plugin(&o, &sum, err, sizeof err) != PRT_OK) CHECK_MSG(0, "runner: %s", err);
    fclose(f);
    return sum;
}

static prt_harness_summary run_with(const char *yaml, prt_registry *r, const char *ns, const char *config, char **report)
{
    return run_opts(yaml, r, "1", ns, config, 0, 1, report);
}

/* Run the runner on the toy YAML; the report goes to `report`. */
static prt_harness_summary run_toy(const char *version, const char *config, int json, char **report)
{
    prt_registry *r = toy_registry();
    prt_harness_summary sum;
    *report = NULL;
    sum = run_opts(yaml_path, r, version, NULL, config, json, 0, report);
    prt_registry_destroy(r);
    return sum;
}

TEST(golden_make_from_plugin)
{
    prt_golden *g = NULL;
    const prt_golden_config *c;
    const prt_golden_tensor *y, *x;
    const prt_golden_attr *a;
    int64_t i;
    setup();
    CHECK_OK(prt__golden_load_file(golden_path, &g));
    if (!g) return;
    CHECK_EQ_INT(g->nb_configs, 2);
    c = prt__golden_find_config(g, "shifted");
    CHECK(c && c->nb_cases == 1);
    if (!c || c->nb_cases != 1) return;
    x = prt__golden_case_input(&c->cases[0], "x");
    y = prt__golden_case_output(&c->cases[0], "y");
    a = prt__golden_case_attr(&c->cases[0], "beta");
    CHECK(x && y && a);
    if (!x || !y || !a) return;
    CHECK_EQ_INT(y->array.type, PRT_NPY_F4);
    CHECK_EQ_INT(a->array.type, PRT_NPY_F4); /* the YAML's attribute type */
    CHECK_EQ_INT(y->array.count, 8);
    for (i = 0; i < 8; i++) /* y = 1 * x + 0.25 + 0, exact in float32 */
        CHECK_EQ_INT(prt_npy_get_f64(&y->array, i) == (double)(1.0f + 0.1f * (float)i) + 0.25, 1);
    prt__golden_destroy(g);
}

TEST(right_plugin_passes_every_check)
{
    char *rep;
    prt_harness_summary s;
    setup();
    s = run_toy("1", NULL, 0, &rep);
    CHECK_MSG(s.failed == 0, "report:\n%s", rep);
    CHECK(s.passed >= 10);
    CHECK_STR_CONTAINS(rep, "golden     shifted");
    CHECK_STR_CONTAINS(rep, "constraint");
    CHECK_STR_CONTAINS(rep, "range");
    CHECK_STR_CONTAINS(rep, "serialize");
    CHECK_STR_CONTAINS(rep, "ConfAffine: 1");
    free(rep);
}

TEST(plugin_ignoring_an_attribute_fails_naming_it)
{
    char *rep;
    prt_harness_summary s;
    setup();
    s = run_toy("2", NULL, 0, &rep);
    CHECK(s.failed >= 1);
    /* the failure points at the output and element, the note at the attribute */
    CHECK_STR_CONTAINS(rep, "output \"y\" element 0 [0, 0]: got 1, expected 1.25");
    CHECK_STR_CONTAINS(rep, "attributes: alpha=1 beta=0.25");
    CHECK_STR_CONTAINS(rep, "config \"shifted\" fails and config \"plain\" passes");
    CHECK_STR_CONTAINS(rep, "ignore or mishandle attribute \"beta\"");
    free(rep);
}

TEST(one_ulp_within_tolerance_passes_two_fail_at_the_element)
{
    char *rep;
    prt_harness_summary s;
    setup();
    s = run_toy("3", "plain", 0, &rep); /* 1 ulp off = exactly the tolerance */
    CHECK_MSG(s.failed == 0, "report:\n%s", rep);
    free(rep);
    s = run_toy("4", "plain", 0, &rep); /* 2 ulps: one ulp too much */
    CHECK_EQ_INT(s.failed, 1);
    CHECK_STR_CONTAINS(rep, "output \"y\" element 5 [1, 1]");
    CHECK_STR_CONTAINS(rep, "1 of 8 elements outside the tolerance");
    CHECK_STR_CONTAINS(rep, "FAIL");
    free(rep);
}

/* A plugin that writes one element past its output is caught by the guard
 * bytes after every output buffer, naming the output. */
TEST(plugin_writing_past_its_output_is_caught)
{
    char *rep;
    prt_harness_summary s;
    setup();
    s = run_toy("7", "plain", 0, &rep);
    CHECK(s.failed >= 1);
    CHECK_STR_CONTAINS(rep, "output 0 (32 bytes): the plugin wrote past the end of its buffer");
    free(rep);
}

TEST(attribute_outside_its_range_must_be_refused)
{
    char *rep;
    prt_harness_summary s;
    setup();
    s = run_toy("1", NULL, 0, &rep);
    CHECK_MSG(s.failed == 0, "report:\n%s", rep);
    free(rep);
    s = run_toy("5", NULL, 0, &rep); /* no bounds in the schema */
    CHECK(s.failed >= 1);
    CHECK_STR_CONTAINS(rep, "create accepted 2 of 2 values just outside the YAML range");
    CHECK_STR_CONTAINS(rep, "alpha[0] = 0 (below min \"0\")");
    CHECK_STR_CONTAINS(rep, "alpha[0] = 100.000008 (above max \"=100\")");
    free(rep);
}

TEST(broken_constraint_must_be_refused)
{
    char *rep;
    prt_harness_summary s;
    setup();
    s = run_toy("6", NULL, 0, &rep);
    CHECK(s.failed >= 1);
    CHECK_STR_CONTAINS(rep, "break \"b_0 == x_1\", but configure accepted them");
    free(rep);
}

TEST(json_report)
{
    char *rep;
    cJSON *j, *checks, *c;
    int saw_fail = 0;
    prt_harness_summary s;
    setup();
    s = run_toy("4", "plain", 1, &rep);
    CHECK_EQ_INT(s.failed, 1);
    j = cJSON_Parse(rep);
    CHECK_MSG(j != NULL, "not JSON:\n%s", rep);
    if (!j) return;
    CHECK(cJSON_IsFalse(cJSON_GetObjectItem(j, "ok")));
    CHECK_EQ_INT(cJSON_GetObjectItem(j, "failed")->valuedouble, 1);
    checks = cJSON_GetObjectItem(j, "checks");
    CHECK(cJSON_IsArray(checks));
    cJSON_ArrayForEach(c, checks)
    {
        const char *res = cJSON_GetStringValue(cJSON_GetObjectItem(c, "result"));
        if (res && strcmp(res, "FAIL") == 0) {
            saw_fail = 1;
            CHECK_STR_CONTAINS(cJSON_GetStringValue(cJSON_GetObjectItem(c, "check")), "golden");
            CHECK_STR_CONTAINS(cJSON_GetStringValue(cJSON_GetObjectItem(c, "what")), "y");
            CHECK_STR_CONTAINS(cJSON_GetStringValue(cJSON_GetObjectItem(c, "message")), "element 5 [1, 1]");
            CHECK(cJSON_GetObjectItem(c, "atol") && cJSON_GetObjectItem(c, "max_abs"));
            CHECK_NEAR(cJSON_GetObjectItem(c, "max_abs")->valuedouble, 2 * 1.1920928955078125e-07, 1e-12);
        }
    }
    CHECK(saw_fail);
    cJSON_Delete(j);
    free(rep);
}

TEST(bad_golden_file_is_a_failure_not_a_crash)
{
    char *rep;
    prt_harness_summary s;
    setup();
    write_text(golden_path, "{\"plain\": [{\"inputs\": {\"x\": {\"array\": \"not base64!\"}}}]}");
    s = run_toy("1", NULL, 0, &rep);
    CHECK(s.failed >= 1);
    CHECK_STR_CONTAINS(rep, "golden-io");
    free(rep);
}

/* ---- the command line ---------------------------------------------------------------- */

/* The whole file as a NUL-terminated string (free it), or NULL when it
 * cannot be opened (a failed check). */
static char *read_text(const char *path)
{
    FILE *f = fopen(path, "r");
    char *text;
    long n;
    CHECK(f != NULL);
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    text = calloc(1, (size_t)n + 1);
    CHECK(fread(text, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    return text;
}

static int sh(const char *args)
{
    char cmd[4096];
    int st;
    snprintf(cmd, sizeof cmd, "%s %s", PRT_CONF_CLI, args);
    st = system(cmd);
    if (st == -1 || !WIFEXITED(st)) return -1;
    return WEXITSTATUS(st);
}

TEST(cli_exit_status_table_and_json)
{
    char a[4096], out[300], line[4096];
    FILE *f;
    int saw_table = 0, saw_fail = 0;
    cJSON *j;
    char *text;
    setup();
    snprintf(out, sizeof out, "%s/out.txt", tmpdir);
    snprintf(a, sizeof a, "test-plugin %s --load %s --version 1 --device cpu --threads 1 > %s", yaml_path,
             PRT_CONFTOY_PATH, out);
    CHECK_EQ_INT(sh(a), 0);
    f = fopen(out, "r");
    CHECK(f != NULL);
    while (f && fgets(line, sizeof line, f))
        if (strstr(line, "max_abs") && strstr(line, "atol") && strstr(line, "result")) saw_table = 1;
    if (f) fclose(f);
    CHECK(saw_table);

    snprintf(a, sizeof a, "test-plugin %s --load %s --version 4 --config plain --device cpu > %s", yaml_path,
             PRT_CONFTOY_PATH, out);
    CHECK_EQ_INT(sh(a), 1);
    f = fopen(out, "r");
    while (f && fgets(line, sizeof line, f))
        if (strstr(line, "element 5 [1, 1]")) saw_fail = 1;
    if (f) fclose(f);
    CHECK(saw_fail);

    snprintf(a, sizeof a, "test-plugin %s --load %s --version 2 --json --device cpu > %s", yaml_path,
             PRT_CONFTOY_PATH, out);
    CHECK_EQ_INT(sh(a), 1);
    text = read_text(out);
    if (!text) return;
    j = cJSON_Parse(text);
    CHECK_MSG(j != NULL, "not JSON: %s", text);
    if (j) CHECK(cJSON_IsFalse(cJSON_GetObjectItem(j, "ok")));
    cJSON_Delete(j);
    free(text);

    /* --golden overrides the YAML's path */
    snprintf(a, sizeof a, "test-plugin %s --load %s --version 1 --device cpu --golden %s/nothere.json >/dev/null",
             yaml_path, PRT_CONFTOY_PATH, tmpdir);
    CHECK_EQ_INT(sh(a), 1);
    /* usage errors: 2 */
    CHECK_EQ_INT(sh("test-plugin 2>/dev/null"), 2);
    snprintf(a, sizeof a, "test-plugin %s --device tpu 2>/dev/null", yaml_path);
    CHECK_EQ_INT(sh(a), 2);
    snprintf(a, sizeof a, "test-plugin %s --bogus 2>/dev/null", yaml_path);
    CHECK_EQ_INT(sh(a), 2);
    snprintf(a, sizeof a, "test-plugin %s --config 2>/dev/null", yaml_path);
    CHECK_EQ_INT(sh(a), 2);
    CHECK_EQ_INT(sh("golden 2>/dev/null"), 2);
    CHECK_EQ_INT(sh("golden make 2>/dev/null"), 2);
    snprintf(a, sizeof a, "golden make %s -o %s/g.json --shape x=2xq 2>/dev/null", yaml_path, tmpdir);
    CHECK_EQ_INT(sh(a), 2);
    /* failures: 1 */
    snprintf(a, sizeof a, "test-plugin %s/nothere.yaml 2>/dev/null", tmpdir);
    CHECK_EQ_INT(sh(a), 1);
    snprintf(a, sizeof a, "test-plugin %s --version 9 2>/dev/null", yaml_path);
    CHECK_EQ_INT(sh(a), 1);
    snprintf(a, sizeof a, "test-plugin %s --config nosuch --load %s 2>/dev/null", yaml_path, PRT_CONFTOY_PATH);
    CHECK_EQ_INT(sh(a), 1);
    snprintf(a, sizeof a, "test-plugin %s --load %s/nothere.so 2>/dev/null", yaml_path, tmpdir);
    CHECK_EQ_INT(sh(a), 1);
    snprintf(a, sizeof a, "golden make %s -o %s/g.json --load %s --input x=%s/nothere.npy 2>/dev/null", yaml_path,
             tmpdir, PRT_CONFTOY_PATH, tmpdir);
    CHECK_EQ_INT(sh(a), 1);
    snprintf(a, sizeof a, "golden make %s -o %s/g.json --load %s --shape x=2x3 --value x=1,2 2>/dev/null", yaml_path,
             tmpdir, PRT_CONFTOY_PATH);
    CHECK_EQ_INT(sh(a), 1); /* 2 values for 6 elements */
    snprintf(a, sizeof a, "golden make %s -o %s/g.json --merge %s/nothere.json 2>/dev/null", yaml_path, tmpdir, tmpdir);
    CHECK_EQ_INT(sh(a), 1);
    snprintf(a, sizeof a, "golden make %s -o %s/g.json --value x=1,,2 2>/dev/null", yaml_path, tmpdir);
    CHECK_EQ_INT(sh(a), 2);
    snprintf(a, sizeof a, "golden make %s -o /dev/null/g.json --load %s --from-plugin --shape x=1x4 >/dev/null 2>&1",
             yaml_path, PRT_CONFTOY_PATH);
    CHECK_EQ_INT(sh(a), 1);
    /* the plugin is not registered (no --load): a failed check */
    snprintf(a, sizeof a, "test-plugin %s --device cpu >/dev/null", yaml_path);
    CHECK_EQ_INT(sh(a), 1);
    /* golden make through the CLI, then the right plugin passes it */
    snprintf(a, sizeof a,
             "golden make %s -o %s/g2.json --version 1 --load %s --from-plugin --shape x=3x4 --shape b=4 "
             "--seed 3 >/dev/null",
             yaml_path, tmpdir, PRT_CONFTOY_PATH);
    CHECK_EQ_INT(sh(a), 0);
    snprintf(a, sizeof a, "test-plugin %s --load %s --version 1 --device cpu --golden %s/g2.json >/dev/null",
             yaml_path, PRT_CONFTOY_PATH, tmpdir);
    CHECK_EQ_INT(sh(a), 0);
}

/* A golden case without attributes runs with the YAML config's values: the
 * right plugin passes, the one that ignores beta fails on "shifted". */
TEST(case_without_attributes_uses_the_yaml_values)
{
    char *text, *rep;
    cJSON *j, *cfg;
    prt_harness_summary s;
    setup();
    text = read_text(golden_path);
    if (!text) return;
    j = cJSON_Parse(text);
    free(text);
    CHECK(j != NULL);
    if (!j) return;
    cJSON_ArrayForEach(cfg, j) cJSON_DeleteItemFromObject(cJSON_GetArrayItem(cfg, 0), "attributes");
    text = cJSON_Print(j);
    cJSON_Delete(j);
    CHECK(strstr(text, "\"attributes\"") == NULL);
    write_text(golden_path, text);
    cJSON_free(text);
    s = run_toy("1", NULL, 0, &rep);
    CHECK_MSG(s.failed == 0, "report:\n%s", rep);
    free(rep);
    s = run_toy("2", NULL, 0, &rep);
    CHECK_EQ_INT(s.failed, 1);
    CHECK_STR_CONTAINS(rep, "attributes: alpha=1 beta=0.25");
    free(rep);
}

/* A supported type combination no config covers (Swish float16 here) runs
 * on synthesized inputs of the golden shapes and is compared with the
 * float32 run on the same values. */
TEST(uncovered_type_combination_runs)
{
    char src[1024], y[300], *text, *cut, *rep = NULL;
    FILE *f;
    prt_harness_test_opts o;
    prt_harness_summary s;
    char err[1024];
    size_t len = 0;
    setup();
    snprintf(src, sizeof src, "%s/plugins/swish/Swish_PluginConfig.yaml", PRT_SOURCE_DIR);
    text = read_text(src);
    if (!text) return;
    /* version 1 only, without its float16 config */
    cut = strstr(text, "      beta_neg_f16:");
    CHECK(cut != NULL);
    if (!cut) return;
    *cut = 0;
    snprintf(y, sizeof y, "%s/Swish_f32only.yaml", tmpdir);
    write_text(y, text);
    free(text);
    snprintf(src, sizeof src, "%s/plugins/swish/Swish_PluginGoldenIO.json", PRT_SOURCE_DIR);
    prt_harness_test_opts_init(&o);
    o.cpu = o.cuda = 0;
    o.yaml_path = y;
    o.golden_path = src;
    o.cpu = 1;
    o.nb_threads = 1;
    f = open_memstream(&rep, &len);
    o.out = f;
    CHECK_OK(prt_harness_test_plugin(&o, &s, err, sizeof err));
    fclose(f);
    /* The golden configs the cut YAML no longer declares are reported, not skipped. */
    CHECK_MSG(s.failed == 5, "report:\n%s", rep); /* beta_neg_f16, weights, weights_f16 and version 24's two */
    CHECK_STR_CONTAINS(rep, "the golden file has config \"beta_neg_f16\" (1 case), which no version of the YAML "
                            "declares under configs: its cases were not run");
    CHECK_STR_CONTAINS(rep, "config \"weights\"");
    CHECK_STR_CONTAINS(rep, "config \"weights_f16\"");
    CHECK_STR_CONTAINS(rep, "types      combination2       float16   cpu");
    free(rep);
}

/* The plugin may live in any namespace: the only one that has it, or the
 * one --namespace (or the YAML's "namespace") names. */
TEST(plugin_in_another_namespace)
{
    prt_registry *lib_reg, *r;
    const prt_plugin_creator *c = NULL;
    prt_plugin_creator in_a, in_b;
    prt_harness_summary s;
    char *rep = NULL;
    setup();
    lib_reg = toy_registry();
    CHECK_OK(prt_registry_find(lib_reg, "ConfAffine", "1", "", &c, NULL));
    in_a = *c;
    in_a.plugin_namespace = "toy_a";
    in_b = *c;
    in_b.plugin_namespace = "toy_b";
    CHECK_OK(prt_registry_create(NULL, &r));
    CHECK_OK(prt_registry_add(r, &in_a, "tests"));
    s = run_with(yaml_path, r, NULL, "plain", &rep);
    CHECK_MSG(s.failed == 0 && s.passed > 0, "report:\n%s", rep);
    CHECK_STR_CONTAINS(rep, "toy_a::ConfAffine v1, blob style");
    free(rep);
    /* two namespaces: say which */
    CHECK_OK(prt_registry_add(r, &in_b, "tests"));
    s = run_with(yaml_path, r, NULL, "plain", &rep);
    CHECK(s.failed == 1);
    CHECK_STR_CONTAINS(rep, "ConfAffine v1 is registered in 2 namespaces (\"toy_a\" \"toy_b\" ); say which with "
                            "--namespace");
    free(rep);
    s = run_with(yaml_path, r, "toy_b", "plain", &rep);
    CHECK_MSG(s.failed == 0 && s.passed > 0, "report:\n%s", rep);
    CHECK_STR_CONTAINS(rep, "toy_b::ConfAffine v1");
    free(rep);
    /* a namespace that lacks it */
    s = run_with(yaml_path, r, "toy_c", "plain", &rep);
    CHECK(s.failed == 1);
    CHECK_STR_CONTAINS(rep, "no plugin creator toy_c::ConfAffine v1");
    free(rep);
    prt_registry_destroy(r);
    prt_registry_destroy(lib_reg);
}

/* A config's own input_dim_constraints hold for its golden cases. */
TEST(config_dimension_constraints)
{
    char *text, *at, y[300], *rep = NULL, out[40000];
    prt_registry *r;
    prt_harness_summary s;
    static const char marker[] = "      plain:\n";
    setup();
    text = read_text(yaml_path);
    if (!text) return;
    at = strstr(text, marker);
    CHECK(at != NULL);
    if (!at) return;
    at += strlen(marker);
    snprintf(out, sizeof out, "%.*s        input_dim_constraints:\n          - \"x_1 == 5\"\n%s", (int)(at - text), text,
             at);
    free(text);
    snprintf(y, sizeof y, "%s/ConfAffine_constrained.yaml", tmpdir);
    write_text(y, out);
    r = toy_registry();
    s = run_with(y, r, NULL, "plain", &rep);
    CHECK(s.failed >= 1);
    CHECK_STR_CONTAINS(rep, "golden case 0 breaks the config's input_dim_constraints: constraint \"x_1 == 5\" is false");
    free(rep);
    /* the other config is not bound by it */
    s = run_with(y, r, NULL, "shifted", &rep);
    CHECK_MSG(s.failed == 0, "report:\n%s", rep);
    free(rep);
    prt_registry_destroy(r);
}

/* golden make takes outputs from the float64 reference a plugin library
 * registers with its creator; the right plugin then passes against them. */
TEST(golden_make_from_a_library_reference)
{
    prt_harness_golden_opts o;
    prt_harness_golden_input ins[2];
    prt_registry *r;
    char out[300], err[1024], *log = NULL, *rep = NULL;
    size_t len = 0;
    prt_harness_summary s;
    const char *configs[1] = {"plain"};
    FILE *f;
    setup();
    r = toy_registry();
    memset(ins, 0, sizeof ins);
    ins[0].input = "x";
    ins[0].has_dims = 1;
    ins[0].dims.nb = 2;
    ins[0].dims.d[0] = 3;
    ins[0].dims.d[1] = 4;
    ins[1].input = "b";
    ins[1].has_dims = 1;
    ins[1].dims.nb = 1;
    ins[1].dims.d[0] = 4;
    prt_harness_golden_opts_init(&o);
    o.seed = 0;
    snprintf(out, sizeof out, "%s/from_reference.json", tmpdir);
    o.yaml_path = yaml_path;
    o.out_path = out;
    o.version = "1";
    o.configs = configs;
    o.nb_configs = 1;
    o.inputs = ins;
    o.nb_inputs = 2;
    o.cases = 2;
    o.lo = 1;
    o.hi = 2;
    o.registry = r;
    f = open_memstream(&log, &len);
    o.log = f;
    CHECK_MSG(prt_harness_golden_make(&o, err, sizeof err) == PRT_OK, "%s", err);
    fclose(f);
    CHECK_STR_CONTAINS(log, "outputs from float64: alpha * x + beta (+ b[c]), from conftoy");
    free(log);
    {
        prt_harness_test_opts ro;
        prt_harness_test_opts_init(&ro);
        ro.cpu = ro.cuda = 0;
        ro.yaml_path = yaml_path;
        ro.golden_path = out;
        ro.version = "1";
        ro.configs = configs;
        ro.nb_configs = 1;
        ro.cpu = 1;
        ro.registry = r;
        ro.nb_threads = 1;
        f = open_memstream(&rep, &len);
        ro.out = f;
        CHECK_MSG(prt_harness_test_plugin(&ro, &s, err, sizeof err) == PRT_OK, "%s", err);
        fclose(f);
        CHECK_MSG(s.failed == 0 && s.passed > 0, "report:\n%s", rep);
        free(rep);
    }
    prt_registry_destroy(r);
}

/* The public options are read up to the caller's struct_size. */
TEST(harness_opts_read_up_to_struct_size)
{
    prt_harness_test_opts o;
    prt_harness_golden_opts g;
    prt_harness_summary sum = {7, 7, 7};
    char err[512] = "";
    prt_harness_test_opts_init(&o);
    CHECK_EQ_INT(o.struct_size, sizeof o);
    CHECK(o.cpu == 1 && o.cuda == 1 && o.out == stdout);
    o.yaml_path = "/nonexistent/x.yaml";
    o.struct_size = 8;
    CHECK_EQ_INT(prt_harness_test_plugin(&o, &sum, err, sizeof err), PRT_STATUS_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(err, "struct_size is 8");
    CHECK(sum.passed == 7 && sum.failed == 7 && sum.skipped == 7); /* untouched */
    /* An older caller whose struct ends after yaml_path: the rest defaults. */
    o.struct_size = (uint32_t)(offsetof(prt_harness_test_opts, yaml_path) + sizeof o.yaml_path);
    o.version = "no such version, never read";
    CHECK(prt_harness_test_plugin(&o, &sum, err, sizeof err) != PRT_OK);
    CHECK_STR_CONTAINS(err, "/nonexistent/x.yaml");
    CHECK(prt_harness_test_plugin(&o, &sum, NULL, 0) != PRT_OK);
    prt_harness_golden_opts_init(&g);
    CHECK(g.seed == 1 && g.lo == -1 && g.hi == 1 && g.cases == 1);
    g.yaml_path = "/nonexistent/x.yaml";
    g.struct_size = (uint32_t)offsetof(prt_harness_golden_opts, out_path);
    CHECK_EQ_INT(prt_harness_golden_make(&g, err, sizeof err), PRT_STATUS_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(err, "prt_harness_golden_opts.struct_size");
}
