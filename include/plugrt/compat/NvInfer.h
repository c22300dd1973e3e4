/*
 * NvInfer.h (plugrt compatibility layer) - what plugin sources get from
 * TensorRT's main header: the runtime and plugin interfaces and the legacy
 * dims. The network-building and engine classes (IBuilder, INetworkDefinition,
 * ICudaEngine, ...) are not offered: plugrt builds networks through its own
 * API and JSON descriptions (docs/porting-from-tensorrt.md).
 */
#ifndef PLUGRT_COMPAT_NV_INFER_H
#define PLUGRT_COMPAT_NV_INFER_H

#include "NvInferLegacyDims.h"
#include "NvInferRuntime.h"

#endif /* PLUGRT_COMPAT_NV_INFER_H */
