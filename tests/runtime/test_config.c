/* Caller-side config structs are read member by member up to their
 * struct_size: a caller built against an older, shorter struct keeps
 * working (the members it lacks take their defaults); a struct_size too
 * small to hold the header is refused with a message. */
#include <math.h>
#include <stddef.h>

#include "plugrt/engine.h"
#include "plugrt/plugrt.h"
#include "prt_test.h"

static prt_network *swish_net(void)
{
    prt_network *net = NULL;
    prt_dims d = {.nb = 1, .d = {8}};
    const char *in = "x", *out = "y";
    CHECK_OK(prt_network_create(prt_registry_global(), &net));
    CHECK_OK(prt_network_add_input(net, "x", PRT_DTYPE_F32, &d));
    CHECK_OK(prt_network_add_layer(net, "act", "Swish", "2", "", NULL, &in, 1, &out, 1));
    CHECK_OK(prt_network_mark_output(net, "y"));
    return net;
}

TEST(older_shorter_configs_keep_working)
{
    prt_network *net = swish_net();
    prt_builder_config bc;
    prt_context_config cc;
    prt_engine *e = NULL;
    prt_context *ctx = NULL;
    char err[512] = "";
    float x[8] = {1, 2, 3, 4, -1, -2, -3, 0}, y[8];
    prt_builder_config_init(&bc);
    bc.workspace_limit = 1; /* past struct_size: must be ignored, not read */
    bc.struct_size = (uint32_t)offsetof(prt_builder_config, workspace_limit);
    CHECK_MSG(prt_engine_build(net, &bc, NULL, &e, err, sizeof err) == PRT_OK, "%s", err);
    prt_context_config_init(&cc);
    cc.allocator = (const prt_allocator *)(uintptr_t)0x1; /* past struct_size: never read */
    cc.struct_size = (uint32_t)offsetof(prt_context_config, allocator);
    CHECK_MSG(prt_context_create(e, &cc, &ctx) == PRT_OK, "%s", prt_engine_last_error(e));
    CHECK_OK(prt_context_set_tensor(ctx, "x", x));
    CHECK_OK(prt_context_set_tensor(ctx, "y", y));
    CHECK_OK(prt_context_execute(ctx));
    CHECK_NEAR(y[0], 1.0 / (1.0 + exp(-1.0)), 1e-6);
    prt_context_destroy(ctx);
    prt_engine_destroy(e);
    prt_network_destroy(net);
}

TEST(configs_too_small_are_refused)
{
    prt_network *net = swish_net();
    prt_builder_config bc;
    prt_context_config cc;
    prt_engine *e = NULL, *none = (prt_engine *)(uintptr_t)0x5;
    prt_context *ctx = (prt_context *)(uintptr_t)0x6;
    char err[512] = "";
    prt_builder_config_init(&bc);
    bc.struct_size = 4;
    CHECK_EQ_INT(prt_engine_build(net, &bc, NULL, &none, err, sizeof err), PRT_STATUS_INVALID_ARGUMENT);
    CHECK(none == (prt_engine *)(uintptr_t)0x5);
    CHECK_STR_CONTAINS(err, "builder config struct_size is 4; expected at least 8");
    CHECK_OK(prt_engine_build(net, NULL, NULL, &e, err, sizeof err));
    prt_context_config_init(&cc);
    cc.struct_size = 0;
    CHECK_EQ_INT(prt_context_create(e, &cc, &ctx), PRT_STATUS_INVALID_ARGUMENT);
    CHECK(ctx == (prt_context *)(uintptr_t)0x6);
    CHECK_STR_CONTAINS(prt_engine_last_error(e), "context config struct_size is 0; expected at least 8");
    prt_engine_destroy(e);
    prt_network_destroy(net);
}
