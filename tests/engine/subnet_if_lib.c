/*
 * subnet_if_lib.c - a plugin library that runs one of two sub-networks by a
 * condition, like ONNX If, through the host's sub-network service (the host
 * table alone: plugrt/plugin.h, nothing of libplugrt linked).
 *
 *   "TestIf" v1 (namespace "test", field style, CPU)
 *   inputs:  cond (bool or int32, one element), x_1 .. x_n (n >= 1)
 *   outputs: y_1 .. y_m, m = field "nb_outputs" (1..8, <= n); y_k has the
 *            type and shape of x_k
 *   fields:  then_branch, else_branch: GRAPH, each a network whose inputs
 *            are x_1 .. x_n (by position) and whose outputs are y_1 .. y_m;
 *            nb_outputs: INT32; types: INT32 and min, opt, max: DIMS, one
 *            per x, written by configure (the build's input types and
 *            profile) and saved with the plugin.
 *
 * Build time (configure): both branches are built on the CPU for the
 * profile's ranges and their outputs checked against the declared ones, so a
 * wrong branch fails the build with the branch, the output and both shapes
 * named. Per context (attach_to_context): both branches are built for the
 * context's device with the saved profile. enqueue reads cond on the host and
 * runs the branch it picks on the layer's buffers. CUDA is refused at build
 * time: cond would have to be copied to the host, a synchronization inside
 * enqueue.
 */
#include <string.h>

#include "plugrt/plugin.h"

#define IF_MAX 8

typedef struct tif {
    prt_field_plugin base;
    prt_field_graph branch[2]; /* then, else: owned copies of name and body */
    int32_t nb_outputs;
    int32_t nb_ranges;         /* data inputs with a recorded profile; 0 before configure */
    int32_t types[IF_MAX];     /* their prt_dtype */
    prt_dims min[IF_MAX], opt[IF_MAX], max[IF_MAX];
    prt_subnet *net[2];        /* per-context instances only */
    prt_field ser[7];
} tif;

static const char *const branch_field[2] = {"then_branch", "else_branch"};

static const char *tif_name(const prt_field_plugin *p) { (void)p; return "TestIf"; }
static const char *tif_version(const prt_field_plugin *p) { (void)p; return "1"; }
static const char *tif_ns(const prt_field_plugin *p) { (void)p; return "test"; }
static int32_t tif_nb_outputs(const prt_field_plugin *p) { return ((const tif *)p)->nb_outputs; }

static void tif_destroy(prt_field_plugin *p)
{
    tif *t = (tif *)p;
    int k;
    for (k = 0; k < 2; k++) {
        prt_host_subnet_destroy(t->net[k]);
        prt_host_free((void *)t->branch[k].name);
        prt_host_free((void *)t->branch[k].data);
    }
    prt_host_free(t);
}

static const prt_field_plugin_ops tif_ops;

/* A plugin holding copies of both bodies and of the profile (no sub-engines). */
static tif *tif_new(const prt_field_graph *br, int32_t nb_outputs, int32_t nb_ranges, const int32_t *types,
                    const prt_dims *mn, const prt_dims *op, const prt_dims *mx)
{
    tif *t = prt_host_alloc(sizeof *t);
    int k;
    if (!t) return NULL;
    memset(t, 0, sizeof *t);
    t->base.ops = &tif_ops;
    t->nb_outputs = nb_outputs;
    t->nb_ranges = nb_ranges;
    for (k = 0; k < nb_ranges; k++) {
        t->types[k] = types[k];
        t->min[k] = mn[k];
        t->opt[k] = op[k];
        t->max[k] = mx[k];
    }
    for (k = 0; k < 2; k++) {
        size_t ln = strlen(br[k].name);
        char *name = prt_host_alloc(ln + 1);
        void *body = prt_host_alloc(br[k].size ? (size_t)br[k].size : 1);
        t->branch[k].name = name;
        t->branch[k].data = body;
        if (!name || !body) {
            tif_destroy(&t->base);
            return NULL;
        }
        memcpy(name, br[k].name, ln + 1);
        if (br[k].size) memcpy(body, br[k].data, (size_t)br[k].size);
        t->branch[k].format = br[k].format;
        t->branch[k].size = br[k].size;
    }
    return t;
}

