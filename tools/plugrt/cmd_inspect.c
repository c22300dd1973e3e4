/* tools/plugrt/cmd_inspect.c - `plugrt inspect model.plan [--json]`.
 *
 * Describes the plan through the public plugrt/inspect.h, which re-creates
 * no plugin, so a plan can be described on a machine that lacks them. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "clionnx.h"
#include "cliutil.h"
#include "plugrt/inspect.h"

static const char *role_name(prt_tensor_role r)
{
    static const char *const n[] = {"input", "output", "activation", "constant"};
    return (unsigned)r < 4 ? n[r] : "?";
}

static cJSON *dims_json(const prt_dims *d)
{
    cJSON *a = cJSON_CreateArray();
    int32_t i;
    for (i = 0; a && i < d->nb; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber((double)d->d[i]));
    return a;
}

static prt_plan_tensor tensor_at(const prt_plan_info *pi, int32_t i)
{
    prt_plan_tensor t;
    memset(&t, 0, sizeof t);
    t.struct_size = (uint32_t)sizeof t;
    if (prt_plan_info_tensor(pi, i, &t) != PRT_OK) t.name = "?";
    return t;
}

static prt_plan_layer layer_at(const prt_plan_info *pi, int32_t i)
{
    prt_plan_layer l;
    memset(&l, 0, sizeof l);
    l.struct_size = (uint32_t)sizeof l;
    if (prt_plan_info_layer(pi, i, &l) != PRT_OK) l.name = "?";
    return l;
}

static prt_plan_folded folded_at(const prt_plan_info *pi, int32_t i)
{
    static const char *const none[1] = {""};
    prt_plan_folded f;
    memset(&f, 0, sizeof f);
    f.struct_size = (uint32_t)sizeof f;
    if (prt_plan_info_folded(pi, i, &f) != PRT_OK) {
        f.layer = f.plugin = f.version = "?";
        f.nb_outputs = 0;
        f.outputs = none;
    }
    return f;
}

static const char *tactic_source_name(prt_tactic_source s)
{
    static const char *const n[] = {"timed", "timing cache", "only one", "timing off", "no device", "all failed"};
    return (unsigned)s < 6 ? n[s] : "?";
}

static cJSON *tactic_json(const prt_plan_layer *l)
{
    cJSON *o = cJSON_CreateObject(), *arr;
    int32_t j;
    cJSON_AddNumberToObject(o, "id", (double)l->tactic);
    cJSON_AddStringToObject(o, "name", l->tactic_name ? l->tactic_name : "");
    cJSON_AddStringToObject(o, "source", tactic_source_name(l->tactic_source));
    arr = cJSON_AddArrayToObject(o, "candidates");
    for (j = 0; j < l->nb_tactics; j++) {
        cJSON *c = cJSON_CreateObject();
        uint64_t ns = l->tactic_ns[j];
        cJSON_AddNumberToObject(c, "id", (double)l->tactic_ids[j]);
        if (ns == UINT64_MAX) cJSON_AddBoolToObject(c, "failed", 1);
        else if (ns) cJSON_AddNumberToObject(c, "time_ns", (double)ns);
        else cJSON_AddNullToObject(c, "time_ns");
        cJSON_AddItemToArray(arr, c);
    }
    return o;
}

/* "       tactic 2 (fast), timed; candidates 1: 1.204 ms, 2: 13.000 us" */
static void print_tactic(const prt_plan_layer *l)
{
    int32_t j;
    printf("       tactic %d", (int)l->tactic);
    if (l->tactic_name && l->tactic_name[0]) printf(" (%s)", prt__cliutil_esc(l->tactic_name));
    printf(", %s; candidates", tactic_source_name(l->tactic_source));
    for (j = 0; j < l->nb_tactics; j++) {
        uint64_t ns = l->tactic_ns[j];
        printf("%s %d", j ? "," : "", (int)l->tactic_ids[j]);
        if (ns == UINT64_MAX) printf(": failed");
        else if (ns >= 1000000u) printf(": %.3f ms", (double)ns * 1e-6);
        else if (ns) printf(": %.3f us", (double)ns * 1e-3);
    }
    printf("\n");
}

