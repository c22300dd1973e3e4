/* tests/onnx/test_fuse.c - layer fusion of imported models (src/onnx/fuse.c):
 * which layers a model becomes, and that the fused network computes what
 * the unfused one computes (fixtures: tests/onnx/make_fuse_fixtures.py). */
#include <math.h>

#include "core/core.h"
#include "engine/netdef.h"
#include "onnx/onnx_impl.h"
#include "prt_test.h"

#define CHECK_STR(got, want) CHECK_MSG(strcmp((got), (want)) == 0, "got \"%s\", want \"%s\"", (got), (want))

static const char *path_of(const char *name)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/onnx/%s", prt_test_data_dir(), name);
    return path;
}

static prt_network *import(prt_registry *r, const char *name, int no_fuse, const prt_profile_range *rg, int nrg)
{
    prt_onnx_import_config ic;
    prt_network *net = NULL;
    char err[1024] = "";
    prt_onnx_import_config_init(&ic);
    ic.no_fuse = no_fuse;
    ic.nb_ranges = nrg;
    ic.ranges = rg;
    CHECK_MSG(prt_network_from_onnx_file(r, path_of(name), &ic, &net, err, sizeof err) == PRT_OK, "%s: %s", name,
              err);
    return net;
}

/* "ns::plugin name, ..." of every layer, in order. */
static const char *layers_str(const prt_network *net)
{
    static char buf[4096];
    size_t n = 0;
    int32_t i;
    buf[0] = 0;
    for (i = 0; i < net->nb_layers && n < sizeof buf - 200; i++) {
        const prt__net_layer *l = &net->layers[i];
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s%s%s", i ? ", " : "", l->plugin_namespace,
                              l->plugin_namespace[0] ? "::" : "", l->plugin);
    }
    return buf;
}

typedef struct io {
    const char *name;
    prt_dtype dtype;
    prt_dims dims;
    void *data;
} io;

/* Build `net` for the CPU and run it on the inputs; outputs into outs[]
 * (data allocated here, freed by the caller). */
static void run(prt_network *net, const prt_profile_range *rg, int nrg, const io *ins, int nin, io *outs, int nout,
                int threads)
{
    prt_builder_config bc;
    prt_engine *e = NULL;
    prt_context *ctx = NULL;
    prt_context_config cc;
    char err[1024] = "";
    int i;
    prt_builder_config_init(&bc);
    bc.nb_ranges = nrg;
    bc.ranges = rg;
    CHECK_MSG(prt_engine_build(net, &bc, NULL, &e, err, sizeof err) == PRT_OK, "%s", err);
    prt_context_config_init(&cc);
    cc.nb_threads = threads;
    CHECK_OK(prt_context_create(e, &cc, &ctx));
    for (i = 0; i < nin; i++) {
        CHECK_OK(prt_context_set_input_shape(ctx, ins[i].name, &ins[i].dims));
        CHECK_OK(prt_context_set_tensor(ctx, ins[i].name, ins[i].data));
    }
    for (i = 0; i < nout; i++) {
        size_t bytes = 0;
        CHECK_OK(prt_context_buffer_size(ctx, outs[i].name, &bytes));
        outs[i].data = calloc(1, bytes + 16);
        CHECK(outs[i].data != NULL);
        CHECK_OK(prt_context_set_tensor(ctx, outs[i].name, outs[i].data));
    }
    CHECK_MSG(prt_context_execute(ctx) == PRT_OK, "%s", prt_context_last_error(ctx));
    for (i = 0; i < nout; i++) CHECK_OK(prt_context_get_shape(ctx, outs[i].name, &outs[i].dims));
    prt_context_destroy(ctx);
    prt_engine_destroy(e);
}

static prt_dims dims4(int64_t a, int64_t b, int64_t c, int64_t d)
{
    prt_dims x;
    memset(&x, 0, sizeof x);
    x.nb = 4;
    x.d[0] = a;
    x.d[1] = b;
    x.d[2] = c;
    x.d[3] = d;
    return x;
}

static float *uniform(int64_t n, unsigned seed)
{
    float *v;
    int64_t i;
    CHECK(n > 0 && n < ((int64_t)1 << 30));
    v = malloc((size_t)n * sizeof *v);
    CHECK(v != NULL);
    for (i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        v[i] = (float)((seed >> 8) & 0xFFFF) / 32768.0f - 1.0f;
    }
    return v;
}

