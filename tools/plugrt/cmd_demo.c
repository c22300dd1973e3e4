/*
 * tools/plugrt/cmd_demo.c - `plugrt demo`: the whole flow on a tiny detector
 * tail. It builds the network described by examples/detector_tail.json
 * (Swish, ModulatedDeformConv2d, EfficientNMS_TRT; weights from .npy files
 * and inline values), writes the plan to a file, loads that file again with
 * a fresh registry, runs it on the CPU and, when a GPU is found, on CUDA,
 * and prints the outputs and the time per run.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "clidev.h"
#include "cliutil.h"
#include "plugrt/engine.h"
#include "plugrt/plugrt.h"

#define DEMO_NET "detector_tail.json"
#define DEMO_MAX_IO 16

static void demo_usage(FILE *f)
{
    fprintf(f, "usage: plugrt demo [--net NET.json] [--plan PATH] [--iterations N]\n"
               "  Builds NET.json (default: examples/" DEMO_NET ", a Swish + ModulatedDeformConv2d +\n"
               "  EfficientNMS detector tail), writes the plan to PATH (default: a temporary file, removed\n"
               "  afterwards), loads it again with a fresh registry, runs it on the CPU and, when a GPU is\n"
               "  found, on CUDA, and prints the outputs and the time per run (median of N runs, default 50).\n");
}

static int file_exists(const char *path)
{
    return access(path, R_OK) == 0;
}

/* The bundled description: beside the sources this file was built from,
 * else examples/ under the current folder. */
static const char *find_net(char *buf, size_t cap)
{
    const char *src = __FILE__, *slash = strrchr(src, '/');
    if (slash && src[0] == '/') {
        char *real;
        snprintf(buf, cap, "%.*s/../../examples/" DEMO_NET, (int)(slash - src), src);
        if (file_exists(buf)) {
            real = realpath(buf, NULL);
            if (real && strlen(real) < cap) strcpy(buf, real);
            free(real);
            return buf;
        }
    }
    snprintf(buf, cap, "examples/" DEMO_NET);
    if (file_exists(buf)) return buf;
    return NULL;
}

typedef struct demo_io {
    prt_io_desc desc;
    size_t bytes;
    void *host;
    void *dev;
    prt_dims dims; /* after the run */
} demo_io;

typedef struct demo_run {
    demo_io io[DEMO_MAX_IO];
    int32_t nio;
    double median_ms, min_ms, mean_ms;
} demo_run;

static void demo_run_free(demo_run *r)
{
    int32_t i;
    for (i = 0; i < r->nio; i++) {
        free(r->io[i].host);
        prt__clidev_free(r->io[i].dev);
    }
    memset(r, 0, sizeof *r);
}

/* A smooth, deterministic input: every element of every input. */
static void fill_input(demo_io *b)
{
    int64_t n = (int64_t)(b->bytes / prt_dtype_size(b->desc.dtype)), i;
    for (i = 0; i < n; i++) {
        double v = 1.5 * sin(0.37 * (double)i) * cos(0.11 * (double)i) + 0.25;
        switch (b->desc.dtype) {
        case PRT_DTYPE_F32: ((float *)b->host)[i] = (float)v; break;
        case PRT_DTYPE_F16: ((uint16_t *)b->host)[i] = prt_f32_to_f16((float)v); break;
        case PRT_DTYPE_I32: ((int32_t *)b->host)[i] = (int32_t)floor(v * 4); break;
        case PRT_DTYPE_I64: ((int64_t *)b->host)[i] = (int64_t)floor(v * 4); break;
        default: memset(b->host, 0, b->bytes); return;
        }
    }
}

/* Run the engine on `dev`: one run for the outputs, then `iters` timed
 * runs. Returns 0 on success after printing what failed otherwise. */
