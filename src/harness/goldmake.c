/*
 * harness/goldmake.c - write a golden-IO JSON from a PluginConfig YAML
 * (prt_harness_golden_make in plugrt/harness.h).
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "harness/plugrun.h"
#include "plugrt/harness.h"

static uint64_t gm_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    while (*s) h = (h ^ (uint8_t)*s++) * 1099511628211ull;
    return h;
}

/* kind 0: .npy, 1: values, 2: dims; a config-specific option wins. */
static const prt_harness_golden_input *gm_input(const prt_harness_golden_opts *o, const char *config, const char *input,
                                          int kind)
{
    const prt_harness_golden_input *any = NULL;
    int i;
    for (i = 0; i < o->nb_inputs; i++) {
        const prt_harness_golden_input *g = &o->inputs[i];
        int k = g->npy ? 0 : g->nb_values > 0 ? 1 : 2;
        if (k != kind || strcmp(g->input, input) != 0) continue;
        if (o->inputs[i].config && strcmp(o->inputs[i].config, config) == 0) return &o->inputs[i];
        if (!o->inputs[i].config && !any) any = &o->inputs[i];
    }
    return any;
}

/* {"array": base64, "polygraphy_class": "ndarray"} of `count` elements of
 * dtype t at data, with shape d. */
static cJSON *gm_array(const void *data, prt_npy_type nt, const prt_dims *d, prt__arena *ar)
{
    prt_npy_array a;
    cJSON *o;
    char *b64;
    memset(&a, 0, sizeof a);
    a.type = nt;
    a.shape = *d;
    a.count = prt_dims_volume(d);
    a.nbytes = (size_t)a.count * prt_npy_type_size(nt);
    a.data = (void *)data;
    b64 = prt__npy_base64(&a, ar);
    if (!b64) return NULL;
    o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON_AddStringToObject(o, "array", b64);
    cJSON_AddStringToObject(o, "polygraphy_class", "ndarray");
    return o;
}

static int gm_selected(const prt_harness_golden_opts *o, const char *name)
{
    int i;
    if (o->nb_configs == 0) return 1;
    for (i = 0; i < o->nb_configs; i++)
        if (strcmp(o->configs[i], name) == 0) return 1;
    return 0;
}

static prt_status gm_attrs_json(const prt_pcfg_version *v, const prt__attrset *as, cJSON *obj, prt__arena *ar,
                                char *err, size_t cap)
{
    int i;
    for (i = 0; i < as->nb; i++) {
        const prt__attrval *a = &as->a[i];
        const char *yt = prt__pcfg_pair_get(v->attribute_types, v->nb_attribute_types, a->name);
        prt_dtype dt = PRT_DTYPE_F32;
        prt_npy_type nt;
        prt_dims d;
        void *buf;
        int64_t j;
        cJSON *item;
        if (a->is_text) {
            cJSON_AddStringToObject(obj, a->name, a->text);
            continue;
        }
        if (!yt || prt__pcfg_dtype(yt, &dt) != PRT_OK) {
            /* no tensor type (int16, float64, ...): keep the values exactly */
            nt = PRT_NPY_F8;
        } else if (prt_npy_type_from_dtype(dt, &nt) != PRT_OK) {
            nt = PRT_NPY_F8;
        }
        memset(&d, 0, sizeof d);
        d.nb = 1;
        d.d[0] = a->count;
        buf = prt__arena_alloc(ar, prt_npy_type_size(nt) * (size_t)(a->count + 1));
        if (!buf) goto oom;
        for (j = 0; j < a->count; j++) {
            if (nt == PRT_NPY_F8) ((double *)buf)[j] = a->v[j];
            else prt__elem_set(buf, dt, j, a->v[j]);
        }
        item = gm_array(buf, nt, &d, ar);
        if (!item) goto oom;
        cJSON_AddItemToObject(obj, a->name, item);
    }
    return PRT_OK;
oom:
    snprintf(err, cap, "out of memory");
    return PRT_STATUS_OUT_OF_MEMORY;
}

