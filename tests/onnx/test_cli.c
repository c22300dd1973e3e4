/* tests/onnx/test_cli.c - ONNX models through `plugrt build / run / inspect`
 * and `plugrt onnx-test` over the node-suite folders in tests/data/onnx_node
 * (every test of PASSING.txt must pass: a regression fails here). */
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "core/core.h"
#include "prt_test.h"

/* Run `plugrt ARGS` with its stdout (and stderr unless json) in `out`; the
 * exit status. */
static int cli_run(const char *args, char *out, size_t cap, int json)
{
    char cmd[4096], tmp[] = "/tmp/prt_onnx_cli_XXXXXX";
    int fd = mkstemp(tmp), st;
    FILE *f;
    size_t n = 0;
    CHECK(fd >= 0);
    close(fd);
    snprintf(cmd, sizeof cmd, "%s %s > %s %s", PRT_CLI_PATH, args, tmp, json ? "2>/dev/null" : "2>&1");
    st = system(cmd);
    f = fopen(tmp, "rb");
    if (f) {
        n = fread(out, 1, cap - 1, f);
        fclose(f);
    }
    out[n] = 0;
    remove(tmp);
    return st == -1 || !WIFEXITED(st) ? -1 : WEXITSTATUS(st);
}

static int cli(const char *args, char *out, size_t cap) { return cli_run(args, out, cap, 0); }

static char out[1 << 20];

TEST(build_and_run_an_onnx_model)
{
    char args[2048];
    snprintf(args, sizeof args, "build %s/onnx/relu_add.onnx -o /tmp/prt_onnx_cli_relu.plan --load %s",
             prt_test_data_dir(), PRT_ONNXTOY_PATH);
    CHECK_MSG(cli(args, out, sizeof out) == 0, "%s", out);
    CHECK_STR_CONTAINS(out, "built /tmp/prt_onnx_cli_relu.plan: 2 layers");
    remove("/tmp/prt_onnx_cli_relu.plan");
    snprintf(args, sizeof args, "run %s/onnx/relu_dynamic.onnx --load %s --profile x:1x4,2x4,8x4 --iterations 2",
             prt_test_data_dir(), PRT_ONNXTOY_PATH);
    CHECK_MSG(cli(args, out, sizeof out) == 0, "%s", out);
    CHECK_STR_CONTAINS(out, "y");
    /* without the profile the build says what is missing */
    snprintf(args, sizeof args, "run %s/onnx/relu_dynamic.onnx --load %s", prt_test_data_dir(), PRT_ONNXTOY_PATH);
    CHECK_EQ_INT(cli(args, out, sizeof out), 1);
    CHECK_STR_CONTAINS(out, "dynamic dims");
}

TEST(inspect_lists_what_cannot_be_imported)
{
    char args[2048];
    cJSON *j, *bad;
    snprintf(args, sizeof args, "inspect %s/onnx/unknown_op.onnx --load %s", prt_test_data_dir(), PRT_ONNXTOY_PATH);
    CHECK_MSG(cli(args, out, sizeof out) == 0, "%s", out);
    CHECK_STR_CONTAINS(out, "opsets: \"\" 14 \"acme\" 2");
    CHECK_STR_CONTAINS(out, "NoSuchOp");
    CHECK_STR_CONTAINS(out, "cannot import:");
    CHECK_STR_CONTAINS(out, "node \"mystery\" (NoSuchOp): no plugin provides op NoSuchOp");
    snprintf(args, sizeof args, "inspect --json %s/onnx/unknown_op.onnx --load %s", prt_test_data_dir(),
             PRT_ONNXTOY_PATH);
    CHECK_MSG(cli_run(args, out, sizeof out, 1) == 0, "%s", out);
    j = cJSON_Parse(out);
    CHECK_MSG(j != NULL, "not JSON: %s", out);
    bad = cJSON_GetObjectItem(j, "cannot_import");
    CHECK(cJSON_GetArraySize(bad) == 1);
    CHECK(cJSON_IsFalse(cJSON_GetObjectItem(j, "imports")));
    cJSON_Delete(j);
    snprintf(args, sizeof args, "inspect %s/onnx/relu_add.onnx --load %s", prt_test_data_dir(), PRT_ONNXTOY_PATH);
    CHECK_MSG(cli(args, out, sizeof out) == 0, "%s", out);
    CHECK_STR_CONTAINS(out, "every node imports (2 layers)");
    /* a corrupt model: an error, not a crash */
    snprintf(args, sizeof args, "inspect %s/onnx/cycle.onnx", prt_test_data_dir());
    CHECK_EQ_INT(cli(args, out, sizeof out), 1);
    CHECK_STR_CONTAINS(out, "cycle");
}