static int run_on(prt_engine *e, prt_device dev, int iters, demo_run *r)
{
    prt_context *ctx = NULL;
    prt_context_config cc;
    double *t = NULL, sum = 0;
    char err[512];
    int32_t i;
    int k, rc = 1;

    memset(r, 0, sizeof *r);
    prt_context_config_init(&cc);
    cc.device = dev;
    if (prt_context_create(e, &cc, &ctx) != PRT_OK) {
        fprintf(stderr, "plugrt demo: cannot create a %s context: %s\n", dev == PRT_DEVICE_CUDA ? "CUDA" : "CPU",
                prt_engine_last_error(e));
        return 1;
    }
    r->nio = prt_engine_nb_io(e);
    if (r->nio > DEMO_MAX_IO) {
        fprintf(stderr, "plugrt demo: the network has %d inputs and outputs; the demo handles %d\n", (int)r->nio,
                DEMO_MAX_IO);
        r->nio = 0;
        goto done;
    }
    for (i = 0; i < r->nio; i++) {
        demo_io *b = &r->io[i];
        if (prt_engine_io(e, i, &b->desc) != PRT_OK ||
            prt_context_buffer_size(ctx, b->desc.name, &b->bytes) != PRT_OK) {
            fprintf(stderr, "plugrt demo: %s\n", prt_context_last_error(ctx));
            goto done;
        }
        b->host = calloc(1, b->bytes ? b->bytes : 1);
        if (!b->host) {
            fprintf(stderr, "plugrt demo: out of memory\n");
            goto done;
        }
        if (b->desc.mode == PRT_IO_INPUT) fill_input(b);
        else memset(b->host, 0xff, b->bytes); /* poison: a missing write shows */
        if (dev == PRT_DEVICE_CUDA) {
            err[0] = 0;
            if (prt__clidev_alloc(b->bytes ? b->bytes : 1, &b->dev, err, sizeof err) != PRT_OK ||
                (b->bytes && prt__clidev_copy(b->dev, b->host, b->bytes, 1, err, sizeof err) != PRT_OK)) {
                fprintf(stderr, "plugrt demo: %s\n", err);
                goto done;
            }
        }
        if (prt_context_set_tensor(ctx, b->desc.name, dev == PRT_DEVICE_CUDA ? b->dev : b->host) != PRT_OK) {
            fprintf(stderr, "plugrt demo: %s\n", prt_context_last_error(ctx));
            goto done;
        }
    }
    t = calloc((size_t)iters + 1, sizeof *t);
    if (!t) {
        fprintf(stderr, "plugrt demo: out of memory\n");
        goto done;
    }
    /* The first run gives the outputs (and warms up); then the timed ones. */
    for (k = -1; k < iters; k++) {
        double t0 = prt__cliutil_now_ms();
        if (prt_context_execute(ctx) != PRT_OK) {
            fprintf(stderr, "plugrt demo: run failed: %s\n", prt_context_last_error(ctx));
            goto done;
        }
        if (k >= 0) t[k] = prt__cliutil_now_ms() - t0;
    }
    for (i = 0; i < r->nio; i++) {
        demo_io *b = &r->io[i];
        if (prt_context_get_shape(ctx, b->desc.name, &b->dims) != PRT_OK) b->dims = b->desc.dims;
        err[0] = 0;
        if (dev == PRT_DEVICE_CUDA && b->desc.mode == PRT_IO_OUTPUT && b->bytes &&
            prt__clidev_copy(b->host, b->dev, b->bytes, 0, err, sizeof err) != PRT_OK) {
            fprintf(stderr, "plugrt demo: %s\n", err);
            goto done;
        }
    }
    for (k = 0; k < iters; k++) sum += t[k];
    qsort(t, (size_t)iters, sizeof *t, prt__cliutil_cmp_double);
    r->min_ms = t[0];
    r->median_ms = iters % 2 ? t[iters / 2] : 0.5 * (t[iters / 2 - 1] + t[iters / 2]);
    r->mean_ms = sum / iters;
    rc = 0;
done:
    free(t);
    prt_context_destroy(ctx);
    return rc;
}

static const demo_io *find_io(const demo_run *r, const char *name)
{
    int32_t i;
    for (i = 0; i < r->nio; i++)
        if (strcmp(r->io[i].desc.name, name) == 0) return &r->io[i];
    return NULL;
}

/* Every output, shortened to its first values; the detections of an
 * EfficientNMS-style output set as a table. */
static void print_outputs(const demo_run *r)
{
    const demo_io *num = find_io(r, "num_detections"), *boxes = find_io(r, "detection_boxes"),
                  *scores = find_io(r, "detection_scores"), *classes = find_io(r, "detection_classes");
    int32_t i;
    for (i = 0; i < r->nio; i++) {
        const demo_io *b = &r->io[i];
        int64_t n = prt_dims_volume(&b->dims), j;
        char ds[160];
        if (b->desc.mode != PRT_IO_OUTPUT) continue;
        printf("  %-18s %-4s %-12s [", b->desc.name, prt_dtype_name(b->desc.dtype), prt_dims_str(&b->dims, ds, sizeof ds));
        for (j = 0; j < n && j < 6; j++) printf("%s%.4g", j ? ", " : "", prt__cliutil_elem(b->host, b->desc.dtype, j));
        printf("%s]\n", n > 6 ? ", ..." : "");
    }
    if (num && boxes && scores && classes && num->desc.dtype == PRT_DTYPE_I32) {
        int32_t nd = ((const int32_t *)num->host)[0];
        int64_t cap = prt_dims_volume(&scores->dims);
        printf("  detections (image 0): %d\n", (int)nd);
        for (i = 0; i < nd && i < cap && i < 10; i++)
            printf("    #%d  class %g  score %.3f  box [%.1f, %.1f, %.1f, %.1f]\n", (int)i,
                   prt__cliutil_elem(classes->host, classes->desc.dtype, i),
                   prt__cliutil_elem(scores->host, scores->desc.dtype, i),
                   prt__cliutil_elem(boxes->host, boxes->desc.dtype, 4 * i),
                   prt__cliutil_elem(boxes->host, boxes->desc.dtype, 4 * i + 1),
                   prt__cliutil_elem(boxes->host, boxes->desc.dtype, 4 * i + 2),
                   prt__cliutil_elem(boxes->host, boxes->desc.dtype, 4 * i + 3));
    }
}

