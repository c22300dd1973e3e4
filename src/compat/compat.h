/*
 * compat/compat.h - the adapter between TensorRT-style C++ plugins
 * (include/plugrt/compat/) and plugrt's C plugin ABI (plugrt/plugin.h).
 *
 *   convert.cpp   enums, descriptors, dims, fields; the expression builder
 *   creator.cpp   IPluginCreator / IPluginCreatorV3One -> prt_plugin_creator
 *   blob.cpp      IPluginV2DynamicExt -> blob-style prt_blob_plugin
 *   field.cpp     IPluginV3 (+ V3One capabilities) -> field-style prt_field_plugin
 *   registry.cpp  getPluginRegistry(), getLogger(), initLibNvInferPlugins and,
 *                 in a plugin library (PRT_COMPAT_LIBRARY), its entry point
 *
 * The adapter is linked into the program or the plugin library that holds
 * the TensorRT-style plugins, never into libplugrt: it needs the C++ runtime,
 * and a plugin library must not link the runtime. It only uses plugin.h (and,
 * outside a plugin library, prt_static_creator_push and prt_log).
 *
 * Nothing here throws across the C ABI: every entry catches, and reports
 * through prt_msg / prt_exec.set_error.
 */
#ifndef PLUGRT_SRC_COMPAT_COMPAT_H
#define PLUGRT_SRC_COMPAT_COMPAT_H

#include <cstdio>
#include <deque>
#include <string>
#include <vector>

