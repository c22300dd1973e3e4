/*
 * engine/op.c - one plugin instance driven directly (include/plugrt/op.h),
 * and the per-context plugin resources (prt_plugin_context) it attaches to.
 *
 * An op holds the build-phase plugin (`pl`) and, once configured, the
 * per-context instance (`inst`) that runs, with its context, workspace and
 * (on the CPU) thread pool. prt_op_configure builds a complete new state and
 * swaps it in only when every step succeeded, so a failed configure leaves
 * the op as it was.
 *
 * Lifecycle (docs/lifecycle.md):
 *   configure: output types -> output shapes (expression arena, evaluated
 *              with the concrete inputs) -> supports_format_combination for
 *              every position -> configure (min = opt = max) -> workspace size
 *              -> attach (blob: clone, attach_to_context, initialize; field:
 *              attach_to_context) -> shapes (on_shape_change / configure_plugin)
 *   run:       enqueue
 *   destroy:   instance (terminate, detach, destroy), context (resources),
 *              workspace, pool, plugin
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "backend/cuda/device.h"
#include "core/core.h"
#include "core/threadpool.h"
#include "engine/expr.h"
#include "engine/plugctx.h"
#include "plugrt/op.h"
#include "registry/adapter.h"

#define OP_MAX_IO 1024

/* ======================================================================== */
/* prt_op                                                                   */
/* ======================================================================== */

#define OP_MAX_PENDING 8

/* What configure builds; swapped into the op as a whole. */
typedef struct op_state {
    int configured;
    int32_t nb_in, nb_out;
    prt_tensor_desc *in;      /* nb_in */
    prt_tensor_desc *out;     /* nb_out: current (actual) descriptors */
    prt_tensor_desc *out_max; /* nb_out: as allocated (upper bounds) */
    uint8_t *out_ddep;        /* nb_out: has a data-dependent extent */
    prt_device device;
    int32_t cuda_device;
    void *cuda_stream;
    size_t ws_size;
    void *ws;
    prt__plugctx *ctx;
    prt__threadpool *pool;
    prt__plugin *inst;
} op_state;

struct prt_op {
    prt__plugin *pl;
    int32_t nb_out;
    op_state st;
    /* the prt_exec of the current run */
    prt_exec ex;
    char run_err[PRT_ERR_CAP];
    int run_err_set;
    /* extents reported with set_output_extent_device, resolved on the next
     * prt_op_output_desc (after waiting for the stream) */
    struct {
        int32_t index, dim;
        const int64_t *dev;
    } pend[OP_MAX_PENDING];
    int32_t nb_pend;      /* reported during the current enqueue */
    int32_t nb_queued;    /* copies queued, not yet read */
    int64_t *pend_host;   /* OP_MAX_PENDING page-locked int64 */
};

/* Errors of calls that have no op yet (create, deserialize) on this thread. */
static _Thread_local char create_err[PRT_ERR_CAP];

const char *prt_op_last_error(const prt_op *op)
{
    return op ? prt__err_get(op) : create_err;
}

static const char *op_who(const prt_op *op, char *buf, size_t cap)
{
    const prt_plugin_creator *c = op->pl->creator;
    const char *ns = c->plugin_namespace ? c->plugin_namespace : "";
    snprintf(buf, cap, "%s (%s%s%s v%s)", op->pl->layer, ns, ns[0] ? "::" : "", c->name, c->version);
    return buf;
}

static void state_free(op_state *st)
{
    if (st->inst) prt__plugin_destroy(st->inst); /* terminate, detach, destroy */
    prt__plugctx_destroy(st->ctx);               /* resources at their last release */
    if (st->ws) {
        if (st->device == PRT_DEVICE_CUDA) prt__cuda_free(st->ws);
        else prt__free(st->ws);
    }
    prt__threadpool_destroy(st->pool);
    prt__free(st->in);
    prt__free(st->out);
    prt__free(st->out_max);
    prt__free(st->out_ddep);
    memset(st, 0, sizeof(*st));
}

