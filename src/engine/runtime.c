/* engine/runtime.c - loading a plan into an engine; describing engines. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/core.h"
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

void prt__runtime_cast_cpu(prt_dtype from, prt_dtype to, const void *src, void *dst, int64_t begin, int64_t end)
{
    int64_t i;
    if (from == PRT_DTYPE_F32 && to == PRT_DTYPE_F16) {
        const float *s = src;
        uint16_t *d = dst;
        for (i = begin; i < end; i++) d[i] = prt_f32_to_f16(s[i]);
    } else if (from == PRT_DTYPE_F16 && to == PRT_DTYPE_F32) {
        const uint16_t *s = src;
        float *d = dst;
        for (i = begin; i < end; i++) d[i] = prt_f16_to_f32(s[i]);
    }
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
    int32_t i, j, k, pt;
    static const char *const point[3] = {"min", "opt", "max"};
    prt_status s = PRT_OK;
    vals = prt__calloc((size_t)p->nb_nodes + 1, sizeof *vals);
    in = prt__calloc((size_t)p->nb_inputs + 1, sizeof *in);
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
        for (i = 0, k = 0; i < p->nb_tensors; i++) {
            const prt__ptensor *t = &p->tensors[i];
            if (t->role == PRT__ROLE_INPUT) in[k++] = pt == 0 ? t->min : pt == 1 ? t->opt : t->max;
        }
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

prt_status prt_engine_deserialize(prt_registry *r, const void *data, size_t len, prt_engine **out, char *err,
                                  size_t cap)
{
    prt_engine *e;
    prt_status s;
    int32_t i, k;
    char msg[PRT_ERR_CAP];

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
    }
    *out = e;
    return PRT_OK;
fail:
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
    if (cap < e->len) {
        prt__err_set(e, "the plan needs %zu bytes, the buffer holds %zu", e->len, cap);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    memcpy(buf, e->bytes, e->len);
    *len = e->len;
    return PRT_OK;
}

prt_status prt_engine_save(const prt_engine *e, const char *path, char *err, size_t cap)
{
    FILE *f;
    char tmp[4096];
    if (!e || !path) {
        seterr(err, cap, "no engine or path given");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    /* Write beside the target and rename, so a failure leaves no half plan. */
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp) {
        seterr(err, cap, "path too long: %s", path);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    f = fopen(tmp, "wb");
    if (!f) {
        seterr(err, cap, "cannot write \"%s\": %s", tmp, strerror(errno));
        return PRT_STATUS_IO_ERROR;
    }
    if (fwrite(e->bytes, 1, e->len, f) != e->len || fclose(f) != 0) {
        seterr(err, cap, "cannot write \"%s\": %s", tmp, strerror(errno));
        remove(tmp);
        return PRT_STATUS_IO_ERROR;
    }
    if (rename(tmp, path) != 0) {
        seterr(err, cap, "cannot rename \"%s\" to \"%s\": %s", tmp, path, strerror(errno));
        remove(tmp);
        return PRT_STATUS_IO_ERROR;
    }
    return PRT_OK;
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
