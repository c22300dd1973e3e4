/* tests/onnx/test_import.c - ONNX models into networks (src/onnx/import.c,
 * lookup.c), built and run on the CPU with the test plugins of onnxtoy.c. */
#include "core/core.h"
#include "engine/netdef.h"
#include "onnx/onnx_impl.h"
#include "prt_test.h"

static prt_registry *toy_registry(void)
{
    prt_registry *r = NULL;
    prt_library *lib = NULL;
    CHECK_OK(prt_registry_create(prt_registry_global(), &r));
    CHECK_MSG(prt_registry_load_library(r, PRT_ONNXTOY_PATH, &lib) == PRT_OK, "%s", prt_registry_last_error(r));
    return r;
}

static const char *path_of(const char *name)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/onnx/%s", prt_test_data_dir(), name);
    return path;
}

/* Import `name`, build it for the CPU (ranges optional), run it on `x`
 * (input "x") and return output "y" in y (cap floats); *y_dims its dims. */
static void run_model(prt_registry *r, const char *name, const prt_profile_range *rg, int nrg, const float *x,
                      const prt_dims *xd, float *y, size_t cap, prt_dims *y_dims)
{
    prt_onnx_import_config ic;
    prt_builder_config bc;
    prt_network *net = NULL;
    prt_engine *e = NULL;
    prt_context *ctx = NULL;
    size_t bytes = 0;
    char err[1024] = "";
    prt_onnx_import_config_init(&ic);
    ic.nb_ranges = nrg;
    ic.ranges = rg;
    CHECK_MSG(prt_network_from_onnx_file(r, path_of(name), &ic, &net, err, sizeof err) == PRT_OK, "%s", err);
    prt_builder_config_init(&bc);
    bc.nb_ranges = nrg;
    bc.ranges = rg;
    CHECK_MSG(prt_engine_build(net, &bc, r, &e, err, sizeof err) == PRT_OK, "%s", err);
    CHECK_OK(prt_context_create(e, NULL, &ctx));
    CHECK_OK(prt_context_set_input_shape(ctx, "x", xd));
    CHECK_OK(prt_context_set_tensor(ctx, "x", (void *)x));
    CHECK_OK(prt_context_buffer_size(ctx, "y", &bytes));
    CHECK(bytes <= cap * sizeof(float));
    CHECK_OK(prt_context_set_tensor(ctx, "y", y));
    CHECK_MSG(prt_context_execute(ctx) == PRT_OK, "%s", prt_context_last_error(ctx));
    CHECK_OK(prt_context_get_shape(ctx, "y", y_dims));
    prt_context_destroy(ctx);
    prt_engine_destroy(e);
    prt_network_destroy(net);
}

static prt_dims dims1(int64_t n)
{
    prt_dims d;
    memset(&d, 0, sizeof d);
    d.nb = 1;
    d.d[0] = n;
    return d;
}

TEST(constant_subgraph_folds_and_runs)
{
    prt_registry *r = toy_registry();
    const float x[4] = {0, 0, -10, 10};
    float y[4];
    prt_dims xd = dims1(4), yd;
    prt_network *net = NULL;
    char err[1024];
    /* a + b = [1.5, -1.5, 3.5, -3.5] folds into one constant */
    CHECK_OK(prt_network_from_onnx_file(r, path_of("relu_add.onnx"), NULL, &net, err, sizeof err));
    CHECK_EQ_INT(prt_network_nb_layers(net), 2);
    CHECK(strcmp(prt_network_layer_name(net, 0), "add") == 0);
    {
        int32_t t = prt__network_find(net, "ab");
        CHECK(t >= 0 && net->tensors[t].kind == PRT__TENSOR_CONSTANT);
        CHECK(prt__network_find(net, "a") < 0); /* only used by the folded node */
    }
    prt_network_destroy(net);
    run_model(r, "relu_add.onnx", NULL, 0, x, &xd, y, 4, &yd);
    CHECK(y[0] == 1.5f && y[1] == 0 && y[2] == 0 && y[3] == 6.5f);
    prt_registry_destroy(r);
}

