/*
 * registry/adapter.c - one interface over blob-style and field-style
 * plugins, plugin records, and the lifecycle trace.
 *
 * Every call into a plugin goes through this file. It
 *   - reads an ops member only when the ops' struct_size covers it, and
 *     treats a NULL optional member as the ABI's default;
 *   - refuses a call whose required member is missing with a message naming
 *     the layer, the plugin and the member;
 *   - gives a plugin error that came without a message a generic one naming
 *     the layer, the plugin and the call;
 *   - logs "<layer>: <call>" to the lifecycle trace before the call.
 *
 * Defaults for NULL members (docs/lifecycle.md):
 *   supports_format_combination  linear format only, any type
 *   configure / configure_plugin nothing to do
 *   get_workspace_size           0 bytes
 *   initialize / terminate       nothing to do
 *   attach / detach (blob)       nothing to do
 *   attach_to_context (field)    a plain clone
 *   set_tactic, on_shape_change  nothing to do
 *   get_valid_tactics            no tactics (the plugin's default kernel)
 *   get_tactic_name              no names
 *   core get_name/...            the creator's name, version, namespace
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "plugrt/trace.h"
#include "registry/adapter.h"
#include "registry/fieldser.h"

/* Does the ops struct `ops` (of type T) cover member m, and is it set? */
#define PRT_COVERS(ops, T, m) \
    ((ops) && (ops)->struct_size >= offsetof(T, m) + sizeof((ops)->m))
#define PRT_HAS(ops, T, m) (PRT_COVERS(ops, T, m) && (ops)->m)

#define SMALL_IO 16

/* Room for n items of `size` bytes: `small`, which holds nb_small of them,
 * when they fit, else the heap (NULL when out of memory). Give it back with
 * scratch_free. */
static void *scratch(void *small, size_t nb_small, size_t n, size_t size)
{
    return n > nb_small ? prt__malloc(n * size) : small;
}

static void scratch_free(void *p, const void *small)
{
    if (p != small) prt__free(p);
}

/* ---- lifecycle trace --------------------------------------------------- */

static pthread_once_t trace_once = PTHREAD_ONCE_INIT;
static atomic_int trace_on;     /* stderr trace */
static atomic_int trace_forced; /* prt_set_trace was called */
static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static prt_trace_fn trace_cb;
static void *trace_user;
static atomic_int trace_has_cb;

static void trace_init(void)
{
    const char *env = getenv("PLUGRT_TRACE");
    if (!atomic_load(&trace_forced) && env && strstr(env, "lifecycle")) atomic_store(&trace_on, 1);
}

void prt_set_trace(int on)
{
    pthread_once(&trace_once, trace_init);
    atomic_store(&trace_forced, 1);
    atomic_store(&trace_on, on != 0);
}

void prt_set_trace_callback(prt_trace_fn fn, void *user)
{
    pthread_mutex_lock(&trace_lock);
    trace_cb = fn;
    trace_user = user;
    atomic_store(&trace_has_cb, fn != NULL);
    pthread_mutex_unlock(&trace_lock);
}

static const char *layer_of(const prt__plugin *pl)
{
    if (pl && pl->layer && pl->layer[0]) return pl->layer;
    if (pl && pl->creator && pl->creator->name) return pl->creator->name;
    return "(unnamed layer)";
}

void prt__trace(const prt__plugin *pl, const char *call)
{
    char line[512];
    pthread_once(&trace_once, trace_init);
    if (!atomic_load(&trace_on) && !atomic_load(&trace_has_cb)) return;
    snprintf(line, sizeof line, "%s: %s", layer_of(pl), call ? call : "?");
    if (atomic_load(&trace_on)) fprintf(stderr, "plugrt trace: %s\n", line);
    if (atomic_load(&trace_has_cb)) {
        pthread_mutex_lock(&trace_lock);
        if (trace_cb) trace_cb(trace_user, line);
        pthread_mutex_unlock(&trace_lock);
    }
}

/* ---- messages ---------------------------------------------------------- */

static const char *cname(const prt_plugin_creator *c)
{
    return c && c->name ? c->name : "?";
}
static const char *cversion(const prt_plugin_creator *c)
{
    return c && c->version ? c->version : "?";
}

/* "layer (Name v1)" or "layer (ns::Name v1)". */
static const char *who(const prt__plugin *pl, char *buf, size_t cap)
{
    const prt_plugin_creator *c = pl ? pl->creator : NULL;
    const char *ns = c && c->plugin_namespace ? c->plugin_namespace : "";
    snprintf(buf, cap, "%s (%s%s%s v%s)", layer_of(pl), ns, ns[0] ? "::" : "", cname(c),
             cversion(c));
    return buf;
}

static prt_status plugin_status(prt_status s)
{
    return (int)s > 0 && (int)s < (int)PRT_STATUS_COUNT_ ? s : PRT_STATUS_PLUGIN_ERROR;
}

/* A plugin call returned `s` with message `pmsg` (maybe empty). */
static prt_status plugin_failed(const prt__plugin *pl, const char *call, prt_status s,
                                const char *pmsg, char *err, size_t cap)
{
    char w[256];
    who(pl, w, sizeof w);
    if (pmsg && pmsg[0])
        snprintf(err, cap, "%s: %s failed: %s", w, call, pmsg);
    else
        snprintf(err, cap, "%s: %s failed with %s (%s) and gave no message", w, call,
                 prt_status_name(s), prt_status_str(s));
    return plugin_status(s);
}

static prt_status missing(const prt__plugin *pl, const char *member, char *err, size_t cap)
{
    char w[256];
    snprintf(err, cap, "%s: the plugin does not implement %s, which is required", who(pl, w, sizeof w),
             member);
    return PRT_STATUS_UNSUPPORTED;
}

/* ---- ops access -------------------------------------------------------- */

