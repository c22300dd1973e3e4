/* engine/runtime.c - loading a plan into an engine; describing engines. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "engine/devq.h"
#include "engine/expr.h"
#include "engine/layercheck.h"
#include "engine/optio.h"
#include "engine/shapeval.h"
#include "engine/subnet.h"
#include "engine/runtime.h"

static void seterr(char *err, size_t cap, const char *fmt, ...) PRT_PRINTF(3, 4);
static void seterr(char *err, size_t cap, const char *fmt, ...)
{
    va_list ap;
    if (!err || !cap) return;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
}

int32_t prt__runtime_find(const prt_engine *e, const char *name)
{
    int32_t i;
    if (!e || !name) return -1;
    for (i = 0; i < e->nb_io; i++)
        if (strcmp(e->plan->tensors[e->io[i]].name, name) == 0) return e->io[i];
    return -1;
}

void prt_engine_destroy(prt_engine *e)
{
    int32_t i;
    if (!e) return;
    if (e->protos)
        for (i = 0; i < e->plan->nb_layers; i++) prt__plugin_destroy(e->protos[i]);
    prt__free(e->protos);
    prt__free(e->io);
    prt__plan_free(e->plan);
    prt__free(e->bytes);
    pthread_mutex_destroy(&e->lock);
    prt__err_clear(e);
    prt__free(e);
}

/*
 * Activation offsets must be aligned, and the plan's shapes must agree
 * with themselves: at the profile's min, opt
 * and max input shapes every tensor's extent expressions must evaluate, to
 * the extent recorded for that point, and to the known extent where one is
 * recorded. Plugins write what their own shape logic says, so a plan whose
 * recorded shapes were altered would otherwise hand them buffers of another
 * size.
 */
static prt_status check_shapes(const prt__plan *p, char *err, size_t cap)
{
    int64_t *vals;
    prt_dims *in;
    int32_t i, j, pt;
    static const char *const point[3] = {"min", "opt", "max"};
    prt_status s = PRT_OK;
    vals = prt__calloc((size_t)p->nb_nodes + 1, sizeof *vals);
    in = prt__calloc(2 * (size_t)p->nb_inputs + 1, sizeof *in);
    if (!vals || !in) {
        seterr(err, cap, "out of memory checking the plan's shapes");
        s = PRT_STATUS_OUT_OF_MEMORY;
        goto done;
    }
    /* Activations start on the same 64-byte boundaries as weights (the
     * builder uses 256), so kernels may use aligned and vector accesses. */
    for (i = 0; i < p->nb_tensors; i++) {
        const prt__ptensor *t = &p->tensors[i];
        if (t->role == PRT__ROLE_ACTIVATION && t->offset % PRT__PLAN_WEIGHT_ALIGN) {
            seterr(err, cap, "corrupt plan: activation \"%s\" is at arena offset %" PRIu64 ", not a multiple of %u",
                   t->name, t->offset, PRT__PLAN_WEIGHT_ALIGN);
            s = PRT_STATUS_BAD_FORMAT;
            goto done;
        }
    }
    for (pt = 0; pt < 3 && s == PRT_OK; pt++) {
        prt__plan_inputs_at(p, pt, in);
        prt__plan_eval(p, in, vals, NULL);
        for (i = 0; i < p->nb_tensors && s == PRT_OK; i++) {
            const prt__ptensor *t = &p->tensors[i];
            const prt_dims *rec = pt == 0 ? &t->min : pt == 1 ? &t->opt : &t->max;
            for (j = 0; j < t->nb_dims; j++) {
                int64_t v = vals[t->expr[j]];
                if (v == PRT__EVAL_BAD || v < 0 || v != rec->d[j] || (t->dims.d[j] >= 0 && t->dims.d[j] != v)) {
                    seterr(err, cap,
                           "corrupt plan: tensor \"%s\" dim %d: its expression gives %s%" PRId64
                           " at the profile's %s shapes, but the plan records %" PRId64 " there and %" PRId64
                           " as its extent",
                           t->name, (int)j, v == PRT__EVAL_BAD ? "no value (overflow or division by zero) instead of "
                                                               : "",
                           v == PRT__EVAL_BAD ? 0 : v, point[pt], rec->d[j], t->dims.d[j]);
                    s = PRT_STATUS_BAD_FORMAT;
                    break;
                }
            }
        }
    }
done:
    prt__free(vals);
    prt__free(in);
    return s;
}

