/*
 * onnx/common/onnx_tensor.c - dtype conversion and broadcasting for the ONNX
 * op kernels (see onnx_tensor.h).
 */
#include <math.h>
#include <stdio.h>

#include "onnx_tensor.h"

#define GATHER(type, conv)                                                                         \
    do {                                                                                           \
        const type *s_ = (const type *)src + off;                                                 \
        if (stride == 1)                                                                           \
            for (k = 0; k < n; k++) dst[k] = conv(s_[k]);                                          \
        else                                                                                       \
            for (k = 0; k < n; k++) dst[k] = conv(s_[k * stride]);                                 \
    } while (0)
#define AS_IS(v) (v)

void prt__onnx_gather_f64(double *dst, const void *src, prt_dtype t, int64_t off, int64_t stride, int64_t n)
{
    int64_t k;
    switch (t) {
    case PRT_DTYPE_F32: GATHER(float, AS_IS); break;
    case PRT_DTYPE_F16: GATHER(uint16_t, prt_f16_to_f32); break;
    case PRT_DTYPE_BF16: GATHER(uint16_t, prt_bf16_to_f32); break;
    case PRT_DTYPE_I8: GATHER(int8_t, AS_IS); break;
    case PRT_DTYPE_U8: case PRT_DTYPE_BOOL: GATHER(uint8_t, AS_IS); break;
    case PRT_DTYPE_I32: GATHER(int32_t, AS_IS); break;
    case PRT_DTYPE_I64: GATHER(int64_t, (double)); break;
    default: for (k = 0; k < n; k++) dst[k] = 0; break;
    }
}

/* float -> int64 without undefined behaviour: NaN 0, saturate at the ends. */
static int64_t f2i(double v)
{
    if (v != v) return 0;
    if (v >= 9223372036854775807.0) return INT64_MAX;
    if (v <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)v;
}

#define F16_I(v) f2i(prt_f16_to_f32(v))
#define BF16_I(v) f2i(prt_bf16_to_f32(v))

void prt__onnx_gather_i64(int64_t *dst, const void *src, prt_dtype t, int64_t off, int64_t stride, int64_t n)
{
    int64_t k;
    switch (t) {
    case PRT_DTYPE_F32: GATHER(float, f2i); break;
    case PRT_DTYPE_F16: GATHER(uint16_t, F16_I); break;
    case PRT_DTYPE_BF16: GATHER(uint16_t, BF16_I); break;
    case PRT_DTYPE_I8: GATHER(int8_t, AS_IS); break;
    case PRT_DTYPE_U8: case PRT_DTYPE_BOOL: GATHER(uint8_t, AS_IS); break;
    case PRT_DTYPE_I32: GATHER(int32_t, AS_IS); break;
    case PRT_DTYPE_I64: GATHER(int64_t, AS_IS); break;
    default: for (k = 0; k < n; k++) dst[k] = 0; break;
    }
}

#define SCATTER(type, conv)                                                                        \
    do {                                                                                           \
        type *d_ = (type *)dst + off;                                                             \
        for (k = 0; k < n; k++) d_[k] = conv(src[k]);                                              \
    } while (0)

static double clampd(double v, double lo, double hi)
{
    return v != v ? 0 : v < lo ? lo : v > hi ? hi : v;
}

#define TO_F32(v) ((float)(v))
#define TO_F16(v) prt_f32_to_f16((float)(v))
#define TO_BF16(v) prt_f32_to_bf16((float)(v))
#define D_I8(v) ((int8_t)clampd(v, -128.0, 127.0))
#define D_U8(v) ((uint8_t)clampd(v, 0.0, 255.0))
#define D_I32(v) ((int32_t)clampd(v, -2147483648.0, 2147483647.0))
#define D_BOOL(v) ((uint8_t)((v) != 0))

void prt__onnx_scatter_f64(void *dst, prt_dtype t, int64_t off, const double *src, int64_t n)
{
    int64_t k;
    switch (t) {
    case PRT_DTYPE_F32: SCATTER(float, TO_F32); break;
    case PRT_DTYPE_F16: SCATTER(uint16_t, TO_F16); break;
    case PRT_DTYPE_BF16: SCATTER(uint16_t, TO_BF16); break;
    case PRT_DTYPE_I8: SCATTER(int8_t, D_I8); break;
    case PRT_DTYPE_U8: SCATTER(uint8_t, D_U8); break;
    case PRT_DTYPE_BOOL: SCATTER(uint8_t, D_BOOL); break;
    case PRT_DTYPE_I32: SCATTER(int32_t, D_I32); break;
    case PRT_DTYPE_I64: SCATTER(int64_t, f2i); break;
    default: break;
    }
}