TEST(dynamic_batch_with_a_profile)
{
    prt_registry *r = toy_registry();
    prt_profile_range rg;
    float x[12], y[16];
    prt_dims xd, yd;
    int i;
    memset(&rg, 0, sizeof rg);
    rg.input = "x";
    rg.min.nb = rg.opt.nb = rg.max.nb = 2;
    rg.min.d[0] = 1, rg.opt.d[0] = 2, rg.max.d[0] = 4;
    rg.min.d[1] = rg.opt.d[1] = rg.max.d[1] = 4;
    xd = rg.min;
    xd.d[0] = 3;
    for (i = 0; i < 12; i++) x[i] = (float)(i - 6);
    run_model(r, "relu_dynamic.onnx", &rg, 1, x, &xd, y, 16, &yd);
    CHECK_EQ_INT(yd.d[0], 3);
    for (i = 0; i < 12; i++) CHECK(y[i] == (x[i] > 0 ? x[i] : 0));
    prt_registry_destroy(r);
}

TEST(constant_input_becomes_a_field)
{
    prt_registry *r = toy_registry();
    const float x[6] = {1, 2, 3, 4, 5, 6};
    float y[6];
    prt_dims xd = dims1(6), yd;
    run_model(r, "reshape_const.onnx", NULL, 0, x, &xd, y, 6, &yd);
    CHECK_EQ_INT(yd.nb, 2);
    CHECK(yd.d[0] == 2 && yd.d[1] == 3);
    CHECK(y[5] == 6);
    prt_registry_destroy(r);
}

/* reshape_input.onnx: Reshape(x [6], shape [2]) with the shape a graph
 * input; the import config binds it to a value. */
static prt_onnx_input_value shape_value(const int64_t *v)
{
    prt_onnx_input_value iv;
    memset(&iv, 0, sizeof iv);
    iv.name = "shape";
    iv.dtype = PRT_DTYPE_I64;
    iv.dims = dims1(2);
    iv.data = v;
    iv.nbytes = 2 * sizeof *v;
    return iv;
}

TEST(bound_graph_input_becomes_a_field)
{
    prt_registry *r = toy_registry();
    static const int64_t shp[2] = {3, 2};
    static const float x[6] = {1, 2, 3, 4, 5, 6};
    prt_onnx_input_value iv[2];
    prt_onnx_import_config ic;
    prt_network *net = NULL;
    prt_engine *e = NULL;
    prt_context *ctx = NULL;
    prt_dims xd = dims1(6), yd;
    float y[6];
    char err[1024] = "";
    int i;
    /* without a value the shape is data: Reshape cannot take it */
    CHECK(prt_network_from_onnx_file(r, path_of("reshape_input.onnx"), NULL, &net, err, sizeof err) ==
          PRT_STATUS_UNSUPPORTED);
    CHECK(strstr(err, "\"shape\" must be known at import") != NULL);
    CHECK(net == NULL);
    /* bound (BIND_FIELDS, the default): "shape" is gone from the inputs, "x" stays */
    iv[0] = shape_value(shp);
    prt_onnx_import_config_init(&ic);
    ic.values = iv;
    ic.nb_values = 1;
    CHECK_MSG(prt_network_from_onnx_file(r, path_of("reshape_input.onnx"), &ic, &net, err, sizeof err) == PRT_OK,
              "%s", err);
    CHECK_EQ_INT(prt_network_nb_inputs(net), 1);
    CHECK(strcmp(prt_network_input_name(net, 0), "x") == 0);
    CHECK_MSG(prt_engine_build(net, NULL, r, &e, err, sizeof err) == PRT_OK, "%s", err);
    CHECK_OK(prt_context_create(e, NULL, &ctx));
    CHECK_OK(prt_context_set_input_shape(ctx, "x", &xd));
    CHECK_OK(prt_context_set_tensor(ctx, "x", (void *)x));
    CHECK_OK(prt_context_set_tensor(ctx, "y", y));
    CHECK_MSG(prt_context_execute(ctx) == PRT_OK, "%s", prt_context_last_error(ctx));
    CHECK_OK(prt_context_get_shape(ctx, "y", &yd));
    CHECK(yd.nb == 2 && yd.d[0] == 3 && yd.d[1] == 2);
    for (i = 0; i < 6; i++) CHECK(y[i] == x[i]);
    prt_context_destroy(ctx);
    prt_engine_destroy(e);
    prt_network_destroy(net);
    net = NULL;
    /* BIND_FIELDS leaves a bound value of a data input alone */
    memset(&iv[1], 0, sizeof iv[1]);
    iv[1].name = "x";
    iv[1].dtype = PRT_DTYPE_F32;
    iv[1].dims = xd;
    iv[1].data = x;
    iv[1].nbytes = sizeof x;
    ic.nb_values = 2;
    CHECK_OK(prt_network_from_onnx_file(r, path_of("reshape_input.onnx"), &ic, &net, err, sizeof err));
    CHECK_EQ_INT(prt_network_nb_inputs(net), 1);
    prt_network_destroy(net);
    net = NULL;
    /* BIND_ALL: both are constants, the whole graph folds */
    ic.bind = PRT_ONNX_BIND_ALL;
    CHECK_MSG(prt_network_from_onnx_file(r, path_of("reshape_input.onnx"), &ic, &net, err, sizeof err) == PRT_OK,
              "%s", err);
    CHECK_EQ_INT(prt_network_nb_inputs(net), 0);
    CHECK_EQ_INT(prt_network_nb_outputs(net), 1);
    prt_network_destroy(net);
    prt_registry_destroy(r);
}

