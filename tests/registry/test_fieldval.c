/* Compound field types (strings, tensors, sub-graphs): schema checks with
 * messages, deep copies in normalized collections, and each type through
 * create -> serialize -> load: a network (C API and JSON, with .npy-backed
 * fields) is built into a plan, the plan is written and read back, and the
 * plugin re-created from it receives the same values. */
#include <stdlib.h>
#include <unistd.h>

#include "core/core.h"
#include "plugrt/engine.h"
#include "plugrt/npy.h"
#include "plugrt/plugrt.h"
#include "fld.h"
#include "prt_test.h"
#include "registry/fieldser.h"

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/lsan_interface.h>
#define CHECK_NO_LEAKS() CHECK(__lsan_do_recoverable_leak_check() == 0)
#else
#define CHECK_NO_LEAKS() ((void)0)
#endif

/* ---- the probe plugin: y = x (f32), keeps its fields -------------------------- */

typedef struct probe {
    prt_field_plugin base;
    prt_owned_fields *fields;
} probe;

/* The fields the last create of each phase received, serialized. */
static uint8_t seen[2][8192];
static size_t seen_len[2];

static const char *pr_name(const prt_field_plugin *p) { (void)p; return "FieldProbe"; }
static const char *pr_version(const prt_field_plugin *p) { (void)p; return "1"; }
static const char *pr_ns(const prt_field_plugin *p) { (void)p; return "test"; }
static int32_t pr_nb_outputs(const prt_field_plugin *p) { (void)p; return 1; }

static prt_status pr_types(const prt_field_plugin *p, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                           int32_t nb_out, prt_msg *err)
{
    (void)p; (void)nb_in; (void)nb_out; (void)err;
    out[0] = in[0];
    return PRT_OK;
}

static prt_status pr_shapes(prt_field_plugin *p, const prt_dims_expr *in, int32_t nb_in, prt_dims_expr *out,
                            int32_t nb_out, prt_expr_builder *eb, prt_msg *err)
{
    (void)p; (void)nb_in; (void)nb_out; (void)eb; (void)err;
    out[0] = in[0];
    return PRT_OK;
}

static int pr_supports(prt_field_plugin *p, int32_t pos, const prt_dyn_tensor_desc *io, int32_t nb_in,
                       int32_t nb_out)
{
    (void)p; (void)nb_in; (void)nb_out;
    return io[pos].desc.dtype == PRT_DTYPE_F32 && io[pos].desc.format == PRT_FORMAT_LINEAR;
}

static prt_status pr_configure(prt_field_plugin *p, const prt_dyn_tensor_desc *in, int32_t nb_in,
                               const prt_dyn_tensor_desc *out, int32_t nb_out, prt_msg *err)
{
    (void)p; (void)in; (void)nb_in; (void)out; (void)nb_out; (void)err;
    return PRT_OK;
}

static prt_status pr_enqueue(prt_field_plugin *p, const prt_tensor_desc *ind, const prt_tensor_desc *outd,
                             const void *const *inputs, void *const *outputs, void *ws, prt_exec *ex)
{
    (void)p; (void)outd; (void)ws; (void)ex;
    memcpy(outputs[0], inputs[0], (size_t)prt_dims_volume(&ind[0].dims) * sizeof(float));
    return PRT_OK;
}

static prt_status pr_fields(prt_field_plugin *p, prt_fields *out, prt_msg *err)
{
    (void)err;
    *out = *prt_owned_fields_get(((probe *)p)->fields);
    return PRT_OK;
}

static prt_field_plugin *pr_new(const prt_plugin_creator *c, const prt_fields *fc);

static prt_status pr_clone(const prt_field_plugin *p, prt_field_plugin **out, prt_msg *err)
{
    const probe *q = (const probe *)p;
    (void)err;
    *out = pr_new(NULL, prt_owned_fields_get(q->fields));
    return *out ? PRT_OK : PRT_STATUS_OUT_OF_MEMORY;
}

static prt_status pr_attach(prt_field_plugin *p, prt_plugin_context *ctx, prt_field_plugin **out, prt_msg *err)
{
    (void)ctx;
    return pr_clone(p, out, err);
}

