/*
 * engine/op.c - one plugin instance run directly (include/plugrt/op.h), as a
 * one-layer engine: the same builder, plan, loader and execution context as
 * any network, so the conformance harness, the tests and engines apply the
 * same shape, type and extent rules and give the same messages.
 *
 * An op holds the build-phase plugin (`pl`). prt_op_configure makes a
 * network of the given inputs ("input0", ...), one layer holding a copy of
 * `pl` as it is (its fields or blob), and every plugin output ("output0",
 * ...) marked; builds it for the device (the inputs' own types: no cast
 * layers), and creates an execution context. The new state is swapped in
 * only when every step succeeded, so a failed configure leaves the op as it
 * was. A run binds the pointers and runs the context (CUDA: enqueued on the
 * configured stream, not waited for).
 *
 * Lifecycle: that of a one-layer engine (docs/lifecycle.md): build, plan
 * record, load, context (attach), then per run the shape notification when
 * shapes changed and enqueue.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "engine/netdef.h"
#include "engine/runtime.h"
#include "plugrt/op.h"

#define OP_MAX_IO 1024

/* ======================================================================== */
/* prt_op                                                                   */
/* ======================================================================== */

/* What configure builds; swapped into the op as a whole. */
typedef struct op_state {
    int configured;
    int32_t nb_in, nb_out;
    prt_device device;
    prt_network *net;
    prt_engine *e;
    prt_context *ctx;
} op_state;

struct prt_op {
    prt__plugin *pl;
    prt_registry *reg; /* where the plan's record finds its creator again */
    int32_t nb_out;
    op_state st;
};

/* prt_op_last_error(NULL) reads the no-object slot, where create and
 * deserialize also leave their message for callers of that older form. */
const char *prt_op_last_error(const prt_op *op)
{
    return prt__err_get(op);
}

/* A failed create or deserialize: the message goes to the registry the call
 * was made on (NULL: the no-object slot) and to the no-object slot. */
static prt_status create_failed(prt_registry *r, prt_status s, const char *msg)
{
    if (r) (void)prt__err(r, s, "%s", msg);
    return prt__err(NULL, s, "%s", msg);
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
    prt_context_destroy(st->ctx);
    prt_engine_destroy(st->e);
    prt_network_destroy(st->net);
    memset(st, 0, sizeof(*st));
}

/* "input3" / "output0": the names of the one-layer network's tensors. */
static const char *io_name(char *buf, size_t cap, int output, int32_t i)
{
    snprintf(buf, cap, "%s%d", output ? "output" : "input", (int)i);
    return buf;
}

static prt_status wrap_new(prt_registry *r, prt__plugin *pl, prt_op **out, char *err, size_t cap)
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
    op->reg = r;
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
    char err[PRT_ERR_CAP];

    prt__err_clear(NULL);
    if (!r || !name || !version || !out)
        return create_failed(r, PRT_STATUS_INVALID_ARGUMENT,
                             "prt_op_create needs a registry, a name, a version and out");
    s = prt_registry_find(r, name, version, plugin_namespace, &c, &owner);
    if (s != PRT_OK) {
        snprintf(err, sizeof err, "%s", prt_registry_last_error(r)); /* the registry's slot is rewritten */
        return create_failed(r, s, err);
    }
    err[0] = 0;
    s = prt__plugin_create(c, owner, name, fields, PRT_PHASE_BUILD, &pl, err, sizeof err);
    if (s == PRT_OK) s = wrap_new(r, pl, out, err, sizeof err);
    return s == PRT_OK ? PRT_OK : create_failed(r, s, err);
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
    char err[PRT_ERR_CAP];

    prt__err_clear(NULL);
    if (!r || !out || (!data && len))
        return create_failed(r, PRT_STATUS_INVALID_ARGUMENT, "prt_op_deserialize needs a registry, data and out");
    rd = prt_reader_init(data, len);
    err[0] = 0;
    s = prt__plugin_read_record(r, &rd, NULL, &pl, err, sizeof err);
    if (s != PRT_OK) return create_failed(r, s, err);
    if (prt_reader_left(&rd) != 0) {
        snprintf(err, sizeof err, "plugin record of %s v%s is followed by %zu stray byte%s", pl->creator->name,
                 pl->creator->version, prt_reader_left(&rd), prt_reader_left(&rd) == 1 ? "" : "s");
        prt__plugin_destroy(pl);
        return create_failed(r, PRT_STATUS_BAD_FORMAT, err);
    }
    s = wrap_new(r, pl, out, err, sizeof err);
    return s == PRT_OK ? PRT_OK : create_failed(r, s, err);
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
    if (s == PRT_OK) s = wrap_new(op->reg, pl, out, err, sizeof err);
    if (s != PRT_OK) return prt__err(op, s, "%s", err);
    return PRT_OK;
}

