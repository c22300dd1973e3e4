/*
 * tools/plugrt/cmd_plugins.c - `plugrt plugins [--load LIB.so ...] [--json]`
 *
 * Lists every creator of the global registry, plus those of the plugin
 * libraries named with --load (loaded into a child registry, so they show
 * first and may shadow a built-in one): name, version, namespace, style,
 * owner, and each field of the schema (type, count range, required or
 * default, bounds, doc).
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "cliutil.h"
#include "plugrt/plugrt.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: plugrt plugins [--load LIB.so ...] [--json]\n"
            "  --load LIB.so  load a plugin library first (repeatable)\n"
            "  --json         print JSON instead of text\n");
}

static const char *style_name(prt_plugin_style s)
{
    return s == PRT_STYLE_BLOB ? "blob" : s == PRT_STYLE_FIELD ? "field" : "?";
}

static int has_min(const prt_field_schema *s)
{
    return (s->bounds & (PRT_BOUND_MIN | PRT_BOUND_MIN_EXCL)) != 0;
}

static int has_max(const prt_field_schema *s)
{
    return (s->bounds & (PRT_BOUND_MAX | PRT_BOUND_MAX_EXCL)) != 0;
}

/* The schema entry's default as a field. */
static prt_field default_field(const prt_field_schema *s)
{
    prt_field f;
    memset(&f, 0, sizeof f);
    f.name = s->name;
    f.type = s->type;
    f.data = s->default_data;
    f.count = s->default_count;
    return f;
}

/* Element i of a numeric or bool default as double. */
static double elem_f64(const prt_field_schema *s, int64_t i)
{
    prt_field f = default_field(s);
    double v = 0;
    (void)prt_field_get_f64(&f, i, &v);
    return v;
}

static int64_t elem_i64(const prt_field_schema *s, int64_t i)
{
    prt_field f = default_field(s);
    int64_t v = 0;
    (void)prt_field_get_i64(&f, i, &v);
    return v;
}

static int is_float_type(prt_field_type t)
{
    return t == PRT_FIELD_FLOAT16 || t == PRT_FIELD_FLOAT32 || t == PRT_FIELD_FLOAT64;
}

/* ---- text -------------------------------------------------------------------- */

typedef struct sbuf {
    char b[512];
    size_t n;
} sbuf;

static void sb_add(sbuf *sb, const char *fmt, ...) PRT_PRINTF(2, 3);
static void sb_add(sbuf *sb, const char *fmt, ...)
{
    va_list ap;
    int k;
    if (sb->n + 1 >= sizeof sb->b) return;
    va_start(ap, fmt);
    k = vsnprintf(sb->b + sb->n, sizeof sb->b - sb->n, fmt, ap);
    va_end(ap);
    if (k > 0) sb->n = (size_t)k >= sizeof sb->b - sb->n ? sizeof sb->b - 1 : sb->n + (size_t)k;
}

static void sb_num(sbuf *sb, double v)
{
    if (v == floor(v) && fabs(v) < 1e18)
        sb_add(sb, "%.0f", v);
    else
        sb_add(sb, "%.9g", v);
}

static void sb_count(sbuf *sb, const prt_field_schema *s)
{
    if (s->max_count == s->min_count)
        sb_add(sb, "%" PRId64, s->min_count);
    else if (s->max_count == PRT_COUNT_UNBOUNDED)
        sb_add(sb, "%" PRId64 "..*", s->min_count);
    else
        sb_add(sb, "%" PRId64 "..%" PRId64, s->min_count, s->max_count);
}