static void pr_destroy(prt_field_plugin *p)
{
    prt_owned_fields_free(((probe *)p)->fields);
    free(p);
}

static const prt_plugin_core_ops pr_core = {
    .struct_size = sizeof(prt_plugin_core_ops), .abi_version = PRT_ABI_VERSION,
    .get_name = pr_name, .get_version = pr_version, .get_namespace = pr_ns};
static const prt_plugin_build_ops pr_build = {
    .struct_size = sizeof(prt_plugin_build_ops), .abi_version = PRT_ABI_VERSION,
    .get_nb_outputs = pr_nb_outputs, .get_output_data_types = pr_types, .get_output_shapes = pr_shapes,
    .supports_format_combination = pr_supports, .configure = pr_configure};
static const prt_plugin_runtime_ops pr_runtime = {
    .struct_size = sizeof(prt_plugin_runtime_ops), .abi_version = PRT_ABI_VERSION,
    .enqueue = pr_enqueue, .attach_to_context = pr_attach, .get_fields_to_serialize = pr_fields};
static const prt_field_plugin_ops pr_ops = {
    .struct_size = sizeof(prt_field_plugin_ops), .abi_version = PRT_ABI_VERSION,
    .core = &pr_core, .build = &pr_build, .runtime = &pr_runtime, .clone = pr_clone, .destroy = pr_destroy};

static const char *const def_names[2] = {"x", "y"};
static const prt_field_schema probe_schema[] = {
    {.name = "names", .type = PRT_FIELD_STRINGS, .min_count = 1, .max_count = 4, .default_data = def_names,
     .default_count = 2, .doc = "labels"},
    {.name = "weights", .type = PRT_FIELD_TENSOR, .min_count = 1, .max_count = 3, .doc = "constant tensors"},
    {.name = "body", .type = PRT_FIELD_GRAPH, .min_count = 1, .max_count = 2, .doc = "sub-networks"},
    {.name = "flag", .type = PRT_FIELD_INT32, .min_count = 1, .max_count = 1},
    {.name = "table", .type = PRT_FIELD_FLOAT32, .min_count = 0, .max_count = PRT_COUNT_UNBOUNDED},
};

static prt_status pr_create(const prt_plugin_creator *c, const prt_fields *fc, prt_phase phase, prt_field_plugin **out,
                            prt_msg *err)
{
    prt_writer w = prt_writer_init(seen[phase], sizeof seen[phase]);
    char e[512];
    if (prt__fields_write(&w, fc, e, sizeof e) != PRT_OK) {
        prt_msg_set(err, "%s", e);
        return PRT_STATUS_INTERNAL;
    }
    seen_len[phase] = w.len;
    *out = pr_new(c, fc);
    return *out ? PRT_OK : PRT_STATUS_OUT_OF_MEMORY;
}

static const prt_plugin_creator probe_creator = {
    .struct_size = sizeof(prt_plugin_creator), .abi_version = PRT_ABI_VERSION, .name = "FieldProbe",
    .version = "1", .plugin_namespace = "test", .style = PRT_STYLE_FIELD,
    .nb_fields = (int32_t)(sizeof probe_schema / sizeof probe_schema[0]), .fields = probe_schema,
    .field_schema_size = sizeof(prt_field_schema), .create_field = pr_create, .doc = "compound field probe"};

/* A copy of fc (validated against the schema, so it is deep). */
static prt_field_plugin *pr_new(const prt_plugin_creator *c, const prt_fields *fc)
{
    probe *q = calloc(1, sizeof *q);
    char e[512];
    (void)c;
    if (!q) return NULL;
    q->base.ops = &pr_ops;
    if (prt_fields_validate(&probe_creator, fc, &q->fields, e, sizeof e) != PRT_OK) {
        free(q);
        return NULL;
    }
    return &q->base;
}

/* ---- values -------------------------------------------------------------------- */

