// tests/compat/test_api.cpp - the compatibility headers' API traits (checked
// at compile time in api_traits.h, here as 10.x and in api_check.cpp as 11.x)
// and the adapter's handling of less common plugin shapes: a V3 plugin whose
// capabilities are three separate objects, a plugin without a host path on a
// CPU context, creators the adapter cannot take.
#include <cstring>
#include <vector>

#include "api_traits.h"

extern "C" {
#include "compat_util.h"
#include "prt_test.h"
}

using namespace nvinfer1;

namespace
{

// y = x + 1. Core, build and runtime are distinct member objects, not bases.
// Field "mode": 1 runs normally; the others misbehave on purpose: 0 has no
// host path, 2 gives an fp8 output, 3 asks for a size tensor, 4 returns an
// output dimension that is nullptr.
enum Mode : int32_t
{
    kNO_HOST_PATH = 0,
    kNORMAL = 1,
    kFP8_OUTPUT = 2,
    kSIZE_TENSOR = 3,
    kNULL_DIM = 4,
};

class AddOne final : public IPluginV3
{
public:
    explicit AddOne(int32_t mode)
        : mMode(mode)
    {
    }
    IPluginCapability* getCapabilityInterface(PluginCapabilityType type) noexcept override
    {
        switch (type)
        {
        case PluginCapabilityType::kCORE: return &mCore;
        case PluginCapabilityType::kBUILD: return &mBuild;
        case PluginCapabilityType::kRUNTIME: return &mRuntime;
        }
        return nullptr;
    }
    IPluginV3* clone() noexcept override
    {
        return new AddOne(mMode);
    }

private:
    struct Core final : IPluginV3OneCore
    {
        char const* getPluginName() const noexcept override
        {
            return "AddOneSplit";
        }
        char const* getPluginVersion() const noexcept override
        {
            return "1";
        }
        char const* getPluginNamespace() const noexcept override
        {
            return "";
        }
    };
    struct Build final : IPluginV3OneBuild
    {
        explicit Build(AddOne* self)
            : mSelf(self)
        {
        }
        int32_t configurePlugin(DynamicPluginTensorDesc const*, int32_t, DynamicPluginTensorDesc const*, int32_t) noexcept override
        {
            return 0;
        }
        int32_t getOutputDataTypes(DataType* out, int32_t, DataType const* in, int32_t) const noexcept override
        {
            out[0] = mSelf->mMode == kFP8_OUTPUT ? DataType::kFP8 : in[0];
            return 0;
        }
        int32_t getOutputShapes(DimsExprs const* in, int32_t, DimsExprs const*, int32_t, DimsExprs* out, int32_t,
            IExprBuilder& eb) noexcept override
        {
            out[0] = in[0];
            if (mSelf->mMode == kSIZE_TENSOR)
            {
                out[0].d[0] = eb.declareSizeTensor(1, *in[0].d[0], *in[0].d[0]);
            }
            if (mSelf->mMode == kNULL_DIM)
            {
                out[0].d[1] = nullptr;
            }
            return 0;
        }
        bool supportsFormatCombination(int32_t pos, DynamicPluginTensorDesc const* io, int32_t, int32_t) noexcept override
        {
            return io[pos].desc.type == DataType::kFLOAT && io[pos].desc.format == TensorFormat::kLINEAR;
        }
        int32_t getNbOutputs() const noexcept override
        {
            return 1;
        }
        AddOne* mSelf;
    };
    struct Runtime final : IPluginV3OneRuntime
    {
        explicit Runtime(AddOne* self)
            : mSelf(self)
        {
        }
        int32_t onShapeChange(PluginTensorDesc const* in, int32_t, PluginTensorDesc const*, int32_t) noexcept override
        {
            mCount = 1;
            for (int32_t i = 0; i < in[0].dims.nbDims; ++i)
            {
                mCount *= in[0].dims.d[i];
            }
            return 0;
        }
        int32_t enqueue(PluginTensorDesc const*, PluginTensorDesc const*, void const* const* inputs,
            void* const* outputs, void*, cudaStream_t) noexcept override
        {
            if (mSelf->mMode != kNO_HOST_PATH && prt_compat_on_host())
            {
                for (int64_t i = 0; i < mCount; ++i)
                {
                    static_cast<float*>(outputs[0])[i] = static_cast<float const*>(inputs[0])[i] + 1.0F;
                }
                return 0;
            }
            return 1; // no device path in this test plugin
        }
        IPluginV3* attachToContext(IPluginResourceContext* ctx) noexcept override
        {
            return ctx && !ctx->getGpuAllocator() ? mSelf->clone() : nullptr;
        }
        PluginFieldCollection const* getFieldsToSerialize() noexcept override
        {
            mField = PluginField("mode", &mSelf->mMode, PluginFieldType::kINT32, 1);
            mFC = {1, &mField};
            return &mFC;
        }
        AddOne* mSelf;
        int64_t mCount{0};
        PluginField mField;
        PluginFieldCollection mFC{};
    };
    int32_t mMode;
    Core mCore;
    Build mBuild{this};
    Runtime mRuntime{this};
};

// Name, version, namespace and field list of a test creator.
class NamedCreator : public IPluginCreatorV3One
{
public:
    NamedCreator(char const* name, PluginField field)
        : mName(name)
        , mField(field)
    {
        mFC = {1, &mField};
    }
    PluginFieldCollection const* getFieldNames() noexcept override
    {
        return &mFC;
    }
    char const* getPluginName() const noexcept override
    {
        return mName;
    }
    char const* getPluginVersion() const noexcept override
    {
        return "1";
    }
    char const* getPluginNamespace() const noexcept override
    {
        return "";
    }

private:
    char const* mName;
    PluginField mField;
    PluginFieldCollection mFC{};
};

class AddOneCreator final : public NamedCreator
{
public:
    AddOneCreator()
        : NamedCreator("AddOneSplit", PluginField("mode", nullptr, PluginFieldType::kINT32, 1))
    {
    }
    IPluginV3* createPlugin(char const*, PluginFieldCollection const* fc, TensorRTPhase) noexcept override
    {
        int32_t mode = kNORMAL;
        for (int32_t i = 0; i < fc->nbFields; ++i)
        {
            if (std::strcmp(fc->fields[i].name, "mode") == 0)
            {
                mode = *static_cast<int32_t const*>(fc->fields[i].data);
            }
        }
        return new AddOne(mode);
    }
};

REGISTER_TENSORRT_PLUGIN(AddOneCreator);

// Build, save, load and run one layer `plugin` v1 with `fields` (a JSON
// object) on x = [[0, 1, 2], [3, 4, 5]]; y gets 6 floats.
prt_status runLayer(char const* plugin, char const* fields, float* y, char* err, size_t cap)
{
    char json[1024];
    static float x[6] = {0, 1, 2, 3, 4, 5};
    static int64_t const shape[2] = {2, 3};
    compat_io in = {"x", compat_dims(2, shape), x, sizeof x};
    compat_io out = {"y", {}, y, 6 * sizeof(float)};
    snprintf(json, sizeof json,
        "{\"name\": \"one\", \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"dims\": [-1, 3]}],"
        " \"layers\": [{\"name\": \"one\", \"plugin\": \"%s\", \"version\": \"1\", \"fields\": %s,"
        " \"inputs\": [\"x\"], \"outputs\": [\"y\"]}], \"outputs\": [\"y\"]}",
        plugin, fields);
    return compat_run(nullptr, json, PRT_DEVICE_CPU, &in, 1, &out, 1, err, cap);
}

prt_status runAddOne(int mode, float* y, char* err, size_t cap)
{
    char fields[64];
    snprintf(fields, sizeof fields, "{\"mode\": %d}", mode);
    return runLayer("AddOneSplit", fields, y, err, cap);
}

// A creator with a field type plugrt fields cannot carry.
class Bf16Creator final : public NamedCreator
{
public:
    Bf16Creator()
        : NamedCreator("Bf16Field", PluginField("alpha", nullptr, PluginFieldType::kBF16, 1))
    {
    }
    IPluginV3* createPlugin(char const*, PluginFieldCollection const*, TensorRTPhase) noexcept override
    {
        return nullptr;
    }
};

// An implicit-batch IPluginV2IOExt: it compiles, and the adapter refuses it
// by name when its creator hands one out.
class ImplicitBatch final : public IPluginV2IOExt
{
public:
    char const* getPluginType() const noexcept override { return "ImplicitBatch"; }
    char const* getPluginVersion() const noexcept override { return "1"; }
    int32_t getNbOutputs() const noexcept override { return 1; }
    Dims getOutputDimensions(int32_t, Dims const* inputs, int32_t) noexcept override { return inputs[0]; }
    int32_t initialize() noexcept override { return 0; }
    void terminate() noexcept override {}
    size_t getWorkspaceSize(int32_t) const noexcept override { return 0; }
    int32_t enqueue(int32_t, void const* const*, void* const*, void*, cudaStream_t) noexcept override { return 0; }
    size_t getSerializationSize() const noexcept override { return 0; }
    void serialize(void*) const noexcept override {}
    void destroy() noexcept override { delete this; }
    IPluginV2Ext* clone() const noexcept override { return new ImplicitBatch; }
    void setPluginNamespace(char const*) noexcept override {}
    char const* getPluginNamespace() const noexcept override { return ""; }
    DataType getOutputDataType(int32_t, DataType const* in, int32_t) const noexcept override { return in[0]; }
    bool isOutputBroadcastAcrossBatch(int32_t, bool const*, int32_t) const noexcept override { return false; }
    bool canBroadcastInputAcrossBatch(int32_t) const noexcept override { return false; }
    void configurePlugin(PluginTensorDesc const*, int32_t, PluginTensorDesc const*, int32_t) noexcept override {}
    bool supportsFormatCombination(int32_t, PluginTensorDesc const*, int32_t, int32_t) const noexcept override
    {
        return true;
    }
};

class ImplicitBatchCreator final : public IPluginCreator
{
public:
    char const* getPluginName() const noexcept override { return "ImplicitBatch"; }
    char const* getPluginVersion() const noexcept override { return "1"; }
    PluginFieldCollection const* getFieldNames() noexcept override { return &mFC; }
    IPluginV2* createPlugin(char const*, PluginFieldCollection const*) noexcept override { return new ImplicitBatch; }
    IPluginV2* deserializePlugin(char const*, void const*, size_t) noexcept override { return new ImplicitBatch; }
    void setPluginNamespace(char const*) noexcept override {}
    char const* getPluginNamespace() const noexcept override { return ""; }

private:
    PluginFieldCollection mFC{0, nullptr};
};

REGISTER_TENSORRT_PLUGIN(ImplicitBatchCreator);

} // namespace