void prt_op_destroy(prt_op *op)
{
    if (!op) return;
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
        if (in[i].format != PRT_FORMAT_LINEAR)
            return prt__err(op, PRT_STATUS_UNSUPPORTED, "%s: input %d is in format %s; engines run linear tensors",
                            op_who(op, w, sizeof w), (int)i, prt_format_name(in[i].format));
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

/* The one-layer network of the op for these inputs. */
static prt_status make_network(prt_op *op, const prt_tensor_desc *inputs, int32_t nb_in, prt_network **out)
{
    prt_network *net = NULL;
    const char **in_names = NULL, **out_names = NULL;
    char *names = NULL;
    int32_t i, nb_out = op->nb_out;
    prt_status s;

    in_names = prt__calloc((size_t)nb_in + 1, sizeof *in_names);
    out_names = prt__calloc((size_t)nb_out + 1, sizeof *out_names);
    names = prt__malloc(((size_t)nb_in + (size_t)nb_out + 1) * 24);
    if (!in_names || !out_names || !names || prt_network_create(op->reg, &net) != PRT_OK) {
        s = prt__err(op, PRT_STATUS_OUT_OF_MEMORY, "%s: out of memory configuring", op->pl->layer);
        goto done;
    }
    for (i = 0; i < nb_in; i++) {
        in_names[i] = io_name(names + 24 * (size_t)i, 24, 0, i);
        if ((s = prt_network_add_input(net, in_names[i], inputs[i].dtype, &inputs[i].dims)) != PRT_OK) {
            prt__err(op, s, "%s", prt_network_last_error(net));
            goto done;
        }
    }
    for (i = 0; i < nb_out; i++) out_names[i] = io_name(names + 24 * (size_t)(nb_in + i), 24, 1, i);
    s = prt__network_add_proto_layer(net, op->pl->layer, op->pl, in_names, nb_in, out_names, nb_out);
    for (i = 0; i < nb_out && s == PRT_OK; i++) s = prt_network_mark_output(net, out_names[i]);
    if (s != PRT_OK) {
        prt__err(op, s, "%s", prt_network_last_error(net));
        goto done;
    }
    *out = net;
    net = NULL;
done:
    prt_network_destroy(net);
    prt__free((void *)in_names);
    prt__free((void *)out_names);
    prt__free(names);
    return s;
}

prt_status prt_op_configure(prt_op *op, const prt_tensor_desc *inputs, int32_t nb_in, const prt_op_config *cfg)
{
    op_state ns;
    prt_builder_config bc;
    prt_context_config cc;
    char err[PRT_ERR_CAP], w[256];
    prt_status s;
    prt_device device = PRT_DEVICE_CPU;
    int32_t cuda_device = 0, nb_threads = 0;
    void *stream = NULL;

    if (!op) return PRT_STATUS_INVALID_ARGUMENT;
    memset(&ns, 0, sizeof ns);
    op_who(op, w, sizeof w);
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

    ns.nb_in = nb_in;
    ns.nb_out = op->nb_out;
    ns.device = device;
    if ((s = make_network(op, inputs, nb_in, &ns.net)) != PRT_OK) goto done;
    prt_builder_config_init(&bc);
    bc.device = device;
    err[0] = 0;
    if ((s = prt__engine_build(ns.net, &bc, op->reg, 1, &ns.e, err, sizeof err)) != PRT_OK) {
        prt__err(op, s, "%s", err);
        goto done;
    }
    prt_context_config_init(&cc);
    cc.device = device;
    cc.cuda_device = cuda_device;
    cc.nb_threads = nb_threads;
    /* No stream given: the default stream (cudaStreamLegacy), as prt_op
     * documents, rather than one the context would make. */
    cc.cuda_stream = stream ? stream : device == PRT_DEVICE_CUDA ? (void *)0x1 : NULL;
    if ((s = prt_context_create(ns.e, &cc, &ns.ctx)) != PRT_OK) {
        prt__err(op, s, "%s", prt_engine_last_error(ns.e));
        goto done;
    }
    ns.configured = 1;
done:
    if (s == PRT_OK) {
        op_state old = op->st;
        op->st = ns;
        state_free(&old);
        prt__err_clear(op);
    } else {
        state_free(&ns);
    }
    return s;
}

prt_status prt_op_output_desc(const prt_op *op, int32_t index, prt_tensor_desc *out)
{
    prt_io_desc io;
    prt_dims d;
    char name[32];
    prt_status s;
    if (!op || !out) return op ? prt__err(op, PRT_STATUS_INVALID_ARGUMENT, "out must not be NULL")
                               : PRT_STATUS_INVALID_ARGUMENT;
    if (!op->st.configured)
        return prt__err(op, PRT_STATUS_INVALID_ARGUMENT, "%s: output_desc before a successful configure",
                        op->pl->layer);
    if (index < 0 || index >= op->st.nb_out)
        return prt__err(op, PRT_STATUS_INVALID_ARGUMENT, "%s: output %d requested; the plugin has %d output%s",
                        op->pl->layer, (int)index, (int)op->st.nb_out, op->st.nb_out == 1 ? "" : "s");
    io_name(name, sizeof name, 1, index);
    if ((s = prt_engine_io(op->st.e, prt_engine_find_io(op->st.e, name), &io)) != PRT_OK ||
        (s = prt_context_get_shape(op->st.ctx, name, &d)) != PRT_OK)
        return prt__err(op, s, "%s", prt_context_last_error(op->st.ctx));
    memset(out, 0, sizeof *out);
    out->dtype = io.dtype;
    out->format = PRT_FORMAT_LINEAR;
    out->dims = d;
    return PRT_OK;
}

size_t prt_op_workspace_size(const prt_op *op)
{
    const prt__plan *p;
    int32_t i;
    if (!op || !op->st.configured) return 0;
    p = op->st.e->plan; /* what the layer asked for, not the context's rounded total */
    for (i = 0; i < p->nb_layers; i++)
        if (p->layers[i].kind == PRT__LAYER_PLUGIN) return (size_t)p->layers[i].workspace;
    return 0;
}

prt_status prt_op_run(prt_op *op, const void *const *inputs, void *const *outputs)
{
    static uint8_t empty[64]; /* stands for the NULL pointer of an empty tensor */
    char w[256], name[32];
    prt_status s = PRT_OK;
    int32_t i;
    size_t bytes;

    if (!op) return PRT_STATUS_INVALID_ARGUMENT;
    op_who(op, w, sizeof w);
    if (!op->st.configured)
        return prt__err(op, PRT_STATUS_INVALID_ARGUMENT, "%s: run before a successful configure", w);
    if ((op->st.nb_in && !inputs) || (op->st.nb_out && !outputs))
        return prt__err(op, PRT_STATUS_INVALID_ARGUMENT, "%s: run needs %d input and %d output pointers", w,
                        (int)op->st.nb_in, (int)op->st.nb_out);
    for (i = 0; i < op->st.nb_in + op->st.nb_out && s == PRT_OK; i++) {
        int is_out = i >= op->st.nb_in;
        int32_t k = is_out ? i - op->st.nb_in : i;
        void *ptr = is_out ? outputs[k] : (void *)inputs[k];
        io_name(name, sizeof name, is_out, k);
        if (!ptr) {
            if ((s = prt_context_buffer_size(op->st.ctx, name, &bytes)) != PRT_OK) break;
            if (bytes > 0)
                return prt__err(op, PRT_STATUS_INVALID_ARGUMENT, "%s: %s %d pointer is NULL", w,
                                is_out ? "output" : "input", (int)k);
            ptr = empty;
        }
        s = prt_context_set_tensor(op->st.ctx, name, ptr);
    }
    if (s == PRT_OK)
        s = op->st.device == PRT_DEVICE_CUDA ? prt_context_enqueue(op->st.ctx, NULL) : prt_context_execute(op->st.ctx);
    if (s != PRT_OK) return prt__err(op, s, "%s", prt_context_last_error(op->st.ctx));
    prt__err_clear(op);
    return PRT_OK;
}

/* 1 if output `index` of a configured op has a data-dependent extent (its
 * descriptor holds the upper bound until a run narrows it). For importers
 * that must not take such extents for static ones. */
int prt__op_output_data_dependent(const prt_op *op, int32_t index)
{
    const prt__plan *p;
    int32_t i, k;
    if (!op || !op->st.configured || !op->st.e || index < 0 || index >= op->st.nb_out) return 1;
    p = op->st.e->plan;
    for (i = 0; i < p->nb_layers; i++) {
        const prt__player *l = &p->layers[i];
        const prt__ptensor *t;
        if (l->kind != PRT__LAYER_PLUGIN) continue;
        if (index >= l->nb_out || l->out[index] < 0) return 1;
        t = &p->tensors[l->out[index]];
        for (k = 0; k < t->nb_dims; k++)
            if (p->nodes[t->expr[k]].kind == PRT__NODE_DDEP) return 1;
        return 0;
    }
    return 1;
}

/* Output dtypes of an op for the given input dtypes (the plugin's own type
 * rule, no configure). For importers tracking element types. */
prt_status prt__op_output_types(prt_op *op, const prt_dtype *in, int32_t nb_in, prt_dtype *out, int32_t nb_out)
{
    char err[PRT_ERR_CAP];
    if (!op || nb_out != op->nb_out) return PRT_STATUS_INVALID_ARGUMENT;
    return prt__plugin_output_types(op->pl, in, nb_in, out, nb_out, err, sizeof err);
}