static void sb_default(sbuf *sb, const prt_field_schema *s)
{
    int64_t i, n = s->default_count;
    if (s->type == PRT_FIELD_CHAR) {
        sb_add(sb, "\"%.*s\"", (int)(n > 64 ? 64 : n), (const char *)s->default_data);
        return;
    }
    if (s->type == PRT_FIELD_BYTES) {
        sb_add(sb, "0x");
        for (i = 0; i < n && i < 32; i++) sb_add(sb, "%02x", ((const uint8_t *)s->default_data)[i]);
        if (n > 32) sb_add(sb, "...");
        return;
    }
    if (n != 1) sb_add(sb, "[");
    for (i = 0; i < n && i < 16; i++) {
        if (i) sb_add(sb, ", ");
        if (s->type == PRT_FIELD_DIMS) {
            char b[256];
            prt_dims d;
            memcpy(&d, (const char *)s->default_data + (size_t)i * sizeof d, sizeof d);
            sb_add(sb, "%s", prt_dims_str(&d, b, sizeof b));
        } else if (s->type == PRT_FIELD_BOOL) {
            sb_add(sb, "%s", elem_i64(s, i) ? "true" : "false");
        } else if (s->type == PRT_FIELD_STRINGS) {
            sb_add(sb, "\"%.32s\"", ((const char *const *)s->default_data)[i]);
        } else if (s->type == PRT_FIELD_TENSOR) {
            const prt_field_tensor *x = &((const prt_field_tensor *)s->default_data)[i];
            char b[256];
            sb_add(sb, "%s%s", prt_dtype_name(x->dtype), prt_dims_str(&x->dims, b, sizeof b));
        } else if (s->type == PRT_FIELD_GRAPH) {
            sb_add(sb, "graph \"%.32s\"", ((const prt_field_graph *)s->default_data)[i].name);
        } else if (is_float_type(s->type)) {
            sb_num(sb, elem_f64(s, i));
        } else {
            sb_add(sb, "%" PRId64, elem_i64(s, i));
        }
    }
    if (n > 16) sb_add(sb, ", ...");
    if (n != 1) sb_add(sb, "]");
}

static void sb_bounds(sbuf *sb, const prt_field_schema *s)
{
    if (has_min(s) && has_max(s)) {
        sb_add(sb, "in %s", (s->bounds & PRT_BOUND_MIN_EXCL) ? "(" : "[");
        sb_num(sb, s->min);
        sb_add(sb, ", ");
        sb_num(sb, s->max);
        sb_add(sb, "%s", (s->bounds & PRT_BOUND_MAX_EXCL) ? ")" : "]");
    } else if (has_min(s)) {
        sb_add(sb, "%s ", (s->bounds & PRT_BOUND_MIN_EXCL) ? ">" : ">=");
        sb_num(sb, s->min);
    } else if (has_max(s)) {
        sb_add(sb, "%s ", (s->bounds & PRT_BOUND_MAX_EXCL) ? "<" : "<=");
        sb_num(sb, s->max);
    } else {
        sb_add(sb, "-");
    }
}

#define ESC prt__cliutil_esc

static void print_text(FILE *f, const prt_creator_info *info, int32_t nb)
{
    int32_t i, j;
    fprintf(f, "%d plugin creator%s\n", (int)nb, nb == 1 ? "" : "s");
    for (i = 0; i < nb; i++) {
        const prt_plugin_creator *c = info[i].creator;
        const char *ns = c->plugin_namespace ? c->plugin_namespace : "";
        fprintf(f, "\n%s%s%s v%s  [%s style, owner \"%s\"%s%s]\n", ESC(ns), ns[0] ? "::" : "", ESC(c->name),
                ESC(c->version), style_name(c->style), ESC(info[i].owner), ns[0] ? "" : ", default namespace",
                info[i].shadowed ? ", shadowed by a loaded library" : "");
        if (c->doc && c->doc[0]) fprintf(f, "  %s\n", ESC(c->doc));
        if (c->nb_fields == 0) {
            fprintf(f, "  no fields\n");
            continue;
        }
        fprintf(f, "  %-16s %-8s %-6s %-22s %-14s %s\n", "field", "type", "count", "required/default", "bounds",
                "doc");
        for (j = 0; j < c->nb_fields; j++) {
            const prt_field_schema *s = prt_creator_schema_entry(c, j);
            sbuf count = {{0}, 0}, req = {{0}, 0}, bounds = {{0}, 0};
            sb_count(&count, s);
            if (s->required) {
                sb_add(&req, "required");
            } else if (s->default_data) {
                sb_add(&req, "default ");
                sb_default(&req, s);
            } else {
                sb_add(&req, "optional");
            }
            sb_bounds(&bounds, s);
            fprintf(f, "  %-16s %-8s %-6s %-22s %-14s %s\n", ESC(s->name), prt_field_type_name(s->type),
                    count.b, ESC(req.b), bounds.b, ESC(s->doc));
        }
    }
}

