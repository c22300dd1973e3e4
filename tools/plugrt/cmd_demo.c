/*
 * tools/plugrt/cmd_demo.c - `plugrt demo`: list the registered plugins, run
 * Swish version 1 and 2 on a small tensor on the CPU and, when a GPU is
 * found, on CUDA, and print inputs and results.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/device.h"
#include "cli.h"
#include "plugrt/plugrt.h"

#define DEMO_N 12 /* [1, 2, 2, 3] */

static const float demo_beta = 1.5f;
static const float demo_weights[2] = {1.0f, 0.5f};

static void print_row(const char *label, const float *v, int n)
{
    int i;
    printf("  %-40s", label);
    for (i = 0; i < n; i++) printf(" %8.4f", v[i]);
    printf("\n");
}

static int list_plugins(void)
{
    prt_registry *g = prt_registry_global();
    prt_creator_info *info;
    int32_t nb = 0, i;
    if (prt_registry_list(g, NULL, 0, &nb) != PRT_OK) {
        fprintf(stderr, "plugrt demo: cannot list plugins: %s\n", prt_registry_last_error(g));
        return 1;
    }
    info = calloc((size_t)(nb ? nb : 1), sizeof *info);
    if (!info) {
        fprintf(stderr, "plugrt demo: out of memory\n");
        return 1;
    }
    if (prt_registry_list(g, info, nb, &nb) != PRT_OK) {
        fprintf(stderr, "plugrt demo: cannot list plugins: %s\n", prt_registry_last_error(g));
        free(info);
        return 1;
    }
    printf("registered plugins (%d):\n", (int)nb);
    printf("  %-12s %-20s %-8s %-6s %s\n", "namespace", "name", "version", "style", "owner");
    for (i = 0; i < nb; i++) {
        const prt_plugin_creator *c = info[i].creator;
        printf("  %-12s %-20s %-8s %-6s %s\n", c->plugin_namespace && c->plugin_namespace[0] ? c->plugin_namespace : "\"\"",
               c->name, c->version, c->style == PRT_STYLE_BLOB ? "blob" : "field", info[i].owner);
    }
    free(info);
    return 0;
}

static prt_op *make_swish(const char *version, int with_weights)
{
    prt_op *op = NULL;
    prt_field f[2] = {{"beta", &demo_beta, PRT_FIELD_FLOAT32, 0, 1},
                      {"weights", demo_weights, PRT_FIELD_FLOAT32, 0, 2}};
    prt_fields fc = {f, with_weights ? 2 : 1, 0};
    if (prt_op_create(prt_registry_global(), "Swish", version, "", &fc, &op) != PRT_OK) {
        fprintf(stderr, "plugrt demo: Swish v%s: %s\n", version, prt_op_last_error(NULL));
        return NULL;
    }
    return op;
}

static prt_tensor_desc demo_desc(void)
{
    prt_tensor_desc d;
    memset(&d, 0, sizeof d);
    d.dtype = PRT_DTYPE_F32;
    d.format = PRT_FORMAT_LINEAR;
    d.dims.nb = 4;
    d.dims.d[0] = 1;
    d.dims.d[1] = 2;
    d.dims.d[2] = 2;
    d.dims.d[3] = 3;
    return d;
}