/* Integer narrowing wraps: go through the unsigned type (defined in C). */
#define I_I8(v) ((int8_t)(uint8_t)(uint64_t)(v))
#define I_U8(v) ((uint8_t)(uint64_t)(v))
#define I_I32(v) ((int32_t)(uint32_t)(uint64_t)(v))
#define I_BOOL(v) ((uint8_t)((v) != 0))
#define I_F(v) ((double)(v))
#define I_F32(v) ((float)(v))
#define I_F16(v) prt_f32_to_f16((float)(v))
#define I_BF16(v) prt_f32_to_bf16((float)(v))

void prt__onnx_scatter_i64(void *dst, prt_dtype t, int64_t off, const int64_t *src, int64_t n)
{
    int64_t k;
    switch (t) {
    case PRT_DTYPE_F32: SCATTER(float, I_F32); break;
    case PRT_DTYPE_F16: SCATTER(uint16_t, I_F16); break;
    case PRT_DTYPE_BF16: SCATTER(uint16_t, I_BF16); break;
    case PRT_DTYPE_I8: SCATTER(int8_t, I_I8); break;
    case PRT_DTYPE_U8: SCATTER(uint8_t, I_U8); break;
    case PRT_DTYPE_BOOL: SCATTER(uint8_t, I_BOOL); break;
    case PRT_DTYPE_I32: SCATTER(int32_t, I_I32); break;
    case PRT_DTYPE_I64: SCATTER(int64_t, AS_IS); break;
    default: break;
    }
}

double prt__onnx_get_f64(const void *src, prt_dtype t, int64_t i)
{
    double v;
    prt__onnx_gather_f64(&v, src, t, i, 1, 1);
    return v;
}

int64_t prt__onnx_get_i64(const void *src, prt_dtype t, int64_t i)
{
    int64_t v;
    prt__onnx_gather_i64(&v, src, t, i, 1, 1);
    return v;
}

void prt__onnx_strides(const prt_dims *d, int64_t *strides)
{
    int64_t s = 1;
    int32_t i;
    for (i = d->nb - 1; i >= 0; i--) {
        strides[i] = s;
        s *= d->d[i];
    }
}

/* Drop extents of 1, then merge dims that every input walks as one. The
 * strides of b are those of `dims`, rank r. */
static void compress(prt__bcast *b, int32_t r, const int64_t *dims)
{
    int32_t i, k, w = 0, nb_in = b->nb_in;
    for (i = 0; i < r; i++) {
        if (dims[i] == 1) continue;
        if (w > 0) {
            int merge = 1;
            for (k = 0; k < nb_in; k++)
                if (b->strides[k][w - 1] != b->strides[k][i] * dims[i]) merge = 0;
            if (merge) {
                b->dims[w - 1] *= dims[i];
                for (k = 0; k < nb_in; k++) b->strides[k][w - 1] = b->strides[k][i];
                continue;
            }
        }
        b->dims[w] = dims[i];
        for (k = 0; k < nb_in; k++) b->strides[k][w] = b->strides[k][i];
        w++;
    }
    if (w == 0) { /* a single element */
        b->dims[0] = 1;
        for (k = 0; k < nb_in; k++) b->strides[k][0] = 0;
        w = 1;
    }
    b->rank = w;
}