static const char *const names3[3] = {"alpha", "", "gamma delta"};
static const float w0[6] = {1, 2, 3, 4, 5, 6.5f};
static const int64_t w1 = -9;
static const char body_json[] = "{\"inputs\": [], \"layers\": [], \"outputs\": []}";


static void make_tensors(prt_field_tensor *t)
{
    memset(t, 0, 2 * sizeof *t);
    t[0].dtype = PRT_DTYPE_F32;
    t[0].dims.nb = 2;
    t[0].dims.d[0] = 2;
    t[0].dims.d[1] = 3;
    t[0].data = w0;
    t[1].dtype = PRT_DTYPE_I64;
    t[1].data = &w1; /* 0-d */
}

static void make_graph(prt_field_graph *g)
{
    memset(g, 0, sizeof *g);
    g->name = "then_branch";
    g->format = PRT_GRAPH_NETWORK_JSON;
    g->data = body_json;
    g->size = (int64_t)strlen(body_json);
}

static prt_status validate(prt_field *f, int32_t nb, prt_owned_fields **out, char *err, size_t cap)
{
    prt_fields fc = {f, nb, 0};
    return prt_fields_validate(&probe_creator, &fc, out, err, cap);
}

/* ---- schema checks ---------------------------------------------------------------- */

TEST(fieldval_normalized_copy_is_deep)
{
    prt_field_tensor t[2];
    prt_field_graph g;
    char *mutable_name = strdup("mutable");
    const char *names[2] = {mutable_name, "b"};
    float wcopy[6];
    prt_field f[3];
    prt_owned_fields *o = NULL;
    char err[512];
    const prt_field *x;
    make_tensors(t);
    make_graph(&g);
    memcpy(wcopy, w0, sizeof wcopy);
    t[0].data = wcopy;
    f[0] = fld("names", PRT_FIELD_STRINGS, names, 2);
    f[1] = fld("weights", PRT_FIELD_TENSOR, t, 2);
    f[2] = fld("body", PRT_FIELD_GRAPH, &g, 1);
    CHECK_MSG(validate(f, 3, &o, err, sizeof err) == PRT_OK, "%s", err);
    /* The caller's data changes; the copy does not. */
    mutable_name[0] = 'X';
    wcopy[0] = 99;
    x = prt_fields_find(prt_owned_fields_get(o), "names");
    CHECK(x && x->count == 2 && strcmp(prt_field_get_string(x, 0), "mutable") == 0);
    CHECK(prt_field_get_string(x, 2) == NULL);
    x = prt_fields_find(prt_owned_fields_get(o), "weights");
    CHECK(x && x->count == 2 && ((const float *)prt_field_get_tensor(x, 0)->data)[0] == 1.0f);
    CHECK(prt_field_get_tensor(x, 1)->dims.nb == 0 && *(const int64_t *)prt_field_get_tensor(x, 1)->data == -9);
    CHECK((uintptr_t)prt_field_get_tensor(x, 0)->data % 8 == 0);
    x = prt_fields_find(prt_owned_fields_get(o), "body");
    CHECK(x && strcmp(prt_field_get_graph(x, 0)->name, "then_branch") == 0);
    CHECK(prt_field_get_graph(x, 0)->size == (int64_t)strlen(body_json));
    CHECK(memcmp(prt_field_get_graph(x, 0)->data, body_json, strlen(body_json)) == 0);
    prt_owned_fields_free(o);
    /* Defaults of string lists are copied in too. */
    CHECK_OK(validate(f + 1, 2, &o, err, sizeof err));
    x = prt_fields_find(prt_owned_fields_get(o), "names");
    CHECK(x && x->count == 2 && strcmp(prt_field_get_string(x, 1), "y") == 0);
    prt_owned_fields_free(o);
    free(mutable_name);
    CHECK_NO_LEAKS();
}