static const char *tensor_name(const prt_plan_info *pi, int32_t i)
{
    return tensor_at(pi, i).name;
}

static int print_json(const prt_plan_info *pi, const prt_plan_summary *s)
{
    cJSON *root = cJSON_CreateObject(), *arr, *o;
    int32_t i, j;
    char *txt;
    cJSON_AddNumberToObject(root, "read_version", (double)s->read_version);
    cJSON_AddNumberToObject(root, "write_version", (double)s->write_version);
    cJSON_AddStringToObject(root, "library_version", s->library_version);
    cJSON_AddStringToObject(root, "precision", s->precision ? "fp16" : "fp32");
    cJSON_AddStringToObject(root, "device", s->device ? "cuda" : "cpu");
    cJSON_AddNumberToObject(root, "workspace_limit", (double)s->workspace_limit);
    arr = cJSON_AddArrayToObject(root, "tensors");
    for (i = 0; i < s->nb_tensors; i++) {
        prt_plan_tensor t = tensor_at(pi, i);
        o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", t.name);
        cJSON_AddStringToObject(o, "role", role_name(t.role));
        cJSON_AddStringToObject(o, "dtype", prt_dtype_name(t.dtype));
        cJSON_AddStringToObject(o, "format", prt_format_name(t.format));
        cJSON_AddItemToObject(o, "dims", dims_json(&t.dims));
        cJSON_AddItemToObject(o, "min", dims_json(&t.min));
        cJSON_AddItemToObject(o, "opt", dims_json(&t.opt));
        cJSON_AddItemToObject(o, "max", dims_json(&t.max));
        cJSON_AddNumberToObject(o, "offset", (double)t.offset);
        cJSON_AddNumberToObject(o, "bytes", (double)t.bytes);
        if (t.nb_values >= 0) cJSON_AddNumberToObject(o, "shape_values", (double)t.nb_values);
        if (t.nb_values >= 0 && t.role == PRT_TENSOR_INPUT) {
            cJSON_AddItemToObject(o, "values_min", dims_json(&t.values_min));
            cJSON_AddItemToObject(o, "values_opt", dims_json(&t.values_opt));
            cJSON_AddItemToObject(o, "values_max", dims_json(&t.values_max));
        }
        cJSON_AddItemToArray(arr, o);
    }
    arr = cJSON_AddArrayToObject(root, "layers");
    for (i = 0; i < s->nb_layers; i++) {
        prt_plan_layer l = layer_at(pi, i);
        cJSON *ins, *outs;
        o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", l.name);
        if (l.kind == PRT_LAYER_PLUGIN) {
            cJSON_AddStringToObject(o, "kind", "plugin");
            cJSON_AddStringToObject(o, "plugin", l.plugin);
            cJSON_AddStringToObject(o, "version", l.version);
            cJSON_AddStringToObject(o, "namespace", l.plugin_namespace);
            cJSON_AddStringToObject(o, "style", l.style == PRT_STYLE_BLOB ? "blob" : "field");
            cJSON_AddStringToObject(o, "library", l.owner);
            cJSON_AddNumberToObject(o, "record_bytes", (double)l.record_bytes);
        } else {
            cJSON_AddStringToObject(o, "kind", "cast");
            cJSON_AddStringToObject(o, "from", prt_dtype_name(l.cast_from));
            cJSON_AddStringToObject(o, "to", prt_dtype_name(l.cast_to));
        }
        ins = cJSON_AddArrayToObject(o, "inputs");
        for (j = 0; j < l.nb_inputs; j++) /* "" for an absent optional input */
            cJSON_AddItemToArray(ins, cJSON_CreateString(l.inputs[j] < 0 ? "" : tensor_name(pi, l.inputs[j])));
        outs = cJSON_AddArrayToObject(o, "outputs");
        for (j = 0; j < l.nb_outputs; j++)
            cJSON_AddItemToArray(outs, cJSON_CreateString(tensor_name(pi, l.outputs[j])));
        cJSON_AddNumberToObject(o, "workspace", (double)l.workspace);
        if (l.tactic) cJSON_AddItemToObject(o, "tactic", tactic_json(&l));
        cJSON_AddItemToArray(arr, o);
    }
    arr = cJSON_AddArrayToObject(root, "folded");
    for (i = 0; i < s->nb_folded; i++) {
        prt_plan_folded f = folded_at(pi, i);
        cJSON *outs;
        o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "layer", f.layer);
        cJSON_AddStringToObject(o, "plugin", f.plugin);
        cJSON_AddStringToObject(o, "version", f.version);
        outs = cJSON_AddArrayToObject(o, "outputs");
        for (j = 0; j < f.nb_outputs; j++) cJSON_AddItemToArray(outs, cJSON_CreateString(f.outputs[j]));
        cJSON_AddItemToArray(arr, o);
    }
    o = cJSON_AddObjectToObject(root, "memory");
    cJSON_AddNumberToObject(o, "arena_bytes", (double)s->arena_bytes);
    cJSON_AddNumberToObject(o, "workspace_bytes", (double)s->workspace_bytes);
    cJSON_AddNumberToObject(o, "weight_bytes", (double)s->weight_bytes);
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

