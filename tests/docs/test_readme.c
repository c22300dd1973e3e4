/* Runs the plugin defined by the README's example (readme_example.c, taken
 * from README.md at configure time) through the registry and prt_op. */
#include "plugrt/plugrt.h"
#include "prt_test.h"

TEST(readme_example_plugin_runs)
{
    prt_op *op = NULL;
    prt_fields none = {NULL, 0, 0};
    prt_tensor_desc in = {PRT_DTYPE_F32, PRT_FORMAT_LINEAR, {2, 0, {2, 3}}};
    prt_op_config cfg = {sizeof cfg, PRT_ABI_VERSION, PRT_DEVICE_CPU, 0, 1, 0, NULL};
    float x[6] = {1, -2, 3.5f, 0, 7, -0.25f}, y[6];
    const void *ins[1] = {x};
    void *outs[1] = {y};
    int i;
    memset(y, 0xff, sizeof y);
    CHECK_OK(prt_op_create(prt_registry_global(), "Twice", "1", "", &none, &op));
    CHECK_OK(prt_op_configure(op, &in, 1, &cfg));
    CHECK_OK(prt_op_run(op, ins, outs));
    for (i = 0; i < 6; i++) CHECK(y[i] == 2 * x[i]);
    prt_op_destroy(op);
}

TEST(readme_example_builds_as_a_library)
{
    prt_registry *r = NULL;
    prt_library *lib = NULL;
    prt_op *op = NULL;
    prt_fields none = {NULL, 0, 0};
    prt_tensor_desc in = {PRT_DTYPE_F32, PRT_FORMAT_LINEAR, {1, 0, {4}}};
    prt_op_config cfg = {sizeof cfg, PRT_ABI_VERSION, PRT_DEVICE_CPU, 0, 1, 0, NULL};
    float x[4] = {1, 2, -3, 0.5f}, y[4];
    const void *ins[1] = {x};
    void *outs[1] = {y};
    const char *owner = NULL;
    const prt_plugin_creator *c = NULL;
    int i;
    CHECK_OK(prt_registry_create(NULL, &r));
    CHECK_OK(prt_registry_load_library(r, PRT_README_LIB_PATH, &lib));
    CHECK_OK(prt_registry_find(r, "Twice", "1", "", &c, &owner));
    CHECK(owner && strcmp(owner, "twice") == 0);
    CHECK_OK(prt_op_create(r, "Twice", "1", "", &none, &op));
    CHECK_OK(prt_op_configure(op, &in, 1, &cfg));
    CHECK_OK(prt_op_run(op, ins, outs));
    for (i = 0; i < 4; i++) CHECK(y[i] == 2 * x[i]);
    prt_op_destroy(op);
    prt_registry_destroy(r);
}