/* ---- JSON ---------------------------------------------------------------------- */

/* [2, 3] as a JSON array; NULL when out of memory. */
static cJSON *dims_array(const prt_dims *d)
{
    cJSON *e = cJSON_CreateArray();
    int32_t k;
    for (k = 0; e && k < d->nb && k < PRT_MAX_DIMS; k++) {
        cJSON *x = cJSON_CreateNumber((double)d->d[k]);
        if (!x || !cJSON_AddItemToArray(e, x)) {
            cJSON_Delete(x);
            cJSON_Delete(e);
            e = NULL;
        }
    }
    return e;
}

static cJSON *json_default(const prt_field_schema *s)
{
    int64_t i, n = s->default_count;
    cJSON *arr;
    if (s->type == PRT_FIELD_CHAR) {
        char *str = malloc((size_t)n + 1);
        cJSON *j;
        if (!str) return NULL;
        memcpy(str, s->default_data, (size_t)n);
        str[n] = 0;
        j = cJSON_CreateString(str);
        free(str);
        return j;
    }
    if (s->type == PRT_FIELD_BYTES) {
        char *hex = malloc((size_t)n * 2 + 1);
        cJSON *j;
        if (!hex) return NULL;
        for (i = 0; i < n; i++) snprintf(hex + 2 * i, 3, "%02x", ((const uint8_t *)s->default_data)[i]);
        hex[2 * n] = 0;
        j = cJSON_CreateString(hex);
        free(hex);
        return j;
    }
    arr = cJSON_CreateArray();
    if (!arr) return NULL;
    for (i = 0; i < n; i++) {
        cJSON *e;
        if (s->type == PRT_FIELD_DIMS) {
            prt_dims d;
            memcpy(&d, (const char *)s->default_data + (size_t)i * sizeof d, sizeof d);
            e = dims_array(&d);
        } else if (s->type == PRT_FIELD_BOOL) {
            e = cJSON_CreateBool(elem_i64(s, i) != 0);
        } else if (s->type == PRT_FIELD_STRINGS) {
            e = cJSON_CreateString(((const char *const *)s->default_data)[i]);
        } else if (s->type == PRT_FIELD_TENSOR) {
            /* Described, not dumped: dtype and dims. */
            const prt_field_tensor *x = &((const prt_field_tensor *)s->default_data)[i];
            e = cJSON_CreateObject();
            if (e && (!cJSON_AddStringToObject(e, "dtype", prt_dtype_name(x->dtype)) ||
                      !cJSON_AddItemToObject(e, "dims", dims_array(&x->dims)))) {
                cJSON_Delete(e);
                e = NULL;
            }
        } else if (s->type == PRT_FIELD_GRAPH) {
            const prt_field_graph *g = &((const prt_field_graph *)s->default_data)[i];
            e = cJSON_CreateObject();
            if (e && (!cJSON_AddStringToObject(e, "name", g->name) ||
                      !cJSON_AddStringToObject(e, "format", g->format == PRT_GRAPH_ONNX ? "onnx" : "network-json"))) {
                cJSON_Delete(e);
                e = NULL;
            }
        } else {
            e = cJSON_CreateNumber(elem_f64(s, i));
        }
        if (!e || !cJSON_AddItemToArray(arr, e)) {
            cJSON_Delete(e);
            cJSON_Delete(arr);
            return NULL;
        }
    }
    return arr;
}

