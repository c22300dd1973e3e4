/*
 * bench_dcn.c - ModulatedDeformConv2d benchmark over the cases A-F of
 * the benchmark case list in docs/BENCHMARKS.md (3x3, padding 1, offsets U[-2, 2], mask U[0, 1],
 * weights U[-1, 1] / sqrt(Cin/group*9), fixed seeds).
 *
 *   bench_dcn [--json] [--cases ABCDEF] [--no-cpu] [--no-cuda] [--iters N]
 *             [--threads N] [--reps N] [--types f32,f16,bf16] [--probe]
 *             [--shape N,Cin,Cout,H,W,stride,group,dg]...
 *
 * --shape adds a case of that geometry (3x3, padding 1, the same data as
 * A-F), named 1, 2, ... in the order given (at most 9); with --shape and no
 * --cases only the added cases run.
 *
 * --probe (CPU): measures this machine's FMA peak per core (independent
 * 512-bit and 256-bit FMAs, timed in thread CPU time), then on --threads
 * threads at once (the floor takes the smaller of the two), and prints, after each
 * CPU row, the process CPU time of one call: on a machine that other jobs
 * share, CPU time does not count the time a thread waited for a core, so
 * CPU time / threads against FLOPs / (threads x measured peak) is the
 * fraction of the FMA floor the code reaches, whatever the load.
 *
 * The op is run through the public API only: ModulatedDeformConv2d v2 from
 * the global registry in a prt_op (plugrt/op.h), a one-layer engine and its
 * context, configured once per case and type; each timed call is one
 * prt_op_run (the engine's enqueue of the plugin, with the workspace and, on
 * the CPU, the thread pool the runtime gives it).
 *
 * CUDA rows give, in the err column, the max abs difference from a
 * reference on the same inputs: for 16-bit types the fp32 op on the
 * fp16-valued inputs, for fp32 the im2col + cuBLAS SGEMM path (so that a
 * 3xTF32 kernel's distance from plain fp32 arithmetic shows at benchmark
 * size); fp32 rows also give both paths' error against a float64 reference
 * on 32768 sampled outputs (max |y - r| / max |r|); and they name the CUDA kernel policy: "auto" (the tactic the
 * builder measured fastest for the case when prt_op configured it, from the
 * plugin's list: plugins/deform_conv/README.md), or what the
 * PRT_DCN_CUDA_KERNEL environment variable forces.
 *
 * CUDA: fp32 and fp16, timed with CUDA events around each call, after a
 * warm-up, median of N calls; several input sets are rotated when one set
 * fits in the 60 MB L2. CPU: fp32 with 2 threads (the context's pool), on A,
 * B, C, E, median of --reps calls (default 5) after one warm-up.
 * Floor: max(bytes / 4.3 TB/s, FLOPs / 67 TF fp32 or 790 TF fp16), bytes =
 * every input read once + output written once; CPU floor = FLOPs / 158 GF.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pthread.h>

#include "plugrt/plugrt.h"

#ifdef PLUGRT_HAVE_CUDA
#include <cuda_runtime.h>
#endif

typedef struct bcase {
    char id;
    int64_t n, cin, cout, h, w, stride, group, dg;
    int cpu;
} bcase;

static bcase bcases[6 + 9] = {
    {'A', 1, 128, 128, 92, 160, 1, 1, 1, 1},
    {'B', 1, 512, 512, 23, 40, 1, 1, 1, 1},
    {'C', 1, 64, 64, 128, 128, 1, 1, 1, 1},
    {'D', 2, 128, 128, 200, 336, 2, 1, 4, 0},
    {'E', 1, 512, 512, 50, 84, 1, 32, 1, 1},
    {'F', 32, 256, 256, 64, 64, 1, 1, 1, 0},
};
static int ncases = 6;

/* --shape N,Cin,Cout,H,W,stride,group,dg: 0, or -1 with a message. */
static int add_shape(const char *spec)
{
    long long v[8];
    int used = 0, k;
    bcase *c;
    if (ncases >= (int)(sizeof(bcases) / sizeof(bcases[0]))) {
        fprintf(stderr, "--shape: at most 9 added cases\n");
        return -1;
    }
    if (sscanf(spec, "%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld%n", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6],
               &v[7], &used) != 8 || spec[used] != '\0') {
        fprintf(stderr, "--shape: expected N,Cin,Cout,H,W,stride,group,dg (8 integers), found '%s'\n", spec);
        return -1;
    }
    for (k = 0; k < 8; k++)
        if (v[k] < 1 || v[k] > 65536) {
            fprintf(stderr, "--shape '%s': every value must be in [1, 65536], value %d is %lld\n", spec, k + 1, v[k]);
            return -1;
        }
    if (v[1] % v[6] || v[2] % v[6] || v[1] % v[7]) {
        fprintf(stderr, "--shape '%s': group must divide Cin and Cout, dg must divide Cin\n", spec);
        return -1;
    }
    c = &bcases[ncases];
    c->id = (char)('1' + (ncases - 6));
    c->n = v[0]; c->cin = v[1]; c->cout = v[2]; c->h = v[3]; c->w = v[4];
    c->stride = v[5]; c->group = v[6]; c->dg = v[7];
    c->cpu = 1;
    ncases++;
    return 0;
}

