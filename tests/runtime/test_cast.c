/*
 * tests/runtime/test_cast.c - the engine's f32 <-> f16 cast layers on the CPU
 * and on CUDA (a kernel, src/backend/cuda/cast.cu), through engines with an
 * fp16-only layer between fp32 layers:
 *
 *   A: x f32 -> TestCopyF32 -> [cast to f16] -> TestCopyF16 -> [cast to f32]
 *      -> TestCopyF32 -> y f32: y must be f16_to_f32(f32_to_f16(x)).
 *   B: x f16 -> [cast to f32] -> TestCopyF32 -> [cast to f16] -> TestCopyF16
 *      -> y f16: every one of the 65536 half patterns goes to f32 and back.
 *
 * The copies move bits only, so every value seen is the casts' work. The
 * expected values come from plugrt/tensor.h's conversions and, for the
 * normal range, from a float64 computation of round-to-nearest-even. The
 * CUDA cases (SKIP without a GPU) must equal the CPU results bit for bit.
 */
#include "fakeplugins.h"
#include "plugrt/engine.h"
#include "prt_test.h"

#ifdef PLUGRT_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define NO_LEAKS() CHECK_MSG(__lsan_do_recoverable_leak_check() == 0, "memory leaked (report above)")
#else
#define NO_LEAKS() ((void)0)
#endif

#define NA (1 << 18) /* elements of engine A */
#define NB 65536     /* engine B: every half */

static prt_engine *build_net(prt_registry *r, int half_input, int64_t n, prt_device dev)
{
    prt_network *net = NULL;
    prt_engine *e = NULL;
    prt_builder_config cfg;
    prt_dims d;
    char err[1024] = "";
    const char *x[] = {"x"}, *h1[] = {"h1"}, *h2[] = {"h2"}, *y[] = {"y"};
    memset(&d, 0, sizeof d);
    d.nb = 1;
    d.d[0] = n;
    CHECK_OK(prt_network_create(r, &net));
    CHECK_OK(prt_network_add_input(net, "x", half_input ? PRT_DTYPE_F16 : PRT_DTYPE_F32, &d));
    if (!half_input) {
        CHECK_OK(prt_network_add_layer(net, "a", "TestCopyF32", "1", "", NULL, x, 1, h1, 1));
        CHECK_OK(prt_network_add_layer(net, "half", "TestCopyF16", "1", "", NULL, h1, 1, h2, 1));
        CHECK_OK(prt_network_add_layer(net, "b", "TestCopyF32", "1", "", NULL, h2, 1, y, 1));
    } else {
        CHECK_OK(prt_network_add_layer(net, "a", "TestCopyF32", "1", "", NULL, x, 1, h1, 1));
        CHECK_OK(prt_network_add_layer(net, "half", "TestCopyF16", "1", "", NULL, h1, 1, y, 1));
    }
    CHECK_OK(prt_network_mark_output(net, "y"));
    prt_builder_config_init(&cfg);
    cfg.device = dev;
    CHECK_MSG(prt_engine_build(net, &cfg, r, &e, err, sizeof err) == PRT_OK, "build: %s", err);
    prt_network_destroy(net);
    return e;
}

static int count_casts(const prt_engine *e)
{
    int32_t i;
    int n = 0;
    for (i = 0; i < prt_engine_nb_layers(e); i++)
        if (strstr(prt_engine_layer_name(e, i), ":to_f")) n++;
    return n;
}

/* f32 bit patterns that cover every branch of the conversion: random bits
 * over all exponents, halfway cases at every half exponent (normal and
 * subnormal), the overflow boundary, zeros, infinities and NaNs. */
static void make_f32_inputs(uint32_t *x, int n)
{
    static const uint32_t special[] = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u,
                                       0xffc00001u, 0x7f800001u, 0x477fe000u, 0x477fefffu, 0x477ff000u,
                                       0x477ff001u, 0x33000000u, 0x33000001u, 0x32ffffffu, 0x38800000u,
                                       0x387fffffu, 0x3f800000u, 0x3f801000u, 0x3f803000u, 0x00000001u};
    uint64_t s = 0x9e3779b97f4a7c15ull;
    int i = 0, k;
    for (k = 0; k < (int)(sizeof special / sizeof special[0]); k++) x[i++] = special[k];
    for (k = 0; k < 40 && i + 4 <= n; k++) { /* exponents 2^-25 .. 2^15 */
        uint32_t e = (uint32_t)(127 - 25 + k) << 23;
        x[i++] = e | 0x1000u;           /* exactly halfway, even below: rounds down (normal range) */
        x[i++] = e | 0x3000u;           /* halfway, odd below: rounds up */
        x[i++] = e | 0x1001u;
        x[i++] = 0x80000000u | e | 0x0fffu;
    }
    while (i < n) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        x[i] = (uint32_t)(s >> 16);
        /* Half the values in the range halves can hold, so rounding is
         * exercised more than overflow and underflow. */
        if (i & 1) x[i] = (x[i] & 0x807fffffu) | ((uint32_t)(127 - 26 + (int)((s >> 8) % 44)) << 23);
        i++;
    }
}