/* Each Add returns NULL when out of memory; `ok` collects that. */
static cJSON *json_field(const prt_field_schema *s, int *ok)
{
    cJSON *o = cJSON_CreateObject(), *b;
    if (!o) {
        *ok = 0;
        return NULL;
    }
    *ok &= cJSON_AddStringToObject(o, "name", s->name) != NULL;
    *ok &= cJSON_AddStringToObject(o, "type", prt_field_type_name(s->type)) != NULL;
    *ok &= cJSON_AddNumberToObject(o, "min_count", (double)s->min_count) != NULL;
    if (s->max_count == PRT_COUNT_UNBOUNDED)
        *ok &= cJSON_AddNullToObject(o, "max_count") != NULL;
    else
        *ok &= cJSON_AddNumberToObject(o, "max_count", (double)s->max_count) != NULL;
    *ok &= cJSON_AddBoolToObject(o, "required", s->required != 0) != NULL;
    if (s->default_data) {
        cJSON *d = json_default(s);
        if (!d || !cJSON_AddItemToObject(o, "default", d)) {
            cJSON_Delete(d);
            *ok = 0;
        }
    } else {
        *ok &= cJSON_AddNullToObject(o, "default") != NULL;
    }
    if (has_min(s) || has_max(s)) {
        b = cJSON_AddObjectToObject(o, "bounds");
        if (!b) {
            *ok = 0;
        } else {
            if (has_min(s)) {
                *ok &= cJSON_AddNumberToObject(b, "min", s->min) != NULL;
                *ok &= cJSON_AddBoolToObject(b, "min_exclusive", (s->bounds & PRT_BOUND_MIN_EXCL) != 0) != NULL;
            }
            if (has_max(s)) {
                *ok &= cJSON_AddNumberToObject(b, "max", s->max) != NULL;
                *ok &= cJSON_AddBoolToObject(b, "max_exclusive", (s->bounds & PRT_BOUND_MAX_EXCL) != 0) != NULL;
            }
        }
    } else {
        *ok &= cJSON_AddNullToObject(o, "bounds") != NULL;
    }
    if (s->doc)
        *ok &= cJSON_AddStringToObject(o, "doc", s->doc) != NULL;
    else
        *ok &= cJSON_AddNullToObject(o, "doc") != NULL;
    return o;
}