/* ---- data ---------------------------------------------------------------- */

static uint64_t rs;
static float frand(float lo, float hi)
{
    uint64_t z = (rs += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return lo + (hi - lo) * (float)((double)(z >> 11) / 9007199254740992.0);
}

/* One case's geometry and host fp32 data: x, offset, mask, weight, bias. */
typedef struct bset {
    int64_t n, cin, cout, h, w, hout, wout, stride, group, dg;
    prt_dims dims[5];
    size_t nel[5], nout;
    float *data[5];
} bset;

static prt_dims dims4(int64_t a, int64_t b, int64_t c, int64_t d)
{
    prt_dims r;
    memset(&r, 0, sizeof r);
    r.nb = 4;
    r.d[0] = a; r.d[1] = b; r.d[2] = c; r.d[3] = d;
    return r;
}

static void bset_make(bset *b, const bcase *c, uint64_t seed)
{
    int i;
    size_t k;
    const int64_t K = 9;
    memset(b, 0, sizeof(*b));
    b->n = c->n; b->cin = c->cin; b->cout = c->cout; b->h = c->h; b->w = c->w;
    b->stride = c->stride; b->group = c->group; b->dg = c->dg;
    b->hout = (c->h + 2 - 3) / c->stride + 1; /* padding 1, dilation 1, 3x3 */
    b->wout = (c->w + 2 - 3) / c->stride + 1;
    b->dims[0] = dims4(c->n, c->cin, c->h, c->w);
    b->dims[1] = dims4(c->n, 2 * c->dg * K, b->hout, b->wout);
    b->dims[2] = dims4(c->n, c->dg * K, b->hout, b->wout);
    b->dims[3] = dims4(c->cout, c->cin / c->group, 3, 3);
    b->dims[4].nb = 1;
    b->dims[4].d[0] = c->cout;
    b->nel[0] = (size_t)(c->n * c->cin * c->h * c->w);
    b->nel[1] = (size_t)(c->n * 2 * c->dg * K * b->hout * b->wout);
    b->nel[2] = (size_t)(c->n * c->dg * K * b->hout * b->wout);
    b->nel[3] = (size_t)(c->cout * (c->cin / c->group) * K);
    b->nel[4] = (size_t)c->cout;
    b->nout = (size_t)(c->n * c->cout * b->hout * b->wout);
    rs = seed;
    for (i = 0; i < 5; i++) {
        const float ws = 1.0f / sqrtf((float)(c->cin / c->group * K));
        b->data[i] = (float *)malloc(b->nel[i] * sizeof(float));
        for (k = 0; k < b->nel[i]; k++)
            b->data[i][k] = i == 0 ? frand(-1, 1) : i == 1 ? frand(-2, 2) : i == 2 ? frand(0, 1)
                       : i == 3 ? frand(-1, 1) * ws : frand(-0.1f, 0.1f);
    }
}

static void bset_free(bset *b)
{
    int i;
    for (i = 0; i < 5; i++) free(b->data[i]);
}

/* ModulatedDeformConv2d v2 for the case, configured for `dt` on `device`
 * (nb_threads on the CPU, `stream` on CUDA); NULL after printing why. */
static prt_op *make_op(const bset *b, prt_dtype dt, prt_device device, int threads, void *stream)
{
    const int64_t st[2] = {b->stride, b->stride}, pad[2] = {1, 1}, dil[2] = {1, 1}, grp = b->group, dg = b->dg;
    prt_field f[5] = {
        {.name = "stride", .data = st, .type = PRT_FIELD_INT64, .count = 2},
        {.name = "padding", .data = pad, .type = PRT_FIELD_INT64, .count = 2},
        {.name = "dilation", .data = dil, .type = PRT_FIELD_INT64, .count = 2},
        {.name = "group", .data = &grp, .type = PRT_FIELD_INT64, .count = 1},
        {.name = "deformable_group", .data = &dg, .type = PRT_FIELD_INT64, .count = 1},
    };
    prt_fields fc = {.fields = f, .nb = 5};
    prt_tensor_desc in[5];
    prt_op_config cfg = {.struct_size = sizeof cfg, .abi_version = PRT_ABI_VERSION, .device = device,
                         .nb_threads = threads, .cuda_stream = stream};
    prt_op *op = NULL;
    int i;
    if (prt_op_create(prt_registry_global(), "ModulatedDeformConv2d", "2", "", &fc, &op) != PRT_OK) {
        fprintf(stderr, "ModulatedDeformConv2d v2: %s\n", prt_registry_last_error(prt_registry_global()));
        return NULL;
    }
    for (i = 0; i < 5; i++) {
        in[i].dtype = dt;
        in[i].format = PRT_FORMAT_LINEAR;
        in[i].dims = b->dims[i];
    }
    if (prt_op_configure(op, in, 5, &cfg) != PRT_OK) {
        fprintf(stderr, "ModulatedDeformConv2d v2: %s\n", prt_op_last_error(op));
        prt_op_destroy(op);
        return NULL;
    }
    return op;
}

static double gflop(const bset *b)
{
    return 2.0 * (double)b->n * (double)b->cout * (double)(b->cin / b->group) * 9.0 *
           (double)(b->hout * b->wout) * 1e-9;
}


static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static double clock_us(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

/* ---- FMA peak of one core (--probe) ------------------------------------------ */

static double probe_gflops; /* measured fp32 FMA peak of one core, GFLOP/s; 0: not measured */

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PROBE_ACC 12 /* independent accumulators: more than latency x FMA ports */

__attribute__((target("avx512f"))) static double probe_avx512(int64_t iters, float *sink)
{
    __m512 acc[PROBE_ACC], m = _mm512_set1_ps(0.999999f), a = _mm512_set1_ps(1e-7f);
    double t0;
    int64_t it;
    int j;
    for (j = 0; j < PROBE_ACC; j++) acc[j] = _mm512_set1_ps((float)j);
    t0 = clock_us(CLOCK_THREAD_CPUTIME_ID);
    for (it = 0; it < iters; it++)
        for (j = 0; j < PROBE_ACC; j++) acc[j] = _mm512_fmadd_ps(acc[j], m, a);
    t0 = clock_us(CLOCK_THREAD_CPUTIME_ID) - t0;
    for (j = 1; j < PROBE_ACC; j++) acc[0] = _mm512_add_ps(acc[0], acc[j]);
    *sink = _mm512_reduce_add_ps(acc[0]);
    return (double)iters * PROBE_ACC * 16 * 2 / (t0 * 1e3);
}

__attribute__((target("avx2,fma"))) static double probe_avx2(int64_t iters, float *sink)
{
    __m256 acc[PROBE_ACC], m = _mm256_set1_ps(0.999999f), a = _mm256_set1_ps(1e-7f);
    float v[8];
    double t0;
    int64_t it;
    int j;
    for (j = 0; j < PROBE_ACC; j++) acc[j] = _mm256_set1_ps((float)j);
    t0 = clock_us(CLOCK_THREAD_CPUTIME_ID);
    for (it = 0; it < iters; it++)
        for (j = 0; j < PROBE_ACC; j++) acc[j] = _mm256_fmadd_ps(acc[j], m, a);
    t0 = clock_us(CLOCK_THREAD_CPUTIME_ID) - t0;
    for (j = 1; j < PROBE_ACC; j++) acc[0] = _mm256_add_ps(acc[0], acc[j]);
    _mm256_storeu_ps(v, acc[0]);
    *sink = v[0];
    return (double)iters * PROBE_ACC * 8 * 2 / (t0 * 1e3);
}

/* One thread of the concurrent probe: best of 3 runs of the widest FMA. */
typedef struct probe_arg {
    int wide;
    double best;
    float sink;
} probe_arg;

static void *probe_thread(void *v)
{
    probe_arg *a = (probe_arg *)v;
    int r;
    for (r = 0; r < 3; r++) {
        const double g = a->wide ? probe_avx512(20000000, &a->sink) : probe_avx2(20000000, &a->sink);
        if (g > a->best) a->best = g;
    }
    return NULL;
}

/* Best of 5 runs of ~0.2 s each, for the widest FMA this CPU has; then the
 * same FMAs on `threads` threads at once (the sum of their rates): cores
 * that share a clock budget, or threads that share a core, give less than
 * threads x one core, and then that sum is the floor's peak. */
static void probe_fma(int threads)
{
    double best512 = 0, best256 = 0, g, sum = 0;
    float sink = 0;
    int r, has512 = __builtin_cpu_supports("avx512f"), has256 = __builtin_cpu_supports("fma");
    probe_arg args[16];
    pthread_t tid[16];
    int nt = threads < 16 ? threads : 16, started = 0;
    for (r = 0; r < 5; r++) {
        if (has512 && (g = probe_avx512(20000000, &sink)) > best512) best512 = g;
        if (has256 && (g = probe_avx2(20000000, &sink)) > best256) best256 = g;
    }
    probe_gflops = best512 > best256 ? best512 : best256;
    printf("# FMA peak of one core, thread CPU time, best of 5: %.1f GFLOP/s 512-bit, %.1f GFLOP/s 256-bit "
           "(checksum %g)\n", best512, best256, (double)sink);
    if (nt < 2 || !(has512 || has256)) return;
    for (r = 0; r < nt; r++) {
        args[r].wide = best512 > best256;
        args[r].best = 0;
        args[r].sink = 0;
        if (pthread_create(&tid[r], NULL, probe_thread, &args[r]) != 0) break;
        started++;
    }
    for (r = 0; r < started; r++) {
        pthread_join(tid[r], NULL);
        sum += args[r].best;
    }
    if (started < nt) {
        printf("# FMA peak on %d threads at once: could not start the threads\n", nt);
        return;
    }
    printf("# FMA peak on %d threads at once (%s FMAs, thread CPU time, sum of each thread's best of 3): %.1f "
           "GFLOP/s = %.2f x one core\n", nt, best512 > best256 ? "512-bit" : "256-bit", sum, sum / probe_gflops);
    /* the floor below takes threads x probe_gflops: the smaller peak of the two */
    if (sum < nt * probe_gflops) probe_gflops = sum / nt;
}
#else
static void probe_fma(int threads)
{
    (void)threads;
    printf("# FMA probe: x86-64 only\n");
}
#endif

/* ---- results -------------------------------------------------------------- */

typedef struct result {
    char id;
    const char *device, *dtype;
    double us, tflops, floor_us, pct;
    double f64_err, f64_err_ref; /* fp32 CUDA: max |y - r| / max |r| over sampled outputs against a float64
                                  * reference r, for ours and for the im2col + SGEMM path; else -1 */
    double graph_us; /* CUDA: one call captured into a graph, median replay (GPU time without the host's
                      * launch gaps); -1: not captured, or not CUDA */
    double err, ymax; /* CUDA: max |y - y_ref|, max |y_ref| (16-bit: y_ref the fp32 op on the same inputs;
                       * fp32: the im2col + SGEMM path); else -1 */
    char kernel[24];
    char shape[96];
} result;

static result results[64];
static int nres;

static void add_result(const bset *b, char id, const char *dev, const char *dt, double us, double floor_us)
{
    result *r = &results[nres++];
    r->id = id;
    r->device = dev;
    r->dtype = dt;
    r->us = us;
    r->tflops = gflop(b) * 1e-3 / (us * 1e-6);
    r->floor_us = floor_us;
    r->pct = 100.0 * floor_us / us;
    r->err = r->ymax = r->graph_us = r->f64_err = r->f64_err_ref = -1;
    snprintf(r->kernel, sizeof(r->kernel), "%s", strcmp(dev, "cuda") ? "fused-gemm" : "im2col+cublas");
    snprintf(r->shape, sizeof(r->shape), "N%lld Cin%lld Cout%lld %lldx%lld s%lld g%lld dg%lld", (long long)b->n,
             (long long)b->cin, (long long)b->cout, (long long)b->h, (long long)b->w, (long long)b->stride,
             (long long)b->group, (long long)b->dg);
}

/* ---- CPU ---------------------------------------------------------------- */

static int bench_cpu(const bcase *c, int threads, int reps)
{
    bset b;
    prt_op *op;
    float *y;
    double t[101], tc[101];
    int i;
    bset_make(&b, c, 1234 + (uint64_t)c->id);
    op = make_op(&b, PRT_DTYPE_F32, PRT_DEVICE_CPU, threads, NULL);
    if (!op) return -1;
    y = (float *)malloc(b.nout * sizeof(float));
    for (i = 0; i < reps + 1; i++) {
        const void *in[5] = {b.data[0], b.data[1], b.data[2], b.data[3], b.data[4]};
        void *out[1] = {y};
        double t0 = now_us(), c0 = clock_us(CLOCK_PROCESS_CPUTIME_ID);
        if (prt_op_run(op, in, out) != PRT_OK) {
            fprintf(stderr, "CPU case %c: %s\n", c->id, prt_op_last_error(op));
            prt_op_destroy(op);
            return -1;
        }
        if (i > 0) t[i - 1] = now_us() - t0, tc[i - 1] = clock_us(CLOCK_PROCESS_CPUTIME_ID) - c0;
    }
    prt_op_destroy(op);
    qsort(t, (size_t)reps, sizeof(double), cmp_d);
    qsort(tc, (size_t)reps, sizeof(double), cmp_d);
    add_result(&b, c->id, "cpu2", "f32", t[reps / 2], gflop(&b) / 158.0 * 1e6);
    if (probe_gflops > 0) {
        double fl = gflop(&b) / (threads * probe_gflops) * 1e6;
        printf("# %c cpu: %.1f GFLOP, process CPU time per call %.0f us (median; / %d threads = %.0f us), FMA floor "
               "at the measured peak %.0f us with %d threads: %.1f%% of the floor, %.2fx it\n",
               c->id, gflop(&b), tc[reps / 2], threads, tc[reps / 2] / threads, fl, threads,
               100.0 * fl / (tc[reps / 2] / threads), tc[reps / 2] / threads / fl);
    }
    free(y);
    bset_free(&b);
    return 0;
}

/* ---- CUDA ---------------------------------------------------------------- */
#ifdef PLUGRT_HAVE_CUDA
static double io_bytes(const bset *b, size_t elt)
{
    size_t t = b->nout;
    int i;
    for (i = 0; i < 5; i++) t += b->nel[i];
    return (double)t * (double)elt;
}

/* 16-bit values of the benchmark's types: f16 1 is fp16, 2 bfloat16. */
static uint16_t to16(float v, int f16) { return f16 == 2 ? prt_f32_to_bf16(v) : prt_f32_to_f16(v); }
static float from16(uint16_t h, int f16) { return f16 == 2 ? prt_bf16_to_f32(h) : prt_f16_to_f32(h); }

/* Accuracy at benchmark size: the 16-bit output of input set `din16` (in
 * dy16) against the fp32 op on the same 16-bit-valued inputs. */
static int check_f16(const bset *b, void *const din16[5], void *dy16, int f16, cudaStream_t st, result *r)
{
    void *d32[5] = {0}, *dy32 = NULL;
    prt_op *op32 = make_op(b, PRT_DTYPE_F32, PRT_DEVICE_CUDA, 1, st);
    uint16_t *h16 = NULL;
    float *h32 = NULL;
    int k, rc = -1;
    size_t j;
    double e = 0, m = 0;
    if (!op32) return -1;
    for (k = 0; k < 5; k++) {
        uint16_t *t16 = (uint16_t *)malloc(b->nel[k] * 2);
        float *t32 = (float *)malloc(b->nel[k] * 4);
        cudaMemcpy(t16, din16[k], b->nel[k] * 2, cudaMemcpyDeviceToHost);
        for (j = 0; j < b->nel[k]; j++) t32[j] = from16(t16[j], f16);
        if (cudaMalloc(&d32[k], b->nel[k] * 4) == cudaSuccess)
            cudaMemcpy(d32[k], t32, b->nel[k] * 4, cudaMemcpyHostToDevice);
        free(t16);
        free(t32);
    }
    if (cudaMalloc(&dy32, b->nout * 4) != cudaSuccess) {
        fprintf(stderr, "fp16 check: cudaMalloc failed\n");
        goto done;
    }
    {
        const void *in[5] = {d32[0], d32[1], d32[2], d32[3], d32[4]};
        void *out[1] = {dy32};
        if (prt_op_run(op32, in, out) != PRT_OK) {
            fprintf(stderr, "fp32 check run: %s\n", prt_op_last_error(op32));
            goto done;
        }
    }
    h16 = (uint16_t *)malloc(b->nout * 2);
    h32 = (float *)malloc(b->nout * 4);
    if (cudaStreamSynchronize(st) != cudaSuccess) {
        fprintf(stderr, "fp16 check: %s\n", cudaGetErrorString(cudaGetLastError()));
        goto done;
    }
    cudaMemcpy(h16, dy16, b->nout * 2, cudaMemcpyDeviceToHost);
    cudaMemcpy(h32, dy32, b->nout * 4, cudaMemcpyDeviceToHost);
    for (j = 0; j < b->nout; j++) {
        const double d = fabs((double)from16(h16[j], f16) - h32[j]);
        if (!(d <= e)) e = isfinite(d) ? d : INFINITY;
        if (fabs(h32[j]) > m) m = fabs(h32[j]);
    }
    r->err = e;
    r->ymax = m;
    rc = 0;
done:
    for (k = 0; k < 5; k++) cudaFree(d32[k]);
    cudaFree(dy32);
    free(h16);
    free(h32);
    prt_op_destroy(op32);
    return rc;
}

/* One prt_op_run on `st` (input set `in`) captured into a CUDA graph and
 * replayed `iters` times after 5 warm-up replays, each between two events:
 * the median in us, or -1 when the call cannot be captured. */
static double graph_us(prt_op *op, const void *const in[5], void *dy, cudaStream_t st, cudaEvent_t e0, cudaEvent_t e1,
                       int iters)
{
    cudaGraph_t gr = NULL;
    cudaGraphExec_t ge = NULL;
    void *out[1] = {dy};
    double *t, med = -1;
    int i, ok = 1;
    prt_status s;
    if (cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal) != cudaSuccess) return -1;
    s = prt_op_run(op, in, out);
    if (cudaStreamEndCapture(st, &gr) != cudaSuccess || s != PRT_OK || cudaGraphInstantiate(&ge, gr, 0) != cudaSuccess) {
        (void)cudaGetLastError();
        if (gr) cudaGraphDestroy(gr);
        return -1;
    }
    t = (double *)malloc(sizeof(double) * (size_t)iters);
    for (i = -5; i < iters && ok; i++) {
        float ms = 0;
        ok = cudaEventRecord(e0, st) == cudaSuccess && cudaGraphLaunch(ge, st) == cudaSuccess &&
             cudaEventRecord(e1, st) == cudaSuccess && cudaEventSynchronize(e1) == cudaSuccess &&
             cudaEventElapsedTime(&ms, e0, e1) == cudaSuccess;
        if (i >= 0) t[i] = ms * 1e3;
    }
    if (ok) {
        qsort(t, (size_t)iters, sizeof(double), cmp_d);
        med = t[iters / 2];
    }
    free(t);
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(gr);
    return med;
}

/* float64 value of output element o ([n][cout][hout][wout]) from the case's
 * fp32 inputs (3x3, padding 1, dilation 1): bias + sum over the group's
 * channels and taps of weight * mask * bilinear sample, a sample outside
 * (-1, H) x (-1, W) being 0 and corners outside the image 0. */
static double ref_at(const bset *b, size_t o)
{
    const int64_t hw = b->hout * b->wout, cg = b->cin / b->group, cpd = b->cin / b->dg, coutg = b->cout / b->group;
    const int64_t n = (int64_t)(o / (size_t)(b->cout * hw)), oc = (int64_t)(o / (size_t)hw % (size_t)b->cout);
    const int64_t pos = (int64_t)(o % (size_t)hw), oy = pos / b->wout, ox = pos % b->wout, g = oc / coutg;
    const float *x = b->data[0], *off = b->data[1], *mask = b->data[2], *w = b->data[3];
    double acc = b->data[4][oc];
    int64_t c, k;
    for (c = 0; c < cg; c++) {
        const int64_t ch = g * cg + c, d = ch / cpd;
        const float *xc = x + (n * b->cin + ch) * b->h * b->w;
        for (k = 0; k < 9; k++) {
            const double dy = off[((n * b->dg + d) * 18 + 2 * k) * hw + pos];
            const double dx = off[((n * b->dg + d) * 18 + 2 * k + 1) * hw + pos];
            const double m = mask[((n * b->dg + d) * 9 + k) * hw + pos];
            const double py = (double)(oy * b->stride - 1 + k / 3) + dy, px = (double)(ox * b->stride - 1 + k % 3) + dx;
            double v = 0, hl, wl, lh, lw;
            int64_t h0, w0;
            if (!(py > -1.0 && py < (double)b->h && px > -1.0 && px < (double)b->w)) continue;
            hl = floor(py);
            wl = floor(px);
            h0 = (int64_t)hl;
            w0 = (int64_t)wl;
            lh = py - hl;
            lw = px - wl;
            if (h0 >= 0 && w0 >= 0) v += (1 - lh) * (1 - lw) * xc[h0 * b->w + w0];
            if (h0 >= 0 && w0 + 1 < b->w) v += (1 - lh) * lw * xc[h0 * b->w + w0 + 1];
            if (h0 + 1 < b->h && w0 >= 0) v += lh * (1 - lw) * xc[(h0 + 1) * b->w + w0];
            if (h0 + 1 < b->h && w0 + 1 < b->w) v += lh * lw * xc[(h0 + 1) * b->w + w0 + 1];
            acc += (double)w[(oc * cg + c) * 9 + k] * m * v;
        }
    }
    return acc;
}

/* max |y - r| / max |r| over 32768 sampled outputs (a fixed sequence), r
 * the float64 reference. */
static double f64_sampled_err(const bset *b, const float *y)
{
    uint64_t z = 0x2545f4914f6cdd1dull;
    double e = 0, m = 0;
    int i;
    for (i = 0; i < 32768; i++) {
        size_t o;
        double r, d;
        z = z * 6364136223846793005ull + 1442695040888963407ull;
        o = (size_t)((z >> 17) % b->nout);
        r = ref_at(b, o);
        d = fabs((double)y[o] - r);
        if (!(d <= e)) e = isfinite(d) ? d : INFINITY;
        if (fabs(r) > m) m = fabs(r);
    }
    return m > 0 ? e / m : e;
}

/* fp32: the op's output dy against the im2col + cuBLAS SGEMM path on the
 * same inputs (the op run again with PRT_DCN_CUDA_KERNEL=im2col, which wins
 * over its tactic): max |dy - y_sgemm| into r->err, max |y_sgemm| into
 * r->ymax. PRT_DCN_CUDA_KERNEL is restored. */
static int check_f32(prt_op *op, const bset *b, void *const din[5], const void *dy, size_t nout, cudaStream_t st,
                     result *r)
{
    const char *old = getenv("PRT_DCN_CUDA_KERNEL");
    char keep[64] = "";
    float *h = (float *)malloc(nout * 4), *hs = (float *)malloc(nout * 4);
    void *ys = NULL;
    double e = 0, m = 0;
    size_t j;
    int rc = -1;
    if (old) snprintf(keep, sizeof keep, "%s", old);
    if (!h || !hs || cudaMalloc(&ys, nout * 4) != cudaSuccess) {
        fprintf(stderr, "fp32 check: out of memory\n");
        goto done;
    }
    setenv("PRT_DCN_CUDA_KERNEL", "im2col", 1);
    {
        const void *in[5] = {din[0], din[1], din[2], din[3], din[4]};
        void *out[1] = {ys};
        if (prt_op_run(op, in, out) != PRT_OK || cudaStreamSynchronize(st) != cudaSuccess) {
            fprintf(stderr, "fp32 check run: %s\n", prt_op_last_error(op));
            goto done;
        }
    }
    cudaMemcpy(h, dy, nout * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(hs, ys, nout * 4, cudaMemcpyDeviceToHost);
    for (j = 0; j < nout; j++) {
        const double d = fabs((double)h[j] - hs[j]);
        if (!(d <= e)) e = isfinite(d) ? d : INFINITY;
        if (fabs(hs[j]) > m) m = fabs(hs[j]);
    }
    r->err = e;
    r->ymax = m;
    r->f64_err = f64_sampled_err(b, h);
    r->f64_err_ref = f64_sampled_err(b, hs);
    rc = 0;
done:
    if (*keep) setenv("PRT_DCN_CUDA_KERNEL", keep, 1);
    else unsetenv("PRT_DCN_CUDA_KERNEL");
    cudaFree(ys);
    free(h);
    free(hs);
    return rc;
}

static int bench_cuda(const bcase *c, int f16, int iters)
{
    bset b;
    const size_t elt = f16 ? 2 : 4;
    size_t set_bytes = 0;
    void *dy = NULL, *din[8][5];
    int nsets, i, k, rc = 0;
    double *t;
    cudaEvent_t e0, e1;
    cudaStream_t st;
    prt_op *op;
    const char *forced = getenv("PRT_DCN_CUDA_KERNEL");
    bset_make(&b, c, 1234 + (uint64_t)c->id);
    for (k = 0; k < 5; k++) set_bytes += b.nel[k] * elt;
    nsets = (int)((150u << 20) / set_bytes) + 1;
    if (nsets > 8) nsets = 8;
    cudaStreamCreate(&st);
    const char *tname = f16 == 2 ? "bf16" : f16 ? "f16" : "f32";
    op = make_op(&b, f16 == 2 ? PRT_DTYPE_BF16 : f16 ? PRT_DTYPE_F16 : PRT_DTYPE_F32, PRT_DEVICE_CUDA, 1, st);
    if (!op) return -1;
    if (cudaMalloc(&dy, b.nout * elt) != cudaSuccess) {
        fprintf(stderr, "CUDA case %c: cudaMalloc of the output: %s\n", c->id, cudaGetErrorString(cudaGetLastError()));
        return -1;
    }
    for (i = 0; i < nsets; i++)
        for (k = 0; k < 5; k++) {
            size_t j, bytes = b.nel[k] * elt;
            void *h = malloc(bytes);
            for (j = 0; j < b.nel[k]; j++) {
                float v = b.data[k][j];
                if (i && k != 3 && k != 4) v = b.data[k][(j + (size_t)i * 7919) % b.nel[k]];
                if (f16) ((uint16_t *)h)[j] = to16(v, f16);
                else ((float *)h)[j] = v;
            }
            if (cudaMalloc(&din[i][k], bytes) != cudaSuccess) {
                fprintf(stderr, "CUDA case %c: cudaMalloc of input %d: %s\n", c->id, k,
                        cudaGetErrorString(cudaGetLastError()));
                return -1;
            }
            cudaMemcpy(din[i][k], h, bytes, cudaMemcpyHostToDevice);
            free(h);
        }
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    t = (double *)malloc((size_t)iters * sizeof(double));
    for (i = -10; i < iters && rc == 0; i++) {
        const int s = (i + 10) % nsets;
        const void *in[5] = {din[s][0], din[s][1], din[s][2], din[s][3], din[s][4]};
        void *out[1] = {dy};
        float ms = 0;
        cudaEventRecord(e0, st);
        rc = prt_op_run(op, in, out) == PRT_OK ? 0 : -1;
        cudaEventRecord(e1, st);
        cudaEventSynchronize(e1);
        cudaEventElapsedTime(&ms, e0, e1);
        if (i >= 0) t[i] = ms * 1e3;
    }
    if (rc != 0 || cudaDeviceSynchronize() != cudaSuccess) {
        fprintf(stderr, "CUDA case %c %s: %s / %s\n", c->id, tname, prt_op_last_error(op),
                cudaGetErrorString(cudaGetLastError()));
        return -1;
    }
    qsort(t, (size_t)iters, sizeof(double), cmp_d);
    {
        const double fl = gflop(&b) * 1e-3 / (f16 ? 790.0 : 67.0) * 1e6;
        const double by = io_bytes(&b, elt) / 4.3e12 * 1e6;
        add_result(&b, c->id, "cuda", tname, t[iters / 2], fl > by ? fl : by);
    }
    snprintf(results[nres - 1].kernel, sizeof(results[nres - 1].kernel), "%s", forced && *forced ? forced : "auto");
    { /* the timed runs rotated the input sets: dy must hold set 0's output for the check */
        const void *in[5] = {din[0][0], din[0][1], din[0][2], din[0][3], din[0][4]};
        void *out[1] = {dy};
        results[nres - 1].graph_us = graph_us(op, in, dy, st, e0, e1, iters);
        if (prt_op_run(op, in, out) != PRT_OK || cudaStreamSynchronize(st) != cudaSuccess ||
            (f16 ? check_f16(&b, din[0], dy, f16, st, &results[nres - 1])
                 : check_f32(op, &b, din[0], dy, b.nout, st, &results[nres - 1])) != 0)
            return -1;
    }
    free(t);
    prt_op_destroy(op);
    for (i = 0; i < nsets; i++)
        for (k = 0; k < 5; k++) cudaFree(din[i][k]);
    cudaFree(dy);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaStreamDestroy(st);
    bset_free(&b);
    return 0;
}
#endif

#ifdef PLUGRT_HAVE_CUDA
/* Whether the comma-separated list names the type t. */
static int has_type(const char *list, const char *t)
{
    const size_t n = strlen(t);
    const char *p = list;
    while (*p) {
        const char *e = strchr(p, ',');
        const size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, t, n) == 0) return 1;
        if (!e) break;
        p = e + 1;
    }
    return 0;
}
#endif

