/*
 * tests/engine/test_devq.c - build-time questions per target device
 * (engine/devq.c): get_workspace_size_v2 and supports_format_combination_v2.
 *
 *   TestCpuOnly v1 (field): y = x (f32); accepts only the CPU device
 *                           (supports_format_combination_v2) and asks for
 *                           100 bytes of workspace there, 1 MiB elsewhere.
 */
#include <stdlib.h>

#include "plugrt/engine.h"
#include "prt_test.h"
#include "toyfield.h"

/* The device-blind members: never asked when the _v2 ones exist. */
static int co_supports_blind(prt_field_plugin *p, int32_t pos, const prt_dyn_tensor_desc *io, int32_t nb_in,
                             int32_t nb_out)
{
    (void)p; (void)pos; (void)io; (void)nb_in; (void)nb_out;
    abort();
}
static size_t co_ws_blind(const prt_field_plugin *p, const prt_dyn_tensor_desc *in, int32_t nb_in,
                          const prt_dyn_tensor_desc *out, int32_t nb_out)
{
    (void)p; (void)in; (void)nb_in; (void)out; (void)nb_out;
    abort();
}
static int co_supports(prt_field_plugin *p, int32_t pos, const prt_dyn_tensor_desc *io, int32_t nb_in,
                       int32_t nb_out, prt_device device)
{
    (void)p; (void)pos; (void)nb_in; (void)nb_out;
    return device == PRT_DEVICE_CPU && io[pos].desc.dtype == PRT_DTYPE_F32 && io[pos].desc.format == PRT_FORMAT_LINEAR;
}
static size_t co_ws(const prt_field_plugin *p, const prt_dyn_tensor_desc *in, int32_t nb_in,
                    const prt_dyn_tensor_desc *out, int32_t nb_out, prt_device device)
{
    (void)p; (void)in; (void)nb_in; (void)out; (void)nb_out;
    return device == PRT_DEVICE_CPU ? 100 : (size_t)1 << 20;
}
static prt_status co_enqueue(prt_field_plugin *p, const prt_tensor_desc *id, const prt_tensor_desc *od,
                             const void *const *in, void *const *out, void *ws, prt_exec *ex)
{
    (void)p; (void)id; (void)ws; (void)ex;
    memcpy(out[0], in[0], (size_t)prt_dims_volume(&od[0].dims) * sizeof(float));
    return PRT_OK;
}

static const prt_plugin_build_ops co_build = {
    .struct_size = sizeof co_build, .abi_version = PRT_ABI_VERSION,
    .get_nb_outputs = toy_one_output, .get_output_data_types = toy_same_types,
    .get_output_shapes = toy_same_shapes,
    .supports_format_combination = co_supports_blind, .get_workspace_size = co_ws_blind,
    .get_workspace_size_v2 = co_ws, .supports_format_combination_v2 = co_supports,
};
static const prt_plugin_runtime_ops co_runtime = {
    .struct_size = sizeof co_runtime, .abi_version = PRT_ABI_VERSION,
    .enqueue = co_enqueue, .attach_to_context = toy_attach, .get_fields_to_serialize = toy_fields,
};
static const prt_field_plugin_ops co_ops = {
    .struct_size = sizeof co_ops, .abi_version = PRT_ABI_VERSION,
    .core = &toy_core, .build = &co_build, .runtime = &co_runtime, .clone = toy_clone, .destroy = toy_destroy,
};
static const toy_kind co_kind = {&co_ops, 0};
static const prt_plugin_creator cpuonly_creator = {
    .struct_size = sizeof cpuonly_creator, .abi_version = PRT_ABI_VERSION, .name = "TestCpuOnly", .version = "1",
    .plugin_namespace = "", .style = PRT_STYLE_FIELD, .field_schema_size = sizeof(prt_field_schema),
    .create_field = toy_create, .doc = "y = x on the CPU only", .user = (void *)&co_kind,
};

static prt_status build_for(prt_registry *r, prt_device device, prt_engine **e, char *err, size_t cap)
{
    static const char *const ins[1] = {"x"}, *const outs[1] = {"y"};
    prt_network *net = NULL;
    prt_builder_config cfg;
    prt_dims d = {1, 0, {8}};
    prt_status s;
    CHECK_OK(prt_network_create(r, &net));
    CHECK_OK(prt_network_add_input(net, "x", PRT_DTYPE_F32, &d));
    CHECK_OK(prt_network_add_layer(net, "copy", "TestCpuOnly", "1", "", NULL, ins, 1, outs, 1));
    CHECK_OK(prt_network_mark_output(net, "y"));
    prt_builder_config_init(&cfg);
    cfg.device = device;
    s = prt_engine_build(net, &cfg, r, e, err, cap);
    prt_network_destroy(net);
    return s;
}

TEST(workspace_and_formats_are_asked_per_target_device)
{
    prt_registry *r = NULL;
    prt_engine *e = NULL;
    prt_context *ctx = NULL;
    char err[1024] = "";
    float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, y[8];
    CHECK_OK(prt_registry_create(prt_registry_global(), &r));
    CHECK_OK(prt_registry_add(r, &cpuonly_creator, "devq-tests"));

    CHECK_MSG(build_for(r, PRT_DEVICE_CPU, &e, err, sizeof err) == PRT_OK, "%s", err);
    CHECK_EQ_INT(prt_engine_workspace_size(e), 256); /* 100, rounded: not the 1 MiB of another device */
    CHECK_OK(prt_context_create(e, NULL, &ctx));
    CHECK_OK(prt_context_set_tensor(ctx, "x", x));
    CHECK_OK(prt_context_set_tensor(ctx, "y", y));
    CHECK_OK(prt_context_execute(ctx));
    CHECK(memcmp(x, y, sizeof x) == 0);
    prt_context_destroy(ctx);
    prt_engine_destroy(e);
    e = NULL;

    /* The plugin refuses the CUDA device at build time, and the message says where. */
    CHECK(build_for(r, PRT_DEVICE_CUDA, &e, err, sizeof err) == PRT_STATUS_TYPE_MISMATCH);
    CHECK(e == NULL);
    CHECK_STR_CONTAINS(err, "layer \"copy\" (TestCpuOnly v1): the plugin accepts no type combination tried for its "
                            "inputs (f32)");
    CHECK_STR_CONTAINS(err, "on the cuda device");
    prt_registry_destroy(r);
}