TEST(bound_graph_input_reaches_a_field_through_nodes)
{
    prt_registry *r = NULL; /* the ONNX op plugins: Identity folds an int64 value */
    static const int64_t shp[2] = {2, 3};
    static const float x[6] = {1, 2, 3, 4, 5, 6};
    prt_onnx_input_value iv[2];
    prt_onnx_import_config ic;
    prt_network *net = NULL;
    char err[1024] = "";
    CHECK_OK(prt_registry_create(prt_registry_global(), &r));
    prt_onnx_import_config_init(&ic);
    iv[0] = shape_value(shp);
    memset(&iv[1], 0, sizeof iv[1]);
    iv[1].name = "x";
    iv[1].dtype = PRT_DTYPE_F32;
    iv[1].dims = dims1(6);
    iv[1].data = x;
    iv[1].nbytes = sizeof x;
    ic.values = iv;
    ic.nb_values = 2;
    /* shape -> Identity -> Reshape's "input:1": bound; x only feeds data: stays an input */
    CHECK_MSG(prt_network_from_onnx_file(r, path_of("reshape_input_chain.onnx"), &ic, &net, err, sizeof err) ==
                  PRT_OK,
              "%s", err);
    CHECK_EQ_INT(prt_network_nb_inputs(net), 1);
    CHECK(net && strcmp(prt_network_input_name(net, 0), "x") == 0);
    prt_network_destroy(net);
    net = NULL;
    /* x reaches Reshape's shape only through Shape (extents): it stays an input */
    {
        prt_dims d2;
        static const float x6[6] = {0};
        memset(&d2, 0, sizeof d2);
        d2.nb = 2;
        d2.d[0] = 2;
        d2.d[1] = 3;
        iv[1].dims = d2;
        iv[1].data = x6;
        ic.nb_values = 1;
        ic.values = &iv[1];
        CHECK_MSG(prt_network_from_onnx_file(r, path_of("shape_chain.onnx"), &ic, &net, err, sizeof err) == PRT_OK,
                  "%s", err);
        CHECK_EQ_INT(prt_network_nb_inputs(net), 1);
        prt_network_destroy(net);
    }
    prt_registry_destroy(r);
}

TEST(bound_graph_input_errors)
{
    prt_registry *r = toy_registry();
    static const int64_t shp[3] = {3, 2, 1};
    static const int32_t shp32[2] = {3, 2};
    prt_onnx_input_value iv;
    prt_onnx_import_config ic;
    prt_network *net = NULL;
    char err[1024] = "";
    prt_onnx_import_config_init(&ic);
    ic.values = &iv;
    ic.nb_values = 1;
    /* a name that is no graph input */
    iv = shape_value(shp);
    iv.name = "nope";
    CHECK(prt_network_from_onnx_file(r, path_of("reshape_input.onnx"), &ic, &net, err, sizeof err) ==
          PRT_STATUS_NOT_FOUND);
    CHECK(strstr(err, "\"nope\", which is no graph input") != NULL);
    /* the wrong type */
    iv = shape_value(shp);
    iv.dtype = PRT_DTYPE_I32;
    iv.data = shp32;
    iv.nbytes = sizeof shp32;
    CHECK(prt_network_from_onnx_file(r, path_of("reshape_input.onnx"), &ic, &net, err, sizeof err) ==
          PRT_STATUS_TYPE_MISMATCH);
    CHECK(strstr(err, "type i32, expected i64") != NULL);
    /* extents that do not fit the declared [2] */
    iv = shape_value(shp);
    iv.dims = dims1(3);
    iv.nbytes = sizeof shp;
    CHECK(prt_network_from_onnx_file(r, path_of("reshape_input.onnx"), &ic, &net, err, sizeof err) ==
          PRT_STATUS_SHAPE_MISMATCH);
    CHECK(strstr(err, "extents [3], expected [2]") != NULL);
    /* a byte count that does not match the extents */
    iv = shape_value(shp);
    iv.nbytes = 8;
    CHECK(prt_network_from_onnx_file(r, path_of("reshape_input.onnx"), &ic, &net, err, sizeof err) ==
          PRT_STATUS_INVALID_ARGUMENT);
    CHECK(strstr(err, "8 bytes, expected 16") != NULL);
    CHECK(net == NULL);
    prt_registry_destroy(r);
}

