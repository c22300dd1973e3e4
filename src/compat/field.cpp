/* compat/field.cpp - an IPluginV3 with the V3One core, build and runtime
 * capabilities seen as a field-style plugrt plugin. The plugin is saved as
 * what getFieldsToSerialize() returns and re-created by its creator at
 * TensorRTPhase::kRUNTIME; attachToContext gives the per-context instance. */
#include <cstring>
#include <new>

#include "compat/compat.h"

namespace prt_compat
{
namespace
{

struct field {
    prt_field_plugin base;
    nvinfer1::IPluginV3 *p;
    nvinfer1::IPluginV3OneCore *core;
    nvinfer1::IPluginV3OneBuild *build; /* may be nullptr (runtime-only plugin) */
    nvinfer1::IPluginV3OneRuntime *rt;
    int32_t nb_in = -1;
    int32_t nb_out = -1;
    std::vector<prt_field> saved;
};

field *F(const prt_field_plugin *f)
{
    return const_cast<field *>(reinterpret_cast<const field *>(f));
}

const char *name_of(const prt_field_plugin *f)
{
    const char *n = F(f)->core->getPluginName();
    return n ? n : "?";
}

prt_status remember_counts(prt_field_plugin *f, int32_t nb_in, int32_t nb_out)
{
    F(f)->nb_in = nb_in;
    F(f)->nb_out = nb_out;
    return PRT_OK;
}

prt_status need_build(const prt_field_plugin *f, prt_msg *err)
{
    if (F(f)->build) return PRT_OK;
    prt_msg_set(err, "%s: getCapabilityInterface(kBUILD) returned nullptr; plugrt asks the build capability for "
                     "output types and shapes at load time too, so a V3 plugin must offer it in both phases",
                name_of(f));
    return PRT_STATUS_UNSUPPORTED;
}

const char *core_name(const prt_field_plugin *f)
{
    return F(f)->core->getPluginName();
}

const char *core_version(const prt_field_plugin *f)
{
    return F(f)->core->getPluginVersion();
}

const char *core_namespace(const prt_field_plugin *f)
{
    const char *ns = F(f)->core->getPluginNamespace();
    return ns ? ns : "";
}

int32_t nb_outputs(const prt_field_plugin *f)
{
    return F(f)->build ? F(f)->build->getNbOutputs() : -1;
}

prt_status status_of(int32_t rc, const prt_field_plugin *f, const char *call, prt_msg *err)
{
    if (rc == 0) return PRT_OK;
    prt_msg_set(err, "%s: %s returned %d", name_of(f), call, static_cast<int>(rc));
    return PRT_STATUS_PLUGIN_ERROR;
}

prt_status output_types(const prt_field_plugin *f, const prt_dtype *in, int32_t nb_in, prt_dtype *out, int32_t nb_out,
                        prt_msg *err)
{
    nvinfer1::DataType tin[kMaxIO], tout[kMaxIO];
    prt_status s = need_build(f, err);
    if (s != PRT_OK) return s;
    if (nb_in > kMaxIO || nb_out > kMaxIO) return too_many_io(name_of(f), nb_in, nb_out, err);
    for (int32_t i = 0; i < nb_in; i++) to_trt(in[i], &tin[i]);
    for (int32_t i = 0; i < nb_out; i++) tout[i] = nvinfer1::DataType::kFLOAT;
    s = status_of(F(f)->build->getOutputDataTypes(tout, nb_out, tin, nb_in), f, "getOutputDataTypes", err);
    if (s != PRT_OK) return s;
    for (int32_t i = 0; i < nb_out; i++)
        if (!to_prt(tout[i], &out[i])) {
            prt_msg_set(err, "%s: getOutputDataTypes gave output %d the type %s, which plugrt tensors cannot have",
                        name_of(f), static_cast<int>(i), trt_type_name(tout[i]));
            return PRT_STATUS_UNSUPPORTED;
        }
    return PRT_OK;
}

prt_status output_shapes(prt_field_plugin *f, const prt_dims_expr *in, int32_t nb_in, prt_dims_expr *out, int32_t nb_out,
                         prt_expr_builder *eb, prt_msg *err)
{
    prt_status s = need_build(f, err);
    if (s != PRT_OK) return s;
    expr_builder builder(eb);
    std::vector<nvinfer1::DimsExprs> ins, outs;
    s = builder.wrap_all(in, nb_in, &ins, err);
    if (s != PRT_OK) return s;
    try {
        outs.assign(static_cast<size_t>(nb_out), nvinfer1::DimsExprs{});
    } catch (...) {
        prt_msg_set(err, "out of memory");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    s = status_of(F(f)->build->getOutputShapes(ins.data(), nb_in, nullptr, 0, outs.data(), nb_out, builder), f,
                  "getOutputShapes", err);
    for (int32_t i = 0; s == PRT_OK && i < nb_out; i++) {
        char what[96];
        snprintf(what, sizeof what, "%s: getOutputShapes, output %d", name_of(f), static_cast<int>(i));
        s = builder.unwrap(outs[i], &out[i], what, err);
    }
    return s;
}

int supports(prt_field_plugin *f, int32_t pos, const prt_dyn_tensor_desc *io, int32_t nb_in, int32_t nb_out)
{
    nvinfer1::DynamicPluginTensorDesc d[2 * kMaxIO];
    if (!F(f)->build || nb_in < 0 || nb_out < 0 || nb_in + nb_out > 2 * kMaxIO || pos < 0 || pos >= nb_in + nb_out)
        return 0;
    for (int32_t i = 0; i < nb_in + nb_out; i++) d[i] = to_trt(io[i]);
    return F(f)->build->supportsFormatCombination(pos, d, nb_in, nb_out) ? 1 : 0;
}

prt_status configure(prt_field_plugin *f, const prt_dyn_tensor_desc *in, int32_t nb_in, const prt_dyn_tensor_desc *out,
                     int32_t nb_out, prt_msg *err)
{
    prt_status s = need_build(f, err);
    if (s != PRT_OK) return s;
    dyn_io io(in, nb_in, out, nb_out);
    if (!io.ok) return too_many_io(name_of(f), nb_in, nb_out, err);
    s = status_of(F(f)->build->configurePlugin(io.in, nb_in, io.out, nb_out), f, "configurePlugin", err);
    return s == PRT_OK ? remember_counts(f, nb_in, nb_out) : s;
}

size_t workspace(const prt_field_plugin *f, const prt_dyn_tensor_desc *in, int32_t nb_in, const prt_dyn_tensor_desc *out,
                 int32_t nb_out)
{
    dyn_io io(in, nb_in, out, nb_out);
    return F(f)->build && io.ok ? F(f)->build->getWorkspaceSize(io.in, nb_in, io.out, nb_out) : 0;
}

int32_t valid_tactics(prt_field_plugin *f, int32_t *tactics, int32_t cap)
{
    if (!F(f)->build) return 0;
    int32_t n = F(f)->build->getNbTactics();
    if (n <= 0) return 0;
    try {
        std::vector<int32_t> all(static_cast<size_t>(n));
        if (F(f)->build->getValidTactics(all.data(), n) != 0) return 0;
        for (int32_t i = 0; i < n && i < cap; i++) tactics[i] = all[static_cast<size_t>(i)];
    } catch (...) {
        return 0;
    }
    return n;
}

prt_status set_tactic(prt_field_plugin *f, int32_t tactic, prt_msg *err)
{
    return status_of(F(f)->rt->setTactic(tactic), f, "setTactic", err);
}

prt_status shape_change(prt_field_plugin *f, const prt_tensor_desc *in, int32_t nb_in, const prt_tensor_desc *out,
                        int32_t nb_out, prt_msg *err)
{
    plain_io io(in, nb_in, out, nb_out);
    if (!io.ok) return too_many_io(name_of(f), nb_in, nb_out, err);
    prt_status s = status_of(F(f)->rt->onShapeChange(io.in, nb_in, io.out, nb_out), f, "onShapeChange", err);
    return s == PRT_OK ? remember_counts(f, nb_in, nb_out) : s;
}

prt_status enqueue(prt_field_plugin *f, const prt_tensor_desc *in_desc, const prt_tensor_desc *out_desc,
                   const void *const *inputs, void *const *outputs, void *ws, prt_exec *ex)
{
    const field *o = F(f);
    return run_enqueue(name_of(f), "onShapeChange", o->nb_in, o->nb_out, in_desc, out_desc, ex,
                       [&](const nvinfer1::PluginTensorDesc *ti, const nvinfer1::PluginTensorDesc *to, cudaStream_t st) {
                           return o->rt->enqueue(ti, to, inputs, outputs, ws, st);
                       });
}

/* What attachToContext receives: plugrt offers neither service. */
class resource_context final : public nvinfer1::IPluginResourceContext
{
public:
    nvinfer1::IGpuAllocator *getGpuAllocator() const noexcept override
    {
        return nullptr;
    }
    nvinfer1::IErrorRecorder *getErrorRecorder() const noexcept override
    {
        return nullptr;
    }
};

/* Wrap `c`, a copy of f (clone or per-context instance) from `call`. */
prt_status wrap_copy(const prt_field_plugin *f, nvinfer1::IPluginV3 *c, const char *call, prt_field_plugin **out,
                     prt_msg *err)
{
    if (!c) {
        prt_msg_set(err, "%s: %s returned nullptr", name_of(f), call);
        return PRT_STATUS_PLUGIN_ERROR;
    }
    prt_status s = field_wrap(c, name_of(f), out, err);
    if (s == PRT_OK) remember_counts(*out, F(f)->nb_in, F(f)->nb_out);
    return s;
}

prt_status attach(prt_field_plugin *f, prt_plugin_context *ctx, prt_field_plugin **out, prt_msg *err)
{
    static resource_context rc;
    return wrap_copy(f, F(f)->rt->attachToContext(&rc), "attachToContext", out, err);
}

prt_status fields_to_save(prt_field_plugin *f, prt_fields *out, prt_msg *err)
{
    char who[160];
    snprintf(who, sizeof who, "%s: getFieldsToSerialize", name_of(f));
    prt_status s = fields_to_prt(F(f)->rt->getFieldsToSerialize(), &F(f)->saved, who, err);
    if (s != PRT_OK) return s;
    out->fields = F(f)->saved.empty() ? nullptr : F(f)->saved.data();
    out->nb = static_cast<int32_t>(F(f)->saved.size());
    out->reserved_ = 0;
    return PRT_OK;
}

prt_status clone(const prt_field_plugin *f, prt_field_plugin **out, prt_msg *err)
{
    return wrap_copy(f, F(f)->p->clone(), "clone()", out, err);
}

void destroy(prt_field_plugin *f)
{
    field *o = F(f);
    delete o->p;
    delete o;
}

const prt_plugin_core_ops core_ops = {
    .struct_size = sizeof(prt_plugin_core_ops),
    .abi_version = PRT_ABI_VERSION,
    .get_name = core_name,
    .get_version = core_version,
    .get_namespace = core_namespace,
};

const prt_plugin_build_ops build_ops = {
    .struct_size = sizeof(prt_plugin_build_ops),
    .abi_version = PRT_ABI_VERSION,
    .get_nb_outputs = nb_outputs,
    .get_output_data_types = output_types,
    .get_output_shapes = output_shapes,
    .supports_format_combination = supports,
    .configure = configure,
    .get_workspace_size = workspace,
    .get_valid_tactics = valid_tactics,
};

const prt_plugin_runtime_ops runtime_ops = {
    .struct_size = sizeof(prt_plugin_runtime_ops),
    .abi_version = PRT_ABI_VERSION,
    .set_tactic = set_tactic,
    .on_shape_change = shape_change,
    .enqueue = enqueue,
    .attach_to_context = attach,
    .get_fields_to_serialize = fields_to_save,
};

const prt_field_plugin_ops ops = {
    .struct_size = sizeof(prt_field_plugin_ops),
    .abi_version = PRT_ABI_VERSION,
    .core = &core_ops,
    .build = &build_ops,
    .runtime = &runtime_ops,
    .clone = clone,
    .destroy = destroy,
};

} // namespace

prt_status field_wrap(nvinfer1::IPluginV3 *p, const char *who, prt_field_plugin **out, prt_msg *err)
{
    using nvinfer1::PluginCapabilityType;
    auto *core = dynamic_cast<nvinfer1::IPluginV3OneCore *>(p->getCapabilityInterface(PluginCapabilityType::kCORE));
    auto *build = dynamic_cast<nvinfer1::IPluginV3OneBuild *>(p->getCapabilityInterface(PluginCapabilityType::kBUILD));
    auto *rt = dynamic_cast<nvinfer1::IPluginV3OneRuntime *>(p->getCapabilityInterface(PluginCapabilityType::kRUNTIME));
    if (!core || !rt) {
        prt_msg_set(err, "%s: getCapabilityInterface(%s) gave %s; plugrt needs an IPluginV3OneCore and an "
                         "IPluginV3OneRuntime",
                    who, !core ? "kCORE" : "kRUNTIME", "nullptr or another interface");
        delete p;
        return PRT_STATUS_UNSUPPORTED;
    }
    field *o = new (std::nothrow) field;
    if (!o) {
        delete p;
        prt_msg_set(err, "out of memory wrapping a TensorRT-style plugin");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    o->base.ops = &ops;
    o->p = p;
    o->core = core;
    o->build = build;
    o->rt = rt;
    *out = &o->base;
    return PRT_OK;
}

} // namespace prt_compat
