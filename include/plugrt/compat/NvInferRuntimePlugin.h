/*
 * NvInferRuntimePlugin.h (plugrt compatibility layer) - tensor descriptors for
 * plugins, the V2 plugin family up to IPluginV2IOExt, and IPluginCreator.
 *
 * V2 plugins are blob-style plugrt plugins (serialize / deserialize,
 * initialize / terminate, clone); they die by destroy(). plugrt runs
 * IPluginV2DynamicExt plugins (NvInferRuntime.h); the implicit-batch bases
 * here are declared so that sources compile, and a creator handing out one
 * that is not IPluginV2DynamicExt gets a clear error from the adapter.
 */
#ifndef PLUGRT_COMPAT_NV_INFER_RUNTIME_PLUGIN_H
#define PLUGRT_COMPAT_NV_INFER_RUNTIME_PLUGIN_H

#include "NvInferPluginBase.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace nvinfer1
{

enum class PluginVersion : uint8_t
{
    kV2 = 0,
    kV2_EXT = 1,
    kV2_IOEXT = 2,
    kV2_DYNAMICEXT = 3,
    kV2_DYNAMICEXT_PYTHON = 4,
};

//! A tensor as a plugin sees it: dims, type, format and (for INT8) scale.
struct PluginTensorDesc
{
    Dims dims;
    DataType type;
    TensorFormat format;
    float scale;
};

class TRT_DEPRECATED IPluginV2
{
public:
    virtual int32_t getTensorRTVersion() const noexcept
    {
        return static_cast<int32_t>(NV_TENSORRT_VERSION);
    }
    virtual AsciiChar const *getPluginType() const noexcept = 0;
    virtual AsciiChar const *getPluginVersion() const noexcept = 0;
    virtual int32_t getNbOutputs() const noexcept = 0;
    virtual Dims getOutputDimensions(int32_t index, Dims const *inputs, int32_t nbInputDims) noexcept = 0;
    virtual bool supportsFormat(DataType type, PluginFormat format) const noexcept = 0;
    virtual void configureWithFormat(Dims const *inputDims, int32_t nbInputs, Dims const *outputDims,
                                     int32_t nbOutputs, DataType type, PluginFormat format,
                                     int32_t maxBatchSize) noexcept = 0;
    virtual int32_t initialize() noexcept = 0;
    virtual void terminate() noexcept = 0;
    virtual size_t getWorkspaceSize(int32_t maxBatchSize) const noexcept = 0;
    virtual int32_t enqueue(int32_t batchSize, void const *const *inputs, void *const *outputs, void *workspace,
                            cudaStream_t stream) noexcept = 0;
    virtual size_t getSerializationSize() const noexcept = 0;
    virtual void serialize(void *buffer) const noexcept = 0;
    virtual void destroy() noexcept = 0;
    virtual IPluginV2 *clone() const noexcept = 0;
    virtual void setPluginNamespace(AsciiChar const *pluginNamespace) noexcept = 0;
    virtual AsciiChar const *getPluginNamespace() const noexcept = 0;

    IPluginV2() = default;
    virtual ~IPluginV2() noexcept = default;

protected:
    IPluginV2(IPluginV2 const &) = default;
    IPluginV2(IPluginV2 &&) = default;
    IPluginV2 &operator=(IPluginV2 const &) & = default;
    IPluginV2 &operator=(IPluginV2 &&) & = default;
};

class TRT_DEPRECATED IPluginV2Ext : public IPluginV2
{
public:
    virtual nvinfer1::DataType getOutputDataType(int32_t index, nvinfer1::DataType const *inputTypes,
                                                 int32_t nbInputs) const noexcept = 0;
#if NV_TENSORRT_MAJOR < 11
    TRT_DEPRECATED virtual bool isOutputBroadcastAcrossBatch(int32_t outputIndex, bool const *inputIsBroadcasted,
                                                             int32_t nbInputs) const noexcept = 0;
    TRT_DEPRECATED virtual bool canBroadcastInputAcrossBatch(int32_t inputIndex) const noexcept = 0;
#else
private:
    // Removed in TensorRT 11. Their virtual slots stay, under names no plugin
    // uses, so that the vtable is the same at both API levels and one adapter
    // serves plugins built as 10.x and as 11.x.
    virtual bool plugrtRemovedSlot0(int32_t, bool const *, int32_t) const noexcept
    {
        return false;
    }
    virtual bool plugrtRemovedSlot1(int32_t) const noexcept
    {
        return true;
    }

public:
#endif
    virtual void configurePlugin(Dims const *inputDims, int32_t nbInputs, Dims const *outputDims, int32_t nbOutputs,
                                 DataType const *inputTypes, DataType const *outputTypes,
                                 bool const *inputIsBroadcast, bool const *outputIsBroadcast,
                                 PluginFormat floatFormat, int32_t maxBatchSize) noexcept = 0;
    IPluginV2Ext() = default;
    ~IPluginV2Ext() override = default;
    //! cudnn and cublas are nullptr under plugrt; so is the allocator.
    virtual void attachToContext(cudnnContext *, cublasContext *, IGpuAllocator *) noexcept {}
    virtual void detachFromContext() noexcept {}
    IPluginV2Ext *clone() const noexcept override = 0;

protected:
    IPluginV2Ext(IPluginV2Ext const &) = default;
    IPluginV2Ext(IPluginV2Ext &&) = default;
    IPluginV2Ext &operator=(IPluginV2Ext const &) & = default;
    IPluginV2Ext &operator=(IPluginV2Ext &&) & = default;
    int32_t getTensorRTVersion() const noexcept override
    {
        return static_cast<int32_t>((static_cast<uint32_t>(PluginVersion::kV2_EXT) << 24U) |
                                    (static_cast<uint32_t>(NV_TENSORRT_VERSION) & 0xFFFFFFU));
    }
    void configureWithFormat(Dims const *, int32_t, Dims const *, int32_t, DataType, PluginFormat,
                             int32_t) noexcept override
    {
    }
};

class TRT_DEPRECATED IPluginV2IOExt : public IPluginV2Ext
{
public:
    virtual void configurePlugin(PluginTensorDesc const *in, int32_t nbInput, PluginTensorDesc const *out,
                                 int32_t nbOutput) noexcept = 0;
    //! const here, unlike IPluginV2DynamicExt's.
    virtual bool supportsFormatCombination(int32_t pos, PluginTensorDesc const *inOut, int32_t nbInputs,
                                           int32_t nbOutputs) const noexcept = 0;
    IPluginV2IOExt() = default;
    ~IPluginV2IOExt() override = default;

protected:
    IPluginV2IOExt(IPluginV2IOExt const &) = default;
    IPluginV2IOExt(IPluginV2IOExt &&) = default;
    IPluginV2IOExt &operator=(IPluginV2IOExt const &) & = default;
    IPluginV2IOExt &operator=(IPluginV2IOExt &&) & = default;
    int32_t getTensorRTVersion() const noexcept override
    {
        return static_cast<int32_t>((static_cast<uint32_t>(PluginVersion::kV2_IOEXT) << 24U) |
                                    (static_cast<uint32_t>(NV_TENSORRT_VERSION) & 0xFFFFFFU));
    }

private:
    void configurePlugin(Dims const *, int32_t, Dims const *, int32_t, DataType const *, DataType const *,
                         bool const *, bool const *, PluginFormat, int32_t) noexcept final
    {
    }
    bool supportsFormat(DataType, PluginFormat) const noexcept final
    {
        return false;
    }
};

//! The V1 creator: builds IPluginV2 objects from fields or from a blob.
class TRT_DEPRECATED IPluginCreator : public IPluginCreatorInterface
{
public:
    InterfaceInfo getInterfaceInfo() const noexcept override
    {
        return InterfaceInfo{"PLUGIN CREATOR_V1", 1, 0};
    }
    virtual AsciiChar const *getPluginName() const noexcept = 0;
    virtual AsciiChar const *getPluginVersion() const noexcept = 0;
    virtual PluginFieldCollection const *getFieldNames() noexcept = 0;
    virtual IPluginV2 *createPlugin(AsciiChar const *name, PluginFieldCollection const *fc) noexcept = 0;
    virtual IPluginV2 *deserializePlugin(AsciiChar const *name, void const *serialData,
                                         size_t serialLength) noexcept = 0;
    virtual void setPluginNamespace(AsciiChar const *pluginNamespace) noexcept = 0;
    virtual AsciiChar const *getPluginNamespace() const noexcept = 0;

    IPluginCreator() = default;
    ~IPluginCreator() override = default;

protected:
    IPluginCreator(IPluginCreator const &) = default;
    IPluginCreator(IPluginCreator &&) = default;
    IPluginCreator &operator=(IPluginCreator const &) & = default;
    IPluginCreator &operator=(IPluginCreator &&) & = default;
};

} // namespace nvinfer1

#pragma GCC diagnostic pop

#endif /* PLUGRT_COMPAT_NV_INFER_RUNTIME_PLUGIN_H */