/* max |a - b| <= 1e-5 * max |b| over n floats (b: the unfused network). */
static void close_to(const float *a, const float *b, int64_t n, const char *what)
{
    double mb = 0, md = 0;
    int64_t i;
    for (i = 0; i < n; i++) {
        CHECK_MSG(isfinite(a[i]) == isfinite(b[i]), "%s: element %lld: %g vs %g", what, (long long)i, a[i], b[i]);
        if (!isfinite(b[i])) continue;
        if (fabs(b[i]) > mb) mb = fabs(b[i]);
        if (fabs(a[i] - b[i]) > md) md = fabs(a[i] - b[i]);
    }
    CHECK_MSG(md <= 1e-5 * mb + 1e-30, "%s: max |fused - unfused| = %g, max |unfused| = %g", what, md, mb);
}

/* Fused and unfused runs of a one-input ("x") model agree on output "y". */
static void same_output(const char *model, prt_dims xd, const prt_profile_range *rg, int nrg)
{
    prt_network *f = import(NULL, model, 0, rg, nrg), *u = import(NULL, model, 1, rg, nrg);
    io in = {"x", PRT_DTYPE_F32, xd, uniform(prt_dims_volume(&xd), 7)};
    io of = {"y", PRT_DTYPE_F32, {0}, NULL}, ou = {"y", PRT_DTYPE_F32, {0}, NULL}, o2 = {"y", PRT_DTYPE_F32, {0}, NULL};
    run(f, rg, nrg, &in, 1, &of, 1, 1);
    run(u, rg, nrg, &in, 1, &ou, 1, 1);
    run(f, rg, nrg, &in, 1, &o2, 1, 2);
    CHECK(prt_dims_equal(&of.dims, &ou.dims));
    close_to(of.data, ou.data, prt_dims_volume(&ou.dims), model);
    /* the thread count does not change a bit */
    CHECK(memcmp(of.data, o2.data, (size_t)prt_dims_volume(&ou.dims) * sizeof(float)) == 0);
    free(in.data);
    free(of.data);
    free(ou.data);
    free(o2.data);
    prt_network_destroy(f);
    prt_network_destroy(u);
}

/* Layer li's "program" field as "op a b p; ..." */
static const char *program_str(const prt_network *net, int32_t li)
{
    static char buf[1024];
    const prt_field *f = prt_fields_find(prt_owned_fields_get(net->layers[li].fields), "program");
    size_t n = 0;
    int64_t i;
    buf[0] = 0;
    if (!f || f->type != PRT_FIELD_INT64) return "(no program)";
    for (i = 0; i + 3 < f->count && n < sizeof buf - 100; i += 4) {
        const int64_t *c = (const int64_t *)f->data + i;
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%lld %lld %lld %lld", i ? "; " : "", (long long)c[0],
                              (long long)c[1], (long long)c[2], (long long)c[3]);
    }
    return buf;
}

TEST(conv_batchnorm_hardswish_become_one_fused_conv)
{
    prt_network *f = import(NULL, "fuse_conv_bn_hswish.onnx", 0, NULL, 0);
    prt_network *u = import(NULL, "fuse_conv_bn_hswish.onnx", 1, NULL, 0);
    CHECK_STR(layers_str(u), "Conv, BatchNormalization, Add, Clip, Div, Mul");
    CHECK_STR(layers_str(f), "plugrt::FusedConv");
    /* the hard swish written out (Add, Clip, Div, Mul) is one HardSwish (22) of the convolution (value 0) */
    CHECK_STR(program_str(f, 0), "22 0 0 0");
    prt_network_destroy(f);
    prt_network_destroy(u);
    same_output("fuse_conv_bn_hswish.onnx", dims4(1, 3, 9, 11), NULL, 0);
}

TEST(block_with_squeeze_excite_and_residual)
{
    prt_network *f = import(NULL, "fuse_block.onnx", 0, NULL, 0);
    /* conv+relu, depthwise+hardswish, the SE convs (the first with its relu),
     * the SE scale alone (it widens the 1x1 conv's output), and the last conv
     * taking the residual add and the sigmoid */
    CHECK_STR(layers_str(f), "plugrt::FusedConv, plugrt::FusedConv, GlobalAveragePool, plugrt::FusedConv, Conv, "
                             "plugrt::Elementwise, plugrt::FusedConv");
    prt_network_destroy(f);
    same_output("fuse_block.onnx", dims4(2, 4, 10, 7), NULL, 0);
}

