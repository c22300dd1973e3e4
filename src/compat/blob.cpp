/* compat/blob.cpp - an IPluginV2DynamicExt seen as a blob-style plugrt plugin.
 *
 * Every prt_blob_plugin_ops member forwards to the TensorRT method of the same
 * role, so the calls reach the plugin in the order docs/lifecycle.md states.
 * The input and output counts (TensorRT's enqueue does not take them) are
 * recorded at configure_plugin, which plugrt always calls before enqueue, and
 * travel with clones. */
#include <cstring>
#include <new>

#include "compat/compat.h"

namespace prt_compat
{
namespace
{

struct blob {
    prt_blob_plugin base;
    nvinfer1::IPluginV2DynamicExt *p;
    int32_t nb_in = -1;
    int32_t nb_out = -1;
};

nvinfer1::IPluginV2DynamicExt *P(const prt_blob_plugin *b)
{
    return reinterpret_cast<const blob *>(b)->p;
}

const char *type_of(const prt_blob_plugin *b)
{
    const char *t = P(b)->getPluginType();
    return t ? t : "?";
}

int32_t nb_outputs(const prt_blob_plugin *b)
{
    return P(b)->getNbOutputs();
}

prt_status output_types(const prt_blob_plugin *b, const prt_dtype *in, int32_t nb_in, prt_dtype *out, int32_t nb_out,
                        prt_msg *err)
{
    nvinfer1::DataType tin[kMaxIO];
    if (nb_in > kMaxIO || nb_out > kMaxIO) return too_many_io(type_of(b), nb_in, nb_out, err);
    for (int32_t i = 0; i < nb_in; i++) to_trt(in[i], &tin[i]);
    for (int32_t i = 0; i < nb_out; i++) {
        nvinfer1::DataType t = P(b)->getOutputDataType(i, tin, nb_in);
        if (!to_prt(t, &out[i])) {
            prt_msg_set(err, "%s: getOutputDataType(%d) gave %s; plugrt tensors are kFLOAT, kHALF, kBF16, kINT8, "
                             "kUINT8, kINT32, kINT64 or kBOOL",
                        type_of(b), static_cast<int>(i), trt_type_name(t));
            return PRT_STATUS_UNSUPPORTED;
        }
    }
    return PRT_OK;
}

prt_status output_dims(prt_blob_plugin *b, int32_t index, const prt_dims_expr *in, int32_t nb_in,
                       prt_expr_builder *eb, prt_dims_expr *out, prt_msg *err)
{
    expr_builder builder(eb);
    std::vector<nvinfer1::DimsExprs> ins;
    prt_status s = builder.wrap_all(in, nb_in, &ins, err);
    if (s != PRT_OK) return s;
    nvinfer1::DimsExprs r = P(b)->getOutputDimensions(index, ins.data(), nb_in, builder);
    char what[96];
    snprintf(what, sizeof what, "getOutputDimensions(%d)", static_cast<int>(index));
    return builder.unwrap(r, out, what, err);
}

int supports(prt_blob_plugin *b, int32_t pos, const prt_tensor_desc *io, int32_t nb_in, int32_t nb_out)
{
    nvinfer1::PluginTensorDesc d[2 * kMaxIO];
    if (nb_in < 0 || nb_out < 0 || nb_in + nb_out > 2 * kMaxIO || pos < 0 || pos >= nb_in + nb_out) return 0;
    for (int32_t i = 0; i < nb_in + nb_out; i++) d[i] = to_trt(io[i]);
    return P(b)->supportsFormatCombination(pos, d, nb_in, nb_out) ? 1 : 0;
}

prt_status configure(prt_blob_plugin *b, const prt_dyn_tensor_desc *in, int32_t nb_in, const prt_dyn_tensor_desc *out,
                     int32_t nb_out, prt_msg *err)
{
    dyn_io io(in, nb_in, out, nb_out);
    if (!io.ok) return too_many_io(type_of(b), nb_in, nb_out, err);
    P(b)->configurePlugin(io.in, nb_in, io.out, nb_out);
    reinterpret_cast<blob *>(b)->nb_in = nb_in;
    reinterpret_cast<blob *>(b)->nb_out = nb_out;
    return PRT_OK;
}

size_t workspace(const prt_blob_plugin *b, const prt_tensor_desc *in, int32_t nb_in, const prt_tensor_desc *out,
                 int32_t nb_out)
{
    plain_io io(in, nb_in, out, nb_out);
    return io.ok ? P(b)->getWorkspaceSize(io.in, nb_in, io.out, nb_out) : 0;
}

prt_status initialize(prt_blob_plugin *b, prt_msg *err)
{
    int32_t rc = P(b)->initialize();
    if (rc != 0) {
        prt_msg_set(err, "%s: initialize() returned %d", type_of(b), static_cast<int>(rc));
        return PRT_STATUS_PLUGIN_ERROR;
    }
    return PRT_OK;
}

void terminate(prt_blob_plugin *b)
{
    P(b)->terminate();
}

prt_status enqueue(prt_blob_plugin *b, const prt_tensor_desc *in_desc, const prt_tensor_desc *out_desc,
                   const void *const *inputs, void *const *outputs, void *ws, prt_exec *ex)
{
    const blob *o = reinterpret_cast<const blob *>(b);
    return run_enqueue(type_of(b), "configurePlugin", o->nb_in, o->nb_out, in_desc, out_desc, ex,
                       [&](const nvinfer1::PluginTensorDesc *ti, const nvinfer1::PluginTensorDesc *to, cudaStream_t st) {
                           return o->p->enqueue(ti, to, inputs, outputs, ws, st);
                       });
}

size_t ser_size(const prt_blob_plugin *b)
{
    return P(b)->getSerializationSize();
}

prt_status serialize(const prt_blob_plugin *b, void *buf, size_t cap)
{
    size_t n = P(b)->getSerializationSize();
    if (n > cap) return PRT_STATUS_INVALID_ARGUMENT;
    if (n) P(b)->serialize(buf);
    return PRT_OK;
}

prt_status clone(const prt_blob_plugin *b, prt_blob_plugin **out, prt_msg *err)
{
    const blob *o = reinterpret_cast<const blob *>(b);
    nvinfer1::IPluginV2DynamicExt *c = o->p->clone();
    if (!c) {
        prt_msg_set(err, "%s: clone() returned nullptr", type_of(b));
        return PRT_STATUS_PLUGIN_ERROR;
    }
    prt_status s = blob_wrap(c, out, err);
    if (s == PRT_OK) {
        reinterpret_cast<blob *>(*out)->nb_in = o->nb_in;
        reinterpret_cast<blob *>(*out)->nb_out = o->nb_out;
    }
    return s;
}

void destroy(prt_blob_plugin *b)
{
    blob *o = reinterpret_cast<blob *>(b);
    o->p->destroy();
    delete o;
}

prt_status attach(prt_blob_plugin *b, prt_plugin_context *ctx, prt_msg *err)
{
    /* TensorRT 10 passes no cuDNN or cuBLAS handle either; plugins that need
     * one create it in initialize(). */
    P(b)->attachToContext(nullptr, nullptr, nullptr);
    return PRT_OK;
}

void detach(prt_blob_plugin *b)
{
    P(b)->detachFromContext();
}

const prt_blob_plugin_ops ops = {
    .struct_size = sizeof(prt_blob_plugin_ops),
    .abi_version = PRT_ABI_VERSION,
    .get_nb_outputs = nb_outputs,
    .get_output_data_types = output_types,
    .get_output_dims = output_dims,
    .supports_format_combination = supports,
    .configure_plugin = configure,
    .get_workspace_size = workspace,
    .initialize = initialize,
    .terminate = terminate,
    .enqueue = enqueue,
    .get_serialization_size = ser_size,
    .serialize = serialize,
    .clone = clone,
    .destroy = destroy,
    .attach_to_context = attach,
    .detach_from_context = detach,
};

} // namespace

prt_status blob_wrap(nvinfer1::IPluginV2DynamicExt *p, prt_blob_plugin **out, prt_msg *err)
{
    blob *o = new (std::nothrow) blob;
    if (!o) {
        p->destroy();
        prt_msg_set(err, "out of memory wrapping a TensorRT-style plugin");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    o->base.ops = &ops;
    o->p = p;
    *out = &o->base;
    return PRT_OK;
}

} // namespace prt_compat