TEST(shape_of_static_extents_folds)
{
    prt_registry *r = toy_registry();
    const float x[6] = {1, -2, 3, 4, 5, 6};
    float y[6];
    prt_dims xd, yd;
    memset(&xd, 0, sizeof xd);
    xd.nb = 2, xd.d[0] = 2, xd.d[1] = 3;
    run_model(r, "shape_chain.onnx", NULL, 0, x, &xd, y, 6, &yd);
    CHECK(prt_dims_equal(&xd, &yd));
    CHECK(y[1] == -2);
    prt_registry_destroy(r);
}

TEST(shape_on_a_pinned_dynamic_extent_folds)
{
    prt_registry *r = toy_registry();
    prt_profile_range rg;
    const float x[6] = {1, -2, 3, 4, 5, 6};
    float y[6];
    prt_dims yd;
    prt_network *net = NULL;
    prt_onnx_import_config ic;
    char err[1024] = "";
    memset(&rg, 0, sizeof rg);
    rg.input = "x";
    rg.min.nb = rg.opt.nb = rg.max.nb = 2;
    rg.min.d[0] = rg.opt.d[0] = rg.max.d[0] = 2;
    rg.min.d[1] = rg.opt.d[1] = rg.max.d[1] = 3;
    run_model(r, "shape_dynamic.onnx", &rg, 1, x, &rg.min, y, 6, &yd);
    CHECK(prt_dims_equal(&yd, &rg.min) && y[1] == -2);
    /* a real range: the shape is not known at import, and the error says how to fix it */
    rg.min.d[0] = 1;
    rg.max.d[0] = 4;
    prt_onnx_import_config_init(&ic);
    ic.nb_ranges = 1;
    ic.ranges = &rg;
    CHECK_EQ_INT(prt_network_from_onnx_file(r, path_of("shape_dynamic.onnx"), &ic, &net, err, sizeof err),
                 PRT_STATUS_UNSUPPORTED);
    CHECK_STR_CONTAINS(err, "node \"reshape\" (Reshape): input 1 \"shp\" must be known at import");
    CHECK_STR_CONTAINS(err, "min == max");
    prt_registry_destroy(r);
}

TEST(custom_op_fields_typed_by_the_schema)
{
    prt_registry *r = toy_registry();
    const float x[4] = {1, 2, -1, 0};
    float y[4];
    prt_dims xd = dims1(4), yd;
    run_model(r, "custom_toyscale.onnx", NULL, 0, x, &xd, y, 4, &yd);
    CHECK(y[0] == 7.5f && y[1] == 15 && y[2] == -7.5f && y[3] == 0);
    prt_registry_destroy(r);
}

TEST(opset_picks_the_version)
{
    /* A registry of the toy library alone: the bundled ONNX ops (Relu 1, 6,
     * 13, 14) would otherwise serve every opset. */
    prt_registry *r = NULL;
    prt_library *lib = NULL;
    const float x[4] = {1, -1, 2, 0};
    float y[4];
    prt_dims xd = dims1(4), yd;
    prt_network *net = NULL;
    char err[1024] = "";
    CHECK_OK(prt_registry_create(NULL, &r));
    CHECK_MSG(prt_registry_load_library(r, PRT_ONNXTOY_PATH, &lib) == PRT_OK, "%s", prt_registry_last_error(r));
    CHECK(prt__onnx_find_versioned(r, "Relu", "", 13) != NULL);
    CHECK(strcmp(prt__onnx_find_versioned(r, "Relu", "", 13)->version, "6") == 0);
    CHECK(strcmp(prt__onnx_find_versioned(r, "Relu", "ai.onnx", 17)->version, "14") == 0);
    CHECK(prt__onnx_find_versioned(r, "Relu", "", 5) == NULL);
    run_model(r, "relu_opset13.onnx", NULL, 0, x, &xd, y, 4, &yd);
    CHECK(y[0] == 1001 && y[1] == 1000); /* v6 */
    CHECK_EQ_INT(prt_network_from_onnx_file(r, path_of("relu_opset5.onnx"), NULL, &net, err, sizeof err),
                 PRT_STATUS_NOT_FOUND);
    CHECK_STR_CONTAINS(err, "no plugin provides op Relu of domain \"\" at opset 5");
    CHECK_STR_CONTAINS(err, "Relu v14");
    CHECK_STR_CONTAINS(err, "Relu v6");
    prt_registry_destroy(r);
}