/* One case of one config into `cases` (a JSON array). */
static prt_status gm_case(const prt_harness_golden_opts *o, const prt_pcfg *cfg, const prt_pcfg_version *v,
                          const prt_pcfg_config *c, int case_i, cJSON *cases, char *err, size_t cap)
{
    prt__arena ar = {0};
    prt__inputs in;
    prt__attrset as;
    prt_status s;
    cJSON *jcase = NULL, *ji, *ja, *jo;
    prt_registry *reg = o->registry ? o->registry : prt_registry_global();
    const prt_plugin_creator *cr = NULL;
    const char *ref = NULL;
    int i;
    uint64_t seed = o->seed ^ gm_hash(c->name) ^ (uint64_t)case_i * 0xd1b54a32d192ed03ull;

    in.nb = 0;
    in.names = prt__arena_alloc(&ar, sizeof(char *) * (size_t)(v->nb_inputs + 1));
    in.desc = prt__arena_alloc(&ar, sizeof(prt_tensor_desc) * (size_t)(v->nb_inputs + 1));
    in.data = prt__arena_alloc(&ar, sizeof(void *) * (size_t)(v->nb_inputs + 1));
    jcase = cJSON_CreateObject();
    if (!in.names || !in.desc || !in.data || !jcase) goto oom;
    ji = cJSON_AddObjectToObject(jcase, "inputs");
    ja = cJSON_AddObjectToObject(jcase, "attributes");
    jo = cJSON_AddObjectToObject(jcase, "outputs");
    if (!ji || !ja || !jo) goto oom;

    s = prt__attrset_from_config(c, seed, &ar, &as, err, cap);
    if (s != PRT_OK) goto fail;
    s = prt_registry_find(reg, cfg->name, v->version, cfg->plugin_namespace ? cfg->plugin_namespace : "", &cr, NULL);
    if (s != PRT_OK) {
        snprintf(err, cap, "%s", prt_registry_last_error(reg));
        goto fail;
    }
    ref = o->use_plugin ? NULL : prt__ref_doc(cr);

    for (i = 0; i < v->nb_inputs; i++) {
        const char *name = v->inputs[i];
        const prt_harness_golden_input *gnpy = gm_input(o, c->name, name, 0);
        const prt_harness_golden_input *gval = gm_input(o, c->name, name, 1);
        const prt_harness_golden_input *gdim = gm_input(o, c->name, name, 2);
        const char *tn = prt__pcfg_pair_get(c->input_types, c->nb_input_types, name);
        prt_dtype dt = PRT_DTYPE_F32;
        prt_npy_type nt;
        prt_tensor_desc *d = &in.desc[in.nb];
        int64_t n, j;
        cJSON *item;
        if (!gnpy && !gval && !gdim) continue; /* optional input left out */
        if (c->nb_input_types > 0 && !tn) continue; /* the config does not use it */
        if (tn && prt__pcfg_dtype(tn, &dt) != PRT_OK) {
            snprintf(err, cap, "config \"%s\": input \"%s\" type \"%s\" has no tensor type", c->name, name, tn);
            s = PRT_STATUS_UNSUPPORTED;
            goto fail;
        }
        memset(d, 0, sizeof *d);
        d->dtype = dt;
        d->format = PRT_FORMAT_LINEAR;
        if (!gnpy) {
            uint64_t st = seed ^ gm_hash(name);
            if (gdim) {
                d->dims = gdim->dims;
            } else {
                d->dims.nb = 1;
                d->dims.d[0] = gval->nb_values;
            }
            n = prt_dims_volume(&d->dims);
            if (n < 0 || n > (1 << 26) || (gval && gval->nb_values != n)) {
                char ds[128];
                snprintf(err, cap, "input \"%s\": shape %s%s", name, prt_dims_str(&d->dims, ds, sizeof ds),
                         gval && gval->nb_values != n ? " does not hold the number of values given" : " is too large");
                s = PRT_STATUS_INVALID_ARGUMENT;
                goto fail;
            }
            in.data[in.nb] = prt__arena_alloc(&ar, (size_t)(n + 1) * prt_dtype_size(dt));
            if (!in.data[in.nb]) goto oom;
            for (j = 0; j < n; j++) {
                double r = o->lo + (o->hi - o->lo) * prt__plugrun_uniform(&st);
                if (dt != PRT_DTYPE_F32 && dt != PRT_DTYPE_F16 && dt != PRT_DTYPE_BF16) r = floor(r);
                prt__elem_set(in.data[in.nb], dt, j, gval ? gval->values[j] : r);
            }
        } else {
            const prt_harness_golden_input *gi = gnpy;
            prt_npy_array a;
            size_t bytes;
            memset(&a, 0, sizeof a);
            s = prt_npy_read_file(gi->npy, &a);
            if (s != PRT_OK) {
                snprintf(err, cap, "input \"%s\": %s", name, prt_last_error(&a));
                goto fail;
            }
            d->dims = a.shape;
            bytes = (size_t)a.count * prt_dtype_size(dt);
            in.data[in.nb] = prt__arena_alloc(&ar, bytes + 1);
            if (!in.data[in.nb]) {
                prt_npy_array_clear(&a);
                goto oom;
            }
            s = prt_npy_convert(&a, dt, in.data[in.nb], bytes);
            if (s != PRT_OK) snprintf(err, cap, "input \"%s\" (%s): %s", name, gi->npy, prt_last_error(&a));
            prt_npy_array_clear(&a);
            if (s != PRT_OK) goto fail;
        }
        in.names[in.nb] = name;
        if (prt_npy_type_from_dtype(dt, &nt) != PRT_OK) {
            snprintf(err, cap, "input \"%s\": type %s cannot be written to .npy", name, prt_dtype_name(dt));
            s = PRT_STATUS_UNSUPPORTED;
            goto fail;
        }
        item = gm_array(in.data[in.nb], nt, &d->dims, &ar);
        if (!item) goto oom;
        cJSON_AddItemToObject(ji, name, item);
        in.nb++;
    }
    s = gm_attrs_json(v, &as, ja, &ar, err, cap);
    if (s != PRT_OK) goto fail;

    if (ref) {
        double **in64 = prt__arena_alloc(&ar, sizeof(double *) * (size_t)(in.nb + 1));
        double **out64 = prt__arena_alloc(&ar, sizeof(double *) * (size_t)(v->nb_outputs + 1));
        prt_dims *od = prt__arena_alloc(&ar, sizeof(prt_dims) * (size_t)(v->nb_outputs + 1));
        if (!in64 || !out64 || !od) goto oom;
        for (i = 0; i < in.nb; i++) {
            int64_t n = prt_dims_volume(&in.desc[i].dims), j;
            in64[i] = prt__arena_alloc(&ar, sizeof(double) * (size_t)(n + 1));
            if (!in64[i]) goto oom;
            for (j = 0; j < n; j++) in64[i][j] = prt__elem_get(in.data[i], in.desc[i].dtype, j);
        }
        s = prt__ref_run(cr, &in, in64, &as, &ar, v->nb_outputs, out64, od, err, cap);
        if (s != PRT_OK) goto fail;
        for (i = 0; i < v->nb_outputs; i++) {
            const char *tn = prt__pcfg_pair_get(c->output_types, c->nb_output_types, v->outputs[i]);
            prt_dtype dt = in.nb ? in.desc[0].dtype : PRT_DTYPE_F32;
            prt_npy_type nt;
            int64_t n = prt_dims_volume(&od[i]), j;
            void *buf;
            cJSON *item;
            if (tn && prt__pcfg_dtype(tn, &dt) != PRT_OK) dt = PRT_DTYPE_F32;
            if (prt_npy_type_from_dtype(dt, &nt) != PRT_OK) {
                dt = PRT_DTYPE_F32;
                nt = PRT_NPY_F4;
            }
            buf = prt__arena_alloc(&ar, (size_t)(n + 1) * prt_dtype_size(dt));
            if (!buf) goto oom;
            for (j = 0; j < n; j++) prt__elem_set(buf, dt, j, out64[i][j]);
            item = gm_array(buf, nt, &od[i], &ar);
            if (!item) goto oom;
            cJSON_AddItemToObject(jo, v->outputs[i], item);
        }
    } else {
        prt_fields fc;
        prt_op *op = NULL;
        prt__run_out ro;
        s = prt__attrset_to_fields(cr, &as, &ar, &fc, NULL, 0, err, cap);
        if (s != PRT_OK) goto fail;
        s = prt_op_create(reg, cr->name, cr->version, cr->plugin_namespace, &fc, &op);
        if (s != PRT_OK) {
            snprintf(err, cap, "%s", prt_registry_last_error(reg));
            goto fail;
        }
        s = prt__plugrun_run(op, PRT_DEVICE_CPU, 0, &in, &ar, &ro, NULL, err, cap);
        prt_op_destroy(op);
        if (s != PRT_OK) goto fail;
        for (i = 0; i < ro.nb && i < v->nb_outputs; i++) {
            prt_npy_type nt;
            cJSON *item;
            if (prt_npy_type_from_dtype(ro.desc[i].dtype, &nt) != PRT_OK) {
                snprintf(err, cap, "output \"%s\": type %s cannot be written to .npy", v->outputs[i],
                         prt_dtype_name(ro.desc[i].dtype));
                s = PRT_STATUS_UNSUPPORTED;
                goto fail;
            }
            item = gm_array(ro.data[i], nt, &ro.desc[i].dims, &ar);
            if (!item) goto oom;
            cJSON_AddItemToObject(jo, v->outputs[i], item);
        }
    }
    if (o->log) {
        char at[512], ds[128];
        prt__attrset_str(&as, at, sizeof at);
        fprintf(o->log, "  %s case %d:", c->name, case_i);
        for (i = 0; i < in.nb; i++)
            fprintf(o->log, " %s %s %s", in.names[i], prt__dtype_yaml_name(in.desc[i].dtype),
                    prt_dims_str(&in.desc[i].dims, ds, sizeof ds));
        fprintf(o->log, "; attributes %s; outputs from %s\n", at,
                ref ? ref : "the plugin's CPU path");
    }
    cJSON_AddItemToArray(cases, jcase);
    prt__arena_free(&ar);
    return PRT_OK;
oom:
    snprintf(err, cap, "out of memory");
    s = PRT_STATUS_OUT_OF_MEMORY;
fail:
    cJSON_Delete(jcase);
    prt__arena_free(&ar);
    return s;
}