static void print_timing(const demo_run *r, int iters)
{
    printf("  time per run: median %.4f ms, min %.4f ms, mean %.4f ms over %d runs (%.0f runs/s)\n", r->median_ms,
           r->min_ms, r->mean_ms, iters, r->median_ms > 0 ? 1000.0 / r->median_ms : 0.0);
}

/* Largest |cuda - cpu| over the float outputs; integer outputs must match. */
static void compare_runs(const demo_run *cpu, const demo_run *gpu)
{
    double worst = 0;
    int same_ints = 1;
    int32_t i;
    for (i = 0; i < cpu->nio && i < gpu->nio; i++) {
        const demo_io *a = &cpu->io[i], *b = &gpu->io[i];
        int64_t n = prt_dims_volume(&a->dims), j;
        int is_float = a->desc.dtype == PRT_DTYPE_F32 || a->desc.dtype == PRT_DTYPE_F16;
        if (a->desc.mode != PRT_IO_OUTPUT) continue;
        if (!prt_dims_equal(&a->dims, &b->dims)) {
            same_ints = 0;
            continue;
        }
        for (j = 0; j < n; j++) {
            double d = fabs(prt__cliutil_elem(a->host, a->desc.dtype, j) -
                            prt__cliutil_elem(b->host, b->desc.dtype, j));
            if (is_float) {
                if (d > worst || d != d) worst = d;
            } else if (d != 0) {
                same_ints = 0;
            }
        }
    }
    printf("  CUDA vs CPU: largest difference of float outputs %.3g; integer outputs %s\n", worst,
           same_ints ? "identical" : "DIFFER");
}

