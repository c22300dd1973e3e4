/* engine/inspect.c - plan descriptions for tools (plugrt/inspect.h). */
#include <string.h>

#include "core/core.h"
#include "engine/plan.h"
#include "plugrt/inspect.h"

typedef struct rec_keys {
    int style;
    char *name, *version, *ns, *owner;
} rec_keys;

struct prt_plan_info {
    prt__plan *plan;
    uint32_t read_version, write_version;
    uint64_t plan_bytes;
    rec_keys *recs; /* one per plugin record */
};

static char *take_str(prt_reader *r)
{
    uint32_t n = 0;
    const char *s = prt_read_str(r, &n);
    return prt__strndup(s ? s : "", s ? n : 0);
}

prt_status prt_plan_info_read(const void *data, size_t len, prt_plan_info **out, char *err, size_t cap)
{
    prt_plan_info *pi;
    const uint8_t *b = data;
    prt_status s;
    int32_t i;
    if (err && cap) err[0] = 0;
    if (!out || (!data && len)) {
        if (err && cap) snprintf(err, cap, "prt_plan_info_read: no plan or no output pointer given");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    pi = prt__calloc(1, sizeof *pi);
    if (!pi) {
        if (err && cap) snprintf(err, cap, "out of memory describing a plan");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    s = prt__plan_read(data, len, &pi->plan, err, cap);
    if (s != PRT_OK) {
        prt__free(pi);
        return s;
    }
    pi->read_version = (uint32_t)(b[8] | b[9] << 8 | b[10] << 16 | (uint32_t)b[11] << 24);
    pi->write_version = (uint32_t)(b[12] | b[13] << 8 | b[14] << 16 | (uint32_t)b[15] << 24);
    pi->plan_bytes = len;
    pi->recs = prt__calloc((size_t)(pi->plan->nb_records + 1), sizeof *pi->recs);
    if (!pi->recs) goto oom;
    for (i = 0; i < pi->plan->nb_records; i++) {
        prt_reader r = prt_reader_init(pi->plan->records[i].data, pi->plan->records[i].len);
        rec_keys *k = &pi->recs[i];
        k->style = prt_read_u8(&r);
        k->name = take_str(&r);
        k->version = take_str(&r);
        k->ns = take_str(&r);
        k->owner = take_str(&r);
        if (!k->name || !k->version || !k->ns || !k->owner) goto oom;
    }
    *out = pi;
    return PRT_OK;
oom:
    prt_plan_info_destroy(pi);
    if (err && cap) snprintf(err, cap, "out of memory describing a plan");
    return PRT_STATUS_OUT_OF_MEMORY;
}

prt_status prt_plan_info_load(const char *path, prt_plan_info **out, char *err, size_t cap)
{
    void *data = NULL;
    size_t len = 0;
    char msg[PRT_ERR_CAP];
    prt_status s = prt__read_file(path, &data, &len, msg, sizeof msg);
    if (s != PRT_OK) {
        if (err && cap) snprintf(err, cap, "%s", msg);
        return s;
    }
    s = prt_plan_info_read(data, len, out, msg, sizeof msg);
    prt__free(data);
    if (s != PRT_OK && err && cap) snprintf(err, cap, "%s: %s", path, msg);
    return s;
}

void prt_plan_info_destroy(prt_plan_info *pi)
{
    int32_t i;
    if (!pi) return;
    for (i = 0; pi->recs && i < pi->plan->nb_records; i++) {
        prt__free(pi->recs[i].name);
        prt__free(pi->recs[i].version);
        prt__free(pi->recs[i].ns);
        prt__free(pi->recs[i].owner);
    }
    prt__free(pi->recs);
    prt__plan_free(pi->plan);
    prt__free(pi);
}

/* Copy `full` into the caller's struct up to its struct_size. */
static prt_status hand_out(void *out, const void *full, size_t size)
{
    uint32_t want;
    if (!out) return PRT_STATUS_INVALID_ARGUMENT;
    memcpy(&want, out, sizeof want);
    if (want < 2 * sizeof(uint32_t)) return PRT_STATUS_INVALID_ARGUMENT;
    memcpy((char *)out + sizeof want, (const char *)full + sizeof want, (want < size ? want : size) - sizeof want);
    return PRT_OK;
}

prt_status prt_plan_info_summary(const prt_plan_info *pi, prt_plan_summary *out)
{
    prt_plan_summary s;
    if (!pi) return PRT_STATUS_INVALID_ARGUMENT;
    memset(&s, 0, sizeof s);
    s.struct_size = (uint32_t)sizeof s;
    s.abi_version = PRT_ABI_VERSION;
    s.read_version = pi->read_version;
    s.write_version = pi->write_version;
    s.library_version = pi->plan->lib_version;
    s.precision = (prt_precision)pi->plan->precision;
    s.device = (prt_device)pi->plan->device;
    s.workspace_limit = pi->plan->workspace_limit;
    s.arena_bytes = pi->plan->arena_size;
    s.workspace_bytes = pi->plan->workspace_size;
    s.weight_bytes = pi->plan->weights_len;
    s.plan_bytes = pi->plan_bytes;
    s.nb_tensors = pi->plan->nb_tensors;
    s.nb_layers = pi->plan->nb_layers;
    s.nb_folded = pi->plan->nb_folds;
    return hand_out(out, &s, sizeof s);
}

prt_status prt_plan_info_tensor(const prt_plan_info *pi, int32_t index, prt_plan_tensor *out)
{
    prt_plan_tensor t;
    const prt__ptensor *p;
    if (!pi || index < 0 || index >= pi->plan->nb_tensors) return PRT_STATUS_INVALID_ARGUMENT;
    p = &pi->plan->tensors[index];
    memset(&t, 0, sizeof t);
    t.struct_size = (uint32_t)sizeof t;
    t.abi_version = PRT_ABI_VERSION;
    t.name = p->name;
    t.role = (prt_tensor_role)p->role;
    t.dtype = p->dtype;
    t.format = p->format;
    t.dims = p->dims;
    t.min = p->min;
    t.opt = p->opt;
    t.max = p->max;
    t.offset = p->offset;
    t.bytes = p->bytes;
    t.nb_values = p->nb_vals;
    t.values_min = p->vmin;
    t.values_opt = p->vopt;
    t.values_max = p->vmax;
    return hand_out(out, &t, sizeof t);
}

_Static_assert((int)PRT_TACTIC_TIMED == (int)PRT__TACTIC_TIMED && (int)PRT_TACTIC_FROM_CACHE == (int)PRT__TACTIC_CACHE &&
                   (int)PRT_TACTIC_ONLY == (int)PRT__TACTIC_ONLY && (int)PRT_TACTIC_UNTIMED == (int)PRT__TACTIC_UNTIMED &&
                   (int)PRT_TACTIC_NO_DEVICE == (int)PRT__TACTIC_NO_DEVICE &&
                   (int)PRT_TACTIC_FAILED == (int)PRT__TACTIC_FAILED,
               "TACT sources are the public prt_tactic_source values");

prt_status prt_plan_info_layer(const prt_plan_info *pi, int32_t index, prt_plan_layer *out)
{
    prt_plan_layer l;
    const prt__player *p;
    if (!pi || index < 0 || index >= pi->plan->nb_layers) return PRT_STATUS_INVALID_ARGUMENT;
    p = &pi->plan->layers[index];
    memset(&l, 0, sizeof l);
    l.struct_size = (uint32_t)sizeof l;
    l.abi_version = PRT_ABI_VERSION;
    l.name = p->name;
    l.kind = p->kind == PRT__LAYER_CAST ? PRT_LAYER_CAST : PRT_LAYER_PLUGIN;
    l.plugin = l.version = l.plugin_namespace = l.owner = "";
    if (l.kind == PRT_LAYER_PLUGIN && p->plugin >= 0 && p->plugin < pi->plan->nb_records) {
        const rec_keys *k = &pi->recs[p->plugin];
        l.style = (prt_plugin_style)k->style;
        l.plugin = k->name;
        l.version = k->version;
        l.plugin_namespace = k->ns;
        l.owner = k->owner;
        l.record_bytes = pi->plan->records[p->plugin].len;
    }
    l.cast_from = p->cast_from;
    l.cast_to = p->cast_to;
    l.nb_inputs = p->nb_in;
    l.nb_outputs = p->nb_out;
    l.inputs = p->in;
    l.outputs = p->out;
    l.workspace = p->workspace;
    l.tactic_name = "";
    if (p->tactic) {
        l.tactic = p->tactic->tactic;
        l.tactic_source = (prt_tactic_source)p->tactic->source;
        l.tactic_name = p->tactic->name;
        l.nb_tactics = p->tactic->nb;
        l.tactic_ids = p->tactic->ids;
        l.tactic_ns = p->tactic->ns;
    }
    return hand_out(out, &l, sizeof l);
}

prt_status prt_plan_info_folded(const prt_plan_info *pi, int32_t index, prt_plan_folded *out)
{
    prt_plan_folded f;
    const prt__pfold *p;
    if (!pi || index < 0 || index >= pi->plan->nb_folds) return PRT_STATUS_INVALID_ARGUMENT;
    p = &pi->plan->folds[index];
    memset(&f, 0, sizeof f);
    f.struct_size = (uint32_t)sizeof f;
    f.abi_version = PRT_ABI_VERSION;
    f.layer = p->layer;
    f.plugin = p->plugin;
    f.version = p->version;
    f.nb_outputs = p->nb_out;
    f.outputs = (const char *const *)p->outputs;
    return hand_out(out, &f, sizeof f);
}
