/*
 * tests/runtime/test_npy_io.c - .npy files at the engine's edges: constants
 * of a JSON network read from .npy files (relative to the JSON file's
 * folder), and `plugrt run --input / --output`, with their errors.
 *
 * The .npy files are written byte by byte here (header text and raw
 * little-endian elements), not with the library's writer, so the reader is
 * checked against the format itself.
 */
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fakeplugins.h"
#include "plugrt/engine.h"
#include "prt_test.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define NO_LEAKS() CHECK_MSG(__lsan_do_recoverable_leak_check() == 0, "memory leaked (report above)")
#else
#define NO_LEAKS() ((void)0)
#endif

/* A version 1.0 .npy image: magic, header dict padded to a multiple of 64,
 * then `nbytes` of data. */
static void write_npy(const char *path, const char *descr, int fortran, const char *shape, const void *data,
                      size_t nbytes)
{
    char dict[256];
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0};
    size_t n, hl;
    FILE *f;
    n = (size_t)snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", descr,
                         fortran ? "True" : "False", shape);
    hl = ((10 + n + 1 + 63) / 64) * 64 - 10;
    while (n < hl - 1) dict[n++] = ' ';
    dict[n++] = '\n';
    pre[8] = (unsigned char)(hl & 0xff);
    pre[9] = (unsigned char)(hl >> 8);
    f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    CHECK(fwrite(pre, 1, 10, f) == 10);
    CHECK(fwrite(dict, 1, n, f) == n);
    if (nbytes) CHECK(fwrite(data, 1, nbytes, f) == nbytes);
    fclose(f);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static void make_dir(char *dir)
{
    strcpy(dir, "/tmp/prt_npyio_XXXXXX");
    CHECK(mkdtemp(dir) != NULL);
}

