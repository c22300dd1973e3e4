/*
 * tests/engine/test_fold.c - constant folding (engine/fold.c): layers that
 * read only constants run once at build time and become weights.
 *
 *   TestAxpy v1 (field): y = x + 2 w (w optional: y = x), f32, same shapes.
 *                        Counts its enqueues; refuses the CPU while
 *                        `refuse_cpu` is set.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "engine/plan.h"
#include "plugrt/engine.h"
#include "prt_test.h"
#include "toyfield.h"

static atomic_int runs, refuse_cpu;

static prt_status ax_info(const prt_field_plugin *p, prt_io_info *info, prt_msg *err)
{
    (void)p; (void)err;
    info->min_inputs = 1;
    info->max_inputs = 2;
    return PRT_OK;
}

static prt_status ax_shape_change(prt_field_plugin *p, const prt_tensor_desc *in, int32_t nb_in,
                                  const prt_tensor_desc *out, int32_t nb_out, prt_msg *err)
{
    (void)in; (void)out; (void)nb_out; (void)err;
    ((toy_pl *)p)->nb_in = nb_in;
    return PRT_OK;
}

static prt_status ax_enqueue(prt_field_plugin *p, const prt_tensor_desc *id, const prt_tensor_desc *od,
                             const void *const *in, void *const *out, void *ws, prt_exec *ex)
{
    int64_t n = prt_dims_volume(&od[0].dims), i;
    const float *x = in[0], *w = ((toy_pl *)p)->nb_in > 1 ? in[1] : NULL;
    (void)id; (void)ws;
    if (atomic_load(&refuse_cpu) && ex->device == PRT_DEVICE_CPU) {
        ex->set_error(ex, "TestAxpy: told to refuse the CPU");
        return PRT_STATUS_UNSUPPORTED;
    }
    atomic_fetch_add(&runs, 1);
    for (i = 0; i < n; i++) ((float *)out[0])[i] = x[i] + (w ? 2.0f * w[i] : 0.0f);
    return PRT_OK;
}

static const prt_plugin_build_ops ax_build = {
    .struct_size = sizeof ax_build, .abi_version = PRT_ABI_VERSION,
    .get_nb_outputs = toy_one_output, .get_output_data_types = toy_same_types,
    .get_output_shapes = toy_same_shapes,
    .get_io_info = ax_info,
};
static const prt_plugin_runtime_ops ax_runtime = {
    .struct_size = sizeof ax_runtime, .abi_version = PRT_ABI_VERSION,
    .on_shape_change = ax_shape_change, .enqueue = ax_enqueue, .attach_to_context = toy_attach,
    .get_fields_to_serialize = toy_fields,
};
static const prt_field_plugin_ops ax_ops = {
    .struct_size = sizeof ax_ops, .abi_version = PRT_ABI_VERSION,
    .core = &toy_core, .build = &ax_build, .runtime = &ax_runtime, .clone = toy_clone, .destroy = toy_destroy,
};
static const toy_kind ax_kind = {&ax_ops, 0};
static const prt_plugin_creator axpy_creator = {
    .struct_size = sizeof axpy_creator, .abi_version = PRT_ABI_VERSION, .name = "TestAxpy", .version = "1",
    .plugin_namespace = "", .style = PRT_STYLE_FIELD, .field_schema_size = sizeof(prt_field_schema),
    .create_field = toy_create, .doc = "y = x + 2 w", .user = (void *)&ax_kind,
};

static const float k_c1[4] = {1, 2, 3, 4}, k_c2[4] = {10, 20, 30, 40};
static const float k_b[4] = {21, 42, 63, 84}; /* c1 + 2 c2 */

static void layer(prt_network *net, const char *name, const char *in0, const char *in1)
{
    const char *ins[2] = {in0, in1}, *outs[1] = {name};
    CHECK_MSG(prt_network_add_layer(net, name, "TestAxpy", "1", "", NULL, ins, in1 ? 2 : 1, outs, 1) == PRT_OK, "%s",
              prt_network_last_error(net));
}

/* x [4]; c1, c2 constants; a = c1 + 2 c2; b = a; y = x + 2 b (and a as an
 * output too when mark_a). */
static prt_network *fold_net(prt_registry *r, int mark_a)
{
    prt_network *net = NULL;
    prt_dims d;
    memset(&d, 0, sizeof d);
    d.nb = 1;
    d.d[0] = 4;
    CHECK_OK(prt_network_create(r, &net));
    CHECK_OK(prt_network_add_input(net, "x", PRT_DTYPE_F32, &d));
    CHECK_OK(prt_network_add_constant(net, "c1", PRT_DTYPE_F32, &d, k_c1, sizeof k_c1));
    CHECK_OK(prt_network_add_constant(net, "c2", PRT_DTYPE_F32, &d, k_c2, sizeof k_c2));
    layer(net, "a", "c1", "c2");
    layer(net, "b", "a", NULL);
    layer(net, "y", "x", "b");
    CHECK_OK(prt_network_mark_output(net, "y"));
    if (mark_a) CHECK_OK(prt_network_mark_output(net, "a"));
    return net;
}

static prt_registry *fold_registry(void)
{
    prt_registry *r = NULL;
    CHECK_OK(prt_registry_create(prt_registry_global(), &r));
    CHECK_OK(prt_registry_add(r, &axpy_creator, "fold-tests"));
    return r;
}

static int32_t nb_role(const prt__plan *p, uint32_t role)
{
    int32_t i, n = 0;
    for (i = 0; i < p->nb_tensors; i++) n += p->tensors[i].role == role;
    return n;
}