static const prt_blob_plugin_ops *bops(const prt__plugin *pl)
{
    return pl->blob ? pl->blob->ops : NULL;
}
static const prt_field_plugin_ops *fops(const prt__plugin *pl)
{
    return pl->field ? pl->field->ops : NULL;
}
static const prt_plugin_build_ops *fbuild(const prt__plugin *pl)
{
    const prt_field_plugin_ops *o = fops(pl);
    return PRT_HAS(o, prt_field_plugin_ops, build) ? o->build : NULL;
}
static const prt_plugin_runtime_ops *fruntime(const prt__plugin *pl)
{
    const prt_field_plugin_ops *o = fops(pl);
    return PRT_HAS(o, prt_field_plugin_ops, runtime) ? o->runtime : NULL;
}

#define BHAS(pl, m) PRT_HAS(bops(pl), prt_blob_plugin_ops, m)
#define FBHAS(pl, m) PRT_HAS(fbuild(pl), prt_plugin_build_ops, m)
#define FRHAS(pl, m) PRT_HAS(fruntime(pl), prt_plugin_runtime_ops, m)
#define FHAS(pl, m) PRT_HAS(fops(pl), prt_field_plugin_ops, m)

/* Destroy a raw plugin object that never became (or no longer is) wrapped. */
static void raw_destroy(const prt__plugin *tmpl, prt_blob_plugin *b, prt_field_plugin *f)
{
    if (b && b->ops && PRT_HAS(b->ops, prt_blob_plugin_ops, destroy)) {
        prt__trace(tmpl, "destroy");
        b->ops->destroy(b);
    }
    if (f && f->ops && PRT_HAS(f->ops, prt_field_plugin_ops, destroy)) {
        prt__trace(tmpl, "destroy");
        f->ops->destroy(f);
    }
}

/* A plugin object a creator or clone handed back must have ops, an ABI
 * version the host knows and a destroy. */
static prt_status check_object(const prt__plugin *tmpl, const char *call, prt_blob_plugin *b,
                               prt_field_plugin *f, char *err, size_t cap)
{
    char w[256];
    const uint32_t *hdr = NULL;
    int has_destroy = 0;
    if (tmpl->style == PRT_STYLE_BLOB && b && b->ops) {
        hdr = &b->ops->struct_size;
        has_destroy = PRT_HAS(b->ops, prt_blob_plugin_ops, destroy);
    } else if (tmpl->style == PRT_STYLE_FIELD && f && f->ops) {
        hdr = &f->ops->struct_size;
        has_destroy = PRT_HAS(f->ops, prt_field_plugin_ops, destroy);
    }
    who(tmpl, w, sizeof w);
    if (!(b || f)) {
        snprintf(err, cap, "%s: %s reported success but returned no plugin object", w, call);
        return PRT_STATUS_PLUGIN_ERROR;
    }
    if (!hdr) {
        snprintf(err, cap, "%s: %s returned a plugin object without ops", w, call);
        return PRT_STATUS_PLUGIN_ERROR;
    }
    if (hdr[1] > PRT_ABI_VERSION || hdr[1] == 0) {
        snprintf(err, cap, "%s: %s returned a plugin whose ops have abi_version %u; this host supports 1..%u",
                 w, call, hdr[1], PRT_ABI_VERSION);
        raw_destroy(tmpl, b, f);
        return PRT_STATUS_VERSION_MISMATCH;
    }
    if (!has_destroy) {
        snprintf(err, cap, "%s: %s returned a plugin without destroy, which is required", w, call);
        return PRT_STATUS_PLUGIN_ERROR; /* cannot free it: leaked, not crashed */
    }
    return PRT_OK;
}

static prt__plugin *wrapper_new(const prt_plugin_creator *c, prt_plugin_style style, const char *owner,
                                const char *layer)
{
    prt__plugin *pl = prt__calloc(1, sizeof(*pl));
    if (!pl) return NULL;
    pl->style = style;
    pl->creator = c;
    pl->owner = prt__strdup(owner ? owner : "");
    pl->layer = prt__strdup(layer && layer[0] ? layer : cname(c));
    if (!pl->owner || !pl->layer) {
        prt__free(pl->owner);
        prt__free(pl->layer);
        prt__free(pl);
        return NULL;
    }
    return pl;
}

static void wrapper_free(prt__plugin *pl)
{
    if (!pl) return;
    prt__free(pl->owner);
    prt__free(pl->layer);
    prt__free(pl);
}

/* ---- create ------------------------------------------------------------ */