static void remove_dir(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

/* x [2, 8] + b[8] (TestAddBias) -> y, with b from "b.npy" beside the JSON. */
static const char *k_bias_json =
    "{\"inputs\": [{\"name\": \"x\", \"dims\": [2, 8]}],\n"
    " \"constants\": [{\"name\": \"b\", %s\"file\": \"%s\"}],\n"
    " \"layers\": [{\"name\": \"bias\", \"plugin\": \"TestAddBias\", \"inputs\": [\"x\", \"b\"], \"outputs\": [\"y\"]}],\n"
    " \"outputs\": [\"y\"]}\n";

/* Build and run the bias network from `json_path`; y = x + b. */
static void run_bias(prt_registry *r, const char *json_path, const float *x, float *y)
{
    prt_network *net = NULL;
    prt_engine *e = NULL;
    prt_context *ctx = NULL;
    char err[1024] = "";
    CHECK_MSG(prt_network_load_json(r, json_path, &net, err, sizeof err) == PRT_OK, "%s", err);
    if (!net) return;
    CHECK_MSG(prt_engine_build(net, NULL, r, &e, err, sizeof err) == PRT_OK, "%s", err);
    CHECK_OK(prt_context_create(e, NULL, &ctx));
    CHECK_OK(prt_context_set_tensor(ctx, "x", (void *)x));
    CHECK_OK(prt_context_set_tensor(ctx, "y", y));
    CHECK_OK(prt_context_execute(ctx));
    prt_context_destroy(ctx);
    prt_engine_destroy(e);
    prt_network_destroy(net);
}

TEST(json_constant_from_npy_relative_to_the_json_folder)
{
    prt_registry *r = fake_registry(1, 0, 10);
    char dir[64], sub[128], path[256], json[1024];
    float b[8], x[16], y[16];
    int i;
    make_dir(dir);
    snprintf(sub, sizeof sub, "%s/weights", dir);
    CHECK(mkdir(sub, 0700) == 0);
    for (i = 0; i < 8; i++) b[i] = 0.25f * (float)i - 1.0f;
    for (i = 0; i < 16; i++) x[i] = (float)i * 0.5f;
    snprintf(path, sizeof path, "%s/b.npy", sub);
    write_npy(path, "<f4", 0, "(8,)", b, sizeof b);
    /* The JSON sits in dir; the file name is relative to it, and the
     * current directory is elsewhere. */
    snprintf(json, sizeof json, k_bias_json, "", "weights/b.npy");
    snprintf(path, sizeof path, "%s/net.json", dir);
    write_text(path, json);
    CHECK(chdir("/") == 0);
    memset(y, 0xff, sizeof y);
    run_bias(r, path, x, y);
    for (i = 0; i < 16; i++) CHECK_MSG(y[i] == x[i] + b[i % 8], "y[%d] = %g, want %g", i, y[i], x[i] + b[i % 8]);

    /* Through prt_network_from_json, base_dir resolves the name. */
    {
        prt_network *net = NULL;
        char err[512] = "";
        CHECK_MSG(prt_network_from_json(r, json, strlen(json), dir, &net, err, sizeof err) == PRT_OK, "%s", err);
        prt_network_destroy(net);
    }
    remove_dir(dir);
    prt_registry_destroy(r);
    NO_LEAKS();
}

TEST(json_npy_constant_shape_checked_and_float64_rounded_to_named_dtype)
{
    prt_registry *r = fake_registry(1, 0, 10);
    char dir[64], path[256], json[1024];
    /* A [2, 4] file (Fortran order) where "dims" says [8]: refused, naming
     * both shapes. Then a [8] float64 file rounded to the named f32. */
    double fo[8], b64[8];
    float x[16], y[16];
    prt_network *net = (prt_network *)0x1;
    char err[1024];
    int i;
    make_dir(dir);
    for (i = 0; i < 8; i++) fo[i] = i;
    snprintf(path, sizeof path, "%s/fo.npy", dir);
    write_npy(path, "<f8", 1, "(2, 4)", fo, sizeof fo);
    snprintf(json, sizeof json, k_bias_json, "\"dtype\": \"f32\", \"dims\": [8], ", "fo.npy");
    err[0] = 0;
    CHECK(prt_network_from_json(r, json, strlen(json), dir, &net, err, sizeof err) != PRT_OK);
    CHECK(net == (prt_network *)0x1);
    CHECK_STR_CONTAINS(err, "constant \"b\": \"dims\" is [8] but");
    CHECK_STR_CONTAINS(err, "fo.npy\" holds an array of shape [2, 4]");

    /* float64 values that need rounding to float32. */
    for (i = 0; i < 8; i++) b64[i] = 0.1 * (double)(i + 1);
    snprintf(path, sizeof path, "%s/b64.npy", dir);
    write_npy(path, "<f8", 0, "(8,)", b64, sizeof b64);
    snprintf(json, sizeof json, k_bias_json, "\"dtype\": \"f32\", ", "b64.npy");
    snprintf(path, sizeof path, "%s/net.json", dir);
    write_text(path, json);
    for (i = 0; i < 16; i++) x[i] = (float)(i % 5);
    memset(y, 0xff, sizeof y);
    run_bias(r, path, x, y);
    for (i = 0; i < 16; i++) CHECK(y[i] == x[i] + (float)b64[i % 8]);
    remove_dir(dir);
    prt_registry_destroy(r);
    NO_LEAKS();
}

TEST(json_npy_constant_errors_name_the_file_and_what_was_expected)
{
    prt_registry *r = fake_registry(1, 0, 10);
    char dir[64], path[256], json[1024], err[1024];
    float b[8] = {0};
    double d8[8] = {0};
    int32_t i4[8] = {0};
    static const char garbage[] = "this is not an npy file at all, just some text";
    size_t k;
    make_dir(dir);
    snprintf(path, sizeof path, "%s/b.npy", dir);
    write_npy(path, "<f4", 0, "(8,)", b, sizeof b);
    snprintf(path, sizeof path, "%s/d8.npy", dir);
    write_npy(path, "<f8", 0, "(8,)", d8, sizeof d8);
    snprintf(path, sizeof path, "%s/i4.npy", dir);
    write_npy(path, "<i4", 0, "(8,)", i4, sizeof i4);
    snprintf(path, sizeof path, "%s/short.npy", dir);
    write_npy(path, "<f4", 0, "(8,)", b, sizeof b - 4);
    snprintf(path, sizeof path, "%s/big.npy", dir);
    write_npy(path, ">f4", 0, "(8,)", b, sizeof b);
    snprintf(path, sizeof path, "%s/text.npy", dir);
    write_text(path, garbage);
    snprintf(path, sizeof path, "%s/sub", dir);
    CHECK(mkdir(path, 0700) == 0);
    {
        static const struct {
            const char *extra, *file, *want1, *want2;
        } cases[] = {
            {"", "nothere.npy", "constant \"b\"", "nothere.npy"},
            {"", "text.npy", "text.npy", "magic"},
            {"", "short.npy", "short.npy", "32"},
            {"", "big.npy", "big.npy", ">f4"},
            {"", "d8.npy", "d8.npy\" holds <f8 elements", "add \"dtype\": \"f32\""},
            {"\"dtype\": \"f32\", ", "i4.npy", "\"dtype\" is f32 but", "i4.npy\" holds <i4 elements"},
            {"\"dtype\": \"i32\", ", "b.npy", "\"dtype\" is i32 but", "holds <f4 elements"},
            {"\"dims\": [2, 4], ", "b.npy", "\"dims\" is [2, 4] but", "shape [8]"},
            {"\"values\": [1], ", "b.npy", "not both", "\"file\""},
            {"", "", "\"file\" must be a non-empty string", "empty"},
            {"", "sub", "sub\" is not a regular file", "expected a .npy file"},
        };
        for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            prt_network *net = (prt_network *)0x1;
            snprintf(json, sizeof json, k_bias_json, cases[k].extra, cases[k].file);
            err[0] = 0;
            CHECK_MSG(prt_network_from_json(r, json, strlen(json), dir, &net, err, sizeof err) != PRT_OK, "case %zu", k);
            CHECK(net == (prt_network *)0x1);
            CHECK_STR_CONTAINS(err, cases[k].want1);
            CHECK_STR_CONTAINS(err, cases[k].want2);
        }
    }
    /* The file's own name when loaded from a path. */
    {
        prt_network *net = (prt_network *)0x1;
        snprintf(json, sizeof json, k_bias_json, "", "text.npy");
        snprintf(path, sizeof path, "%s/net.json", dir);
        write_text(path, json);
        err[0] = 0;
        CHECK(prt_network_load_json(r, path, &net, err, sizeof err) != PRT_OK);
        CHECK(net == (prt_network *)0x1);
        CHECK_STR_CONTAINS(err, path);
        CHECK_STR_CONTAINS(err, "text.npy: npy: bad magic");
    }
    remove_dir(dir);
    prt_registry_destroy(r);
    NO_LEAKS();
}

