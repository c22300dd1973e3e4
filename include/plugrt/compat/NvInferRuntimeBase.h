/*
 * NvInferRuntimeBase.h (plugrt compatibility layer) - the base vocabulary of
 * TensorRT's C++ API: dims, data types, tensor formats, versioned interfaces,
 * the logger. See NvInferVersion.h for the API level and
 * docs/porting-from-tensorrt.md for what is and is not covered.
 *
 * Layout facts the adapter relies on (checked by static_assert below):
 * Dims64 has the layout of plugrt's prt_dims (int32 rank, 4 bytes of padding,
 * eight int64 extents), so a kDIMS field passes through unchanged.
 */
#ifndef PLUGRT_COMPAT_NV_INFER_RUNTIME_BASE_H
#define PLUGRT_COMPAT_NV_INFER_RUNTIME_BASE_H

#include <cstddef>
#include <cstdint>

#include "NvInferVersion.h"

/* TensorRT's headers bring in the CUDA runtime API; so do these when the CUDA
 * toolkit is on the include path. Without it, the stream and library handle
 * types are declared exactly as CUDA declares them, so that a later include of
 * cuda_runtime_api.h still agrees. */
#if defined(__has_include)
#if __has_include(<cuda_runtime_api.h>) && !defined(PLUGRT_COMPAT_NO_CUDA)
#include <cuda_runtime_api.h>
#define PLUGRT_COMPAT_HAVE_CUDA_HEADERS 1
#endif
#endif
#ifndef PLUGRT_COMPAT_HAVE_CUDA_HEADERS
struct CUstream_st;
typedef struct CUstream_st *cudaStream_t;
struct CUevent_st;
typedef struct CUevent_st *cudaEvent_t;
#endif
struct cublasContext;
struct cudnnContext;

/* Deprecation marks as TensorRT places them (silence with
 * -Wno-deprecated-declarations, or define TRT_DEPRECATED empty). */
#ifndef TRT_DEPRECATED
#define TRT_DEPRECATED [[deprecated]]
#endif
#ifndef TRT_DEPRECATED_API
#define TRT_DEPRECATED_API [[deprecated]]
#endif
#ifndef TRT_DEPRECATED_ENUM
#define TRT_DEPRECATED_ENUM
#endif
#ifndef TENSORRTAPI
#define TENSORRTAPI __attribute__((visibility("default")))
#endif
#ifndef TRTNOEXCEPT
#define TRTNOEXCEPT noexcept
#endif

namespace nvinfer1
{

using AsciiChar = char;
using char_t = char;

//! Rank and extents of a tensor; int64 extents since TensorRT 10.0.
class Dims64
{
public:
    static constexpr int32_t MAX_DIMS{8};
    int32_t nbDims;
    int64_t d[MAX_DIMS];
};
using Dims = Dims64;
using Dims32 = Dims64;
using InterfaceKind = char const *;

enum class DataType : int32_t
{
    kFLOAT = 0,
    kHALF = 1,
    kINT8 = 2,
    kINT32 = 3,
    kBOOL = 4,
    kUINT8 = 5,
    kFP8 = 6,
    kBF16 = 7,
    kINT64 = 8,
    kINT4 = 9,
    kFP4 = 10,
    kE8M0 = 11,
};

enum class TensorFormat : int32_t
{
    kLINEAR = 0,
    kCHW2 = 1,
    kHWC8 = 2,
    kCHW4 = 3,
    kCHW16 = 4,
    kCHW32 = 5,
    kDHWC8 = 6,
    kCDHW32 = 7,
    kHWC = 8,
    kDLA_LINEAR = 9,
    kDLA_HWC4 = 10,
    kHWC16 = 11,
    kDHWC = 12,
};
using PluginFormat = TensorFormat;

enum class APILanguage : int32_t
{
    kCPP = 0,
    kPYTHON = 1,
};

//! Kind and version of a versioned interface.
class InterfaceInfo
{
public:
    char const *kind;
    int32_t major;
    int32_t minor;
};

//! Base of the interfaces whose layout may change across versions.
class IVersionedInterface
{
public:
    virtual APILanguage getAPILanguage() const noexcept
    {
        return APILanguage::kCPP;
    }
    virtual InterfaceInfo getInterfaceInfo() const noexcept = 0;
    virtual ~IVersionedInterface() noexcept = default;

protected:
    IVersionedInterface() = default;
    IVersionedInterface(IVersionedInterface const &) = default;
    IVersionedInterface(IVersionedInterface &&) = default;
    IVersionedInterface &operator=(IVersionedInterface const &) & = default;
    IVersionedInterface &operator=(IVersionedInterface &&) & = default;
};

enum class ErrorCode : int32_t
{
    kSUCCESS = 0,
    kUNSPECIFIED_ERROR = 1,
    kINTERNAL_ERROR = 2,
    kINVALID_ARGUMENT = 3,
    kINVALID_CONFIG = 4,
    kFAILED_ALLOCATION = 5,
    kFAILED_INITIALIZATION = 6,
    kFAILED_EXECUTION = 7,
    kFAILED_COMPUTATION = 8,
    kINVALID_STATE = 9,
    kUNSUPPORTED_STATE = 10,
};

//! Declared so that signatures naming them compile; plugrt passes nullptr
//! wherever TensorRT would pass one (docs/porting-from-tensorrt.md).
class IGpuAllocator;
class IErrorRecorder;

//! The application's logger. plugrt never calls one; plugin code may.
class ILogger
{
public:
    enum class Severity : int32_t
    {
        kINTERNAL_ERROR = 0,
        kERROR = 1,
        kWARNING = 2,
        kINFO = 3,
        kVERBOSE = 4,
    };
    virtual void log(Severity severity, AsciiChar const *msg) noexcept = 0;
    ILogger() = default;
    virtual ~ILogger() = default;

protected:
    ILogger(ILogger const &) = default;
    ILogger(ILogger &&) = default;
    ILogger &operator=(ILogger const &) & = default;
    ILogger &operator=(ILogger &&) & = default;
};

//! Number of values of an enum, as TensorRT's EnumMax<T>() gives it.
template <typename T>
constexpr int32_t EnumMax() noexcept;
template <>
constexpr int32_t EnumMax<DataType>() noexcept
{
    return 12;
}
template <>
constexpr int32_t EnumMax<TensorFormat>() noexcept
{
    return 13;
}

static_assert(sizeof(Dims64) == 72 && offsetof(Dims64, d) == 8,
              "nvinfer1::Dims64 must keep the layout of prt_dims");

} // namespace nvinfer1

#endif /* PLUGRT_COMPAT_NV_INFER_RUNTIME_BASE_H */
