/*
 * tests/runtime/fakeplugins.h - small plugins of both styles for engine
 * tests, registered into a child registry by fake_registry().
 *
 *   TestScale v1 (blob):   y = x * scale + bias over the first
 *                          volume(y) elements; y dims = x dims with dim 0
 *                          reduced by "crop". f32 only. Workspace:
 *                          4 * volume(x) bytes (x is staged there).
 *   TestScale v2 (blob):   like v1 plus 100 (to tell the two apart).
 *   TestAddBias v1 (field): y[n, c] = x[n, c] + b[c]; f32 or f16 (all the same).
 *   TestHalfNeg v1 (field): y = -k * x; f16 only.
 *   TestCompact v1 (field): y = the elements of x that are > 0, in order;
 *                          y dims [data-dependent, <= volume(x)]; f32.
 *   TestCopyF32 v1 (field): y = x, f32 only; CPU and CUDA (a device copy).
 *   TestCopyF16 v1 (field): y = x, f16 only; CPU and CUDA.
 *   TestWsGrow v1 (field): y = x, f32; asks for fake_set_workspace_need()
 *                          bytes of workspace (64 at first) and writes all of
 *                          them at enqueue.
 *   TestDevCount v1 (field): y = the first min(k, volume(x)) elements of x
 *                          ("k", default 3); y dims [data-dependent,
 *                          <= volume(x)]; f32. CPU: reports the extent with
 *                          set_output_dims; CUDA: writes it into its 8-byte
 *                          workspace with cudaMemcpyAsync and reports it with
 *                          set_output_extent_device.
 *   TestTactic v1 (blob), v2 (field): y = x + 1, f32, CPU only. Lists the
 *                          tactics of field "tactics" (default [1, 2]) on
 *                          the CPU, none elsewhere; names 1 "slow", 2
 *                          "fast", no name for others. Tactic 1 does 256
 *                          times the work of the others. Each run advances
 *                          fake_tactic_clock by 1 ms (tactic 1), 1 us (2),
 *                          10 us x id (others) or 0.5 ms (default, 0).
 */
#ifndef TESTS_RUNTIME_FAKEPLUGINS_H
#define TESTS_RUNTIME_FAKEPLUGINS_H

#include "plugrt/registry.h"

/* A child of the global registry holding the fakes (v2 of TestScale only
 * when with_v2; v1 of TestScale only when with_v1). halfneg_max_k bounds
 * TestHalfNeg's "k" field (the schema's max). */
prt_registry *fake_registry(int with_v1, int with_v2, double halfneg_max_k);

/* How many attach_to_context calls are live (contexts x layers). */
int fake_live_attachments(void);

/* The workspace TestWsGrow asks for from now on. */
void fake_set_workspace_need(size_t bytes);

/* TestTactic's fake clock (for prt__tactic_set_clock) and counters: runs
 * per tactic (0..15), set_tactic calls and the last tactic set. */
uint64_t fake_tactic_clock(void *user);
int fake_tactic_enqueues(int32_t tactic);
int fake_tactic_set_calls(void);
int32_t fake_tactic_last_set(void);
void fake_tactic_reset(void);

#endif