/* ---- the re-created plugins against the plan ---------------------------------- */

/* What every plugin of a plan is checked against: the plan's expressions as
 * nodes of an arena (so that plugins can build on them), and the plan's
 * values at the profile's three points. */
typedef struct load_check {
    const prt__plan *p;
    prt__exprs *x;
    const prt_expr **node;  /* per plan node */
    uint8_t *dd;            /* per plan node: depends on a data-dependent extent */
    int64_t *vals[3];       /* per plan node, at min / opt / max */
    prt_dims *in[3];        /* per graph input, at min / opt / max */
    int32_t *input_tensor;  /* per graph input: its tensor */
} load_check;

static const char *const k_point[3] = {"min", "opt", "max"};

static void load_check_free(load_check *lc)
{
    int k;
    prt__exprs_destroy(lc->x);
    prt__free((void *)lc->node);
    prt__free(lc->dd);
    for (k = 0; k < 3; k++) {
        prt__free(lc->vals[k]);
        prt__free(lc->in[k]);
    }
    prt__free(lc->input_tensor);
    memset(lc, 0, sizeof *lc);
}

static prt_status load_check_init(load_check *lc, const prt__plan *p, char *err, size_t cap)
{
    int32_t i, k;
    prt_expr_builder *eb;
    memset(lc, 0, sizeof *lc);
    lc->p = p;
    lc->node = prt__calloc((size_t)p->nb_nodes + 1, sizeof *lc->node);
    lc->dd = prt__calloc((size_t)p->nb_nodes + 1, 1);
    lc->input_tensor = prt__calloc((size_t)p->nb_inputs + 1, sizeof *lc->input_tensor);
    for (k = 0; k < 3; k++) {
        lc->vals[k] = prt__calloc((size_t)p->nb_nodes + 1, sizeof *lc->vals[k]);
        lc->in[k] = prt__calloc(2 * (size_t)p->nb_inputs + 1, sizeof *lc->in[k]);
    }
    if (!lc->node || !lc->dd || !lc->input_tensor || !lc->vals[0] || !lc->vals[1] || !lc->vals[2] || !lc->in[0] ||
        !lc->in[1] || !lc->in[2] || prt__exprs_create(&lc->x) != PRT_OK)
        goto oom;
    for (i = 0, k = 0; i < p->nb_tensors && k < p->nb_inputs; i++) {
        const prt__ptensor *t = &p->tensors[i];
        if (t->role != PRT__ROLE_INPUT) continue;
        lc->input_tensor[k] = i;
        k++;
    }
    for (k = 0; k < 3; k++) {
        prt__plan_inputs_at(p, k, lc->in[k]);
        prt__plan_eval(p, lc->in[k], lc->vals[k], NULL);
    }
    /* The plan's nodes in the arena; operands precede their node (the
     * reader checked that). */
    eb = prt__exprs_builder(lc->x);
    for (i = 0; i < p->nb_nodes; i++) {
        const prt__pnode *n = &p->nodes[i];
        const prt_expr *e = NULL;
        switch (n->kind) {
        case PRT__NODE_CONST: e = prt__exprs_const(lc->x, n->v); break;
        case PRT__NODE_LEAF: {
            int64_t known = -1;
            if (n->a >= 0 && n->a < p->nb_inputs) {
                const prt__ptensor *t = &p->tensors[lc->input_tensor[n->a]];
                if (n->b >= 0 && n->b < t->nb_dims) known = t->dims.d[n->b];
            }
            e = prt__exprs_leaf(lc->x, n->a, n->b, known);
            break;
        }
        case PRT__NODE_OP:
            e = eb->operation(eb, (prt_expr_op)n->op, lc->node[n->a], lc->node[n->b]);
            lc->dd[i] = lc->dd[n->a] || lc->dd[n->b];
            break;
        case PRT__NODE_DDEP:
            e = eb->data_dependent(eb, lc->node[n->a]);
            lc->dd[i] = 1;
            break;
        default: break;
        }
        if (!e) goto oom;
        lc->node[i] = e;
    }
    return PRT_OK;
oom:
    seterr(err, cap, "out of memory checking the plan's plugins");
    load_check_free(lc);
    return PRT_STATUS_OUT_OF_MEMORY;
}

