/*
 * plugrt/trace.h - the lifecycle trace: one line per call the host makes
 * into a plugin, "<layer>: <call>" (for example "conv1: configure_plugin").
 *
 * Contract
 *   The trace is off unless the environment variable PLUGRT_TRACE contains
 *   "lifecycle" (read once, at the first plugin call) or prt_set_trace(1) is
 *   called; when on, lines go to stderr prefixed with "plugrt trace: ".
 *   A callback, when set, receives every line whether or not the stderr trace
 *   is on (tests use it to check the call order). `line` is valid only during
 *   the call. The callback may be called from any thread that drives a
 *   plugin, concurrently; it must not call back into plugrt.
 *
 *   Threads: both setters may be called at any time from any thread.
 */
#ifndef PLUGRT_TRACE_H
#define PLUGRT_TRACE_H

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*prt_trace_fn)(void *user, const char *line);

/* Non-zero turns the stderr trace on, zero turns it off (overriding
 * PLUGRT_TRACE). */
PRT_API void prt_set_trace(int on);
/* NULL removes the callback. */
PRT_API void prt_set_trace_callback(prt_trace_fn fn, void *user);

#ifdef __cplusplus
}
#endif
#endif /* PLUGRT_TRACE_H */
