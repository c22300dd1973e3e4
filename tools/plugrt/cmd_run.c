/* tools/plugrt/cmd_run.c - `plugrt run model.plan|model.onnx ...`: load a
 * plan (or build an ONNX model in memory), run it, time it. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "clionnx.h"
#include "clidev.h"
#include "cliutil.h"
#include "plugrt/engine.h"
#include "plugrt/npy.h"


static void run_usage(FILE *f)
{
    fprintf(f,
            "usage: plugrt run model.plan|model.onnx [--input name=file.npy ...] [--output name=file.npy ...]\n"
            "                  [--shape name=AxBxC ...] [--device cpu|cuda] [--iterations N] [--warmup N]\n"
            "                  [--threads N] [--json] [--load LIB ...] [--profile name:MIN,OPT,MAX ...]\n"
            "                  [--strict-owner] [--no-fuse] [--layer-times]\n"
            "  An ONNX model (told apart by content) is imported and built in memory first, for the\n"
            "  --device given (default cpu), with the --profile ranges of its dynamic inputs.\n"
            "  Inputs without --input get uniform random values in [-1, 1) (fixed seed). An --input .npy file\n"
            "  sets its input's shape and is converted to its type (integer and bool inputs need exact values);\n"
            "  --output writes that output, with the extents of the last run, as a .npy file.\n"
            "  --shape sets a dynamic input's extents (default: the profile's opt). A shape-value input\n"
            "  takes its values from its --input file (default: the profile's opt values).\n"
            "  --load loads a plugin library first; a plugin that a different library (or the built-in set)\n"
            "  provides than the one the plan was built with is a warning, or an error with --strict-owner.\n"
            "  Prints the outputs' shapes and a few values, then latency min / median / p90 / p99 / mean\n"
            "  and throughput over --iterations runs after --warmup runs (CUDA: GPU time from events too).\n"
            "  --layer-times then runs --iterations more times with a layer profiler and prints the mean\n"
            "  time of each layer and of each plugin (prt_context_set_profiler).\n"
            "  --no-fuse imports an ONNX model without layer fusion (docs/onnx.md).\n");
}

typedef struct io_buf {
    const char *name;
    prt_io_desc desc;
    size_t bytes;
    void *host;
    void *dev; /* CUDA contexts */
} io_buf;

/* --layer-times: per layer of a run (in run order) its total time over the
 * profiled runs. */
typedef struct layer_times {
    int32_t n, cap, at; /* at: position within the current run */
    struct lt {
        char name[128], plugin[96];
        double ms;
        int32_t layers; /* per-plugin totals: how many layers */
    } *v;
    int bad; /* out of memory: reported, not printed */
} layer_times;

static void on_layer(void *user, const char *layer, const char *plugin, double ms)
{
    layer_times *t = user;
    if (t->at == t->n) {
        if (t->n == t->cap) {
            int32_t nc = t->cap ? t->cap * 2 : 64;
            struct lt *nv = realloc(t->v, (size_t)nc * sizeof *nv);
            if (!nv) {
                t->bad = 1;
                return;
            }
            t->v = nv;
            t->cap = nc;
        }
        memset(&t->v[t->n], 0, sizeof t->v[t->n]);
        snprintf(t->v[t->n].name, sizeof t->v[t->n].name, "%s", layer);
        snprintf(t->v[t->n].plugin, sizeof t->v[t->n].plugin, "%s", plugin);
        t->n++;
    }
    if (t->at < t->n) t->v[t->at].ms += ms;
    t->at++;
}

