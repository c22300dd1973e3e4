#include <stdarg.h>

#include "onnx_test_util.h"
#include "prt_test.h"

prt_dims ot_dims(int nb, ...)
{
    prt_dims d;
    va_list ap;
    int i;
    memset(&d, 0, sizeof d);
    d.nb = nb;
    va_start(ap, nb);
    for (i = 0; i < nb; i++) d.d[i] = va_arg(ap, int64_t);
    va_end(ap);
    return d;
}

prt_dims ot_dims_of(int nb, const int64_t *d)
{
    prt_dims r = ot_dims(0);
    r.nb = nb;
    if (nb > 0) memcpy(r.d, d, (size_t)nb * sizeof *d);
    return r;
}

int64_t ot_bcast_index(const prt_dims *in, const prt_dims *out, int64_t o)
{
    int64_t idx = 0, stride = 1;
    int32_t i;
    for (i = out->nb - 1; i >= 0; i--) {
        int64_t c = o % out->d[i];
        int32_t j = i - (out->nb - in->nb);
        o /= out->d[i];
        if (j >= 0) {
            if (in->d[j] != 1) idx += c * stride;
            stride *= in->d[j];
        }
    }
    return idx;
}

int64_t ot_vol(const ot_tensor *x)
{
    return prt_dims_volume(&x->d);
}

static void put(ot_tensor *x, int64_t i, double v)
{
    switch (x->t) {
    case PRT_DTYPE_F32: ((float *)x->data)[i] = (float)v; break;
    case PRT_DTYPE_F16: ((uint16_t *)x->data)[i] = prt_f32_to_f16((float)v); break;
    case PRT_DTYPE_BF16: ((uint16_t *)x->data)[i] = prt_f32_to_bf16((float)v); break;
    case PRT_DTYPE_I8: ((int8_t *)x->data)[i] = (int8_t)v; break;
    case PRT_DTYPE_U8: ((uint8_t *)x->data)[i] = (uint8_t)v; break;
    case PRT_DTYPE_BOOL: ((uint8_t *)x->data)[i] = v != 0; break;
    case PRT_DTYPE_I32: ((int32_t *)x->data)[i] = (int32_t)v; break;
    case PRT_DTYPE_I64: ((int64_t *)x->data)[i] = (int64_t)v; break;
    default: break;
    }
}

double ot_get(const ot_tensor *x, int64_t i)
{
    switch (x->t) {
    case PRT_DTYPE_F32: return ((const float *)x->data)[i];
    case PRT_DTYPE_F16: return prt_f16_to_f32(((const uint16_t *)x->data)[i]);
    case PRT_DTYPE_BF16: return prt_bf16_to_f32(((const uint16_t *)x->data)[i]);
    case PRT_DTYPE_I8: return ((const int8_t *)x->data)[i];
    case PRT_DTYPE_U8: case PRT_DTYPE_BOOL: return ((const uint8_t *)x->data)[i];
    case PRT_DTYPE_I32: return ((const int32_t *)x->data)[i];
    case PRT_DTYPE_I64: return (double)((const int64_t *)x->data)[i];
    default: return 0;
    }
}

ot_tensor ot_make(prt_dtype t, prt_dims d, const double *v)
{
    ot_tensor x;
    int64_t i, n = prt_dims_volume(&d);
    x.t = t;
    x.d = d;
    x.data = calloc((size_t)(n > 0 ? n : 1), 8);
    for (i = 0; v && i < n; i++) put(&x, i, v[i]);
    return x;
}

ot_tensor ot_rand(prt_dtype t, prt_dims d, double lo, double hi, uint32_t seed)
{
    ot_tensor x = ot_make(t, d, NULL);
    int64_t i, n = prt_dims_volume(&d);
    uint32_t s = seed * 2654435761u + 1u;
    for (i = 0; i < n; i++) {
        double u;
        s = s * 1664525u + 1013904223u;
        u = (double)(s >> 8) / 16777216.0;
        put(&x, i, lo + (hi - lo) * u);
    }
    return x;
}

void ot_free(ot_tensor *x)
{
    if (!x) return;
    free(x->data);
    x->data = NULL;
}

