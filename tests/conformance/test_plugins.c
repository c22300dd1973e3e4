/*
 * test_plugins.c - every shipped plugin passes the conformance runner on its
 * own PluginConfig YAML and golden-IO JSON (plugins/<name>/), on the CPU
 * and, where a GPU is found, on CUDA; EfficientNMS_TRT passes TensorRT's
 * own YAML and golden file; the golden files stay small; Swish's golden
 * outputs agree with a float64 formula computed here.
 */
#include <sys/stat.h>

#include "harness/harness.h"
#include "plugrt/harness.h"
#include "plugrt/plugrt.h"
#include "prt_test.h"

typedef struct shipped {
    const char *yaml;   /* under the source tree */
    const char *golden; /* its golden file */
    int min_passed;     /* checks that must have run and passed on one device */
} shipped;

static const shipped plugins[] = {
    {"plugins/swish/Swish_PluginConfig.yaml", "plugins/swish/Swish_PluginGoldenIO.json", 45},
    {"plugins/deform_conv/ModulatedDeformConv2d_PluginConfig.yaml",
     "plugins/deform_conv/ModulatedDeformConv2d_PluginGoldenIO.json", 50},
    {"plugins/nms/EfficientNMS_TRT_PluginConfig.yaml", "plugins/nms/EfficientNMS_TRT_PluginGoldenIO.json", 45},
    {"plugins/nms/BatchedNMS_TRT_PluginConfig.yaml", "plugins/nms/BatchedNMS_TRT_PluginGoldenIO.json", 40},
    {"plugins/nms/BatchedNMSDynamic_TRT_PluginConfig.yaml", "plugins/nms/BatchedNMS_TRT_PluginGoldenIO.json", 40},
    {"plugins/nms/NonMaxSuppression_PluginConfig.yaml", "plugins/nms/NonMaxSuppression_PluginGoldenIO.json", 15},
};
#define NB_SHIPPED ((int)(sizeof plugins / sizeof plugins[0]))

static void run_one(const shipped *p, int cuda)
{
    prt_harness_test_opts o;
    prt_harness_summary s;
    char path[1024], err[1024], *rep = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&rep, &len);
    CHECK(f != NULL);
    if (!f) return;
    snprintf(path, sizeof path, "%s/%s", PRT_SOURCE_DIR, p->yaml);
    prt_harness_test_opts_init(&o);
    o.cpu = o.cuda = 0;
    o.yaml_path = path;
    o.cpu = !cuda;
    o.cuda = cuda;
    o.cuda_required = cuda;
    o.nb_threads = 2;
    o.out = f;
    if (prt_harness_test_plugin(&o, &s, err, sizeof err) != PRT_OK) CHECK_MSG(0, "%s: %s", p->yaml, err);
    fclose(f);
    CHECK_MSG(s.failed == 0, "%s on %s: %d failed\n%s", p->yaml, cuda ? "CUDA" : "the CPU", s.failed, rep);
    CHECK_MSG(s.passed >= p->min_passed, "%s: only %d checks passed (expected >= %d)\n%s", p->yaml, s.passed,
              p->min_passed, rep);
    /* every config compared against golden data, nothing left out */
    CHECK_MSG(strstr(rep, "no golden case") == NULL, "%s: a config has no golden case\n%s", p->yaml, rep);
    printf("%s on %s: %d passed, %d skipped\n", p->yaml, cuda ? "CUDA" : "CPU", s.passed, s.skipped);
    free(rep);
}

TEST(swish_cpu)
{
    run_one(&plugins[0], 0);
}

TEST(deform_conv_cpu)
{
    run_one(&plugins[1], 0);
}

TEST(swish_cuda)
{
    if (!prt_test_have_cuda()) SKIP("no CUDA device");
    run_one(&plugins[0], 1);
}

TEST(deform_conv_cuda)
{
    if (!prt_test_have_cuda()) SKIP("no CUDA device");
    run_one(&plugins[1], 1);
}

TEST(efficient_nms_cpu)
{
    run_one(&plugins[2], 0);
}

TEST(batched_nms_cpu)
{
    run_one(&plugins[3], 0);
    run_one(&plugins[4], 0);
}

TEST(onnx_nms_cpu)
{
    run_one(&plugins[5], 0);
}

TEST(nms_cuda)
{
    int i;
    if (!prt_test_have_cuda()) SKIP("no CUDA device");
    for (i = 2; i < NB_SHIPPED; i++) run_one(&plugins[i], 1);
}