TEST(trt_api_implicit_batch_plugin_is_refused_by_name)
{
    float y[6];
    char err[1024] = "";
    CHECK(runLayer("ImplicitBatch", "{}", y, err, sizeof err) != PRT_OK);
    CHECK_STR_CONTAINS(err, "createPlugin gave a plugin that is not an IPluginV2DynamicExt");
}

TEST(trt_api_v3_capabilities_as_separate_objects)
{
    float y[6] = {};
    char err[1024] = "";
    CHECK_MSG(runAddOne(kNORMAL, y, err, sizeof err) == PRT_OK, "%s", err);
    for (int i = 0; i < 6; i++)
    {
        CHECK(y[i] == static_cast<float>(i) + 1.0F);
    }
}

TEST(trt_api_plugin_without_host_path_fails_on_cpu_with_a_reason)
{
    float y[6] = {};
    char err[1024] = "";
    CHECK(runAddOne(kNO_HOST_PATH, y, err, sizeof err) != PRT_OK);
    CHECK_STR_CONTAINS(err, "no host path");
    CHECK_STR_CONTAINS(err, "prt_compat_on_host");
}

// What the porting guide promises for unsupported features, message by message.
TEST(trt_api_unsupported_features_fail_with_their_documented_messages)
{
    static const struct
    {
        int mode;
        char const* want;
    } cases[] = {
        {kSIZE_TENSOR, "declareSizeTensor (size-tensor outputs) is not supported"},
        {kNULL_DIM, "dimension 1 is nullptr; expected an expression from the IExprBuilder or the inputs"},
    };
    for (auto const& c : cases)
    {
        float y[6] = {};
        char err[1024] = "";
        CHECK(runAddOne(c.mode, y, err, sizeof err) != PRT_OK);
        CHECK_STR_CONTAINS(err, c.want);
    }
}