TEST(custom_op_library_via_load)
{
    char args[2048];
    snprintf(args, sizeof args, "run %s/onnx/custom_toyscale.onnx --iterations 1", prt_test_data_dir());
    CHECK_EQ_INT(cli(args, out, sizeof out), 1);
    CHECK_STR_CONTAINS(out, "ToyScale");
    snprintf(args, sizeof args, "run %s/onnx/custom_toyscale.onnx --iterations 1 --load %s", prt_test_data_dir(),
             PRT_ONNXTOY_PATH);
    CHECK_MSG(cli(args, out, sizeof out) == 0, "%s", out);
}

/* DeformConv cases beyond the node suite, with outputs from ONNX's reference
 * implementation (tests/plugins/deform_conv/gen_onnx_models.py): strides,
 * dilations, asymmetric pads, groups, B as a constant (field "input:3"), an
 * absent B before a given mask, no mask. */
TEST(deform_conv_models_match_the_onnx_reference)
{
    char args[2048];
    snprintf(args, sizeof args, "onnx-test %s/onnx_deform_conv_models", prt_test_data_dir());
    CHECK_MSG(cli(args, out, sizeof out) == 0, "%s", out);
    CHECK_STR_CONTAINS(out, "5 passed, 0 failed, 0 unsupported");
}

/* The node-suite tests of PASSING.txt all pass; none fails. */
TEST(node_suite_regressions)
{
    char args[2048], path[1024], err[512], *list = NULL, *line;
    size_t len = 0;
    cJSON *j, *passed;
    int listed = 0;
    snprintf(args, sizeof args, "onnx-test %s/onnx_node --json", prt_test_data_dir());
    CHECK_MSG(cli_run(args, out, sizeof out, 1) == 0, "%s", out);
    j = cJSON_Parse(out);
    CHECK_MSG(j != NULL, "not JSON: %s", out);
    CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItem(j, "failed")), 0);
    passed = cJSON_GetObjectItem(j, "passed");
    snprintf(path, sizeof path, "%s/onnx_node/PASSING.txt", prt_test_data_dir());
    CHECK_OK(prt__read_file(path, (void **)&list, &len, err, sizeof err));
    list = prt__realloc(list, len + 1);
    list[len] = 0;
    for (line = strtok(list, "\n"); line; line = strtok(NULL, "\n")) {
        int i, found = 0;
        if (!line[0] || line[0] == '#') continue;
        listed++;
        for (i = 0; i < cJSON_GetArraySize(passed); i++)
            if (strcmp(cJSON_GetArrayItem(passed, i)->valuestring, line) == 0) found = 1;
        CHECK_MSG(found, "%s no longer passes", line);
    }
    CHECK(listed >= 1100);
    prt__free(list);
    cJSON_Delete(j);
    /* the text form ends with the count line */
    snprintf(args, sizeof args, "onnx-test %s/onnx_node", prt_test_data_dir());
    CHECK_EQ_INT(cli(args, out, sizeof out), 0);
    CHECK_STR_CONTAINS(out, " passed, 0 failed, ");
}
