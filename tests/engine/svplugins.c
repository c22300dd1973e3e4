/*
 * tests/engine/svplugins.c - shape-value test plugins (see svplugins.h),
 * compiled into test_engine_shapeval and, with SV_LIBRARY, into the plugin
 * library libprt_svtoy.so that the CLI test loads.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "svplugins.h"
#include "toyfield.h"

static atomic_int enqueues[K_RESHAPE + 1];

int sv_enqueues(int kind) { return atomic_load(&enqueues[kind]); }

static int kind_of(const prt_field_plugin *p) { return toy_kind_of(p); }
static int32_t sv_nb_outputs(const prt_field_plugin *p) { (void)p; return 1; }

static prt_status sv_types(const prt_field_plugin *p, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                           int32_t nb_out, prt_msg *err)
{
    (void)nb_in; (void)nb_out; (void)err;
    out[0] = kind_of(p) == K_RESHAPE ? in[0] : PRT_DTYPE_I64;
    return PRT_OK;
}

static prt_status sv_info(const prt_field_plugin *p, prt_io_info *info, prt_msg *err)
{
    (void)err;
    switch (kind_of(p)) {
    case K_GATHER: case K_MUL: info->value_inputs = 3u; break;
    case K_CONCAT: info->value_inputs = 0xffffffffu; break;
    case K_RESHAPE: info->value_inputs = 2u; break;
    default: break;
    }
    return PRT_OK;
}

static prt_status need_values(const prt_dims_expr *v, int32_t i, prt_msg *err)
{
    if (v[i].nb == PRT_NB_VALUES_UNKNOWN) {
        prt_msg_set(err, "input %d has no shape values", (int)i);
        return PRT_STATUS_SHAPE_MISMATCH;
    }
    return PRT_OK;
}

static prt_status sv_shapes(prt_field_plugin *p, const prt_dims_expr *in, const prt_dims_expr *iv, int32_t nb_in,
                            prt_dims_expr *out, prt_dims_expr *ov, int32_t nb_out, prt_expr_builder *eb,
                            prt_msg *err)
{
    int32_t i, k, n = 0;
    (void)nb_out;
    switch (kind_of(p)) {
    case K_SHAPE:
        out[0].nb = 1;
        out[0].d[0] = eb->constant(eb, in[0].nb);
        ov[0] = in[0];
        return PRT_OK;
    case K_GATHER:
        if (need_values(iv, 0, err) || need_values(iv, 1, err)) return PRT_STATUS_SHAPE_MISMATCH;
        out[0] = in[1];
        ov[0].nb = iv[1].nb;
        for (k = 0; k < iv[1].nb; k++) {
            int64_t idx;
            if (!eb->get_constant(eb, iv[1].d[k], &idx) || idx < -iv[0].nb || idx >= iv[0].nb) {
                prt_msg_set(err, "TestGather: index %d is not a constant in -%d..%d", (int)k, (int)iv[0].nb,
                            (int)iv[0].nb - 1);
                return PRT_STATUS_SHAPE_MISMATCH;
            }
            ov[0].d[k] = iv[0].d[idx < 0 ? idx + iv[0].nb : idx];
        }
        return PRT_OK;
    case K_CONCAT:
        for (i = 0; i < nb_in; i++) {
            if (need_values(iv, i, err)) return PRT_STATUS_SHAPE_MISMATCH;
            if (n + iv[i].nb > PRT_MAX_DIMS) {
                prt_msg_set(err, "TestConcat: more than %d values", PRT_MAX_DIMS);
                return PRT_STATUS_SHAPE_MISMATCH;
            }
            for (k = 0; k < iv[i].nb; k++) ov[0].d[n++] = iv[i].d[k];
        }
        ov[0].nb = n;
        out[0].nb = 1;
        out[0].d[0] = eb->constant(eb, n);
        return PRT_OK;
    case K_MUL:
        if (need_values(iv, 0, err) || need_values(iv, 1, err)) return PRT_STATUS_SHAPE_MISMATCH;
        if (iv[0].nb != iv[1].nb) {
            prt_msg_set(err, "TestMul: %d and %d values", (int)iv[0].nb, (int)iv[1].nb);
            return PRT_STATUS_SHAPE_MISMATCH;
        }
        out[0] = in[0];
        ov[0].nb = iv[0].nb;
        for (k = 0; k < iv[0].nb; k++) ov[0].d[k] = eb->operation(eb, PRT_EXPR_PROD, iv[0].d[k], iv[1].d[k]);
        return PRT_OK;
    default: { /* K_RESHAPE */
        const prt_expr *vol = eb->constant(eb, 1), *known = eb->constant(eb, 1);
        int32_t rest = -1;
        if (need_values(iv, 1, err)) return PRT_STATUS_SHAPE_MISMATCH;
        for (k = 0; k < in[0].nb; k++) vol = eb->operation(eb, PRT_EXPR_PROD, vol, in[0].d[k]);
        out[0].nb = iv[1].nb;
        for (k = 0; k < iv[1].nb; k++) {
            int64_t c;
            if (eb->get_constant(eb, iv[1].d[k], &c) && c == -1) {
                rest = k;
                continue;
            }
            out[0].d[k] = iv[1].d[k];
            known = eb->operation(eb, PRT_EXPR_PROD, known, iv[1].d[k]);
        }
        if (rest >= 0) out[0].d[rest] = eb->operation(eb, PRT_EXPR_FLOOR_DIV, vol, known);
        return PRT_OK;
    }
    }
}