static prt_status wrap_new(prt__plugin *pl, prt_op **out, char *err, size_t cap)
{
    prt_op *op;
    int32_t nb = prt__plugin_nb_outputs(pl);
    if (nb < 0 || nb > OP_MAX_IO) {
        snprintf(err, cap, "%s: get_nb_outputs returned %d; expected 0..%d%s", pl->layer, (int)nb, OP_MAX_IO,
                 nb == -1 ? " (or the plugin does not implement it)" : "");
        prt__plugin_destroy(pl);
        return PRT_STATUS_PLUGIN_ERROR;
    }
    op = prt__calloc(1, sizeof(*op));
    if (!op) {
        snprintf(err, cap, "out of memory");
        prt__plugin_destroy(pl);
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    op->pl = pl;
    op->nb_out = nb;
    *out = op;
    return PRT_OK;
}

prt_status prt_op_create(prt_registry *r, const char *name, const char *version,
                         const char *plugin_namespace, const prt_fields *fields, prt_op **out)
{
    const prt_plugin_creator *c = NULL;
    const char *owner = NULL;
    prt__plugin *pl = NULL;
    prt_status s;

    create_err[0] = 0;
    if (!r || !name || !version || !out) {
        snprintf(create_err, sizeof create_err, "prt_op_create needs a registry, a name, a version and out");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    s = prt_registry_find(r, name, version, plugin_namespace, &c, &owner);
    if (s != PRT_OK) {
        snprintf(create_err, sizeof create_err, "%s", prt_registry_last_error(r));
        return s;
    }
    s = prt__plugin_create(c, owner, name, fields, PRT_PHASE_BUILD, &pl, create_err, sizeof create_err);
    if (s != PRT_OK) return s;
    return wrap_new(pl, out, create_err, sizeof create_err);
}

prt_status prt_op_serialize(prt_op *op, void *buf, size_t cap, size_t *len)
{
    prt_writer w;
    char err[PRT_ERR_CAP];
    prt_status s;
    size_t need;

    if (!op || !len) return op ? prt__err(op, PRT_STATUS_INVALID_ARGUMENT, "len must not be NULL")
                               : PRT_STATUS_INVALID_ARGUMENT;
    w = prt_writer_init(NULL, 0);
    s = prt__plugin_write_record(op->pl, &w, err, sizeof err);
    if (s != PRT_OK) return prt__err(op, s, "%s", err);
    need = w.len;
    if (buf) {
        if (cap < need)
            return prt__err(op, PRT_STATUS_INVALID_ARGUMENT,
                            "%s: the plugin record needs %zu bytes, the buffer holds %zu", op->pl->layer, need, cap);
        w = prt_writer_init(buf, cap);
        s = prt__plugin_write_record(op->pl, &w, err, sizeof err);
        if (s != PRT_OK) return prt__err(op, s, "%s", err);
        if (w.len != need)
            return prt__err(op, PRT_STATUS_PLUGIN_ERROR,
                            "%s: the plugin record was %zu bytes when sized and %zu when written",
                            op->pl->layer, need, w.len);
    }
    *len = need;
    prt__err_clear(op);
    return PRT_OK;
}

prt_status prt_op_deserialize(prt_registry *r, const void *data, size_t len, prt_op **out)
{
    prt_reader rd;
    prt__plugin *pl = NULL;
    prt_status s;

    create_err[0] = 0;
    if (!r || !out || (!data && len)) {
        snprintf(create_err, sizeof create_err, "prt_op_deserialize needs a registry, data and out");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    rd = prt_reader_init(data, len);
    s = prt__plugin_read_record(r, &rd, NULL, &pl, create_err, sizeof create_err);
    if (s != PRT_OK) return s;
    if (prt_reader_left(&rd) != 0) {
        snprintf(create_err, sizeof create_err, "plugin record of %s v%s is followed by %zu stray byte%s",
                 pl->creator->name, pl->creator->version, prt_reader_left(&rd),
                 prt_reader_left(&rd) == 1 ? "" : "s");
        prt__plugin_destroy(pl);
        return PRT_STATUS_BAD_FORMAT;
    }
    return wrap_new(pl, out, create_err, sizeof create_err);
}

prt_status prt_op_clone(const prt_op *op, prt_op **out)
{
    prt__plugin *pl = NULL;
    char err[PRT_ERR_CAP];
    prt_status s;
    if (!op || !out) {
        if (op) return prt__err(op, PRT_STATUS_INVALID_ARGUMENT, "out must not be NULL");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    s = prt__plugin_clone(op->pl, &pl, err, sizeof err);
    if (s == PRT_OK) s = wrap_new(pl, out, err, sizeof err);
    if (s != PRT_OK) return prt__err(op, s, "%s", err);
    return PRT_OK;
}

void prt_op_destroy(prt_op *op)
{
    if (!op) return;
    if (op->nb_queued) (void)prt__cuda_stream_sync(op->st.cuda_stream, op->run_err, sizeof op->run_err);
    prt__cuda_host_free(op->pend_host);
    state_free(&op->st);
    prt__plugin_destroy(op->pl);
    prt__err_clear(op);
    prt__free(op);
}

prt_plugin_style prt_op_style(const prt_op *op)
{
    return op ? op->pl->style : (prt_plugin_style)0;
}

const prt_plugin_creator *prt_op_creator(const prt_op *op)
{
    return op ? op->pl->creator : NULL;
}

int32_t prt_op_nb_outputs(const prt_op *op)
{
    return op ? op->nb_out : -1;
}

/* ---- execution callbacks ------------------------------------------------ */

static void ex_parallel_for(prt_exec *ex, int64_t n, int64_t grain, prt_range_fn fn, void *arg)
{
    prt_op *op = ex ? (prt_op *)ex->host_ : NULL;
    if (!op || !fn || n <= 0) return;
    prt__threadpool_parallel_for(op->st.pool, n, grain, fn, arg);
}

static void ex_set_error(prt_exec *ex, const char *msg)
{
    prt_op *op = ex ? (prt_op *)ex->host_ : NULL;
    if (!op || op->run_err_set) return;
    snprintf(op->run_err, sizeof op->run_err, "%s", msg ? msg : "");
    op->run_err_set = 1;
}

static prt_status ex_set_output_dims(prt_exec *ex, int32_t index, const prt_dims *dims)
{
    prt_op *op = ex ? (prt_op *)ex->host_ : NULL;
    char a[128], b[128];
    int64_t v, vmax;
    if (!op || !dims) return PRT_STATUS_INVALID_ARGUMENT;
    if (index < 0 || index >= op->st.nb_out) {
        ex_set_error(ex, "set_output_dims: output index out of range");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    if (!op->st.out_ddep[index]) {
        snprintf(a, sizeof a, "set_output_dims: output %d has no data-dependent extent", (int)index);
        ex_set_error(ex, a);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    v = prt_dims_volume(dims);
    vmax = prt_dims_volume(&op->st.out_max[index].dims);
    if (dims->nb != op->st.out_max[index].dims.nb || v < 0 || v > vmax) {
        char msg[400];
        snprintf(msg, sizeof msg, "set_output_dims: output %d dims %s do not fit the allocated %s", (int)index,
                 prt_dims_str(dims, a, sizeof a), prt_dims_str(&op->st.out_max[index].dims, b, sizeof b));
        ex_set_error(ex, msg);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    op->st.out[index].dims = *dims;
    op->st.out[index].dims.reserved_ = 0;
    return PRT_OK;
}

static prt_status ex_set_output_extent_device(prt_exec *ex, int32_t index, int32_t dim,
                                              const int64_t *device_extent)
{
    prt_op *op = ex ? (prt_op *)ex->host_ : NULL;
    char a[160];
    if (!op) return PRT_STATUS_INVALID_ARGUMENT;
    if (op->st.device != PRT_DEVICE_CUDA || !device_extent) {
        ex_set_error(ex, "set_output_extent_device: needs a CUDA run and a device pointer");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    if (index < 0 || index >= op->st.nb_out || !op->st.out_ddep[index] || dim < 0 ||
        dim >= op->st.out_max[index].dims.nb) {
        snprintf(a, sizeof a, "set_output_extent_device: output %d dim %d is not a data-dependent extent",
                 (int)index, (int)dim);
        ex_set_error(ex, a);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    if (op->nb_pend >= OP_MAX_PENDING) {
        ex_set_error(ex, "set_output_extent_device: too many extents reported in one enqueue");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    op->pend[op->nb_pend].index = index;
    op->pend[op->nb_pend].dim = dim;
    op->pend[op->nb_pend].dev = device_extent;
    op->nb_pend++;
    return PRT_OK;
}

/* Wait for the copies of device-reported extents and apply them. */
static prt_status resolve_pending(prt_op *op)
{
    char err[PRT_ERR_CAP];
    int32_t i;
    prt_status s;
    if (!op->nb_queued) return PRT_OK;
    s = prt__cuda_stream_sync(op->st.cuda_stream, err, sizeof err);
    op->nb_queued = 0;
    if (s != PRT_OK) return prt__err(op, s, "%s: %s", op->pl->layer, err);
    for (i = 0; i < op->nb_pend; i++) {
        int32_t k = op->pend[i].index, d = op->pend[i].dim;
        int64_t v = op->pend_host[i];
        if (v < 0 || v > op->st.out_max[k].dims.d[d])
            return prt__err(op, PRT_STATUS_PLUGIN_ERROR,
                            "%s: the plugin reported extent %lld for output %d dim %d; allocated for at most %lld",
                            op->pl->layer, (long long)v, (int)k, (int)d, (long long)op->st.out_max[k].dims.d[d]);
        op->st.out[k].dims.d[d] = v;
    }
    op->nb_pend = 0;
    return PRT_OK;
}

/* ---- configure ------------------------------------------------------------ */

static prt_status check_inputs(prt_op *op, const prt_tensor_desc *in, int32_t nb_in)
{
    char w[256], d[128];
    int32_t i, j;
    if (nb_in < 0 || nb_in > OP_MAX_IO || (nb_in > 0 && !in))
        return prt__err(op, PRT_STATUS_INVALID_ARGUMENT, "%s: %d inputs given (descriptors at %p)",
                        op_who(op, w, sizeof w), (int)nb_in, (const void *)in);
    for (i = 0; i < nb_in; i++) {
        if ((unsigned)in[i].dtype >= (unsigned)PRT_DTYPE_COUNT_)
            return prt__err(op, PRT_STATUS_INVALID_ARGUMENT, "%s: input %d has dtype %d, not a prt_dtype",
                            op_who(op, w, sizeof w), (int)i, (int)in[i].dtype);
        if ((unsigned)in[i].format >= (unsigned)PRT_FORMAT_COUNT_)
            return prt__err(op, PRT_STATUS_INVALID_ARGUMENT, "%s: input %d has format %d, not a prt_format",
                            op_who(op, w, sizeof w), (int)i, (int)in[i].format);
        if (in[i].dims.nb < 0 || in[i].dims.nb > PRT_MAX_DIMS)
            return prt__err(op, PRT_STATUS_INVALID_ARGUMENT, "%s: input %d has %d dims; expected 0..%d",
                            op_who(op, w, sizeof w), (int)i, (int)in[i].dims.nb, PRT_MAX_DIMS);
        for (j = 0; j < in[i].dims.nb; j++)
            if (in[i].dims.d[j] < 0)
                return prt__err(op, PRT_STATUS_SHAPE_MISMATCH,
                                "%s: input %d has dims %s; prt_op_configure needs concrete extents >= 0",
                                op_who(op, w, sizeof w), (int)i, prt_dims_str(&in[i].dims, d, sizeof d));
        if (prt_dims_volume(&in[i].dims) < 0 ||
            (uint64_t)prt_dims_volume(&in[i].dims) > SIZE_MAX / 8)
            return prt__err(op, PRT_STATUS_SHAPE_MISMATCH, "%s: input %d dims %s are too large",
                            op_who(op, w, sizeof w), (int)i, prt_dims_str(&in[i].dims, d, sizeof d));
    }
    return PRT_OK;
}

static void io_line(char *buf, size_t cap, const prt_dyn_tensor_desc *io, int32_t n, int32_t nb_in)
{
    size_t k = 0;
    int32_t i;
    char d[128];
    buf[0] = 0;
    for (i = 0; i < n && k + 1 < cap; i++) {
        int c = snprintf(buf + k, cap - k, "%s%s%d %s/%s %s", i ? ", " : "", i < nb_in ? "in" : "out",
                         (int)(i < nb_in ? i : i - nb_in), prt_dtype_name(io[i].desc.dtype),
                         prt_format_name(io[i].desc.format), prt_dims_str(&io[i].desc.dims, d, sizeof d));
        if (c < 0) break;
        k += (size_t)c;
    }
}

prt_status prt_op_configure(prt_op *op, const prt_tensor_desc *inputs, int32_t nb_in, const prt_op_config *cfg)
{
    op_state ns;
    prt__exprs *x = NULL;
    prt_dims_expr *in_e = NULL, *out_e = NULL;
    prt_dtype *in_t = NULL, *out_t = NULL;
    prt_dyn_tensor_desc *io = NULL;
    prt_dims *in_dims = NULL;
    char err[PRT_ERR_CAP], w[256];
    prt_status s;
    int32_t nb_out, i, j, n;
    prt_device device = PRT_DEVICE_CPU;
    int32_t cuda_device = 0, nb_threads = 0;
    void *stream = NULL;

    if (!op) return PRT_STATUS_INVALID_ARGUMENT;
    memset(&ns, 0, sizeof ns);
    op_who(op, w, sizeof w);
    nb_out = op->nb_out;
    s = check_inputs(op, inputs, nb_in);
    if (s != PRT_OK) return s;

    /* The config: read members only where struct_size covers them. */
    if (cfg) {
        if (cfg->struct_size < offsetof(prt_op_config, device) + sizeof(cfg->device))
            return prt__err(op, PRT_STATUS_INVALID_ARGUMENT, "%s: prt_op_config.struct_size is %u; too small",
                            w, cfg->struct_size);
        device = cfg->device;
        if (cfg->struct_size >= offsetof(prt_op_config, cuda_device) + sizeof(cfg->cuda_device))
            cuda_device = cfg->cuda_device;
        if (cfg->struct_size >= offsetof(prt_op_config, nb_threads) + sizeof(cfg->nb_threads))
            nb_threads = cfg->nb_threads;
        if (cfg->struct_size >= offsetof(prt_op_config, cuda_stream) + sizeof(cfg->cuda_stream))
            stream = cfg->cuda_stream;
    }
    if (device != PRT_DEVICE_CPU && device != PRT_DEVICE_CUDA)
        return prt__err(op, PRT_STATUS_INVALID_ARGUMENT, "%s: device %d is neither CPU (0) nor CUDA (1)", w,
                        (int)device);
    if (nb_threads < 0)
        return prt__err(op, PRT_STATUS_INVALID_ARGUMENT, "%s: nb_threads must be >= 0 (0 = all cores), got %d",
                        w, (int)nb_threads);
    if (device == PRT_DEVICE_CUDA) {
        s = prt__cuda_set_device(cuda_device, err, sizeof err);
        if (s != PRT_OK) return prt__err(op, s, "%s: %s", w, err);
    }

    n = nb_in + nb_out;
    ns.nb_in = nb_in;
    ns.nb_out = nb_out;
    ns.device = device;
    ns.cuda_device = cuda_device;
    ns.cuda_stream = stream;
    ns.in = prt__calloc((size_t)(nb_in ? nb_in : 1), sizeof(prt_tensor_desc));
    ns.out = prt__calloc((size_t)(nb_out ? nb_out : 1), sizeof(prt_tensor_desc));
    ns.out_max = prt__calloc((size_t)(nb_out ? nb_out : 1), sizeof(prt_tensor_desc));
    ns.out_ddep = prt__calloc((size_t)(nb_out ? nb_out : 1), 1);
    in_e = prt__calloc((size_t)(nb_in ? nb_in : 1), sizeof(prt_dims_expr));
    out_e = prt__calloc((size_t)(nb_out ? nb_out : 1), sizeof(prt_dims_expr));
    in_t = prt__calloc((size_t)(nb_in ? nb_in : 1), sizeof(prt_dtype));
    out_t = prt__calloc((size_t)(nb_out ? nb_out : 1), sizeof(prt_dtype));
    io = prt__calloc((size_t)(n ? n : 1), sizeof(prt_dyn_tensor_desc));
    in_dims = prt__calloc((size_t)(nb_in ? nb_in : 1), sizeof(prt_dims));
    if (!ns.in || !ns.out || !ns.out_max || !ns.out_ddep || !in_e || !out_e || !in_t || !out_t || !io ||
        !in_dims) {
        s = prt__err(op, PRT_STATUS_OUT_OF_MEMORY, "%s: out of memory configuring", w);
        goto done;
    }
    for (i = 0; i < nb_in; i++) {
        ns.in[i] = inputs[i];
        ns.in[i].dims.reserved_ = 0;
        in_t[i] = inputs[i].dtype;
        in_dims[i] = ns.in[i].dims;
    }

    /* 1. output types */
    s = prt__plugin_output_types(op->pl, in_t, nb_in, out_t, nb_out, err, sizeof err);
    if (s != PRT_OK) {
        prt__err(op, s, "%s", err);
        goto done;
    }

    /* 2. output shapes: expressions over known leaves, then evaluated */
    s = prt__exprs_create(&x);
    if (s != PRT_OK) {
        prt__err(op, s, "%s: out of memory configuring", w);
        goto done;
    }
    for (i = 0; i < nb_in; i++) {
        in_e[i].nb = inputs[i].dims.nb;
        for (j = 0; j < inputs[i].dims.nb; j++) in_e[i].d[j] = prt__exprs_leaf(x, i, j, inputs[i].dims.d[j]);
    }
    if (prt__exprs_failed(x)) {
        s = prt__err(op, PRT_STATUS_OUT_OF_MEMORY, "%s: out of memory building shape expressions", w);
        goto done;
    }
    s = prt__plugin_output_shapes(op->pl, in_e, nb_in, out_e, nb_out, prt__exprs_builder(x), err, sizeof err);
    if (s != PRT_OK) {
        prt__err(op, s, "%s", err);
        goto done;
    }
    if (prt__exprs_failed(x)) {
        s = prt__err(op, PRT_STATUS_OUT_OF_MEMORY, "%s: out of memory building shape expressions", w);
        goto done;
    }
    for (i = 0; i < nb_out; i++) {
        ns.out[i].dtype = out_t[i];
        ns.out[i].format = PRT_FORMAT_LINEAR;
        ns.out[i].dims.nb = out_e[i].nb;
        for (j = 0; j < out_e[i].nb; j++) {
            int64_t v = -1;
            int dd = 0;
            char es[256], ds[128];
            if (!prt__exprs_owns(x, out_e[i].d[j])) {
                s = prt__err(op, PRT_STATUS_PLUGIN_ERROR,
                             "%s: output %d dim %d is not an expression of the builder it was given", w, (int)i,
                             (int)j);
                goto done;
            }
            if (prt__expr_eval(x, out_e[i].d[j], in_dims, nb_in, &v, &dd) != 0 || v < 0) {
                s = prt__err(op, PRT_STATUS_SHAPE_MISMATCH,
                             "%s: output %d dim %d = %s is %s for input 0 dims %s (expected an extent >= 0; "
                             "division by zero and overflow make it invalid)",
                             w, (int)i, (int)j, prt__expr_str(x, out_e[i].d[j], es, sizeof es),
                             v < 0 && v != -1 ? "negative" : "not computable",
                             nb_in ? prt_dims_str(&in_dims[0], ds, sizeof ds) : "(no inputs)");
                goto done;
            }
            ns.out[i].dims.d[j] = v;
            if (dd) ns.out_ddep[i] = 1;
        }
        if (prt_dims_volume(&ns.out[i].dims) < 0 ||
            (uint64_t)prt_dims_volume(&ns.out[i].dims) > SIZE_MAX / 8) {
            char ds[128];
            s = prt__err(op, PRT_STATUS_SHAPE_MISMATCH, "%s: output %d dims %s are too large", w, (int)i,
                         prt_dims_str(&ns.out[i].dims, ds, sizeof ds));
            goto done;
        }
        ns.out_max[i] = ns.out[i];
    }

    /* 3. the format combination, position by position */
    for (i = 0; i < n; i++) {
        const prt_tensor_desc *d = i < nb_in ? &ns.in[i] : &ns.out[i - nb_in];
        io[i].desc = *d;
        io[i].min = io[i].opt = io[i].max = d->dims;
    }
    for (i = 0; i < n; i++) {
        if (!prt__plugin_supports(op->pl, i, io, nb_in, nb_out)) {
            char line[600];
            io_line(line, sizeof line, io, i + 1, nb_in);
            s = prt__err(op, PRT_STATUS_UNSUPPORTED,
                         "%s: the plugin does not support %s %d as %s/%s (positions so far: %s)", w,
                         i < nb_in ? "input" : "output", (int)(i < nb_in ? i : i - nb_in),
                         prt_dtype_name(io[i].desc.dtype), prt_format_name(io[i].desc.format), line);
            goto done;
        }
    }

    /* 4. configure with min = opt = max */
    s = prt__plugin_configure(op->pl, io, nb_in, io + nb_in, nb_out, err, sizeof err);
    if (s != PRT_OK) {
        prt__err(op, s, "%s", err);
        goto done;
    }

    /* 5. workspace */
    ns.ws_size = prt__plugin_workspace(op->pl, io, nb_in, io + nb_in, nb_out);
    if (ns.ws_size == SIZE_MAX || ns.ws_size > ((size_t)1 << 40)) {
        s = prt__err(op, PRT_STATUS_OUT_OF_MEMORY, "%s: get_workspace_size asks for %zu bytes", w, ns.ws_size);
        goto done;
    }
    if (ns.ws_size) {
        if (device == PRT_DEVICE_CUDA) {
            s = prt__cuda_malloc(ns.ws_size, &ns.ws, err, sizeof err);
            if (s != PRT_OK) {
                prt__err(op, s, "%s: workspace: %s", w, err);
                goto done;
            }
        } else {
            ns.ws = prt__malloc(ns.ws_size);
            if (!ns.ws) {
                s = prt__err(op, PRT_STATUS_OUT_OF_MEMORY, "%s: out of memory allocating a workspace of %zu bytes",
                             w, ns.ws_size);
                goto done;
            }
        }
    }

    /* 6. thread pool (reused when the size is unchanged), context, attach */
    if (device == PRT_DEVICE_CPU) {
        int32_t want = nb_threads ? nb_threads : prt__threadpool_nb_cores();
        if (op->st.pool && prt__threadpool_size(op->st.pool) == want) {
            ns.pool = op->st.pool; /* moved below, once everything succeeded */
        } else {
            s = prt__threadpool_create(want, &ns.pool, err, sizeof err);
            if (s != PRT_OK) {
                prt__err(op, s, "%s: %s", w, err);
                goto done;
            }
        }
    }
    s = prt__plugctx_create(device, cuda_device, &ns.ctx);
    if (s != PRT_OK) {
        prt__err(op, s, "%s: out of memory creating a plugin context", w);
        goto done;
    }
    s = prt__plugin_attach(op->pl, prt__plugctx_get(ns.ctx), &ns.inst, err, sizeof err);
    if (s != PRT_OK) {
        prt__err(op, s, "%s", err);
        goto done;
    }

    /* 7. the concrete shapes of the coming runs */
    s = prt__plugin_shapes(ns.inst, ns.in, nb_in, ns.out_max, nb_out, err, sizeof err);
    if (s != PRT_OK) {
        prt__err(op, s, "%s", err);
        goto done;
    }
    ns.configured = 1;

done:
    if (s == PRT_OK) {
        op_state old = op->st;
        if (old.pool == ns.pool) old.pool = NULL;
        op->st = ns;
        state_free(&old);
        prt__err_clear(op);
    } else {
        if (ns.pool == op->st.pool) ns.pool = NULL;
        state_free(&ns);
    }
    prt__exprs_destroy(x);
    prt__free(in_e);
    prt__free(out_e);
    prt__free(in_t);
    prt__free(out_t);
    prt__free(io);
    prt__free(in_dims);
    return s;
}

prt_status prt_op_output_desc(const prt_op *op, int32_t index, prt_tensor_desc *out)
{
    if (!op || !out) return op ? prt__err(op, PRT_STATUS_INVALID_ARGUMENT, "out must not be NULL")
                               : PRT_STATUS_INVALID_ARGUMENT;
    if (!op->st.configured)
        return prt__err(op, PRT_STATUS_INVALID_ARGUMENT, "%s: output_desc before a successful configure",
                        op->pl->layer);
    if (index < 0 || index >= op->st.nb_out)
        return prt__err(op, PRT_STATUS_INVALID_ARGUMENT, "%s: output %d requested; the plugin has %d output%s",
                        op->pl->layer, (int)index, (int)op->st.nb_out, op->st.nb_out == 1 ? "" : "s");
    if (op->nb_queued) {
        prt_status s = resolve_pending((prt_op *)op); /* the op's own cache; the caller's view is const */
        if (s != PRT_OK) return s;
    }
    *out = op->st.out[index];
    return PRT_OK;
}

size_t prt_op_workspace_size(const prt_op *op)
{
    return op && op->st.configured ? op->st.ws_size : 0;
}

prt_status prt_op_run(prt_op *op, const void *const *inputs, void *const *outputs)
{
    char w[256], err[PRT_ERR_CAP];
    prt_tensor_desc small[8], *out_desc = small;
    prt_status s;
    int32_t i;

    if (!op) return PRT_STATUS_INVALID_ARGUMENT;
    op_who(op, w, sizeof w);
    if (!op->st.configured)
        return prt__err(op, PRT_STATUS_INVALID_ARGUMENT, "%s: run before a successful configure", w);
    if ((op->st.nb_in && !inputs) || (op->st.nb_out && !outputs))
        return prt__err(op, PRT_STATUS_INVALID_ARGUMENT, "%s: run needs %d input and %d output pointers", w,
                        (int)op->st.nb_in, (int)op->st.nb_out);
    for (i = 0; i < op->st.nb_in; i++)
        if (!inputs[i] && prt_dims_volume(&op->st.in[i].dims) > 0)
            return prt__err(op, PRT_STATUS_INVALID_ARGUMENT, "%s: input %d pointer is NULL", w, (int)i);
    for (i = 0; i < op->st.nb_out; i++)
        if (!outputs[i] && prt_dims_volume(&op->st.out_max[i].dims) > 0)
            return prt__err(op, PRT_STATUS_INVALID_ARGUMENT, "%s: output %d pointer is NULL", w, (int)i);
    if (op->st.nb_out > 8) {
        out_desc = prt__malloc((size_t)op->st.nb_out * sizeof(*out_desc));
        if (!out_desc) return prt__err(op, PRT_STATUS_OUT_OF_MEMORY, "%s: out of memory", w);
    }
    /* Outputs are described as allocated; data-dependent ones start at their
     * upper bound and are narrowed by set_output_dims. */
    for (i = 0; i < op->st.nb_out; i++) {
        out_desc[i] = op->st.out_max[i];
        op->st.out[i] = op->st.out_max[i];
    }
    if (op->st.device == PRT_DEVICE_CUDA) {
        s = prt__cuda_set_device(op->st.cuda_device, err, sizeof err);
        if (s != PRT_OK) {
            prt__err(op, s, "%s: %s", w, err);
            goto done;
        }
    }
    memset(&op->ex, 0, sizeof op->ex);
    op->ex.struct_size = (uint32_t)sizeof(prt_exec);
    op->ex.abi_version = PRT_ABI_VERSION;
    op->ex.device = op->st.device;
    op->ex.cuda_device = op->st.device == PRT_DEVICE_CUDA ? op->st.cuda_device : 0;
    op->ex.cuda_stream = op->st.device == PRT_DEVICE_CUDA ? op->st.cuda_stream : NULL;
    op->ex.nb_threads = op->st.pool ? prt__threadpool_size(op->st.pool) : 1;
    op->ex.parallel_for = ex_parallel_for;
    op->ex.set_error = ex_set_error;
    op->ex.set_output_dims = ex_set_output_dims;
    op->ex.host_ = op;
    op->ex.set_output_extent_device = op->st.device == PRT_DEVICE_CUDA ? ex_set_output_extent_device : NULL;
    if (op->nb_queued) (void)resolve_pending(op); /* a previous run's extents, not read */
    op->nb_pend = 0;
    op->run_err[0] = 0;
    op->run_err_set = 0;
    s = prt__plugin_enqueue(op->st.inst, op->st.in, out_desc, inputs, outputs, op->st.ws, &op->ex);
    if (s != PRT_OK) {
        if (op->run_err_set && op->run_err[0])
            prt__err(op, (int)s > 0 && (int)s < (int)PRT_STATUS_COUNT_ ? s : PRT_STATUS_PLUGIN_ERROR,
                     "%s: enqueue failed: %s", w, op->run_err);
        else
            prt__err(op, PRT_STATUS_PLUGIN_ERROR, "%s: enqueue failed with %s (%s) and gave no message", w,
                     prt_status_name(s), prt_status_str(s));
        if ((int)s <= 0 || (int)s >= (int)PRT_STATUS_COUNT_) s = PRT_STATUS_PLUGIN_ERROR;
        /* a failed run leaves the outputs as allocated */
        for (i = 0; i < op->st.nb_out; i++) op->st.out[i] = op->st.out_max[i];
        goto done;
    }
    if (op->nb_pend) {
        if (!op->pend_host) {
            s = prt__cuda_host_alloc(OP_MAX_PENDING * sizeof(int64_t), (void **)&op->pend_host, err, sizeof err);
            if (s != PRT_OK) {
                prt__err(op, s, "%s: %s", w, err);
                goto done;
            }
        }
        for (i = 0; i < op->nb_pend; i++) {
            s = prt__cuda_copy_d2h_async(&op->pend_host[i], op->pend[i].dev, sizeof(int64_t),
                                         op->st.cuda_stream, err, sizeof err);
            if (s != PRT_OK) {
                prt__err(op, s, "%s: %s", w, err);
                goto done;
            }
        }
        op->nb_queued = op->nb_pend;
    }
    prt__err_clear(op);
done:
    if (out_desc != small) prt__free(out_desc);
    return s;
}

/* 1 if output `index` of a configured op has a data-dependent extent (its
 * descriptor holds the upper bound until a run narrows it). For importers
 * that must not take such extents for static ones. */
int prt__op_output_data_dependent(const prt_op *op, int32_t index)
{
    if (!op || !op->st.configured || index < 0 || index >= op->st.nb_out) return 1;
    return op->st.out_ddep[index] != 0;
}