/* The tactic the plan records for layer l: the plugin must list it again
 * for the plan's shapes and device, and is told it (set_tactic). */
static prt_status load_tactic(const prt__plan *p, const prt__player *l, prt__plugin *pl, const prt_dyn_tensor_desc *io,
                              const char *who, char *err, size_t cap)
{
    int32_t ids[PRT__MAX_TACTICS], nb = 0, k;
    char msg[PRT_ERR_CAP], list[512];
    size_t n = 0;
    prt_status s;
    const prt__ptactic *t = l->tactic;
    msg[0] = 0;
    if ((s = prt__plugin_tactics(pl, io, l->nb_in, io + l->nb_in, l->nb_out, (prt_device)p->device, ids, &nb, msg,
                                 sizeof msg)) != PRT_OK) {
        seterr(err, cap, "%s", msg);
        return s;
    }
    for (k = 0; k < nb && ids[k] != t->tactic; k++) {}
    if (k == nb) {
        list[0] = 0;
        for (k = 0; k < nb && n < sizeof list; k++)
            n += (size_t)snprintf(list + n, sizeof list - n, "%s%d", k ? ", " : "", (int)ids[k]);
        seterr(err, cap,
               "plan does not match its plugin: %s: the plan records tactic %d%s%s%s, but the plugin lists %s%s for the "
               "plan's shapes on the %s; build the plan again",
               who, (int)t->tactic, t->name[0] ? " (" : "", t->name, t->name[0] ? ")" : "",
               nb ? "only tactics " : "no tactics", list, p->device == PRT_DEVICE_CUDA ? "cuda device" : "cpu");
        return PRT_STATUS_BAD_FORMAT;
    }
    msg[0] = 0;
    if ((s = prt__plugin_set_tactic(pl, t->tactic, msg, sizeof msg)) != PRT_OK) seterr(err, cap, "%s", msg);
    return s;
}

/* Ask layer li's re-created plugin again for its outputs' number, types and
 * shapes (with the plan's input expressions) and require what the plan
 * recorded; then (blob style: after configure_plugin with the profile's
 * shapes) its workspace size for the profile, which may raise the layer's
 * workspace above the recorded one; then its tactic (load_tactic). */