prt_field ot_i64(const char *name, const int64_t *v, int64_t n)
{
    prt_field f = {name, v, PRT_FIELD_INT64, 0, n};
    return f;
}

prt_field ot_f32(const char *name, const float *v, int64_t n)
{
    prt_field f = {name, v, PRT_FIELD_FLOAT32, 0, n};
    return f;
}

prt_field ot_str(const char *name, const char *s)
{
    prt_field f = {name, s, PRT_FIELD_CHAR, 0, (int64_t)strlen(s)};
    return f;
}

prt_status ot_run(const char *name, const char *ver, const prt_field *f, int32_t nf, const ot_tensor *in,
                  int32_t nin, ot_tensor *out, int32_t nout, int32_t threads, char *msg, size_t cap)
{
    return ot_run_ns("", name, ver, f, nf, in, nin, out, nout, threads, msg, cap);
}

prt_status ot_run_ns(const char *ns, const char *name, const char *ver, const prt_field *f, int32_t nf,
                     const ot_tensor *in, int32_t nin, ot_tensor *out, int32_t nout, int32_t threads, char *msg,
                     size_t cap)
{
    prt_fields fc = {f, nf, 0};
    prt_op *op = NULL;
    prt_tensor_desc td[16];
    const void *xs[16];
    void *ys[16];
    prt_op_config cfg;
    prt_status s;
    int32_t i;
    if (msg && cap) msg[0] = 0;
    for (i = 0; i < nout; i++) out[i].data = NULL;
    s = prt_op_create(prt_registry_global(), name, ver, ns, &fc, &op);
    if (s != PRT_OK) {
        if (msg) snprintf(msg, cap, "%s", prt_op_last_error(NULL));
        return s;
    }
    for (i = 0; i < nin; i++) {
        memset(&td[i], 0, sizeof td[i]);
        td[i].dtype = in[i].t;
        td[i].format = PRT_FORMAT_LINEAR;
        td[i].dims = in[i].d;
        xs[i] = in[i].data;
    }
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.abi_version = PRT_ABI_VERSION;
    cfg.device = PRT_DEVICE_CPU;
    cfg.nb_threads = threads;
    s = prt_op_configure(op, td, nin, &cfg);
    if (s != PRT_OK) goto done;
    if (prt_op_nb_outputs(op) != nout) {
        s = PRT_STATUS_INVALID_ARGUMENT;
        if (msg) snprintf(msg, cap, "%s has %d outputs, the test expects %d", name, prt_op_nb_outputs(op), nout);
        prt_op_destroy(op);
        return s;
    }
    for (i = 0; i < nout; i++) {
        prt_tensor_desc od;
        int64_t v;
        if ((s = prt_op_output_desc(op, i, &od)) != PRT_OK) goto done;
        out[i].t = od.dtype;
        out[i].d = od.dims;
        v = prt_dims_volume(&od.dims);
        out[i].data = malloc((size_t)(v > 0 ? v : 1) * 8);
        memset(out[i].data, 0xA5, (size_t)(v > 0 ? v : 1) * 8); /* poison */
        ys[i] = out[i].data;
    }
    s = prt_op_run(op, xs, ys);
    if (s == PRT_OK)
        for (i = 0; i < nout; i++) {
            prt_tensor_desc od;
            if (prt_op_output_desc(op, i, &od) == PRT_OK) out[i].d = od.dims;
        }
done:
    if (s != PRT_OK && msg) snprintf(msg, cap, "%s", prt_op_last_error(op));
    if (s != PRT_OK)
        for (i = 0; i < nout; i++) ot_free(&out[i]);
    prt_op_destroy(op);
    return s;
}

int64_t ot_compare(const ot_tensor *y, const double *ref, int64_t n, double rtol, double atol, const char *what)
{
    int64_t i, bad = 0;
    for (i = 0; i < n; i++) {
        double v = ot_get(y, i), r = ref[i];
        int ok = (v != v && r != r) || (v == r) || fabs(v - r) <= rtol * fabs(r) + atol;
        if (!ok && bad++ < 4)
            prt_test_fail(__FILE__, __LINE__, "%s: element %lld is %.9g, expected %.17g", what, (long long)i, v, r);
    }
    return bad;
}