/* EfficientNMS_TRT against TensorRT's own PluginConfig and golden file
 * (tests/data/tensorrt/configs/toplevel), on every device found. */
TEST(efficient_nms_passes_tensorrt_golden)
{
    prt_harness_test_opts o;
    prt_harness_summary s;
    char path[1024], err[1024], *rep = NULL;
    size_t len = 0;
    int dev;
    for (dev = 0; dev < 2; dev++) {
        FILE *f;
        if (dev == 1 && !prt_test_have_cuda()) break;
        f = open_memstream(&rep, &len);
        snprintf(path, sizeof path, "%s/tests/data/tensorrt/configs/toplevel/EfficientNMSPlugin_PluginConfig.yaml",
                 PRT_SOURCE_DIR);
        prt_harness_test_opts_init(&o);
        o.cpu = o.cuda = 0;
        o.yaml_path = path;
        o.cpu = dev == 0;
        o.cuda = dev == 1;
        o.cuda_required = dev == 1;
        o.out = f;
        if (prt_harness_test_plugin(&o, &s, err, sizeof err) != PRT_OK) CHECK_MSG(0, "%s", err);
        fclose(f);
        CHECK_MSG(s.failed == 0, "%s\n%s", path, rep);
        CHECK_STR_CONTAINS(rep, "golden     config1            float32   ");
        CHECK_STR_CONTAINS(rep, "golden     class_agnostic     float32   ");
        CHECK(s.passed >= 12);
        free(rep);
        rep = NULL;
    }
}

TEST(golden_files_are_small_and_load)
{
    int i;
    for (i = 0; i < NB_SHIPPED; i++) {
        char path[1024];
        struct stat st;
        prt_golden *g = NULL;
        snprintf(path, sizeof path, "%s/%s", PRT_SOURCE_DIR, plugins[i].golden);
        CHECK_MSG(stat(path, &st) == 0, "%s is missing", path);
        CHECK_MSG(st.st_size < 200 * 1024, "%s is %lld bytes; keep golden files under 200 KB", path,
                  (long long)st.st_size);
        CHECK_OK(prt__golden_load_file(path, &g));
        if (g) CHECK_MSG(g->nb_warnings == 0, "%s: %s", path, g->warnings[0]);
        prt__golden_destroy(g);
    }
}

/* The golden outputs of Swish against y = w[c] x / (1 + exp(-beta x)) in
 * double, from the golden inputs and attributes (defaults: beta 1, w 1;
 * version 24's configs give the slope as alpha). */
TEST(swish_golden_matches_formula)
{
    char path[1024];
    prt_golden *g = NULL;
    int ci, checked = 0;
    snprintf(path, sizeof path, "%s/%s", PRT_SOURCE_DIR, plugins[0].golden);
    CHECK_OK(prt__golden_load_file(path, &g));
    if (!g) return;
    for (ci = 0; ci < g->nb_configs; ci++) {
        const prt_golden_case *k = &g->configs[ci].cases[0];
        const prt_golden_tensor *x = prt__golden_case_input(k, "x"), *y = prt__golden_case_output(k, "y");
        const prt_golden_attr *b = prt__golden_case_attr(k, "beta"), *w = prt__golden_case_attr(k, "weights");
        const prt_golden_attr *al = prt__golden_case_attr(k, "alpha");
        double beta = b ? prt_npy_get_f64(&b->array, 0) : al ? prt_npy_get_f64(&al->array, 0) : 1.0;
        int half = y && y->array.type == PRT_NPY_F2;
        int64_t i, inner;
        CHECK(x && y && x->array.count == y->array.count && x->array.shape.nb == 4);
        if (!x || !y || x->array.shape.nb != 4) continue;
        inner = x->array.shape.d[2] * x->array.shape.d[3];
        for (i = 0; i < x->array.count; i++) {
            double xv = prt_npy_get_f64(&x->array, i);
            double want = xv / (1.0 + exp(-beta * xv));
            double got = prt_npy_get_f64(&y->array, i);
            if (w) want *= prt_npy_get_f64(&w->array, (i / inner) % x->array.shape.d[1]);
            /* float32: rounded once; float16: within half a step */
            if (half) CHECK_NEAR(got, want, fabs(want) * (1.0 / 2048) + 3e-8);
            else CHECK_NEAR(got, want, fabs(want) * 6e-8 + 1e-45);
            checked++;
        }
    }
    CHECK(checked >= 7 * 120);
    prt__golden_destroy(g);
}