int main(int argc, char **argv)
{
    int json = 0, cpu = 1, cuda = 1, iters = 50, i, threads = 2, reps = 5, probe = 0, sel_given = 0;
    const char *sel = "ABCDEF", *types = "f32,f16";
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) json = 1;
        else if (!strcmp(argv[i], "--no-cpu")) cpu = 0;
        else if (!strcmp(argv[i], "--no-cuda")) cuda = 0;
        else if (!strcmp(argv[i], "--cases") && i + 1 < argc) {
            sel = argv[++i];
            sel_given = 1;
        }
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--types") && i + 1 < argc) types = argv[++i];
        else if (!strcmp(argv[i], "--probe")) probe = 1;
        else if (!strcmp(argv[i], "--shape") && i + 1 < argc) {
            if (add_shape(argv[++i]) != 0) return 2;
            if (!sel_given) sel = "123456789";
        }
        else {
            fprintf(stderr, "usage: %s [--json] [--cases ABCDEF] [--no-cpu] [--no-cuda] [--iters N] [--threads N] [--reps N] [--types f32,f16,bf16] [--probe] [--shape N,Cin,Cout,H,W,stride,group,dg]...\n",
                    argv[0]);
            return 2;
        }
    }
    if (iters < 1) iters = 1;
    if (threads < 1 || threads > 16) threads = 2;
    if (reps < 1 || reps > 101) reps = 5;
