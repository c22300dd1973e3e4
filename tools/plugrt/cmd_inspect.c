/* tools/plugrt/cmd_inspect.c - `plugrt inspect model.plan [--json]`.
 *
 * Reads the plan without re-creating its plugins, so a plan can be described
 * on a machine that lacks them. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "core/core.h"
#include "engine/plan.h"

typedef struct rec_info {
    int style;
    char name[128], version[64], ns[128], owner[128];
    size_t payload;
} rec_info;

static void take_str(prt_reader *r, char *out, size_t cap)
{
    uint32_t n = 0;
    const char *s = prt_read_str(r, &n);
    size_t k = n < cap - 1 ? n : cap - 1;
    if (s && k) memcpy(out, s, k);
    out[s ? k : 0] = 0;
}

static void record_info(const prt__precord *rc, rec_info *ri)
{
    prt_reader r = prt_reader_init(rc->data, rc->len);
    memset(ri, 0, sizeof *ri);
    ri->style = prt_read_u8(&r);
    take_str(&r, ri->name, sizeof ri->name);
    take_str(&r, ri->version, sizeof ri->version);
    take_str(&r, ri->ns, sizeof ri->ns);
    take_str(&r, ri->owner, sizeof ri->owner);
    ri->payload = prt_reader_left(&r);
    if (r.failed) snprintf(ri->name, sizeof ri->name, "(unreadable record)");
}

static const char *role_name(uint32_t r)
{
    static const char *const n[] = {"input", "output", "activation", "constant"};
    return r < 4 ? n[r] : "?";
}

static cJSON *dims_json(const prt_dims *d)
{
    cJSON *a = cJSON_CreateArray();
    int32_t i;
    for (i = 0; a && i < d->nb; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber((double)d->d[i]));
    return a;
}

static int print_json(const prt__plan *p, const uint8_t *b)
{
    cJSON *root = cJSON_CreateObject(), *arr, *o;
    int32_t i, j;
    char *txt;
    cJSON_AddNumberToObject(root, "read_version", (double)(b[8] | b[9] << 8 | b[10] << 16 | (uint32_t)b[11] << 24));
    cJSON_AddNumberToObject(root, "write_version", (double)(b[12] | b[13] << 8 | b[14] << 16 | (uint32_t)b[15] << 24));
    cJSON_AddStringToObject(root, "library_version", p->lib_version);
    cJSON_AddStringToObject(root, "precision", p->precision ? "fp16" : "fp32");
    cJSON_AddStringToObject(root, "device", p->device ? "cuda" : "cpu");
    cJSON_AddNumberToObject(root, "workspace_limit", (double)p->workspace_limit);
    arr = cJSON_AddArrayToObject(root, "tensors");
    for (i = 0; i < p->nb_tensors; i++) {
        const prt__ptensor *t = &p->tensors[i];
        o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", t->name);
        cJSON_AddStringToObject(o, "role", role_name(t->role));
        cJSON_AddStringToObject(o, "dtype", prt_dtype_name(t->dtype));
        cJSON_AddStringToObject(o, "format", prt_format_name(t->format));
        cJSON_AddItemToObject(o, "dims", dims_json(&t->dims));
        cJSON_AddItemToObject(o, "min", dims_json(&t->min));
        cJSON_AddItemToObject(o, "opt", dims_json(&t->opt));
        cJSON_AddItemToObject(o, "max", dims_json(&t->max));
        cJSON_AddNumberToObject(o, "offset", (double)t->offset);
        cJSON_AddNumberToObject(o, "bytes", (double)t->bytes);
        if (t->nb_vals >= 0) cJSON_AddNumberToObject(o, "shape_values", (double)t->nb_vals);
        if (t->nb_vals >= 0 && t->role == PRT__ROLE_INPUT) {
            cJSON_AddItemToObject(o, "values_min", dims_json(&t->vmin));
            cJSON_AddItemToObject(o, "values_opt", dims_json(&t->vopt));
            cJSON_AddItemToObject(o, "values_max", dims_json(&t->vmax));
        }
        cJSON_AddItemToArray(arr, o);
    }
    arr = cJSON_AddArrayToObject(root, "layers");
    for (i = 0; i < p->nb_layers; i++) {
        const prt__player *l = &p->layers[i];
        cJSON *ins, *outs;
        o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", l->name);
        if (l->kind == PRT__LAYER_PLUGIN) {
            rec_info ri;
            record_info(&p->records[l->plugin], &ri);
            cJSON_AddStringToObject(o, "kind", "plugin");
            cJSON_AddStringToObject(o, "plugin", ri.name);
            cJSON_AddStringToObject(o, "version", ri.version);
            cJSON_AddStringToObject(o, "namespace", ri.ns);
            cJSON_AddStringToObject(o, "style", ri.style == PRT_STYLE_BLOB ? "blob" : "field");
            cJSON_AddStringToObject(o, "library", ri.owner);
            cJSON_AddNumberToObject(o, "record_bytes", (double)p->records[l->plugin].len);
        } else {
            cJSON_AddStringToObject(o, "kind", "cast");
            cJSON_AddStringToObject(o, "from", prt_dtype_name(l->cast_from));
            cJSON_AddStringToObject(o, "to", prt_dtype_name(l->cast_to));
        }
        ins = cJSON_AddArrayToObject(o, "inputs");
        for (j = 0; j < l->nb_in; j++) /* "" for an absent optional input */
            cJSON_AddItemToArray(ins, cJSON_CreateString(l->in[j] < 0 ? "" : p->tensors[l->in[j]].name));
        outs = cJSON_AddArrayToObject(o, "outputs");
        for (j = 0; j < l->nb_out; j++) cJSON_AddItemToArray(outs, cJSON_CreateString(p->tensors[l->out[j]].name));
        cJSON_AddNumberToObject(o, "workspace", (double)l->workspace);
        cJSON_AddItemToArray(arr, o);
    }
    arr = cJSON_AddArrayToObject(root, "folded");
    for (i = 0; i < p->nb_folds; i++) {
        const prt__pfold *f = &p->folds[i];
        cJSON *outs;
        int32_t j;
        o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "layer", f->layer);
        cJSON_AddStringToObject(o, "plugin", f->plugin);
        cJSON_AddStringToObject(o, "version", f->version);
        outs = cJSON_AddArrayToObject(o, "outputs");
        for (j = 0; j < f->nb_out; j++) cJSON_AddItemToArray(outs, cJSON_CreateString(f->outputs[j]));
        cJSON_AddItemToArray(arr, o);
    }
    o = cJSON_AddObjectToObject(root, "memory");
    cJSON_AddNumberToObject(o, "arena_bytes", (double)p->arena_size);
    cJSON_AddNumberToObject(o, "workspace_bytes", (double)p->workspace_size);
    cJSON_AddNumberToObject(o, "weight_bytes", (double)p->weights_len);
    txt = cJSON_Print(root);
    if (!txt) {
        cJSON_Delete(root);
        fprintf(stderr, "plugrt inspect: out of memory\n");
        return 1;
    }
    printf("%s\n", txt);
    free(txt);
    cJSON_Delete(root);
    return 0;
}