static prt_status sv_shapes_v1(prt_field_plugin *p, const prt_dims_expr *in, int32_t nb_in, prt_dims_expr *out,
                               int32_t nb_out, prt_expr_builder *eb, prt_msg *err)
{
    (void)p; (void)in; (void)nb_in; (void)out; (void)nb_out; (void)eb;
    prt_msg_set(err, "this plugin needs a host with get_output_shapes_v2");
    return PRT_STATUS_UNSUPPORTED;
}

static prt_status sv_enqueue(prt_field_plugin *p, const prt_tensor_desc *id, const prt_tensor_desc *od,
                             const void *const *in, void *const *out, void *ws, prt_exec *ex)
{
    (void)ws;
    atomic_fetch_add(&enqueues[kind_of(p)], 1);
    if (kind_of(p) != K_RESHAPE) {
        ex->set_error(ex, "a layer whose outputs are all shape values must not be enqueued");
        return PRT_STATUS_PLUGIN_ERROR;
    }
    memcpy(out[0], in[0], (size_t)prt_dims_volume(&od[0].dims) * prt_dtype_size(id[0].dtype));
    return PRT_OK;
}

static const prt_plugin_build_ops sv_build = {
    .struct_size = sizeof sv_build, .abi_version = PRT_ABI_VERSION,
    .get_nb_outputs = sv_nb_outputs, .get_output_data_types = sv_types, .get_output_shapes = sv_shapes_v1,
    .get_io_info = sv_info, .get_output_shapes_v2 = sv_shapes,
};
static const prt_plugin_runtime_ops sv_runtime = {
    .struct_size = sizeof sv_runtime, .abi_version = PRT_ABI_VERSION,
    .enqueue = sv_enqueue, .attach_to_context = toy_attach, .get_fields_to_serialize = toy_fields,
};
static const prt_field_plugin_ops sv_ops = {
    .struct_size = sizeof sv_ops, .abi_version = PRT_ABI_VERSION,
    .core = &toy_core, .build = &sv_build, .runtime = &sv_runtime, .clone = toy_clone, .destroy = toy_destroy,
};

#define SV_CREATOR(var, nm, k)                                                                                    \
    static const toy_kind var##_kind = {&sv_ops, k};                                                              \
    static const prt_plugin_creator var = {                                                                       \
        .struct_size = sizeof(prt_plugin_creator), .abi_version = PRT_ABI_VERSION, .name = nm, .version = "1",    \
        .plugin_namespace = "", .style = PRT_STYLE_FIELD, .field_schema_size = sizeof(prt_field_schema),         \
        .create_field = toy_create, .doc = "shape-value test plugin", .user = (void *)&var##_kind};
SV_CREATOR(shape_creator, "TestShape", K_SHAPE)
SV_CREATOR(gather_creator, "TestGather", K_GATHER)
SV_CREATOR(concat_creator, "TestConcat", K_CONCAT)
SV_CREATOR(mul_creator, "TestMul", K_MUL)
SV_CREATOR(reshape_creator, "TestReshape", K_RESHAPE)

const prt_plugin_creator *const sv_creators[SV_NB_CREATORS] = {&shape_creator, &gather_creator, &concat_creator,
                                                              &mul_creator, &reshape_creator};

#ifdef SV_LIBRARY
PRT_PLUGIN_LIBRARY("svtoy", sv_creators, SV_NB_CREATORS)
#endif
