#include "SwishPlugin.h"

#include <cmath>
#include <cstring>

#include "swishKernel.h"

using namespace nvinfer1;

namespace sample
{
namespace
{
char const* const kSWISH_NAME{"SwishPlugin"};
char const* const kSWISH_VERSION_1{"1"};
char const* const kSWISH_VERSION_2{"2"};

template <typename T>
void write(char*& buffer, T const& val)
{
    std::memcpy(buffer, &val, sizeof(T));
    buffer += sizeof(T);
}

void write(char*& buffer, std::vector<float> const& v)
{
    write(buffer, static_cast<int32_t>(v.size()));
    if (!v.empty())
    {
        std::memcpy(buffer, v.data(), v.size() * sizeof(float));
    }
    buffer += v.size() * sizeof(float);
}

template <typename T>
void read(char const*& buffer, T& val)
{
    std::memcpy(&val, buffer, sizeof(T));
    buffer += sizeof(T);
}

void read(char const*& buffer, std::vector<float>& v)
{
    int32_t n{0};
    read(buffer, n);
    v.resize(n > 0 ? n : 0);
    if (n > 0)
    {
        std::memcpy(v.data(), buffer, n * sizeof(float));
    }
    buffer += (n > 0 ? n : 0) * sizeof(float);
}

float swish(float x, float beta)
{
    return x / (1.0F + std::exp(-beta * x));
}
} // namespace

SwishPlugin::SwishPlugin(float beta)
    : mBeta(beta)
{
}

SwishPlugin::SwishPlugin(float beta, std::vector<float> weights)
    : mBeta(beta)
    , mWithWeights(true)
    , mWeights(std::move(weights))
{
}

SwishPlugin::SwishPlugin(void const* data, size_t length, bool withWeights)
    : mWithWeights(withWeights)
{
    char const* p = static_cast<char const*>(data);
    read(p, mBeta);
    if (withWeights)
    {
        read(p, mWeights);
    }
}

char const* SwishPlugin::getPluginType() const noexcept
{
    return kSWISH_NAME;
}

char const* SwishPlugin::getPluginVersion() const noexcept
{
    return mWithWeights ? kSWISH_VERSION_2 : kSWISH_VERSION_1;
}

int32_t SwishPlugin::getNbOutputs() const noexcept
{
    return 1;
}

int32_t SwishPlugin::initialize() noexcept
{
    return 0;
}

void SwishPlugin::terminate() noexcept {}

size_t SwishPlugin::getSerializationSize() const noexcept
{
    return sizeof(mBeta) + (mWithWeights ? sizeof(int32_t) + mWeights.size() * sizeof(float) : 0);
}

void SwishPlugin::serialize(void* buffer) const noexcept
{
    char* p = static_cast<char*>(buffer);
    write(p, mBeta);
    if (mWithWeights)
    {
        write(p, mWeights);
    }
}

void SwishPlugin::destroy() noexcept
{
    delete this;
}

void SwishPlugin::setPluginNamespace(char const* pluginNamespace) noexcept
{
    mNamespace = pluginNamespace;
}

char const* SwishPlugin::getPluginNamespace() const noexcept
{
    return mNamespace.c_str();
}

DataType SwishPlugin::getOutputDataType(int32_t index, DataType const* inputTypes, int32_t nbInputs) const noexcept
{
    return inputTypes[0];
}

IPluginV2DynamicExt* SwishPlugin::clone() const noexcept
{
    try
    {
        auto* plugin = mWithWeights ? new SwishPlugin(mBeta, mWeights) : new SwishPlugin(mBeta);
        plugin->setPluginNamespace(mNamespace.c_str());
        return plugin;
    }
    catch (...)
    {
        return nullptr;
    }
}

DimsExprs SwishPlugin::getOutputDimensions(
    int32_t outputIndex, DimsExprs const* inputs, int32_t nbInputs, IExprBuilder& exprBuilder) noexcept
{
    return inputs[0];
}

bool SwishPlugin::supportsFormatCombination(
    int32_t pos, PluginTensorDesc const* inOut, int32_t nbInputs, int32_t nbOutputs) noexcept
{
    if (inOut[pos].format != TensorFormat::kLINEAR)
    {
        return false;
    }
    if (pos == 0)
    {
        return inOut[0].type == DataType::kFLOAT || inOut[0].type == DataType::kHALF;
    }
    return inOut[pos].type == inOut[0].type;
}

void SwishPlugin::configurePlugin(
    DynamicPluginTensorDesc const* in, int32_t nbInputs, DynamicPluginTensorDesc const* out, int32_t nbOutputs) noexcept
{
}

size_t SwishPlugin::getWorkspaceSize(
    PluginTensorDesc const* inputs, int32_t nbInputs, PluginTensorDesc const* outputs, int32_t nbOutputs) const noexcept
{
    return mWeights.size() * sizeof(float);
}

int32_t SwishPlugin::enqueue(PluginTensorDesc const* inputDesc, PluginTensorDesc const* outputDesc,
    void const* const* inputs, void* const* outputs, void* workspace, cudaStream_t stream) noexcept
{
    int64_t n = 1;
    for (int32_t i = 0; i < inputDesc[0].dims.nbDims; ++i)
    {
        n *= inputDesc[0].dims.d[i];
    }
    int64_t inner = 1;
    for (int32_t i = 2; i < inputDesc[0].dims.nbDims; ++i)
    {
        inner *= inputDesc[0].dims.d[i];
    }
    int64_t const nbWeights = static_cast<int64_t>(mWeights.size());
    if (nbWeights > 0 && (inputDesc[0].dims.nbDims < 2 || inputDesc[0].dims.d[1] != nbWeights))
    {
        return 1;
    }
    bool const half = inputDesc[0].type == DataType::kHALF;
#ifdef PLUGRT_COMPAT
    if (prt_compat_on_host())
    {
        for (int64_t i = 0; i < n; ++i)
        {
            float x = half ? prt_f16_to_f32(static_cast<uint16_t const*>(inputs[0])[i])
                           : static_cast<float const*>(inputs[0])[i];
            float y = swish(x, mBeta);
            if (nbWeights > 0)
            {
                y *= mWeights[(i / inner) % nbWeights];
            }
            if (half)
            {
                static_cast<uint16_t*>(outputs[0])[i] = prt_f32_to_f16(y);
            }
            else
            {
                static_cast<float*>(outputs[0])[i] = y;
            }
        }
        return 0;
    }
#endif
    return swishInference(stream, n, mBeta, mWeights.data(), nbWeights, inner, half, inputs[0], outputs[0], workspace);
}

char const* SwishPluginCreatorBase::getPluginName() const noexcept
{
    return kSWISH_NAME;
}

PluginFieldCollection const* SwishPluginCreatorBase::getFieldNames() noexcept
{
    return &mFieldNames;
}

void SwishPluginCreatorBase::setPluginNamespace(char const* pluginNamespace) noexcept
{
    mNamespace = pluginNamespace;
}

char const* SwishPluginCreatorBase::getPluginNamespace() const noexcept
{
    return mNamespace.c_str();
}

void SwishPluginCreatorBase::addField(char const* name, int32_t length)
{
    mAttributes.emplace_back(PluginField(name, nullptr, PluginFieldType::kFLOAT32, length));
    mFieldNames.nbFields = static_cast<int32_t>(mAttributes.size());
    mFieldNames.fields = mAttributes.data();
}

SwishPluginCreator::SwishPluginCreator()
{
    addField("beta", 1);
}

char const* SwishPluginCreator::getPluginVersion() const noexcept
{
    return kSWISH_VERSION_1;
}

IPluginV2* SwishPluginCreator::createPlugin(char const* name, PluginFieldCollection const* fc) noexcept
{
    float beta = 1.0F;
    for (int i = 0; i < fc->nbFields; ++i)
    {
        if (strcmp(fc->fields[i].name, "beta") == 0)
        {
            beta = *static_cast<float const*>(fc->fields[i].data);
        }
    }
    if (!std::isfinite(beta))
    {
        return nullptr;
    }
    return new SwishPlugin(beta);
}

IPluginV2* SwishPluginCreator::deserializePlugin(char const* name, void const* data, size_t length) noexcept
{
    if (length != sizeof(float))
    {
        return nullptr;
    }
    return new SwishPlugin(data, length, false);
}

SwishPluginCreatorV2::SwishPluginCreatorV2()
{
    addField("beta", 1);
    addField("weights", 0);
}

char const* SwishPluginCreatorV2::getPluginVersion() const noexcept
{
    return kSWISH_VERSION_2;
}

IPluginV2* SwishPluginCreatorV2::createPlugin(char const* name, PluginFieldCollection const* fc) noexcept
{
    try
    {
        float beta = 1.0F;
        std::vector<float> weights;
        for (int i = 0; i < fc->nbFields; ++i)
        {
            if (strcmp(fc->fields[i].name, "beta") == 0)
            {
                beta = *static_cast<float const*>(fc->fields[i].data);
            }
            else if (strcmp(fc->fields[i].name, "weights") == 0)
            {
                auto const* w = static_cast<float const*>(fc->fields[i].data);
                weights.assign(w, w + fc->fields[i].length);
            }
        }
        bool finite = std::isfinite(beta);
        for (float w : weights)
        {
            finite = finite && std::isfinite(w);
        }
        if (!finite)
        {
            return nullptr;
        }
        return new SwishPlugin(beta, weights);
    }
    catch (...)
    {
        return nullptr;
    }
}

IPluginV2* SwishPluginCreatorV2::deserializePlugin(char const* name, void const* data, size_t length) noexcept
{
    try
    {
        int32_t n{0};
        if (length < sizeof(float) + sizeof(int32_t))
        {
            return nullptr;
        }
        std::memcpy(&n, static_cast<char const*>(data) + sizeof(float), sizeof(n));
        if (n < 0 || length != sizeof(float) + sizeof(int32_t) + static_cast<size_t>(n) * sizeof(float))
        {
            return nullptr;
        }
        return new SwishPlugin(data, length, true);
    }
    catch (...)
    {
        return nullptr;
    }
}

REGISTER_TENSORRT_PLUGIN(SwishPluginCreator);
REGISTER_TENSORRT_PLUGIN(SwishPluginCreatorV2);

} // namespace sample
