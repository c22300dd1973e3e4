/*
 * engine/context.c - execution contexts: per-context plugin instances,
 * activation arena, workspace, shared plugin resources, thread pool (CPU) or
 * stream (CUDA), and the run loop.
 *
 * Plugin calls (docs/lifecycle.md): create attaches one instance per layer
 * from the engine's plugin (blob: clone, set_tactic, attach_to_context,
 * initialize; field: attach_to_context, set_tactic; set_tactic only for a
 * layer with a tactic, and only on the plan's own device). A run calls, per layer in order, the shape
 * notification (field: on_shape_change; blob: configure_plugin) when the
 * layer's shapes differ from its previous run, then enqueue. Destroy tears
 * the instances down in layer order (terminate, detach_from_context,
 * destroy), then releases the resources.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "backend/backend.h"
#include "core/checked.h"
#include "core/core.h"
#include "engine/devq.h"
#include "engine/layercheck.h"
#include "engine/optio.h"
#include "engine/plugctx.h"
#include "engine/shapeval.h"
#include "engine/subnet.h"
#include "engine/runtime.h"

#define EXEC_ERR_CAP 1024


struct prt_context {
    prt_engine *e;
    const prt__backend *be; /* the device's memory, copies, streams, casts */
    prt_device device;
    int32_t cuda_device;
    void *stream;
    int own_stream;
    prt_allocator alloc;
    int have_alloc;
    void *pool;           /* the backend's host threads (CPU) */

    prt__plugin **inst;   /* per layer */
    uint8_t *arena;       /* activations (device memory on CUDA) */
    void *arena_block;
    uint8_t *workspace;
    void *workspace_block;
    uint8_t *weights;     /* CUDA: a device copy of the weights; CPU: the engine's */
    void *weights_block;
    void **bound;         /* per tensor: caller buffers of inputs and outputs */
    prt_dims *in_dims;    /* per graph input its dims, then per graph input its shape values */
    int64_t *vals;        /* per expression node */
    uint8_t *ddep_known;
    prt_dims *cur;        /* per tensor: current extents */
    prt_tensor_desc *last_in, *last_out; /* per layer: shapes of its last notification */
    uint8_t *notified;
    int ran;              /* cur holds the extents of a finished run */

    prt__plugctx *res;    /* resources shared by this context's plugins */

    prt_exec ex;
    int32_t cur_layer;
    char exec_err[EXEC_ERR_CAP];
    int exec_err_set;

    /* CUDA: extents reported with set_output_extent_device. Recorded during
     * one layer's enqueue (nb_pend), copied to page-locked memory on the
     * run's stream right after it (nb_queued), read when a shape is next
     * needed: before the next layer, or by prt_context_get_shape. */
    struct pending {
        int32_t layer, out, dim, node;
        const int64_t *dev;
    } *pend;
    int32_t nb_pend, cap_pend, nb_queued;
    int64_t *pend_host; /* cap_pend int64, page-locked; allocated on first use */
    void *pend_stream;  /* the stream the copies were queued on */

    prt_layer_profiler_fn prof; /* prt_context_set_profiler */
    void *prof_user;
};

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

prt_status prt_context_set_profiler(prt_context *c, prt_layer_profiler_fn fn, void *user)
{
    if (!c) return PRT_STATUS_INVALID_ARGUMENT;
    c->prof = fn;
    c->prof_user = user;
    return PRT_OK;
}

/* After layer l: report its time (CUDA: once the stream has run it). */
static prt_status profile_layer(prt_context *c, const prt__player *l, const char *plugin, double t0)
{
    char msg[512];
    prt_status s;
    if (!c->prof) return PRT_OK;
    msg[0] = 0;
    if (c->device == PRT_DEVICE_CUDA && (s = c->be->stream_sync(c->ex.cuda_stream, msg, sizeof msg)) != PRT_OK)
        return prt__err(c, s, "layer \"%s\": %s", l->name, msg);
    c->prof(c->prof_user, l->name, plugin, now_ms() - t0);
    return PRT_OK;
}


/* ---- exec callbacks ------------------------------------------------------------- */

static prt_context *ctx_of_ex(prt_exec *ex) { return (prt_context *)ex->host_; }

static void ex_parallel_for(prt_exec *ex, int64_t n, int64_t grain, prt_range_fn fn, void *arg)
{
    prt_context *c = ctx_of_ex(ex);
    c->be->parallel_for(c->pool, n, grain, fn, arg);
}

static void ex_set_error(prt_exec *ex, const char *msg)
{
    prt_context *c = ctx_of_ex(ex);
    if (c->exec_err_set) return;
    snprintf(c->exec_err, sizeof c->exec_err, "%s", msg ? msg : "");
    c->exec_err_set = 1;
}