/* Round-to-nearest-even of |v| in the normal half range, in float64. */
static double rne_half(double v)
{
    int e;
    double m = frexp(v, &e); /* v = m * 2^e, 0.5 <= m < 1 */
    double scaled = ldexp(m, 11), fl = floor(scaled), r;
    r = scaled - fl > 0.5 || (scaled - fl == 0.5 && fmod(fl, 2.0) != 0) ? fl + 1 : fl;
    return ldexp(r, e - 11);
}

static void run_engine(prt_engine *e, prt_device dev, const void *x, size_t xbytes, void *y, size_t ybytes)
{
    prt_context *ctx = NULL;
    prt_context_config cc;
    prt_context_config_init(&cc);
    cc.device = dev;
    CHECK_MSG(prt_context_create(e, &cc, &ctx) == PRT_OK, "%s", prt_engine_last_error(e));
    if (!ctx) return;
    if (dev == PRT_DEVICE_CPU) {
        CHECK_OK(prt_context_set_tensor(ctx, "x", (void *)x));
        CHECK_OK(prt_context_set_tensor(ctx, "y", y));
        memset(y, 0x5a, ybytes);
        CHECK_MSG(prt_context_execute(ctx) == PRT_OK, "%s", prt_context_last_error(ctx));
    }
#ifdef PLUGRT_HAVE_CUDA
    else {
        void *dx = NULL, *dy = NULL;
        CHECK(cudaMalloc(&dx, xbytes) == cudaSuccess);
        CHECK(cudaMalloc(&dy, ybytes) == cudaSuccess);
        CHECK(cudaMemcpy(dx, x, xbytes, cudaMemcpyHostToDevice) == cudaSuccess);
        CHECK(cudaMemset(dy, 0x5a, ybytes) == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess); /* poisoned before other streams run */
        CHECK_OK(prt_context_set_tensor(ctx, "x", dx));
        CHECK_OK(prt_context_set_tensor(ctx, "y", dy));
        CHECK_MSG(prt_context_execute(ctx) == PRT_OK, "%s", prt_context_last_error(ctx));
        memset(y, 0, ybytes);
        CHECK(cudaMemcpy(y, dy, ybytes, cudaMemcpyDeviceToHost) == cudaSuccess);
        cudaFree(dx);
        cudaFree(dy);
    }
#else
    (void)xbytes;
#endif
    prt_context_destroy(ctx);
}

/* Engine A on `dev`; y checked element by element. */
static void check_a(prt_registry *r, prt_device dev, uint32_t *y_out)
{
    uint32_t *x = malloc(NA * 4), *y = malloc(NA * 4);
    prt_engine *e = build_net(r, 0, NA, dev);
    int i, bad = 0;
    CHECK_EQ_INT(count_casts(e), 2);
    make_f32_inputs(x, NA);
    run_engine(e, dev, x, NA * 4, y, NA * 4);
    for (i = 0; i < NA && bad < 10; i++) {
        float xf, want;
        uint32_t wb;
        memcpy(&xf, &x[i], 4);
        want = prt_f16_to_f32(prt_f32_to_f16(xf));
        memcpy(&wb, &want, 4);
        if (y[i] != wb) {
            bad++;
            CHECK_MSG(0, "x = 0x%08x: y = 0x%08x, want 0x%08x", x[i], y[i], wb);
        }
        /* Independent check where the result is a normal half. */
        if (fabs(xf) >= 6.103515625e-05 && fabs(xf) < 65504.0) {
            double r = rne_half(fabs((double)xf));
            if (r > 65504.0) r = INFINITY;
            CHECK_MSG(fabs((double)want) == r, "x = %.9g: rounds to %.9g, float64 says %.9g", xf, want, r);
        }
    }
    if (y_out) memcpy(y_out, y, NA * 4);
    prt_engine_destroy(e);
    free(x);
    free(y);
}

/* Engine B on `dev`: every half to f32 and back is the identity, except
 * NaNs, which come back as sign | 0x7e00 ... with the payload's top bit set. */