static void run_y(prt_engine *e)
{
    prt_context *ctx = NULL;
    float x[4] = {0.5f, -1, 2, 0}, y[4];
    int i;
    CHECK_OK(prt_context_create(e, NULL, &ctx));
    CHECK_OK(prt_context_set_tensor(ctx, "x", x));
    CHECK_OK(prt_context_set_tensor(ctx, "y", y));
    if (prt_engine_find_io(e, "a") >= 0) {
        static float a[4];
        CHECK_OK(prt_context_set_tensor(ctx, "a", a));
    }
    CHECK_MSG(prt_context_execute(ctx) == PRT_OK, "%s", prt_context_last_error(ctx));
    for (i = 0; i < 4; i++) CHECK_NEAR(y[i], x[i] + 2.0f * k_b[i], 1e-6);
    prt_context_destroy(ctx);
}

TEST(a_constant_subgraph_becomes_one_weight)
{
    prt_registry *r = fold_registry();
    prt_network *net = fold_net(r, 0);
    prt_engine *e = NULL, *e2 = NULL;
    prt__plan *p = NULL;
    char err[1024] = "", dir[64] = "/tmp/prt_fold_XXXXXX", cmd[4096];
    size_t len = 0;
    uint8_t *bytes;
    int32_t i;

    CHECK_MSG(prt_engine_build(net, NULL, r, &e, err, sizeof err) == PRT_OK, "%s", err);
    CHECK_EQ_INT(atomic_load(&runs), 2); /* a and b, once each, at build time */
    CHECK_EQ_INT(prt_engine_nb_layers(e), 1);
    CHECK(strcmp(prt_engine_layer_name(e, 0), "y") == 0);

    /* One weight, b = c1 + 2 c2; c1 and c2 are gone. */
    bytes = toy_plan_bytes(e, &len);
    CHECK(bytes != NULL);
    CHECK_OK(prt__plan_read(bytes, len, &p, err, sizeof err));
    CHECK_EQ_INT(nb_role(p, PRT__ROLE_CONSTANT), 1);
    for (i = 0; i < p->nb_tensors; i++)
        if (p->tensors[i].role == PRT__ROLE_CONSTANT) {
            CHECK(strcmp(p->tensors[i].name, "b") == 0);
            CHECK(p->tensors[i].bytes == sizeof k_b);
            CHECK(memcmp(p->weights + p->tensors[i].offset, k_b, sizeof k_b) == 0);
        }
    CHECK_EQ_INT(p->nb_folds, 2);
    CHECK(strcmp(p->folds[0].layer, "a") == 0 && strcmp(p->folds[1].layer, "b") == 0);
    CHECK(strcmp(p->folds[1].plugin, "TestAxpy") == 0 && p->folds[1].nb_out == 1);
    CHECK(strcmp(p->folds[1].outputs[0], "b") == 0);
    prt__plan_free(p);

    run_y(e);
    CHECK_MSG(prt_engine_deserialize(r, bytes, len, &e2, err, sizeof err) == PRT_OK, "%s", err);
    CHECK(toy_flip_and_load(r, bytes, len, 400) >= 0); /* a damaged FOLD section included */
    run_y(e2);
    CHECK_EQ_INT(atomic_load(&runs), 4); /* only y runs */

    /* plugrt inspect lists what was folded. */
    CHECK(mkdtemp(dir) != NULL);
    snprintf(cmd, sizeof cmd, "%s/m.plan", dir);
    CHECK_OK(prt_engine_save(e, cmd, err, sizeof err));
    snprintf(cmd, sizeof cmd,
             "%s/../tools/plugrt/plugrt inspect %s/m.plan > %s/out.txt && grep -q '^folded at build time' %s/out.txt && "
             "grep -Eq '^  a +TestAxpy v1 -> a$' %s/out.txt && grep -Eq '^  b +TestAxpy v1 -> b$' %s/out.txt && "
             "rm -rf %s",
             prt_test_bin_dir(), dir, dir, dir, dir, dir, dir);
    CHECK_EQ_INT(WEXITSTATUS(system(cmd)), 0);
    free(bytes);
    prt_engine_destroy(e2);
    prt_engine_destroy(e);
    prt_network_destroy(net);
    prt_registry_destroy(r);
}

TEST(layers_that_cannot_fold_stay)
{
    prt_registry *r = fold_registry();
    prt_network *net = fold_net(r, 1), *net2 = fold_net(r, 0);
    prt_engine *e = NULL;
    char err[1024] = "";

    /* a is a network output: the caller binds it, so a stays, and b, which
     * reads it, too. */
    CHECK_MSG(prt_engine_build(net, NULL, r, &e, err, sizeof err) == PRT_OK, "%s", err);
    CHECK_EQ_INT(prt_engine_nb_layers(e), 3);
    run_y(e);
    prt_engine_destroy(e);
    e = NULL;

    /* A plugin whose CPU path refuses: nothing folds, the build still works. */
    atomic_store(&refuse_cpu, 1);
    CHECK_MSG(prt_engine_build(net2, NULL, r, &e, err, sizeof err) == PRT_OK, "%s", err);
    CHECK_EQ_INT(prt_engine_nb_layers(e), 3);
    atomic_store(&refuse_cpu, 0);
    run_y(e);
    prt_engine_destroy(e);
    prt_network_destroy(net2);
    prt_network_destroy(net);
    prt_registry_destroy(r);
}