typedef struct seen {
    int n;
    char node[128], reason[1024];
} seen;

static void on_issue(void *u, const char *node, const char *op, const char *dom, const char *why)
{
    seen *s = u;
    (void)op;
    (void)dom;
    if (s->n++ == 0) {
        snprintf(s->node, sizeof s->node, "%s", node);
        snprintf(s->reason, sizeof s->reason, "%s", why);
    }
}

TEST(unknown_op_names_node_op_domain_opset)
{
    prt_registry *r = toy_registry();
    prt_network *net = NULL;
    prt_onnx_import_config ic;
    seen s;
    char err[1024] = "";
    CHECK_EQ_INT(prt_network_from_onnx_file(r, path_of("unknown_op.onnx"), NULL, &net, err, sizeof err),
                 PRT_STATUS_NOT_FOUND);
    CHECK(net == NULL);
    CHECK_STR_CONTAINS(err, "node \"mystery\" (NoSuchOp): no plugin provides op NoSuchOp of domain \"acme\" at "
                            "opset 2");
    CHECK_STR_CONTAINS(err, "--load");
    memset(&s, 0, sizeof s);
    prt_onnx_import_config_init(&ic);
    ic.keep_going = 1;
    ic.issue = on_issue;
    ic.issue_user = &s;
    CHECK(prt_network_from_onnx_file(r, path_of("unknown_op.onnx"), &ic, &net, err, sizeof err) != PRT_OK);
    CHECK_EQ_INT(s.n, 1);
    CHECK_STR_CONTAINS(s.node, "mystery");
    CHECK_STR_CONTAINS(err, "1 node(s) cannot be imported");
    prt_registry_destroy(r);
}

TEST(unsupported_and_wrong_attributes)
{
    prt_registry *r = toy_registry();
    prt_network *net = NULL;
    char err[1024] = "";
    /* a TENSOR attribute reaches the creator as a PRT_FIELD_TENSOR field, which the toy Relu does not take */
    CHECK_EQ_INT(prt_network_from_onnx_file(r, path_of("tensor_attr.onnx"), NULL, &net, err, sizeof err),
                 PRT_STATUS_INVALID_FIELD);
    CHECK_STR_CONTAINS(err, "node \"odd\" (Relu): Relu v14: unknown field \"t\"");
    CHECK_EQ_INT(prt_network_from_onnx_file(r, path_of("wrong_attr_type.onnx"), NULL, &net, err, sizeof err),
                 PRT_STATUS_TYPE_MISMATCH);
    CHECK_STR_CONTAINS(err, "attribute \"times\" is declared INT but holds a value of another type");
    prt_registry_destroy(r);
}

/* An absent input before a given one: refused unless the creator takes that
 * input as an optional "input:<k>" field (DeformConv's B does; the positive
 * case runs in test_cli.c on tests/data/onnx_deform_conv_models). */
TEST(absent_input_in_the_middle_needs_an_optional_field)
{
    prt_registry *r = toy_registry();
    prt_network *net = NULL;
    char err[1024] = "";
    CHECK_EQ_INT(prt_network_from_onnx_file(r, path_of("absent_middle_input.onnx"), NULL, &net, err, sizeof err),
                 PRT_STATUS_UNSUPPORTED);
    CHECK_STR_CONTAINS(err, "input 1 is absent (empty name) but a later one is given");
    CHECK_STR_CONTAINS(err, "has no optional field \"input:1\" for it");
    CHECK(net == NULL);
    prt_registry_destroy(r);
}