// The builder tries other type assignments when the plugin refuses one, and
// then reports that none was accepted; the adapter's own reason is what the
// plugin call says.
TEST(trt_api_fp8_output_type_is_refused_by_name)
{
    const prt_plugin_creator* c = nullptr;
    prt_field_plugin* p = nullptr;
    int32_t mode = kFP8_OUTPUT;
    prt_field f = {"mode", &mode, PRT_FIELD_INT32, 0, 1};
    prt_fields fc = {&f, 1, 0};
    char buf[512] = "";
    prt_msg m = {buf, sizeof buf};
    prt_dtype in = PRT_DTYPE_F32, out = PRT_DTYPE_F32;
    CHECK_OK(prt_registry_find(prt_registry_global(), "AddOneSplit", "1", "", &c, nullptr));
    CHECK_OK(c->create_field(c, &fc, PRT_PHASE_BUILD, &p, &m));
    CHECK(p->ops->build->get_output_data_types(p, &in, 1, &out, 1, &m) == PRT_STATUS_UNSUPPORTED);
    CHECK_STR_CONTAINS(buf, "AddOneSplit: getOutputDataTypes gave output 0 the type kFP8, which plugrt tensors cannot have");
    p->ops->destroy(p);
}

TEST(trt_api_registry_finds_and_refuses_creators)
{
    static Bf16Creator bad;
    IPluginRegistry* reg = getPluginRegistry();
    CHECK(reg != nullptr);
    CHECK(reg->getCreator("AddOneSplit", "1", "") != nullptr);
    CHECK(reg->getCreator("AddOneSplit", "2", "") == nullptr);
    CHECK(reg->registerCreator(bad, "") == false);
    const prt_plugin_creator* c = nullptr;
    CHECK(prt_registry_find(prt_registry_global(), "Bf16Field", "1", "", &c, nullptr) != PRT_OK);
    int32_t n = 0;
    IPluginCreatorInterface* const* all = reg->getAllCreators(&n);
    CHECK(n >= 1 && all != nullptr);
    int32_t nr = 0;
    CHECK(reg->getAllCreatorsRecursive(&nr) != nullptr && nr == n);
    // The 10.x lookups of V1 creators.
    CHECK(reg->getPluginCreator("Forgetful", "1", "") != nullptr);
    CHECK(reg->getPluginCreator("AddOneSplit", "1", "") == nullptr); // a V3 creator
    int32_t nv1 = 0;
    IPluginCreator* const* v1 = reg->getPluginCreatorList(&nv1);
    bool found = false;
    for (int32_t i = 0; i < nv1; i++)
    {
        found = found || std::strcmp(v1[i]->getPluginName(), "ImplicitBatch") == 0;
    }
    CHECK(found);
}

