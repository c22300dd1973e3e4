/*
 * engine/tactic.h - timing a layer's tactics on the build's target device
 * (the builder's part of docs/plugin-abi.md, "Tactics").
 *
 * A bench is made once per build, at the first layer to time: the device
 * selected (CUDA: device 0), a stream, the CPU's thread pool of the
 * configured size, a per-context resource table for the instances, and two
 * timing events. Each layer then gets its inputs (given host data, else
 * synthetic values), outputs and workspace on the device at the profile's
 * opt shapes, and each candidate a fresh per-context instance running it:
 * attach with the tactic, the shape notification, `warmup` untimed runs and
 * `runs` timed ones, each between two events recorded on the stream (CPU:
 * the host clock), then the instance's teardown. The median of the timed
 * runs is the candidate's time.
 */
#ifndef PLUGRT_ENGINE_TACTIC_H
#define PLUGRT_ENGINE_TACTIC_H

#include "engine/plan.h"
#include "registry/adapter.h"

typedef struct prt__tactic_bench prt__tactic_bench;

/* A configured build plugin and the concrete descriptors of one run of it
 * (the profile's opt shapes). in_data[i]: host bytes of input i (a
 * constant, or shape values), or NULL for synthetic values (floats in
 * [-1, 1) from a fixed sequence, integers 0); absent inputs have dims.nb ==
 * PRT_NB_DIMS_ABSENT and no data. */
typedef struct prt__tactic_layer {
    prt__plugin *pl;
    const prt_tensor_desc *in;
    const void *const *in_data;
    int32_t nb_in;
    const prt_tensor_desc *out;
    int32_t nb_out;
    size_t workspace;
} prt__tactic_layer;

/* nb_threads: the CPU pool (0: one per core). PRT_STATUS_NO_DEVICE when the
 * device cannot be used (no GPU); err says why. */
prt_status prt__tactic_bench_create(prt_device device, int32_t nb_threads, prt__tactic_bench **out, char *err,
                                    size_t cap);
void prt__tactic_bench_destroy(prt__tactic_bench *b); /* NULL ok */
/* The device as the timing cache names it: "cpu: <model> (N threads)",
 * "cuda: <name> (sm_XY, N GiB)". Valid as long as b. */
const char *prt__tactic_bench_device(const prt__tactic_bench *b);

/* Time each of ids[0..nb) on the layer: ns[i] = its median in ns (at least
 * 1), or PRT__TACTIC_NS_FAILED when setting it up or running it failed, the
 * first such reason in why. Memory that cannot be had (the layer's buffers,
 * or a candidate failing with PRT_STATUS_OUT_OF_MEMORY) is no verdict on a
 * tactic: PRT_STATUS_OUT_OF_MEMORY, every ns PRT__TACTIC_NS_FAILED and the
 * reason in why. Otherwise PRT_OK. */
prt_status prt__tactic_time(prt__tactic_bench *b, const prt__tactic_layer *l, const int32_t *ids, int32_t nb,
                            int32_t warmup, int32_t runs, uint64_t *ns, char *why, size_t cap);

/* Test hook: when set, each timed run is measured with this clock (read
 * after the stream is idle, before and after the enqueue) instead of the
 * device's events. NULL restores the events. Not thread-safe: set it while
 * no build runs. */
typedef uint64_t (*prt__tactic_clock_fn)(void *user);
void prt__tactic_set_clock(prt__tactic_clock_fn fn, void *user);

#endif
