/* harness/golden.c - Polygraphy golden-IO JSON reader (layout:
 * docs/conformance.md). Every array is copied into the object's arena, so
 * one arena free releases everything. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/core.h"
#include "harness/harness.h"
#include "harness/loader.h"

typedef struct gloader {
    prt_golden *g;
    prt__loader ld; /* messages name the file, not a position */
} gloader;

static int gfail(gloader *L, prt_status s, const char *fmt, ...) PRT_PRINTF(3, 4);
static int gfail(gloader *L, prt_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    prt__loader_vfail(&L->ld, -1, 0, s, fmt, ap);
    va_end(ap);
    return -1;
}

static void gwarnf(gloader *L, const char *fmt, ...) PRT_PRINTF(2, 3);
static void gwarnf(gloader *L, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    prt__loader_vwarn(&L->ld, -1, 0, fmt, ap);
    va_end(ap);
}

static void *galloc(gloader *L, size_t count, size_t size)
{
    return prt__loader_alloc(&L->ld, -1, 0, count, size);
}

static const char *gstr(gloader *L, const char *s)
{
    const char *d = prt__arena_strndup(&L->g->arena, s ? s : "", s ? strlen(s) : 0);
    if (!d) gfail(L, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
    return d;
}

static const char *json_kind(const cJSON *j)
{
    if (!j) return "nothing";
    if (cJSON_IsObject(j)) return "an object";
    if (cJSON_IsArray(j)) return "a list";
    if (cJSON_IsString(j)) return "a string";
    if (cJSON_IsNumber(j)) return "a number";
    if (cJSON_IsBool(j)) return "a boolean";
    if (cJSON_IsNull(j)) return "null";
    return "an unknown value";
}

/* Move a freshly read array into the arena. */
static int to_arena(gloader *L, prt_npy_array *a)
{
    void *d = prt__arena_alloc(&L->g->arena, a->nbytes);
    if (!d) {
        prt_npy_array_clear(a);
        return gfail(L, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
    }
    if (a->nbytes) memcpy(d, a->data, a->nbytes);
    prt__free(a->data);
    a->data = d;
    return 0;
}

/* {"array": "<base64 .npy>", "polygraphy_class": "ndarray"}, or the string alone */
static int array_of(gloader *L, const cJSON *j, const char *path, prt_npy_array *out)
{
    const cJSON *arr = j;
    uint8_t *raw;
    size_t raw_len;
    char err[256];
    prt_npy_array a;
    prt_status s;
    if (cJSON_IsObject(j)) {
        const cJSON *cls = cJSON_GetObjectItemCaseSensitive(j, "polygraphy_class");
        const cJSON *it;
        arr = cJSON_GetObjectItemCaseSensitive(j, "array");
        if (cls && (!cJSON_IsString(cls) || strcmp(cls->valuestring, "ndarray") != 0))
            return gfail(L, PRT_STATUS_UNSUPPORTED,
                         "%s: expected polygraphy_class \"ndarray\", found %s%.40s%s", path,
                         cJSON_IsString(cls) ? "\"" : json_kind(cls),
                         cJSON_IsString(cls) ? cls->valuestring : "", cJSON_IsString(cls) ? "\"" : "");
        cJSON_ArrayForEach(it, j) {
            if (strcmp(it->string, "array") && strcmp(it->string, "polygraphy_class"))
                gwarnf(L, "%s: unknown key \"%.60s\" ignored", path, it->string);
        }
    }
    if (!cJSON_IsString(arr))
        return gfail(L, PRT_STATUS_BAD_FORMAT,
                     "%s: expected {\"array\": \"<base64 .npy>\", \"polygraphy_class\": \"ndarray\"}, found %s%s",
                     path, cJSON_IsObject(j) ? "an object whose \"array\" is " : "", json_kind(arr));
    s = prt__base64_decode(arr->valuestring, strlen(arr->valuestring), &raw, &raw_len, err, sizeof err);
    if (s != PRT_OK) return gfail(L, s, "%s: %s", path, err);
    s = prt_npy_read_mem(raw, raw_len, &a);
    prt__free(raw);
    if (s != PRT_OK) return gfail(L, s, "%s: %s", path, prt_last_error(&a));
    if (to_arena(L, &a) < 0) return -1;
    *out = a;
    return 0;
}

static int tensors_of(gloader *L, const cJSON *j, const char *path, int *nb, prt_golden_tensor **out)
{
    const cJSON *it;
    int n = 0, k = 0;
    char sub[300];
    if (!j || cJSON_IsNull(j)) return 0;
    if (!cJSON_IsObject(j))
        return gfail(L, PRT_STATUS_BAD_FORMAT, "%s: expected an object of name to array, found %s", path,
                     json_kind(j));
    cJSON_ArrayForEach(it, j) n++;
    *out = galloc(L, (size_t)n, sizeof **out);
    if (!*out) return -1;
    cJSON_ArrayForEach(it, j) {
        prt__loader_join(sub, sizeof sub, path, it->string);
        if (!((*out)[k].name = gstr(L, it->string))) return -1;
        if (array_of(L, it, sub, &(*out)[k].array) < 0) return -1;
        k++;
    }
    *nb = k;
    return 0;
}

static int scalar_array(gloader *L, prt_npy_type t, int nb_dims, int64_t n, prt_npy_array *out)
{
    prt_dims sh;
    memset(&sh, 0, sizeof sh);
    sh.nb = nb_dims;
    sh.d[0] = n;
    memset(out, 0, sizeof *out);
    out->type = t;
    out->shape = sh;
    out->count = n;
    out->nbytes = (size_t)n * prt_npy_type_size(t);
    out->data = galloc(L, (size_t)n, prt_npy_type_size(t));
    return out->data ? 0 : -1;
}

static int is_integral(double v)
{
    return v == floor(v) && fabs(v) <= 9007199254740992.0; /* 2^53 */
}

static int attr_of(gloader *L, const cJSON *j, const char *path, prt_golden_attr *a)
{
    if (cJSON_IsObject(j)) {
        a->kind = PRT_GOLDEN_ATTR_ARRAY;
        return array_of(L, j, path, &a->array);
    }
    if (cJSON_IsBool(j)) {
        a->kind = PRT_GOLDEN_ATTR_BOOL;
        if (scalar_array(L, PRT_NPY_B1, 0, 1, &a->array) < 0) return -1;
        *(uint8_t *)a->array.data = cJSON_IsTrue(j) ? 1 : 0;
        return 0;
    }
    if (cJSON_IsNumber(j)) {
        double v = j->valuedouble;
        if (is_integral(v)) {
            int64_t i = (int64_t)v;
            a->kind = PRT_GOLDEN_ATTR_INT;
            if (scalar_array(L, PRT_NPY_I8, 0, 1, &a->array) < 0) return -1;
            memcpy(a->array.data, &i, 8);
        } else {
            a->kind = PRT_GOLDEN_ATTR_FLOAT;
            if (scalar_array(L, PRT_NPY_F8, 0, 1, &a->array) < 0) return -1;
            memcpy(a->array.data, &v, 8);
        }
        return 0;
    }
    if (cJSON_IsString(j)) {
        a->kind = PRT_GOLDEN_ATTR_STRING;
        return (a->text = gstr(L, j->valuestring)) ? 0 : -1;
    }
    if (cJSON_IsArray(j)) {
        const cJSON *it;
        int64_t n = 0, k = 0;
        int bools = 0, ints = 0, floats = 0;
        cJSON_ArrayForEach(it, j) {
            if (cJSON_IsBool(it)) bools++;
            else if (cJSON_IsNumber(it) && is_integral(it->valuedouble)) ints++;
            else if (cJSON_IsNumber(it)) floats++;
            else
                return gfail(L, PRT_STATUS_BAD_FORMAT,
                             "%s: expected a list of numbers or booleans, found %s at index %lld", path,
                             json_kind(it), (long long)n);
            n++;
        }
        if (bools && (ints || floats))
            return gfail(L, PRT_STATUS_BAD_FORMAT,
                         "%s: expected a list of numbers or of booleans, found both", path);
        a->kind = PRT_GOLDEN_ATTR_LIST;
        if (scalar_array(L, bools ? PRT_NPY_B1 : floats ? PRT_NPY_F8 : PRT_NPY_I8, 1, n, &a->array) < 0)
            return -1;
        cJSON_ArrayForEach(it, j) {
            if (bools) {
                ((uint8_t *)a->array.data)[k] = cJSON_IsTrue(it) ? 1 : 0;
            } else if (floats) {
                double v = it->valuedouble;
                memcpy((uint8_t *)a->array.data + k * 8, &v, 8);
            } else {
                int64_t v = (int64_t)it->valuedouble;
                memcpy((uint8_t *)a->array.data + k * 8, &v, 8);
            }
            k++;
        }
        return 0;
    }
    return gfail(L, PRT_STATUS_BAD_FORMAT,
                 "%s: expected an array object, a number, a boolean, a string or a list, found %s", path,
                 json_kind(j));
}

static int attrs_of(gloader *L, const cJSON *j, const char *path, prt_golden_case *c)
{
    const cJSON *it;
    int n = 0, k = 0;
    char sub[300];
    if (!j || cJSON_IsNull(j)) return 0;
    if (!cJSON_IsObject(j))
        return gfail(L, PRT_STATUS_BAD_FORMAT, "%s: expected an object of attribute name to value, found %s",
                     path, json_kind(j));
    cJSON_ArrayForEach(it, j) n++;
    c->attrs = galloc(L, (size_t)n, sizeof *c->attrs);
    if (!c->attrs) return -1;
    cJSON_ArrayForEach(it, j) {
        prt__loader_join(sub, sizeof sub, path, it->string);
        if (cJSON_IsNull(it)) {
            gwarnf(L, "%s: null attribute ignored", sub);
            continue;
        }
        if (!(c->attrs[k].name = gstr(L, it->string))) return -1;
        if (attr_of(L, it, sub, &c->attrs[k]) < 0) return -1;
        k++;
    }
    c->nb_attrs = k;
    return L->ld.status == PRT_OK ? 0 : -1;
}

static int case_of(gloader *L, const cJSON *j, const char *path, prt_golden_case *c)
{
    const cJSON *it;
    char sub[300];
    if (!cJSON_IsObject(j))
        return gfail(L, PRT_STATUS_BAD_FORMAT,
                     "%s: expected a case object with inputs, attributes, outputs; found %s", path,
                     json_kind(j));
    cJSON_ArrayForEach(it, j) {
        prt__loader_join(sub, sizeof sub, path, it->string);
        if (!strcmp(it->string, "inputs")) {
            if (tensors_of(L, it, sub, &c->nb_inputs, &c->inputs) < 0) return -1;
        } else if (!strcmp(it->string, "outputs")) {
            if (tensors_of(L, it, sub, &c->nb_outputs, &c->outputs) < 0) return -1;
        } else if (!strcmp(it->string, "attributes")) {
            if (attrs_of(L, it, sub, c) < 0) return -1;
        } else {
            gwarnf(L, "%s: unknown key ignored (expected inputs, attributes, outputs)", sub);
            if (L->ld.status != PRT_OK) return -1;
        }
    }
    if (!cJSON_GetObjectItemCaseSensitive(j, "outputs"))
        gwarnf(L, "%s: the case has no outputs to compare", path);
    return L->ld.status == PRT_OK ? 0 : -1;
}

static int top_of(gloader *L, const cJSON *root)
{
    const cJSON *it;
    int n = 0, k = 0;
    prt_golden *g = L->g;
    if (!cJSON_IsObject(root))
        return gfail(L, PRT_STATUS_BAD_FORMAT, "expected an object of config name to list of cases, found %s",
                     json_kind(root));
    cJSON_ArrayForEach(it, root) n++;
    g->configs = galloc(L, (size_t)n, sizeof *g->configs);
    if (!g->configs) return -1;
    cJSON_ArrayForEach(it, root) {
        prt_golden_config *gc = &g->configs[k];
        const cJSON *cs;
        int m = 0, i = 0;
        char sub[300];
        if (!(gc->name = gstr(L, it->string))) return -1;
        if (cJSON_IsObject(it)) { /* one case written without its list */
            gwarnf(L, "%s: expected a list of cases, found one case object; read as a list of one", it->string);
            gc->cases = galloc(L, 1, sizeof *gc->cases);
            if (!gc->cases) return -1;
            snprintf(sub, sizeof sub, "%s", it->string);
            if (case_of(L, it, sub, &gc->cases[0]) < 0) return -1;
            gc->nb_cases = 1;
            k++;
            continue;
        }
        if (!cJSON_IsArray(it))
            return gfail(L, PRT_STATUS_BAD_FORMAT, "%s: expected a list of cases, found %s", it->string,
                         json_kind(it));
        cJSON_ArrayForEach(cs, it) m++;
        gc->cases = galloc(L, (size_t)m, sizeof *gc->cases);
        if (!gc->cases) return -1;
        cJSON_ArrayForEach(cs, it) {
            snprintf(sub, sizeof sub, "%s[%d]", it->string, i);
            if (case_of(L, cs, sub, &gc->cases[i]) < 0) return -1;
            i++;
        }
        gc->nb_cases = i;
        k++;
    }
    g->nb_configs = k;
    return 0;
}

prt_status prt__golden_load_mem(const char *text, size_t len, const char *name, prt_golden **out)
{
    prt_golden *g;
    gloader L;
    cJSON *root = NULL;

    if (!out) return PRT_STATUS_INVALID_ARGUMENT;
    if (!text && len) return prt__err(out, PRT_STATUS_INVALID_ARGUMENT, "no text given");
    if (!name) name = "<memory>";
    g = prt__calloc(1, sizeof *g);
    if (!g) return prt__err(out, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
    L.g = g;
    prt__loader_init(&L.ld, &g->arena, name);
    if (!(g->path = gstr(&L, name))) goto done;
    root = cJSON_ParseWithLength(text ? text : "", len);
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        size_t off = at && text && at >= text && at <= text + len ? (size_t)(at - text) : len;
        size_t line = 1, col = 1, q;
        for (q = 0; q < off; q++) {
            if (text[q] == '\n') { line++; col = 1; }
            else col++;
        }
        gfail(&L, PRT_STATUS_BAD_FORMAT, "malformed JSON at line %zu, column %zu (byte %zu of %zu)", line, col,
              off, len);
        goto done;
    }
    if (top_of(&L, root) < 0) goto done;
    g->warnings = prt__loader_warnings(&L.ld, -1, 0);
    if (!g->warnings) goto done;
    g->nb_warnings = L.ld.nb_warn;
done:
    cJSON_Delete(root);
    if (L.ld.status != PRT_OK) {
        prt__golden_destroy(g);
        return prt__err(out, L.ld.status, "%s", L.ld.msg);
    }
    *out = g;
    return PRT_OK;
}

static prt_status load_mem(const char *text, size_t len, const char *name, void *out)
{
    return prt__golden_load_mem(text, len, name, (prt_golden **)out);
}

prt_status prt__golden_load_file(const char *path, prt_golden **out)
{
    return prt__loader_load_file(path, out, load_mem);
}

void prt__golden_destroy(prt_golden *g)
{
    if (!g) return;
    prt__arena_free(&g->arena);
    prt__free(g);
}

const prt_golden_config *prt__golden_find_config(const prt_golden *g, const char *name)
{
    int i;
    if (!g || !name) return NULL;
    for (i = 0; i < g->nb_configs; i++)
        if (!strcmp(g->configs[i].name, name)) return &g->configs[i];
    return NULL;
}

static const prt_golden_tensor *find_tensor(const prt_golden_tensor *t, int nb, const char *name)
{
    int i;
    for (i = 0; i < nb; i++)
        if (!strcmp(t[i].name, name)) return &t[i];
    return NULL;
}

const prt_golden_tensor *prt__golden_case_input(const prt_golden_case *c, const char *name)
{
    return c && name ? find_tensor(c->inputs, c->nb_inputs, name) : NULL;
}

const prt_golden_tensor *prt__golden_case_output(const prt_golden_case *c, const char *name)
{
    return c && name ? find_tensor(c->outputs, c->nb_outputs, name) : NULL;
}

const prt_golden_attr *prt__golden_case_attr(const prt_golden_case *c, const char *name)
{
    int i;
    if (!c || !name) return NULL;
    for (i = 0; i < c->nb_attrs; i++)
        if (!strcmp(c->attrs[i].name, name)) return &c->attrs[i];
    return NULL;
}