#include "NvInferRuntime.h"
#include "plugrt/plugin.h"

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace prt_compat
{

/* ---- convert.cpp ---------------------------------------------------------- */

bool to_trt(prt_dtype t, nvinfer1::DataType *out);
bool to_prt(nvinfer1::DataType t, prt_dtype *out);
bool to_trt(prt_format f, nvinfer1::TensorFormat *out);
const char *trt_type_name(nvinfer1::DataType t);
nvinfer1::Dims to_trt(const prt_dims &d);
nvinfer1::PluginTensorDesc to_trt(const prt_tensor_desc &d);
nvinfer1::DynamicPluginTensorDesc to_trt(const prt_dyn_tensor_desc &d);
bool to_prt(nvinfer1::PluginFieldType t, prt_field_type *out);
nvinfer1::PluginFieldType to_trt(prt_field_type t);
const char *trt_field_type_name(nvinfer1::PluginFieldType t);

/* A prt field collection as TensorRT PluginFields (borrowing the data). */
struct field_list {
    std::vector<nvinfer1::PluginField> fields;
    nvinfer1::PluginFieldCollection fc{0, nullptr};
};
prt_status fields_to_trt(const prt_fields *in, field_list *out, prt_msg *err);

/* A TensorRT collection as prt fields (borrowing names and data). */
prt_status fields_to_prt(const nvinfer1::PluginFieldCollection *in, std::vector<prt_field> *out,
                         const char *who, prt_msg *err);

/* An IDimensionExpr over one host expression. */
class dim_expr final : public nvinfer1::IDimensionExpr
{
public:
    dim_expr(prt_expr_builder *eb, const prt_expr *e) : eb_(eb), e_(e) {}
    ~dim_expr() noexcept override = default;
    bool isConstant() const noexcept override;
    int64_t getConstantValue() const noexcept override;
    bool isSizeTensor() const noexcept override
    {
        return false;
    }
    const prt_expr *host() const
    {
        return e_;
    }

private:
    prt_expr_builder *eb_;
    const prt_expr *e_;
};

/* IExprBuilder over one prt_expr_builder for the duration of one shape call. */
class expr_builder final : public nvinfer1::IExprBuilder
{
public:
    explicit expr_builder(prt_expr_builder *eb) : eb_(eb) {}
    ~expr_builder() noexcept override = default;
    nvinfer1::IDimensionExpr const *constant(int64_t value) noexcept override;
    nvinfer1::IDimensionExpr const *operation(nvinfer1::DimensionOperation op, nvinfer1::IDimensionExpr const &a,
                                              nvinfer1::IDimensionExpr const &b) noexcept override;
    nvinfer1::IDimensionExpr const *declareSizeTensor(int32_t, nvinfer1::IDimensionExpr const &,
                                                      nvinfer1::IDimensionExpr const &) noexcept override;
    /* Wrap a host expression (nullptr when out of memory). */
    nvinfer1::IDimensionExpr const *wrap(const prt_expr *e) noexcept;
    /* The host expressions of what the plugin returned: ok, or an error naming `what`. */
    prt_status unwrap(const nvinfer1::DimsExprs &in, prt_dims_expr *out, const char *what, prt_msg *err) const;
    /* Inputs as DimsExprs. */
    prt_status wrap_all(const prt_dims_expr *in, int32_t nb, std::vector<nvinfer1::DimsExprs> *out, prt_msg *err);
    bool used_size_tensor() const { return size_tensor_; }

private:
    prt_expr_builder *eb_;
    std::deque<dim_expr> exprs_;
    bool size_tensor_ = false;
};

/* At most this many inputs, and this many outputs, per layer. */
constexpr int32_t kMaxIO = 64;

/* One call's input and output descriptors in TensorRT's types; `ok` is false
 * (and nothing converted) when a count is negative or above kMaxIO. */
template <typename Trt, typename Prt>
struct io_descs {
    Trt in[kMaxIO];
    Trt out[kMaxIO];
    bool ok;
    io_descs(const Prt *i, int32_t nb_in, const Prt *o, int32_t nb_out)
        : ok(nb_in >= 0 && nb_out >= 0 && nb_in <= kMaxIO && nb_out <= kMaxIO)
    {
        for (int32_t k = 0; ok && k < nb_in; k++) in[k] = to_trt(i[k]);
        for (int32_t k = 0; ok && k < nb_out; k++) out[k] = to_trt(o[k]);
    }
};
using plain_io = io_descs<nvinfer1::PluginTensorDesc, prt_tensor_desc>;
using dyn_io = io_descs<nvinfer1::DynamicPluginTensorDesc, prt_dyn_tensor_desc>;

/* "at most 64 inputs and 64 outputs" into err; PRT_STATUS_UNSUPPORTED. */
prt_status too_many_io(const char *plugin, int32_t nb_in, int32_t nb_out, prt_msg *err);

/* ---- the enqueue in progress on this thread (registry.cpp) --------------- */

struct enqueue_scope {
    explicit enqueue_scope(prt_exec *ex);
    ~enqueue_scope();
    bool host_path_asked() const;
};
/* Checks shared by both styles after a plugin's enqueue returned `rc`. */
prt_status finish_enqueue(const enqueue_scope &scope, int32_t rc, const char *plugin, prt_exec *ex);

/* Both styles' enqueue: convert the descriptors (the counts come from the
 * last configure / shape-change call, named in the error when it was never
 * made), call `enq(in, out, stream)`, check the outcome. */
template <typename Enqueue>
prt_status run_enqueue(const char *plugin, const char *count_source, int32_t nb_in, int32_t nb_out,
                       const prt_tensor_desc *in_desc, const prt_tensor_desc *out_desc, prt_exec *ex, Enqueue &&enq)
{
    plain_io io(in_desc, nb_in, out_desc, nb_out);
    if (!io.ok) {
        char msg[256];
        snprintf(msg, sizeof msg, "%s: enqueue before %s (the input and output counts are unknown)", plugin,
                 count_source);
        ex->set_error(ex, msg);
        return PRT_STATUS_INTERNAL;
    }
    enqueue_scope scope(ex);
    int32_t rc = enq(io.in, io.out, static_cast<cudaStream_t>(ex->cuda_stream));
    return finish_enqueue(scope, rc, plugin, ex);
}

/* ---- creators and plugins ------------------------------------------------ */

struct creator;

/* Wrap a TensorRT creator as a plugrt creator; nullptr and `why` on failure. */
creator *creator_wrap(nvinfer1::IPluginCreatorInterface *c, const char *plugin_namespace, std::string *why);
/* Free a wrapper made by creator_wrap (the TensorRT creator is not its own). */
void creator_free(creator *c);
const prt_plugin_creator *creator_get(const creator *c);
nvinfer1::IPluginCreatorInterface *creator_trt(const creator *c);

/* A new blob-style plugin owning `p` (destroyed on failure). */
prt_status blob_wrap(nvinfer1::IPluginV2DynamicExt *p, prt_blob_plugin **out, prt_msg *err);
/* A new field-style plugin owning `p` (deleted on failure). */
prt_status field_wrap(nvinfer1::IPluginV3 *p, const char *who, prt_field_plugin **out, prt_msg *err);

/* Library mode only: forward a message to the host's log. */
void log_message(prt_severity sev, const char *msg);

} // namespace prt_compat

#endif /* PLUGRT_SRC_COMPAT_COMPAT_H */
