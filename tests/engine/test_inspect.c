/* Plan descriptions (plugrt/inspect.h): summary, tensors, layers with their
 * plugin keys and owners, the memory plan; struct_size handling; bad plans
 * and bad indices give errors. */
#include <stddef.h>
#include <stdlib.h>

#include "plugrt/engine.h"
#include "plugrt/inspect.h"
#include "plugrt/plugrt.h"
#include "prt_test.h"

/* x [dyn, 8] -> Swish v2 (weights) -> h -> Swish v1 -> y */
static void *make_plan(size_t *len)
{
    prt_network *net = NULL;
    prt_engine *e = NULL;
    prt_builder_config cfg;
    prt_profile_range rg = {.input = "x", .min = {.nb = 2, .d = {1, 8}}, .opt = {.nb = 2, .d = {2, 8}},
                            .max = {.nb = 2, .d = {4, 8}}};
    prt_dims d = {.nb = 2, .d = {-1, 8}};
    const char *x = "x", *h = "h", *y = "y";
    float w[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    prt_field f = {.name = "weights", .data = w, .type = PRT_FIELD_FLOAT32, .count = 8};
    prt_fields fc = {&f, 1, 0};
    char err[512] = "";
    void *plan = NULL;
    CHECK_OK(prt_network_create(prt_registry_global(), &net));
    CHECK_OK(prt_network_add_input(net, "x", PRT_DTYPE_F32, &d));
    CHECK_OK(prt_network_add_layer(net, "act2", "Swish", "2", "", &fc, &x, 1, &h, 1));
    CHECK_OK(prt_network_add_layer(net, "act1", "Swish", "1", "", NULL, &h, 1, &y, 1));
    CHECK_OK(prt_network_mark_output(net, "y"));
    prt_builder_config_init(&cfg);
    cfg.nb_ranges = 1;
    cfg.ranges = &rg;
    CHECK_MSG(prt_engine_build(net, &cfg, NULL, &e, err, sizeof err) == PRT_OK, "%s", err);
    CHECK_OK(prt_engine_serialize(e, NULL, 0, len));
    plan = malloc(*len);
    CHECK_OK(prt_engine_serialize(e, plan, *len, len));
    prt_engine_destroy(e);
    prt_network_destroy(net);
    return plan;
}

TEST(inspect_describes_a_plan)
{
    size_t len = 0;
    void *plan = make_plan(&len);
    prt_plan_info *pi = NULL;
    prt_plan_summary s = {.struct_size = sizeof s};
    prt_plan_tensor t = {.struct_size = sizeof t};
    prt_plan_layer l = {.struct_size = sizeof l};
    char err[512] = "";
    int32_t i, nb_in = 0, nb_out = 0, nb_act = 0, saw_v1 = 0, saw_v2 = 0;
    CHECK_MSG(prt_plan_info_read(plan, len, &pi, err, sizeof err) == PRT_OK, "%s", err);
    CHECK_OK(prt_plan_info_summary(pi, &s));
    CHECK_EQ_INT(s.read_version, 1);
    CHECK_EQ_INT(s.plan_bytes, len);
    CHECK(s.precision == PRT_PRECISION_FP32 && s.device == PRT_DEVICE_CPU);
    CHECK(strcmp(s.library_version, prt_version_string()) == 0);
    CHECK_EQ_INT(s.nb_layers, 2);
    CHECK(s.arena_bytes >= 4 * 8 * sizeof(float));
    for (i = 0; i < s.nb_tensors; i++) {
        CHECK_OK(prt_plan_info_tensor(pi, i, &t));
        if (t.role == PRT_TENSOR_INPUT) {
            nb_in++;
            CHECK(strcmp(t.name, "x") == 0 && t.dims.d[0] == -1 && t.min.d[0] == 1 && t.max.d[0] == 4);
        }
        if (t.role == PRT_TENSOR_OUTPUT) nb_out++;
        if (t.role == PRT_TENSOR_ACTIVATION) {
            nb_act++;
            CHECK(strcmp(t.name, "h") == 0 && t.bytes >= 4 * 8 * sizeof(float) && t.offset % 64 == 0);
        }
    }
    CHECK(nb_in == 1 && nb_out == 1 && nb_act == 1);
    for (i = 0; i < s.nb_layers; i++) {
        CHECK_OK(prt_plan_info_layer(pi, i, &l));
        CHECK(l.kind == PRT_LAYER_PLUGIN && strcmp(l.plugin, "Swish") == 0 && strcmp(l.owner, "static") == 0);
        CHECK(l.nb_inputs == 1 && l.nb_outputs == 1 && l.record_bytes > 0);
        if (strcmp(l.version, "1") == 0) saw_v1 = l.style == PRT_STYLE_BLOB && strcmp(l.name, "act1") == 0;
        if (strcmp(l.version, "2") == 0) {
            prt_plan_tensor in = {.struct_size = sizeof in};
            saw_v2 = l.style == PRT_STYLE_FIELD && strcmp(l.name, "act2") == 0;
            CHECK_OK(prt_plan_info_tensor(pi, l.inputs[0], &in));
            CHECK(strcmp(in.name, "x") == 0);
        }
    }
    CHECK(saw_v1 && saw_v2);
    prt_plan_info_destroy(pi);
    prt_plan_info_destroy(NULL);
    free(plan);
}

TEST(inspect_reads_up_to_struct_size_and_checks_indices)
{
    size_t len = 0;
    void *plan = make_plan(&len);
    prt_plan_info *pi = NULL;
    prt_plan_summary s;
    prt_plan_layer l;
    CHECK_OK(prt_plan_info_read(plan, len, &pi, NULL, 0));
    /* a caller whose struct ends before plan_bytes: the rest is never written */
    memset(&s, 0x5a, sizeof s);
    s.struct_size = (uint32_t)offsetof(prt_plan_summary, plan_bytes);
    CHECK_OK(prt_plan_info_summary(pi, &s));
    CHECK(s.weight_bytes == 0 && s.read_version == 1);
    CHECK(s.plan_bytes == 0x5a5a5a5a5a5a5a5aull && s.nb_layers == 0x5a5a5a5a);
    s.struct_size = 4;
    CHECK_EQ_INT(prt_plan_info_summary(pi, &s), PRT_STATUS_INVALID_ARGUMENT);
    l.struct_size = sizeof l;
    CHECK_EQ_INT(prt_plan_info_layer(pi, 2, &l), PRT_STATUS_INVALID_ARGUMENT);
    CHECK_EQ_INT(prt_plan_info_layer(pi, -1, &l), PRT_STATUS_INVALID_ARGUMENT);
    CHECK_EQ_INT(prt_plan_info_tensor(pi, 1000, NULL), PRT_STATUS_INVALID_ARGUMENT);
    prt_plan_info_destroy(pi);
    free(plan);
}

TEST(inspect_refuses_bad_plans)
{
    size_t len = 0, cut;
    uint8_t *plan = make_plan(&len);
    prt_plan_info *pi = (prt_plan_info *)(uintptr_t)0x9;
    char err[512];
    for (cut = 0; cut < len; cut += 7) {
        err[0] = 0;
        CHECK(prt_plan_info_read(plan, cut, &pi, err, sizeof err) != PRT_OK);
        CHECK(pi == (prt_plan_info *)(uintptr_t)0x9 && err[0] != 0);
    }
    plan[len / 2] ^= 0x10; /* checksum */
    CHECK(prt_plan_info_read(plan, len, &pi, err, sizeof err) != PRT_OK);
    CHECK_EQ_INT(prt_plan_info_load("/nonexistent/x.plan", &pi, err, sizeof err) == PRT_OK, 0);
    CHECK_STR_CONTAINS(err, "/nonexistent/x.plan");
    free(plan);
}