prt_status prt__bcast_plan(prt__bcast *b, const prt_dims *out, const prt_dims *const *in, int32_t nb_in,
                           prt_msg *err)
{
    int32_t i, k, r = out->nb;
    char sa[128], sb[128];
    memset(b, 0, sizeof *b);
    if (nb_in < 0 || nb_in > PRT__BCAST_MAX_IN) {
        prt_msg_set(err, "internal error: %d inputs to broadcast (at most %d)", (int)nb_in, PRT__BCAST_MAX_IN);
        return PRT_STATUS_INTERNAL;
    }
    b->nb_in = nb_in;
    b->volume = prt_dims_volume(out);
    for (k = 0; k < nb_in; k++) {
        int64_t s = 1;
        if (in[k]->nb > r) goto incompatible;
        for (i = r - 1; i >= 0; i--) {
            int32_t j = i - (r - in[k]->nb);
            int64_t e = j >= 0 ? in[k]->d[j] : 1;
            if (e == out->d[i]) {
                b->strides[k][i] = e == 1 ? 0 : s;
            } else if (e == 1) {
                b->strides[k][i] = 0;
            } else {
                goto incompatible;
            }
            s *= e;
        }
        continue;
    incompatible:
        prt_msg_set(err, "input %d with shape %s does not broadcast to the output shape %s", (int)k,
                    prt_dims_str(in[k], sa, sizeof sa), prt_dims_str(out, sb, sizeof sb));
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    compress(b, out->nb, out->d);
    return PRT_OK;
}

typedef struct bcast_job {
    const prt__bcast *b;
    prt__bcast_fn fn;
    void *ctx;
} bcast_job;

static void bcast_range(void *arg, int64_t begin, int64_t end)
{
    const bcast_job *j = arg;
    const prt__bcast *b = j->b;
    int64_t idx[PRT_MAX_DIMS], off[PRT__BCAST_MAX_IN], inner[PRT__BCAST_MAX_IN];
    int64_t rem = begin, pos = begin;
    int32_t i, k, last = b->rank - 1;
    for (k = 0; k < b->nb_in; k++) {
        off[k] = 0;
        inner[k] = b->strides[k][last];
    }
    for (i = last; i >= 0; i--) {
        idx[i] = rem % b->dims[i];
        rem /= b->dims[i];
        for (k = 0; k < b->nb_in; k++) off[k] += idx[i] * b->strides[k][i];
    }
    while (pos < end) {
        int64_t n = b->dims[last] - idx[last];
        if (n > end - pos) n = end - pos;
        if (n > PRT__ONNX_RUN) n = PRT__ONNX_RUN;
        j->fn(j->ctx, pos, off, inner, n);
        pos += n;
        idx[last] += n;
        for (k = 0; k < b->nb_in; k++) off[k] += n * inner[k];
        for (i = last; i > 0 && idx[i] == b->dims[i]; i--) {
            idx[i] = 0;
            idx[i - 1]++;
            for (k = 0; k < b->nb_in; k++)
                off[k] += b->strides[k][i - 1] - b->dims[i] * b->strides[k][i];
        }
    }
}

void prt__bcast_exec(const prt__bcast *b, prt_exec *ex, prt__bcast_fn fn, void *ctx)
{
    bcast_job j = {b, fn, ctx};
    if (b->volume <= 0) return;
    if (b->volume <= 16384 || !ex->parallel_for)
        bcast_range(&j, 0, b->volume);
    else
        ex->parallel_for(ex, b->volume, 16384, bcast_range, &j);
}

typedef struct copy_job {
    char *dst;
    const char *src;
    size_t esize;
    int64_t base;
} copy_job;

static void copy_run(void *ctx, int64_t o, const int64_t *off, const int64_t *st, int64_t n)
{
    const copy_job *j = ctx;
    const char *s = j->src + (size_t)(j->base + off[0]) * j->esize;
    char *d = j->dst + (size_t)o * j->esize;
    int64_t k;
    if (st[0] == 1) {
        memcpy(d, s, (size_t)n * j->esize);
        return;
    }
    switch (j->esize) {
    case 1: for (k = 0; k < n; k++) d[k] = s[k * st[0]]; break;
    case 2: for (k = 0; k < n; k++) memcpy(d + 2 * k, s + 2 * k * st[0], 2); break;
    case 4: for (k = 0; k < n; k++) memcpy(d + 4 * k, s + 4 * k * st[0], 4); break;
    default: for (k = 0; k < n; k++) memcpy(d + j->esize * (size_t)k, s + (int64_t)j->esize * k * st[0], j->esize);
    }
}

void prt__onnx_strided_copy(prt_exec *ex, void *dst, const void *src, size_t esize, int32_t rank,
                            const int64_t *dims, const int64_t *strides, int64_t base)
{
    prt__bcast b;
    copy_job j = {dst, src, esize, base};
    int32_t i;
    memset(&b, 0, sizeof b);
    b.nb_in = 1;
    b.volume = 1;
    for (i = 0; i < rank; i++) {
        b.volume *= dims[i];
        b.strides[0][i] = strides[i];
    }
    if (b.volume <= 0) return;
    compress(&b, rank, dims);
    prt__bcast_exec(&b, ex, copy_run, &j);
}

/* ONNX TensorProto.DataType -> prt_dtype; -1 where plugrt has no such type. */
int prt__onnx_dtype_from_onnx(int64_t t)
{
    switch (t) {
    case 1: return PRT_DTYPE_F32;
    case 2: return PRT_DTYPE_U8;
    case 3: return PRT_DTYPE_I8;
    case 6: return PRT_DTYPE_I32;
    case 7: return PRT_DTYPE_I64;
    case 9: return PRT_DTYPE_BOOL;
    case 10: return PRT_DTYPE_F16;
    case 16: return PRT_DTYPE_BF16;
    default: return -1;
    }
}

const char *prt__onnx_dtype_onnx_name(int64_t t)
{
    static const char *const names[] = {"UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32",
                                        "INT64", "STRING", "BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64",
                                        "COMPLEX64", "COMPLEX128", "BFLOAT16", "FLOAT8E4M3FN",
                                        "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4", "INT4",
                                        "FLOAT4E2M1"};
    return t >= 0 && t < (int64_t)(sizeof names / sizeof names[0]) ? names[t] : "unknown";
}

