/*
 * NvInferPluginBase.h (plugrt compatibility layer) - plugin fields, the V3
 * plugin root and capability interfaces, the creator base.
 *
 * How plugrt maps them (src/compat/): a creator's getFieldNames() becomes the
 * plugrt schema (names, types, counts); a PluginFieldCollection is a plugrt
 * field collection; IPluginV3 is a field-style plugin whose core, build and
 * runtime capabilities are the three sub-objects getCapabilityInterface
 * returns. V3 objects die by delete.
 */
#ifndef PLUGRT_COMPAT_NV_INFER_PLUGIN_BASE_H
#define PLUGRT_COMPAT_NV_INFER_PLUGIN_BASE_H

#include "NvInferRuntimeBase.h"

namespace nvinfer1
{

enum class PluginFieldType : int32_t
{
    kFLOAT16 = 0,
    kFLOAT32 = 1,
    kFLOAT64 = 2,
    kINT8 = 3,
    kINT16 = 4,
    kINT32 = 5,
    kCHAR = 6,
    kDIMS = 7,
    kUNKNOWN = 8,
    kBF16 = 9,
    kINT64 = 10,
    kFP8 = 11,
    kINT4 = 12,
    kFP4 = 13,
};

//! One named attribute: `length` elements of `type` at `data`.
class PluginField
{
public:
    AsciiChar const *name;
    void const *data;
    PluginFieldType type;
    int32_t length;

    PluginField(AsciiChar const *const name_ = nullptr, void const *const data_ = nullptr,
                PluginFieldType const type_ = PluginFieldType::kUNKNOWN, int32_t const length_ = 0) noexcept
        : name(name_), data(data_), type(type_), length(length_)
    {
    }
};

struct PluginFieldCollection
{
    int32_t nbFields;
    PluginField const *fields;
};

enum class TensorRTPhase : int32_t
{
    kBUILD = 0,
    kRUNTIME = 1,
};

enum class PluginCapabilityType : int32_t
{
    kCORE = 0,
    kBUILD = 1,
    kRUNTIME = 2,
};

//! Base of every plugin creator (V1 and V3One).
class IPluginCreatorInterface : public IVersionedInterface
{
public:
    ~IPluginCreatorInterface() noexcept override = default;

protected:
    IPluginCreatorInterface() = default;
    IPluginCreatorInterface(IPluginCreatorInterface const &) = default;
    IPluginCreatorInterface(IPluginCreatorInterface &&) = default;
    IPluginCreatorInterface &operator=(IPluginCreatorInterface const &) & = default;
    IPluginCreatorInterface &operator=(IPluginCreatorInterface &&) & = default;
};

//! Base of the capability sub-objects a V3 plugin hands out.
class IPluginCapability : public IVersionedInterface
{
protected:
    IPluginCapability() = default;
    IPluginCapability(IPluginCapability const &) = default;
    IPluginCapability(IPluginCapability &&) = default;
    IPluginCapability &operator=(IPluginCapability const &) & = default;
    IPluginCapability &operator=(IPluginCapability &&) & = default;
};

class IPluginV3 : public IVersionedInterface
{
public:
    InterfaceInfo getInterfaceInfo() const noexcept override
    {
        return InterfaceInfo{"PLUGIN", 1, 0};
    }
    //! The core, build or runtime capability; nullptr if the plugin lacks it.
    virtual IPluginCapability *getCapabilityInterface(PluginCapabilityType type) noexcept = 0;
    //! A deep copy, or nullptr on failure.
    virtual IPluginV3 *clone() noexcept = 0;
};

} // namespace nvinfer1

#endif /* PLUGRT_COMPAT_NV_INFER_PLUGIN_BASE_H */