static prt_status ex_set_output_dims(prt_exec *ex, int32_t index, const prt_dims *dims)
{
    prt_context *c = ctx_of_ex(ex);
    const prt__plan *p = c->e->plan;
    const prt__player *l;
    const prt__ptensor *t;
    int32_t j;
    char a[160], b[160], msg[512];
    if (c->cur_layer < 0 || c->cur_layer >= p->nb_layers) return PRT_STATUS_INVALID_ARGUMENT;
    l = &p->layers[c->cur_layer];
    if (!dims || index < 0 || index >= l->nb_out) {
        snprintf(msg, sizeof msg, "set_output_dims: output %d does not exist (the layer has %d)", (int)index,
                 (int)l->nb_out);
        ex_set_error(ex, msg);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    t = &p->tensors[l->out[index]];
    if (dims->nb != t->nb_dims) {
        snprintf(msg, sizeof msg, "set_output_dims: output %d has %d dims, got %s", (int)index, (int)t->nb_dims,
                 prt_dims_str(dims, a, sizeof a));
        ex_set_error(ex, msg);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    /* Check all, then set: a refused call changes nothing. */
    for (j = 0; j < t->nb_dims; j++) {
        int32_t n = t->expr[j];
        int64_t have = c->cur[l->out[index]].d[j];
        int ok = p->nodes[n].kind == PRT__NODE_DDEP ? (dims->d[j] >= 0 && dims->d[j] <= c->vals[p->nodes[n].a])
                                                    : dims->d[j] == have;
        if (!ok) {
            snprintf(msg, sizeof msg, "set_output_dims: output %d dims %s do not fit the allocated %s (dim %d)",
                     (int)index, prt_dims_str(dims, a, sizeof a), prt_dims_str(&c->cur[l->out[index]], b, sizeof b),
                     (int)j);
            ex_set_error(ex, msg);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
    }
    for (j = 0; j < t->nb_dims; j++) {
        int32_t n = t->expr[j];
        if (p->nodes[n].kind == PRT__NODE_DDEP) {
            c->vals[n] = dims->d[j];
            c->ddep_known[n] = 1;
        }
    }
    return PRT_OK;
}

static prt_status ex_set_output_extent_device(prt_exec *ex, int32_t index, int32_t dim, const int64_t *device_extent)
{
    prt_context *c = ctx_of_ex(ex);
    const prt__plan *p = c->e->plan;
    const prt__player *l;
    const prt__ptensor *t;
    int32_t k, node;
    char msg[512];
    if (c->cur_layer < 0 || c->cur_layer >= p->nb_layers) return PRT_STATUS_INVALID_ARGUMENT;
    l = &p->layers[c->cur_layer];
    if (c->device != PRT_DEVICE_CUDA || !device_extent) {
        ex_set_error(ex, "set_output_extent_device: needs a CUDA context and a device pointer");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    if (index < 0 || index >= l->nb_out) {
        snprintf(msg, sizeof msg, "set_output_extent_device: output %d does not exist (the layer has %d)", (int)index,
                 (int)l->nb_out);
        ex_set_error(ex, msg);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    t = &p->tensors[l->out[index]];
    if (dim < 0 || dim >= t->nb_dims || p->nodes[t->expr[dim]].kind != PRT__NODE_DDEP) {
        snprintf(msg, sizeof msg, "set_output_extent_device: output %d (\"%s\", %d dims) dim %d is not a data-dependent extent",
                 (int)index, t->name, (int)t->nb_dims, (int)dim);
        ex_set_error(ex, msg);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    node = t->expr[dim];
    for (k = 0; k < c->nb_pend; k++)
        if (c->pend[k].node == node) break; /* reported again: the later pointer wins */
    if (k == c->nb_pend) {
        if (c->nb_pend >= c->cap_pend) {
            ex_set_error(ex, "set_output_extent_device: more extents reported than the layer's outputs have");
            return PRT_STATUS_INVALID_ARGUMENT;
        }
        c->nb_pend++;
    }
    c->pend[k].layer = c->cur_layer;
    c->pend[k].out = index;
    c->pend[k].dim = dim;
    c->pend[k].node = node;
    c->pend[k].dev = device_extent;
    return PRT_OK;
}

/* Wait for the queued copies and apply the extents (0 <= value <= the upper
 * bound); then the shapes of everything after are computed again. */
static prt_status compute_shapes(prt_context *c);
static prt_status resolve_pending(prt_context *c)
{
    const prt__plan *p = c->e->plan;
    char msg[512];
    int32_t k;
    prt_status s;
    if (!c->nb_queued) return PRT_OK;
    msg[0] = 0;
    s = c->be->stream_sync(c->pend_stream, msg, sizeof msg);
    c->nb_queued = 0;
    if (s != PRT_OK) return prt__err(c, s, "waiting for data-dependent extents: %s", msg);
    for (k = 0; k < c->nb_pend; k++) {
        const struct pending *q = &c->pend[k];
        const prt__player *l = &p->layers[q->layer];
        int64_t v = c->pend_host[k], upper = c->vals[p->nodes[q->node].a];
        if (v < 0 || v > upper) {
            const prt_plugin_creator *cr = c->inst[q->layer]->creator;
            c->nb_pend = 0;
            return prt__err(c, PRT_STATUS_PLUGIN_ERROR,
                            "layer \"%s\" (%s v%s): reported extent %" PRId64 " for output %d (\"%s\") dim %d from "
                            "device memory; expected 0..%" PRId64 " (the allocated upper bound)",
                            l->name, cr->name, cr->version, v, (int)q->out, p->tensors[l->out[q->out]].name,
                            (int)q->dim, upper);
        }
        c->vals[q->node] = v;
        c->ddep_known[q->node] = 1;
    }
    c->nb_pend = 0;
    return compute_shapes(c);
}

/* A run that starts while copies of an earlier one are queued: wait for them
 * (page-locked memory is reused) and drop their values. */
static void drop_pending(prt_context *c)
{
    char msg[256];
    if (c->nb_queued) (void)c->be->stream_sync(c->pend_stream, msg, sizeof msg);
    c->nb_queued = 0;
    c->nb_pend = 0;
}

/* Queue the copies of what the layer just reported. */
static prt_status queue_pending(prt_context *c, const prt__player *l)
{
    char msg[512];
    int32_t k;
    prt_status s;
    if (!c->pend_host) {
        msg[0] = 0;
        s = c->be->host_alloc((size_t)c->cap_pend * sizeof(int64_t), (void **)&c->pend_host, msg, sizeof msg);
        if (s != PRT_OK) {
            c->nb_pend = 0;
            return prt__err(c, s, "layer \"%s\": page-locked memory for data-dependent extents: %s", l->name, msg);
        }
    }
    for (k = 0; k < c->nb_pend; k++) {
        msg[0] = 0;
        s = c->be->download_async(&c->pend_host[k], c->pend[k].dev, sizeof(int64_t), c->ex.cuda_stream, msg,
                                  sizeof msg);
        if (s != PRT_OK) {
            /* Copies queued so far finish before the stream is used again. */
            c->pend_stream = c->ex.cuda_stream;
            c->nb_queued = k;
            drop_pending(c);
            return prt__err(c, s, "layer \"%s\": copying a data-dependent extent: %s", l->name, msg);
        }
    }
    c->pend_stream = c->ex.cuda_stream;
    c->nb_queued = c->nb_pend;
    return PRT_OK;
}

/* ---- memory ------------------------------------------------------------------------ */

static void *mem_alloc(prt_context *c, size_t n, void **block)
{
    if (n == 0) n = 1;
    if (c->have_alloc) {
        *block = c->alloc.alloc(c->alloc.user, c->device, n);
        return *block;
    }
    return c->be->alloc(n, block);
}

static void mem_free(prt_context *c, void *block)
{
    if (!block) return;
    if (c->have_alloc) c->alloc.free(c->alloc.user, c->device, block);
    else c->be->free(block);
}

/* ---- create / destroy ------------------------------------------------------------- */

void prt_context_config_init(prt_context_config *cfg)
{
    if (!cfg) return;
    memset(cfg, 0, sizeof *cfg);
    cfg->struct_size = (uint32_t)sizeof *cfg;
    cfg->abi_version = PRT_ABI_VERSION;
    cfg->device = (prt_device)-1; /* the engine's */
}

void prt_context_destroy(prt_context *c)
{
    int32_t i;
    const prt__plan *p;
    if (!c) return;
    p = c->e->plan;
    drop_pending(c);
    c->be->host_free(c->pend_host);
    prt__free(c->pend);
    if (c->inst)
        for (i = 0; i < p->nb_layers; i++) prt__plugin_destroy(c->inst[i]);
    prt__plugctx_destroy(c->res); /* resources at their last release */
    mem_free(c, c->arena_block);
    mem_free(c, c->workspace_block);
    if (c->weights_block) mem_free(c, c->weights_block);
    if (c->own_stream) c->be->stream_destroy(c->stream);
    c->be->workers_destroy(c->pool);
    prt__free(c->inst);
    prt__free(c->bound);
    prt__free(c->in_dims);
    prt__free(c->vals);
    prt__free(c->ddep_known);
    prt__free(c->cur);
    prt__free(c->last_in);
    prt__free(c->last_out);
    prt__free(c->notified);
    prt__err_clear(c);
    prt__free(c);
}

static int32_t max_io(const prt__plan *p)
{
    int32_t i, m = 1;
    for (i = 0; i < p->nb_layers; i++) {
        if (p->layers[i].nb_in > m) m = p->layers[i].nb_in;
        if (p->layers[i].nb_out > m) m = p->layers[i].nb_out;
    }
    return m;
}

static prt_status context_create(prt_engine *e, const prt_context_config *cfg, prt_context **out);

/* Sub-networks built by plugins in attach_to_context / initialize resolve in
 * the engine's registry (engine/subnet.h). */
prt_status prt_context_create(prt_engine *e, const prt_context_config *cfg, prt_context **out)
{
    prt_registry *prev;
    prt_status s;
    if (!e || !out) return PRT_STATUS_INVALID_ARGUMENT;
    prev = prt__subnet_scope_enter(e->registry);
    s = context_create(e, cfg, out);
    prt__subnet_scope_leave(prev);
    return s;
}

static prt_status context_create(prt_engine *e, const prt_context_config *cfg, prt_context **out)
{
    prt_context *c;
    prt_context_config def;
    const prt__plan *p;
    char msg[PRT_ERR_CAP];
    prt_status s;
    int32_t i, io;
    uint64_t ws;

    if (!e || !out) return PRT_STATUS_INVALID_ARGUMENT;
    p = e->plan;
    /* Read member by member up to the caller's struct_size (older callers keep working). */
    prt_context_config_init(&def);
    if (cfg && prt__config_read(&def, sizeof def, cfg, offsetof(prt_context_config, device)) != 0)
        return prt__err(e, PRT_STATUS_INVALID_ARGUMENT, "context config struct_size is %u; expected at least %zu "
                        "(use prt_context_config_init)", cfg->struct_size, offsetof(prt_context_config, device));
    def.struct_size = (uint32_t)sizeof def;
    cfg = &def;
    if (cfg->nb_threads < 0)
        return prt__err(e, PRT_STATUS_INVALID_ARGUMENT, "context config asks for %d threads", (int)cfg->nb_threads);
    c = prt__calloc(1, sizeof *c);
    if (!c) return prt__err(e, PRT_STATUS_OUT_OF_MEMORY, "out of memory creating a context");
    c->e = e;
    c->device = (int)cfg->device < 0 ? (prt_device)p->device : cfg->device;
    c->cuda_device = cfg->cuda_device;
    c->cur_layer = -1;
    if (c->device != PRT_DEVICE_CPU && c->device != PRT_DEVICE_CUDA) {
        prt__free(c);
        return prt__err(e, PRT_STATUS_INVALID_ARGUMENT, "context device %d is neither cpu nor cuda", (int)cfg->device);
    }
    if (cfg->allocator) {
        if (!cfg->allocator->alloc || !cfg->allocator->free) {
            prt__free(c);
            return prt__err(e, PRT_STATUS_INVALID_ARGUMENT, "the allocator needs both alloc and free");
        }
        c->alloc = *cfg->allocator;
        c->have_alloc = 1;
    }
    msg[0] = 0;
    c->be = prt__backend_of(c->device);
    if ((s = c->be->select(c->cuda_device, msg, sizeof msg)) != PRT_OK) {
        prt__free(c);
        return prt__err(e, s, "%s", msg);
    }
    if (c->device == PRT_DEVICE_CUDA && cfg->cuda_stream) {
        c->stream = cfg->cuda_stream;
    } else {
        if ((s = c->be->stream_create(&c->stream, msg, sizeof msg)) != PRT_OK) {
            prt__free(c);
            return prt__err(e, s, "%s", msg);
        }
        c->own_stream = c->stream != NULL;
    }
    if ((s = c->be->workers_create(cfg->nb_threads, &c->pool, msg, sizeof msg)) != PRT_OK) {
        if (c->own_stream) c->be->stream_destroy(c->stream);
        prt__free(c);
        return prt__err(e, s, "%s", msg);
    }
    io = max_io(p);
    c->inst = prt__calloc((size_t)p->nb_layers + 1, sizeof *c->inst);
    c->bound = prt__calloc((size_t)p->nb_tensors + 1, sizeof *c->bound);
    c->in_dims = prt__calloc(2 * (size_t)p->nb_inputs + 1, sizeof *c->in_dims);
    c->vals = prt__calloc((size_t)p->nb_nodes + 1, sizeof *c->vals);
    c->ddep_known = prt__calloc((size_t)p->nb_nodes + 1, 1);
    c->cur = prt__calloc((size_t)p->nb_tensors + 1, sizeof *c->cur);
    c->last_in = prt__calloc((size_t)p->nb_layers * (size_t)io + 1, sizeof *c->last_in);
    c->last_out = prt__calloc((size_t)p->nb_layers * (size_t)io + 1, sizeof *c->last_out);
    c->notified = prt__calloc((size_t)p->nb_layers + 1, 1);
    c->cap_pend = io * PRT_MAX_DIMS;
    c->pend = prt__calloc((size_t)c->cap_pend, sizeof *c->pend);
    if (!c->pend || !c->inst || !c->bound || !c->in_dims || !c->vals || !c->ddep_known || !c->cur || !c->last_in ||
        !c->last_out || !c->notified) {
        prt_context_destroy(c);
        return prt__err(e, PRT_STATUS_OUT_OF_MEMORY, "out of memory creating a context");
    }
    ws = p->workspace_size;
    if (c->device != (prt_device)p->device) {
        /* The plan sized workspaces for its own device: ask for this one. */
        uint64_t need;
        pthread_mutex_lock(&e->lock);
        need = prt__devq_plan_workspace(p, e->protos, c->device);
        pthread_mutex_unlock(&e->lock);
        if (need > ws) ws = need;
    }
    if (p->arena_size > (uint64_t)PTRDIFF_MAX || ws > (uint64_t)PTRDIFF_MAX) {
        prt_context_destroy(c);
        return prt__err(e, PRT_STATUS_OUT_OF_MEMORY,
                        "the plan asks for %" PRIu64 " bytes of activations and %" PRIu64
                        " bytes of workspace; at most %td each can be allocated",
                        p->arena_size, ws, (ptrdiff_t)PTRDIFF_MAX);
    }
    c->arena = mem_alloc(c, (size_t)p->arena_size, &c->arena_block);
    c->workspace = mem_alloc(c, (size_t)ws, &c->workspace_block);
    if (!c->arena || !c->workspace) {
        const char *where = c->be->name;
        prt_context_destroy(c);
        return prt__err(e, PRT_STATUS_OUT_OF_MEMORY,
                        "cannot allocate %" PRIu64 " bytes of activations and %" PRIu64 " bytes of workspace on the %s",
                        p->arena_size, ws, where);
    }
    if (!c->be->host_memory) {
        c->weights = mem_alloc(c, (size_t)p->weights_len, &c->weights_block);
        if (!c->weights) {
            prt_context_destroy(c);
            return prt__err(e, PRT_STATUS_OUT_OF_MEMORY, "cannot allocate %" PRIu64 " bytes of weights on the %s",
                            p->weights_len, c->be->name);
        }
        if ((s = c->be->upload(c->weights, p->weights, (size_t)p->weights_len, msg, sizeof msg)) != PRT_OK) {
            prt_context_destroy(c);
            return prt__err(e, s, "%s", msg);
        }
    } else {
        c->weights = p->weights;
    }
    /* Inputs start at the profile's opt shapes (and values). */
    prt__plan_inputs_at(p, 1, c->in_dims);

    if ((s = prt__plugctx_create(c->device, c->cuda_device, &c->res)) != PRT_OK) {
        prt_context_destroy(c);
        return prt__err(e, s, "out of memory creating an execution context");
    }
    c->ex.struct_size = (uint32_t)sizeof c->ex;
    c->ex.abi_version = PRT_ABI_VERSION;
    c->ex.device = c->device;
    c->ex.cuda_device = c->cuda_device;
    c->ex.cuda_stream = c->device == PRT_DEVICE_CUDA ? c->stream : NULL;
    c->ex.nb_threads = c->be->workers_size(c->pool);
    c->ex.parallel_for = ex_parallel_for;
    c->ex.set_error = ex_set_error;
    c->ex.set_output_dims = ex_set_output_dims;
    c->ex.host_ = c;
    c->ex.set_output_extent_device = c->device == PRT_DEVICE_CUDA ? ex_set_output_extent_device : NULL;

    s = PRT_OK;
    pthread_mutex_lock(&e->lock);
    for (i = 0; i < p->nb_layers && s == PRT_OK; i++) {
        if (!e->protos[i]) continue;
        msg[0] = 0;
        /* The plan's tactic was chosen for its device; on another, the plugin's default. */
        s = prt__plugin_attach_tactic(e->protos[i], prt__plugctx_get(c->res),
                                      c->device == (prt_device)p->device ? e->protos[i]->tactic : 0, &c->inst[i], msg,
                                      sizeof msg);
    }
    pthread_mutex_unlock(&e->lock);
    if (s != PRT_OK) {
        prt_context_destroy(c);
        return prt__err(e, s, "%s", msg);
    }
    *out = c;
    return PRT_OK;
}

/* ---- shapes --------------------------------------------------------------------------- */

/* Evaluate every tensor's extents from the input shapes and the
 * data-dependent extents known so far. Fails when an activation would not fit
 * its planned memory. */
static prt_status compute_shapes(prt_context *c)
{
    const prt__plan *p = c->e->plan;
    int32_t i, j;
    prt__plan_eval(p, c->in_dims, c->vals, c->ddep_known);
    for (i = 0; i < p->nb_tensors; i++) {
        const prt__ptensor *t = &p->tensors[i];
        prt_dims *d = &c->cur[i];
        memset(d, 0, sizeof *d);
        d->nb = t->nb_dims;
        for (j = 0; j < t->nb_dims; j++) {
            int64_t v = c->vals[t->expr[j]];
            if (v == PRT__EVAL_BAD || v < 0) {
                char in[160];
                return prt__err(c, PRT_STATUS_SHAPE_MISMATCH,
                                "tensor \"%s\" dim %d %s for the current input shapes (first input %s)", t->name, j,
                                v == PRT__EVAL_BAD ? "cannot be computed (division by zero or overflow)"
                                                   : "is negative",
                                p->nb_inputs ? prt_dims_str(&c->in_dims[0], in, sizeof in) : "[]");
            }
            d->d[j] = v;
        }
        if (t->role == PRT__ROLE_ACTIVATION) {
            int64_t vol = prt_dims_volume(d);
            if (vol < 0 || (uint64_t)vol > t->bytes / prt_dtype_size(t->dtype)) {
                char a[160];
                return prt__err(c, PRT_STATUS_SHAPE_MISMATCH,
                                "tensor \"%s\" is %s for the current input shapes, larger than the %" PRIu64
                                " bytes planned for the profile",
                                t->name, prt_dims_str(d, a, sizeof a), t->bytes);
            }
        }
    }
    return PRT_OK;
}

static int32_t find_tensor(prt_context *c, const char *name, const char *what, prt_status *s)
{
    int32_t t = prt__runtime_find(c->e, name);
    if (t < 0) {
        char list[512];
        size_t n = 0;
        int32_t i;
        list[0] = 0;
        for (i = 0; i < c->e->nb_io && n < sizeof list; i++)
            n += (size_t)snprintf(list + n, sizeof list - n, "%s\"%s\"", i ? ", " : "",
                                  c->e->plan->tensors[c->e->io[i]].name);
        *s = prt__err(c, PRT_STATUS_NOT_FOUND, "%s: the engine has no input or output \"%s\" (it has %s)", what,
                      name ? name : "(null)", list);
    }
    return t;
}

prt_status prt_context_set_input_shape(prt_context *c, const char *name, const prt_dims *dims)
{
    const prt__plan *p;
    const prt__ptensor *t;
    prt_status s = PRT_OK;
    int32_t ti, k, j, idx = 0;
    char a[160], b[160], d[160];
    if (!c) return PRT_STATUS_INVALID_ARGUMENT;
    p = c->e->plan;
    ti = find_tensor(c, name, "set_input_shape", &s);
    if (ti < 0) return s;
    t = &p->tensors[ti];
    if (t->role != PRT__ROLE_INPUT)
        return prt__err(c, PRT_STATUS_INVALID_ARGUMENT, "set_input_shape: \"%s\" is an output, not an input", name);
    if (!dims) return prt__err(c, PRT_STATUS_INVALID_ARGUMENT, "set_input_shape: no dims given for \"%s\"", name);
    if (dims->nb != t->nb_dims)
        return prt__err(c, PRT_STATUS_SHAPE_MISMATCH, "input \"%s\" has %d dims %s; got %s", name, t->nb_dims,
                        prt_dims_str(&t->dims, a, sizeof a), prt_dims_str(dims, b, sizeof b));
    for (j = 0; j < t->nb_dims; j++)
        if (dims->d[j] < t->min.d[j] || dims->d[j] > t->max.d[j])
            return prt__err(c, PRT_STATUS_SHAPE_MISMATCH,
                            "input \"%s\" dim %d is %" PRId64 ", outside the profile's range %" PRId64 "..%" PRId64
                            " (min %s, max %s; got %s)",
                            name, j, dims->d[j], t->min.d[j], t->max.d[j], prt_dims_str(&t->min, a, sizeof a),
                            prt_dims_str(&t->max, b, sizeof b), prt_dims_str(dims, d, sizeof d));
    for (k = 0; k < ti; k++)
        if (p->tensors[k].role == PRT__ROLE_INPUT) idx++;
    c->in_dims[idx] = *dims;
    c->in_dims[idx].reserved_ = 0;
    c->ran = 0;
    return PRT_OK;
}

prt_status prt_context_set_input_values(prt_context *c, const char *name, const int64_t *values, int32_t nb)
{
    const prt__plan *p;
    const prt__ptensor *t;
    prt_status s = PRT_OK;
    int32_t ti, k, j, idx = 0;
    char a[160], b[160];
    if (!c) return PRT_STATUS_INVALID_ARGUMENT;
    p = c->e->plan;
    ti = find_tensor(c, name, "set_input_values", &s);
    if (ti < 0) return s;
    t = &p->tensors[ti];
    if (t->role != PRT__ROLE_INPUT || t->nb_vals < 0)
        return prt__err(c, PRT_STATUS_INVALID_ARGUMENT,
                        "set_input_values: \"%s\" is not a shape-value input (prt_network_add_shape_input)", name);
    if (!values && nb) return prt__err(c, PRT_STATUS_INVALID_ARGUMENT, "set_input_values: no values given for \"%s\"", name);
    if (nb != t->nb_vals)
        return prt__err(c, PRT_STATUS_SHAPE_MISMATCH, "shape-value input \"%s\" holds %d values; got %d", name,
                        (int)t->nb_vals, (int)nb);
    for (j = 0; j < nb; j++)
        if (values[j] < t->vmin.d[j] || values[j] > t->vmax.d[j])
            return prt__err(c, PRT_STATUS_SHAPE_MISMATCH,
                            "shape-value input \"%s\" value %d is %" PRId64 ", outside the profile's range %" PRId64
                            "..%" PRId64 " (min %s, max %s)",
                            name, (int)j, values[j], t->vmin.d[j], t->vmax.d[j], prt_dims_str(&t->vmin, a, sizeof a),
                            prt_dims_str(&t->vmax, b, sizeof b));
    for (k = 0; k < ti; k++)
        if (p->tensors[k].role == PRT__ROLE_INPUT) idx++;
    memset(&c->in_dims[p->nb_inputs + idx], 0, sizeof(prt_dims));
    c->in_dims[p->nb_inputs + idx].nb = nb;
    for (j = 0; j < nb; j++) c->in_dims[p->nb_inputs + idx].d[j] = values[j];
    c->ran = 0;
    return PRT_OK;
}

/* CPU: a shape-value input's buffer must hold the values the shapes were
 * computed from. */
static prt_status check_input_values(prt_context *c)
{
    const prt__plan *p = c->e->plan;
    int32_t i, j, k = 0;
    if (c->device != PRT_DEVICE_CPU) return PRT_OK;
    for (i = 0; i < p->nb_tensors; i++) {
        const prt__ptensor *t = &p->tensors[i];
        const prt_dims *v;
        if (t->role != PRT__ROLE_INPUT) continue;
        v = &c->in_dims[p->nb_inputs + k++];
        if (t->nb_vals < 0) continue;
        for (j = 0; j < t->nb_vals; j++) {
            int64_t have = prt__shapeval_element(t->dtype, c->bound[i], j);
            if (have != v->d[j])
                return prt__err(c, PRT_STATUS_INVALID_ARGUMENT,
                                "shape-value input \"%s\": its buffer holds %" PRId64 " at element %d, but the shapes "
                                "were computed for %" PRId64 " (give the values with prt_context_set_input_values)",
                                t->name, have, (int)j, v->d[j]);
        }
    }
    return PRT_OK;
}

prt_status prt_context_get_shape(prt_context *c, const char *name, prt_dims *out)
{
    prt_status s = PRT_OK;
    int32_t ti;
    if (!c || !out) return PRT_STATUS_INVALID_ARGUMENT;
    ti = find_tensor(c, name, "get_shape", &s);
    if (ti < 0) return s;
    if (!c->ran) {
        memset(c->ddep_known, 0, (size_t)c->e->plan->nb_nodes);
        if ((s = compute_shapes(c)) != PRT_OK) return s;
    } else if (c->nb_queued && (s = resolve_pending(c)) != PRT_OK) {
        return s;
    }
    *out = c->cur[ti];
    return PRT_OK;
}

prt_status prt_context_buffer_size(prt_context *c, const char *name, size_t *bytes)
{
    prt_status s = PRT_OK;
    int32_t ti;
    prt_dims d;
    const prt__plan *p;
    if (!c || !bytes) return PRT_STATUS_INVALID_ARGUMENT;
    p = c->e->plan;
    ti = find_tensor(c, name, "buffer_size", &s);
    if (ti < 0) return s;
    memset(c->ddep_known, 0, (size_t)p->nb_nodes);
    c->ran = 0;
    if ((s = compute_shapes(c)) != PRT_OK) return s;
    d = c->cur[ti]; /* data-dependent extents are at their upper bounds here */
    {
        uint64_t nb;
        char a[160];
        if (prt__tensor_bytes(&d, prt_dtype_size(p->tensors[ti].dtype), &nb) != 0 || nb > SIZE_MAX)
            return prt__err(c, PRT_STATUS_SHAPE_MISMATCH, "\"%s\" %s has no valid size (more than %s)", name,
                            prt_dims_str(&d, a, sizeof a), PRT_MAX_TENSOR_BYTES_STR);
        *bytes = (size_t)nb;
    }
    return PRT_OK;
}

prt_status prt_context_set_tensor(prt_context *c, const char *name, void *ptr)
{
    prt_status s = PRT_OK;
    int32_t ti;
    if (!c) return PRT_STATUS_INVALID_ARGUMENT;
    ti = find_tensor(c, name, "set_tensor", &s);
    if (ti < 0) return s;
    c->bound[ti] = ptr;
    return PRT_OK;
}

/* ---- the run ----------------------------------------------------------------------------- */

static void *addr(prt_context *c, int32_t ti)
{
    const prt__ptensor *t = &c->e->plan->tensors[ti];
    switch (t->role) {
    case PRT__ROLE_ACTIVATION: return c->arena + t->offset;
    case PRT__ROLE_CONSTANT: return c->weights + t->offset;
    default: return c->bound[ti];
    }
}

static prt_status run_cast(prt_context *c, const prt__player *l, int64_t n)
{
    char msg[512];
    prt_status s;
    msg[0] = 0;
    s = c->be->cast(l->cast_from, l->cast_to, addr(c, l->in[0]), addr(c, l->out[0]), n, &c->ex, msg, sizeof msg);
    return s == PRT_OK ? s : prt__err(c, s, "layer \"%s\": %s", l->name, msg);
}

/* Does every output of the layer have shape values? Then the engine
 * writes them and the plugin is not enqueued. */
static int values_only(const prt__plan *p, const prt__player *l)
{
    int32_t j;
    if (l->kind != PRT__LAYER_PLUGIN) return 0;
    for (j = 0; j < l->nb_out; j++)
        if (p->tensors[l->out[j]].nb_vals < 0) return 0;
    return 1;
}

static prt_status write_values(prt_context *c, const prt__player *l)
{
    const prt__plan *p = c->e->plan;
    int32_t j, k;
    for (j = 0; j < l->nb_out; j++) {
        const prt__ptensor *t = &p->tensors[l->out[j]];
        int64_t v[PRT_MAX_DIMS], bytes[PRT_MAX_DIMS]; /* int64 is the larger element */
        for (k = 0; k < t->nb_vals; k++) {
            v[k] = c->vals[t->val[k]];
            if (v[k] == PRT__EVAL_BAD || (t->dtype == PRT_DTYPE_I32 && (v[k] < INT32_MIN || v[k] > INT32_MAX)))
                return prt__err(c, PRT_STATUS_SHAPE_MISMATCH,
                                "layer \"%s\": shape value %d of \"%s\" %s for the current input shapes", l->name,
                                (int)k, t->name, v[k] == PRT__EVAL_BAD ? "cannot be computed" : "does not fit int32");
        }
        if (c->be->host_memory) {
            prt__shapeval_store(t->dtype, addr(c, l->out[j]), v, t->nb_vals);
        } else {
            char msg[256];
            prt_status s;
            prt__shapeval_store(t->dtype, bytes, v, t->nb_vals);
            msg[0] = 0;
            s = c->be->upload(addr(c, l->out[j]), bytes, (size_t)t->nb_vals * prt_dtype_size(t->dtype), msg,
                              sizeof msg);
            if (s != PRT_OK) return prt__err(c, s, "layer \"%s\": writing shape values: %s", l->name, msg);
        }
    }
    return PRT_OK;
}

static int same_descs(const prt_tensor_desc *a, const prt_tensor_desc *b, int32_t n)
{
    int32_t i;
    for (i = 0; i < n; i++)
        if (a[i].dtype != b[i].dtype || !prt_dims_equal(&a[i].dims, &b[i].dims)) return 0;
    return 1;
}

static prt_status run(prt_context *c)
{
    const prt__plan *p = c->e->plan;
    int32_t io = max_io(p), i, j;
    prt_status s;
    const void **ins = NULL;
    void **outs = NULL;
    prt_tensor_desc *din = NULL, *dout = NULL;
    prt_dims *vin = NULL;
    char msg[PRT_ERR_CAP];

    for (i = 0; i < p->nb_tensors; i++) {
        uint32_t r = p->tensors[i].role;
        if ((r == PRT__ROLE_INPUT || r == PRT__ROLE_OUTPUT) && !c->bound[i])
            return prt__err(c, PRT_STATUS_INVALID_ARGUMENT, "%s \"%s\" has no buffer: call prt_context_set_tensor",
                            r == PRT__ROLE_INPUT ? "input" : "output", p->tensors[i].name);
    }
    if ((s = check_input_values(c)) != PRT_OK) return s;
    c->ran = 0;
    drop_pending(c);
    memset(c->ddep_known, 0, (size_t)p->nb_nodes);
    if ((s = compute_shapes(c)) != PRT_OK) return s;
    ins = prt__calloc((size_t)io, sizeof *ins);
    outs = prt__calloc((size_t)io, sizeof *outs);
    din = prt__calloc((size_t)io, sizeof *din);
    dout = prt__calloc((size_t)io, sizeof *dout);
    vin = prt__calloc((size_t)io, sizeof *vin);
    if (!ins || !outs || !din || !dout || !vin) {
        s = prt__err(c, PRT_STATUS_OUT_OF_MEMORY, "out of memory running the engine");
        goto done;
    }
    for (i = 0; i < p->nb_layers; i++) {
        const prt__player *l = &p->layers[i];
        int dd = 0;
        double t0 = c->prof ? now_ms() : 0.0;
        /* Extents an earlier layer left in device memory: this layer's
         * shapes need them now. */
        if (c->nb_queued && (s = resolve_pending(c)) != PRT_OK) goto done;
        for (j = 0; j < l->nb_in; j++) {
            if (l->in[j] < 0) { /* absent optional input */
                prt__optio_absent(&din[j]);
                ins[j] = NULL;
                continue;
            }
            din[j].dtype = p->tensors[l->in[j]].dtype;
            din[j].format = p->tensors[l->in[j]].format;
            din[j].dims = c->cur[l->in[j]];
            ins[j] = addr(c, l->in[j]);
        }
        for (j = 0; j < l->nb_out; j++) {
            int32_t k;
            dout[j].dtype = p->tensors[l->out[j]].dtype;
            dout[j].format = p->tensors[l->out[j]].format;
            dout[j].dims = c->cur[l->out[j]];
            outs[j] = addr(c, l->out[j]);
            for (k = 0; k < p->tensors[l->out[j]].nb_dims; k++)
                if (p->nodes[p->tensors[l->out[j]].expr[k]].kind == PRT__NODE_DDEP) dd = 1;
        }
        if (l->kind == PRT__LAYER_CAST) {
            if (!prt_dims_equal(&din[0].dims, &dout[0].dims)) {
                char a[160], b[160];
                s = prt__err(c, PRT_STATUS_SHAPE_MISMATCH, "cast layer \"%s\" reads %s but writes %s", l->name,
                             prt_dims_str(&din[0].dims, a, sizeof a), prt_dims_str(&dout[0].dims, b, sizeof b));
                goto done;
            }
            if ((s = run_cast(c, l, prt_dims_volume(&din[0].dims))) != PRT_OK) goto done;
            if ((s = profile_layer(c, l, "cast", t0)) != PRT_OK) goto done;
            continue;
        }
        if (values_only(p, l)) {
            if ((s = write_values(c, l)) != PRT_OK) goto done;
            continue;
        }
        if (!c->notified[i] || !same_descs(din, &c->last_in[(size_t)i * (size_t)io], l->nb_in) ||
            !same_descs(dout, &c->last_out[(size_t)i * (size_t)io], l->nb_out)) {
            const prt_plugin_creator *cr = c->inst[i]->creator;
            char who[512];
            /* New shapes: the plugin says again what it will write, and it
             * must be what the engine allocated. */
            snprintf(who, sizeof who, "layer \"%.200s\" (%.100s v%.40s)", l->name, cr->name, cr->version);
            msg[0] = 0;
            for (j = 0; j < l->nb_in; j++) { /* the current shape values of inputs that carry them */
                const prt__ptensor *t = l->in[j] >= 0 ? &p->tensors[l->in[j]] : NULL;
                int32_t k;
                vin[j].nb = t && t->nb_vals >= 0 ? t->nb_vals : PRT_NB_VALUES_UNKNOWN;
                for (k = 0; k < vin[j].nb; k++) vin[j].d[k] = c->vals[t->val[k]];
            }
            s = prt__layercheck_outputs(c->inst[i], din, vin, l->nb_in, dout, l->nb_out, who, msg, sizeof msg);
            if (s != PRT_OK) {
                c->notified[i] = 0;
                s = prt__err(c, s, "%s", msg);
                goto done;
            }
            msg[0] = 0;
            s = prt__plugin_shapes(c->inst[i], din, l->nb_in, dout, l->nb_out, msg, sizeof msg);
            if (s != PRT_OK) {
                c->notified[i] = 0;
                s = prt__err(c, s, "%s", msg);
                goto done;
            }
            memcpy(&c->last_in[(size_t)i * (size_t)io], din, (size_t)l->nb_in * sizeof *din);
            memcpy(&c->last_out[(size_t)i * (size_t)io], dout, (size_t)l->nb_out * sizeof *dout);
            c->notified[i] = 1;
        }
        c->cur_layer = i;
        c->exec_err_set = 0;
        c->exec_err[0] = 0;
        c->nb_pend = 0;
        s = prt__plugin_enqueue(c->inst[i], din, dout, ins, outs, c->workspace, &c->ex);
        c->cur_layer = -1;
        if (s != PRT_OK) {
            c->nb_pend = 0;
            const prt_plugin_creator *cr = c->inst[i]->creator;
            if (c->exec_err_set && c->exec_err[0])
                s = prt__err(c, (int)s > 0 && s < PRT_STATUS_COUNT_ ? s : PRT_STATUS_PLUGIN_ERROR,
                             "layer \"%s\" (%s%s%s v%s): enqueue failed: %s", l->name, cr->plugin_namespace,
                             cr->plugin_namespace[0] ? "::" : "", cr->name, cr->version, c->exec_err);
            else
                s = prt__err(c, (int)s > 0 && s < PRT_STATUS_COUNT_ ? s : PRT_STATUS_PLUGIN_ERROR,
                             "layer \"%s\" (%s%s%s v%s): enqueue failed with %s (%s) and gave no message", l->name,
                             cr->plugin_namespace, cr->plugin_namespace[0] ? "::" : "", cr->name, cr->version,
                             prt_status_name(s), prt_status_str(s));
            goto done;
        }
        if (c->prof) {
            const prt_plugin_creator *cr = c->inst[i]->creator;
            char plugin[256];
            snprintf(plugin, sizeof plugin, "%s%s%s", cr->plugin_namespace, cr->plugin_namespace[0] ? "::" : "",
                     cr->name);
            if ((s = profile_layer(c, l, plugin, t0)) != PRT_OK) goto done;
        }
        if (c->nb_pend) {
            /* Read later, when a shape is needed (no wait here). */
            if ((s = queue_pending(c, l)) != PRT_OK) goto done;
        } else if (dd && (s = compute_shapes(c)) != PRT_OK) {
            goto done;
        }
    }
    c->ran = 1;
    s = PRT_OK;
done:
    prt__free(ins);
    prt__free(outs);
    prt__free(din);
    prt__free(dout);
    prt__free(vin);
    return s;
}

/* A run; plugins that build sub-networks on a shape change resolve them in
 * the engine's registry. */
static prt_status scoped_run(prt_context *c)
{
    prt_registry *prev = prt__subnet_scope_enter(c->e->registry);
    prt_status s = run(c);
    prt__subnet_scope_leave(prev);
    return s;
}

prt_status prt_context_enqueue(prt_context *c, void *stream)
{
    prt_status s;
    void *saved;
    if (!c) return PRT_STATUS_INVALID_ARGUMENT;
    saved = c->ex.cuda_stream;
    if (c->device == PRT_DEVICE_CUDA && stream) c->ex.cuda_stream = stream;
    s = scoped_run(c);
    c->ex.cuda_stream = saved;
    return s;
}

prt_status prt_context_execute(prt_context *c)
{
    prt_status s;
    char msg[512];
    if (!c) return PRT_STATUS_INVALID_ARGUMENT;
    s = scoped_run(c);
    if (s == PRT_OK) { /* CPU: nothing to wait for */
        msg[0] = 0;
        s = c->be->stream_sync(c->stream, msg, sizeof msg);
        if (s != PRT_OK) s = prt__err(c, s, "%s", msg);
    }
    return s;
}

void *prt_context_stream(const prt_context *c) { return c ? c->stream : NULL; }
prt_device prt_context_device(const prt_context *c) { return c ? c->device : PRT_DEVICE_CPU; }
const char *prt_context_last_error(const prt_context *c) { return prt__err_get(c); }