static prt_status check_layer(load_check *lc, prt__plan *p, int32_t li, prt__plugin *pl, char *err, size_t cap)
{
    prt__player *l = &p->layers[li];
    const prt_plugin_creator *cr = pl->creator;
    int32_t nin = l->nb_in, nout = l->nb_out, i, j, k;
    int optio = 0;
    prt_dtype *tin = NULL, *tout = NULL;
    prt_dims_expr *ein = NULL, *eout = NULL, *vin = NULL, *vout = NULL;
    prt_dyn_tensor_desc *io = NULL;
    char msg[PRT_ERR_CAP], who[512];
    prt_status s = PRT_OK;
    size_t ws;

    snprintf(who, sizeof who, "layer \"%.200s\" (%.100s v%.40s)", l->name, cr->name, cr->version);
    msg[0] = 0;
    if ((s = prt__optio_check(pl, who, l->in, nin, nout, NULL, &optio, msg, sizeof msg)) != PRT_OK) {
        seterr(err, cap, "plan does not match its plugin: %s", msg);
        return s == PRT_STATUS_INVALID_ARGUMENT ? PRT_STATUS_BAD_FORMAT : s;
    }
    if (optio && p->read_version < 2) {
        seterr(err, cap, "corrupt plan: %s uses optional inputs or outputs, which need read version 2; the plan says %u",
               who, p->read_version);
        return PRT_STATUS_BAD_FORMAT;
    }
    tin = prt__calloc((size_t)nin + 1, sizeof *tin);
    tout = prt__calloc((size_t)nout + 1, sizeof *tout);
    ein = prt__calloc((size_t)nin + 1, sizeof *ein);
    eout = prt__calloc((size_t)nout + 1, sizeof *eout);
    io = prt__calloc((size_t)(nin + nout) + 1, sizeof *io);
    vin = prt__calloc((size_t)nin + 1, sizeof *vin);
    vout = prt__calloc((size_t)nout + 1, sizeof *vout);
    if (!tin || !tout || !ein || !eout || !io || !vin || !vout) {
        seterr(err, cap, "out of memory checking %s", who);
        s = PRT_STATUS_OUT_OF_MEMORY;
        goto done;
    }

    /* Types. */
    for (i = 0; i < nin; i++) tin[i] = l->in[i] < 0 ? PRT_DTYPE_ABSENT : p->tensors[l->in[i]].dtype;
    msg[0] = 0;
    if ((s = prt__plugin_output_types(pl, tin, nin, tout, nout, msg, sizeof msg)) != PRT_OK) {
        seterr(err, cap, "plan does not match its plugin: %s refuses the plan's input types: %s", who, msg);
        s = PRT_STATUS_BAD_FORMAT;
        goto done;
    }
    for (i = 0; i < nout; i++) {
        const prt__ptensor *t = &p->tensors[l->out[i]];
        if (tout[i] != t->dtype) {
            seterr(err, cap,
                   "plan does not match its plugin: %s: the plugin makes output %d \"%s\" %s, the plan records %s",
                   who, (int)i, t->name, prt_dtype_name(tout[i]), prt_dtype_name(t->dtype));
            s = PRT_STATUS_BAD_FORMAT;
            goto done;
        }
    }

    /* Shapes: the plugin's expressions over the plan's, evaluated at the
     * profile's three points, against the plan's values there. */
    for (i = 0; i < nin; i++) {
        const prt__ptensor *t;
        vin[i].nb = PRT_NB_VALUES_UNKNOWN;
        if (l->in[i] < 0) {
            prt__optio_absent_expr(&ein[i]);
            continue;
        }
        t = &p->tensors[l->in[i]];
        ein[i].nb = t->nb_dims;
        for (j = 0; j < t->nb_dims; j++) ein[i].d[j] = lc->node[t->expr[j]];
        vin[i].nb = t->nb_vals;
        for (j = 0; j < t->nb_vals; j++) vin[i].d[j] = lc->node[t->val[j]];
    }
    msg[0] = 0;
    if ((s = prt__shapeval_outputs(pl, ein, vin, nin, eout, vout, nout, prt__exprs_builder(lc->x), msg, sizeof msg)) !=
        PRT_OK) {
        seterr(err, cap, "plan does not match its plugin: %s refuses the plan's input shapes: %s", who, msg);
        s = PRT_STATUS_BAD_FORMAT;
        goto done;
    }
    if (prt__exprs_failed(lc->x)) {
        seterr(err, cap, "out of memory checking %s", who);
        s = PRT_STATUS_OUT_OF_MEMORY;
        goto done;
    }
    for (i = 0; i < nout; i++) {
        const prt__ptensor *t = &p->tensors[l->out[i]];
        for (k = 0; k < 3; k++) {
            const prt_dims *rec = k == 0 ? &t->min : k == 1 ? &t->opt : &t->max;
            prt_dims got;
            int bad = eout[i].nb != t->nb_dims, bad_dd = -1;
            char a[200], b[200];
            memset(&got, 0, sizeof got);
            got.nb = eout[i].nb;
            for (j = 0; j < eout[i].nb; j++) {
                int64_t v = -1;
                int dd = 0;
                if (!prt__exprs_owns(lc->x, eout[i].d[j]) ||
                    prt__expr_eval(lc->x, eout[i].d[j], lc->in[k], 2 * p->nb_inputs, &v, &dd) != 0)
                    v = -1;
                got.d[j] = v;
                if (j < t->nb_dims) {
                    if (v < 0 || v != lc->vals[k][t->expr[j]]) bad = 1;
                    if (!dd != !lc->dd[t->expr[j]] && bad_dd < 0) bad_dd = (int)j;
                }
            }
            if (bad) {
                int any_bad = 0;
                for (j = 0; j < got.nb; j++)
                    if (got.d[j] < 0) any_bad = 1;
                seterr(err, cap,
                       "plan does not match its plugin: %s: the plugin gives output %d \"%s\" the shape %s at the "
                       "profile's %s input shapes, the plan records %s%s",
                       who, (int)i, t->name, prt_dims_str(&got, a, sizeof a), k_point[k],
                       prt_dims_str(rec, b, sizeof b), any_bad ? " (-1: an extent that cannot be computed)" : "");
                s = PRT_STATUS_BAD_FORMAT;
                goto done;
            }
            if (bad_dd >= 0) {
                int plan_dd = lc->dd[t->expr[bad_dd]];
                seterr(err, cap,
                       "plan does not match its plugin: %s: output %d \"%s\" dim %d is %s for the plugin but %s in "
                       "the plan",
                       who, (int)i, t->name, bad_dd, plan_dd ? "known before the run" : "data-dependent",
                       plan_dd ? "data-dependent" : "known before the run");
                s = PRT_STATUS_BAD_FORMAT;
                goto done;
            }
        }
    }

    /* Shape values: the same number, and the same values at the three points. */
    for (i = 0; i < nout; i++) {
        const prt__ptensor *t = &p->tensors[l->out[i]];
        int bad = vout[i].nb != t->nb_vals;
        for (k = 0; k < 3 && !bad; k++)
            for (j = 0; j < t->nb_vals && !bad; j++) {
                int64_t v = -1;
                int dd = 0;
                if (!prt__exprs_owns(lc->x, vout[i].d[j]) ||
                    prt__expr_eval(lc->x, vout[i].d[j], lc->in[k], 2 * p->nb_inputs, &v, &dd) != 0 ||
                    v != lc->vals[k][t->val[j]])
                    bad = 1;
            }
        if (bad) {
            seterr(err, cap,
                   "plan does not match its plugin: %s: the plugin gives output %d \"%s\" %d shape values, the plan "
                   "records %d%s",
                   who, (int)i, t->name, (int)vout[i].nb, (int)t->nb_vals,
                   vout[i].nb == t->nb_vals ? " with other values at the profile's shapes" : "");
            s = PRT_STATUS_BAD_FORMAT;
            goto done;
        }
    }

    /* Formats (absent inputs are never asked about), then workspace for the profile. */
    for (i = 0; i < nin; i++) {
        if (l->in[i] < 0) prt__optio_absent_dyn(&io[i]);
        else prt__plan_dyn_desc(&p->tensors[l->in[i]], &io[i]);
    }
    for (i = 0; i < nout; i++) prt__plan_dyn_desc(&p->tensors[l->out[i]], &io[nin + i]);
    if ((s = prt__layercheck_formats(pl, io, nin, nout, (prt_device)p->device, who, err, cap)) != PRT_OK) goto done;
    if (pl->style == PRT_STYLE_BLOB) {
        msg[0] = 0;
        if ((s = prt__plugin_configure(pl, io, nin, io + nin, nout, msg, sizeof msg)) != PRT_OK) {
            seterr(err, cap, "plan does not match its plugin: %s: configure_plugin refuses the plan's shapes: %s", who,
                   msg);
            s = PRT_STATUS_BAD_FORMAT;
            goto done;
        }
    }
    ws = prt__devq_workspace(pl, io, nin, io + nin, nout, (prt_device)p->device);
    if (ws == SIZE_MAX || (uint64_t)ws > (uint64_t)INT64_MAX / 2) {
        seterr(err, cap, "%s: asks for %zu workspace bytes at the profile's shapes", who, ws);
        s = PRT_STATUS_PLUGIN_ERROR;
        goto done;
    }
    if ((uint64_t)ws > l->workspace) {
        uint64_t need = ((uint64_t)ws + 255u) / 256u * 256u;
        if (p->workspace_limit && (uint64_t)ws > p->workspace_limit) {
            seterr(err, cap,
                   "%s: the plugin now needs %zu workspace bytes at the profile's max shapes, the plan recorded %" PRIu64
                   " and its workspace limit is %" PRIu64 "; build the plan again",
                   who, ws, l->workspace, p->workspace_limit);
            s = PRT_STATUS_OUT_OF_MEMORY;
            goto done;
        }
        prt_log(PRT_SEVERITY_INFO,
                "%s: the plugin now needs %zu workspace bytes, the plan recorded %" PRIu64 "; contexts allocate %zu",
                who, ws, l->workspace, ws);
        l->workspace = (uint64_t)ws;
        if (need > p->workspace_size) p->workspace_size = need;
    }
    if (l->tactic && (s = load_tactic(p, l, pl, io, who, err, cap)) != PRT_OK) goto done;
    s = PRT_OK;
done:
    prt__free(vin);
    prt__free(vout);
    prt__free(tin);
    prt__free(tout);
    prt__free(ein);
    prt__free(eout);
    prt__free(io);
    return s;
}