#define ESC prt__cliutil_esc

static void print_text(const prt_plan_info *pi, const prt_plan_summary *s, const char *path)
{
    int32_t i, j;
    char d0[160], d1[160], d2[160], d3[160];
    printf("plan %s: %" PRIu64 " bytes, format read version %u, write version %u, written by plugrt %s\n", ESC(path),
           s->plan_bytes, (unsigned)s->read_version, (unsigned)s->write_version, ESC(s->library_version));
    printf("builder: precision %s, device %s, workspace limit ", s->precision ? "fp16" : "fp32",
           s->device ? "cuda" : "cpu");
    if (s->workspace_limit) printf("%" PRIu64 " bytes\n", s->workspace_limit);
    else printf("none\n");
    printf("\ninputs and outputs (dims; profile min / opt / max):\n");
    for (i = 0; i < s->nb_tensors; i++) {
        prt_plan_tensor t = tensor_at(pi, i);
        if (t.role != PRT_TENSOR_INPUT && t.role != PRT_TENSOR_OUTPUT) continue;
        printf("  %-6s %-20s %-4s %s  %s / %s / %s\n", role_name(t.role), ESC(t.name), prt_dtype_name(t.dtype),
               prt_dims_str(&t.dims, d0, sizeof d0), prt_dims_str(&t.min, d1, sizeof d1),
               prt_dims_str(&t.opt, d2, sizeof d2), prt_dims_str(&t.max, d3, sizeof d3));
        if (t.nb_values >= 0 && t.role == PRT_TENSOR_INPUT)
            printf("         shape values %s / %s / %s\n", prt_dims_str(&t.values_min, d1, sizeof d1),
                   prt_dims_str(&t.values_opt, d2, sizeof d2), prt_dims_str(&t.values_max, d3, sizeof d3));
    }
    printf("\nlayers (execution order):\n");
    for (i = 0; i < s->nb_layers; i++) {
        prt_plan_layer l = layer_at(pi, i);
        if (l.kind == PRT_LAYER_PLUGIN) {
            printf("  %2d %-20s %s%s%s v%s (%s style, from \"%s\", record %" PRIu64 " bytes)", (int)i, ESC(l.name),
                   ESC(l.plugin_namespace), l.plugin_namespace[0] ? "::" : "", ESC(l.plugin), ESC(l.version),
                   l.style == PRT_STYLE_BLOB ? "blob" : "field", ESC(l.owner), l.record_bytes);
        } else {
            printf("  %2d %-20s cast %s -> %s", (int)i, ESC(l.name), prt_dtype_name(l.cast_from), prt_dtype_name(l.cast_to));
        }
        printf("\n       in:");
        for (j = 0; j < l.nb_inputs; j++) printf(" %s", l.inputs[j] < 0 ? "(absent)" : ESC(tensor_name(pi, l.inputs[j])));
        printf("  out:");
        for (j = 0; j < l.nb_outputs; j++) printf(" %s", ESC(tensor_name(pi, l.outputs[j])));
        if (l.workspace) printf("  workspace %" PRIu64 " bytes", l.workspace);
        printf("\n");
        if (l.tactic) print_tactic(&l);
    }
    printf("\nmemory plan: arena %" PRIu64 " bytes, workspace %" PRIu64 " bytes, weights %" PRIu64 " bytes\n",
           s->arena_bytes, s->workspace_bytes, s->weight_bytes);
    for (i = 0; i < s->nb_tensors; i++) {
        prt_plan_tensor t = tensor_at(pi, i);
        if (t.role != PRT_TENSOR_ACTIVATION && t.role != PRT_TENSOR_CONSTANT) continue;
        printf("  %-10s %-20s %-4s max %-16s %s offset %8" PRIu64 ", %8" PRIu64 " bytes\n", role_name(t.role), ESC(t.name),
               prt_dtype_name(t.dtype), prt_dims_str(&t.max, d0, sizeof d0),
               t.role == PRT_TENSOR_CONSTANT ? "weights" : "arena  ", t.offset, t.bytes);
    }
    if (s->nb_folded) printf("\nfolded at build time (layers that read only constants, now weights):\n");
    for (i = 0; i < s->nb_folded; i++) {
        prt_plan_folded f = folded_at(pi, i);
        printf("  %-20s %s v%s ->", ESC(f.layer), ESC(f.plugin), ESC(f.version));
        for (j = 0; j < f.nb_outputs; j++) printf(" %s", ESC(f.outputs[j]));
        printf("\n");
    }
}

