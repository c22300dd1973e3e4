/* The template plugins: Scale (field style) and Bias (blob style, weights on
 * the device) against float64 references, blob round trips and bad blobs,
 * CUDA against the CPU where a GPU exists, and the same sources loaded as a
 * plugin library. */
#include <stdlib.h>

#include "plugrt/plugrt.h"
#include "prt_test.h"
#ifdef PLUGRT_HAVE_CUDA
#include <cuda_runtime.h>
#endif

static const float k_bias[3] = {0.5f, -1.25f, 8.0f};

static prt_op *make_bias(prt_registry *r)
{
    prt_op *op = NULL;
    prt_field f = {.name = "bias", .data = k_bias, .type = PRT_FIELD_FLOAT32, .count = 3};
    prt_fields fc = {&f, 1, 0};
    CHECK_OK(prt_op_create(r, "Bias", "1", "template", &fc, &op));
    return op;
}

/* x [2, 3, 2, 2] through Bias on `dev`, checked against float64. */
static void run_bias(prt_op *op, prt_device dev)
{
    prt_tensor_desc in = {PRT_DTYPE_F32, PRT_FORMAT_LINEAR, {4, 0, {2, 3, 2, 2}}};
    prt_op_config cfg = {sizeof cfg, PRT_ABI_VERSION, dev, 0, 1, 0, NULL};
    float x[24], y[24];
    void *dx = x, *dy = y;
    const void *ins[1];
    void *outs[1];
    int i;
    for (i = 0; i < 24; i++) x[i] = (float)(i * 0.37 - 3.0);
    memset(y, 0xff, sizeof y);
#ifdef PLUGRT_HAVE_CUDA
    if (dev == PRT_DEVICE_CUDA) {
        CHECK(cudaMalloc(&dx, sizeof x) == cudaSuccess && cudaMalloc(&dy, sizeof y) == cudaSuccess);
        CHECK(cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice) == cudaSuccess);
    }
#endif
    ins[0] = dx;
    outs[0] = dy;
    CHECK_OK(prt_op_configure(op, &in, 1, &cfg));
    CHECK_OK(prt_op_run(op, ins, outs));
#ifdef PLUGRT_HAVE_CUDA
    if (dev == PRT_DEVICE_CUDA) {
        CHECK(cudaMemcpy(y, dy, sizeof y, cudaMemcpyDeviceToHost) == cudaSuccess);
        cudaFree(dx);
        cudaFree(dy);
    }
#endif
    for (i = 0; i < 24; i++) CHECK_NEAR(y[i], (double)x[i] + (double)k_bias[(i / 4) % 3], 1e-6);
}

TEST(template_bias_cpu_matches_reference)
{
    prt_op *op = make_bias(prt_registry_global());
    run_bias(op, PRT_DEVICE_CPU);
    prt_op_destroy(op);
}

TEST(template_bias_cuda_matches_reference)
{
    prt_op *op;
    if (!prt_test_have_cuda()) {
        SKIP("no CUDA device");
        return;
    }
    op = make_bias(prt_registry_global());
    run_bias(op, PRT_DEVICE_CUDA);
    prt_op_destroy(op);
}

TEST(template_bias_blob_round_trip_and_bad_blobs)
{
    prt_op *op = make_bias(prt_registry_global()), *back = NULL;
    uint8_t buf[512];
    size_t n = 0, k;
    CHECK_OK(prt_op_serialize(op, buf, sizeof buf, &n));
    CHECK_OK(prt_op_deserialize(prt_registry_global(), buf, n, &back));
    run_bias(back, PRT_DEVICE_CPU);
    prt_op_destroy(back);
    /* Every truncation fails cleanly. */
    for (k = 0; k < n; k++) {
        back = NULL;
        CHECK(prt_op_deserialize(prt_registry_global(), buf, k, &back) != PRT_OK);
        CHECK(back == NULL);
    }
    prt_op_destroy(op);
}

TEST(template_bias_refuses_wrong_channels)
{
    prt_op *op = make_bias(prt_registry_global());
    prt_tensor_desc in = {PRT_DTYPE_F32, PRT_FORMAT_LINEAR, {2, 0, {2, 4}}};
    prt_op_config cfg = {sizeof cfg, PRT_ABI_VERSION, PRT_DEVICE_CPU, 0, 1, 0, NULL};
    CHECK(prt_op_configure(op, &in, 1, &cfg) == PRT_STATUS_SHAPE_MISMATCH);
    prt_op_destroy(op);
}

TEST(template_scale_runs)
{
    prt_op *op = NULL;
    float alpha = -2.5f, x[4] = {1, 2, -3, 0.25f}, y[4];
    prt_field f = {.name = "alpha", .data = &alpha, .type = PRT_FIELD_FLOAT32, .count = 1};
    prt_fields fc = {&f, 1, 0};
    prt_tensor_desc in = {PRT_DTYPE_F32, PRT_FORMAT_LINEAR, {1, 0, {4}}};
    prt_op_config cfg = {sizeof cfg, PRT_ABI_VERSION, PRT_DEVICE_CPU, 0, 1, 0, NULL};
    const void *ins[1] = {x};
    void *outs[1] = {y};
    int i;
    CHECK_OK(prt_op_create(prt_registry_global(), "Scale", "1", "template", &fc, &op));
    CHECK_OK(prt_op_configure(op, &in, 1, &cfg));
    CHECK_OK(prt_op_run(op, ins, outs));
    for (i = 0; i < 4; i++) CHECK_NEAR(y[i], -2.5 * (double)x[i], 1e-6);
    prt_op_destroy(op);
}

TEST(template_sources_as_a_plugin_library)
{
    prt_registry *r = NULL;
    prt_library *lib = NULL;
    const char *owner = NULL;
    const prt_plugin_creator *c = NULL;
    prt_op *op;
    CHECK_OK(prt_registry_create(NULL, &r));
    CHECK_OK(prt_registry_load_library(r, PRT_TEMPLATE_LIB_PATH, &lib));
    CHECK_OK(prt_registry_find(r, "Bias", "1", "template", &c, &owner));
    CHECK(owner && strcmp(owner, "prt_template_lib") == 0);
    CHECK_OK(prt_registry_find(r, "Scale", "1", "template", &c, &owner));
    op = make_bias(r);
    run_bias(op, PRT_DEVICE_CPU);
    if (prt_test_have_cuda()) run_bias(op, PRT_DEVICE_CUDA);
    prt_op_destroy(op);
    prt_registry_destroy(r);
}
