/* harness/pcfg.c - PluginConfig YAML reader (keys: docs/conformance.md). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "core/core.h"
#include "harness/harness.h"
#include "harness/loader.h"

typedef struct loader {
    prt_pcfg *cfg;
    yaml_document_t *doc;
    prt__loader ld; /* messages name the file, line and column */
} loader;

typedef yaml_node_t node;

/* ---- messages ------------------------------------------------------------------ */

/* 1-based position of n for messages; 0:0 without a node. */
static int line_of(const node *n) { return n ? (int)n->start_mark.line + 1 : 0; }
static int col_of(const node *n) { return n ? (int)n->start_mark.column + 1 : 0; }

static int fail(loader *L, const node *n, prt_status s, const char *fmt, ...) PRT_PRINTF(4, 5);
static int fail(loader *L, const node *n, prt_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    prt__loader_vfail(&L->ld, line_of(n), col_of(n), s, fmt, ap);
    va_end(ap);
    return -1;
}

static void warn(loader *L, const node *n, const char *fmt, ...) PRT_PRINTF(3, 4);
static void warn(loader *L, const node *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    prt__loader_vwarn(&L->ld, line_of(n), col_of(n), fmt, ap);
    va_end(ap);
}

/* count * size with overflow checked, for arrays sized by the file */
static void *alloc_array(loader *L, const node *n, size_t count, size_t size)
{
    return prt__loader_alloc(&L->ld, line_of(n), col_of(n), count, size);
}

static void *alloc(loader *L, const node *n, size_t size)
{
    return alloc_array(L, n, 1, size);
}

/* ---- nodes -------------------------------------------------------------------- */

static node *get(loader *L, int idx)
{
    return yaml_document_get_node(L->doc, idx);
}

static const char *kind_name(const node *n)
{
    if (!n) return "nothing";
    switch (n->type) {
    case YAML_SCALAR_NODE: return "a scalar";
    case YAML_SEQUENCE_NODE: return "a list";
    case YAML_MAPPING_NODE: return "a map";
    default: return "nothing";
    }
}

/* `key:` with nothing after it, or an explicit null. */
static int is_null(const node *n)
{
    const char *v;
    size_t len;
    if (!n) return 1;
    if (n->type != YAML_SCALAR_NODE) return 0;
    if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) return 0;
    v = (const char *)n->data.scalar.value;
    len = n->data.scalar.length;
    return len == 0 || (len == 1 && v[0] == '~') || (len == 4 && memcmp(v, "null", 4) == 0);
}

static int is_empty_seq(const node *n)
{
    return n && n->type == YAML_SEQUENCE_NODE && n->data.sequence.items.top == n->data.sequence.items.start;
}

static int key_is(const node *k, const char *s)
{
    size_t n = strlen(s);
    return k && k->type == YAML_SCALAR_NODE && k->data.scalar.length == n &&
           memcmp(k->data.scalar.value, s, n) == 0;
}