static const char inspect_usage[] =
    "usage: plugrt inspect model.plan|model.onnx [--json] [--load LIB ...] [--profile name:MIN,OPT,MAX ...]\n"
    "  model.onnx: inputs/outputs, opsets, op counts and every node that cannot be imported, with the reason\n";

int prt_cli_inspect(int argc, char **argv)
{
    const char *path = NULL;
    int json = 0, i, rc = 1, nb_ranges = 0;
    prt_plan_info *pi = NULL;
    prt_plan_summary sum;
    char err[2048];
    prt_registry *reg = NULL;
    prt_profile_range *ranges = calloc((size_t)argc + 1, sizeof *ranges);
    if (!ranges || prt_registry_create(prt_registry_global(), &reg) != PRT_OK) {
        fprintf(stderr, "plugrt inspect: out of memory\n");
        free(ranges);
        return 1;
    }
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            printf("%s", inspect_usage);
            rc = 0;
            goto done;
        } else if (strcmp(argv[i], "--load") == 0 && i + 1 < argc) {
            prt_library *lib = NULL;
            if (prt_registry_load_library(reg, argv[++i], &lib) != PRT_OK) {
                fprintf(stderr, "plugrt inspect: %s\n", prt_registry_last_error(reg));
                goto done;
            }
        } else if (strcmp(argv[i], "--profile") == 0 && i + 1 < argc) {
            if (!prt__clionnx_parse_profile(argv[++i], &ranges[nb_ranges++])) {
                fprintf(stderr, "plugrt inspect: --profile takes name:MIN,OPT,MAX, got \"%s\"\n", argv[i]);
                rc = 2;
                goto done;
            }
        } else if (argv[i][0] == '-' || path) {
            fprintf(stderr, "plugrt inspect: unexpected argument \"%s\"\n%s", argv[i], inspect_usage);
            rc = 2;
            goto done;
        } else {
            path = argv[i];
        }
    }
    if (!path) {
        fprintf(stderr, "%s", inspect_usage);
        rc = 2;
        goto done;
    }
    if (prt__clionnx_is_onnx(path)) {
        prt_builder_config bc;
        prt_builder_config_init(&bc);
        bc.nb_ranges = nb_ranges;
        bc.ranges = ranges;
        rc = prt__clionnx_inspect(reg, path, &bc, json);
        goto done;
    }
    err[0] = 0;
    if (prt_plan_info_load(path, &pi, err, sizeof err) != PRT_OK) {
        fprintf(stderr, "plugrt inspect: %s\n", err);
        goto done;
    }
    memset(&sum, 0, sizeof sum);
    sum.struct_size = (uint32_t)sizeof sum;
    if (prt_plan_info_summary(pi, &sum) != PRT_OK) goto done;
    if (json) {
        rc = print_json(pi, &sum);
    } else {
        print_text(pi, &sum, path);
        rc = 0;
    }
done:
    prt_plan_info_destroy(pi);
    prt_registry_destroy(reg);
    free(ranges);
    return rc;
}