static void check_b(prt_registry *r, prt_device dev, uint16_t *y_out)
{
    uint16_t *x = malloc(NB * 2), *y = malloc(NB * 2);
    prt_engine *e = build_net(r, 1, NB, dev);
    int i, bad = 0;
    CHECK_EQ_INT(count_casts(e), 2);
    for (i = 0; i < NB; i++) x[i] = (uint16_t)i;
    run_engine(e, dev, x, NB * 2, y, NB * 2);
    for (i = 0; i < NB && bad < 10; i++) {
        int nan = (i & 0x7c00) == 0x7c00 && (i & 0x3ff);
        uint16_t want = nan ? (uint16_t)((i & 0x8000) | 0x7e00) : (uint16_t)i;
        if (y[i] != want) {
            bad++;
            CHECK_MSG(0, "half 0x%04x: came back as 0x%04x, want 0x%04x", i, y[i], want);
        }
    }
    if (y_out) memcpy(y_out, y, NB * 2);
    prt_engine_destroy(e);
    free(x);
    free(y);
}

TEST(cpu_casts_around_fp16_only_layer_round_correctly)
{
    prt_registry *r = fake_registry(1, 0, 10);
    check_a(r, PRT_DEVICE_CPU, NULL);
    check_b(r, PRT_DEVICE_CPU, NULL);
    prt_registry_destroy(r);
    NO_LEAKS();
}

TEST(cuda_casts_equal_cpu_casts_bit_for_bit)
{
#ifndef PLUGRT_HAVE_CUDA
    SKIP("built without CUDA");
#else
    prt_registry *r;
    uint32_t *ya_cpu, *ya_gpu;
    uint16_t *yb_cpu, *yb_gpu;
    if (!prt_test_have_cuda()) SKIP("no CUDA device");
    r = fake_registry(1, 0, 10);
    ya_cpu = malloc(NA * 4);
    ya_gpu = malloc(NA * 4);
    yb_cpu = malloc(NB * 2);
    yb_gpu = malloc(NB * 2);
    check_a(r, PRT_DEVICE_CPU, ya_cpu);
    check_a(r, PRT_DEVICE_CUDA, ya_gpu);
    CHECK(memcmp(ya_cpu, ya_gpu, NA * 4) == 0);
    check_b(r, PRT_DEVICE_CPU, yb_cpu);
    check_b(r, PRT_DEVICE_CUDA, yb_gpu);
    CHECK(memcmp(yb_cpu, yb_gpu, NB * 2) == 0);
    free(ya_cpu);
    free(ya_gpu);
    free(yb_cpu);
    free(yb_gpu);
    prt_registry_destroy(r);
#endif
}

TEST(cuda_engine_run_on_cuda_with_enqueue_on_callers_stream)
{
#ifndef PLUGRT_HAVE_CUDA
    SKIP("built without CUDA");
#else
    /* The cast kernels go on the stream given to enqueue, not the
     * context's own: with the result read after synchronizing only that
     * stream, the values must be complete. */
    prt_registry *r;
    prt_engine *e;
    prt_context *ctx = NULL;
    cudaStream_t st;
    uint32_t *x, *y;
    void *dx = NULL, *dy = NULL;
    int i;
    if (!prt_test_have_cuda()) SKIP("no CUDA device");
    r = fake_registry(1, 0, 10);
    e = build_net(r, 0, NA, PRT_DEVICE_CUDA);
    x = malloc(NA * 4);
    y = malloc(NA * 4);
    make_f32_inputs(x, NA);
    CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) == cudaSuccess);
    CHECK(cudaMalloc(&dx, NA * 4) == cudaSuccess);
    CHECK(cudaMalloc(&dy, NA * 4) == cudaSuccess);
    CHECK(cudaMemcpy(dx, x, NA * 4, cudaMemcpyHostToDevice) == cudaSuccess);
    CHECK(cudaMemset(dy, 0x5a, NA * 4) == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess); /* poisoned before other streams run */
    CHECK_OK(prt_context_create(e, NULL, &ctx));
    CHECK_OK(prt_context_set_tensor(ctx, "x", dx));
    CHECK_OK(prt_context_set_tensor(ctx, "y", dy));
    CHECK_OK(prt_context_enqueue(ctx, st));
    CHECK(cudaMemcpyAsync(y, dy, NA * 4, cudaMemcpyDeviceToHost, st) == cudaSuccess);
    CHECK(cudaStreamSynchronize(st) == cudaSuccess);
    for (i = 0; i < NA; i++) {
        float xf, want;
        uint32_t wb;
        memcpy(&xf, &x[i], 4);
        want = prt_f16_to_f32(prt_f32_to_f16(xf));
        memcpy(&wb, &want, 4);
        if (y[i] != wb) {
            CHECK_MSG(0, "x = 0x%08x: y = 0x%08x, want 0x%08x", x[i], y[i], wb);
            break;
        }
    }
    prt_context_destroy(ctx);
    cudaFree(dx);
    cudaFree(dy);
    cudaStreamDestroy(st);
    free(x);
    free(y);
    prt_engine_destroy(e);
    prt_registry_destroy(r);
#endif
}