/* Scalar text as an arena string; also used for keys. */
static const char *text_of(loader *L, const node *n, const char *what)
{
    const char *s;
    if (!n || n->type != YAML_SCALAR_NODE) {
        fail(L, n, PRT_STATUS_BAD_FORMAT, "%s: expected a scalar, found %s", what, kind_name(n));
        return NULL;
    }
    s = prt__arena_strndup(&L->cfg->arena, (const char *)n->data.scalar.value, n->data.scalar.length);
    if (!s) fail(L, n, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
    return s;
}

/* Iterate a mapping: for (i = 0; i < map_len(m); i++) key(m, i), val(m, i). */
static int map_len(const node *m)
{
    return (int)(m->data.mapping.pairs.top - m->data.mapping.pairs.start);
}

static node *map_key(loader *L, const node *m, int i)
{
    return get(L, m->data.mapping.pairs.start[i].key);
}

static node *map_val(loader *L, const node *m, int i)
{
    return get(L, m->data.mapping.pairs.start[i].value);
}

static int seq_len(const node *s)
{
    return (int)(s->data.sequence.items.top - s->data.sequence.items.start);
}

static node *seq_item(loader *L, const node *s, int i)
{
    return get(L, s->data.sequence.items.start[i]);
}

/* Keys of a mapping must be scalars; a repeated key is a warning and the
 * later one is skipped. Returns 1 to use pair i, 0 to skip it, -1 on error. */
static int check_key(loader *L, const node *m, int i, const char *path)
{
    node *k = map_key(L, m, i);
    int j;
    if (!k || k->type != YAML_SCALAR_NODE)
        return fail(L, k, PRT_STATUS_BAD_FORMAT, "%s: expected a scalar key, found %s", path,
                    kind_name(k));
    for (j = 0; j < i; j++) {
        node *o = map_key(L, m, j);
        if (o && o->type == YAML_SCALAR_NODE && o->data.scalar.length == k->data.scalar.length &&
            memcmp(o->data.scalar.value, k->data.scalar.value, k->data.scalar.length) == 0) {
            warn(L, k, "%s: key \"%.*s\" appears twice; the later one is ignored", path,
                 (int)(k->data.scalar.length > 60 ? 60 : k->data.scalar.length),
                 (const char *)k->data.scalar.value);
            return L->ld.status == PRT_OK ? 0 : -1;
        }
    }
    return 1;
}

/* Pair j of map m, for a reader that goes by its key: 1 with *key, *val and
 * the pair's path (path.key, cut at cap) in sub; 0 to skip a repeated key;
 * -1 on error. */
static int map_entry(loader *L, const node *m, int j, const char *path, node **key, node **val, char *sub,
                     size_t cap)
{
    int use = check_key(L, m, j, path);
    if (use <= 0) return use;
    *key = map_key(L, m, j);
    *val = map_val(L, m, j);
    prt__loader_join(sub, cap, path, (const char *)(*key)->data.scalar.value);
    return 1;
}

static int expect_map(loader *L, const node *n, const char *path)
{
    if (n && n->type == YAML_MAPPING_NODE) return 0;
    return fail(L, n, PRT_STATUS_BAD_FORMAT, "%s: expected a map, found %s", path, kind_name(n));
}

/* ---- scalars and numbers -------------------------------------------------------------- */

static int all_numeric_chars(const char *s)
{
    for (; *s; s++)
        if (!strchr("0123456789+-.eE", *s)) return 0;
    return 1;
}

static void parse_scalar(const char *text, prt_pcfg_scalar *out)
{
    char *end;
    out->text = text;
    out->is_number = out->is_int = 0;
    if (!*text || !all_numeric_chars(text)) return;
    errno = 0;
    out->i = strtoll(text, &end, 10);
    if (*end == 0 && errno == 0) {
        out->is_int = 1;
        out->is_number = 1;
        out->num = (double)out->i;
        return;
    }
    out->i = 0;
    out->num = strtod(text, &end);
    if (*end == 0) out->is_number = 1;
    else out->num = 0;
}

static int scalar_of(loader *L, const node *n, const char *path, prt_pcfg_scalar *out)
{
    const char *t = text_of(L, n, path);
    if (!t) return -1;
    parse_scalar(t, out);
    return 0;
}

/* A scalar that reads as a number into *num or, when `i` is given, as a
 * 64-bit integer into *i. */
static int number_of(loader *L, const node *n, const char *path, double *num, int64_t *i)
{
    prt_pcfg_scalar s;
    if (scalar_of(L, n, path, &s) < 0) return -1;
    if (i ? !s.is_int : !s.is_number)
        return fail(L, n, PRT_STATUS_BAD_FORMAT, "%s: expected %s, found \"%.60s\"", path,
                    i ? "an integer" : "a number", s.text);
    if (i) *i = s.i;
    else *num = s.num;
    return 0;
}

/* ---- bounds ------------------------------------------------------------------------ */

static int parse_one_bound(const char *s, size_t n, prt_pcfg_bound *b)
{
    char buf[64], *end;
    while (n && isspace((unsigned char)*s)) { s++; n--; }
    while (n && isspace((unsigned char)s[n - 1])) n--;
    b->inclusive = 0;
    if (n && *s == '=') {
        b->inclusive = 1;
        s++;
        n--;
        while (n && isspace((unsigned char)*s)) { s++; n--; }
    }
    if (n == 0 || n >= sizeof buf) return -1;
    memcpy(buf, s, n);
    buf[n] = 0;
    if (!strcmp(buf, "pinf") || !strcmp(buf, "inf") || !strcmp(buf, "+inf")) {
        b->value = INFINITY;
        return 0;
    }
    if (!strcmp(buf, "ninf") || !strcmp(buf, "-inf")) {
        b->value = -INFINITY;
        return 0;
    }
    if (!all_numeric_chars(buf)) return -1;
    b->value = strtod(buf, &end);
    return *end == 0 ? 0 : -1;
}

static int parse_bounds(const char *text, prt_pcfg_bound *out, int cap);

int prt__pcfg_parse_bounds(const char *text, prt_pcfg_bound *out, int cap)
{
    /* validate first, so that a failure writes nothing */
    int nb = parse_bounds(text, NULL, cap);
    return nb < 0 || !out ? nb : parse_bounds(text, out, cap);
}

static int parse_bounds(const char *text, prt_pcfg_bound *out, int cap)
{
    int nb = 0;
    const char *p = text;
    if (!text) return -1;
    for (;;) {
        const char *c = strchr(p, ',');
        size_t n = c ? (size_t)(c - p) : strlen(p);
        prt_pcfg_bound b;
        if (parse_one_bound(p, n, &b) < 0) return -1;
        if (nb >= cap) return -1;
        if (out) out[nb] = b;
        nb++;
        if (!c) break;
        p = c + 1;
    }
    return nb;
}

int prt__pcfg_bounds_allow(const prt_pcfg_bound *min, const prt_pcfg_bound *max, double v)
{
    if (v != v) return 0;
    if (min && (min->inclusive ? !(v >= min->value) : !(v > min->value))) return 0;
    if (max && (max->inclusive ? !(v <= max->value) : !(v < max->value))) return 0;
    return 1;
}

static int bounds_of(loader *L, const node *n, const char *path, const char **text, int *nb,
                     prt_pcfg_bound **b)
{
    const char *t = text_of(L, n, path);
    int cnt, k;
    if (!t) return -1;
    *text = t;
    cnt = 1;
    for (k = 0; t[k]; k++) cnt += t[k] == ',';
    *b = alloc_array(L, n, (size_t)cnt, sizeof **b);
    if (!*b) return -1;
    *nb = prt__pcfg_parse_bounds(t, *b, cnt);
    if (*nb < 0) {
        *nb = 0;
        warn(L, n, "%s: expected bounds like \"=1, 0, =pinf\", found \"%.60s\"; the range is not checked",
             path, t);
    }
    return L->ld.status == PRT_OK ? 0 : -1;
}

/* {min: "..", max: ".."} or [{min: ".."}, {max: ".."}] */
static int range_of(loader *L, const node *n, const char *path, prt_pcfg_range *r)
{
    int i, nb_items = 1;
    const node *maps[2];
    char sub[256];
    if (n && n->type == YAML_SEQUENCE_NODE) {
        nb_items = seq_len(n);
        if (nb_items > 2 || nb_items < 1)
            return fail(L, n, PRT_STATUS_BAD_FORMAT, "%s: expected {min, max}, found a list of %d items",
                        path, nb_items);
        for (i = 0; i < nb_items; i++) maps[i] = seq_item(L, n, i);
    } else {
        maps[0] = n;
    }
    for (i = 0; i < nb_items; i++) {
        const node *m = maps[i];
        int j;
        if (expect_map(L, m, path) < 0) return -1;
        for (j = 0; j < map_len(m); j++) {
            node *k, *v;
            int use = map_entry(L, m, j, path, &k, &v, sub, sizeof sub);
            if (use < 0) return -1;
            if (!use) continue;
            if (key_is(k, "min")) {
                if (bounds_of(L, v, sub, &r->min_text, &r->nb_min, &r->min) < 0) return -1;
            } else if (key_is(k, "max")) {
                if (bounds_of(L, v, sub, &r->max_text, &r->nb_max, &r->max) < 0) return -1;
            } else {
                warn(L, k, "%s: unknown key (expected min, max)", sub);
            }
        }
    }
    return L->ld.status == PRT_OK ? 0 : -1;
}

/* ---- collections ---------------------------------------------------------------------- */

/* list of scalars; null and [] are empty; a lone scalar is a list of one */
static int str_list(loader *L, const node *n, const char *path, int *nb, const char ***out)
{
    int i, len;
    if (is_null(n) || is_empty_seq(n)) {
        *nb = 0;
        *out = NULL;
        return 0;
    }
    if (n->type == YAML_SCALAR_NODE) {
        *out = alloc(L, n, sizeof **out);
        if (!*out || !((*out)[0] = text_of(L, n, path))) return -1;
        *nb = 1;
        warn(L, n, "%s: expected a list, found a scalar; read as a list of one", path);
        return L->ld.status == PRT_OK ? 0 : -1;
    }
    if (n->type != YAML_SEQUENCE_NODE)
        return fail(L, n, PRT_STATUS_BAD_FORMAT, "%s: expected a list of names, found %s", path,
                    kind_name(n));
    len = seq_len(n);
    *out = alloc_array(L, n, (size_t)len, sizeof **out);
    if (!*out) return -1;
    for (i = 0; i < len; i++)
        if (!((*out)[i] = text_of(L, seq_item(L, n, i), path))) return -1;
    *nb = len;
    return 0;
}

static int scalar_list(loader *L, const node *n, const char *path, int *nb, prt_pcfg_scalar **out)
{
    int i, len = seq_len(n);
    *out = alloc_array(L, n, (size_t)len, sizeof **out);
    if (!*out) return -1;
    for (i = 0; i < len; i++)
        if (scalar_of(L, seq_item(L, n, i), path, &(*out)[i]) < 0) return -1;
    *nb = len;
    return 0;
}

/* Reads the value of one entry of a map of named items into `slot`: `val`
 * is the value, `path` the map's path and `sub` the entry's (path.key).
 * Every item type opens with its name, which map_items has set already. */
typedef int (*item_fn)(loader *L, const node *val, const char *path, const char *sub, void *slot);

_Static_assert(offsetof(prt_pcfg_pair, key) == 0 && offsetof(prt_pcfg_count, key) == 0 &&
                   offsetof(prt_pcfg_range, name) == 0 && offsetof(prt_pcfg_combo, name) == 0 &&
                   offsetof(prt_pcfg_option, name) == 0 && offsetof(prt_pcfg_config, name) == 0 &&
                   offsetof(prt_pcfg_config_attr, name) == 0,
               "map items open with their name");

/* The entries of map m whose keys are used (check_key), in order, into
 * items[*k], items[*k + 1], ... of `size` bytes each, counting them in *k.
 * Entry paths are cut at sub_cap (at most 300) characters. */
static int map_items(loader *L, const node *m, const char *path, size_t sub_cap, void *items, size_t size,
                     int *k, item_fn item)
{
    char sub[300];
    int i;
    for (i = 0; i < map_len(m); i++) {
        void *slot = (char *)items + (size_t)*k * size;
        const char *key;
        int use = check_key(L, m, i, path);
        if (use < 0) return -1;
        if (!use) continue;
        if (!(key = text_of(L, map_key(L, m, i), path))) return -1;
        *(const char **)slot = key;
        prt__loader_join(sub, sub_cap, path, key);
        if (item(L, map_val(L, m, i), path, sub, slot) < 0) return -1;
        ++*k;
    }
    return 0;
}

/* A map of named items as a new array (null and [] give none). Returns the
 * array; *rc is 0, or -1 on error; *nb is set once every item is read. */
static void *map_array(loader *L, const node *n, const char *path, size_t size, item_fn item, int *nb,
                       int *rc)
{
    void *items;
    int k = 0;
    *nb = 0;
    *rc = 0;
    if (is_null(n) || is_empty_seq(n)) return NULL;
    *rc = -1;
    if (expect_map(L, n, path) < 0) return NULL;
    items = alloc_array(L, n, (size_t)map_len(n), size);
    if (!items || map_items(L, n, path, 256, items, size, &k, item) < 0) return items;
    *nb = k;
    *rc = 0;
    return items;
}

static int pair_value(loader *L, const node *val, const char *path, const char *sub, void *slot)
{
    prt_pcfg_pair *p = slot;
    return (p->value = text_of(L, val, path)) ? 0 : -1;
}

/* map name -> scalar */
static int pair_map(loader *L, const node *n, const char *path, int *nb, prt_pcfg_pair **out)
{
    int rc;
    *out = map_array(L, n, path, sizeof **out, pair_value, nb, &rc);
    return rc;
}

/* map name -> integer */
static int count_value(loader *L, const node *val, const char *path, const char *sub, void *slot)
{
    return number_of(L, val, sub, NULL, &((prt_pcfg_count *)slot)->value);
}

/* map name -> {min, max} */
static int range_value(loader *L, const node *val, const char *path, const char *sub, void *slot)
{
    return range_of(L, val, sub, slot);
}

static int combo_value(loader *L, const node *val, const char *path, const char *sub, void *slot)
{
    prt_pcfg_combo *c = slot;
    return pair_map(L, val, sub, &c->nb_types, &c->types);
}

/* supported_input_types: {name: {input: type}} or [{name: {input: type}}, ...] */
static int combos_of(loader *L, const node *n, const char *path, prt_pcfg_version *v)
{
    int i, total = 0, k = 0;
    if (is_null(n) || is_empty_seq(n)) return 0;
    if (n->type == YAML_MAPPING_NODE) {
        total = map_len(n);
    } else if (n->type == YAML_SEQUENCE_NODE) {
        for (i = 0; i < seq_len(n); i++) {
            node *it = seq_item(L, n, i);
            if (expect_map(L, it, path) < 0) return -1;
            total += map_len(it);
        }
    } else {
        return fail(L, n, PRT_STATUS_BAD_FORMAT,
                    "%s: expected a map of combination name to {input: type}, found %s", path,
                    kind_name(n));
    }
    v->combos = alloc_array(L, n, (size_t)total, sizeof *v->combos);
    if (!v->combos) return -1;
    for (i = 0; i < (n->type == YAML_MAPPING_NODE ? 1 : seq_len(n)); i++) {
        const node *m = n->type == YAML_MAPPING_NODE ? n : seq_item(L, n, i);
        if (map_items(L, m, path, 256, v->combos, sizeof *v->combos, &k, combo_value) < 0) return -1;
    }
    v->nb_combos = k;
    return 0;
}

/* one entry of attribute_options of a version */
static int option_value(loader *L, const node *val, const char *path, const char *sub, void *slot)
{
    prt_pcfg_option *o = slot;
    o->range.name = o->name;
    if (val && val->type == YAML_SEQUENCE_NODE) {
        o->kind = PRT_PCFG_OPTION_ENUM;
        if (scalar_list(L, val, sub, &o->nb_values, &o->values) < 0) return -1;
    } else if (val && val->type == YAML_MAPPING_NODE) {
        int j, has_range = 0;
        for (j = 0; j < map_len(val); j++) {
            node *kk = map_key(L, val, j);
            if (key_is(kk, "min") || key_is(kk, "max")) has_range = 1;
            else if (key_is(kk, "from_shape")) {
                o->kind = PRT_PCFG_OPTION_FROM_SHAPE;
                if (!(o->from_shape = text_of(L, map_val(L, val, j), sub))) return -1;
            }
        }
        if (has_range) {
            o->kind = PRT_PCFG_OPTION_RANGE;
            if (range_of(L, val, sub, &o->range) < 0) return -1;
        } else if (o->kind != PRT_PCFG_OPTION_FROM_SHAPE) {
            o->kind = PRT_PCFG_OPTION_OTHER;
            warn(L, val, "%s: expected min/max, from_shape or a list of values; not checked", sub);
        }
    } else {
        o->kind = PRT_PCFG_OPTION_OTHER;
        warn(L, val, "%s: expected min/max, from_shape or a list of values, found %s; not checked",
             sub, kind_name(val));
    }
    return L->ld.status == PRT_OK ? 0 : -1;
}

static int config_attr_of(loader *L, const node *n, const char *path, prt_pcfg_config_attr *a)
{
    char sub[256];
    if (is_null(n)) return 0;
    if (n->type == YAML_SEQUENCE_NODE)
        return scalar_list(L, n, path, &a->nb_choices, &a->choices);
    if (n->type == YAML_SCALAR_NODE) {
        a->has_value = 1;
        a->nb_values = 1;
        a->values = alloc(L, n, sizeof *a->values);
        return a->values ? scalar_of(L, n, path, a->values) : -1;
    }
    {
        int j;
        for (j = 0; j < map_len(n); j++) {
            node *k, *v;
            int use = map_entry(L, n, j, path, &k, &v, sub, sizeof sub);
            if (use < 0) return -1;
            if (!use) continue;
            if (key_is(k, "value")) {
                a->has_value = 1;
                if (v && v->type == YAML_SEQUENCE_NODE) {
                    a->value_is_list = 1;
                    if (scalar_list(L, v, sub, &a->nb_values, &a->values) < 0) return -1;
                } else {
                    a->nb_values = 1;
                    a->values = alloc(L, v, sizeof *a->values);
                    if (!a->values || scalar_of(L, v, sub, a->values) < 0) return -1;
                }
            } else if (key_is(k, "shape")) {
                if (!(a->shape = text_of(L, v, sub))) return -1;
            } else {
                warn(L, k, "%s: unknown key (expected value, shape)", sub);
            }
        }
    }
    return L->ld.status == PRT_OK ? 0 : -1;
}

static int config_attr_value(loader *L, const node *val, const char *path, const char *sub, void *slot)
{
    return config_attr_of(L, val, sub, slot);
}

static int config_of(loader *L, const node *n, const char *path, prt_pcfg_config *c)
{
    int j;
    char sub[256];
    if (is_null(n)) return 0;
    if (expect_map(L, n, path) < 0) return -1;
    for (j = 0; j < map_len(n); j++) {
        node *k, *v;
        int use = map_entry(L, n, j, path, &k, &v, sub, sizeof sub);
        if (use < 0) return -1;
        if (!use) continue;
        if (key_is(k, "input_types")) {
            if (pair_map(L, v, sub, &c->nb_input_types, &c->input_types) < 0) return -1;
        } else if (key_is(k, "output_types")) {
            if (pair_map(L, v, sub, &c->nb_output_types, &c->output_types) < 0) return -1;
        } else if (key_is(k, "input_dim_constraints")) {
            if (str_list(L, v, sub, &c->nb_input_dim_constraints, &c->input_dim_constraints) < 0) return -1;
        } else if (key_is(k, "attribute_options")) {
            int m = 0;
            if (is_null(v) || is_empty_seq(v)) continue;
            if (v->type != YAML_MAPPING_NODE)
                return fail(L, v, PRT_STATUS_BAD_FORMAT,
                            "%s: expected a map of attribute name to {value, shape}, found %s", sub,
                            kind_name(v));
            c->attrs = alloc_array(L, v, (size_t)map_len(v), sizeof *c->attrs);
            if (!c->attrs) return -1;
            if (map_items(L, v, sub, 300, c->attrs, sizeof *c->attrs, &m, config_attr_value) < 0) return -1;
            c->nb_attrs = m;
        } else {
            warn(L, k, "%s: unknown key (expected input_types, attribute_options, output_types, "
                 "input_dim_constraints)", sub);
        }
        if (L->ld.status != PRT_OK) return -1;
    }
    return 0;
}

static int config_value(loader *L, const node *val, const char *path, const char *sub, void *slot)
{
    return config_of(L, val, sub, slot);
}

/* Is `name` one of list[0..nb)? */
static int in_list(const char *const *list, int nb, const char *name)
{
    int i;
    for (i = 0; i < nb; i++)
        if (!strcmp(list[i], name)) return 1;
    return 0;
}

/* ---- a version ----------------------------------------------------------------------- */

static int version_of(loader *L, const node *n, const char *path, prt_pcfg_version *v)
{
    int j;
    char sub[256];
    v->abs_tol = v->rel_tol = v->fp16_atol = v->fp16_rtol = v->bf16_atol = v->bf16_rtol = NAN;
    v->line = n ? (int)n->start_mark.line + 1 : 0;
    if (is_null(n)) {
        warn(L, n, "%s: the version is empty", path);
        return L->ld.status == PRT_OK ? 0 : -1;
    }
    if (expect_map(L, n, path) < 0) return -1;
    for (j = 0; j < map_len(n); j++) {
        node *k, *val;
        int use = map_entry(L, n, j, path, &k, &val, sub, sizeof sub);
        int r = 0;
        if (use < 0) return -1;
        if (!use) continue;
        if (key_is(k, "interface")) r = (v->interface = text_of(L, val, sub)) ? 0 : -1;
        else if (key_is(k, "inputs")) r = str_list(L, val, sub, &v->nb_inputs, &v->inputs);
        else if (key_is(k, "outputs")) r = str_list(L, val, sub, &v->nb_outputs, &v->outputs);
        else if (key_is(k, "input_dims"))
            v->input_dims = map_array(L, val, sub, sizeof *v->input_dims, count_value, &v->nb_input_dims, &r);
        else if (key_is(k, "input_dim_constraints"))
            r = str_list(L, val, sub, &v->nb_input_dim_constraints, &v->input_dim_constraints);
        else if (key_is(k, "input_dim_range"))
            v->input_dim_ranges = map_array(L, val, sub, sizeof *v->input_dim_ranges, range_value,
                                            &v->nb_input_dim_ranges, &r);
        else if (key_is(k, "supported_input_types")) r = combos_of(L, val, sub, v);
        else if (key_is(k, "output_dims")) r = pair_map(L, val, sub, &v->nb_output_dims, &v->output_dims);
        else if (key_is(k, "attributes")) r = str_list(L, val, sub, &v->nb_attributes, &v->attributes);
        else if (key_is(k, "attribute_types"))
            r = pair_map(L, val, sub, &v->nb_attribute_types, &v->attribute_types);
        else if (key_is(k, "attribute_length"))
            v->attribute_lengths = map_array(L, val, sub, sizeof *v->attribute_lengths, count_value,
                                             &v->nb_attribute_lengths, &r);
        else if (key_is(k, "attribute_dims"))
            v->attribute_dims = map_array(L, val, sub, sizeof *v->attribute_dims, count_value,
                                          &v->nb_attribute_dims, &r);
        else if (key_is(k, "attribute_options"))
            v->options = map_array(L, val, sub, sizeof *v->options, option_value, &v->nb_options, &r);
        else if (key_is(k, "attribute_dim_range"))
            v->attribute_dim_ranges = map_array(L, val, sub, sizeof *v->attribute_dim_ranges, range_value,
                                                &v->nb_attribute_dim_ranges, &r);
        else if (key_is(k, "attribute_constraints"))
            r = str_list(L, val, sub, &v->nb_attribute_constraints, &v->attribute_constraints);
        else if (key_is(k, "attributes_required"))
            r = str_list(L, val, sub, &v->nb_attributes_required, &v->attributes_required);
        else if (key_is(k, "golden_io_path")) r = (v->golden_io_path = text_of(L, val, sub)) ? 0 : -1;
        else if (key_is(k, "golden_reference_script"))
            r = (v->golden_reference_script = text_of(L, val, sub)) ? 0 : -1;
        else if (key_is(k, "abs_tol")) r = number_of(L, val, sub, &v->abs_tol, NULL);
        else if (key_is(k, "rel_tol")) r = number_of(L, val, sub, &v->rel_tol, NULL);
        else if (key_is(k, "fp16_atol")) r = number_of(L, val, sub, &v->fp16_atol, NULL);
        else if (key_is(k, "fp16_rtol")) r = number_of(L, val, sub, &v->fp16_rtol, NULL);
        else if (key_is(k, "bf16_atol")) r = number_of(L, val, sub, &v->bf16_atol, NULL);
        else if (key_is(k, "bf16_rtol")) r = number_of(L, val, sub, &v->bf16_rtol, NULL);
        else if (key_is(k, "configs"))
            v->configs = map_array(L, val, sub, sizeof *v->configs, config_value, &v->nb_configs, &r);
        else warn(L, k, "%s: unknown key, ignored", sub);
        if (r < 0 || L->ld.status != PRT_OK) return -1;
    }
    /* cross-checks that real files get wrong now and then: warnings only */
    for (j = 0; j < v->nb_input_dims; j++)
        if (!in_list(v->inputs, v->nb_inputs, v->input_dims[j].key) && v->nb_inputs)
            warn(L, n, "%s.input_dims: \"%s\" is not one of the inputs", path, v->input_dims[j].key);
    for (j = 0; j < v->nb_configs; j++) {
        const prt_pcfg_config *c = &v->configs[j];
        int m;
        for (m = 0; m < c->nb_input_types; m++)
            if (!in_list(v->inputs, v->nb_inputs, c->input_types[m].key))
                warn(L, n, "%s.configs.%s.input_types: \"%s\" is not one of the inputs", path, c->name,
                     c->input_types[m].key);
        for (m = 0; m < c->nb_output_types; m++)
            if (!in_list(v->outputs, v->nb_outputs, c->output_types[m].key))
                warn(L, n, "%s.configs.%s.output_types: \"%s\" is not one of the outputs", path, c->name,
                     c->output_types[m].key);
    }
    for (j = 0; j < v->nb_attribute_dim_ranges; j++) {
        if (!in_list(v->attributes, v->nb_attributes, v->attribute_dim_ranges[j].name) && v->nb_attributes)
            warn(L, n, "%s.attribute_dim_range: \"%s\" is not one of the attributes", path,
                 v->attribute_dim_ranges[j].name);
    }
    return L->ld.status == PRT_OK ? 0 : -1;
}

static int top_of(loader *L, const node *root)
{
    int j, k = 0;
    prt_pcfg *cfg = L->cfg;
    const node *versions = NULL;
    if (!root || is_null(root))
        return fail(L, root, PRT_STATUS_BAD_FORMAT, "expected a PluginConfig map, found an empty document");
    if (expect_map(L, root, "the document") < 0) return -1;
    for (j = 0; j < map_len(root); j++) {
        node *key = map_key(L, root, j), *val = map_val(L, root, j);
        int use = check_key(L, root, j, "the document");
        if (use < 0) return -1;
        if (!use) continue;
        if (key_is(key, "name")) {
            if (!(cfg->name = text_of(L, val, "name"))) return -1;
        } else if (key_is(key, "interface")) {
            if (!(cfg->interface = text_of(L, val, "interface"))) return -1;
        } else if (key_is(key, "namespace")) {
            if (!(cfg->plugin_namespace = text_of(L, val, "namespace"))) return -1;
        } else if (key_is(key, "versions")) {
            versions = val;
        } else {
            warn(L, key, "unknown top-level key \"%.60s\", ignored", (const char *)key->data.scalar.value);
        }
    }
    if (!cfg->name) return fail(L, root, PRT_STATUS_BAD_FORMAT, "missing key \"name\" (the plugin name)");
    if (!versions)
        return fail(L, root, PRT_STATUS_BAD_FORMAT, "missing key \"versions\" (a map of version to its spec)");
    if (is_null(versions) || (versions->type == YAML_MAPPING_NODE && map_len(versions) == 0))
        return fail(L, versions, PRT_STATUS_BAD_FORMAT, "versions: expected at least one version, found none");
    if (expect_map(L, versions, "versions") < 0) return -1;
    cfg->versions = alloc_array(L, versions, (size_t)map_len(versions), sizeof *cfg->versions);
    if (!cfg->versions) return -1;
    for (j = 0; j < map_len(versions); j++) {
        prt_pcfg_version *v = &cfg->versions[k];
        char sub[256];
        int use = check_key(L, versions, j, "versions");
        if (use < 0) return -1;
        if (!use) continue;
        if (!(v->version = text_of(L, map_key(L, versions, j), "versions"))) return -1;
        snprintf(sub, sizeof sub, "versions.%s", v->version);
        if (version_of(L, map_val(L, versions, j), sub, v) < 0) return -1;
        if (!v->interface) v->interface = cfg->interface;
        k++;
    }
    cfg->nb_versions = k;
    return 0;
}

static const char *yaml_problem(const yaml_parser_t *p)
{
    return p->problem ? p->problem : "unknown error";
}

prt_status prt__pcfg_load_mem(const char *text, size_t len, const char *name, prt_pcfg **out)
{
    yaml_parser_t parser;
    yaml_document_t doc, extra;
    prt_pcfg *cfg;
    loader L;
    int have_doc = 0;
    char *slash;

    if (!out) return PRT_STATUS_INVALID_ARGUMENT;
    if (!text && len) return prt__err(out, PRT_STATUS_INVALID_ARGUMENT, "no text given");
    if (!name) name = "<memory>";
    cfg = prt__calloc(1, sizeof *cfg);
    if (!cfg) return prt__err(out, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
    memset(&L, 0, sizeof L);
    L.cfg = cfg;
    prt__loader_init(&L.ld, &cfg->arena, name);
    cfg->path = prt__arena_strndup(&cfg->arena, name, strlen(name));
    if (!cfg->path) {
        fail(&L, NULL, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
        goto destroy_cfg;
    }
    slash = strrchr(cfg->path, '/');
    cfg->dir = slash ? prt__arena_strndup(&cfg->arena, cfg->path, (size_t)(slash - cfg->path + (slash == cfg->path)))
                     : ".";
    if (!cfg->dir) {
        fail(&L, NULL, PRT_STATUS_OUT_OF_MEMORY, "out of memory");
        goto destroy_cfg;
    }

    if (!yaml_parser_initialize(&parser)) {
        fail(&L, NULL, PRT_STATUS_OUT_OF_MEMORY, "out of memory starting the YAML parser");
        goto destroy_cfg;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)(text ? text : ""), len);
    if (!yaml_parser_load(&parser, &doc)) {
        L.ld.status = parser.error == YAML_MEMORY_ERROR ? PRT_STATUS_OUT_OF_MEMORY : PRT_STATUS_BAD_FORMAT;
        snprintf(L.ld.msg, sizeof L.ld.msg, "%s:%d:%d: malformed YAML: %s%s%s", name,
                 (int)parser.problem_mark.line + 1, (int)parser.problem_mark.column + 1,
                 yaml_problem(&parser), parser.context ? " " : "", parser.context ? parser.context : "");
        goto delete_parser;
    }
    have_doc = 1;
    L.doc = &doc;
    if (!yaml_document_get_root_node(&doc)) {
        fail(&L, NULL, PRT_STATUS_BAD_FORMAT, "expected a PluginConfig document, found no document");
        goto delete_doc;
    }
    if (top_of(&L, yaml_document_get_root_node(&doc)) < 0) goto delete_doc;
    /* A later document is not read; say so, and report it if malformed. */
    if (!yaml_parser_load(&parser, &extra)) {
        warn(&L, NULL, "text after the first document is malformed YAML (%s), ignored", yaml_problem(&parser));
    } else {
        if (yaml_document_get_root_node(&extra))
            warn(&L, NULL, "only the first YAML document is read; the later ones are ignored");
        yaml_document_delete(&extra);
    }
    if (L.ld.status != PRT_OK) goto delete_doc;
    cfg->warnings = prt__loader_warnings(&L.ld, line_of(NULL), col_of(NULL));
    if (!cfg->warnings) goto delete_doc;
    cfg->nb_warnings = L.ld.nb_warn;

delete_doc:
    if (have_doc) yaml_document_delete(&doc);
delete_parser:
    yaml_parser_delete(&parser);
destroy_cfg:
    if (L.ld.status != PRT_OK) {
        prt__pcfg_destroy(cfg);
        return prt__err(out, L.ld.status, "%s", L.ld.msg);
    }
    *out = cfg;
    return PRT_OK;
}

static prt_status load_mem(const char *text, size_t len, const char *name, void *out)
{
    return prt__pcfg_load_mem(text, len, name, (prt_pcfg **)out);
}

prt_status prt__pcfg_load_file(const char *path, prt_pcfg **out)
{
    return prt__loader_load_file(path, out, load_mem);
}

void prt__pcfg_destroy(prt_pcfg *cfg)
{
    if (!cfg) return;
    prt__arena_free(&cfg->arena);
    prt__free(cfg);
}

/* ---- lookups ---------------------------------------------------------------------- */

const prt_pcfg_version *prt__pcfg_find_version(const prt_pcfg *cfg, const char *version)
{
    int i;
    if (!cfg || !version) return NULL;
    for (i = 0; i < cfg->nb_versions; i++)
        if (!strcmp(cfg->versions[i].version, version)) return &cfg->versions[i];
    return NULL;
}

const char *prt__pcfg_pair_get(const prt_pcfg_pair *p, int nb, const char *key)
{
    int i;
    for (i = 0; i < nb; i++)
        if (!strcmp(p[i].key, key)) return p[i].value;
    return NULL;
}

const prt_pcfg_count *prt__pcfg_count_get(const prt_pcfg_count *p, int nb, const char *key)
{
    int i;
    for (i = 0; i < nb; i++)
        if (!strcmp(p[i].key, key)) return &p[i];
    return NULL;
}

const prt_pcfg_range *prt__pcfg_range_get(const prt_pcfg_range *p, int nb, const char *name)
{
    int i;
    for (i = 0; i < nb; i++)
        if (!strcmp(p[i].name, name)) return &p[i];
    return NULL;
}

const prt_pcfg_option *prt__pcfg_option_get(const prt_pcfg_version *v, const char *name)
{
    int i;
    for (i = 0; i < v->nb_options; i++)
        if (!strcmp(v->options[i].name, name)) return &v->options[i];
    return NULL;
}

prt_status prt__pcfg_dtype(const char *name, prt_dtype *out)
{
    static const struct {
        const char *name;
        prt_dtype dt;
    } map[] = {
        {"float32", PRT_DTYPE_F32}, {"float", PRT_DTYPE_F32},   {"float16", PRT_DTYPE_F16},
        {"half", PRT_DTYPE_F16},    {"bfloat16", PRT_DTYPE_BF16}, {"int8", PRT_DTYPE_I8},
        {"uint8", PRT_DTYPE_U8},    {"int32", PRT_DTYPE_I32},   {"int64", PRT_DTYPE_I64},
        {"bool", PRT_DTYPE_BOOL},
    };
    size_t i;
    if (!name) return PRT_STATUS_INVALID_ARGUMENT;
    for (i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(map[i].name, name)) {
            *out = map[i].dt;
            return PRT_OK;
        }
    return PRT_STATUS_NOT_FOUND;
}

static int file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

int prt__pcfg_resolve_path(const prt_pcfg *cfg, const char *path, char *buf, size_t cap)
{
    const char *base;
    int n;
    if (!cfg || !path || !buf || cap == 0) return 0;
    if (path[0] != '/') {
        n = snprintf(buf, cap, "%s/%s", cfg->dir, path);
        if (n > 0 && (size_t)n < cap && file_exists(buf)) return 1;
        base = strrchr(path, '/');
        if (base) {
            n = snprintf(buf, cap, "%s/%s", cfg->dir, base + 1);
            if (n > 0 && (size_t)n < cap && file_exists(buf)) return 1;
        }
    }
    n = snprintf(buf, cap, "%s", path);
    if (n > 0 && (size_t)n < cap && file_exists(buf)) return 1;
    buf[0] = 0;
    return 0;
}

/* ---- checking input dims against a version --------------------------------------- */

prt_status prt__pcfg_check_inputs(const prt_pcfg_version *v, const prt_dimexpr_sym *syms, int nb_syms,
                                  int *nb_skipped, char *err, size_t err_cap)
{
    int i, k, skipped = 0;
    char sub[256];
    if (err && err_cap) err[0] = 0;
    if (!v || (nb_syms && !syms)) return PRT_STATUS_INVALID_ARGUMENT;
    for (i = 0; i < nb_syms; i++) {
        const prt_dimexpr_sym *s = &syms[i];
        const prt_pcfg_count *rank;
        const prt_pcfg_range *r;
        if (!in_list(v->inputs, v->nb_inputs, s->name)) continue;
        rank = prt__pcfg_count_get(v->input_dims, v->nb_input_dims, s->name);
        if (rank && rank->value != s->nb) {
            if (err) snprintf(err, err_cap, "input \"%s\" needs %lld dims (input_dims), found %d", s->name,
                              (long long)rank->value, s->nb);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        r = prt__pcfg_range_get(v->input_dim_ranges, v->nb_input_dim_ranges, s->name);
        if (!r) continue;
        for (k = 0; k < s->nb; k++) {
            const prt_pcfg_bound *lo = k < r->nb_min ? &r->min[k] : NULL;
            const prt_pcfg_bound *hi = k < r->nb_max ? &r->max[k] : NULL;
            if (!prt__pcfg_bounds_allow(lo, NULL, (double)s->values[k])) {
                if (err) snprintf(err, err_cap, "input \"%s\" dim %d = %lld breaks min \"%s\"", s->name, k,
                                  (long long)s->values[k], r->min_text);
                return PRT_STATUS_SHAPE_MISMATCH;
            }
            if (!prt__pcfg_bounds_allow(NULL, hi, (double)s->values[k])) {
                if (err) snprintf(err, err_cap, "input \"%s\" dim %d = %lld breaks max \"%s\"", s->name, k,
                                  (long long)s->values[k], r->max_text);
                return PRT_STATUS_SHAPE_MISMATCH;
            }
        }
    }
    for (i = 0; i < v->nb_input_dim_constraints; i++) {
        const char *c = v->input_dim_constraints[i];
        int holds = 0;
        prt_status st = prt__dimexpr_check(c, syms, nb_syms, &holds, sub, sizeof sub);
        if (st == PRT_STATUS_NOT_FOUND) {
            skipped++;
            continue;
        }
        if (st != PRT_OK) {
            if (err) snprintf(err, err_cap, "%s", sub);
            return st;
        }
        if (!holds) {
            if (err) snprintf(err, err_cap, "constraint \"%s\" is false", c);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
    }
    if (nb_skipped) *nb_skipped = skipped;
    return PRT_OK;
}
