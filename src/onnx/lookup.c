/* onnx/lookup.c - which creator serves a node: ONNX ops by (op type,
 * domain, largest decimal version <= opset), then the custom-op fallback
 * with its alias table (docs/onnx.md). Written over the registry's public
 * enumeration. */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "onnx/onnx_impl.h"

/* Exporters' names that differ from the plugins registered here. Each entry:
 * the (domain, op type) an exporter writes, the plugin and namespace that
 * serve it, and attribute renames. Kept in step with docs/onnx.md. */
static const char *const mmcv_dcn_renames[] = {"groups", "group", "deform_groups", "deformable_group", NULL};
static const prt__onnx_alias aliases[] = {
    {.domain = "mmcv", .op_type = "MMCVModulatedDeformConv2d", .plugin = "ModulatedDeformConv2d",
     .plugin_namespace = "", .renames = mmcv_dcn_renames},
    {.domain = "", .op_type = "MMCVModulatedDeformConv2d", .plugin = "ModulatedDeformConv2d",
     .plugin_namespace = "", .renames = mmcv_dcn_renames},
};

static int ns_is_default(const char *d) { return !d || !d[0] || strcmp(d, "ai.onnx") == 0; }

static int same_ns(const char *a, const char *b)
{
    if (ns_is_default(a) || ns_is_default(b)) return ns_is_default(a) && ns_is_default(b);
    return strcmp(a, b) == 0;
}

/* A decimal version string ("13"), without sign or leading zeros; -1 else. */
static int64_t decimal_version(const char *v)
{
    int64_t x = 0;
    const char *p;
    if (!v || !v[0] || (v[0] == '0' && v[1])) return -1;
    for (p = v; *p; p++) {
        if (!isdigit((unsigned char)*p) || x > 100000000) return -1;
        x = x * 10 + (*p - '0');
    }
    return x;
}

static prt_status list_all(prt_registry *r, prt_creator_info **out, int32_t *nb)
{
    prt_creator_info *l;
    int32_t n = 0, got = 0;
    if (prt_registry_list(r, NULL, 0, &n) != PRT_OK) return PRT_STATUS_INTERNAL;
    l = prt__calloc((size_t)n + 1, sizeof *l);
    if (!l) return PRT_STATUS_OUT_OF_MEMORY;
    if (prt_registry_list(r, l, n, &got) != PRT_OK) {
        prt__free(l);
        return PRT_STATUS_INTERNAL;
    }
    *out = l;
    *nb = got < n ? got : n;
    return PRT_OK;
}

const prt_plugin_creator *prt__onnx_find_versioned(prt_registry *r, const char *name, const char *ns,
                                                   int64_t max_version)
{
    prt_creator_info *l = NULL;
    const prt_plugin_creator *best = NULL;
    int64_t best_v = -1;
    int32_t n = 0, i;
    if (list_all(r, &l, &n) != PRT_OK) return NULL;
    for (i = 0; i < n; i++) {
        const prt_plugin_creator *c = l[i].creator;
        int64_t v;
        if (l[i].shadowed || strcmp(c->name, name) != 0 || !same_ns(c->plugin_namespace, ns)) continue;
        v = decimal_version(c->version);
        if (v < 0 || v > max_version) continue;
        if (v > best_v) {
            best_v = v;
            best = c;
        }
    }
    prt__free(l);
    return best;
}

static const PrtOnnx__Attribute *attr(const PrtOnnx__Node *n, const char *name)
{
    size_t i;
    for (i = 0; i < n->n_attribute; i++)
        if (strcmp(n->attribute[i]->name, name) == 0) return n->attribute[i];
    return NULL;
}

/* The string value of attribute `name`, or NULL when absent or not a string. */
static const char *attr_str(const PrtOnnx__Node *n, const char *name, char *buf, size_t cap)
{
    const PrtOnnx__Attribute *a = attr(n, name);
    size_t len;
    if (!a || !a->has_s) return NULL;
    len = a->s.len < cap - 1 ? a->s.len : cap - 1;
    memcpy(buf, a->s.data, len);
    buf[len] = 0;
    return buf;
}

/* Case-insensitive equality, for near misses. */
static int iequal(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return 0;
    return !*a && !*b;
}

prt_status prt__onnx_lookup(prt_registry *r, const PrtOnnx__Node *node, const char *label, int64_t opset,
                            prt__onnx_found *out, char *err, size_t cap)
{
    const char *op = prt__onnx_s(node->op_type), *domain = prt__onnx_s(node->domain);
    const prt_plugin_creator *c;
    char vbuf[64], nbuf[256];
    const char *pv, *pns;
    prt_creator_info *l = NULL;
    prt__text t;
    int32_t n = 0, i, shown = 0;
    size_t k;

    memset(out, 0, sizeof *out);
    /* 1. the ONNX op itself, by opset */
    if (opset > 0 && (c = prt__onnx_find_versioned(r, op, ns_is_default(domain) ? "" : domain, opset))) {
        out->creator = c;
        return PRT_OK;
    }
    pv = attr_str(node, "plugin_version", vbuf, sizeof vbuf);
    pns = attr_str(node, "plugin_namespace", nbuf, sizeof nbuf);
    /* an ONNX op whose every version here is newer than the model's opset */
    if (!pv && !pns && ns_is_default(domain) && prt__onnx_find_versioned(r, op, "", INT64_MAX))
        goto nobody;
    /* 2. custom op: op type with plugin_version / plugin_namespace, else the domain, else "" */
    {
        const char *nss[2] = {pns ? pns : domain, ""};
        int nb_ns = pns || ns_is_default(domain) ? 1 : 2, j;
        for (j = 0; j < nb_ns; j++) {
            if (pv) {
                if (prt_registry_find(r, op, pv, nss[j], &c, NULL) == PRT_OK) goto custom;
            } else if ((c = prt__onnx_find_versioned(r, op, nss[j], INT64_MAX))) {
                goto custom;
            }
        }
    }
    /* 3. the alias table */
    for (k = 0; k < sizeof aliases / sizeof aliases[0]; k++) {
        const prt__onnx_alias *a = &aliases[k];
        if (strcmp(a->op_type, op) != 0 || !same_ns(a->domain, domain)) continue;
        if (pv ? prt_registry_find(r, a->plugin, pv, a->plugin_namespace, &c, NULL) == PRT_OK
               : (c = prt__onnx_find_versioned(r, a->plugin, a->plugin_namespace, INT64_MAX)) != NULL) {
            out->alias = a;
            goto custom;
        }
    }
nobody: /* name node, op, domain, opset and the near misses */
    t = prt__text_init(err, cap);
    prt__text_add(&t, "node %s: no plugin provides op %s of domain \"%s\" at opset %" PRId64, label, op,
                  ns_is_default(domain) ? "" : domain, opset);
    if (pv || pns)
        prt__text_add(&t, " (plugin_version \"%s\", plugin_namespace \"%s\")", pv ? pv : "", pns ? pns : "");
    if (list_all(r, &l, &n) == PRT_OK) {
        for (i = 0; i < n; i++) {
            const prt_plugin_creator *x = l[i].creator;
            if (!iequal(x->name, op) || l[i].shadowed) continue;
            prt__text_add(&t, "%s %s v%s (namespace \"%s\")", shown ? "," : "; near misses:", x->name, x->version,
                          x->plugin_namespace);
            shown++;
        }
        prt__free(l);
    }
    if (!shown) prt__text_add(&t, "; nothing of that name is registered (a plugin library may provide it: --load)");
    return PRT_STATUS_NOT_FOUND;
custom:
    out->creator = c;
    out->custom = 1;
    return PRT_OK;
}
