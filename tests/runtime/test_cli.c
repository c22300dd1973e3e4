/* tests/runtime/test_cli.c - `plugrt build / inspect / run` end to end on the
 * bundled Swish network, and their errors (exit status, never a crash). */
#include <sys/stat.h>
#include <sys/wait.h>

#include "prt_test.h"

static int sh(const char *fmt, const char *a, const char *b)
{
    char cmd[4096];
    int st;
    snprintf(cmd, sizeof cmd, fmt, a, b);
    st = system(cmd);
    if (st == -1 || !WIFEXITED(st)) return -1;
    return WEXITSTATUS(st);
}

static int file_contains(const char *path, const char *needle);

static const char *cli(void)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/../tools/plugrt/plugrt", prt_test_bin_dir());
    return path;
}

TEST(build_inspect_run_swish_network)
{
    char net[1024], dir[64] = "/tmp/prt_cli_XXXXXX", plan[1200], out[1200];
    FILE *f;
    char line[4096];
    int saw_layers = 0;
    snprintf(net, sizeof net, "%s/networks/swish_small.json", prt_test_data_dir());
    CHECK(mkdtemp(dir) != NULL);
    snprintf(plan, sizeof plan, "%s/m.plan", dir);
    snprintf(out, sizeof out, "%s/inspect.txt", dir);
    {
        char args[4096];
        snprintf(args, sizeof args, "%s -o %s --profile x:1x3x4x5,2x3x4x5,4x3x4x5 >/dev/null", net, plan);
        CHECK_EQ_INT(sh("%s build %s", cli(), args), 0);
        snprintf(args, sizeof args, "%s > %s", plan, out);
        CHECK_EQ_INT(sh("%s inspect %s", cli(), args), 0);
    }
    f = fopen(out, "r");
    CHECK(f != NULL);
    while (f && fgets(line, sizeof line, f))
        if (strstr(line, "Swish v1 (blob style") || strstr(line, "Swish v2 (field style")) saw_layers++;
    if (f) fclose(f);
    CHECK_EQ_INT(saw_layers, 2);
    CHECK_EQ_INT(sh("%s inspect %s --json >/dev/null", cli(), plan), 0);
    CHECK_EQ_INT(sh("%s run %s --iterations 3 --warmup 1 --threads 1 >/dev/null", cli(), plan), 0);
    CHECK_EQ_INT(sh("%s run %s --json --iterations 2 --shape x=3x3x4x5 >/dev/null", cli(), plan), 0);
    /* per-layer times: both layers, by plugin and slowest first, text and JSON */
    {
        char args2[2048];
        snprintf(args2, sizeof args2, "%s --iterations 2 --warmup 0 --layer-times > %s", plan, out);
        CHECK_EQ_INT(sh("%s run %s", cli(), args2), 0);
        CHECK(file_contains(out, "layer times over 2 profiled runs"));
        CHECK(file_contains(out, "by plugin:"));
        CHECK(file_contains(out, "slowest layers:"));
        CHECK(file_contains(out, "Swish"));
        snprintf(args2, sizeof args2, "%s --iterations 2 --warmup 0 --layer-times --json > %s", plan, out);
        CHECK_EQ_INT(sh("%s run %s", cli(), args2), 0);
        CHECK(file_contains(out, "\"layer_times_ms\": {\"runs\": 2"));
        CHECK_EQ_INT(sh("python3 -c 'import json,sys; json.load(open(sys.argv[1]))' %s%s", out, ""), 0);
    }
    /* Errors: exit 1 (bad input) or 2 (usage), never a signal. */
    CHECK_EQ_INT(sh("%s run %s --shape x=9x3x4x5 2>/dev/null >/dev/null", cli(), plan), 1);
    CHECK_EQ_INT(sh("%s run %s --input x=nothere.npy 2>/dev/null >/dev/null", cli(), plan), 1);
    CHECK_EQ_INT(sh("%s run %s --iterations 0 2>/dev/null", cli(), plan), 2);
    /* A thread count past the bound fails at once with a clear error. */
    {
        char args2[2048];
        snprintf(args2, sizeof args2, "%s --threads 100000 --iterations 1 > %s 2>&1", plan, out);
        CHECK_EQ_INT(sh("timeout 60 %s run %s", cli(), args2), 1);
        CHECK(file_contains(out, "to 1024, got 100000"));
    }
    CHECK_EQ_INT(sh("%s inspect %s 2>/dev/null", cli(), net), 1);
    CHECK_EQ_INT(sh("%s build %s 2>/dev/null", cli(), net), 2);
    CHECK_EQ_INT(sh("%s build %s -o /dev/null/x 2>/dev/null", cli(), net), 1);
    CHECK_EQ_INT(sh("%s run %s/nothere.plan 2>/dev/null", cli(), dir), 1);
    {
        char args[2048];
        snprintf(args, sizeof args, "head -c 300 %s > %s/t.plan", plan, dir);
        CHECK_EQ_INT(sh("%s%s", "", args), 0);
        snprintf(args, sizeof args, "%s/t.plan 2>/dev/null", dir);
        CHECK_EQ_INT(sh("%s run %s", cli(), args), 1);
        CHECK_EQ_INT(sh("%s inspect %s", cli(), args), 1);
    }
    sh("rm -rf %s%s", dir, "");
}

