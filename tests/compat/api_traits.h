// Compile-time checks of the compatibility headers against TensorRT's API
// facts (the traps plugin code depends on). Included by api_check.cpp, which
// the suite compiles twice: as TensorRT 10.x and as 11.x.
#ifndef PRT_TESTS_COMPAT_API_TRAITS_H
#define PRT_TESTS_COMPAT_API_TRAITS_H

#include <type_traits>
#include <utility>

#include "NvInfer.h"
#include "NvInferPlugin.h"
#include "plugrt/plugin.h"

namespace api_traits
{
using namespace nvinfer1;

// Dims is Dims64 since 10.0: int32 rank, eight int64 extents.
static_assert(std::is_same<Dims, Dims64>::value, "Dims is Dims64");
static_assert(std::is_same<decltype(std::declval<Dims&>().d[0]), int64_t&>::value, "int64 extents");
static_assert(Dims::MAX_DIMS == 8 && sizeof(Dims64) == sizeof(prt_dims), "eight dims, prt_dims layout");
static_assert(std::is_same<AsciiChar, char>::value, "AsciiChar");

// Enum values are API facts (and the adapter relies on them).
static_assert(static_cast<int>(DataType::kFLOAT) == 0 && static_cast<int>(DataType::kHALF) == 1
        && static_cast<int>(DataType::kINT8) == 2 && static_cast<int>(DataType::kINT32) == 3
        && static_cast<int>(DataType::kBOOL) == 4 && static_cast<int>(DataType::kUINT8) == 5
        && static_cast<int>(DataType::kFP8) == 6 && static_cast<int>(DataType::kBF16) == 7
        && static_cast<int>(DataType::kINT64) == 8 && static_cast<int>(DataType::kINT4) == 9,
    "DataType");
static_assert(static_cast<int>(TensorFormat::kLINEAR) == 0 && static_cast<int>(TensorFormat::kCHW4) == 3
        && static_cast<int>(TensorFormat::kCHW32) == 5 && static_cast<int>(TensorFormat::kHWC) == 8,
    "TensorFormat");
static_assert(std::is_same<PluginFormat, TensorFormat>::value, "PluginFormat");
static_assert(static_cast<int>(PluginFieldType::kFLOAT16) == 0 && static_cast<int>(PluginFieldType::kFLOAT32) == 1
        && static_cast<int>(PluginFieldType::kINT32) == 5 && static_cast<int>(PluginFieldType::kCHAR) == 6
        && static_cast<int>(PluginFieldType::kDIMS) == 7 && static_cast<int>(PluginFieldType::kUNKNOWN) == 8
        && static_cast<int>(PluginFieldType::kINT64) == 10,
    "PluginFieldType");
static_assert(static_cast<int>(DimensionOperation::kSUM) == PRT_EXPR_SUM
        && static_cast<int>(DimensionOperation::kSUB) == PRT_EXPR_SUB
        && static_cast<int>(DimensionOperation::kCEIL_DIV) == PRT_EXPR_CEIL_DIV,
    "DimensionOperation matches prt_expr_op");
static_assert(static_cast<int>(TensorRTPhase::kBUILD) == PRT_PHASE_BUILD
        && static_cast<int>(TensorRTPhase::kRUNTIME) == PRT_PHASE_RUNTIME,
    "TensorRTPhase matches prt_phase");

// supportsFormatCombination: non-const in IPluginV2DynamicExt, const in IPluginV2IOExt.
static_assert(std::is_same<decltype(&IPluginV2DynamicExt::supportsFormatCombination),
                  bool (IPluginV2DynamicExt::*)(int32_t, PluginTensorDesc const*, int32_t, int32_t) noexcept>::value,
    "DynamicExt::supportsFormatCombination is non-const noexcept");
static_assert(std::is_same<decltype(&IPluginV2IOExt::supportsFormatCombination),
                  bool (IPluginV2IOExt::*)(int32_t, PluginTensorDesc const*, int32_t, int32_t) const noexcept>::value,
    "IOExt::supportsFormatCombination is const noexcept");
// getOutputDataTypes takes the outputs first; V3 calls return int32 status.
static_assert(std::is_same<decltype(&IPluginV3OneBuild::getOutputDataTypes),
                  int32_t (IPluginV3OneBuild::*)(DataType*, int32_t, DataType const*, int32_t) const noexcept>::value,
    "getOutputDataTypes(outputs, nbOutputs, inputs, nbInputs)");
static_assert(std::is_same<decltype(std::declval<IPluginV3OneRuntime&>().onShapeChange(nullptr, 0, nullptr, 0)),
                  int32_t>::value,
    "onShapeChange returns int32 status");
static_assert(std::is_same<decltype(std::declval<IPluginV3OneBuild&>().configurePlugin(nullptr, 0, nullptr, 0)),
                  int32_t>::value,
    "V3 configurePlugin returns int32 status");
static_assert(std::is_same<decltype(std::declval<IPluginV2DynamicExt&>().configurePlugin(
                               static_cast<DynamicPluginTensorDesc const*>(nullptr), 0,
                               static_cast<DynamicPluginTensorDesc const*>(nullptr), 0)),
                  void>::value,
    "V2 configurePlugin returns void");
// noexcept exactly where TensorRT has it, and not on the two registry members that lack it.
static_assert(noexcept(std::declval<IPluginV2DynamicExt&>().getNbOutputs()), "noexcept");
static_assert(noexcept(std::declval<IPluginCreator&>().getFieldNames()), "noexcept");
static_assert(noexcept(std::declval<ILogger&>().log(ILogger::Severity::kINFO, "")), "noexcept");
static_assert(!noexcept(std::declval<IPluginRegistry&>().isParentSearchEnabled()), "no noexcept in TensorRT");
static_assert(!noexcept(std::declval<IPluginRegistry&>().setParentSearchEnabled(true)), "no noexcept in TensorRT");
// V2 objects die by destroy() (their destructor is public too); V3 objects by delete.
static_assert(std::has_virtual_destructor<IPluginV2>::value && std::has_virtual_destructor<IPluginV3>::value,
    "virtual destructors");
static_assert(std::is_same<decltype(std::declval<IPluginV2&>().destroy()), void>::value, "destroy()");
// Capabilities are their own interfaces, reached through getCapabilityInterface.
static_assert(std::is_base_of<IPluginCapability, IPluginV3OneCore>::value
        && std::is_base_of<IPluginCapability, IPluginV3OneBuild>::value
        && std::is_base_of<IPluginCapability, IPluginV3OneRuntime>::value
        && !std::is_base_of<IPluginV3, IPluginV3OneCore>::value,
    "capabilities are separate from IPluginV3");
static_assert(std::is_base_of<IPluginCreatorInterface, IPluginCreator>::value
        && std::is_base_of<IPluginCreatorInterface, IPluginCreatorV3One>::value,
    "both creators are IPluginCreatorInterface");

// Members that TensorRT 11 removed stay overridable when built as 10.x.
template <typename T, typename = void>
struct has_broadcast_members : std::false_type
{
};
template <typename T>
struct has_broadcast_members<T, std::void_t<decltype(&T::isOutputBroadcastAcrossBatch),
                                    decltype(&T::canBroadcastInputAcrossBatch)>> : std::true_type
{
};
static_assert(has_broadcast_members<IPluginV2Ext>::value == (NV_TENSORRT_MAJOR < 11),
    "isOutputBroadcastAcrossBatch / canBroadcastInputAcrossBatch exist exactly in 10.x");

} // namespace api_traits

#endif