/* ---- plugrt run --input / --output ------------------------------------------- */

static const char *cli(void)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/../tools/plugrt/plugrt", prt_test_bin_dir());
    return path;
}

static int sh(const char *cmd)
{
    int st = system(cmd);
    if (st == -1 || !WIFEXITED(st)) return -1;
    return WEXITSTATUS(st);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = calloc(1, (size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) buf[0] = 0;
    fclose(f);
    return buf;
}

/* Parse a .npy v1.0 image written by `plugrt run --output`, independently of
 * the library: returns the data offset and checks descr and shape text. */
static int contains(const char *hay, size_t n, const char *needle)
{
    size_t k, m = strlen(needle);
    for (k = 0; k + m <= n; k++)
        if (memcmp(hay + k, needle, m) == 0) return 1;
    return 0;
}

static const unsigned char *npy_payload(const char *img, size_t len, const char *descr, const char *shape)
{
    size_t hl;
    CHECK(len > 10 && memcmp(img, "\x93NUMPY", 6) == 0);
    if (len <= 10) return NULL;
    hl = (size_t)(unsigned char)img[8] | ((size_t)(unsigned char)img[9] << 8);
    CHECK((10 + hl) % 64 == 0 && 10 + hl <= len);
    CHECK(contains(img, 10 + hl, descr));
    CHECK(contains(img, 10 + hl, shape));
    return (const unsigned char *)img + 10 + hl;
}

TEST(cli_run_reads_inputs_and_writes_outputs_as_npy)
{
    char dir[64], cmd[4096], path[256], net[1024], *txt;
    float x[3 * 3 * 4 * 5];
    int i;
    FILE *f;
    size_t len;
    make_dir(dir);
    snprintf(net, sizeof net, "%s/networks/swish_small.json", prt_test_data_dir());
    snprintf(cmd, sizeof cmd, "%s build %s -o %s/m.plan --profile x:1x3x4x5,2x3x4x5,4x3x4x5 >/dev/null", cli(), net,
             dir);
    CHECK_EQ_INT(sh(cmd), 0);
    for (i = 0; i < 180; i++) x[i] = -3.0f + (float)i / 30.0f;
    snprintf(path, sizeof path, "%s/x.npy", dir);
    write_npy(path, "<f4", 0, "(3, 3, 4, 5)", x, sizeof x);
    /* The file sets the dynamic batch to 3; y comes back as a [3, 3, 4, 5] .npy. */
    snprintf(cmd, sizeof cmd, "%s run %s/m.plan --input x=%s/x.npy --output y=%s/y.npy --iterations 1 --warmup 0 "
             ">%s/out.txt 2>&1", cli(), dir, dir, dir, dir);
    CHECK_EQ_INT(sh(cmd), 0);
    snprintf(path, sizeof path, "%s/y.npy", dir);
    f = fopen(path, "rb");
    CHECK(f != NULL);
    if (f) {
        char img[4096];
        const unsigned char *p;
        len = fread(img, 1, sizeof img, f);
        fclose(f);
        p = npy_payload(img, len, "'<f4'", "(3, 3, 4, 5)");
        CHECK(p && (size_t)(p - (const unsigned char *)img) + sizeof x == len);
        for (i = 0; p && i < 180; i++) {
            static const double w[3] = {0.5, 1.0, 2.0};
            double h = x[i] / (1.0 + exp(-(double)x[i]));
            double want = w[(i / 20) % 3] * h / (1.0 + exp(-1.702 * h));
            float got;
            memcpy(&got, p + 4 * i, 4);
            CHECK_NEAR(got, want, 1e-5 * (fabs(want) + 1e-3));
        }
    }
    snprintf(path, sizeof path, "%s/out.txt", dir);
    txt = slurp(path);
    CHECK_STR_CONTAINS(txt, "output y f32 [3, 3, 4, 5]");
    free(txt);

    /* Integer files convert to the f32 input; float64 files too. */
    {
        int32_t xi[180];
        double xd[180];
        for (i = 0; i < 180; i++) {
            xi[i] = i % 7 - 3;
            xd[i] = x[i];
        }
        snprintf(path, sizeof path, "%s/xi.npy", dir);
        write_npy(path, "<i4", 0, "(3, 3, 4, 5)", xi, sizeof xi);
        snprintf(path, sizeof path, "%s/xd.npy", dir);
        write_npy(path, "<f8", 0, "(3, 3, 4, 5)", xd, sizeof xd);
        snprintf(cmd, sizeof cmd, "%s run %s/m.plan --input x=%s/xi.npy --iterations 1 >/dev/null", cli(), dir, dir);
        CHECK_EQ_INT(sh(cmd), 0);
        snprintf(cmd, sizeof cmd, "%s run %s/m.plan --input x=%s/xd.npy --output y=%s/yd.npy --iterations 1 >/dev/null",
                 cli(), dir, dir, dir);
        CHECK_EQ_INT(sh(cmd), 0);
        snprintf(cmd, sizeof cmd, "cmp -s %s/y.npy %s/yd.npy", dir, dir);
        CHECK_EQ_INT(sh(cmd), 0);
    }
    remove_dir(dir);
}

TEST(cli_run_bad_npy_files_exit_1_naming_the_file)
{
    char dir[64], cmd[4096], path[256], net[1024], *txt;
    float z[9 * 60] = {0};
    static const struct {
        const char *args, *want1, *want2;
        int rc;
    } cases[] = {
        {"--input x=%s/nothere.npy", "nothere.npy", "cannot open", 1},
        {"--input x=%s/text.npy", "text.npy", "bad magic", 1},
        {"--input x=%s/big.npy", "big.npy", "dim 0 is 9, outside the profile's range 1..4", 1},
        {"--input x=%s/rank.npy", "rank.npy", "holds an array of shape [60]", 1},
        {"--input x=%s/c8.npy", "c8.npy", "'<c8'", 1},
        {"--input x=%s/x2.npy --shape x=3x3x4x5", "x2.npy holds an array of shape [2, 3, 4, 5]", "--shape sets x", 1},
        {"--input y=%s/x2.npy", "--input names \"y\"", "not an input", 1},
        {"--output x=%s/o.npy", "--output names \"x\"", "not an output", 1},
        {"--output y=%s/no/such/dir/o.npy", "o.npy", "cannot create", 1},
        {"--input x%s", "--input takes name=file.npy", "", 2},
        {"--input x=%s", "is not a regular file", "expected a .npy file", 1},
    };
    size_t k;
    make_dir(dir);
    snprintf(net, sizeof net, "%s/networks/swish_small.json", prt_test_data_dir());
    snprintf(cmd, sizeof cmd, "%s build %s -o %s/m.plan --profile x:1x3x4x5,2x3x4x5,4x3x4x5 >/dev/null", cli(), net,
             dir);
    CHECK_EQ_INT(sh(cmd), 0);
    snprintf(path, sizeof path, "%s/big.npy", dir);
    write_npy(path, "<f4", 0, "(9, 3, 4, 5)", z, sizeof z);
    snprintf(path, sizeof path, "%s/rank.npy", dir);
    write_npy(path, "<f4", 0, "(60,)", z, 240);
    snprintf(path, sizeof path, "%s/x2.npy", dir);
    write_npy(path, "<f4", 0, "(2, 3, 4, 5)", z, 480);
    snprintf(path, sizeof path, "%s/c8.npy", dir);
    write_npy(path, "<c8", 0, "(2, 3, 4, 5)", z, 960);
    snprintf(path, sizeof path, "%s/text.npy", dir);
    write_text(path, "hello");
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char args[1024];
        snprintf(args, sizeof args, cases[k].args, dir);
        snprintf(cmd, sizeof cmd, "%s run %s/m.plan %s --iterations 1 >/dev/null 2>%s/err.txt", cli(), dir, args, dir);
        CHECK_MSG(sh(cmd) == cases[k].rc, "exit status of: %s", cmd);
        snprintf(path, sizeof path, "%s/err.txt", dir);
        txt = slurp(path);
        CHECK_STR_CONTAINS(txt, cases[k].want1);
        CHECK_STR_CONTAINS(txt, cases[k].want2);
        free(txt);
    }
    remove_dir(dir);
}