/* A plan built with the bundled Swish, run with --load of a library that
 * provides Swish too: a warning naming both owners, or exit 1 with
 * --strict-owner. */
TEST(run_load_warns_or_refuses_another_owner)
{
    char net[1024], dir[64] = "/tmp/prt_cli_XXXXXX", plan[1200], args[4096], log[1200];
    snprintf(net, sizeof net, "%s/networks/swish_small.json", prt_test_data_dir());
    CHECK(mkdtemp(dir) != NULL);
    snprintf(plan, sizeof plan, "%s/m.plan", dir);
    snprintf(log, sizeof log, "%s/err.txt", dir);
    snprintf(args, sizeof args, "%s -o %s --profile x:1x3x4x5,2x3x4x5,4x3x4x5 >/dev/null", net, plan);
    CHECK_EQ_INT(sh("%s build %s", cli(), args), 0);
    snprintf(args, sizeof args, "%s --load %s --iterations 1 --warmup 0 >/dev/null 2>%s", plan, PRT_SWISH_LIB_PATH,
             log);
    CHECK_EQ_INT(sh("%s run %s", cli(), args), 0);
    CHECK(file_contains(log, "from \"static\"; loading the one from \"prt_swish_lib\""));
    snprintf(args, sizeof args, "%s --load %s --strict-owner >/dev/null 2>%s", plan, PRT_SWISH_LIB_PATH, log);
    CHECK_EQ_INT(sh("%s run %s", cli(), args), 1);
    CHECK(file_contains(log, "but here \"prt_swish_lib\" provides it"));
    sh("rm -rf %s%s", dir, "");
}

/* `plugrt demo` with no arguments (CPU; CUDA where a GPU is found) and with
 * a plan path given: exit 0 and every section printed; the plan it wrote
 * loads with `plugrt inspect` and names the demo's plugins. */
TEST(demo_runs_and_prints_every_section)
{
    char dir[64] = "/tmp/prt_demo_XXXXXX", out[256], plan[256], args[1024], *txt = NULL;
    static const char *const want[] = {
        "network ",        "detector_tail.json: 1 inputs, 6 layers, 4 outputs",
        "build: ",         "plan: ",
        "load: ",          "in a fresh registry",
        "CPU:",            "input features f32 [1, 8, 6, 6]",
        "num_detections",  "detection_boxes    f32  [1, 10, 4]",
        "detection_scores", "detection_classes",
        "detections (image 0): ", "    #0  class ",
        "time per run: median ", "CUDA"};
    FILE *f;
    long n;
    size_t k;
    CHECK(mkdtemp(dir) != NULL);
    snprintf(out, sizeof out, "%s/demo.txt", dir);
    snprintf(plan, sizeof plan, "%s/demo.plan", dir);
    /* From a folder that is not the source tree: the demo finds its JSON. */
    snprintf(args, sizeof args, "--iterations 3 > %s 2>&1", out);
    CHECK_EQ_INT(sh("cd / && %s demo %s", cli(), args), 0);
    f = fopen(out, "rb");
    CHECK(f != NULL);
    if (f) {
        fseek(f, 0, SEEK_END);
        n = ftell(f);
        fseek(f, 0, SEEK_SET);
        txt = calloc(1, (size_t)n + 1);
        if (txt && fread(txt, 1, (size_t)n, f) != (size_t)n) txt[0] = 0;
        fclose(f);
    }
    for (k = 0; k < sizeof want / sizeof want[0]; k++) CHECK_STR_CONTAINS(txt, want[k]);
    /* Either a CUDA section with the comparison, or the sentence saying
     * there is no GPU. */
    CHECK(txt && (strstr(txt, "CUDA: no GPU found") || strstr(txt, "CUDA vs CPU: largest difference")));
    if (txt && strstr(txt, "CUDA vs CPU")) CHECK_STR_CONTAINS(txt, "integer outputs identical");
    free(txt);
    /* With a plan path: the file stays and is a valid plan. */
    snprintf(args, sizeof args, "--plan %s --iterations 1 >/dev/null", plan);
    CHECK_EQ_INT(sh("%s demo %s", cli(), args), 0);
    snprintf(args, sizeof args, "%s > %s", plan, out);
    CHECK_EQ_INT(sh("%s inspect %s", cli(), args), 0);
    f = fopen(out, "rb");
    CHECK(f != NULL);
    if (f) {
        char line[4096];
        int saw = 0;
        while (fgets(line, sizeof line, f))
            if (strstr(line, "ModulatedDeformConv2d v2") || strstr(line, "EfficientNMS_TRT v1") ||
                strstr(line, "Swish v1") || strstr(line, "Swish v2"))
                saw++;
        fclose(f);
        CHECK_EQ_INT(saw, 6);
    }
    /* Usage errors exit 2; a missing network exits 1. */
    CHECK_EQ_INT(sh("%s demo --bogus%s 2>/dev/null", cli(), ""), 2);
    CHECK_EQ_INT(sh("%s demo --iterations 0%s 2>/dev/null", cli(), ""), 2);
    CHECK_EQ_INT(sh("%s demo --net %s/nothere.json 2>/dev/null >/dev/null", cli(), dir), 1);
    CHECK_EQ_INT(sh("%s demo --net %s 2>/dev/null >/dev/null", cli(), dir), 1);
    CHECK_EQ_INT(sh("%s run %s 2>/dev/null >/dev/null", cli(), dir), 1);
    sh("rm -rf %s%s", dir, "");
}