static cJSON *json_creators(const prt_creator_info *info, int32_t nb, prt_library *const *libs, int nb_libs)
{
    cJSON *root = cJSON_CreateObject(), *arr, *larr;
    int32_t i, j;
    int ok = 1;
    if (!root) return NULL;
    arr = cJSON_AddArrayToObject(root, "creators");
    larr = cJSON_AddArrayToObject(root, "libraries");
    if (!arr || !larr) ok = 0;
    for (i = 0; ok && i < nb; i++) {
        const prt_plugin_creator *c = info[i].creator;
        cJSON *o = cJSON_CreateObject(), *fields;
        if (!o || !cJSON_AddItemToArray(arr, o)) {
            cJSON_Delete(o);
            ok = 0;
            break;
        }
        ok &= cJSON_AddStringToObject(o, "name", c->name) != NULL;
        ok &= cJSON_AddStringToObject(o, "version", c->version) != NULL;
        ok &= cJSON_AddStringToObject(o, "namespace", c->plugin_namespace ? c->plugin_namespace : "") != NULL;
        ok &= cJSON_AddStringToObject(o, "style", style_name(c->style)) != NULL;
        ok &= cJSON_AddStringToObject(o, "owner", info[i].owner) != NULL;
        ok &= cJSON_AddBoolToObject(o, "shadowed", info[i].shadowed != 0) != NULL;
        if (c->doc)
            ok &= cJSON_AddStringToObject(o, "doc", c->doc) != NULL;
        else
            ok &= cJSON_AddNullToObject(o, "doc") != NULL;
        fields = cJSON_AddArrayToObject(o, "fields");
        if (!fields) ok = 0;
        for (j = 0; ok && j < c->nb_fields; j++) {
            cJSON *fo = json_field(prt_creator_schema_entry(c, j), &ok);
            if (!fo || !cJSON_AddItemToArray(fields, fo)) {
                cJSON_Delete(fo);
                ok = 0;
            }
        }
    }
    for (i = 0; ok && i < nb_libs; i++) {
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddItemToArray(larr, o)) {
            cJSON_Delete(o);
            ok = 0;
            break;
        }
        ok &= cJSON_AddStringToObject(o, "name", prt_library_name(libs[i])) != NULL;
        ok &= cJSON_AddStringToObject(o, "path", prt_library_path(libs[i])) != NULL;
    }
    if (!ok) {
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

/* ---- the command ------------------------------------------------------------------- */

int prt_cli_plugins(int argc, char **argv)
{
    prt_registry *r = NULL;
    prt_creator_info *info = NULL;
    prt_library **libs = NULL;
    int32_t nb = 0, cap = 0;
    int i, json = 0, nb_libs = 0, rc = 1;
    const char **paths = calloc((size_t)(argc > 0 ? argc : 1), sizeof *paths);
    int nb_paths = 0;
    if (!paths) {
        fprintf(stderr, "plugrt plugins: out of memory\n");
        return 1;
    }
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "--load") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "plugrt plugins: --load needs a library path\n");
                usage(stderr);
                free(paths);
                return 2;
            }
            paths[nb_paths++] = argv[++i];
        } else if (strncmp(argv[i], "--load=", 7) == 0) {
            paths[nb_paths++] = argv[i] + 7;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            free(paths);
            return 0;
        } else {
            fprintf(stderr, "plugrt plugins: unknown option \"%s\"\n", argv[i]);
            usage(stderr);
            free(paths);
            return 2;
        }
    }
    if (prt_registry_create(prt_registry_global(), &r) != PRT_OK) {
        fprintf(stderr, "plugrt plugins: cannot create a registry: %s\n",
                prt_registry_last_error(prt_registry_global()));
        free(paths);
        return 1;
    }
    libs = calloc((size_t)(nb_paths ? nb_paths : 1), sizeof *libs);
    if (!libs) {
        fprintf(stderr, "plugrt plugins: out of memory\n");
        goto done;
    }
    for (i = 0; i < nb_paths; i++) {
        prt_library *lib = NULL;
        int k, seen = 0;
        if (prt_registry_load_library(r, paths[i], &lib) != PRT_OK) {
            fprintf(stderr, "plugrt plugins: %s\n", prt_registry_last_error(r));
            goto done;
        }
        for (k = 0; k < nb_libs; k++) seen |= libs[k] == lib;
        if (!seen) libs[nb_libs++] = lib;
    }
    /* Size, then fill; the registry may grow in between only if another
     * thread registers, which this command does not do. */
    if (prt_registry_list(r, NULL, 0, &cap) != PRT_OK) {
        fprintf(stderr, "plugrt plugins: %s\n", prt_registry_last_error(r));
        goto done;
    }
    info = calloc((size_t)(cap ? cap : 1), sizeof *info);
    if (!info) {
        fprintf(stderr, "plugrt plugins: out of memory listing %d creators\n", (int)cap);
        goto done;
    }
    if (prt_registry_list(r, info, cap, &nb) != PRT_OK) {
        fprintf(stderr, "plugrt plugins: %s\n", prt_registry_last_error(r));
        goto done;
    }
    if (nb > cap) nb = cap;
    if (json) {
        cJSON *root = json_creators(info, nb, libs, nb_libs);
        char *text = root ? cJSON_Print(root) : NULL;
        cJSON_Delete(root);
        if (!text) {
            fprintf(stderr, "plugrt plugins: out of memory writing JSON\n");
            goto done;
        }
        printf("%s\n", text);
        cJSON_free(text);
    } else {
        for (i = 0; i < nb_libs; i++)
            printf("loaded library \"%s\" from %s\n", ESC(prt_library_name(libs[i])), ESC(prt_library_path(libs[i])));
        if (nb_libs) printf("\n");
        print_text(stdout, info, nb);
    }
    rc = fflush(stdout) == 0 ? 0 : 1;
done:
    free(info);
    free(libs);
    free(paths);
    prt_registry_destroy(r);
    return rc;
}
