#include "BatchedNMSPlugin.h"

#include <cstdlib>
#include <cstring>
#include <iostream>

#include "batchedNms.h"

using namespace nvinfer1;
using nvinfer1::plugin::NMSParameters;

#define ASSERT(assertion)                                                                                              \
    do                                                                                                                 \
    {                                                                                                                  \
        if (!(assertion))                                                                                              \
        {                                                                                                              \
            std::cerr << "#assertion " << #assertion << " failed in " << __FILE__ << ":" << __LINE__ << std::endl;    \
            std::abort();                                                                                              \
        }                                                                                                              \
    } while (0)

namespace sample
{
namespace
{
char const* const NMS_PLUGIN_VERSION{"1"};
char const* const NMS_PLUGIN_NAME{"BatchedNMSPlugin"};

template <typename T>
void write(char*& buffer, T const& val)
{
    std::memcpy(buffer, &val, sizeof(T));
    buffer += sizeof(T);
}

template <typename T>
T read(char const*& buffer)
{
    T val{};
    std::memcpy(&val, buffer, sizeof(T));
    buffer += sizeof(T);
    return val;
}

size_t serializedSize()
{
    return sizeof(NMSParameters) + sizeof(int32_t) * 3 + sizeof(bool);
}
} // namespace

BatchedNMSPlugin::BatchedNMSPlugin(NMSParameters params, bool clipBoxes)
    : param(params)
    , mClipBoxes(clipBoxes)
{
}

BatchedNMSPlugin::BatchedNMSPlugin(void const* data, size_t length)
{
    char const *d = reinterpret_cast<char const*>(data), *a = d;
    param = read<NMSParameters>(d);
    boxesSize = read<int32_t>(d);
    scoresSize = read<int32_t>(d);
    numPriors = read<int32_t>(d);
    mClipBoxes = read<bool>(d);
    ASSERT(d == a + length);
}

char const* BatchedNMSPlugin::getPluginType() const noexcept
{
    return NMS_PLUGIN_NAME;
}

char const* BatchedNMSPlugin::getPluginVersion() const noexcept
{
    return NMS_PLUGIN_VERSION;
}

int32_t BatchedNMSPlugin::getNbOutputs() const noexcept
{
    return 4;
}

int32_t BatchedNMSPlugin::initialize() noexcept
{
    return 0;
}

void BatchedNMSPlugin::terminate() noexcept {}

size_t BatchedNMSPlugin::getSerializationSize() const noexcept
{
    return serializedSize();
}

void BatchedNMSPlugin::serialize(void* buffer) const noexcept
{
    char *d = reinterpret_cast<char*>(buffer), *a = d;
    write(d, param);
    write(d, boxesSize);
    write(d, scoresSize);
    write(d, numPriors);
    write(d, mClipBoxes);
    ASSERT(d == a + getSerializationSize());
}

void BatchedNMSPlugin::destroy() noexcept
{
    delete this;
}

void BatchedNMSPlugin::setPluginNamespace(char const* libNamespace) noexcept
{
    mNamespace = libNamespace;
}

char const* BatchedNMSPlugin::getPluginNamespace() const noexcept
{
    return mNamespace.c_str();
}

DataType BatchedNMSPlugin::getOutputDataType(int32_t index, DataType const* inputTypes, int32_t nbInputs) const noexcept
{
    return index == 0 ? DataType::kINT32 : inputTypes[0];
}

IPluginV2DynamicExt* BatchedNMSPlugin::clone() const noexcept
{
    try
    {
        auto* plugin = new BatchedNMSPlugin(param, mClipBoxes);
        plugin->boxesSize = boxesSize;
        plugin->scoresSize = scoresSize;
        plugin->numPriors = numPriors;
        plugin->setPluginNamespace(mNamespace.c_str());
        return plugin;
    }
    catch (...)
    {
        return nullptr;
    }
}

namespace
{
// Known extents that differ; unknown ones pass.
bool differ(IDimensionExpr const* a, int64_t b)
{
    return a->isConstant() && a->getConstantValue() != b;
}

bool differ(IDimensionExpr const* a, IDimensionExpr const* b)
{
    return b->isConstant() && differ(a, b->getConstantValue());
}
} // namespace

DimsExprs BatchedNMSPlugin::getOutputDimensions(
    int32_t outputIndex, DimsExprs const* inputs, int32_t nbInputs, IExprBuilder& exprBuilder) noexcept
{
    DimsExprs out{};
    // boxes [B, N, 1 or numClasses, 4], scores [B, N, numClasses]; refuse
    // anything else with an invalid result.
    out.nbDims = -1;
    if (nbInputs != 2 || inputs[0].nbDims != 4 || inputs[1].nbDims != 3 || differ(inputs[0].d[3], 4)
        || differ(inputs[0].d[2], param.shareLocation ? 1 : param.numClasses) || differ(inputs[1].d[2], param.numClasses)
        || differ(inputs[1].d[0], inputs[0].d[0]) || differ(inputs[1].d[1], inputs[0].d[1]))
    {
        return out;
    }
    out.d[0] = inputs[0].d[0];
    if (outputIndex == 0)
    {
        out.nbDims = 2;
        out.d[1] = exprBuilder.constant(1);
    }
    else if (outputIndex == 1)
    {
        out.nbDims = 3;
        out.d[1] = exprBuilder.constant(param.keepTopK);
        out.d[2] = exprBuilder.constant(4);
    }
    else
    {
        out.nbDims = 2;
        out.d[1] = exprBuilder.constant(param.keepTopK);
    }
    return out;
}

bool BatchedNMSPlugin::supportsFormatCombination(
    int32_t pos, PluginTensorDesc const* inOut, int32_t nbInputs, int32_t nbOutputs) noexcept
{
    if (inOut[pos].format != TensorFormat::kLINEAR)
    {
        return false;
    }
    return inOut[pos].type == (pos == 2 ? DataType::kINT32 : DataType::kFLOAT);
}

void BatchedNMSPlugin::configurePlugin(
    DynamicPluginTensorDesc const* in, int32_t nbInputs, DynamicPluginTensorDesc const* out, int32_t nbOutputs) noexcept
{
    ASSERT(nbInputs == 2);
    ASSERT(nbOutputs == 4);
    numPriors = static_cast<int32_t>(in[0].desc.dims.d[1]);
    boxesSize = static_cast<int32_t>(in[0].desc.dims.d[1] * in[0].desc.dims.d[2] * in[0].desc.dims.d[3]);
    scoresSize = static_cast<int32_t>(in[1].desc.dims.d[1] * in[1].desc.dims.d[2]);
}

size_t BatchedNMSPlugin::getWorkspaceSize(
    PluginTensorDesc const* inputs, int32_t nbInputs, PluginTensorDesc const* outputs, int32_t nbOutputs) const noexcept
{
    return 0;
}

int32_t BatchedNMSPlugin::enqueue(PluginTensorDesc const* inputDesc, PluginTensorDesc const* outputDesc,
    void const* const* inputs, void* const* outputs, void* workspace, cudaStream_t stream) noexcept
{
    int32_t const batchSize = static_cast<int32_t>(inputDesc[0].dims.d[0]);
    int32_t const priors = static_cast<int32_t>(inputDesc[0].dims.d[1]);
    if (inputDesc[1].dims.d[2] != param.numClasses)
    {
        return 1;
    }
#ifdef PLUGRT_COMPAT
    if (prt_compat_on_host())
    {
        batchedNmsHost(param, mClipBoxes, batchSize, priors, static_cast<float const*>(inputs[0]),
            static_cast<float const*>(inputs[1]), static_cast<int32_t*>(outputs[0]), static_cast<float*>(outputs[1]),
            static_cast<float*>(outputs[2]), static_cast<float*>(outputs[3]));
        return 0;
    }
#endif
    return batchedNmsInference(stream, param, mClipBoxes, batchSize, priors, inputs[0], inputs[1], outputs[0],
        outputs[1], outputs[2], outputs[3]);
}

BatchedNMSPluginCreator::BatchedNMSPluginCreator()
{
    mPluginAttributes.emplace_back(PluginField("shareLocation", nullptr, PluginFieldType::kINT32, 1));
    mPluginAttributes.emplace_back(PluginField("backgroundLabelId", nullptr, PluginFieldType::kINT32, 1));
    mPluginAttributes.emplace_back(PluginField("numClasses", nullptr, PluginFieldType::kINT32, 1));
    mPluginAttributes.emplace_back(PluginField("topK", nullptr, PluginFieldType::kINT32, 1));
    mPluginAttributes.emplace_back(PluginField("keepTopK", nullptr, PluginFieldType::kINT32, 1));
    mPluginAttributes.emplace_back(PluginField("scoreThreshold", nullptr, PluginFieldType::kFLOAT32, 1));
    mPluginAttributes.emplace_back(PluginField("iouThreshold", nullptr, PluginFieldType::kFLOAT32, 1));
    mPluginAttributes.emplace_back(PluginField("isNormalized", nullptr, PluginFieldType::kINT32, 1));
    mPluginAttributes.emplace_back(PluginField("clipBoxes", nullptr, PluginFieldType::kINT32, 1));
    mFC.nbFields = mPluginAttributes.size();
    mFC.fields = mPluginAttributes.data();
}

char const* BatchedNMSPluginCreator::getPluginName() const noexcept
{
    return NMS_PLUGIN_NAME;
}

char const* BatchedNMSPluginCreator::getPluginVersion() const noexcept
{
    return NMS_PLUGIN_VERSION;
}

PluginFieldCollection const* BatchedNMSPluginCreator::getFieldNames() noexcept
{
    return &mFC;
}

IPluginV2* BatchedNMSPluginCreator::createPlugin(char const* name, PluginFieldCollection const* fc) noexcept
{
    PluginField const* fields = fc->fields;
    bool clipBoxes = true;
    NMSParameters params;
    std::memset(&params, 0, sizeof(params));
    params.isNormalized = true;
    for (int i = 0; i < fc->nbFields; ++i)
    {
        char const* attrName = fields[i].name;
        if (!strcmp(attrName, "shareLocation"))
        {
            int32_t v = *(static_cast<int32_t const*>(fields[i].data));
            if (v != 0 && v != 1)
            {
                return nullptr;
            }
            params.shareLocation = *(static_cast<bool const*>(fields[i].data));
        }
        else if (!strcmp(attrName, "backgroundLabelId"))
        {
            params.backgroundLabelId = *(static_cast<int32_t const*>(fields[i].data));
        }
        else if (!strcmp(attrName, "numClasses"))
        {
            params.numClasses = *(static_cast<int32_t const*>(fields[i].data));
        }
        else if (!strcmp(attrName, "topK"))
        {
            params.topK = *(static_cast<int32_t const*>(fields[i].data));
        }
        else if (!strcmp(attrName, "keepTopK"))
        {
            params.keepTopK = *(static_cast<int32_t const*>(fields[i].data));
        }
        else if (!strcmp(attrName, "scoreThreshold"))
        {
            params.scoreThreshold = *(static_cast<float const*>(fields[i].data));
        }
        else if (!strcmp(attrName, "iouThreshold"))
        {
            params.iouThreshold = *(static_cast<float const*>(fields[i].data));
        }
        else if (!strcmp(attrName, "isNormalized"))
        {
            params.isNormalized = *(static_cast<bool const*>(fields[i].data));
        }
        else if (!strcmp(attrName, "clipBoxes"))
        {
            clipBoxes = *(static_cast<bool const*>(fields[i].data));
        }
    }
    if (params.numClasses <= 0 || params.topK <= 0 || params.topK > 4096 || params.keepTopK <= 0
        || params.keepTopK > params.topK || params.backgroundLabelId < -1 || !(params.iouThreshold >= 0.0F))
    {
        return nullptr;
    }
    BatchedNMSPlugin* plugin = new BatchedNMSPlugin(params, clipBoxes);
    plugin->setPluginNamespace(mNamespace.c_str());
    return plugin;
}

IPluginV2* BatchedNMSPluginCreator::deserializePlugin(char const* name, void const* serialData, size_t serialLength) noexcept
{
    if (serialLength != serializedSize())
    {
        return nullptr;
    }
    BatchedNMSPlugin* plugin = new BatchedNMSPlugin(serialData, serialLength);
    plugin->setPluginNamespace(mNamespace.c_str());
    return plugin;
}

void BatchedNMSPluginCreator::setPluginNamespace(char const* libNamespace) noexcept
{
    mNamespace = libNamespace;
}

char const* BatchedNMSPluginCreator::getPluginNamespace() const noexcept
{
    return mNamespace.c_str();
}

REGISTER_TENSORRT_PLUGIN(BatchedNMSPluginCreator);

} // namespace sample
