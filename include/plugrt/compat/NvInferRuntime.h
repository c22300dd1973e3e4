/*
 * NvInferRuntime.h (plugrt compatibility layer) - symbolic shapes,
 * IPluginV2DynamicExt, the IPluginV3One capabilities and creator, the
 * resource context, and REGISTER_TENSORRT_PLUGIN.
 *
 * Mapping onto plugrt (src/compat/):
 *   IExprBuilder / IDimensionExpr  -> prt_expr_builder / prt_expr (the
 *                                     DimensionOperation values equal prt_expr_op)
 *   IPluginV2DynamicExt            -> a blob-style plugin
 *   IPluginV3 + IPluginV3One*      -> a field-style plugin
 *   enqueue(..., stream)           -> prt_exec: its CUDA stream (nullptr on a
 *                                     CPU context) and the host-allocated workspace
 */
#ifndef PLUGRT_COMPAT_NV_INFER_RUNTIME_H
#define PLUGRT_COMPAT_NV_INFER_RUNTIME_H

#include "NvInferRuntimeCommon.h"
#include "plugrt_compat.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace nvinfer1
{

enum class DimensionOperation : int32_t
{
    kSUM = 0,
    kPROD = 1,
    kMAX = 2,
    kMIN = 3,
    kSUB = 4,
    kEQUAL = 5,
    kLESS = 6,
    kFLOOR_DIV = 7,
    kCEIL_DIV = 8,
};

//! An extent expression. Owned by the builder that made it; valid during the
//! shape call that received the builder.
class IDimensionExpr
{
public:
    virtual bool isConstant() const noexcept = 0;
    virtual int64_t getConstantValue() const noexcept = 0;
    virtual bool isSizeTensor() const noexcept = 0;

protected:
    IDimensionExpr() = default;
    virtual ~IDimensionExpr() noexcept = default;
    IDimensionExpr(IDimensionExpr const &) = delete;
    IDimensionExpr &operator=(IDimensionExpr const &) = delete;
};

class IExprBuilder
{
public:
    virtual IDimensionExpr const *constant(int64_t value) noexcept = 0;
    virtual IDimensionExpr const *operation(DimensionOperation op, IDimensionExpr const &first,
                                            IDimensionExpr const &second) noexcept = 0;
    //! Not offered by plugrt: returns nullptr (see docs/porting-from-tensorrt.md).
    virtual IDimensionExpr const *declareSizeTensor(int32_t outputIndex, IDimensionExpr const &opt,
                                                    IDimensionExpr const &upper) noexcept = 0;

protected:
    IExprBuilder() = default;
    virtual ~IExprBuilder() noexcept = default;
    IExprBuilder(IExprBuilder const &) = delete;
    IExprBuilder &operator=(IExprBuilder const &) = delete;
};

class DimsExprs
{
public:
    int32_t nbDims;
    IDimensionExpr const *d[Dims::MAX_DIMS];
};

//! A tensor at build time: its descriptor and the profile's range.
struct DynamicPluginTensorDesc
{
    PluginTensorDesc desc;
    Dims min;
    Dims max;
    Dims opt;
};

class TRT_DEPRECATED IPluginV2DynamicExt : public nvinfer1::IPluginV2Ext
{
public:
    IPluginV2DynamicExt *clone() const noexcept override = 0;
    virtual DimsExprs getOutputDimensions(int32_t outputIndex, DimsExprs const *inputs, int32_t nbInputs,
                                          IExprBuilder &exprBuilder) noexcept = 0;
    static constexpr int32_t kFORMAT_COMBINATION_LIMIT = 100;
    //! Non-const here, unlike IPluginV2IOExt's.
    virtual bool supportsFormatCombination(int32_t pos, PluginTensorDesc const *inOut, int32_t nbInputs,
                                           int32_t nbOutputs) noexcept = 0;
    virtual void configurePlugin(DynamicPluginTensorDesc const *in, int32_t nbInputs,
                                 DynamicPluginTensorDesc const *out, int32_t nbOutputs) noexcept = 0;
    virtual size_t getWorkspaceSize(PluginTensorDesc const *inputs, int32_t nbInputs,
                                    PluginTensorDesc const *outputs, int32_t nbOutputs) const noexcept = 0;
    virtual int32_t enqueue(PluginTensorDesc const *inputDesc, PluginTensorDesc const *outputDesc,
                            void const *const *inputs, void *const *outputs, void *workspace,
                            cudaStream_t stream) noexcept = 0;

    IPluginV2DynamicExt() = default;
    ~IPluginV2DynamicExt() override = default;

protected:
    IPluginV2DynamicExt(IPluginV2DynamicExt const &) = default;
    IPluginV2DynamicExt(IPluginV2DynamicExt &&) = default;
    IPluginV2DynamicExt &operator=(IPluginV2DynamicExt const &) & = default;
    IPluginV2DynamicExt &operator=(IPluginV2DynamicExt &&) & = default;
    int32_t getTensorRTVersion() const noexcept override
    {
        return static_cast<int32_t>((static_cast<uint32_t>(PluginVersion::kV2_DYNAMICEXT) << 24U) |
                                    (static_cast<uint32_t>(NV_TENSORRT_VERSION) & 0xFFFFFFU));
    }

private:
    // The implicit-batch members, closed to subclasses.
#if NV_TENSORRT_MAJOR < 11
    bool isOutputBroadcastAcrossBatch(int32_t, bool const *, int32_t) const noexcept final
    {
        return false;
    }
    bool canBroadcastInputAcrossBatch(int32_t) const noexcept final
    {
        return true;
    }
#endif
    bool supportsFormat(DataType, PluginFormat) const noexcept final
    {
        return false;
    }
    void configurePlugin(Dims const *, int32_t, Dims const *, int32_t, DataType const *, DataType const *,
                         bool const *, bool const *, PluginFormat, int32_t) noexcept final
    {
    }
    size_t getWorkspaceSize(int32_t) const noexcept final
    {
        return 0;
    }
    int32_t enqueue(int32_t, void const *const *, void *const *, void *, cudaStream_t) noexcept final
    {
        return 1;
    }
    Dims getOutputDimensions(int32_t, Dims const *, int32_t) noexcept final
    {
        return Dims{-1, {}};
    }
};

//! What attachToContext receives. Under plugrt both getters give nullptr.
class IPluginResourceContext
{
public:
    virtual IGpuAllocator *getGpuAllocator() const noexcept = 0;
    virtual IErrorRecorder *getErrorRecorder() const noexcept = 0;
    virtual ~IPluginResourceContext() noexcept = default;

protected:
    IPluginResourceContext() = default;
    IPluginResourceContext(IPluginResourceContext const &) = default;
    IPluginResourceContext(IPluginResourceContext &&) = default;
    IPluginResourceContext &operator=(IPluginResourceContext const &) & = default;
    IPluginResourceContext &operator=(IPluginResourceContext &&) & = default;
};

class IPluginV3OneCore : public IPluginCapability
{
public:
    InterfaceInfo getInterfaceInfo() const noexcept override
    {
        return InterfaceInfo{"PLUGIN_V3ONE_CORE", 1, 0};
    }
    virtual AsciiChar const *getPluginName() const noexcept = 0;
    virtual AsciiChar const *getPluginVersion() const noexcept = 0;
    virtual AsciiChar const *getPluginNamespace() const noexcept = 0;
};

class IPluginV3OneBuild : public IPluginCapability
{
public:
    static constexpr int32_t kDEFAULT_FORMAT_COMBINATION_LIMIT = 100;
    InterfaceInfo getInterfaceInfo() const noexcept override
    {
        return InterfaceInfo{"PLUGIN_V3ONE_BUILD", 1, 0};
    }
    virtual int32_t configurePlugin(DynamicPluginTensorDesc const *in, int32_t nbInputs,
                                    DynamicPluginTensorDesc const *out, int32_t nbOutputs) noexcept = 0;
    //! Outputs first, then inputs.
    virtual int32_t getOutputDataTypes(DataType *outputTypes, int32_t nbOutputs, DataType const *inputTypes,
                                       int32_t nbInputs) const noexcept = 0;
    virtual int32_t getOutputShapes(DimsExprs const *inputs, int32_t nbInputs, DimsExprs const *shapeInputs,
                                    int32_t nbShapeInputs, DimsExprs *outputs, int32_t nbOutputs,
                                    IExprBuilder &exprBuilder) noexcept = 0;
    virtual bool supportsFormatCombination(int32_t pos, DynamicPluginTensorDesc const *inOut, int32_t nbInputs,
                                           int32_t nbOutputs) noexcept = 0;
    virtual int32_t getNbOutputs() const noexcept = 0;
    virtual size_t getWorkspaceSize(DynamicPluginTensorDesc const * /*inputs*/, int32_t /*nbInputs*/,
                                    DynamicPluginTensorDesc const * /*outputs*/, int32_t /*nbOutputs*/) const noexcept
    {
        return 0;
    }
    virtual int32_t getValidTactics(int32_t * /*tactics*/, int32_t /*nbTactics*/) noexcept
    {
        return 0;
    }
    virtual int32_t getNbTactics() noexcept
    {
        return 0;
    }
    virtual char const *getTimingCacheID() noexcept
    {
        return nullptr;
    }
    virtual int32_t getFormatCombinationLimit() noexcept
    {
        return kDEFAULT_FORMAT_COMBINATION_LIMIT;
    }
    virtual char const *getMetadataString() noexcept
    {
        return nullptr;
    }
};

class IPluginV3OneRuntime : public IPluginCapability
{
public:
    InterfaceInfo getInterfaceInfo() const noexcept override
    {
        return InterfaceInfo{"PLUGIN_V3ONE_RUNTIME", 1, 0};
    }
    virtual int32_t setTactic(int32_t /*tactic*/) noexcept
    {
        return 0;
    }
    virtual int32_t onShapeChange(PluginTensorDesc const *in, int32_t nbInputs, PluginTensorDesc const *out,
                                  int32_t nbOutputs) noexcept = 0;
    virtual int32_t enqueue(PluginTensorDesc const *inputDesc, PluginTensorDesc const *outputDesc,
                            void const *const *inputs, void *const *outputs, void *workspace,
                            cudaStream_t stream) noexcept = 0;
    //! A new plugin bound to the context; the host deletes it.
    virtual IPluginV3 *attachToContext(IPluginResourceContext *context) noexcept = 0;
    //! The fields that re-create this plugin at TensorRTPhase::kRUNTIME.
    virtual PluginFieldCollection const *getFieldsToSerialize() noexcept = 0;
};

class IPluginCreatorV3One : public IPluginCreatorInterface
{
public:
    InterfaceInfo getInterfaceInfo() const noexcept override
    {
        return InterfaceInfo{"PLUGIN CREATOR_V3ONE", 1, 0};
    }
    virtual IPluginV3 *createPlugin(AsciiChar const *name, PluginFieldCollection const *fc,
                                    TensorRTPhase phase) noexcept = 0;
    virtual PluginFieldCollection const *getFieldNames() noexcept = 0;
    virtual AsciiChar const *getPluginName() const noexcept = 0;
    virtual AsciiChar const *getPluginVersion() const noexcept = 0;
    virtual AsciiChar const *getPluginNamespace() const noexcept = 0;

    IPluginCreatorV3One() = default;
    ~IPluginCreatorV3One() override = default;

protected:
    IPluginCreatorV3One(IPluginCreatorV3One const &) = default;
    IPluginCreatorV3One(IPluginCreatorV3One &&) = default;
    IPluginCreatorV3One &operator=(IPluginCreatorV3One const &) & = default;
    IPluginCreatorV3One &operator=(IPluginCreatorV3One &&) & = default;
};

//! Registers one T (a creator) with getPluginRegistry() when constructed.
template <typename T>
class PluginRegistrar
{
public:
    PluginRegistrar()
    {
        getPluginRegistry()->registerCreator(instance, "");
    }

private:
    T instance{};
};

} // namespace nvinfer1

#pragma GCC diagnostic pop

#define REGISTER_TENSORRT_PLUGIN(name)                                                                 \
    static nvinfer1::PluginRegistrar<name> pluginRegistrar##name {}

#endif /* PLUGRT_COMPAT_NV_INFER_RUNTIME_H */