TEST(dynamic_extents_keep_residuals_out_of_convs)
{
    prt_profile_range rg;
    prt_network *f;
    memset(&rg, 0, sizeof rg);
    rg.input = "x";
    rg.min = dims4(1, 4, 3, 3);
    rg.opt = dims4(2, 4, 10, 7);
    rg.max = dims4(3, 4, 16, 16);
    f = import(NULL, "fuse_block_dynamic.onnx", 0, &rg, 1);
    CHECK_STR(layers_str(f), "plugrt::FusedConv, plugrt::FusedConv, GlobalAveragePool, plugrt::FusedConv, Conv, "
                             "plugrt::Elementwise, Conv, plugrt::Elementwise");
    prt_network_destroy(f);
    same_output("fuse_block_dynamic.onnx", dims4(2, 4, 10, 7), &rg, 1);
    same_output("fuse_block_dynamic.onnx", dims4(1, 4, 3, 5), &rg, 1);
}

TEST(outputs_integers_and_widening_broadcasts_stay_apart)
{
    prt_network *f = import(NULL, "fuse_limits.onnx", 0, NULL, 0), *u = import(NULL, "fuse_limits.onnx", 1, NULL, 0);
    int64_t nv[4] = {1, -2, 3, 40};
    prt_dims nd = {.nb = 1, .d = {4}};
    io ins[2] = {{"x", PRT_DTYPE_F32, dims4(1, 2, 5, 6), uniform(60, 3)}, {"n", PRT_DTYPE_I64, nd, nv}};
    io of[3] = {{"out_a", 0, {0}, NULL}, {"out_b", 0, {0}, NULL}, {"out_c", 0, {0}, NULL}};
    io ou[3] = {{"out_a", 0, {0}, NULL}, {"out_b", 0, {0}, NULL}, {"out_c", 0, {0}, NULL}};
    int i;
    /* the conv's output widens under the constant it is added to: not a
     * conv epilogue; out_a is a graph output and read twice: a group ends
     * there; Pow with an integer exponent and the int64 ops stay */
    CHECK_STR(layers_str(f), "Conv, Mul, Add, plugrt::Elementwise, plugrt::Elementwise, Pow");
    run(f, NULL, 0, ins, 2, of, 3, 1);
    run(u, NULL, 0, ins, 2, ou, 3, 1);
    for (i = 0; i < 2; i++) {
        CHECK(prt_dims_equal(&of[i].dims, &ou[i].dims));
        close_to(of[i].data, ou[i].data, prt_dims_volume(&ou[i].dims), of[i].name);
    }
    CHECK(memcmp(of[2].data, ou[2].data, 4 * sizeof(int64_t)) == 0);
    CHECK(((int64_t *)of[2].data)[3] == 83);
    for (i = 0; i < 3; i++) {
        free(of[i].data);
        free(ou[i].data);
    }
    free(ins[0].data);
    prt_network_destroy(f);
    prt_network_destroy(u);
}

TEST(plugins_of_another_owner_are_never_fused)
{
    /* the test library provides its own Relu and Add in the default domain:
     * those layers stay as they are */
    prt_registry *r = NULL;
    prt_library *lib = NULL;
    prt_network *net;
    CHECK_OK(prt_registry_create(prt_registry_global(), &r));
    CHECK_MSG(prt_registry_load_library(r, PRT_ONNXTOY_PATH, &lib) == PRT_OK, "%s", prt_registry_last_error(r));
    net = import(r, "relu_add.onnx", 0, NULL, 0);
    CHECK_STR(layers_str(net), "Add, Relu");
    prt_network_destroy(net);
    prt_registry_destroy(r);
    /* the bundled ones do fuse */
    net = import(NULL, "relu_add.onnx", 0, NULL, 0);
    CHECK_STR(layers_str(net), "plugrt::Elementwise");
    prt_network_destroy(net);
}

TEST(failed_allocations_while_fusing_leave_nothing)
{
    prt_onnx_model *m = NULL;
    char err[1024];
    long n;
    int ok = 0;
    CHECK_OK(prt_onnx_model_load(path_of("fuse_block.onnx"), &m, err, sizeof err));
    for (n = 0; n < 200000 && !ok; n++) {
        prt_network *net = NULL;
        prt_status s;
        err[0] = 0;
        prt__alloc_fail_after(n);
        s = prt_onnx_import(m, NULL, NULL, &net, err, sizeof err);
        prt__alloc_fail_after(-1);
        if (s == PRT_OK) {
            ok = 1;
            CHECK_STR(layers_str(net), "plugrt::FusedConv, plugrt::FusedConv, GlobalAveragePool, plugrt::FusedConv, "
                                       "Conv, plugrt::Elementwise, plugrt::FusedConv");
            prt_network_destroy(net);
        } else {
            CHECK_MSG(net == NULL && err[0], "allocation %ld: status %d, no message", n, (int)s);
        }
    }
    CHECK(ok);
    prt_onnx_model_destroy(m);
}