TEST(trt_api_dims_expressions_map_onto_plugrt_expressions)
{
    // A 10.x plugin sees Dims64 extents; a DimsExprs holds up to eight.
    DimsExprs e{};
    CHECK_EQ_INT(sizeof(e.d) / sizeof(e.d[0]), 8);
    Dims4 d(1, 2, 3, 4);
    CHECK_EQ_INT(d.nbDims, 4);
    CHECK_EQ_INT(d.d[3], 4);
}

namespace
{

// The serialization bug TensorRT's registration document warns about:
// serialize() writes scale and weights, the deserializing constructor reads
// only scale. plugrt refuses the plan at load instead of running with
// missing weights.
class Forgetful final : public IPluginV2DynamicExt
{
public:
    Forgetful(float scale, std::vector<float> weights)
        : mScale(scale)
        , mWeights(std::move(weights))
    {
    }
    Forgetful(void const* data, size_t)
    {
        std::memcpy(&mScale, data, sizeof mScale); // forgets the weights
    }
    char const* getPluginType() const noexcept override { return "Forgetful"; }
    char const* getPluginVersion() const noexcept override { return "1"; }
    int32_t getNbOutputs() const noexcept override { return 1; }
    int32_t initialize() noexcept override { return 0; }
    void terminate() noexcept override {}
    size_t getSerializationSize() const noexcept override
    {
        return sizeof(float) + sizeof(int32_t) + mWeights.size() * sizeof(float);
    }
    void serialize(void* buffer) const noexcept override
    {
        auto* p = static_cast<char*>(buffer);
        auto n = static_cast<int32_t>(mWeights.size());
        std::memcpy(p, &mScale, sizeof mScale);
        std::memcpy(p + sizeof mScale, &n, sizeof n);
        if (n > 0)
        {
            std::memcpy(p + sizeof mScale + sizeof n, mWeights.data(), mWeights.size() * sizeof(float));
        }
    }
    void destroy() noexcept override { delete this; }
    void setPluginNamespace(char const*) noexcept override {}
    char const* getPluginNamespace() const noexcept override { return ""; }
    DataType getOutputDataType(int32_t, DataType const* in, int32_t) const noexcept override { return in[0]; }
    IPluginV2DynamicExt* clone() const noexcept override { return new Forgetful(mScale, mWeights); }
    DimsExprs getOutputDimensions(int32_t, DimsExprs const* in, int32_t, IExprBuilder&) noexcept override
    {
        return in[0];
    }
    bool supportsFormatCombination(int32_t pos, PluginTensorDesc const* io, int32_t, int32_t) noexcept override
    {
        return io[pos].type == DataType::kFLOAT && io[pos].format == TensorFormat::kLINEAR;
    }
    void configurePlugin(DynamicPluginTensorDesc const*, int32_t, DynamicPluginTensorDesc const*, int32_t) noexcept override
    {
    }
    size_t getWorkspaceSize(PluginTensorDesc const*, int32_t, PluginTensorDesc const*, int32_t) const noexcept override
    {
        return 0;
    }
    int32_t enqueue(PluginTensorDesc const*, PluginTensorDesc const*, void const* const*, void* const*, void*,
        cudaStream_t) noexcept override
    {
        return 1;
    }

private:
    float mScale{1.0F};
    std::vector<float> mWeights;
};

class ForgetfulCreator final : public IPluginCreator
{
public:
    ForgetfulCreator()
    {
        mFields[0] = PluginField("scale", nullptr, PluginFieldType::kFLOAT32, 1);
        mFields[1] = PluginField("weights", nullptr, PluginFieldType::kFLOAT32, 0);
        mFC = {2, mFields};
    }
    char const* getPluginName() const noexcept override { return "Forgetful"; }
    char const* getPluginVersion() const noexcept override { return "1"; }
    PluginFieldCollection const* getFieldNames() noexcept override { return &mFC; }
    IPluginV2* createPlugin(char const*, PluginFieldCollection const* fc) noexcept override
    {
        float scale = 1.0F;
        std::vector<float> weights;
        for (int32_t i = 0; i < fc->nbFields; ++i)
        {
            auto const* v = static_cast<float const*>(fc->fields[i].data);
            if (std::strcmp(fc->fields[i].name, "scale") == 0)
            {
                scale = v[0];
            }
            else
            {
                weights.assign(v, v + fc->fields[i].length);
            }
        }
        return new Forgetful(scale, weights);
    }
    IPluginV2* deserializePlugin(char const*, void const* data, size_t length) noexcept override
    {
        return new Forgetful(data, length);
    }
    void setPluginNamespace(char const*) noexcept override {}
    char const* getPluginNamespace() const noexcept override { return ""; }

private:
    PluginField mFields[2];
    PluginFieldCollection mFC{};
};

REGISTER_TENSORRT_PLUGIN(ForgetfulCreator);

} // namespace

TEST(trt_api_blob_that_loses_its_weights_is_refused_at_load)
{
    float y[6];
    char err[1024] = "";
    CHECK(runLayer("Forgetful", "{\"scale\": 2.0, \"weights\": [1.0, 2.0, 3.0]}", y, err, sizeof err) != PRT_OK);
    CHECK_STR_CONTAINS(err, "the record's blob is 20 bytes but the plugin reports 8");
}