static int file_contains(const char *path, const char *needle)
{
    char buf[8192];
    size_t n;
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return strstr(buf, needle) != NULL;
}

/* A folder given where a file is expected: exit 1 with a message that says
 * a regular file was expected (not an attempt to read LONG_MAX bytes). */
TEST(build_and_inspect_refuse_a_directory)
{
    char dir[64] = "/tmp/prt_clidir_XXXXXX", out[256], args[1024];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(out, sizeof out, "%s/err.txt", dir);
    snprintf(args, sizeof args, "/tmp -o %s/m.plan > %s 2>&1", dir, out);
    CHECK_EQ_INT(sh("%s build %s", cli(), args), 1);
    CHECK(file_contains(out, "\"/tmp\": expected a regular file, found a directory"));
    snprintf(args, sizeof args, "/tmp > %s 2>&1", out);
    CHECK_EQ_INT(sh("%s inspect %s", cli(), args), 1);
    CHECK(file_contains(out, "\"/tmp\": expected a regular file, found a directory"));
    sh("rm -rf %s%s", dir, "");
}

/* A FIFO given where a file is expected: exit 1 at once (opening it for
 * reading would wait for a writer forever; `timeout` turns a hang into 124). */
TEST(build_inspect_and_test_plugin_refuse_a_fifo_without_hanging)
{
    char dir[64] = "/tmp/prt_clififo_XXXXXX", fifo[256], out[256], args[1024];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(fifo, sizeof fifo, "%s/pipe", dir);
    snprintf(out, sizeof out, "%s/err.txt", dir);
    CHECK(mkfifo(fifo, 0600) == 0);
    snprintf(args, sizeof args, "%s > %s 2>&1", fifo, out);
    CHECK_EQ_INT(sh("timeout 20 %s inspect %s", cli(), args), 1);
    CHECK(file_contains(out, "expected a regular file, found a FIFO"));
    snprintf(args, sizeof args, "%s -o %s/m.plan > %s 2>&1", fifo, dir, out);
    CHECK_EQ_INT(sh("timeout 20 %s build %s", cli(), args), 1);
    CHECK(file_contains(out, "expected a regular file, found a FIFO"));
    snprintf(args, sizeof args, "%s > %s 2>&1", fifo, out);
    CHECK_EQ_INT(sh("timeout 20 %s test-plugin %s", cli(), args), 1);
    CHECK(file_contains(out, "expected a regular file, found a FIFO"));
    sh("rm -rf %s%s", dir, "");
}

/* Tensor and layer names with escape, bell and newline characters reach
 * the terminal escaped in `plugrt inspect`. */
TEST(inspect_escapes_names)
{
    char dir[64] = "/tmp/prt_cliesc_XXXXXX", net[256], plan[256], out[256], args[2048];
    FILE *f;
    CHECK(mkdtemp(dir) != NULL);
    snprintf(net, sizeof net, "%s/n.json", dir);
    snprintf(plan, sizeof plan, "%s/m.plan", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    f = fopen(net, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs("{\"inputs\": [{\"name\": \"x\\u001b[2J\", \"dtype\": \"f32\", \"dims\": [2, 3]}],\n"
          " \"layers\": [{\"name\": \"act\\u0007\\nforged 9 line\", \"plugin\": \"Swish\", \"version\": \"1\",\n"
          "   \"fields\": {\"beta\": 1.0}, \"inputs\": [\"x\\u001b[2J\"], \"outputs\": [\"y\"]}],\n"
          " \"outputs\": [\"y\"]}\n", f);
    fclose(f);
    snprintf(args, sizeof args, "%s -o %s > %s 2>&1", net, plan, out);
    CHECK_EQ_INT(sh("%s build %s", cli(), args), 0);
    snprintf(args, sizeof args, "%s > %s", plan, out);
    CHECK_EQ_INT(sh("%s inspect %s", cli(), args), 0);
    CHECK(file_contains(out, "x\\e[2J"));
    CHECK(file_contains(out, "act\\x07\\nforged 9 line"));
    CHECK(!file_contains(out, "\x1b") && !file_contains(out, "\a"));
    sh("rm -rf %s%s", dir, "");
}