static void print_text(const prt__plan *p, const uint8_t *b, const char *path, size_t len)
{
    int32_t i, j;
    char d0[160], d1[160], d2[160], d3[160];
    printf("plan %s: %zu bytes, format read version %u, write version %u, written by plugrt %s\n", path, len,
           (unsigned)(b[8] | b[9] << 8), (unsigned)(b[12] | b[13] << 8), p->lib_version);
    printf("builder: precision %s, device %s, workspace limit ", p->precision ? "fp16" : "fp32",
           p->device ? "cuda" : "cpu");
    if (p->workspace_limit) printf("%" PRIu64 " bytes\n", p->workspace_limit);
    else printf("none\n");
    printf("\ninputs and outputs (dims; profile min / opt / max):\n");
    for (i = 0; i < p->nb_tensors; i++) {
        const prt__ptensor *t = &p->tensors[i];
        if (t->role != PRT__ROLE_INPUT && t->role != PRT__ROLE_OUTPUT) continue;
        printf("  %-6s %-20s %-4s %s  %s / %s / %s\n", role_name(t->role), t->name, prt_dtype_name(t->dtype),
               prt_dims_str(&t->dims, d0, sizeof d0), prt_dims_str(&t->min, d1, sizeof d1),
               prt_dims_str(&t->opt, d2, sizeof d2), prt_dims_str(&t->max, d3, sizeof d3));
        if (t->nb_vals >= 0 && t->role == PRT__ROLE_INPUT)
            printf("         shape values %s / %s / %s\n", prt_dims_str(&t->vmin, d1, sizeof d1),
                   prt_dims_str(&t->vopt, d2, sizeof d2), prt_dims_str(&t->vmax, d3, sizeof d3));
    }
    printf("\nlayers (execution order):\n");
    for (i = 0; i < p->nb_layers; i++) {
        const prt__player *l = &p->layers[i];
        if (l->kind == PRT__LAYER_PLUGIN) {
            rec_info ri;
            record_info(&p->records[l->plugin], &ri);
            printf("  %2d %-20s %s%s%s v%s (%s style, from \"%s\", record %zu bytes)", (int)i, l->name, ri.ns,
                   ri.ns[0] ? "::" : "", ri.name, ri.version, ri.style == PRT_STYLE_BLOB ? "blob" : "field", ri.owner,
                   p->records[l->plugin].len);
        } else {
            printf("  %2d %-20s cast %s -> %s", (int)i, l->name, prt_dtype_name(l->cast_from), prt_dtype_name(l->cast_to));
        }
        printf("\n       in:");
        for (j = 0; j < l->nb_in; j++) printf(" %s", l->in[j] < 0 ? "(absent)" : p->tensors[l->in[j]].name);
        printf("  out:");
        for (j = 0; j < l->nb_out; j++) printf(" %s", p->tensors[l->out[j]].name);
        if (l->workspace) printf("  workspace %" PRIu64 " bytes", l->workspace);
        printf("\n");
    }
    printf("\nmemory plan: arena %" PRIu64 " bytes, workspace %" PRIu64 " bytes, weights %" PRIu64 " bytes\n",
           p->arena_size, p->workspace_size, p->weights_len);
    for (i = 0; i < p->nb_tensors; i++) {
        const prt__ptensor *t = &p->tensors[i];
        if (t->role != PRT__ROLE_ACTIVATION && t->role != PRT__ROLE_CONSTANT) continue;
        printf("  %-10s %-20s %-4s max %-16s %s offset %8" PRIu64 ", %8" PRIu64 " bytes\n", role_name(t->role), t->name,
               prt_dtype_name(t->dtype), prt_dims_str(&t->max, d0, sizeof d0),
               t->role == PRT__ROLE_CONSTANT ? "weights" : "arena  ", t->offset, t->bytes);
    }
    if (p->nb_folds) printf("\nfolded at build time (layers that read only constants, now weights):\n");
    for (i = 0; i < p->nb_folds; i++) {
        const prt__pfold *f = &p->folds[i];
        int32_t j;
        printf("  %-20s %s v%s ->", f->layer, f->plugin, f->version);
        for (j = 0; j < f->nb_out; j++) printf(" %s", f->outputs[j]);
        printf("\n");
    }
}