static int cmp_lt(const void *a, const void *b)
{
    double x = ((const struct lt *)a)->ms, y = ((const struct lt *)b)->ms;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* Mean ms per layer, slowest first, then per plugin; `runs` runs. */
static void print_layer_times(layer_times *t, int runs, int json)
{
    double total = 0;
    int32_t i, j, np = 0;
    struct lt *per = calloc((size_t)t->n + 1, sizeof *per);
    if (!per || t->bad) {
        fprintf(stderr, "plugrt run: out of memory for --layer-times\n");
        free(per);
        return;
    }
    for (i = 0; i < t->n; i++) {
        t->v[i].ms /= runs;
        total += t->v[i].ms;
        for (j = 0; j < np && strcmp(per[j].plugin, t->v[i].plugin) != 0; j++) {}
        if (j == np) snprintf(per[np++].plugin, sizeof per[0].plugin, "%s", t->v[i].plugin);
        per[j].ms += t->v[i].ms;
        per[j].layers++;
    }
    qsort(t->v, (size_t)t->n, sizeof *t->v, cmp_lt);
    qsort(per, (size_t)np, sizeof *per, cmp_lt);
    if (json) {
        printf("  \"layer_times_ms\": {\"runs\": %d, \"total\": %.6f, \"layers\": [", runs, total);
        for (i = 0; i < t->n; i++)
            printf("%s\n    {\"layer\": \"%s\", \"plugin\": \"%s\", \"ms\": %.6f}", i ? "," : "", t->v[i].name,
                   t->v[i].plugin, t->v[i].ms);
        printf("\n  ]},\n");
    } else {
        printf("layer times over %d profiled runs (mean ms; a profiled run waits after each layer): total %.4f\n",
               runs, total);
        printf("  by plugin:\n");
        for (i = 0; i < np; i++)
            printf("    %-28s %4d layers %10.4f ms %5.1f%%\n", per[i].plugin, (int)per[i].layers,
                   per[i].ms, total > 0 ? 100.0 * per[i].ms / total : 0.0);
        printf("  slowest layers:\n");
        for (i = 0; i < t->n && i < 20; i++)
            printf("    %-40s %-22s %10.4f ms %5.1f%%\n", t->v[i].name, t->v[i].plugin, t->v[i].ms,
                   total > 0 ? 100.0 * t->v[i].ms / total : 0.0);
    }
    free(per);
}

typedef struct stats {
    double min, median, p90, p99, mean;
} stats;

static stats summarize(double *v, int n)
{
    stats s;
    int i;
    double sum = 0;
    memset(&s, 0, sizeof s);
    if (n <= 0) return s;
    qsort(v, (size_t)n, sizeof *v, prt__cliutil_cmp_double);
    for (i = 0; i < n; i++) sum += v[i];
    s.min = v[0];
    s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    s.p90 = v[(int)ceil(0.90 * n) - 1];
    s.p99 = v[(int)ceil(0.99 * n) - 1];
    s.mean = sum / n;
    return s;
}

/* Random values of the tensor's type; integers in [-8, 8), bools 0/1. */
static void fill_random(void *buf, prt_dtype t, int64_t n, uint64_t *seed)
{
    int64_t i;
    for (i = 0; i < n; i++) {
        double u;
        *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
        u = (double)(*seed >> 11) / 9007199254740992.0 * 2.0 - 1.0;
        switch (t) {
        case PRT_DTYPE_F32: ((float *)buf)[i] = (float)u; break;
        case PRT_DTYPE_F16: ((uint16_t *)buf)[i] = prt_f32_to_f16((float)u); break;
        case PRT_DTYPE_BF16: ((uint16_t *)buf)[i] = prt_f32_to_bf16((float)u); break;
        case PRT_DTYPE_I8: ((int8_t *)buf)[i] = (int8_t)floor(u * 8); break;
        case PRT_DTYPE_U8: ((uint8_t *)buf)[i] = (uint8_t)floor((u + 1) * 8); break;
        case PRT_DTYPE_I32: ((int32_t *)buf)[i] = (int32_t)floor(u * 8); break;
        case PRT_DTYPE_I64: ((int64_t *)buf)[i] = (int64_t)floor(u * 8); break;
        case PRT_DTYPE_BOOL: ((uint8_t *)buf)[i] = u >= 0; break;
        default: break;
        }
    }
}

/* Copy the array read from `path` into the input buffer, converting the
 * elements to the input's type (floats round; integer and bool targets need
 * every value to be representable). The shapes were checked before. */
static int npy_load_into(const char *path, const prt_npy_array *a, io_buf *b)
{
    size_t want = (size_t)a->count * prt_dtype_size(b->desc.dtype);
    if (want != b->bytes) {
        fprintf(stderr, "plugrt run: --input %s=%s: the file holds %lld elements (%zu bytes as %s), but the input needs "
                "%zu bytes\n", b->name, path, (long long)a->count, want, prt_dtype_name(b->desc.dtype), b->bytes);
        return 0;
    }
    if (prt_npy_convert(a, b->desc.dtype, b->host, b->bytes) != PRT_OK) {
        fprintf(stderr, "plugrt run: --input %s=%s: cannot convert %s elements to the input's %s: %s\n", b->name, path,
                prt_npy_type_descr(a->type), prt_dtype_name(b->desc.dtype), prt_last_error(a));
        return 0;
    }
    return 1;
}

static int npy_save(const char *path, const io_buf *b, const prt_dims *dims)
{
    prt_npy_array a;
    int64_t n = prt_dims_volume(dims);
    uint64_t nb;
    memset(&a, 0, sizeof a);
    if (prt_npy_type_from_dtype(b->desc.dtype, &a.type) != PRT_OK) {
        fprintf(stderr, "plugrt run: --output %s=%s: the output is %s, which a .npy file cannot hold\n", b->name, path,
                prt_dtype_name(b->desc.dtype));
        return 0;
    }
    if (n < 0 || (size_t)n > b->bytes / (prt_dtype_size(b->desc.dtype) ? prt_dtype_size(b->desc.dtype) : 1) ||
        (nb = (uint64_t)n * prt_dtype_size(b->desc.dtype)) > b->bytes) {
        char ds[160];
        fprintf(stderr, "plugrt run: --output %s=%s: the output's shape %s does not fit its %zu-byte buffer\n", b->name,
                path, prt_dims_str(dims, ds, sizeof ds), b->bytes);
        return 0;
    }
    a.shape = *dims;
    a.count = n;
    a.nbytes = (size_t)nb;
    a.data = b->host;
    if (prt_npy_write_file(&a, path) != PRT_OK) {
        fprintf(stderr, "plugrt run: --output %s=%s: %s\n", b->name, path, prt_last_error(&a));
        return 0;
    }
    return 1;
}

/* The io index of the `name=...` argument's name, or -1 after a message. */
static int32_t arg_io(prt_engine *e, const char *opt, char *arg, const char *plan, prt_io_mode mode, char **value)
{
    char *eq = strchr(arg, '=');
    int32_t k;
    prt_io_desc d;
    if (!eq || eq == arg || !eq[1]) {
        fprintf(stderr, "plugrt run: %s takes name=file.npy, got \"%s\"\n", opt, arg);
        return -2;
    }
    *eq = 0;
    k = prt_engine_find_io(e, arg);
    if (k < 0 || prt_engine_io(e, k, &d) != PRT_OK || d.mode != mode) {
        fprintf(stderr, "plugrt run: %s names \"%s\", which is not an %s of %s\n", opt, arg,
                mode == PRT_IO_INPUT ? "input" : "output", plan);
        *eq = '=';
        return -1;
    }
    *eq = '=';
    *value = eq + 1;
    return k;
}

static int parse_shape(const char *s, prt_dims *d)
{
    char *e;
    memset(d, 0, sizeof *d);
    while (*s) {
        long long v;
        if (d->nb == PRT_MAX_DIMS) return 0;
        v = strtoll(s, &e, 10);
        if (e == s || v < 0) return 0;
        d->d[d->nb++] = v;
        s = e;
        if (*s == 'x') s++;
        else if (*s) return 0;
    }
    return d->nb > 0;
}

/* A shape-value input: its values are those of the buffer (from --input),
 * or the profile's opt values (written into the buffer) when `opt` is given. */
static int set_shape_values(prt_context *ctx, io_buf *b, const prt_dims *opt)
{
    int64_t v[PRT_MAX_DIMS];
    int32_t k, n = (int32_t)(b->bytes / prt_dtype_size(b->desc.dtype));
    for (k = 0; k < n && k < PRT_MAX_DIMS; k++) {
        if (opt) v[k] = opt->d[k];
        else if (b->desc.dtype == PRT_DTYPE_I32) v[k] = ((const int32_t *)b->host)[k];
        else v[k] = ((const int64_t *)b->host)[k];
        if (opt && b->desc.dtype == PRT_DTYPE_I32) ((int32_t *)b->host)[k] = (int32_t)v[k];
        else if (opt) ((int64_t *)b->host)[k] = v[k];
    }
    if (prt_context_set_input_values(ctx, b->name, v, n) != PRT_OK) {
        fprintf(stderr, "plugrt run: %s\n", prt_context_last_error(ctx));
        return 0;
    }
    return 1;
}

int prt_cli_run(int argc, char **argv)
{
    const char *plan = NULL, *dev_name = NULL;
    char **in_args, **out_args, **shape_args;
    int nin = 0, nout = 0, nshape = 0, iters = 100, warmup = 10, threads = 0, json = 0, i, k, rc = 1, layer_prof = 0;
    layer_times lt = {0};
    prt_registry *reg = NULL;
    prt_engine *e = NULL;
    prt_context *ctx = NULL;
    prt_context_config cc;
    io_buf *bufs = NULL;
    int32_t nio = 0, *in_io = NULL;
    prt_npy_array *in_arr = NULL;
    char **in_file = NULL;
    double *wall = NULL, *gpu = NULL;
    char err[2048];
    uint64_t seed = 42;
    prt_profile_range *ranges = NULL;
    int nb_ranges = 0;
    prt_device device;
    void *ev0 = NULL, *ev1 = NULL; /* CUDA: events timing each run on the GPU */

    ranges = calloc((size_t)argc + 1, sizeof *ranges);
    in_args = calloc((size_t)argc + 1, sizeof *in_args);
    out_args = calloc((size_t)argc + 1, sizeof *out_args);
    shape_args = calloc((size_t)argc + 1, sizeof *shape_args);
    if (!ranges || !in_args || !out_args || !shape_args || prt_registry_create(prt_registry_global(), &reg) != PRT_OK) {
        fprintf(stderr, "plugrt run: out of memory\n");
        goto done;
    }
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has_next = i + 1 < argc;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            run_usage(stdout);
            rc = 0;
            goto done;
        } else if (strcmp(a, "--input") == 0 && has_next) {
            in_args[nin++] = argv[++i];
        } else if (strcmp(a, "--output") == 0 && has_next) {
            out_args[nout++] = argv[++i];
        } else if (strcmp(a, "--shape") == 0 && has_next) {
            shape_args[nshape++] = argv[++i];
        } else if (strcmp(a, "--device") == 0 && has_next) {
            dev_name = argv[++i];
            if (strcmp(dev_name, "cpu") != 0 && strcmp(dev_name, "cuda") != 0) {
                fprintf(stderr, "plugrt run: --device takes cpu or cuda, got \"%s\"\n", dev_name);
                rc = 2;
                goto done;
            }
        } else if ((strcmp(a, "--iterations") == 0 || strcmp(a, "--warmup") == 0 || strcmp(a, "--threads") == 0) &&
                   has_next) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            int lo = strcmp(a, "--iterations") == 0 ? 1 : 0;
            if (*end || end == argv[i] || v < lo || v > 100000000) {
                fprintf(stderr, "plugrt run: %s takes an integer >= %d, got \"%s\"\n", a, lo, argv[i]);
                rc = 2;
                goto done;
            }
            if (strcmp(a, "--iterations") == 0) iters = (int)v;
            else if (strcmp(a, "--warmup") == 0) warmup = (int)v;
            else threads = (int)v;
        } else if (strcmp(a, "--profile") == 0 && has_next) {
            if (!prt__clionnx_parse_profile(argv[++i], &ranges[nb_ranges])) {
                fprintf(stderr, "plugrt run: --profile takes name:MIN,OPT,MAX with dims joined by 'x', got \"%s\"\n",
                        argv[i]);
                rc = 2;
                goto done;
            }
            nb_ranges++;
        } else if (strcmp(a, "--json") == 0) {
            json = 1;
        } else if (strcmp(a, "--layer-times") == 0) {
            layer_prof = 1;
        } else if (strcmp(a, "--no-fuse") == 0) {
            prt__clionnx_no_fuse = 1;
        } else if (strcmp(a, "--load") == 0 && has_next) {
            prt_library *lib = NULL;
            if (prt_registry_load_library(reg, argv[++i], &lib) != PRT_OK) {
                fprintf(stderr, "plugrt run: %s\n", prt_registry_last_error(reg));
                goto done;
            }
        } else if (strcmp(a, "--strict-owner") == 0) {
            /* Plans are read through reg, and so through the global registry it falls back to. */
            if (prt_registry_set_owner_policy(reg, PRT_OWNER_REFUSE) != PRT_OK) goto done;
        } else if (a[0] == '-') {
            fprintf(stderr, "plugrt run: unknown or incomplete option \"%s\"\n", a);
            run_usage(stderr);
            rc = 2;
            goto done;
        } else if (!plan) {
            plan = a;
        } else {
            fprintf(stderr, "plugrt run: more than one plan given\n");
            rc = 2;
            goto done;
        }
    }
    if (!plan) {
        run_usage(stderr);
        rc = 2;
        goto done;
    }
    {
        struct stat st;
        if (stat(plan, &st) == 0 && !S_ISREG(st.st_mode)) {
            fprintf(stderr, "plugrt run: \"%s\" is not a regular file (expected a plan)\n", plan);
            goto done;
        }
    }
    err[0] = 0;
    if (prt__clionnx_is_onnx(plan)) {
        prt_builder_config bc;
        prt_network *net = NULL;
        prt_builder_config_init(&bc);
        bc.device = dev_name && strcmp(dev_name, "cuda") == 0 ? PRT_DEVICE_CUDA : PRT_DEVICE_CPU;
        bc.nb_ranges = nb_ranges;
        bc.ranges = ranges;
        if (!prt__clionnx_import(reg, plan, &bc, &net, err, sizeof err)) {
            fprintf(stderr, "plugrt run: %s\n", err);
            goto done;
        }
        if (prt_engine_build(net, &bc, reg, &e, err, sizeof err) != PRT_OK) {
            prt_network_destroy(net);
            fprintf(stderr, "plugrt run: %s: %s\n", plan, err);
            goto done;
        }
        prt_network_destroy(net);
    } else if (prt_engine_load(reg, plan, &e, err, sizeof err) != PRT_OK) {
        fprintf(stderr, "plugrt run: %s\n", err);
        goto done;
    }
    device = dev_name ? (strcmp(dev_name, "cuda") == 0 ? PRT_DEVICE_CUDA : PRT_DEVICE_CPU) : prt_engine_device(e);
    prt_context_config_init(&cc);
    cc.device = device;
    cc.nb_threads = threads;
    if (prt_context_create(e, &cc, &ctx) != PRT_OK) {
        fprintf(stderr, "plugrt run: %s\n", prt_engine_last_error(e));
        goto done;
    }
    for (k = 0; k < nshape; k++) {
        char *eq = strchr(shape_args[k], '=');
        prt_dims d;
        if (!eq || !parse_shape(eq + 1, &d)) {
            fprintf(stderr, "plugrt run: --shape takes name=AxBxC, got \"%s\"\n", shape_args[k]);
            rc = 2;
            goto done;
        }
        *eq = 0;
        if (prt_context_set_input_shape(ctx, shape_args[k], &d) != PRT_OK) {
            fprintf(stderr, "plugrt run: %s\n", prt_context_last_error(ctx));
            goto done;
        }
    }
    /* Files given with --input fix the shapes of their inputs (a --shape
     * given as well must agree); --output names must be outputs. */
    in_arr = calloc((size_t)nin + 1, sizeof *in_arr);
    in_io = calloc((size_t)nin + 1, sizeof *in_io);
    in_file = calloc((size_t)nin + 1, sizeof *in_file);
    if (!in_arr || !in_io || !in_file) goto oom;
    for (k = 0; k < nin; k++) {
        int32_t idx = arg_io(e, "--input", in_args[k], plan, PRT_IO_INPUT, &in_file[k]);
        prt_io_desc d;
        struct stat st;
        char sa[160], sb[160];
        int j, given = -1;
        if (idx < 0) {
            rc = idx == -2 ? 2 : 1;
            goto done;
        }
        in_io[k] = idx;
        for (j = 0; j < k; j++)
            if (in_io[j] == idx) {
                fprintf(stderr, "plugrt run: --input \"%s\" is given twice\n", in_args[k]);
                rc = 2;
                goto done;
            }
        if (prt_engine_io(e, idx, &d) != PRT_OK) goto oom;
        if (stat(in_file[k], &st) == 0 && !S_ISREG(st.st_mode)) {
            fprintf(stderr, "plugrt run: --input %s: \"%s\" is not a regular file (expected a .npy file)\n",
                    in_args[k], in_file[k]);
            goto done;
        }
        if (prt_npy_read_file(in_file[k], &in_arr[k]) != PRT_OK) {
            fprintf(stderr, "plugrt run: --input %s: %s\n", in_args[k], prt_last_error(&in_arr[k]));
            goto done;
        }
        for (j = 0; j < nshape; j++)
            if (strcmp(shape_args[j], d.name) == 0) given = j;
        if (given >= 0) {
            prt_dims cur;
            if (prt_context_get_shape(ctx, d.name, &cur) != PRT_OK || !prt_dims_equal(&cur, &in_arr[k].shape)) {
                fprintf(stderr, "plugrt run: --input %s holds an array of shape %s, but --shape sets %s to %s\n",
                        in_args[k], prt_dims_str(&in_arr[k].shape, sa, sizeof sa), d.name,
                        prt_dims_str(&cur, sb, sizeof sb));
                goto done;
            }
        } else if (prt_context_set_input_shape(ctx, d.name, &in_arr[k].shape) != PRT_OK) {
            fprintf(stderr, "plugrt run: --input %s holds an array of shape %s, which input \"%s\" %s cannot take: %s\n",
                    in_args[k], prt_dims_str(&in_arr[k].shape, sa, sizeof sa), d.name,
                    prt_dims_str(&d.dims, sb, sizeof sb), prt_context_last_error(ctx));
            goto done;
        }
    }
    for (k = 0; k < nout; k++) {
        char *file;
        int32_t idx = arg_io(e, "--output", out_args[k], plan, PRT_IO_OUTPUT, &file);
        if (idx < 0) {
            rc = idx == -2 ? 2 : 1;
            goto done;
        }
    }
    nio = prt_engine_nb_io(e);
    bufs = calloc((size_t)nio + 1, sizeof *bufs);
    if (!bufs) goto oom;
    for (i = 0; i < nio; i++) {
        io_buf *b = &bufs[i];
        if (prt_engine_io(e, i, &b->desc) != PRT_OK) goto oom;
        b->name = b->desc.name;
        if (prt_context_buffer_size(ctx, b->name, &b->bytes) != PRT_OK) {
            fprintf(stderr, "plugrt run: %s\n", prt_context_last_error(ctx));
            goto done;
        }
        b->host = calloc(1, b->bytes ? b->bytes : 1);
        if (!b->host) goto oom;
        if (b->desc.mode == PRT_IO_INPUT) {
            int from = -1;
            for (k = 0; k < nin; k++)
                if (in_io[k] == i) from = k;
            prt_dims vmin, vopt, vmax;
            if (from >= 0) {
                if (!npy_load_into(in_file[from], &in_arr[from], b)) goto done;
            } else {
                fill_random(b->host, b->desc.dtype, (int64_t)(b->bytes / prt_dtype_size(b->desc.dtype)), &seed);
            }
            if (prt_engine_io_values(e, i, &vmin, &vopt, &vmax) == PRT_OK &&
                !set_shape_values(ctx, b, from >= 0 ? NULL : &vopt))
                goto done;
        }
        if (device == PRT_DEVICE_CUDA) {
            if (prt__clidev_alloc(b->bytes ? b->bytes : 1, &b->dev, err, sizeof err) != PRT_OK ||
                (b->desc.mode == PRT_IO_INPUT && b->bytes &&
                 prt__clidev_copy(b->dev, b->host, b->bytes, 1, err, sizeof err) != PRT_OK)) {
                fprintf(stderr, "plugrt run: %s\n", err);
                goto done;
            }
        }
        if (prt_context_set_tensor(ctx, b->name, device == PRT_DEVICE_CUDA ? b->dev : b->host) != PRT_OK) {
            fprintf(stderr, "plugrt run: %s\n", prt_context_last_error(ctx));
            goto done;
        }
    }

    wall = calloc((size_t)iters, sizeof *wall);
    gpu = calloc((size_t)iters, sizeof *gpu);
    if (!wall || !gpu) goto oom;
    if (device == PRT_DEVICE_CUDA && (prt__clidev_event_create(&ev0, err, sizeof err) != PRT_OK ||
                                      prt__clidev_event_create(&ev1, err, sizeof err) != PRT_OK)) {
        fprintf(stderr, "plugrt run: %s\n", err);
        goto done;
    }
    for (i = 0; i < warmup + iters; i++) {
        double t0 = prt__cliutil_now_ms(), t1;
        if (device == PRT_DEVICE_CUDA)
            (void)prt__clidev_event_record(ev0, prt_context_stream(ctx), err, sizeof err);
        if (prt_context_enqueue(ctx, NULL) != PRT_OK) {
            fprintf(stderr, "plugrt run: %s\n", prt_context_last_error(ctx));
            goto done;
        }
        if (device == PRT_DEVICE_CUDA) {
            float ms = 0;
            if (prt__clidev_event_record(ev1, prt_context_stream(ctx), err, sizeof err) != PRT_OK ||
                prt__clidev_event_elapsed(ev0, ev1, &ms, err, sizeof err) != PRT_OK) {
                fprintf(stderr, "plugrt run: CUDA error while running: %s\n", err);
                goto done;
            }
            if (i >= warmup) gpu[i - warmup] = ms;
        }
        t1 = prt__cliutil_now_ms();
        if (i >= warmup) wall[i - warmup] = t1 - t0;
    }
    if (layer_prof) { /* separate runs, so the timings above are not disturbed */
        if (prt_context_set_profiler(ctx, on_layer, &lt) != PRT_OK) goto done;
        for (i = 0; i < iters; i++) {
            lt.at = 0;
            if (prt_context_execute(ctx) != PRT_OK) {
                fprintf(stderr, "plugrt run: %s\n", prt_context_last_error(ctx));
                goto done;
            }
        }
        if (prt_context_set_profiler(ctx, NULL, NULL) != PRT_OK) goto done;
    }
    for (i = 0; i < nio; i++) {
        io_buf *b = &bufs[i];
        if (b->desc.mode == PRT_IO_OUTPUT && device == PRT_DEVICE_CUDA && b->bytes &&
            prt__clidev_copy(b->host, b->dev, b->bytes, 0, err, sizeof err) != PRT_OK) {
            fprintf(stderr, "plugrt run: %s\n", err);
            goto done;
        }
    }
    {
        stats sw = summarize(wall, iters), sg = summarize(gpu, iters);
        char ds[160];
        if (json) printf("{\n  \"plan\": \"%s\",\n  \"device\": \"%s\",\n  \"outputs\": [", plan,
                         device == PRT_DEVICE_CUDA ? "cuda" : "cpu");
        else printf("plan %s on %s, %d iterations after %d warm-up\n", plan, device == PRT_DEVICE_CUDA ? "cuda" : "cpu",
                    iters, warmup);
        for (i = 0, k = 0; i < nio; i++) {
            io_buf *b = &bufs[i];
            prt_dims d;
            int64_t n, j;
            double sum = 0;
            if (b->desc.mode != PRT_IO_OUTPUT) continue;
            if (prt_context_get_shape(ctx, b->name, &d) != PRT_OK) d = b->desc.dims;
            n = prt_dims_volume(&d);
            for (j = 0; j < n; j++) sum += prt__cliutil_elem(b->host, b->desc.dtype, j);
            if (json) {
                printf("%s\n    {\"name\": \"%s\", \"dtype\": \"%s\", \"dims\": %s, \"sum\": %.9g}", k++ ? "," : "",
                       b->name, prt_dtype_name(b->desc.dtype), prt_dims_str(&d, ds, sizeof ds), sum);
            } else {
                printf("output %s %s %s sum %.9g first [", b->name, prt_dtype_name(b->desc.dtype),
                       prt_dims_str(&d, ds, sizeof ds), sum);
                for (j = 0; j < n && j < 6; j++)
                    printf("%s%.6g", j ? ", " : "", prt__cliutil_elem(b->host, b->desc.dtype, j));
                printf("%s]\n", n > 6 ? ", ..." : "");
            }
            for (j = 0; j < nout; j++) {
                size_t nl = strlen(b->name);
                if (strncmp(out_args[j], b->name, nl) == 0 && out_args[j][nl] == '=' &&
                    !npy_save(out_args[j] + nl + 1, b, &d))
                    goto done;
            }
        }
        if (json) {
            printf("\n  ],\n  \"iterations\": %d,\n  \"warmup\": %d,\n", iters, warmup);
            printf("  \"wall_ms\": {\"min\": %.6f, \"median\": %.6f, \"p90\": %.6f, \"p99\": %.6f, \"mean\": %.6f},\n",
                   sw.min, sw.median, sw.p90, sw.p99, sw.mean);
            if (device == PRT_DEVICE_CUDA)
                printf("  \"gpu_ms\": {\"min\": %.6f, \"median\": %.6f, \"p90\": %.6f, \"p99\": %.6f, \"mean\": %.6f},\n",
                       sg.min, sg.median, sg.p90, sg.p99, sg.mean);
            if (layer_prof) print_layer_times(&lt, iters, 1);
            printf("  \"throughput_per_s\": %.3f\n}\n", sw.mean > 0 ? 1000.0 / sw.mean : 0.0);
        } else {
            printf("latency wall ms: min %.4f  median %.4f  p90 %.4f  p99 %.4f  mean %.4f\n", sw.min, sw.median, sw.p90,
                   sw.p99, sw.mean);
            if (device == PRT_DEVICE_CUDA)
                printf("latency GPU ms:  min %.4f  median %.4f  p90 %.4f  p99 %.4f  mean %.4f\n", sg.min, sg.median,
                       sg.p90, sg.p99, sg.mean);
            printf("throughput: %.1f runs/s\n", sw.mean > 0 ? 1000.0 / sw.mean : 0.0);
            if (layer_prof) print_layer_times(&lt, iters, 0);
        }
    }
    rc = 0;
    goto done;
oom:
    fprintf(stderr, "plugrt run: out of memory\n");
done:
    prt__clidev_event_destroy(ev0);
    prt__clidev_event_destroy(ev1);
    prt_context_destroy(ctx);
    if (bufs)
        for (i = 0; i < nio; i++) {
            free(bufs[i].host);
            prt__clidev_free(bufs[i].dev);
        }
    free(bufs);
    if (in_arr)
        for (k = 0; k < nin; k++) prt_npy_array_clear(&in_arr[k]);
    free(in_arr);
    free(in_io);
    free(in_file);
    free(wall);
    free(gpu);
    free(lt.v);
    prt_engine_destroy(e);
    prt_registry_destroy(reg);
    free(in_args);
    free(out_args);
    free(shape_args);
    free(ranges);
    return rc;
}