prt_status prt__plugin_create(const prt_plugin_creator *c, const char *owner, const char *layer,
                              const prt_fields *fields, prt_phase phase, prt__plugin **out, char *err,
                              size_t cap)
{
    static const prt_fields empty = {NULL, 0, 0};
    prt_owned_fields *norm = NULL;
    prt__plugin *pl;
    prt_blob_plugin *b = NULL;
    prt_field_plugin *f = NULL;
    char pmsg[PRT_ERR_CAP];
    prt_msg m = {pmsg, sizeof pmsg};
    prt_status s;
    const char *call;

    if (!c || !out) {
        snprintf(err, cap, "no creator given");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    if (c->style != PRT_STYLE_BLOB && c->style != PRT_STYLE_FIELD) {
        snprintf(err, cap, "%s v%s: creator has style %d; expected 1 (blob) or 2 (field)", cname(c),
                 cversion(c), (int)c->style);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    pl = wrapper_new(c, c->style, owner, layer);
    if (!pl) {
        snprintf(err, cap, "out of memory creating %s", layer ? layer : cname(c));
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    if (c->style == PRT_STYLE_BLOB &&
        !(PRT_HAS(c, prt_plugin_creator, create_blob))) {
        s = missing(pl, "the creator's create_blob", err, cap);
        goto fail_wrapper;
    }
    if (c->style == PRT_STYLE_FIELD && !(PRT_HAS(c, prt_plugin_creator, create_field))) {
        s = missing(pl, "the creator's create_field", err, cap);
        goto fail_wrapper;
    }
    s = prt_fields_validate(c, fields ? fields : &empty, &norm, err, cap);
    if (s != PRT_OK) goto fail_wrapper;

    pmsg[0] = 0;
    if (c->style == PRT_STYLE_BLOB) {
        call = "create_blob";
        prt__trace(pl, call);
        s = c->create_blob(c, prt_owned_fields_get(norm), &b, &m);
    } else {
        call = phase == PRT_PHASE_RUNTIME ? "create_field(runtime)" : "create_field(build)";
        prt__trace(pl, call);
        s = c->create_field(c, prt_owned_fields_get(norm), phase, &f, &m);
    }
    prt_owned_fields_free(norm);
    if (s != PRT_OK) {
        s = plugin_failed(pl, call, s, pmsg, err, cap);
        goto fail_wrapper;
    }
    s = check_object(pl, call, b, f, err, cap);
    if (s != PRT_OK) goto fail_wrapper;
    pl->blob = b;
    pl->field = f;
    *out = pl;
    return PRT_OK;

fail_wrapper:
    wrapper_free(pl);
    return s;
}

/* ---- records ----------------------------------------------------------- */

prt_status prt__plugin_write_record(prt__plugin *pl, prt_writer *w, char *err, size_t cap)
{
    const prt_plugin_creator *c;

    if (!pl || !w) {
        snprintf(err, cap, "no plugin or writer given");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    c = pl->creator;
    prt_write_u8(w, (uint8_t)pl->style);
    prt_write_str(w, c->name);
    prt_write_str(w, c->version);
    prt_write_str(w, c->plugin_namespace ? c->plugin_namespace : "");
    prt_write_str(w, pl->owner);
    return prt__plugin_write_body(pl, w, err, cap);
}

prt_status prt__plugin_write_body(prt__plugin *pl, prt_writer *w, char *err, size_t cap)
{
    char pmsg[PRT_ERR_CAP], wb[256];
    prt_msg m = {pmsg, sizeof pmsg};
    prt_status s;

    if (!pl || !w) {
        snprintf(err, cap, "no plugin or writer given");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    pmsg[0] = 0;
    if (pl->style == PRT_STYLE_FIELD) {
        prt_fields fc = {NULL, 0, 0};
        if (!FRHAS(pl, get_fields_to_serialize)) return missing(pl, "get_fields_to_serialize", err, cap);
        prt__trace(pl, "get_fields_to_serialize");
        s = fruntime(pl)->get_fields_to_serialize(pl->field, &fc, &m);
        if (s != PRT_OK) return plugin_failed(pl, "get_fields_to_serialize", s, pmsg, err, cap);
        if (fc.nb < 0 || (fc.nb > 0 && !fc.fields)) {
            snprintf(err, cap, "%s: get_fields_to_serialize returned %d fields at %p",
                     who(pl, wb, sizeof wb), (int)fc.nb, (const void *)fc.fields);
            return PRT_STATUS_PLUGIN_ERROR;
        }
        s = prt__fields_write(w, &fc, pmsg, sizeof pmsg);
        if (s != PRT_OK) {
            snprintf(err, cap, "%s: cannot write its fields: %s", who(pl, wb, sizeof wb), pmsg);
            return s;
        }
    } else {
        size_t len;
        if (!BHAS(pl, get_serialization_size)) return missing(pl, "get_serialization_size", err, cap);
        if (!BHAS(pl, serialize)) return missing(pl, "serialize", err, cap);
        prt__trace(pl, "get_serialization_size");
        len = bops(pl)->get_serialization_size(pl->blob);
        prt_write_u64(w, (uint64_t)len);
        if (w->failed) goto overflow;
        if (w->buf) {
            if (len > w->cap - w->len) {
                w->failed = 1;
                goto overflow;
            }
            prt__trace(pl, "serialize");
            s = bops(pl)->serialize(pl->blob, w->buf + w->len, len);
            if (s != PRT_OK) return plugin_failed(pl, "serialize", s, "", err, cap);
            w->len += len;
        } else {
            if (len > SIZE_MAX - w->len) {
                w->failed = 1;
                goto overflow;
            }
            w->len += len;
        }
    }
    if (w->failed) goto overflow;
    return PRT_OK;

overflow:
    snprintf(err, cap, "%s: the plugin record does not fit in the %zu bytes given", who(pl, wb, sizeof wb),
             w->cap);
    return PRT_STATUS_INVALID_ARGUMENT;
}

/* A length-prefixed string as a new NUL-terminated copy. */
static prt_status read_name(prt_reader *rd, const char *what, char **out, char *err, size_t cap)
{
    uint32_t n = 0;
    size_t at = rd->pos;
    const char *p = prt_read_str(rd, &n);
    if (rd->failed) {
        snprintf(err, cap, "plugin record ends early: reading the %s at byte %zu of %zu", what, at,
                 rd->len);
        return PRT_STATUS_TRUNCATED;
    }
    if (n && memchr(p, 0, n)) {
        snprintf(err, cap, "plugin record is corrupt: the %s at byte %zu holds a NUL byte", what, at);
        return PRT_STATUS_BAD_FORMAT;
    }
    *out = prt__strndup(p, n);
    if (!*out) {
        snprintf(err, cap, "out of memory reading a plugin record");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    return PRT_OK;
}

prt_status prt__plugin_read_record(prt_registry *r, prt_reader *rd, const char *layer,
                                   prt__plugin **out, char *err, size_t cap)
{
    char *name = NULL, *version = NULL, *ns = NULL, *owner = NULL;
    const prt_plugin_creator *c = NULL;
    const char *reg_owner = NULL;
    prt_owned_fields *fields = NULL;
    prt__plugin *pl = NULL;
    prt_reader saved;
    prt_status s;
    uint8_t style;
    size_t at;

    if (!r || !rd || !out) {
        snprintf(err, cap, "no registry or reader given");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    saved = *rd;
    at = rd->pos;
    style = prt_read_u8(rd);
    if (rd->failed) {
        snprintf(err, cap, "plugin record ends early: no style byte at byte %zu of %zu", at, rd->len);
        s = PRT_STATUS_TRUNCATED;
        goto done;
    }
    if (style != PRT_STYLE_BLOB && style != PRT_STYLE_FIELD) {
        snprintf(err, cap, "plugin record is corrupt: style byte at byte %zu is %u; expected 1 (blob) or 2 (field)",
                 at, style);
        s = PRT_STATUS_BAD_FORMAT;
        goto done;
    }
    if ((s = read_name(rd, "plugin name", &name, err, cap)) != PRT_OK) goto done;
    if ((s = read_name(rd, "plugin version", &version, err, cap)) != PRT_OK) goto done;
    if ((s = read_name(rd, "plugin namespace", &ns, err, cap)) != PRT_OK) goto done;
    if ((s = read_name(rd, "plugin owner", &owner, err, cap)) != PRT_OK) goto done;

    s = prt_registry_find(r, name, version, ns, &c, &reg_owner);
    if (s != PRT_OK) {
        snprintf(err, cap, "%s: %s (the record was written with a plugin from \"%s\")",
                 layer && layer[0] ? layer : name, prt_registry_last_error(r), owner);
        goto done;
    }
    if (strcmp(owner, reg_owner) != 0 && prt_registry_owner_policy(r) != PRT_OWNER_ANY) {
        if (prt_registry_owner_policy(r) == PRT_OWNER_REFUSE) {
            snprintf(err, cap, "%s: the plan was built with %s v%s from \"%s\", but here \"%s\" provides it "
                     "(the owner policy refuses a different provider; load the library \"%s\" with --load, or "
                     "allow it)", layer && layer[0] ? layer : name, name, version, owner, reg_owner, owner);
            s = PRT_STATUS_VERSION_MISMATCH;
            goto done;
        }
        prt_log(PRT_SEVERITY_WARNING, "%s: the plan was built with %s v%s from \"%s\"; loading the one from \"%s\"",
                layer && layer[0] ? layer : name, name, version, owner, reg_owner);
    }
    if (c->style != (prt_plugin_style)style) {
        snprintf(err, cap, "%s: the record holds a %s-style %s v%s, but the registered creator is %s-style",
                 layer && layer[0] ? layer : name, style == PRT_STYLE_BLOB ? "blob" : "field", name,
                 version, c->style == PRT_STYLE_BLOB ? "blob" : "field");
        s = PRT_STATUS_VERSION_MISMATCH;
        goto done;
    }

    if (style == PRT_STYLE_FIELD) {
        char fmsg[PRT_ERR_CAP];
        s = prt__fields_read(rd, &fields, fmsg, sizeof fmsg);
        if (s != PRT_OK) {
            snprintf(err, cap, "%s (%s v%s): plugin record fields: %s", layer && layer[0] ? layer : name,
                     name, version, fmsg);
            goto done;
        }
        s = prt__plugin_create(c, reg_owner, layer, prt_owned_fields_get(fields), PRT_PHASE_RUNTIME, &pl,
                               err, cap);
        if (s != PRT_OK) goto done;
    } else {
        uint64_t len;
        const uint8_t *blob;
        prt_blob_plugin *b = NULL;
        char pmsg[PRT_ERR_CAP];
        prt_msg m = {pmsg, sizeof pmsg};
        size_t reported;
        at = rd->pos;
        len = prt_read_u64(rd);
        if (rd->failed) {
            snprintf(err, cap, "plugin record ends early: no blob length at byte %zu of %zu", at, rd->len);
            s = PRT_STATUS_TRUNCATED;
            goto done;
        }
        if (len > prt_reader_left(rd)) {
            snprintf(err, cap, "plugin record ends early: %s v%s blob of %" PRIu64 " bytes, %zu left",
                     name, version, len, prt_reader_left(rd));
            s = PRT_STATUS_TRUNCATED;
            goto done;
        }
        blob = prt_read_bytes(rd, (size_t)len);
        pl = wrapper_new(c, PRT_STYLE_BLOB, reg_owner, layer);
        if (!pl) {
            snprintf(err, cap, "out of memory reading a plugin record");
            s = PRT_STATUS_OUT_OF_MEMORY;
            goto done;
        }
        if (!PRT_HAS(c, prt_plugin_creator, deserialize_blob)) {
            s = missing(pl, "the creator's deserialize_blob", err, cap);
            goto done;
        }
        pmsg[0] = 0;
        prt__trace(pl, "deserialize_blob");
        s = c->deserialize_blob(c, blob, (size_t)len, &b, &m);
        if (s != PRT_OK) {
            s = plugin_failed(pl, "deserialize_blob", s, pmsg, err, cap);
            goto done;
        }
        s = check_object(pl, "deserialize_blob", b, NULL, err, cap);
        if (s != PRT_OK) goto done;
        pl->blob = b;
        if (!BHAS(pl, get_serialization_size)) {
            s = missing(pl, "get_serialization_size", err, cap);
            goto done;
        }
        prt__trace(pl, "get_serialization_size");
        reported = bops(pl)->get_serialization_size(b);
        if ((uint64_t)reported != len) {
            char wb[256];
            snprintf(err, cap, "%s: the record's blob is %" PRIu64 " bytes but the plugin reports %zu",
                     who(pl, wb, sizeof wb), len, reported);
            s = PRT_STATUS_BAD_FORMAT;
            goto done;
        }
    }
    *out = pl;
    pl = NULL;
    s = PRT_OK;

done:
    if (pl) prt__plugin_destroy(pl);
    prt_owned_fields_free(fields);
    prt__free(name);
    prt__free(version);
    prt__free(ns);
    prt__free(owner);
    if (s != PRT_OK) *rd = saved;
    return s;
}

/* ---- build-time queries ------------------------------------------------- */

int32_t prt__plugin_nb_outputs(const prt__plugin *pl)
{
    if (!pl) return -1;
    prt__trace(pl, "get_nb_outputs");
    if (pl->style == PRT_STYLE_BLOB)
        return BHAS(pl, get_nb_outputs) ? bops(pl)->get_nb_outputs(pl->blob) : -1;
    return FBHAS(pl, get_nb_outputs) ? fbuild(pl)->get_nb_outputs(pl->field) : -1;
}

prt_status prt__plugin_output_types(prt__plugin *pl, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                                    int32_t nb_out, char *err, size_t cap)
{
    char pmsg[PRT_ERR_CAP], wb[256];
    prt_msg m = {pmsg, sizeof pmsg};
    prt_dtype small[SMALL_IO], *tmp;
    prt_status s;
    int32_t i;

    if (!pl || nb_out < 0 || nb_in < 0 || (nb_out && !out)) {
        snprintf(err, cap, "invalid arguments for output types");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    if (pl->style == PRT_STYLE_BLOB ? !BHAS(pl, get_output_data_types)
                                    : !FBHAS(pl, get_output_data_types))
        return missing(pl, "get_output_data_types", err, cap);
    tmp = scratch(small, SMALL_IO, (size_t)nb_out, sizeof(*tmp));
    if (!tmp) {
        snprintf(err, cap, "out of memory");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    for (i = 0; i < nb_out; i++) tmp[i] = PRT_DTYPE_COUNT_; /* "not set" */
    pmsg[0] = 0;
    prt__trace(pl, "get_output_data_types");
    if (pl->style == PRT_STYLE_BLOB)
        s = bops(pl)->get_output_data_types(pl->blob, in, nb_in, tmp, nb_out, &m);
    else
        s = fbuild(pl)->get_output_data_types(pl->field, in, nb_in, tmp, nb_out, &m);
    if (s != PRT_OK) {
        s = plugin_failed(pl, "get_output_data_types", s, pmsg, err, cap);
        goto done;
    }
    for (i = 0; i < nb_out; i++) {
        if ((unsigned)tmp[i] >= (unsigned)PRT_DTYPE_COUNT_) {
            snprintf(err, cap, "%s: get_output_data_types gave output %d the type %d, which is %s",
                     who(pl, wb, sizeof wb), (int)i, (int)tmp[i],
                     tmp[i] == PRT_DTYPE_COUNT_ ? "not set" : "not a prt_dtype");
            s = PRT_STATUS_PLUGIN_ERROR;
            goto done;
        }
    }
    memcpy(out, tmp, (size_t)nb_out * sizeof(*tmp));
done:
    scratch_free(tmp, small);
    return s;
}

prt_status prt__plugin_output_shapes(prt__plugin *pl, const prt_dims_expr *in, int32_t nb_in,
                                     prt_dims_expr *out, int32_t nb_out, prt_expr_builder *eb,
                                     char *err, size_t cap)
{
    char pmsg[PRT_ERR_CAP], wb[256];
    prt_msg m = {pmsg, sizeof pmsg};
    prt_dims_expr small[4], *tmp;
    prt_status s = PRT_OK;
    int32_t i, j;

    if (!pl || !eb || nb_out < 0 || nb_in < 0 || (nb_out && !out)) {
        snprintf(err, cap, "invalid arguments for output shapes");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    if (pl->style == PRT_STYLE_BLOB ? !BHAS(pl, get_output_dims) : !FBHAS(pl, get_output_shapes))
        return missing(pl, pl->style == PRT_STYLE_BLOB ? "get_output_dims" : "get_output_shapes", err, cap);
    tmp = scratch(small, 4, (size_t)nb_out, sizeof(*tmp));
    if (!tmp) {
        snprintf(err, cap, "out of memory");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    for (i = 0; i < nb_out; i++) {
        memset(&tmp[i], 0, sizeof tmp[i]);
        tmp[i].nb = -1; /* "not set" */
    }
    pmsg[0] = 0;
    if (pl->style == PRT_STYLE_BLOB) {
        for (i = 0; i < nb_out && s == PRT_OK; i++) {
            prt__trace(pl, "get_output_dims");
            s = bops(pl)->get_output_dims(pl->blob, i, in, nb_in, eb, &tmp[i], &m);
        }
        if (s != PRT_OK) {
            s = plugin_failed(pl, "get_output_dims", s, pmsg, err, cap);
            goto done;
        }
    } else {
        prt__trace(pl, "get_output_shapes");
        s = fbuild(pl)->get_output_shapes(pl->field, in, nb_in, tmp, nb_out, eb, &m);
        if (s != PRT_OK) {
            s = plugin_failed(pl, "get_output_shapes", s, pmsg, err, cap);
            goto done;
        }
    }
    for (i = 0; i < nb_out; i++) {
        if (tmp[i].nb < 0 || tmp[i].nb > PRT_MAX_DIMS) {
            snprintf(err, cap, "%s: output %d has %d dims; expected 0..%d", who(pl, wb, sizeof wb), (int)i,
                     (int)tmp[i].nb, PRT_MAX_DIMS);
            s = PRT_STATUS_PLUGIN_ERROR;
            goto done;
        }
        for (j = 0; j < tmp[i].nb; j++) {
            if (!tmp[i].d[j]) {
                snprintf(err, cap, "%s: output %d dim %d is not set (NULL expression)",
                         who(pl, wb, sizeof wb), (int)i, (int)j);
                s = PRT_STATUS_PLUGIN_ERROR;
                goto done;
            }
        }
    }
    memcpy(out, tmp, (size_t)nb_out * sizeof(*tmp));
done:
    scratch_free(tmp, small);
    return s;
}

int prt__plugin_supports(prt__plugin *pl, int32_t pos, const prt_dyn_tensor_desc *io, int32_t nb_in,
                         int32_t nb_out)
{
    int32_t n = nb_in + nb_out, i;
    int r;
    if (!pl || !io || nb_in < 0 || nb_out < 0 || pos < 0 || pos >= n) return 0;
    prt__trace(pl, "supports_format_combination");
    if (pl->style == PRT_STYLE_FIELD) {
        if (!FBHAS(pl, supports_format_combination)) return io[pos].desc.format == PRT_FORMAT_LINEAR;
        return fbuild(pl)->supports_format_combination(pl->field, pos, io, nb_in, nb_out) != 0;
    }
    if (!BHAS(pl, supports_format_combination)) return io[pos].desc.format == PRT_FORMAT_LINEAR;
    {
        prt_tensor_desc small[SMALL_IO], *tmp = scratch(small, SMALL_IO, (size_t)n, sizeof(*tmp));
        if (!tmp) return 0;
        for (i = 0; i < n; i++) tmp[i] = io[i].desc;
        r = bops(pl)->supports_format_combination(pl->blob, pos, tmp, nb_in, nb_out) != 0;
        scratch_free(tmp, small);
    }
    return r;
}

prt_status prt__plugin_configure(prt__plugin *pl, const prt_dyn_tensor_desc *in, int32_t nb_in,
                                 const prt_dyn_tensor_desc *out, int32_t nb_out, char *err, size_t cap)
{
    char pmsg[PRT_ERR_CAP];
    prt_msg m = {pmsg, sizeof pmsg};
    prt_status s;
    if (!pl) {
        snprintf(err, cap, "no plugin given");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    pmsg[0] = 0;
    if (pl->style == PRT_STYLE_BLOB) {
        if (!BHAS(pl, configure_plugin)) return PRT_OK;
        prt__trace(pl, "configure_plugin");
        s = bops(pl)->configure_plugin(pl->blob, in, nb_in, out, nb_out, &m);
        return s == PRT_OK ? s : plugin_failed(pl, "configure_plugin", s, pmsg, err, cap);
    }
    if (!FBHAS(pl, configure)) return PRT_OK;
    prt__trace(pl, "configure");
    s = fbuild(pl)->configure(pl->field, in, nb_in, out, nb_out, &m);
    return s == PRT_OK ? s : plugin_failed(pl, "configure", s, pmsg, err, cap);
}

size_t prt__plugin_workspace(prt__plugin *pl, const prt_dyn_tensor_desc *in, int32_t nb_in,
                             const prt_dyn_tensor_desc *out, int32_t nb_out)
{
    size_t r;
    int32_t i;
    if (!pl || nb_in < 0 || nb_out < 0) return 0;
    if (pl->style == PRT_STYLE_FIELD) {
        if (!FBHAS(pl, get_workspace_size)) return 0;
        prt__trace(pl, "get_workspace_size");
        return fbuild(pl)->get_workspace_size(pl->field, in, nb_in, out, nb_out);
    }
    if (!BHAS(pl, get_workspace_size)) return 0;
    {
        /* The blob form takes plain descriptors: pass the max shapes. */
        prt_tensor_desc small[SMALL_IO];
        prt_tensor_desc *tmp = scratch(small, SMALL_IO, (size_t)(nb_in + nb_out), sizeof(*tmp));
        if (!tmp) return SIZE_MAX; /* the caller's allocation fails and says so */
        for (i = 0; i < nb_in; i++) {
            tmp[i] = in[i].desc;
            tmp[i].dims = in[i].max;
        }
        for (i = 0; i < nb_out; i++) {
            tmp[nb_in + i] = out[i].desc;
            tmp[nb_in + i].dims = out[i].max;
        }
        prt__trace(pl, "get_workspace_size");
        r = bops(pl)->get_workspace_size(pl->blob, tmp, nb_in, tmp + nb_in, nb_out);
        scratch_free(tmp, small);
    }
    return r;
}

/* ---- clone / attach ------------------------------------------------------ */

static prt_status clone_raw(const prt__plugin *pl, prt__plugin **out, char *err, size_t cap)
{
    char pmsg[PRT_ERR_CAP];
    prt_msg m = {pmsg, sizeof pmsg};
    prt_blob_plugin *b = NULL;
    prt_field_plugin *f = NULL;
    prt__plugin *cp;
    prt_status s;

    cp = wrapper_new(pl->creator, pl->style, pl->owner, pl->layer);
    if (!cp) {
        snprintf(err, cap, "out of memory cloning %s", layer_of(pl));
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    cp->tactic = pl->tactic;
    pmsg[0] = 0;
    if (pl->style == PRT_STYLE_BLOB) {
        if (!BHAS(pl, clone)) {
            s = missing(pl, "clone", err, cap);
            goto fail;
        }
        prt__trace(pl, "clone");
        s = bops(pl)->clone(pl->blob, &b, &m);
    } else {
        if (!FHAS(pl, clone)) {
            s = missing(pl, "clone", err, cap);
            goto fail;
        }
        prt__trace(pl, "clone");
        s = fops(pl)->clone(pl->field, &f, &m);
    }
    if (s != PRT_OK) {
        s = plugin_failed(pl, "clone", s, pmsg, err, cap);
        goto fail;
    }
    s = check_object(pl, "clone", b, f, err, cap);
    if (s != PRT_OK) goto fail;
    cp->blob = b;
    cp->field = f;
    *out = cp;
    return PRT_OK;
fail:
    wrapper_free(cp);
    return s;
}

prt_status prt__plugin_clone(const prt__plugin *pl, prt__plugin **out, char *err, size_t cap)
{
    if (!pl || !out) {
        snprintf(err, cap, "no plugin given");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    return clone_raw(pl, out, err, cap);
}

/* The plugin's set_tactic for a non-zero tactic (nothing for 0 or without
 * the member); the wrapper keeps the tactic either way. */
static prt_status call_set_tactic(prt__plugin *pl, int32_t tactic, char *err, size_t cap)
{
    char pmsg[PRT_ERR_CAP], call[48];
    prt_msg m = {pmsg, sizeof pmsg};
    prt_status s;
    int has = pl->style == PRT_STYLE_BLOB ? BHAS(pl, set_tactic) : FRHAS(pl, set_tactic);
    if (tactic == 0 || !has) return PRT_OK;
    snprintf(call, sizeof call, "set_tactic(%d)", (int)tactic);
    pmsg[0] = 0;
    prt__trace(pl, call);
    if (pl->style == PRT_STYLE_BLOB) s = bops(pl)->set_tactic(pl->blob, tactic, &m);
    else s = fruntime(pl)->set_tactic(pl->field, tactic, &m);
    return s == PRT_OK ? s : plugin_failed(pl, call, s, pmsg, err, cap);
}

prt_status prt__plugin_attach(prt__plugin *pl, prt_plugin_context *ctx, prt__plugin **out, char *err,
                              size_t cap)
{
    if (!pl) {
        snprintf(err, cap, "no plugin given");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    return prt__plugin_attach_tactic(pl, ctx, pl->tactic, out, err, cap);
}

prt_status prt__plugin_attach_tactic(prt__plugin *pl, prt_plugin_context *ctx, int32_t tactic, prt__plugin **out,
                                     char *err, size_t cap)
{
    char pmsg[PRT_ERR_CAP];
    prt_msg m = {pmsg, sizeof pmsg};
    prt__plugin *cp = NULL;
    prt_status s;

    if (!pl || !out) {
        snprintf(err, cap, "no plugin given");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    pmsg[0] = 0;
    if (pl->style == PRT_STYLE_BLOB) {
        s = clone_raw(pl, &cp, err, cap);
        if (s != PRT_OK) return s;
        cp->tactic = tactic;
        if ((s = call_set_tactic(cp, tactic, err, cap)) != PRT_OK) goto fail;
        if (ctx && BHAS(cp, attach_to_context)) {
            prt__trace(cp, "attach_to_context");
            s = bops(cp)->attach_to_context(cp->blob, ctx, &m);
            if (s != PRT_OK) {
                s = plugin_failed(cp, "attach_to_context", s, pmsg, err, cap);
                goto fail;
            }
            cp->attached = 1;
        }
        if (BHAS(cp, initialize)) {
            pmsg[0] = 0;
            prt__trace(cp, "initialize");
            s = bops(cp)->initialize(cp->blob, &m);
            if (s != PRT_OK) {
                s = plugin_failed(cp, "initialize", s, pmsg, err, cap);
                goto fail;
            }
        }
        cp->initialized = 1;
    } else {
        if (ctx && FRHAS(pl, attach_to_context)) {
            prt_field_plugin *f = NULL;
            cp = wrapper_new(pl->creator, pl->style, pl->owner, pl->layer);
            if (!cp) {
                snprintf(err, cap, "out of memory attaching %s", layer_of(pl));
                return PRT_STATUS_OUT_OF_MEMORY;
            }
            prt__trace(pl, "attach_to_context");
            s = fruntime(pl)->attach_to_context(pl->field, ctx, &f, &m);
            if (s != PRT_OK) {
                s = plugin_failed(pl, "attach_to_context", s, pmsg, err, cap);
                wrapper_free(cp);
                return s;
            }
            s = check_object(pl, "attach_to_context", NULL, f, err, cap);
            if (s != PRT_OK) {
                wrapper_free(cp);
                return s;
            }
            cp->field = f;
        } else {
            s = clone_raw(pl, &cp, err, cap);
            if (s != PRT_OK) return s;
        }
        cp->attached = ctx != NULL;
        cp->tactic = tactic;
        if ((s = call_set_tactic(cp, tactic, err, cap)) != PRT_OK) goto fail;
    }
    *out = cp;
    return PRT_OK;
fail:
    prt__plugin_destroy(cp);
    return s;
}

/* ---- tactics ------------------------------------------------------------ */

prt_status prt__plugin_tactics(prt__plugin *pl, const prt_dyn_tensor_desc *in, int32_t nb_in,
                               const prt_dyn_tensor_desc *out, int32_t nb_out, prt_device device, int32_t *ids,
                               int32_t *nb, char *err, size_t cap)
{
    int32_t got[PRT__MAX_TACTICS], n, i, j;
    char wb[256];
    if (!pl || !ids || !nb) {
        snprintf(err, cap, "invalid arguments for tactics");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    memset(got, 0, sizeof got);
    if (pl->style == PRT_STYLE_BLOB) {
        if (!BHAS(pl, get_valid_tactics)) {
            *nb = 0;
            return PRT_OK;
        }
        prt__trace(pl, "get_valid_tactics");
        n = bops(pl)->get_valid_tactics(pl->blob, in, nb_in, out, nb_out, device, got, PRT__MAX_TACTICS);
    } else if (FBHAS(pl, get_valid_tactics_v2)) {
        prt__trace(pl, "get_valid_tactics");
        n = fbuild(pl)->get_valid_tactics_v2(pl->field, in, nb_in, out, nb_out, device, got, PRT__MAX_TACTICS);
    } else if (FBHAS(pl, get_valid_tactics)) {
        prt__trace(pl, "get_valid_tactics");
        n = fbuild(pl)->get_valid_tactics(pl->field, got, PRT__MAX_TACTICS);
    } else {
        *nb = 0;
        return PRT_OK;
    }
    if (n < 0 || n > PRT__MAX_TACTICS) {
        snprintf(err, cap, "%s: get_valid_tactics says it has %d tactics; expected 0..%d", who(pl, wb, sizeof wb),
                 (int)n, PRT__MAX_TACTICS);
        return PRT_STATUS_PLUGIN_ERROR;
    }
    for (i = 0; i < n; i++) {
        if (got[i] <= 0) {
            snprintf(err, cap, "%s: get_valid_tactics gave tactic %d as %d; tactic ids are > 0 (0 is the plugin's "
                     "default)", who(pl, wb, sizeof wb), (int)i, (int)got[i]);
            return PRT_STATUS_PLUGIN_ERROR;
        }
        for (j = 0; j < i; j++)
            if (got[j] == got[i]) {
                snprintf(err, cap, "%s: get_valid_tactics lists tactic %d twice (positions %d and %d)",
                         who(pl, wb, sizeof wb), (int)got[i], (int)j, (int)i);
                return PRT_STATUS_PLUGIN_ERROR;
            }
    }
    memcpy(ids, got, (size_t)n * sizeof *ids);
    *nb = n;
    return PRT_OK;
}

const char *prt__plugin_tactic_name(prt__plugin *pl, int32_t tactic)
{
    if (!pl) return NULL;
    if (pl->style == PRT_STYLE_BLOB) {
        if (!BHAS(pl, get_tactic_name)) return NULL;
        prt__trace(pl, "get_tactic_name");
        return bops(pl)->get_tactic_name(pl->blob, tactic);
    }
    if (!FBHAS(pl, get_tactic_name)) return NULL;
    prt__trace(pl, "get_tactic_name");
    return fbuild(pl)->get_tactic_name(pl->field, tactic);
}

prt_status prt__plugin_set_tactic(prt__plugin *pl, int32_t tactic, char *err, size_t cap)
{
    prt_status s;
    if (!pl) {
        snprintf(err, cap, "no plugin given");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    if ((s = call_set_tactic(pl, tactic, err, cap)) != PRT_OK) return s;
    pl->tactic = tactic;
    return PRT_OK;
}

/* ---- run time ------------------------------------------------------------ */

prt_status prt__plugin_shapes(prt__plugin *pl, const prt_tensor_desc *in, int32_t nb_in,
                              const prt_tensor_desc *out, int32_t nb_out, char *err, size_t cap)
{
    char pmsg[PRT_ERR_CAP];
    prt_msg m = {pmsg, sizeof pmsg};
    prt_status s;
    int32_t i;

    if (!pl || nb_in < 0 || nb_out < 0) {
        snprintf(err, cap, "invalid arguments for shapes");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    pmsg[0] = 0;
    if (pl->style == PRT_STYLE_FIELD) {
        if (!FRHAS(pl, on_shape_change)) return PRT_OK;
        prt__trace(pl, "on_shape_change");
        s = fruntime(pl)->on_shape_change(pl->field, in, nb_in, out, nb_out, &m);
        return s == PRT_OK ? s : plugin_failed(pl, "on_shape_change", s, pmsg, err, cap);
    }
    if (!BHAS(pl, configure_plugin)) return PRT_OK;
    {
        int32_t n = nb_in + nb_out;
        prt_dyn_tensor_desc small[SMALL_IO], *tmp = scratch(small, SMALL_IO, (size_t)n, sizeof(*tmp));
        if (!tmp) {
            snprintf(err, cap, "out of memory");
            return PRT_STATUS_OUT_OF_MEMORY;
        }
        for (i = 0; i < n; i++) {
            const prt_tensor_desc *d = i < nb_in ? &in[i] : &out[i - nb_in];
            tmp[i].desc = *d;
            tmp[i].min = tmp[i].opt = tmp[i].max = d->dims;
        }
        prt__trace(pl, "configure_plugin");
        s = bops(pl)->configure_plugin(pl->blob, tmp, nb_in, tmp + nb_in, nb_out, &m);
        scratch_free(tmp, small);
    }
    return s == PRT_OK ? s : plugin_failed(pl, "configure_plugin", s, pmsg, err, cap);
}

prt_status prt__plugin_enqueue(prt__plugin *pl, const prt_tensor_desc *in, const prt_tensor_desc *out,
                               const void *const *inputs, void *const *outputs, void *workspace,
                               prt_exec *ex)
{
    if (!pl) return PRT_STATUS_INVALID_ARGUMENT;
    if (pl->style == PRT_STYLE_BLOB ? !BHAS(pl, enqueue) : !FRHAS(pl, enqueue)) {
        if (ex && ex->set_error) ex->set_error(ex, "the plugin does not implement enqueue, which is required");
        return PRT_STATUS_UNSUPPORTED;
    }
    prt__trace(pl, "enqueue");
    if (pl->style == PRT_STYLE_BLOB) return bops(pl)->enqueue(pl->blob, in, out, inputs, outputs, workspace, ex);
    return fruntime(pl)->enqueue(pl->field, in, out, inputs, outputs, workspace, ex);
}

void prt__plugin_destroy(prt__plugin *pl)
{
    if (!pl) return;
    if (pl->style == PRT_STYLE_BLOB && pl->blob) {
        if (pl->initialized && BHAS(pl, terminate)) {
            prt__trace(pl, "terminate");
            bops(pl)->terminate(pl->blob);
        }
        if (pl->attached && BHAS(pl, detach_from_context)) {
            prt__trace(pl, "detach_from_context");
            bops(pl)->detach_from_context(pl->blob);
        }
        raw_destroy(pl, pl->blob, NULL);
    } else if (pl->field) {
        raw_destroy(pl, NULL, pl->field);
    }
    wrapper_free(pl);
}
