/* compat/convert.cpp - enums, descriptors, fields and shape expressions
 * between TensorRT's C++ vocabulary and plugrt's C ABI. */
#include <climits>
#include <cstring>
#include <new>

#include "compat/compat.h"

namespace prt_compat
{

using nvinfer1::DataType;
using nvinfer1::PluginFieldType;
using nvinfer1::TensorFormat;

namespace
{
struct dtype_pair {
    prt_dtype prt;
    DataType trt;
    const char *name;
};
const dtype_pair dtypes[] = {
    {PRT_DTYPE_F32, DataType::kFLOAT, "kFLOAT"}, {PRT_DTYPE_F16, DataType::kHALF, "kHALF"},
    {PRT_DTYPE_BF16, DataType::kBF16, "kBF16"},  {PRT_DTYPE_I8, DataType::kINT8, "kINT8"},
    {PRT_DTYPE_U8, DataType::kUINT8, "kUINT8"},  {PRT_DTYPE_I32, DataType::kINT32, "kINT32"},
    {PRT_DTYPE_I64, DataType::kINT64, "kINT64"}, {PRT_DTYPE_BOOL, DataType::kBOOL, "kBOOL"},
};

struct field_pair {
    prt_field_type prt;
    PluginFieldType trt;
    const char *name;
};
/* Field types both sides have. kUNKNOWN carries raw bytes. */
const field_pair field_types[] = {
    {PRT_FIELD_FLOAT16, PluginFieldType::kFLOAT16, "kFLOAT16"},
    {PRT_FIELD_FLOAT32, PluginFieldType::kFLOAT32, "kFLOAT32"},
    {PRT_FIELD_FLOAT64, PluginFieldType::kFLOAT64, "kFLOAT64"},
    {PRT_FIELD_INT8, PluginFieldType::kINT8, "kINT8"},
    {PRT_FIELD_INT16, PluginFieldType::kINT16, "kINT16"},
    {PRT_FIELD_INT32, PluginFieldType::kINT32, "kINT32"},
    {PRT_FIELD_INT64, PluginFieldType::kINT64, "kINT64"},
    {PRT_FIELD_CHAR, PluginFieldType::kCHAR, "kCHAR"},
    {PRT_FIELD_DIMS, PluginFieldType::kDIMS, "kDIMS"},
    {PRT_FIELD_BYTES, PluginFieldType::kUNKNOWN, "kUNKNOWN"},
};
} // namespace

bool to_trt(prt_dtype t, DataType *out)
{
    for (const dtype_pair &p : dtypes)
        if (p.prt == t) {
            *out = p.trt;
            return true;
        }
    return false;
}

bool to_prt(DataType t, prt_dtype *out)
{
    for (const dtype_pair &p : dtypes)
        if (p.trt == t) {
            *out = p.prt;
            return true;
        }
    return false;
}

const char *trt_type_name(DataType t)
{
    for (const dtype_pair &p : dtypes)
        if (p.trt == t) return p.name;
    switch (t) {
    case DataType::kFP8: return "kFP8";
    case DataType::kINT4: return "kINT4";
    case DataType::kFP4: return "kFP4";
    case DataType::kE8M0: return "kE8M0";
    default: return "an unknown DataType";
    }
}

bool to_trt(prt_format f, TensorFormat *out)
{
    switch (f) {
    case PRT_FORMAT_LINEAR: *out = TensorFormat::kLINEAR; return true;
    case PRT_FORMAT_NHWC: *out = TensorFormat::kHWC; return true;
    case PRT_FORMAT_NC4HW4: *out = TensorFormat::kCHW4; return true;
    case PRT_FORMAT_NC32HW32: *out = TensorFormat::kCHW32; return true;
    default: return false;
    }
}

nvinfer1::Dims to_trt(const prt_dims &d)
{
    nvinfer1::Dims r{};
    r.nbDims = d.nb;
    for (int32_t i = 0; i < PRT_MAX_DIMS; i++) r.d[i] = i < d.nb ? d.d[i] : 0;
    return r;
}

nvinfer1::PluginTensorDesc to_trt(const prt_tensor_desc &d)
{
    nvinfer1::PluginTensorDesc r{};
    r.dims = to_trt(d.dims);
    if (!to_trt(d.dtype, &r.type)) r.type = DataType::kFLOAT; /* every prt_dtype has a match */
    if (!to_trt(d.format, &r.format)) r.format = TensorFormat::kLINEAR;
    r.scale = 1.0f;
    return r;
}

nvinfer1::DynamicPluginTensorDesc to_trt(const prt_dyn_tensor_desc &d)
{
    nvinfer1::DynamicPluginTensorDesc r{};
    r.desc = to_trt(d.desc);
    r.min = to_trt(d.min);
    r.opt = to_trt(d.opt);
    r.max = to_trt(d.max);
    return r;
}

bool to_prt(PluginFieldType t, prt_field_type *out)
{
    for (const field_pair &p : field_types)
        if (p.trt == t) {
            *out = p.prt;
            return true;
        }
    return false;
}

PluginFieldType to_trt(prt_field_type t)
{
    for (const field_pair &p : field_types)
        if (p.prt == t) return p.trt;
    return t == PRT_FIELD_BOOL ? PluginFieldType::kINT8 : PluginFieldType::kUNKNOWN;
}

const char *trt_field_type_name(PluginFieldType t)
{
    for (const field_pair &p : field_types)
        if (p.trt == t) return p.name;
    switch (t) {
    case PluginFieldType::kBF16: return "kBF16";
    case PluginFieldType::kFP8: return "kFP8";
    case PluginFieldType::kINT4: return "kINT4";
    case PluginFieldType::kFP4: return "kFP4";
    default: return "an unknown PluginFieldType";
    }
}

prt_status fields_to_trt(const prt_fields *in, field_list *out, prt_msg *err)
{
    int32_t nb = in ? in->nb : 0;
    try {
        out->fields.clear();
        out->fields.reserve(static_cast<size_t>(nb));
        for (int32_t i = 0; i < nb; i++) {
            const prt_field &f = in->fields[i];
            if (f.count > INT32_MAX) {
                prt_msg_set(err, "field \"%s\" has %lld values; TensorRT-style plugins take at most %d",
                            f.name ? f.name : "?", static_cast<long long>(f.count), INT32_MAX);
                return PRT_STATUS_INVALID_FIELD;
            }
            out->fields.emplace_back(f.name, f.data, to_trt(f.type), static_cast<int32_t>(f.count));
        }
    } catch (const std::bad_alloc &) {
        prt_msg_set(err, "out of memory converting fields");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    out->fc.nbFields = nb;
    out->fc.fields = nb ? out->fields.data() : nullptr;
    return PRT_OK;
}

prt_status fields_to_prt(const nvinfer1::PluginFieldCollection *in, std::vector<prt_field> *out, const char *who,
                         prt_msg *err)
{
    if (!in || in->nbFields < 0 || (in->nbFields > 0 && !in->fields)) {
        prt_msg_set(err, "%s: expected a PluginFieldCollection with nbFields >= 0 and a field array, got %s", who,
                    !in ? "nullptr" : in->nbFields < 0 ? "a negative nbFields" : "nbFields > 0 and no fields");
        return PRT_STATUS_PLUGIN_ERROR;
    }
    try {
        out->clear();
        out->reserve(static_cast<size_t>(in->nbFields));
        for (int32_t i = 0; i < in->nbFields; i++) {
            const nvinfer1::PluginField &f = in->fields[i];
            prt_field g{};
            if (!f.name || f.length < 0 || (f.length > 0 && !f.data)) {
                prt_msg_set(err, "%s: field %d needs a name, a length >= 0 and data; got %s", who,
                            static_cast<int>(i), !f.name ? "no name" : f.length < 0 ? "a negative length" : "no data");
                return PRT_STATUS_PLUGIN_ERROR;
            }
            if (!to_prt(f.type, &g.type)) {
                prt_msg_set(err, "%s: field \"%s\" has type %s, which plugrt fields cannot carry", who, f.name,
                            trt_field_type_name(f.type));
                return PRT_STATUS_UNSUPPORTED;
            }
            g.name = f.name;
            g.data = f.data;
            g.count = f.length;
            out->push_back(g);
        }
    } catch (const std::bad_alloc &) {
        prt_msg_set(err, "%s: out of memory converting fields", who);
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    return PRT_OK;
}

prt_status too_many_io(const char *plugin, int32_t nb_in, int32_t nb_out, prt_msg *err)
{
    prt_msg_set(err, "%s: TensorRT-style plugins take at most %d inputs and %d outputs here, got %d and %d", plugin,
                static_cast<int>(kMaxIO), static_cast<int>(kMaxIO), static_cast<int>(nb_in), static_cast<int>(nb_out));
    return PRT_STATUS_UNSUPPORTED;
}

/* ---- expressions --------------------------------------------------------- */

bool dim_expr::isConstant() const noexcept
{
    int64_t v;
    return eb_->get_constant(eb_, e_, &v) != 0;
}

int64_t dim_expr::getConstantValue() const noexcept
{
    int64_t v;
    return eb_->get_constant(eb_, e_, &v) ? v : -1;
}

nvinfer1::IDimensionExpr const *expr_builder::wrap(const prt_expr *e) noexcept
{
    if (!e) return nullptr;
    try {
        exprs_.emplace_back(eb_, e);
    } catch (...) {
        return nullptr;
    }
    return &exprs_.back();
}

nvinfer1::IDimensionExpr const *expr_builder::constant(int64_t value) noexcept
{
    return wrap(eb_->constant(eb_, value));
}

nvinfer1::IDimensionExpr const *expr_builder::operation(nvinfer1::DimensionOperation op,
                                                        nvinfer1::IDimensionExpr const &a,
                                                        nvinfer1::IDimensionExpr const &b) noexcept
{
    /* DimensionOperation and prt_expr_op share their values. */
    int32_t v = static_cast<int32_t>(op);
    if (v < PRT_EXPR_SUM || v > PRT_EXPR_CEIL_DIV) return nullptr;
    return wrap(eb_->operation(eb_, static_cast<prt_expr_op>(v), static_cast<dim_expr const &>(a).host(),
                               static_cast<dim_expr const &>(b).host()));
}

nvinfer1::IDimensionExpr const *expr_builder::declareSizeTensor(int32_t, nvinfer1::IDimensionExpr const &,
                                                                nvinfer1::IDimensionExpr const &) noexcept
{
    size_tensor_ = true;
    return nullptr;
}

prt_status expr_builder::unwrap(const nvinfer1::DimsExprs &in, prt_dims_expr *out, const char *what,
                                prt_msg *err) const
{
    prt_dims_expr r{};
    if (size_tensor_) {
        prt_msg_set(err, "%s: declareSizeTensor (size-tensor outputs) is not supported by plugrt's compatibility "
                         "layer; declare a data-dependent extent with a native plugrt plugin instead", what);
        return PRT_STATUS_UNSUPPORTED;
    }
    if (in.nbDims < 0 || in.nbDims > PRT_MAX_DIMS) {
        prt_msg_set(err, "%s: expected nbDims in 0..%d, got %d", what, PRT_MAX_DIMS, static_cast<int>(in.nbDims));
        return PRT_STATUS_PLUGIN_ERROR;
    }
    r.nb = in.nbDims;
    for (int32_t i = 0; i < in.nbDims; i++) {
        const nvinfer1::IDimensionExpr *d = in.d[i];
        bool ours = false;
        for (const dim_expr &e : exprs_)
            if (&e == d) {
                ours = true;
                break;
            }
        if (!ours) {
            prt_msg_set(err, "%s: dimension %d is %s; expected an expression from the IExprBuilder or the inputs",
                        what, static_cast<int>(i), d ? "an expression this builder did not make" : "nullptr");
            return PRT_STATUS_PLUGIN_ERROR;
        }
        r.d[i] = static_cast<const dim_expr *>(d)->host();
    }
    *out = r;
    return PRT_OK;
}

prt_status expr_builder::wrap_all(const prt_dims_expr *in, int32_t nb, std::vector<nvinfer1::DimsExprs> *out,
                                  prt_msg *err)
{
    try {
        out->assign(static_cast<size_t>(nb), nvinfer1::DimsExprs{});
    } catch (...) {
        prt_msg_set(err, "out of memory wrapping input shapes");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    for (int32_t i = 0; i < nb; i++) {
        (*out)[i].nbDims = in[i].nb;
        for (int32_t k = 0; k < in[i].nb && k < PRT_MAX_DIMS; k++) {
            (*out)[i].d[k] = wrap(in[i].d[k]);
            if (!(*out)[i].d[k]) {
                prt_msg_set(err, "out of memory wrapping input shapes");
                return PRT_STATUS_OUT_OF_MEMORY;
            }
        }
    }
    return PRT_OK;
}

} // namespace prt_compat