TEST(external_data_import)
{
    prt_registry *r = toy_registry();
    const float x[4] = {1, 1, 1, 1};
    float y[4];
    prt_dims xd = dims1(4), yd;
    prt_network *net = NULL;
    char err[1024] = "";
    run_model(r, "ext_good.onnx", NULL, 0, x, &xd, y, 4, &yd);
    CHECK(y[0] == 2 && y[3] == 5);
    CHECK(prt_network_from_onnx_file(r, path_of("ext_escape.onnx"), NULL, &net, err, sizeof err) != PRT_OK);
    CHECK_STR_CONTAINS(err, "initializer \"w\": external data location \"../escape.bin\"");
    CHECK_EQ_INT(prt_network_from_onnx_file(r, path_of("ext_short.onnx"), NULL, &net, err, sizeof err),
                 PRT_STATUS_TRUNCATED);
    prt_registry_destroy(r);
}

TEST(alias_table_serves_mmcv_dcn)
{
    prt_network *net = NULL;
    prt_engine *e = NULL;
    char err[1024] = "";
    CHECK_MSG(prt_network_from_onnx_file(NULL, path_of("mmcv_dcn.onnx"), NULL, &net, err, sizeof err) == PRT_OK,
              "%s", err);
    CHECK(strcmp(net->layers[0].plugin, "ModulatedDeformConv2d") == 0);
    CHECK_MSG(prt_engine_build(net, NULL, prt_registry_global(), &e, err, sizeof err) == PRT_OK, "%s", err);
    prt_engine_destroy(e);
    prt_network_destroy(net);
}

TEST(tensorrt_custom_op_efficient_nms)
{
    prt_network *net = NULL;
    prt_engine *e = NULL;
    char err[1024] = "";
    int32_t i;
    CHECK_MSG(prt_network_from_onnx_file(NULL, path_of("trt_efficient_nms.onnx"), NULL, &net, err, sizeof err) ==
                  PRT_OK,
              "%s", err);
    CHECK(strcmp(net->layers[0].plugin, "EfficientNMS_TRT") == 0 && strcmp(net->layers[0].version, "1") == 0);
    CHECK_MSG(prt_engine_build(net, NULL, prt_registry_global(), &e, err, sizeof err) == PRT_OK, "%s", err);
    CHECK_EQ_INT(prt_engine_nb_io(e), 6);
    for (i = 0; i < prt_engine_nb_io(e); i++) {
        prt_io_desc d;
        CHECK_OK(prt_engine_io(e, i, &d));
        if (strcmp(d.name, "detection_boxes") == 0) CHECK(d.dims.nb == 3 && d.dims.d[1] == 10);
    }
    prt_engine_destroy(e);
    prt_network_destroy(net);
}

TEST(memory_buffer_without_folder)
{
    prt_registry *r = toy_registry();
    prt_network *net = NULL;
    void *buf = NULL;
    size_t len = 0;
    char err[1024] = "";
    CHECK_OK(prt__read_file(path_of("relu_add.onnx"), &buf, &len, err, sizeof err));
    CHECK_OK(prt_network_from_onnx(r, buf, len, NULL, NULL, &net, err, sizeof err));
    CHECK_EQ_INT(prt_network_nb_layers(net), 2);
    prt_network_destroy(net);
    prt__free(buf);
    CHECK_OK(prt__read_file(path_of("ext_good.onnx"), &buf, &len, err, sizeof err));
    CHECK_EQ_INT(prt_network_from_onnx(r, buf, len, NULL, NULL, &net, err, sizeof err), PRT_STATUS_UNSUPPORTED);
    CHECK_STR_CONTAINS(err, "given from memory");
    prt__free(buf);
    prt_registry_destroy(r);
}

TEST(failed_allocations_leave_nothing)
{
    prt_registry *r = toy_registry();
    prt_onnx_model *m = NULL;
    char err[1024];
    long n;
    int ok = 0;
    CHECK_OK(prt_onnx_model_load(path_of("relu_add.onnx"), &m, err, sizeof err));
    for (n = 0; n < 2000 && !ok; n += 1) {
        prt_network *net = NULL;
        prt_status s;
        err[0] = 0;
        prt__alloc_fail_after(n);
        s = prt_onnx_import(m, r, NULL, &net, err, sizeof err);
        prt__alloc_fail_after(-1);
        if (s == PRT_OK) {
            ok = 1;
            prt_network_destroy(net);
        } else {
            CHECK_MSG(net == NULL && err[0], "allocation %ld: status %d, no message", n, (int)s);
        }
    }
    CHECK(ok);
    prt_onnx_model_destroy(m);
    prt_registry_destroy(r);
}
