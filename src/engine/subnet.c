/*
 * engine/subnet.c - sub-networks for plugins (subnet.h): a GRAPH field's
 * network built into an engine for the parent's device with the profile the
 * plugin derives from its own input ranges, a context for it, and runs of
 * that context on the plugin's buffers.
 */
#include <inttypes.h>
#include <string.h>

#include "core/checked.h"
#include "core/core.h"
#include "engine/netdef.h"
#include "engine/subnet.h"
#include "plugrt/engine.h"

#define SUBNET_MAX_IO 64

struct prt_subnet {
    char *name;                /* the graph's name, for messages */
    prt_engine *e;
    prt_context *ctx;
    prt_device device;
    int32_t nb_in, nb_out;
    char **in_names, **out_names;
    prt_dims *last_in;         /* the shapes of the previous run (nb = -1: none yet) */
};

static _Thread_local prt_registry *scope_registry;

prt_registry *prt__subnet_scope_enter(prt_registry *r)
{
    prt_registry *prev = scope_registry;
    scope_registry = r;
    return prev;
}

void prt__subnet_scope_leave(prt_registry *previous)
{
    scope_registry = previous;
}

static prt_status subnet_fail(prt_msg *err, prt_status s, const char *name, const char *fmt, ...) PRT_PRINTF(4, 5);
static prt_status subnet_fail(prt_msg *err, prt_status s, const char *name, const char *fmt, ...)
{
    char msg[PRT_ERR_CAP];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    prt_msg_set(err, "sub-network \"%s\": %s", name ? name : "?", msg);
    return s;
}

void prt__subnet_destroy(prt_subnet *s)
{
    int32_t i;
    if (!s) return;
    prt_context_destroy(s->ctx);
    prt_engine_destroy(s->e);
    for (i = 0; s->in_names && i < s->nb_in; i++) prt__free(s->in_names[i]);
    for (i = 0; s->out_names && i < s->nb_out; i++) prt__free(s->out_names[i]);
    prt__free(s->in_names);
    prt__free(s->out_names);
    prt__free(s->last_in);
    prt__free(s->name);
    prt__free(s);
}

/* The profile ranges of the network's -1 extents from the plugin's ranges;
 * fixed extents must lie inside them. */
static prt_status subnet_ranges(const prt_network *net, const prt_subnet_config *cfg, const char *name,
                                prt_profile_range *ranges, int32_t *nb_ranges, prt_msg *err)
{
    int32_t i, j, k = 0, n = 0;
    char a[160], b[160], c[160];
    for (i = 0; i < net->nb_tensors; i++) {
        const prt__net_tensor *t = &net->tensors[i];
        const prt_dyn_tensor_desc *d;
        int dynamic = 0;
        if (t->kind != PRT__TENSOR_INPUT) continue;
        d = &cfg->inputs[k++];
        if (t->shape_values)
            return subnet_fail(err, PRT_STATUS_UNSUPPORTED, name,
                               "input \"%s\" is a shape-value input; sub-networks take data inputs only", t->name);
        if (d->desc.dtype != t->dtype)
            return subnet_fail(err, PRT_STATUS_TYPE_MISMATCH, name, "input %d \"%s\" is %s; the plugin gives %s",
                               (int)(k - 1), t->name, prt_dtype_name(t->dtype), prt_dtype_name(d->desc.dtype));
        if (d->min.nb != t->dims.nb || d->opt.nb != t->dims.nb || d->max.nb != t->dims.nb)
            return subnet_fail(err, PRT_STATUS_SHAPE_MISMATCH, name,
                               "input %d \"%s\" has %d dims %s; the plugin's range has min %s, max %s", (int)(k - 1),
                               t->name, t->dims.nb, prt_dims_str(&t->dims, a, sizeof a),
                               prt_dims_str(&d->min, b, sizeof b), prt_dims_str(&d->max, c, sizeof c));
        for (j = 0; j < t->dims.nb; j++) {
            if (d->min.d[j] < 0 || d->min.d[j] > d->opt.d[j] || d->opt.d[j] > d->max.d[j])
                return subnet_fail(err, PRT_STATUS_INVALID_ARGUMENT, name,
                                   "input %d \"%s\": the plugin's range min %s, opt %s, max %s is not ordered "
                                   "0 <= min <= opt <= max", (int)(k - 1), t->name, prt_dims_str(&d->min, a, sizeof a),
                                   prt_dims_str(&d->opt, b, sizeof b), prt_dims_str(&d->max, c, sizeof c));
            if (t->dims.d[j] == PRT_DIM_DYNAMIC) {
                dynamic = 1;
            } else if (d->min.d[j] != t->dims.d[j] || d->max.d[j] != t->dims.d[j]) {
                return subnet_fail(err, PRT_STATUS_SHAPE_MISMATCH, name,
                                   "input %d \"%s\" is declared %s; dim %d of the plugin's range goes %" PRId64
                                   "..%" PRId64 " (min %s, max %s)",
                                   (int)(k - 1), t->name, prt_dims_str(&t->dims, a, sizeof a), (int)j, d->min.d[j],
                                   d->max.d[j], prt_dims_str(&d->min, b, sizeof b), prt_dims_str(&d->max, c, sizeof c));
            }
        }
        if (dynamic) {
            ranges[n].input = t->name;
            ranges[n].min = d->min;
            ranges[n].opt = d->opt;
            ranges[n].max = d->max;
            n++;
        }
    }
    *nb_ranges = n;
    return PRT_OK;
}