static prt_status engine_deserialize(prt_registry *r, const void *data, size_t len, prt_engine **out, char *err,
                                     size_t cap);

/* Sub-networks built by plugins while loading resolve in `r` (engine/subnet.h). */
prt_status prt_engine_deserialize(prt_registry *r, const void *data, size_t len, prt_engine **out, char *err,
                                  size_t cap)
{
    prt_registry *prev = prt__subnet_scope_enter(r ? r : prt_registry_global());
    prt_status s = engine_deserialize(r, data, len, out, err, cap);
    prt__subnet_scope_leave(prev);
    return s;
}

static prt_status engine_deserialize(prt_registry *r, const void *data, size_t len, prt_engine **out, char *err,
                                     size_t cap)
{
    prt_engine *e;
    prt_status s;
    int32_t i, k;
    char msg[PRT_ERR_CAP];
    load_check lc;

    memset(&lc, 0, sizeof lc);
    if (err && cap) err[0] = 0;
    if (!out || (!data && len)) {
        seterr(err, cap, "no plan or no output pointer given");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    if (!r) r = prt_registry_global();
    e = prt__calloc(1, sizeof *e);
    if (!e) {
        seterr(err, cap, "out of memory loading a plan");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    e->registry = r;
    pthread_mutex_init(&e->lock, NULL);
    msg[0] = 0;
    s = prt__plan_read(data, len, &e->plan, msg, sizeof msg);
    if (s != PRT_OK) {
        seterr(err, cap, "%s", msg);
        pthread_mutex_destroy(&e->lock);
        prt__free(e);
        return s;
    }
    if ((s = check_shapes(e->plan, err, cap)) != PRT_OK) {
        prt__plan_free(e->plan);
        pthread_mutex_destroy(&e->lock);
        prt__free(e);
        return s;
    }
    e->bytes = prt__malloc(len);
    e->protos = prt__calloc((size_t)(e->plan->nb_layers ? e->plan->nb_layers : 1), sizeof *e->protos);
    e->io = prt__calloc((size_t)(e->plan->nb_tensors ? e->plan->nb_tensors : 1), sizeof *e->io);
    if (!e->bytes || !e->protos || !e->io) {
        seterr(err, cap, "out of memory loading a plan of %zu bytes", len);
        s = PRT_STATUS_OUT_OF_MEMORY;
        goto fail;
    }
    memcpy(e->bytes, data, len);
    e->len = len;
    for (k = 0; k < 2; k++)
        for (i = 0; i < e->plan->nb_tensors; i++)
            if (e->plan->tensors[i].role == (k == 0 ? PRT__ROLE_INPUT : PRT__ROLE_OUTPUT)) e->io[e->nb_io++] = i;
    if ((s = load_check_init(&lc, e->plan, err, cap)) != PRT_OK) goto fail;
    for (i = 0; i < e->plan->nb_layers; i++) {
        const prt__player *l = &e->plan->layers[i];
        const prt__precord *rec;
        prt_reader rd;
        if (l->kind != PRT__LAYER_PLUGIN) continue;
        rec = &e->plan->records[l->plugin];
        rd = prt_reader_init(rec->data, rec->len);
        msg[0] = 0;
        s = prt__plugin_read_record(r, &rd, l->name, &e->protos[i], msg, sizeof msg);
        if (s != PRT_OK) {
            seterr(err, cap, "layer \"%s\": %s", l->name, msg);
            goto fail;
        }
        if (rd.pos != rd.len) {
            seterr(err, cap, "corrupt plan: layer \"%s\": %zu bytes left over after its plugin record", l->name,
                   rd.len - rd.pos);
            s = PRT_STATUS_BAD_FORMAT;
            goto fail;
        }
        if ((s = check_layer(&lc, e->plan, i, e->protos[i], err, cap)) != PRT_OK) goto fail;
    }
    load_check_free(&lc);
    *out = e;
    return PRT_OK;
fail:
    load_check_free(&lc);
    prt_engine_destroy(e);
    return s;
}

prt_status prt_engine_load(prt_registry *r, const char *path, prt_engine **out, char *err, size_t cap)
{
    void *data = NULL;
    size_t len = 0;
    prt_status s;
    char msg[PRT_ERR_CAP];
    msg[0] = 0;
    s = prt__read_file(path, &data, &len, msg, sizeof msg);
    if (s != PRT_OK) {
        seterr(err, cap, "%s", msg);
        return s;
    }
    s = prt_engine_deserialize(r, data, len, out, msg, sizeof msg);
    prt__free(data);
    if (s != PRT_OK) seterr(err, cap, "%s: %s", path, msg);
    return s;
}

prt_status prt_engine_serialize(const prt_engine *e, void *buf, size_t cap, size_t *len)
{
    if (!e || !len) return PRT_STATUS_INVALID_ARGUMENT;
    if (!buf) {
        *len = e->len;
        return PRT_OK;
    }
    if (cap < e->len)
        return prt__err(e, PRT_STATUS_INVALID_ARGUMENT, "the plan needs %zu bytes, the buffer holds %zu", e->len, cap);
    memcpy(buf, e->bytes, e->len);
    *len = e->len;
    return PRT_OK;
}

prt_status prt_engine_save(const prt_engine *e, const char *path, char *err, size_t cap)
{
    char msg[PRT_ERR_CAP];
    prt_status s;
    if (!e || !path) {
        seterr(err, cap, "no engine or path given");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    /* A unique file beside the target, then a rename: a failure leaves no
     * half plan, and nothing at a predictable name is followed. */
    msg[0] = 0;
    s = prt__write_file_atomic(path, e->bytes, e->len, msg, sizeof msg);
    if (s != PRT_OK) seterr(err, cap, "%s", msg);
    return s;
}

int32_t prt_engine_nb_io(const prt_engine *e) { return e ? e->nb_io : 0; }

prt_status prt_engine_io(const prt_engine *e, int32_t index, prt_io_desc *out)
{
    const prt__ptensor *t;
    if (!e || !out || index < 0 || index >= e->nb_io) return PRT_STATUS_INVALID_ARGUMENT;
    t = &e->plan->tensors[e->io[index]];
    memset(out, 0, sizeof *out);
    out->name = t->name;
    out->mode = t->role == PRT__ROLE_INPUT ? PRT_IO_INPUT : PRT_IO_OUTPUT;
    out->dtype = t->dtype;
    out->dims = t->dims;
    out->min = t->min;
    out->opt = t->opt;
    out->max = t->max;
    return PRT_OK;
}

prt_status prt_engine_io_values(const prt_engine *e, int32_t index, prt_dims *min, prt_dims *opt, prt_dims *max)
{
    const prt__ptensor *t;
    if (!e || !min || !opt || !max || index < 0 || index >= e->nb_io) return PRT_STATUS_INVALID_ARGUMENT;
    t = &e->plan->tensors[e->io[index]];
    if (t->role != PRT__ROLE_INPUT || t->nb_vals < 0) return PRT_STATUS_NOT_FOUND;
    *min = t->vmin;
    *opt = t->vopt;
    *max = t->vmax;
    return PRT_OK;
}

int32_t prt_engine_find_io(const prt_engine *e, const char *name)
{
    int32_t i;
    if (!e || !name) return -1;
    for (i = 0; i < e->nb_io; i++)
        if (strcmp(e->plan->tensors[e->io[i]].name, name) == 0) return i;
    return -1;
}

int32_t prt_engine_nb_layers(const prt_engine *e) { return e ? e->plan->nb_layers : 0; }

const char *prt_engine_layer_name(const prt_engine *e, int32_t index)
{
    if (!e || index < 0 || index >= e->plan->nb_layers) return NULL;
    return e->plan->layers[index].name;
}

prt_device prt_engine_device(const prt_engine *e) { return e ? (prt_device)e->plan->device : PRT_DEVICE_CPU; }
prt_precision prt_engine_precision(const prt_engine *e)
{
    return e ? (prt_precision)e->plan->precision : PRT_PRECISION_FP32;
}
uint64_t prt_engine_arena_size(const prt_engine *e) { return e ? e->plan->arena_size : 0; }
uint64_t prt_engine_workspace_size(const prt_engine *e) { return e ? e->plan->workspace_size : 0; }
const char *prt_engine_last_error(const prt_engine *e) { return prt__err_get(e); }
