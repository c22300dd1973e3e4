/*
 * NvInferPlugin.h (plugrt compatibility layer) - initLibNvInferPlugins.
 *
 * plugrt's bundled plugins (Swish, ModulatedDeformConv2d, BatchedNMS_TRT,
 * BatchedNMSDynamic_TRT, EfficientNMS_TRT, ...) are registered statically, so
 * initLibNvInferPlugins only records the logger and reports success.
 */
#ifndef PLUGRT_COMPAT_NV_INFER_PLUGIN_H
#define PLUGRT_COMPAT_NV_INFER_PLUGIN_H

#include "NvInfer.h"
#include "NvInferPluginUtils.h"

extern "C" TENSORRTAPI bool initLibNvInferPlugins(void *logger, char const *libNamespace);

#endif /* PLUGRT_COMPAT_NV_INFER_PLUGIN_H */