prt_status prt__subnet_build(const prt_field_graph *graph, const prt_subnet_config *cfg, prt_subnet **out,
                             prt_msg *err)
{
    prt_subnet_config c;
    prt_registry *reg = scope_registry ? scope_registry : prt_registry_global();
    prt_network *net = NULL;
    prt_profile_range ranges[SUBNET_MAX_IO];
    prt_builder_config bc;
    prt_context_config cc;
    prt_subnet *s = NULL;
    char msg[PRT_ERR_CAP];
    const char *name;
    int32_t i, nb_ranges = 0;
    prt_status st;

    if (!graph || !cfg || !out) return subnet_fail(err, PRT_STATUS_INVALID_ARGUMENT, graph ? graph->name : NULL,
                                                   "subnet_build needs a graph, a config and out");
    name = graph->name ? graph->name : "?";
    memset(&c, 0, sizeof c);
    if (prt__config_read(&c, sizeof c, cfg, offsetof(prt_subnet_config, inputs) + sizeof c.inputs) != 0)
        return subnet_fail(err, PRT_STATUS_INVALID_ARGUMENT, name,
                           "prt_subnet_config.struct_size is %u; at least %zu expected", (unsigned)cfg->struct_size,
                           offsetof(prt_subnet_config, inputs) + sizeof c.inputs);
    if (graph->format != PRT_GRAPH_NETWORK_JSON)
        return subnet_fail(err, PRT_STATUS_UNSUPPORTED, name,
                           "body format %d: the host builds network JSON bodies (PRT_GRAPH_NETWORK_JSON = 1) only%s",
                           (int)graph->format,
                           graph->format == PRT_GRAPH_ONNX ? "; ONNX GraphProto bodies are not imported yet" : "");
    if (c.device != PRT_DEVICE_CPU && c.device != PRT_DEVICE_CUDA)
        return subnet_fail(err, PRT_STATUS_INVALID_ARGUMENT, name, "device %d is neither CPU (0) nor CUDA (1)",
                           (int)c.device);
    if (c.nb_inputs < 0 || c.nb_inputs > SUBNET_MAX_IO || (c.nb_inputs > 0 && !c.inputs))
        return subnet_fail(err, PRT_STATUS_INVALID_ARGUMENT, name, "%d inputs described (at %p); expected 0..%d",
                           (int)c.nb_inputs, (const void *)c.inputs, SUBNET_MAX_IO);
    if (graph->size < 0 || (graph->size > 0 && !graph->data))
        return subnet_fail(err, PRT_STATUS_INVALID_ARGUMENT, name, "body of %" PRId64 " bytes at %p", graph->size,
                           graph->data);
    msg[0] = 0;
    st = prt_network_from_json(reg, graph->data ? (const char *)graph->data : "", (size_t)graph->size, NULL, &net,
                               msg, sizeof msg);
    if (st != PRT_OK) return subnet_fail(err, st, name, "%s", msg);
    if (prt_network_nb_inputs(net) != c.nb_inputs || prt_network_nb_outputs(net) > SUBNET_MAX_IO) {
        st = subnet_fail(err, PRT_STATUS_INVALID_ARGUMENT, name,
                         "it has %d input%s and %d output%s; the plugin describes %d input%s",
                         (int)prt_network_nb_inputs(net), prt_network_nb_inputs(net) == 1 ? "" : "s",
                         (int)prt_network_nb_outputs(net), prt_network_nb_outputs(net) == 1 ? "" : "s",
                         (int)c.nb_inputs, c.nb_inputs == 1 ? "" : "s");
        goto done;
    }
    if ((st = subnet_ranges(net, &c, name, ranges, &nb_ranges, err)) != PRT_OK) goto done;
    prt_builder_config_init(&bc);
    bc.device = c.device;
    bc.nb_ranges = nb_ranges;
    bc.ranges = ranges;
    s = prt__calloc(1, sizeof *s);
    if (!s || !(s->name = prt__strdup(name))) {
        st = subnet_fail(err, PRT_STATUS_OUT_OF_MEMORY, name, "out of memory");
        goto done;
    }
    s->device = c.device;
    s->nb_in = c.nb_inputs;
    s->nb_out = prt_network_nb_outputs(net);
    s->in_names = prt__calloc((size_t)s->nb_in + 1, sizeof *s->in_names);
    s->out_names = prt__calloc((size_t)s->nb_out + 1, sizeof *s->out_names);
    s->last_in = prt__calloc((size_t)s->nb_in + 1, sizeof *s->last_in);
    if (!s->in_names || !s->out_names || !s->last_in) {
        st = subnet_fail(err, PRT_STATUS_OUT_OF_MEMORY, name, "out of memory");
        goto done;
    }
    for (i = 0; i < s->nb_in; i++) {
        s->last_in[i].nb = -1;
        if (!(s->in_names[i] = prt__strdup(prt_network_input_name(net, i)))) {
            st = subnet_fail(err, PRT_STATUS_OUT_OF_MEMORY, name, "out of memory");
            goto done;
        }
    }
    for (i = 0; i < s->nb_out; i++)
        if (!(s->out_names[i] = prt__strdup(prt_network_output_name(net, i)))) {
            st = subnet_fail(err, PRT_STATUS_OUT_OF_MEMORY, name, "out of memory");
            goto done;
        }
    msg[0] = 0;
    if ((st = prt_engine_build(net, &bc, reg, &s->e, msg, sizeof msg)) != PRT_OK) {
        subnet_fail(err, st, name, "%s", msg);
        goto done;
    }
    prt_context_config_init(&cc);
    cc.device = c.device;
    cc.cuda_device = c.cuda_device;
    cc.nb_threads = c.nb_threads > 1 ? c.nb_threads : 1;
    if ((st = prt_context_create(s->e, &cc, &s->ctx)) != PRT_OK) {
        subnet_fail(err, st, name, "%s", prt_engine_last_error(s->e));
        goto done;
    }
    *out = s;
    s = NULL;
done:
    prt__subnet_destroy(s);
    prt_network_destroy(net);
    return st;
}

