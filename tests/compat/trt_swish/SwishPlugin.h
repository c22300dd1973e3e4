// SwishPlugin: y = x * sigmoid(beta * x), a TensorRT IPluginV2DynamicExt plugin
// written the way the TensorRT documentation teaches (creator with
// getFieldNames, REGISTER_TENSORRT_PLUGIN, serialize / deserializing
// constructor). Version "1" carries beta; version "2" adds per-channel
// weights (dim 1). Both creators stay registered so that engines built with
// version 1 keep loading.
#ifndef TRT_SWISH_PLUGIN_H
#define TRT_SWISH_PLUGIN_H

#include <string>
#include <vector>

#include "NvInfer.h"

namespace sample
{

class SwishPlugin : public nvinfer1::IPluginV2DynamicExt
{
public:
    explicit SwishPlugin(float beta);
    SwishPlugin(float beta, std::vector<float> weights);
    SwishPlugin(void const* data, size_t length, bool withWeights);
    ~SwishPlugin() override = default;

    // IPluginV2
    char const* getPluginType() const noexcept override;
    char const* getPluginVersion() const noexcept override;
    int32_t getNbOutputs() const noexcept override;
    int32_t initialize() noexcept override;
    void terminate() noexcept override;
    size_t getSerializationSize() const noexcept override;
    void serialize(void* buffer) const noexcept override;
    void destroy() noexcept override;
    void setPluginNamespace(char const* pluginNamespace) noexcept override;
    char const* getPluginNamespace() const noexcept override;

    // IPluginV2Ext
    nvinfer1::DataType getOutputDataType(
        int32_t index, nvinfer1::DataType const* inputTypes, int32_t nbInputs) const noexcept override;

    // IPluginV2DynamicExt
    nvinfer1::IPluginV2DynamicExt* clone() const noexcept override;
    nvinfer1::DimsExprs getOutputDimensions(int32_t outputIndex, nvinfer1::DimsExprs const* inputs,
        int32_t nbInputs, nvinfer1::IExprBuilder& exprBuilder) noexcept override;
    bool supportsFormatCombination(
        int32_t pos, nvinfer1::PluginTensorDesc const* inOut, int32_t nbInputs, int32_t nbOutputs) noexcept override;
    void configurePlugin(nvinfer1::DynamicPluginTensorDesc const* in, int32_t nbInputs,
        nvinfer1::DynamicPluginTensorDesc const* out, int32_t nbOutputs) noexcept override;
    size_t getWorkspaceSize(nvinfer1::PluginTensorDesc const* inputs, int32_t nbInputs,
        nvinfer1::PluginTensorDesc const* outputs, int32_t nbOutputs) const noexcept override;
    int32_t enqueue(nvinfer1::PluginTensorDesc const* inputDesc, nvinfer1::PluginTensorDesc const* outputDesc,
        void const* const* inputs, void* const* outputs, void* workspace, cudaStream_t stream) noexcept override;

private:
    float mBeta{1.0F};
    bool mWithWeights{false};
    std::vector<float> mWeights;
    std::string mNamespace;
};

// What both creator versions share: the name, the namespace, the field list.
class SwishPluginCreatorBase : public nvinfer1::IPluginCreator
{
public:
    char const* getPluginName() const noexcept override;
    nvinfer1::PluginFieldCollection const* getFieldNames() noexcept override;
    void setPluginNamespace(char const* pluginNamespace) noexcept override;
    char const* getPluginNamespace() const noexcept override;

protected:
    void addField(char const* name, int32_t length);

private:
    std::vector<nvinfer1::PluginField> mAttributes;
    nvinfer1::PluginFieldCollection mFieldNames{0, nullptr};
    std::string mNamespace;
};

// Version "1": field beta.
class SwishPluginCreator : public SwishPluginCreatorBase
{
public:
    SwishPluginCreator();
    char const* getPluginVersion() const noexcept override;
    nvinfer1::IPluginV2* createPlugin(char const* name, nvinfer1::PluginFieldCollection const* fc) noexcept override;
    nvinfer1::IPluginV2* deserializePlugin(char const* name, void const* data, size_t length) noexcept override;
};

// Version "2": fields beta and weights (one per channel).
class SwishPluginCreatorV2 : public SwishPluginCreatorBase
{
public:
    SwishPluginCreatorV2();
    char const* getPluginVersion() const noexcept override;
    nvinfer1::IPluginV2* createPlugin(char const* name, nvinfer1::PluginFieldCollection const* fc) noexcept override;
    nvinfer1::IPluginV2* deserializePlugin(char const* name, void const* data, size_t length) noexcept override;
};

} // namespace sample

#endif