#ifdef PLUGRT_HAVE_CUDA
    if (cuda) {
        int nd = 0;
        if (cudaGetDeviceCount(&nd) != cudaSuccess || nd == 0) {
            fprintf(stderr, "no CUDA device: skipping the CUDA runs\n");
        } else {
            for (i = 0; i < ncases; i++) {
                if (!strchr(sel, bcases[i].id)) continue;
                if (has_type(types, "f32") && bench_cuda(&bcases[i], 0, iters) != 0) return 1;
                if (has_type(types, "f16") && bench_cuda(&bcases[i], 1, iters) != 0) return 1;
                if (has_type(types, "bf16") && bench_cuda(&bcases[i], 2, iters) != 0) return 1;
            }
        }
    }
#else
    (void)cuda;
    (void)types;
#endif
    if (cpu && probe) probe_fma(threads);
    if (cpu)
        for (i = 0; i < ncases; i++)
            if (bcases[i].cpu && strchr(sel, bcases[i].id))
                if (bench_cpu(&bcases[i], threads, reps) != 0) return 1;
    if (json) {
        printf("[\n");
        for (i = 0; i < nres; i++)
            printf("  {\"case\": \"%c\", \"device\": \"%s\", \"dtype\": \"%s\", \"shape\": \"%s\", \"us\": %.2f, "
                   "\"tflops\": %.4f, \"floor_us\": %.2f, \"pct_floor\": %.2f, \"kernel\": \"%s\", "
                   "\"f16_err\": %.5g, \"ymax\": %.4g, \"graph_us\": %.2f, \"f64_err\": %.4g, "
                   "\"f64_err_sgemm\": %.4g}%s\n",
                   results[i].id, results[i].device, results[i].dtype, results[i].shape, results[i].us,
                   results[i].tflops, results[i].floor_us, results[i].pct, results[i].kernel, results[i].err,
                   results[i].ymax, results[i].graph_us, results[i].f64_err, results[i].f64_err_ref,
                   i + 1 < nres ? "," : "");
        printf("]\n");
    } else {
        printf("%-4s %-5s %-5s %-44s %-14s %10s %9s %9s %10s %8s %9s %17s\n", "case", "dev", "type", "shape",
               "kernel", "ours_us", "graph_us", "TFLOP/s", "floor_us", "%floor", "err", "f64 rel ours/sgemm");
        for (i = 0; i < nres; i++) {
            char e[32] = "-", gr[32] = "-", f[48] = "-";
            if (results[i].err >= 0) snprintf(e, sizeof(e), "%.2e", results[i].err);
            if (results[i].graph_us >= 0) snprintf(gr, sizeof(gr), "%.1f", results[i].graph_us);
            if (results[i].f64_err >= 0) snprintf(f, sizeof(f), "%.1e/%.1e", results[i].f64_err, results[i].f64_err_ref);
            printf("%-4c %-5s %-5s %-44s %-14s %10.1f %9s %9.3f %10.1f %7.1f%% %9s %17s\n", results[i].id,
                   results[i].device, results[i].dtype, results[i].shape, results[i].kernel, results[i].us, gr,
                   results[i].tflops, results[i].floor_us, results[i].pct, e, f);
        }
    }
    return 0;
}