int prt_cli_inspect(int argc, char **argv)
{
    const char *path = NULL;
    int json = 0, i, rc = 1;
    void *data = NULL;
    size_t len = 0;
    prt__plan *p = NULL;
    char err[2048];
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            printf("usage: plugrt inspect model.plan [--json]\n");
            return 0;
        } else if (argv[i][0] == '-' || path) {
            fprintf(stderr, "plugrt inspect: unexpected argument \"%s\"\nusage: plugrt inspect model.plan [--json]\n",
                    argv[i]);
            return 2;
        } else {
            path = argv[i];
        }
    }
    if (!path) {
        fprintf(stderr, "usage: plugrt inspect model.plan [--json]\n");
        return 2;
    }
    err[0] = 0;
    if (prt__read_file(path, &data, &len, err, sizeof err) != PRT_OK) {
        fprintf(stderr, "plugrt inspect: %s\n", err);
        return 1;
    }
    if (prt__plan_read(data, len, &p, err, sizeof err) != PRT_OK) {
        fprintf(stderr, "plugrt inspect: %s: %s\n", path, err);
        goto done;
    }
    if (json) {
        rc = print_json(p, data);
    } else {
        print_text(p, data, path, len);
        rc = 0;
    }
done:
    prt__plan_free(p);
    prt__free(data);
    return rc;
}
