/*
 * NvInferVersion.h (plugrt compatibility layer) - which TensorRT API the
 * compatibility headers present.
 *
 * The headers in this folder let C++ plugin sources written for TensorRT
 * compile against plugrt unchanged (docs/porting-from-tensorrt.md). They are
 * written from TensorRT's public API reference: class, method and enum names
 * and values are API facts; the text is plugrt's own.
 *
 * Select the API level by defining NV_TENSORRT_MAJOR (10 or 11) and, if you
 * like, NV_TENSORRT_MINOR / NV_TENSORRT_PATCH on the compiler command line.
 * Without them the headers present TensorRT 10.15.1, the last release line in
 * which every V2 plugin method can still be overridden. As 11.x they drop what
 * 11.0 removed (IPluginV2Ext::isOutputBroadcastAcrossBatch and
 * canBroadcastInputAcrossBatch, the IPluginRegistry overloads taking
 * IPluginCreator); their virtual slots stay under other names, so every
 * interface has one vtable layout at both levels and one adapter (built as
 * 10.x) serves plugins built either way.
 */
#ifndef PLUGRT_COMPAT_NV_INFER_VERSION_H
#define PLUGRT_COMPAT_NV_INFER_VERSION_H

#ifndef NV_TENSORRT_MAJOR
#define NV_TENSORRT_MAJOR 10
#ifndef NV_TENSORRT_MINOR
#define NV_TENSORRT_MINOR 15
#endif
#ifndef NV_TENSORRT_PATCH
#define NV_TENSORRT_PATCH 1
#endif
#endif
#ifndef NV_TENSORRT_MINOR
#define NV_TENSORRT_MINOR 0
#endif
#ifndef NV_TENSORRT_PATCH
#define NV_TENSORRT_PATCH 0
#endif
#ifndef NV_TENSORRT_BUILD
#define NV_TENSORRT_BUILD 0
#endif

#if NV_TENSORRT_MAJOR != 10 && NV_TENSORRT_MAJOR != 11
#error "plugrt's TensorRT compatibility headers present the API of TensorRT 10.x or 11.x; NV_TENSORRT_MAJOR must be 10 or 11"
#endif

#define NV_TENSORRT_LWS_MAJOR 0
#define NV_TENSORRT_LWS_MINOR 0
#define NV_TENSORRT_LWS_PATCH 0

/* MAJOR * 10000 + MINOR * 100 + PATCH, as TensorRT encodes it. */
#define NV_TENSORRT_VERSION_INT(major, minor, patch) ((major) * 10000L + (minor) * 100L + (patch) * 1L)
#define NV_TENSORRT_VERSION NV_TENSORRT_VERSION_INT(NV_TENSORRT_MAJOR, NV_TENSORRT_MINOR, NV_TENSORRT_PATCH)

/* Defined only by these headers, never by TensorRT: plugin code may test it to
 * add plugrt-only paths (a host enqueue for CPU contexts, say) and still build
 * with TensorRT unchanged. Its value is the compatibility layer's version. */
#define PLUGRT_COMPAT 1

#endif /* PLUGRT_COMPAT_NV_INFER_VERSION_H */
