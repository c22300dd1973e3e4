#include "ScaleClipPlugin.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "scaleClipKernel.h"

using namespace nvinfer1;

namespace sample
{

ScaleClipPlugin::ScaleClipPlugin(float scale, float lo, float hi)
    : mScale(scale)
    , mBounds{lo, hi}
{
}

IPluginCapability* ScaleClipPlugin::getCapabilityInterface(PluginCapabilityType type) noexcept
{
    switch (type)
    {
    case PluginCapabilityType::kBUILD: return static_cast<IPluginV3OneBuild*>(this);
    case PluginCapabilityType::kRUNTIME: return static_cast<IPluginV3OneRuntime*>(this);
    case PluginCapabilityType::kCORE: return static_cast<IPluginV3OneCore*>(this);
    }
    return nullptr;
}

IPluginV3* ScaleClipPlugin::clone() noexcept
{
    try
    {
        auto* p = new ScaleClipPlugin(mScale, mBounds[0], mBounds[1]);
        p->mVolume = mVolume;
        return p;
    }
    catch (...)
    {
        return nullptr;
    }
}

char const* ScaleClipPlugin::getPluginName() const noexcept
{
    return "ScaleClip";
}

char const* ScaleClipPlugin::getPluginVersion() const noexcept
{
    return "1";
}

char const* ScaleClipPlugin::getPluginNamespace() const noexcept
{
    return "";
}

int32_t ScaleClipPlugin::configurePlugin(
    DynamicPluginTensorDesc const* in, int32_t nbInputs, DynamicPluginTensorDesc const* out, int32_t nbOutputs) noexcept
{
    return nbInputs == 1 && nbOutputs == 1 ? 0 : -1;
}

int32_t ScaleClipPlugin::getOutputDataTypes(
    DataType* outputTypes, int32_t nbOutputs, DataType const* inputTypes, int32_t nbInputs) const noexcept
{
    if (nbOutputs != 1 || nbInputs != 1)
    {
        return -1;
    }
    outputTypes[0] = inputTypes[0];
    return 0;
}

int32_t ScaleClipPlugin::getOutputShapes(DimsExprs const* inputs, int32_t nbInputs, DimsExprs const* shapeInputs,
    int32_t nbShapeInputs, DimsExprs* outputs, int32_t nbOutputs, IExprBuilder& exprBuilder) noexcept
{
    if (nbInputs != 1 || nbOutputs != 1)
    {
        return -1;
    }
    outputs[0] = inputs[0];
    return 0;
}

bool ScaleClipPlugin::supportsFormatCombination(
    int32_t pos, DynamicPluginTensorDesc const* inOut, int32_t nbInputs, int32_t nbOutputs) noexcept
{
    return inOut[pos].desc.type == DataType::kFLOAT && inOut[pos].desc.format == TensorFormat::kLINEAR;
}

int32_t ScaleClipPlugin::getNbOutputs() const noexcept
{
    return 1;
}

size_t ScaleClipPlugin::getWorkspaceSize(DynamicPluginTensorDesc const* inputs, int32_t nbInputs,
    DynamicPluginTensorDesc const* outputs, int32_t nbOutputs) const noexcept
{
    return 0;
}

int32_t ScaleClipPlugin::onShapeChange(
    PluginTensorDesc const* in, int32_t nbInputs, PluginTensorDesc const* out, int32_t nbOutputs) noexcept
{
    mVolume = 1;
    for (int32_t i = 0; i < in[0].dims.nbDims; ++i)
    {
        mVolume *= in[0].dims.d[i];
    }
    return 0;
}

int32_t ScaleClipPlugin::enqueue(PluginTensorDesc const* inputDesc, PluginTensorDesc const* outputDesc,
    void const* const* inputs, void* const* outputs, void* workspace, cudaStream_t stream) noexcept
{
    if (mVolume < 0)
    {
        return -1; // onShapeChange must come first
    }
    auto const* x = static_cast<float const*>(inputs[0]);
    auto* y = static_cast<float*>(outputs[0]);
#ifdef PLUGRT_COMPAT
    if (prt_compat_on_host())
    {
        for (int64_t i = 0; i < mVolume; ++i)
        {
            y[i] = std::min(std::max(mScale * x[i], mBounds[0]), mBounds[1]);
        }
        return 0;
    }
#endif
    return scaleClipInference(stream, mVolume, mScale, mBounds[0], mBounds[1], x, y);
}

IPluginV3* ScaleClipPlugin::attachToContext(IPluginResourceContext* context) noexcept
{
    return clone();
}

PluginFieldCollection const* ScaleClipPlugin::getFieldsToSerialize() noexcept
{
    mDataToSerialize.clear();
    mDataToSerialize.emplace_back("scale", &mScale, PluginFieldType::kFLOAT32, 1);
    mDataToSerialize.emplace_back("bounds", mBounds, PluginFieldType::kFLOAT32, 2);
    mFCToSerialize.nbFields = static_cast<int32_t>(mDataToSerialize.size());
    mFCToSerialize.fields = mDataToSerialize.data();
    return &mFCToSerialize;
}

ScaleClipPluginCreator::ScaleClipPluginCreator()
{
    mPluginAttributes.emplace_back("scale", nullptr, PluginFieldType::kFLOAT32, 1);
    mPluginAttributes.emplace_back("bounds", nullptr, PluginFieldType::kFLOAT32, 2);
    mFC.nbFields = static_cast<int32_t>(mPluginAttributes.size());
    mFC.fields = mPluginAttributes.data();
}

char const* ScaleClipPluginCreator::getPluginName() const noexcept
{
    return "ScaleClip";
}

char const* ScaleClipPluginCreator::getPluginVersion() const noexcept
{
    return "1";
}

char const* ScaleClipPluginCreator::getPluginNamespace() const noexcept
{
    return "";
}

PluginFieldCollection const* ScaleClipPluginCreator::getFieldNames() noexcept
{
    return &mFC;
}

IPluginV3* ScaleClipPluginCreator::createPlugin(char const* name, PluginFieldCollection const* fc, TensorRTPhase phase) noexcept
{
    float scale = 1.0F;
    float lo = -1.0F;
    float hi = 1.0F;
    for (int32_t i = 0; i < fc->nbFields; ++i)
    {
        PluginField const& f = fc->fields[i];
        if (std::strcmp(f.name, "scale") == 0 && f.type == PluginFieldType::kFLOAT32 && f.length == 1)
        {
            scale = *static_cast<float const*>(f.data);
        }
        else if (std::strcmp(f.name, "bounds") == 0 && f.type == PluginFieldType::kFLOAT32 && f.length == 2)
        {
            lo = static_cast<float const*>(f.data)[0];
            hi = static_cast<float const*>(f.data)[1];
        }
        else
        {
            return nullptr;
        }
    }
    if (!std::isfinite(scale) || !std::isfinite(lo) || !std::isfinite(hi) || !(lo <= hi))
    {
        return nullptr;
    }
    try
    {
        return new ScaleClipPlugin(scale, lo, hi);
    }
    catch (...)
    {
        return nullptr;
    }
}

REGISTER_TENSORRT_PLUGIN(ScaleClipPluginCreator);

} // namespace sample