prt_status prt__subnet_describe(const prt_subnet *s, int32_t *nb_inputs, int32_t *nb_outputs,
                                prt_dyn_tensor_desc *io, int32_t cap)
{
    int32_t i;
    if (!s) return PRT_STATUS_INVALID_ARGUMENT;
    if (nb_inputs) *nb_inputs = s->nb_in;
    if (nb_outputs) *nb_outputs = s->nb_out;
    for (i = 0; io && i < cap && i < s->nb_in + s->nb_out; i++) {
        const char *nm = i < s->nb_in ? s->in_names[i] : s->out_names[i - s->nb_in];
        prt_io_desc d;
        if (prt_engine_io(s->e, prt_engine_find_io(s->e, nm), &d) != PRT_OK) return PRT_STATUS_INTERNAL;
        memset(&io[i], 0, sizeof io[i]);
        io[i].desc.dtype = d.dtype;
        io[i].desc.format = PRT_FORMAT_LINEAR;
        io[i].desc.dims = d.dims;
        io[i].min = d.min;
        io[i].opt = d.opt;
        io[i].max = d.max;
    }
    return PRT_OK;
}

prt_status prt__subnet_run(prt_subnet *s, const prt_tensor_desc *in, const void *const *inputs, int32_t nb_in,
                           prt_tensor_desc *out, void *const *outputs, int32_t nb_out, void *cuda_stream,
                           prt_msg *err)
{
    char a[160], b[160];
    int32_t i;
    prt_status st;
    if (!s) return PRT_STATUS_INVALID_ARGUMENT;
    if (nb_in != s->nb_in || nb_out != s->nb_out || (nb_in && (!in || !inputs)) || (nb_out && (!out || !outputs)))
        return subnet_fail(err, PRT_STATUS_INVALID_ARGUMENT, s->name,
                           "run with %d input%s and %d output%s; it has %d and %d", (int)nb_in, nb_in == 1 ? "" : "s",
                           (int)nb_out, nb_out == 1 ? "" : "s", (int)s->nb_in, (int)s->nb_out);
    for (i = 0; i < nb_in; i++) {
        if (!inputs[i] && prt_dims_volume(&in[i].dims) > 0)
            return subnet_fail(err, PRT_STATUS_INVALID_ARGUMENT, s->name, "input %d \"%s\" has no buffer", (int)i,
                               s->in_names[i]);
        if (!prt_dims_equal(&in[i].dims, &s->last_in[i])) {
            if ((st = prt_context_set_input_shape(s->ctx, s->in_names[i], &in[i].dims)) != PRT_OK)
                return subnet_fail(err, st, s->name, "%s", prt_context_last_error(s->ctx));
            s->last_in[i] = in[i].dims;
        }
        /* The sub-network only reads its inputs. */
        if ((st = prt_context_set_tensor(s->ctx, s->in_names[i], (void *)(uintptr_t)inputs[i])) != PRT_OK)
            return subnet_fail(err, st, s->name, "%s", prt_context_last_error(s->ctx));
    }
    for (i = 0; i < nb_out; i++) {
        prt_io_desc d;
        size_t need = 0;
        uint64_t have = 0;
        if (prt_engine_io(s->e, prt_engine_find_io(s->e, s->out_names[i]), &d) != PRT_OK) return PRT_STATUS_INTERNAL;
        if (out[i].dtype != d.dtype)
            return subnet_fail(err, PRT_STATUS_TYPE_MISMATCH, s->name, "output %d \"%s\" is %s; the buffer given is %s",
                               (int)i, s->out_names[i], prt_dtype_name(d.dtype), prt_dtype_name(out[i].dtype));
        if ((st = prt_context_buffer_size(s->ctx, s->out_names[i], &need)) != PRT_OK)
            return subnet_fail(err, st, s->name, "%s", prt_context_last_error(s->ctx));
        if (prt__tensor_bytes(&out[i].dims, prt_dtype_size(out[i].dtype), &have) != 0 || have < need) {
            if (prt_context_get_shape(s->ctx, s->out_names[i], &d.dims) != PRT_OK) d.dims.nb = 0;
            return subnet_fail(err, PRT_STATUS_SHAPE_MISMATCH, s->name,
                               "output %d \"%s\" is %s for these inputs (%zu bytes); the buffer given holds %s",
                               (int)i, s->out_names[i], prt_dims_str(&d.dims, a, sizeof a), need,
                               prt_dims_str(&out[i].dims, b, sizeof b));
        }
        if (!outputs[i] && need > 0)
            return subnet_fail(err, PRT_STATUS_INVALID_ARGUMENT, s->name, "output %d \"%s\" has no buffer", (int)i,
                               s->out_names[i]);
        if ((st = prt_context_set_tensor(s->ctx, s->out_names[i], outputs[i])) != PRT_OK)
            return subnet_fail(err, st, s->name, "%s", prt_context_last_error(s->ctx));
    }
    st = s->device == PRT_DEVICE_CUDA ? prt_context_enqueue(s->ctx, cuda_stream) : prt_context_execute(s->ctx);
    if (st != PRT_OK) return subnet_fail(err, st, s->name, "%s", prt_context_last_error(s->ctx));
    for (i = 0; i < nb_out; i++) {
        prt_dims d;
        if ((st = prt_context_get_shape(s->ctx, s->out_names[i], &d)) != PRT_OK)
            return subnet_fail(err, st, s->name, "%s", prt_context_last_error(s->ctx));
        out[i].dims = d;
    }
    return PRT_OK;
}