/* Run one op on the device; y receives the result (host memory). */
static int run_op(prt_op *op, prt_device dev, const float *x, float *y)
{
    prt_tensor_desc in = demo_desc();
    prt_op_config cfg;
    char err[512];
    const void *ins[1];
    void *outs[1];
    void *dx = NULL, *dy = NULL;
    int rc = 1;
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.abi_version = PRT_ABI_VERSION;
    cfg.device = dev;
    cfg.nb_threads = 0;
    if (prt_op_configure(op, &in, 1, &cfg) != PRT_OK) {
        fprintf(stderr, "plugrt demo: configure: %s\n", prt_op_last_error(op));
        return 1;
    }
    if (dev == PRT_DEVICE_CPU) {
        ins[0] = x;
        outs[0] = y;
        if (prt_op_run(op, ins, outs) != PRT_OK) {
            fprintf(stderr, "plugrt demo: run: %s\n", prt_op_last_error(op));
            return 1;
        }
        return 0;
    }
    if (prt__cuda_malloc(sizeof(float) * DEMO_N, &dx, err, sizeof err) != PRT_OK ||
        prt__cuda_malloc(sizeof(float) * DEMO_N, &dy, err, sizeof err) != PRT_OK ||
        prt__cuda_copy(dx, x, sizeof(float) * DEMO_N, PRT__H2D, err, sizeof err) != PRT_OK) {
        fprintf(stderr, "plugrt demo: %s\n", err);
        goto done;
    }
    ins[0] = dx;
    outs[0] = dy;
    if (prt_op_run(op, ins, outs) != PRT_OK) {
        fprintf(stderr, "plugrt demo: run on CUDA: %s\n", prt_op_last_error(op));
        goto done;
    }
    if (prt__cuda_stream_sync(NULL, err, sizeof err) != PRT_OK ||
        prt__cuda_copy(y, dy, sizeof(float) * DEMO_N, PRT__D2H, err, sizeof err) != PRT_OK) {
        fprintf(stderr, "plugrt demo: %s\n", err);
        goto done;
    }
    rc = 0;
done:
    prt__cuda_free(dx);
    prt__cuda_free(dy);
    return rc;
}

static int run_swish(prt_device dev, const float *x, float cpu_out[2][DEMO_N])
{
    static const char *labels[2] = {"Swish v1 (blob, beta 1.5)", "Swish v2 (field, beta 1.5, w [1, 0.5])"};
    float y[DEMO_N];
    int k;
    for (k = 0; k < 2; k++) {
        prt_op *op = make_swish(k ? "2" : "1", k);
        int i, rc;
        if (!op) return 1;
        for (i = 0; i < DEMO_N; i++) y[i] = NAN;
        rc = run_op(op, dev, x, y);
        prt_op_destroy(op);
        if (rc) return 1;
        print_row(labels[k], y, DEMO_N);
        if (dev == PRT_DEVICE_CPU) {
            memcpy(cpu_out[k], y, sizeof y);
        } else {
            double worst = 0;
            for (i = 0; i < DEMO_N; i++) {
                double d = fabs((double)y[i] - cpu_out[k][i]);
                if (d > worst) worst = d;
            }
            printf("  %-40s %.3g\n", "  max |cuda - cpu|", worst);
        }
    }
    return 0;
}

int prt_cli_demo(int argc, char **argv)
{
    float x[DEMO_N], cpu_out[2][DEMO_N];
    int i, ngpu;
    char name[256];
    if (argc > 1) {
        if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
            printf("usage: plugrt demo\n  lists the registered plugins and runs Swish v1 and v2 on the CPU\n"
                   "  and, when a GPU is found, on CUDA\n");
            return 0;
        }
        fprintf(stderr, "plugrt demo: unexpected argument \"%s\" (usage: plugrt demo)\n", argv[1]);
        return 2;
    }
    printf("plugrt %s demo\n\n", prt_version_string());
    if (list_plugins() != 0) return 1;

    for (i = 0; i < DEMO_N; i++) x[i] = -3.0f + 0.5f * (float)i;
    printf("\nSwish y = w[c] * x * sigmoid(beta * x) on x of shape [1, 2, 2, 3] (channel = dim 1)\n");
    printf("CPU:\n");
    print_row("x", x, DEMO_N);
    if (run_swish(PRT_DEVICE_CPU, x, cpu_out) != 0) return 1;

    ngpu = prt__cuda_device_count();
    if (ngpu <= 0) {
        printf("\nCUDA: no GPU found\n");
        return 0;
    }
    printf("\nCUDA (%s):\n", prt__cuda_device_name(0, name, sizeof name));
    print_row("x", x, DEMO_N);
    if (run_swish(PRT_DEVICE_CUDA, x, cpu_out) != 0) return 1;
    return 0;
}
