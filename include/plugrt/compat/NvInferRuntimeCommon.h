/*
 * NvInferRuntimeCommon.h (plugrt compatibility layer) - the plugin registry.
 *
 * getPluginRegistry() returns plugrt's registry seen through TensorRT's
 * interface. In a program linked with libplugrt and the compat adapter,
 * registerCreator() adds the creator to plugrt's global registry (as
 * PRT_REGISTER_CREATOR does); in a plugin library built with
 * plugrt_add_trt_plugin() it collects the creator for the library's entry
 * point, and the host registers it when it loads the library.
 */
#ifndef PLUGRT_COMPAT_NV_INFER_RUNTIME_COMMON_H
#define PLUGRT_COMPAT_NV_INFER_RUNTIME_COMMON_H

#include "NvInferRuntimeBase.h"
#include "NvInferRuntimePlugin.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace nvinfer1
{

using PluginLibraryHandle = void *;
class IPluginResource;

class IPluginRegistry
{
public:
#if NV_TENSORRT_MAJOR < 11
    TRT_DEPRECATED_API virtual bool registerCreator(IPluginCreator &creator,
                                                    AsciiChar const *const pluginNamespace) noexcept = 0;
    TRT_DEPRECATED_API virtual IPluginCreator *const *getPluginCreatorList(int32_t *const numCreators) const
        noexcept = 0;
    TRT_DEPRECATED_API virtual IPluginCreator *getPluginCreator(AsciiChar const *const pluginName,
                                                                AsciiChar const *const pluginVersion,
                                                                AsciiChar const *const pluginNamespace = "") noexcept = 0;
    TRT_DEPRECATED_API virtual bool deregisterCreator(IPluginCreator const &creator) noexcept = 0;
#else
private:
    // Removed in TensorRT 11. Their virtual slots stay, under names no plugin
    // uses, so that the vtable is the same at both API levels.
    virtual bool plugrtRemovedSlot0(void *, AsciiChar const *const) noexcept
    {
        return false;
    }
    virtual void *const *plugrtRemovedSlot1(int32_t *const) const noexcept
    {
        return nullptr;
    }
    virtual void *plugrtRemovedSlot2(AsciiChar const *const, AsciiChar const *const, AsciiChar const *const) noexcept
    {
        return nullptr;
    }
    virtual bool plugrtRemovedSlot3(void const *) noexcept
    {
        return false;
    }

public:
#endif
    virtual void setErrorRecorder(IErrorRecorder *const recorder) noexcept = 0;
    virtual IErrorRecorder *getErrorRecorder() const noexcept = 0;
    //! Not noexcept in TensorRT either.
    virtual bool isParentSearchEnabled() const = 0;
    virtual void setParentSearchEnabled(bool const enabled) = 0;
    virtual PluginLibraryHandle loadLibrary(AsciiChar const *pluginPath) noexcept = 0;
    virtual bool deregisterLibrary(PluginLibraryHandle handle) noexcept = 0;
    virtual bool registerCreator(IPluginCreatorInterface &creator, AsciiChar const *const pluginNamespace) noexcept = 0;
    virtual IPluginCreatorInterface *const *getAllCreators(int32_t *const numCreators) const noexcept = 0;
    virtual IPluginCreatorInterface *getCreator(AsciiChar const *pluginName, AsciiChar const *pluginVersion,
                                                AsciiChar const *const pluginNamespace = "") noexcept = 0;
    virtual bool deregisterCreator(IPluginCreatorInterface const &creator) noexcept = 0;
    virtual IPluginResource *acquirePluginResource(AsciiChar const *key, IPluginResource *resource) noexcept = 0;
    virtual int32_t releasePluginResource(AsciiChar const *key) noexcept = 0;
    //! This registry's creators and its parents' (plugrt: the same as getAllCreators).
    virtual IPluginCreatorInterface *const *getAllCreatorsRecursive(int32_t *const numCreators) noexcept = 0;

protected:
    IPluginRegistry() = default;
    IPluginRegistry(IPluginRegistry const &) = default;
    IPluginRegistry(IPluginRegistry &&) = default;
    IPluginRegistry &operator=(IPluginRegistry const &) & = default;
    IPluginRegistry &operator=(IPluginRegistry &&) & = default;
    virtual ~IPluginRegistry() noexcept = default;
};

} // namespace nvinfer1

#pragma GCC diagnostic pop

//! The registry of this process (or of the plugin library being built).
extern "C" TENSORRTAPI nvinfer1::IPluginRegistry *getPluginRegistry() noexcept;
//! The logger plugrt hands to TensorRT-style code; it forwards to plugrt's log.
extern "C" TENSORRTAPI nvinfer1::ILogger *getLogger() noexcept;

#endif /* PLUGRT_COMPAT_NV_INFER_RUNTIME_COMMON_H */
