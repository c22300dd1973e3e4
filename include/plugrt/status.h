/*
 * plugrt/status.h - status codes, severities, export and attribute macros.
 *
 * Contract
 *   Every fallible plugrt function returns a prt_status. PRT_OK is 0; every
 *   other value is an error. The short text of a status comes from
 *   prt_status_str(); the detailed message of a failed call lives on the
 *   object the call was made on and is read with that module's
 *   prt_*_last_error() (docs/plugin-abi.md, "Errors: one idiom").
 *   Both functions return static strings, valid for the life of the process,
 *   and are safe to call from any thread.
 */
#ifndef PLUGRT_STATUS_H
#define PLUGRT_STATUS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(PLUGRT_BUILDING) && defined(__GNUC__)
#define PRT_API __attribute__((visibility("default")))
#else
#define PRT_API
#endif

#if defined(__GNUC__) || defined(__clang__)
#define PRT_NODISCARD __attribute__((warn_unused_result))
#define PRT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define PRT_NODISCARD
#define PRT_PRINTF(f, a)
#endif

/* XX(NAME, value, "message") - the one table every status comes from. */
#define PRT_STATUS_MAP(XX)                                                    \
    XX(OK, 0, "success")                                                      \
    XX(INVALID_ARGUMENT, 1, "invalid argument")                               \
    XX(INVALID_FIELD, 2, "field does not match the plugin's schema")         \
    XX(NOT_FOUND, 3, "not found")                                             \
    XX(ALREADY_EXISTS, 4, "already exists")                                   \
    XX(OUT_OF_MEMORY, 5, "out of memory")                                     \
    XX(UNSUPPORTED, 6, "not supported")                                       \
    XX(BAD_FORMAT, 7, "malformed or corrupt data")                            \
    XX(TRUNCATED, 8, "data ends early")                                       \
    XX(VERSION_MISMATCH, 9, "incompatible version")                           \
    XX(SHAPE_MISMATCH, 10, "tensor shapes do not fit")                        \
    XX(TYPE_MISMATCH, 11, "data types do not fit")                            \
    XX(IO_ERROR, 12, "input/output error")                                    \
    XX(LIBRARY_ERROR, 13, "plugin library could not be loaded")               \
    XX(PLUGIN_ERROR, 14, "a plugin call failed")                              \
    XX(CUDA_ERROR, 15, "CUDA error")                                          \
    XX(NO_DEVICE, 16, "no such device is available")                          \
    XX(INTERNAL, 17, "internal error")

typedef enum prt_status {
#define PRT_STATUS_ENUM_(name, value, msg) PRT_STATUS_##name = value,
    PRT_STATUS_MAP(PRT_STATUS_ENUM_)
#undef PRT_STATUS_ENUM_
    PRT_STATUS_COUNT_
} prt_status;

#define PRT_OK PRT_STATUS_OK

#ifndef PRT_PLUGIN_AS_LIBRARY /* libplugrt's functions; a plugin library uses prt_host_*() */
/* "PRT_STATUS_NOT_FOUND" style name; "PRT_STATUS_UNKNOWN" for values outside the table. */
PRT_API const char *prt_status_name(prt_status s);
/* Short human text ("not found"); "unknown status" outside the table. */
PRT_API const char *prt_status_str(prt_status s);
#endif

typedef enum prt_severity {
    PRT_SEVERITY_ERROR = 0,
    PRT_SEVERITY_WARNING = 1,
    PRT_SEVERITY_INFO = 2,
    PRT_SEVERITY_VERBOSE = 3
} prt_severity;

/* Process-wide logger. The callback may be called from any thread; `msg` is
 * valid only during the call. NULL restores the default, which prints
 * warnings and errors to stderr. Messages above `max_severity` are dropped. */
typedef void (*prt_log_fn)(void *user, prt_severity sev, const char *msg);
#ifndef PRT_PLUGIN_AS_LIBRARY /* a plugin library logs with prt_host_log() */
PRT_API void prt_set_logger(prt_log_fn fn, void *user, prt_severity max_severity);
PRT_API void prt_log(prt_severity sev, const char *fmt, ...) PRT_PRINTF(2, 3);
#endif

/* Library version, "MAJOR.MINOR.PATCH". */
#define PRT_VERSION_MAJOR 0
#define PRT_VERSION_MINOR 1
#define PRT_VERSION_PATCH 0
#ifndef PRT_PLUGIN_AS_LIBRARY
PRT_API const char *prt_version_string(void);
#endif

#ifdef __cplusplus
}
#endif
#endif /* PLUGRT_STATUS_H */