int prt_cli_demo(int argc, char **argv)
{
    const char *net_path = NULL, *plan_path = NULL;
    char net_buf[4096], tmp_plan[64], err[2048], name[256];
    int iters = 50, i, rc = 1, made_tmp = 0, ngpu;
    prt_network *net = NULL;
    prt_engine *e = NULL, *loaded = NULL;
    prt_registry *fresh = NULL;
    prt_builder_config cfg;
    demo_run cpu, gpu;
    double t0;
    FILE *f;
    long plan_size = 0;

    memset(&cpu, 0, sizeof cpu);
    memset(&gpu, 0, sizeof gpu);
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has_next = i + 1 < argc;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            demo_usage(stdout);
            return 0;
        } else if (strcmp(a, "--net") == 0 && has_next) {
            net_path = argv[++i];
        } else if ((strcmp(a, "--plan") == 0 || strcmp(a, "-o") == 0) && has_next) {
            plan_path = argv[++i];
        } else if (strcmp(a, "--iterations") == 0 && has_next) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end || end == argv[i] || v < 1 || v > 1000000) {
                fprintf(stderr, "plugrt demo: --iterations takes an integer in 1..1000000, got \"%s\"\n", argv[i]);
                return 2;
            }
            iters = (int)v;
        } else {
            fprintf(stderr, "plugrt demo: unknown or incomplete option \"%s\"\n", a);
            demo_usage(stderr);
            return 2;
        }
    }
    if (!net_path && !(net_path = find_net(net_buf, sizeof net_buf))) {
        fprintf(stderr, "plugrt demo: cannot find examples/" DEMO_NET " (run from the source tree or give --net)\n");
        return 1;
    }

    {
        struct stat st;
        if (stat(net_path, &st) == 0 && !S_ISREG(st.st_mode)) {
            fprintf(stderr, "plugrt demo: \"%s\" is not a regular file (expected a JSON network description)\n",
                    net_path);
            return 1;
        }
    }
    printf("plugrt %s demo\n\n", prt_version_string());

    /* 1. The network, from its JSON description. */
    err[0] = 0;
    if (prt_network_load_json(prt_registry_global(), net_path, &net, err, sizeof err) != PRT_OK) {
        fprintf(stderr, "plugrt demo: %s\n", err);
        goto done;
    }
    printf("network %s: %d inputs, %d layers, %d outputs\n", net_path, (int)prt_network_nb_inputs(net),
           (int)prt_network_nb_layers(net), (int)prt_network_nb_outputs(net));

    /* 2. Build (fp32, CPU target) and write the plan. */
    prt_builder_config_init(&cfg);
    t0 = prt__cliutil_now_ms();
    err[0] = 0;
    if (prt_engine_build(net, &cfg, prt_registry_global(), &e, err, sizeof err) != PRT_OK) {
        fprintf(stderr, "plugrt demo: build failed: %s\n", err);
        goto done;
    }
    printf("\nbuild: %.1f ms; %d layers, activations %llu bytes, workspace %llu bytes\n", prt__cliutil_now_ms() - t0,
           (int)prt_engine_nb_layers(e), (unsigned long long)prt_engine_arena_size(e),
           (unsigned long long)prt_engine_workspace_size(e));
    for (i = 0; i < prt_engine_nb_layers(e); i++) printf("  %d %s\n", i, prt_engine_layer_name(e, i));
    if (!plan_path) {
        int fd;
        const char *dir = getenv("TMPDIR");
        snprintf(tmp_plan, sizeof tmp_plan, "%.40s/plugrt-demo-XXXXXX", dir && dir[0] && strlen(dir) < 40 ? dir : "/tmp");
        fd = mkstemp(tmp_plan);
        if (fd < 0) {
            fprintf(stderr, "plugrt demo: cannot create a temporary file %s\n", tmp_plan);
            goto done;
        }
        close(fd);
        plan_path = tmp_plan;
        made_tmp = 1;
    }
    err[0] = 0;
    if (prt_engine_save(e, plan_path, err, sizeof err) != PRT_OK) {
        fprintf(stderr, "plugrt demo: %s\n", err);
        goto done;
    }
    f = fopen(plan_path, "rb");
    if (f) {
        fseek(f, 0, SEEK_END);
        plan_size = ftell(f);
        fclose(f);
    }
    printf("plan: %s (%ld bytes%s)\n", plan_path, plan_size, made_tmp ? ", temporary" : "");
    prt_engine_destroy(e);
    e = NULL;
    prt_network_destroy(net);
    net = NULL;

    /* 3. Load it again, finding every plugin in a fresh registry. */
    if (prt_registry_create(prt_registry_global(), &fresh) != PRT_OK) {
        fprintf(stderr, "plugrt demo: out of memory\n");
        goto done;
    }
    t0 = prt__cliutil_now_ms();
    err[0] = 0;
    if (prt_engine_load(fresh, plan_path, &loaded, err, sizeof err) != PRT_OK) {
        fprintf(stderr, "plugrt demo: %s\n", err);
        goto done;
    }
    printf("load: %.2f ms in a fresh registry\n", prt__cliutil_now_ms() - t0);

    /* 4. Run on the CPU, then on CUDA when there is a GPU. */
    printf("\nCPU:\n");
    if (run_on(loaded, PRT_DEVICE_CPU, iters, &cpu) != 0) goto done;
    for (i = 0; i < cpu.nio; i++)
        if (cpu.io[i].desc.mode == PRT_IO_INPUT) {
            char ds[160];
            printf("  input %s %s %s: 1.5 sin(0.37 i) cos(0.11 i) + 0.25\n", cpu.io[i].desc.name,
                   prt_dtype_name(cpu.io[i].desc.dtype), prt_dims_str(&cpu.io[i].dims, ds, sizeof ds));
        }
    print_outputs(&cpu);
    print_timing(&cpu, iters);

    ngpu = prt__clidev_count();
    if (ngpu <= 0) {
        printf("\nCUDA: no GPU found\n");
    } else {
        printf("\nCUDA (%s):\n", prt__clidev_name(0, name, sizeof name));
        if (run_on(loaded, PRT_DEVICE_CUDA, iters, &gpu) != 0) goto done;
        print_outputs(&gpu);
        print_timing(&gpu, iters);
        compare_runs(&cpu, &gpu);
    }
    rc = 0;
done:
    demo_run_free(&cpu);
    demo_run_free(&gpu);
    prt_engine_destroy(loaded);
    prt_engine_destroy(e);
    prt_network_destroy(net);
    prt_registry_destroy(fresh);
    if (made_tmp) remove(tmp_plan);
    return rc;
}