static prt_status tif_clone(const prt_field_plugin *p, prt_field_plugin **out, prt_msg *err)
{
    const tif *s = (const tif *)p;
    tif *t = tif_new(s->branch, s->nb_outputs, s->nb_ranges, s->types, s->min, s->opt, s->max);
    if (!t) {
        prt_msg_set(err, "out of memory");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    *out = &t->base;
    return PRT_OK;
}

static prt_status tif_types(const prt_field_plugin *p, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                            int32_t nb_out, prt_msg *err)
{
    const tif *t = (const tif *)p;
    int32_t k;
    if (nb_in < 2 || nb_in - 1 > IF_MAX || nb_in - 1 < t->nb_outputs) {
        prt_msg_set(err, "needs cond and 1..%d data inputs, at least nb_outputs = %d of them; got %d inputs", IF_MAX,
                    (int)t->nb_outputs, (int)nb_in);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    if (in[0] != PRT_DTYPE_BOOL && in[0] != PRT_DTYPE_I32) {
        prt_msg_set(err, "cond must be bool or int32, got %s", prt_dtype_name(in[0]));
        return PRT_STATUS_TYPE_MISMATCH;
    }
    for (k = 0; k < nb_out; k++) out[k] = in[1 + k];
    return PRT_OK;
}

static prt_status tif_shapes(prt_field_plugin *p, const prt_dims_expr *in, int32_t nb_in, prt_dims_expr *out,
                             int32_t nb_out, prt_expr_builder *eb, prt_msg *err)
{
    int32_t k;
    (void)p; (void)eb;
    if (nb_in < 1 + nb_out) {
        prt_msg_set(err, "%d outputs need %d data inputs; got %d", (int)nb_out, (int)nb_out, (int)nb_in - 1);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    for (k = 0; k < nb_out; k++) out[k] = in[1 + k];
    return PRT_OK;
}

static int tif_supports(prt_field_plugin *p, int32_t pos, const prt_dyn_tensor_desc *io, int32_t nb_in,
                        int32_t nb_out, prt_device device)
{
    (void)p;
    if (device != PRT_DEVICE_CPU || io[pos].desc.format != PRT_FORMAT_LINEAR) return 0;
    if (pos == 0) return io[0].desc.dtype == PRT_DTYPE_BOOL || io[0].desc.dtype == PRT_DTYPE_I32;
    if (pos >= nb_in) return io[pos].desc.dtype == io[1 + pos - nb_in].desc.dtype;
    (void)nb_out;
    return 1;
}

static int tif_supports_v1(prt_field_plugin *p, int32_t pos, const prt_dyn_tensor_desc *io, int32_t nb_in,
                           int32_t nb_out)
{
    return tif_supports(p, pos, io, nb_in, nb_out, PRT_DEVICE_CPU);
}

/* Build both branches for `device` with the recorded profile into net[]. */
static prt_status tif_build_branches(const tif *t, prt_device device, int32_t cuda_device, prt_subnet **net,
                                     prt_msg *err)
{
    prt_dyn_tensor_desc in[IF_MAX];
    prt_subnet_config cfg;
    int32_t k;
    prt_status st;
    memset(in, 0, sizeof in);
    for (k = 0; k < t->nb_ranges; k++) {
        in[k].desc.dtype = (prt_dtype)t->types[k];
        in[k].desc.format = PRT_FORMAT_LINEAR;
        in[k].desc.dims = t->max[k];
        in[k].min = t->min[k];
        in[k].opt = t->opt[k];
        in[k].max = t->max[k];
    }
    memset(&cfg, 0, sizeof cfg);
    cfg.struct_size = sizeof cfg;
    cfg.abi_version = PRT_ABI_VERSION;
    cfg.device = device;
    cfg.cuda_device = cuda_device;
    cfg.nb_threads = 1;
    cfg.nb_inputs = t->nb_ranges;
    cfg.inputs = in;
    net[0] = net[1] = NULL;
    for (k = 0; k < 2; k++) {
        if ((st = prt_host_subnet_build(&t->branch[k], &cfg, &net[k], err)) != PRT_OK) {
            prt_host_subnet_destroy(net[0]);
            net[0] = NULL;
            return st;
        }
    }
    return PRT_OK;
}

static int dims_eq(const prt_dims *a, const prt_dims *b)
{
    int32_t i;
    if (a->nb != b->nb) return 0;
    for (i = 0; i < a->nb; i++)
        if (a->d[i] != b->d[i]) return 0;
    return 1;
}

/* Build time: record the profile, then check that each branch gives the
 * declared outputs over it. */
static prt_status tif_configure(prt_field_plugin *p, const prt_dyn_tensor_desc *in, int32_t nb_in,
                                const prt_dyn_tensor_desc *out, int32_t nb_out, prt_msg *err)
{
    tif *t = (tif *)p;
    prt_subnet *net[2];
    prt_dyn_tensor_desc io[2 * IF_MAX];
    int32_t k, b, nin = 0, nout = 0;
    prt_status st;
    char s1[96], s2[96];
    t->nb_ranges = nb_in - 1;
    for (k = 0; k < t->nb_ranges; k++) {
        t->min[k] = in[1 + k].min;
        t->opt[k] = in[1 + k].opt;
        t->max[k] = in[1 + k].max;
        t->types[k] = (int32_t)in[1 + k].desc.dtype;
    }
    if ((st = tif_build_branches(t, PRT_DEVICE_CPU, 0, net, err)) != PRT_OK) return st;
    for (b = 0; b < 2 && st == PRT_OK; b++) {
        if ((st = prt_host_subnet_describe(net[b], &nin, &nout, io, 2 * IF_MAX)) != PRT_OK) {
            prt_msg_set(err, "%s: describing the sub-network failed", branch_field[b]);
            break;
        }
        if (nout != nb_out) {
            prt_msg_set(err, "%s \"%s\" has %d outputs; the layer has %d", branch_field[b], t->branch[b].name,
                        (int)nout, (int)nb_out);
            st = PRT_STATUS_SHAPE_MISMATCH;
            break;
        }
        for (k = 0; k < nb_out && st == PRT_OK; k++) {
            const prt_dyn_tensor_desc *o = &io[nin + k];
            if (o->desc.dtype != out[k].desc.dtype) {
                prt_msg_set(err, "%s \"%s\" output %d is %s; the layer's output %d is %s", branch_field[b],
                            t->branch[b].name, (int)k, prt_dtype_name(o->desc.dtype), (int)k,
                            prt_dtype_name(out[k].desc.dtype));
                st = PRT_STATUS_TYPE_MISMATCH;
            } else if (!dims_eq(&o->min, &out[k].min) || !dims_eq(&o->max, &out[k].max) ||
                       !dims_eq(&o->opt, &out[k].opt)) {
                int at_min = !dims_eq(&o->min, &out[k].min);
                prt_msg_set(err, "%s \"%s\" output %d is %s at the profile's %s inputs; the layer's output %d is %s",
                            branch_field[b], t->branch[b].name, (int)k,
                            prt_host_dims_str(at_min ? &o->min : &o->max, s1, sizeof s1), at_min ? "min" : "max",
                            (int)k, prt_host_dims_str(at_min ? &out[k].min : &out[k].max, s2, sizeof s2));
                st = PRT_STATUS_SHAPE_MISMATCH;
            }
        }
    }
    prt_host_subnet_destroy(net[0]);
    prt_host_subnet_destroy(net[1]);
    return st;
}

static prt_status tif_attach(prt_field_plugin *p, prt_plugin_context *ctx, prt_field_plugin **out, prt_msg *err)
{
    const tif *s = (const tif *)p;
    tif *t;
    prt_status st;
    if (s->nb_ranges == 0) {
        prt_msg_set(err, "no profile recorded (fields types, min, opt, max are written by configure at build time)");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    if ((st = tif_clone(p, out, err)) != PRT_OK) return st;
    t = (tif *)*out;
    if ((st = tif_build_branches(t, ctx->device, ctx->cuda_device, t->net, err)) != PRT_OK) {
        tif_destroy(*out);
        *out = NULL;
    }
    return st;
}

static prt_status tif_on_shape_change(prt_field_plugin *p, const prt_tensor_desc *in, int32_t nb_in,
                                      const prt_tensor_desc *out, int32_t nb_out, prt_msg *err)
{
    char b[96];
    (void)p; (void)nb_in; (void)out; (void)nb_out;
    if (prt_dims_volume(&in[0].dims) != 1) {
        prt_msg_set(err, "cond must hold one element, got %s", prt_host_dims_str(&in[0].dims, b, sizeof b));
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    return PRT_OK;
}

static prt_status tif_enqueue(prt_field_plugin *p, const prt_tensor_desc *ind, const prt_tensor_desc *outd,
                              const void *const *inputs, void *const *outputs, void *ws, prt_exec *ex)
{
    tif *t = (tif *)p;
    char msg[1024];
    prt_msg m = {msg, sizeof msg};
    prt_tensor_desc od[IF_MAX];
    int32_t k, pick;
    prt_status st;
    (void)ws;
    if (ex->device != PRT_DEVICE_CPU || !t->net[0]) {
        ex->set_error(ex, "TestIf runs on the CPU, after attach_to_context");
        return PRT_STATUS_UNSUPPORTED;
    }
    pick = ind[0].dtype == PRT_DTYPE_BOOL ? *(const uint8_t *)inputs[0] != 0 : *(const int32_t *)inputs[0] != 0;
    pick = pick ? 0 : 1; /* true: then_branch */
    for (k = 0; k < t->nb_outputs; k++) od[k] = outd[k];
    msg[0] = 0;
    st = prt_host_subnet_run(t->net[pick], &ind[1], &inputs[1], t->nb_ranges, od, outputs, t->nb_outputs,
                             ex->cuda_stream, &m);
    if (st != PRT_OK) {
        ex->set_error(ex, msg);
        return st;
    }
    for (k = 0; k < t->nb_outputs; k++)
        if (!dims_eq(&od[k].dims, &outd[k].dims)) {
            char a[96], b[96];
            snprintf(msg, sizeof msg, "%s output %d came out %s; the layer's output is %s", branch_field[pick],
                     (int)k, prt_host_dims_str(&od[k].dims, a, sizeof a), prt_host_dims_str(&outd[k].dims, b, sizeof b));
            ex->set_error(ex, msg);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
    return PRT_OK;
}

static prt_status tif_fields(prt_field_plugin *p, prt_fields *out, prt_msg *err)
{
    tif *t = (tif *)p;
    int k, n = 0;
    (void)err;
    memset(t->ser, 0, sizeof t->ser);
    for (k = 0; k < 2; k++) {
        t->ser[n].name = branch_field[k];
        t->ser[n].type = PRT_FIELD_GRAPH;
        t->ser[n].data = &t->branch[k];
        t->ser[n++].count = 1;
    }
    t->ser[n].name = "nb_outputs";
    t->ser[n].type = PRT_FIELD_INT32;
    t->ser[n].data = &t->nb_outputs;
    t->ser[n++].count = 1;
    if (t->nb_ranges) {
        static const char *const nm[3] = {"min", "opt", "max"};
        t->ser[n].name = "types";
        t->ser[n].type = PRT_FIELD_INT32;
        t->ser[n].data = t->types;
        t->ser[n++].count = t->nb_ranges;
        const prt_dims *v[3] = {t->min, t->opt, t->max};
        for (k = 0; k < 3; k++) {
            t->ser[n].name = nm[k];
            t->ser[n].type = PRT_FIELD_DIMS;
            t->ser[n].data = v[k];
            t->ser[n++].count = t->nb_ranges;
        }
    }
    out->fields = t->ser;
    out->nb = n;
    out->reserved_ = 0;
    return PRT_OK;
}

static const prt_plugin_core_ops tif_core = {
    .struct_size = sizeof(prt_plugin_core_ops), .abi_version = PRT_ABI_VERSION,
    .get_name = tif_name, .get_version = tif_version, .get_namespace = tif_ns};
static const prt_plugin_build_ops tif_build = {
    .struct_size = sizeof(prt_plugin_build_ops), .abi_version = PRT_ABI_VERSION,
    .get_nb_outputs = tif_nb_outputs, .get_output_data_types = tif_types, .get_output_shapes = tif_shapes,
    .supports_format_combination = tif_supports_v1, .configure = tif_configure,
    .supports_format_combination_v2 = tif_supports};
static const prt_plugin_runtime_ops tif_runtime = {
    .struct_size = sizeof(prt_plugin_runtime_ops), .abi_version = PRT_ABI_VERSION,
    .on_shape_change = tif_on_shape_change, .enqueue = tif_enqueue, .attach_to_context = tif_attach,
    .get_fields_to_serialize = tif_fields};
static const prt_field_plugin_ops tif_ops = {
    .struct_size = sizeof(prt_field_plugin_ops), .abi_version = PRT_ABI_VERSION,
    .core = &tif_core, .build = &tif_build, .runtime = &tif_runtime, .clone = tif_clone, .destroy = tif_destroy};

static prt_status tif_create(const prt_plugin_creator *c, const prt_fields *fc, prt_phase phase,
                             prt_field_plugin **out, prt_msg *err)
{
    prt_field_graph br[2];
    prt_dims mn[IF_MAX], op[IF_MAX], mx[IF_MAX];
    int32_t ty[IF_MAX];
    const prt_field *fmin = prt_fields_find(fc, "min"), *fopt = prt_fields_find(fc, "opt"),
                    *fmax = prt_fields_find(fc, "max"), *fty = prt_fields_find(fc, "types");
    int32_t k, n = fmin ? (int32_t)fmin->count : 0;
    tif *t;
    (void)c; (void)phase;
    for (k = 0; k < 2; k++) br[k] = *prt_field_get_graph(prt_fields_find(fc, branch_field[k]), 0);
    if ((fopt ? fopt->count : 0) != n || (fmax ? fmax->count : 0) != n || (fty ? fty->count : 0) != n) {
        prt_msg_set(err, "fields types, min, opt and max need one entry per data input each; got %d, %d, %d, %d",
                    fty ? (int)fty->count : 0, (int)n, fopt ? (int)fopt->count : 0, fmax ? (int)fmax->count : 0);
        return PRT_STATUS_INVALID_FIELD;
    }
    for (k = 0; k < n; k++) {
        ty[k] = ((const int32_t *)fty->data)[k];
        mn[k] = ((const prt_dims *)fmin->data)[k];
        op[k] = ((const prt_dims *)fopt->data)[k];
        mx[k] = ((const prt_dims *)fmax->data)[k];
    }
    t = tif_new(br, (int32_t)prt_fields_i64(fc, "nb_outputs", 0, 1), n, ty, mn, op, mx);
    if (!t) {
        prt_msg_set(err, "out of memory");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    *out = &t->base;
    return PRT_OK;
}

static const int32_t one = 1;
static const prt_field_schema tif_schema[] = {
    {.name = "then_branch", .type = PRT_FIELD_GRAPH, .required = 1, .min_count = 1, .max_count = 1,
     .doc = "the network run when cond is true"},
    {.name = "else_branch", .type = PRT_FIELD_GRAPH, .required = 1, .min_count = 1, .max_count = 1,
     .doc = "the network run when cond is false"},
    {.name = "nb_outputs", .type = PRT_FIELD_INT32, .min_count = 1, .max_count = 1, .default_data = &one,
     .default_count = 1, .bounds = PRT_BOUND_MIN | PRT_BOUND_MAX, .min = 1, .max = IF_MAX,
     .doc = "outputs of each branch"},
    {.name = "types", .type = PRT_FIELD_INT32, .min_count = 0, .max_count = IF_MAX,
     .doc = "prt_dtype of each data input (set by configure)"},
    {.name = "min", .type = PRT_FIELD_DIMS, .min_count = 0, .max_count = IF_MAX, .doc = "profile (set by configure)"},
    {.name = "opt", .type = PRT_FIELD_DIMS, .min_count = 0, .max_count = IF_MAX, .doc = "profile (set by configure)"},
    {.name = "max", .type = PRT_FIELD_DIMS, .min_count = 0, .max_count = IF_MAX, .doc = "profile (set by configure)"},
};

static const prt_plugin_creator tif_creator = {
    .struct_size = sizeof(prt_plugin_creator), .abi_version = PRT_ABI_VERSION, .name = "TestIf", .version = "1",
    .plugin_namespace = "test", .style = PRT_STYLE_FIELD, .nb_fields = 7, .fields = tif_schema,
    .field_schema_size = sizeof(prt_field_schema), .create_field = tif_create,
    .doc = "runs then_branch or else_branch by cond (ONNX If-like), through the host's sub-network service"};

PRT_REGISTER_CREATOR(tif_creator)