TEST(fieldval_bad_elements_are_refused_with_messages)
{
    prt_field_tensor t[2];
    prt_field_graph g;
    const char *nul_names[2] = {"a", NULL};
    prt_field f[2];
    prt_owned_fields *o = (prt_owned_fields *)(uintptr_t)0x77;
    char err[512];
    make_tensors(t);
    make_graph(&g);
    f[1] = fld("body", PRT_FIELD_GRAPH, &g, 1);
    f[0] = fld("names", PRT_FIELD_STRINGS, nul_names, 2);
    CHECK_EQ_INT(validate(f, 2, &o, err, sizeof err), PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(err, "test::FieldProbe v1: field \"names\": string 1 is NULL");
    f[0] = fld("names", PRT_FIELD_CHAR, "abc", 3);
    CHECK_EQ_INT(validate(f, 2, &o, err, sizeof err), PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(err, "field \"names\" needs strings, got char");
    f[0] = fld("names", PRT_FIELD_STRINGS, names3, 3);
    CHECK_OK(validate(f, 2, &o, err, sizeof err));
    prt_owned_fields_free(o);
    o = (prt_owned_fields *)(uintptr_t)0x77;
    f[0] = fld("names", PRT_FIELD_STRINGS, names3, 0);
    CHECK_EQ_INT(validate(f, 2, &o, err, sizeof err), PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(err, "field \"names\" needs 1 to 4 values, got 0");
    /* tensors */
    t[0].dims.d[1] = -1;
    f[0] = fld("weights", PRT_FIELD_TENSOR, t, 2);
    CHECK_EQ_INT(validate(f, 2, &o, err, sizeof err), PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(err, "field \"weights\": tensor 0 needs concrete extents >= 0");
    CHECK_STR_CONTAINS(err, "got [2, -1] of f32");
    t[0].dims.d[1] = 3;
    t[1].data = NULL;
    CHECK_EQ_INT(validate(f, 2, &o, err, sizeof err), PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(err, "tensor 1 has shape [] but its data pointer is NULL");
    t[1].data = &w1;
    t[1].dtype = (prt_dtype)42;
    CHECK_EQ_INT(validate(f, 2, &o, err, sizeof err), PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(err, "tensor 1 has dtype 42");
    t[1].dtype = PRT_DTYPE_I64;
    t[1].dims.nb = 2;
    t[1].dims.d[0] = (int64_t)1 << 30;
    t[1].dims.d[1] = (int64_t)1 << 30;
    CHECK_EQ_INT(validate(f, 2, &o, err, sizeof err), PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(err, "holding at most");
    make_tensors(t);
    /* graphs */
    g.format = (prt_graph_format)7;
    CHECK_EQ_INT(validate(f, 2, &o, err, sizeof err), PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(err, "graph 0 (\"then_branch\") has format 7");
    g.format = PRT_GRAPH_ONNX;
    g.name = "";
    CHECK_EQ_INT(validate(f, 2, &o, err, sizeof err), PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(err, "graph 0 needs a non-empty name");
    g.name = "b";
    g.data = NULL;
    CHECK_EQ_INT(validate(f, 2, &o, err, sizeof err), PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(err, "data NULL");
    CHECK(o == (prt_owned_fields *)(uintptr_t)0x77);
    CHECK_NO_LEAKS();
}

static prt_status noop_create(const prt_plugin_creator *c, const prt_fields *fc, prt_phase phase,
                              prt_field_plugin **out, prt_msg *err)
{
    (void)c; (void)fc; (void)phase; (void)out; (void)err;
    return PRT_STATUS_UNSUPPORTED;
}

TEST(fieldval_schema_defaults_and_bounds_are_checked)
{
    static const char *const bad_default[1] = {NULL};
    static const prt_field_schema bad1[] = {
        {.name = "s", .type = PRT_FIELD_STRINGS, .min_count = 1, .max_count = 1, .default_data = bad_default,
         .default_count = 1}};
    static const prt_field_schema bad2[] = {
        {.name = "t", .type = PRT_FIELD_TENSOR, .min_count = 1, .max_count = 1, .bounds = PRT_BOUND_MIN}};
    prt_plugin_creator c = probe_creator;
    prt_registry *r = NULL;
    CHECK_OK(prt_registry_create(NULL, &r));
    c.create_field = noop_create;
    c.nb_fields = 1;
    c.fields = bad1;
    CHECK_EQ_INT(prt_registry_add(r, &c, "t"), PRT_STATUS_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(prt_registry_last_error(r), "the default of schema field \"s\": string 0 is NULL");
    c.fields = bad2;
    CHECK_EQ_INT(prt_registry_add(r, &c, "t"), PRT_STATUS_INVALID_ARGUMENT);
    CHECK_STR_CONTAINS(prt_registry_last_error(r), "has value bounds but type tensor");
    prt_registry_destroy(r);
}

/* ---- create -> serialize -> load ---------------------------------------------------- */

static prt_registry *probe_registry(void)
{
    prt_registry *r = NULL;
    CHECK_OK(prt_registry_create(prt_registry_global(), &r));
    CHECK_OK(prt_registry_add(r, &probe_creator, "tests"));
    return r;
}

/* Build `net`, write the plan, read it back, run it once: the runtime-phase
 * create must see exactly the build-phase fields. */
static void plan_round_trip(prt_network *net, prt_registry *r)
{
    prt_builder_config cfg;
    prt_engine *e = NULL, *e2 = NULL;
    prt_context *ctx = NULL;
    char err[1024] = "";
    size_t len = 0;
    void *plan;
    float x[4] = {1, 2, 3, 4}, y[4] = {0};
    prt_builder_config_init(&cfg);
    seen_len[0] = seen_len[1] = 0;
    CHECK_MSG(prt_engine_build(net, &cfg, r, &e, err, sizeof err) == PRT_OK, "%s", err);
    CHECK(seen_len[PRT_PHASE_BUILD] > 0);
    CHECK_OK(prt_engine_serialize(e, NULL, 0, &len));
    plan = malloc(len);
    CHECK_OK(prt_engine_serialize(e, plan, len, &len));
    seen_len[PRT_PHASE_RUNTIME] = 0;
    CHECK_MSG(prt_engine_deserialize(r, plan, len, &e2, err, sizeof err) == PRT_OK, "%s", err);
    CHECK_EQ_INT(seen_len[PRT_PHASE_RUNTIME], seen_len[PRT_PHASE_BUILD]);
    CHECK(memcmp(seen[0], seen[1], seen_len[0]) == 0);
    CHECK_OK(prt_context_create(e2, NULL, &ctx));
    CHECK_OK(prt_context_set_tensor(ctx, "x", x));
    CHECK_OK(prt_context_set_tensor(ctx, "y", y));
    CHECK_OK(prt_context_execute(ctx));
    CHECK(y[3] == 4.0f);
    prt_context_destroy(ctx);
    prt_engine_destroy(e2);
    prt_engine_destroy(e);
    free(plan);
}

/* The fields the runtime-phase create received. */
static prt_owned_fields *runtime_fields(void)
{
    prt_reader rd = prt_reader_init(seen[1], seen_len[1]);
    prt_owned_fields *o = NULL;
    char err[256];
    CHECK_OK(prt__fields_read(&rd, &o, err, sizeof err));
    return o;
}

TEST(fieldval_each_type_through_a_plan_c_api)
{
    prt_registry *r = probe_registry();
    prt_network *net = NULL;
    prt_field_tensor t[2];
    prt_field_graph g;
    prt_field f[3];
    prt_fields fc = {f, 3, 0};
    prt_dims d = {.nb = 1, .d = {4}};
    const char *in = "x", *out = "y";
    prt_owned_fields *o;
    const prt_field *x;
    make_tensors(t);
    make_graph(&g);
    f[0] = fld("names", PRT_FIELD_STRINGS, names3, 3);
    f[1] = fld("weights", PRT_FIELD_TENSOR, t, 2);
    f[2] = fld("body", PRT_FIELD_GRAPH, &g, 1);
    CHECK_OK(prt_network_create(r, &net));
    CHECK_OK(prt_network_add_input(net, "x", PRT_DTYPE_F32, &d));
    CHECK_OK(prt_network_add_layer(net, "probe", "FieldProbe", "1", "test", &fc, &in, 1, &out, 1));
    CHECK_OK(prt_network_mark_output(net, "y"));
    plan_round_trip(net, r);
    o = runtime_fields();
    x = prt_fields_find(prt_owned_fields_get(o), "names");
    CHECK(x && x->count == 3 && strcmp(prt_field_get_string(x, 2), "gamma delta") == 0 &&
          strcmp(prt_field_get_string(x, 1), "") == 0);
    x = prt_fields_find(prt_owned_fields_get(o), "weights");
    CHECK(x && x->count == 2 && prt_field_get_tensor(x, 0)->dims.d[1] == 3 &&
          memcmp(prt_field_get_tensor(x, 0)->data, w0, sizeof w0) == 0);
    CHECK(prt_field_get_tensor(x, 1)->dtype == PRT_DTYPE_I64 && *(const int64_t *)prt_field_get_tensor(x, 1)->data == -9);
    x = prt_fields_find(prt_owned_fields_get(o), "body");
    CHECK(x && x->count == 1 && prt_field_get_graph(x, 0)->format == PRT_GRAPH_NETWORK_JSON &&
          memcmp(prt_field_get_graph(x, 0)->data, body_json, strlen(body_json)) == 0);
    prt_owned_fields_free(o);
    prt_network_destroy(net);
    prt_registry_destroy(r);
    CHECK_NO_LEAKS();
}

static const char k_json[] =
    "{\"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"dims\": [4]}],\n"
    " \"layers\": [{\"name\": \"probe\", \"plugin\": \"FieldProbe\", \"namespace\": \"test\",\n"
    "   \"fields\": {\"names\": [\"alpha\", \"beta\"],\n"
    "              \"weights\": [{\"dtype\": \"f32\", \"dims\": [2, 2], \"values\": [1, 2, 3, 4.5]},\n"
    "                            {\"file\": \"w.npy\"}],\n"
    "              \"body\": [{\"name\": \"inline\", \"network\": {\"inputs\": [], \"layers\": [], \"outputs\": []}},\n"
    "                         {\"name\": \"from_file\", \"file\": \"g.onnx\"}],\n"
    "              \"flag\": true,\n"
    "              \"table\": {\"file\": \"t.npy\"}},\n"
    "   \"inputs\": [\"x\"], \"outputs\": [\"y\"]}],\n"
    " \"outputs\": [\"y\"]}\n";

static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    CHECK_EQ_INT(fwrite(data, 1, n, f), n);
    fclose(f);
}

static void write_npy(const char *path, prt_npy_type t, int64_t d0, const void *data)
{
    prt_npy_array a;
    prt_dims d = {.nb = 1, .d = {d0}};
    CHECK_OK(prt_npy_array_alloc(&a, t, &d));
    memcpy(a.data, data, a.nbytes);
    CHECK_OK(prt_npy_write_file(&a, path));
    prt_npy_array_clear(&a);
}

TEST(fieldval_each_type_through_a_plan_json)
{
    prt_registry *r = probe_registry();
    prt_network *net = NULL;
    char dir[] = "/tmp/prt_fieldval_XXXXXX", path[256], err[1024] = "";
    static const int32_t wi[3] = {7, 8, 9};
    static const double tv[2] = {0.25, -1.5};
    static const uint8_t onnx_bytes[4] = {0x08, 0x07, 0x00, 0xff};
    prt_owned_fields *o;
    const prt_field *x;
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/w.npy", dir);
    write_npy(path, PRT_NPY_I4, 3, wi);
    snprintf(path, sizeof path, "%s/t.npy", dir);
    write_npy(path, PRT_NPY_F8, 2, tv);
    snprintf(path, sizeof path, "%s/g.onnx", dir);
    write_file(path, onnx_bytes, sizeof onnx_bytes);
    CHECK_MSG(prt_network_from_json(r, k_json, strlen(k_json), dir, &net, err, sizeof err) == PRT_OK, "%s", err);
    plan_round_trip(net, r);
    o = runtime_fields();
    x = prt_fields_find(prt_owned_fields_get(o), "names");
    CHECK(x && x->count == 2 && strcmp(prt_field_get_string(x, 1), "beta") == 0);
    x = prt_fields_find(prt_owned_fields_get(o), "weights");
    CHECK(x && x->count == 2);
    if (x && x->count == 2) {
        const prt_field_tensor *a = prt_field_get_tensor(x, 0), *b = prt_field_get_tensor(x, 1);
        CHECK(a->dtype == PRT_DTYPE_F32 && a->dims.nb == 2 && ((const float *)a->data)[3] == 4.5f);
        CHECK(b->dtype == PRT_DTYPE_I32 && b->dims.nb == 1 && b->dims.d[0] == 3 && ((const int32_t *)b->data)[2] == 9);
    }
    x = prt_fields_find(prt_owned_fields_get(o), "body");
    CHECK(x && x->count == 2);
    if (x && x->count == 2) {
        const prt_field_graph *a = prt_field_get_graph(x, 0), *b = prt_field_get_graph(x, 1);
        CHECK(a->format == PRT_GRAPH_NETWORK_JSON && strcmp(a->name, "inline") == 0);
        CHECK(a->size > 10 && memcmp(a->data, "{\"inputs\":[]", 12) == 0);
        CHECK(b->format == PRT_GRAPH_ONNX && b->size == 4 && memcmp(b->data, onnx_bytes, 4) == 0);
    }
    CHECK_EQ_INT(prt_fields_i64(prt_owned_fields_get(o), "flag", 0, -1), 1); /* true for an int32 flag */
    x = prt_fields_find(prt_owned_fields_get(o), "table");
    CHECK(x && x->type == PRT_FIELD_FLOAT32 && x->count == 2 && ((const float *)x->data)[1] == -1.5f);
    prt_owned_fields_free(o);
    prt_network_destroy(net);
    snprintf(path, sizeof path, "rm -rf %s", dir);
    CHECK_EQ_INT(system(path), 0);
    prt_registry_destroy(r);
    CHECK_NO_LEAKS();
}

/* One bad value per case: the message names layer, field and what is wrong. */
TEST(fieldval_json_errors_say_what_and_where)
{
    static const struct {
        const char *fields, *needle;
    } cases[] = {
        {"\"names\": [\"a\", 3]", "field \"names\": element 1 must be a string, got a number"},
        {"\"weights\": {\"dtype\": \"f32\", \"dims\": [2], \"values\": [1]}",
         "tensor 0: \"values\" must be a flat array of the 2 elements the dims hold"},
        {"\"weights\": {\"dtype\": \"q4\", \"dims\": [1], \"values\": [1]}", "unknown \"dtype\" q4"},
        {"\"weights\": {\"dtype\": \"i8\", \"dims\": [1], \"values\": [300]}", "outside the range of i8"},
        {"\"weights\": {\"file\": \"missing.npy\"}", "missing.npy"},
        {"\"body\": {\"network\": {}}", "graph 0 must be an object with a non-empty \"name\""},
        {"\"table\": {\"file\": \"x.npy\", \"extra\": 1}", "is written {\"file\": \"name.npy\"}"},
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        prt_registry *r = probe_registry();
        prt_network *net = NULL;
        char json[1024], err[1024] = "";
        snprintf(json, sizeof json,
                 "{\"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"dims\": [4]}], \"layers\": [{\"name\": "
                 "\"p\", \"plugin\": \"FieldProbe\", \"namespace\": \"test\", \"fields\": {%s}, \"inputs\": [\"x\"], "
                 "\"outputs\": [\"y\"]}], \"outputs\": [\"y\"]}",
                 cases[i].fields);
        CHECK_MSG(prt_network_from_json(r, json, strlen(json), "/nonexistent", &net, err, sizeof err) != PRT_OK,
                  "case %zu accepted", i);
        CHECK_MSG(strstr(err, cases[i].needle) != NULL, "case %zu: \"%s\" not in \"%s\"", i, cases[i].needle, err);
        CHECK_STR_CONTAINS(err, "layer \"p\"");
        CHECK(net == NULL);
        prt_registry_destroy(r);
    }
    CHECK_NO_LEAKS();
}