/* Did an earlier version declare this config name? */
static int seen_name(const prt_pcfg *cfg, int vi, const char *name)
{
    int i, k;
    for (i = 0; i < vi; i++)
        for (k = 0; k < cfg->versions[i].nb_configs; k++)
            if (strcmp(cfg->versions[i].configs[k].name, name) == 0) return 1;
    return 0;
}

static prt_status goldmake(const prt_harness_golden_opts *o, char *err, size_t cap)
{
    prt_pcfg *cfg = NULL;
    cJSON *root;
    prt_status s;
    char e[1024], *text;
    int vi, ci, k, made = 0;
    FILE *f;

    s = prt__pcfg_load_file(o->yaml_path, &cfg);
    if (s != PRT_OK) {
        snprintf(err, cap, "%s", prt_last_error(&cfg));
        return s;
    }
    if (o->merge_path) {
        void *data = NULL;
        size_t len = 0;
        char e2[512];
        s = prt__read_file(o->merge_path, &data, &len, e2, sizeof e2);
        if (s != PRT_OK) {
            snprintf(err, cap, "--merge %s: %s", o->merge_path, e2);
            prt__pcfg_destroy(cfg);
            return s;
        }
        root = cJSON_ParseWithLength(data, len);
        prt__free(data);
        if (!root || !cJSON_IsObject(root)) {
            snprintf(err, cap, "--merge %s: not a JSON object", o->merge_path);
            cJSON_Delete(root);
            prt__pcfg_destroy(cfg);
            return PRT_STATUS_BAD_FORMAT;
        }
    } else {
        root = cJSON_CreateObject();
    }
    if (!root) {
        prt__pcfg_destroy(cfg);
        snprintf(err, cap, "out of memory");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    for (vi = 0; vi < cfg->nb_versions; vi++) {
        const prt_pcfg_version *v = &cfg->versions[vi];
        if (o->version && strcmp(o->version, v->version) != 0) continue;
        if (o->log) fprintf(o->log, "%s version %s:\n", cfg->name, v->version);
        for (ci = 0; ci < v->nb_configs; ci++) {
            const prt_pcfg_config *c = &v->configs[ci];
            cJSON *cases;
            if (!gm_selected(o, c->name)) continue;
            if (cJSON_GetObjectItemCaseSensitive(root, c->name)) {
                if (o->log && o->merge_path && !seen_name(cfg, vi, c->name))
                    fprintf(o->log, "  %s: kept from %s\n", c->name, o->merge_path);
                made++;
                continue;
            }
            cases = cJSON_AddArrayToObject(root, c->name);
            if (!cases) {
                s = PRT_STATUS_OUT_OF_MEMORY;
                snprintf(e, sizeof e, "out of memory");
                goto fail_cfg;
            }
            for (k = 0; k < (o->cases > 0 ? o->cases : 1); k++) {
                s = gm_case(o, cfg, v, c, k, cases, e, sizeof e);
                if (s != PRT_OK) goto fail_cfg;
            }
            made++;
            continue;
        fail_cfg:
            snprintf(err, cap, "%s version %s config \"%s\": %s", cfg->name, v->version, c->name, e);
            cJSON_Delete(root);
            prt__pcfg_destroy(cfg);
            return s;
        }
    }
    if (made == 0) {
        snprintf(err, cap, "%s: no config selected%s%s", o->yaml_path, o->version ? " in version " : "",
                 o->version ? o->version : "");
        cJSON_Delete(root);
        prt__pcfg_destroy(cfg);
        return PRT_STATUS_NOT_FOUND;
    }
    text = cJSON_Print(root);
    cJSON_Delete(root);
    prt__pcfg_destroy(cfg);
    if (!text) {
        snprintf(err, cap, "out of memory writing JSON");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    f = fopen(o->out_path, "wb");
    if (!f) {
        snprintf(err, cap, "cannot open \"%s\" for writing", o->out_path);
        cJSON_free(text);
        return PRT_STATUS_IO_ERROR;
    }
    s = (fputs(text, f) < 0 || fputc('\n', f) == EOF) ? PRT_STATUS_IO_ERROR : PRT_OK;
    if (fclose(f) != 0) s = PRT_STATUS_IO_ERROR;
    cJSON_free(text);
    if (s != PRT_OK) snprintf(err, cap, "writing \"%s\" failed", o->out_path);
    else if (o->log) fprintf(o->log, "wrote %s (%d config%s)\n", o->out_path, made, made == 1 ? "" : "s");
    return s;
}

void prt_harness_golden_opts_init(prt_harness_golden_opts *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->abi_version = PRT_ABI_VERSION;
    o->seed = 1;
    o->lo = -1;
    o->hi = 1;
    o->cases = 1;
}

prt_status prt_harness_golden_make(const prt_harness_golden_opts *o, char *err, size_t cap)
{
    prt_harness_golden_opts r;
    char none[1];
    const size_t min = offsetof(prt_harness_golden_opts, out_path) + sizeof r.out_path;
    if (!err) {
        err = none;
        cap = sizeof none;
    }
    if (!o) {
        snprintf(err, cap, "prt_harness_golden_make needs options");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    prt_harness_golden_opts_init(&r);
    if (prt__config_read(&r, sizeof r, o, min) != 0) {
        snprintf(err, cap, "prt_harness_golden_opts.struct_size is %u; at least %zu expected (fill it with "
                 "prt_harness_golden_opts_init)", (unsigned)o->struct_size, min);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    return goldmake(&r, err, cap);
}
