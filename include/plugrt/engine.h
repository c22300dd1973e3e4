/*
 * plugrt/engine.h - building a network into an engine, plans (serialized
 * engines), and execution contexts.
 *
 * Contract
 *   Build: prt_engine_build infers shapes through every plugin, negotiates
 *   types (inserting f32<->f16 casts where neighbours disagree), sizes
 *   workspaces from the profile's max shapes and plans activation memory, then
 *   writes a plan (docs/engine-format.md) and loads it back: a built engine and
 *   a loaded one are the same thing. Identical networks and configs give
 *   byte-identical plans.
 *
 *   Ownership: engines and contexts are freed by their destroy functions
 *   (NULL accepted). An engine keeps a borrowed pointer to the registry it was
 *   built or loaded with, which must outlive it; contexts must be destroyed
 *   before their engine. Buffers bound to a context are borrowed until they
 *   are rebound or the context is destroyed.
 *
 *   Threads: an engine may be shared by any number of threads (creating
 *   contexts, reading descriptions). One context is used by one thread at a
 *   time; different contexts of one engine run concurrently, each with its
 *   own plugin instances, activation memory, workspace, thread pool (CPU) and
 *   stream (CUDA).
 *
 *   Errors: functions with `err`/`cap` write the reason there (NULL allowed);
 *   context functions set the message read by prt_context_last_error(). A
 *   failed call leaves the caller's objects and out-parameters untouched.
 *   The lifecycle of plugin calls is docs/lifecycle.md, observable through
 *   plugrt/trace.h.
 */
#ifndef PLUGRT_ENGINE_H
#define PLUGRT_ENGINE_H

#include "network.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct prt_engine prt_engine;
typedef struct prt_context prt_context;

typedef enum prt_precision {
    PRT_PRECISION_FP32 = 0, /* every float tensor stays f32 unless a plugin accepts only f16 */
    PRT_PRECISION_FP16 = 1  /* float layers run in f16 where the plugin accepts it */
} prt_precision;

/* The range allowed for one dynamic input (one optimization profile). */
typedef struct prt_profile_range {
    const char *input;
    prt_dims min, opt, max;
} prt_profile_range;

/* ---- timing cache ------------------------------------------------------ */

/* Tactic times a build measured, for later builds to reuse instead of
 * timing again (docs/engine-format.md, "Timing cache"). An entry is keyed by
 * the plugin (name, version, namespace), a hash of its serialized fields or
 * blob, its inputs' types, formats and opt extents, and the device (its
 * name; the CPU's with the number of timing threads); its value is the
 * median time of each tactic the plugin listed. A build given a cache takes
 * the times of a layer from it when the entry covers every tactic listed,
 * and adds the entries it timed when (and only when) it succeeds. A cache
 * locks itself: builds on several threads may share one. */
typedef struct prt_timing_cache prt_timing_cache;

PRT_API PRT_NODISCARD prt_status prt_timing_cache_create(prt_timing_cache **out);
/* Every byte is checked (magic, versions, length, checksum, each entry)
 * before the cache is made: bytes that are not a timing cache, a damaged
 * one or one of a newer format fail (PRT_STATUS_BAD_FORMAT, _TRUNCATED,
 * _VERSION_MISMATCH) with a message in err, and *out is untouched. */
PRT_API PRT_NODISCARD prt_status prt_timing_cache_deserialize(const void *data, size_t len, prt_timing_cache **out,
                                                             char *err, size_t cap);
PRT_API PRT_NODISCARD prt_status prt_timing_cache_load(const char *path, prt_timing_cache **out, char *err,
                                                      size_t cap);
/* The cache's bytes, entries sorted by key (equal caches give equal bytes).
 * buf == NULL: *len gets the size needed. */
PRT_API PRT_NODISCARD prt_status prt_timing_cache_serialize(prt_timing_cache *c, void *buf, size_t cap,
                                                           size_t *len);
/* Written to a new file beside `path`, then renamed over it. */
PRT_API PRT_NODISCARD prt_status prt_timing_cache_save(prt_timing_cache *c, const char *path, char *err,
                                                      size_t cap);
PRT_API int32_t prt_timing_cache_nb_entries(prt_timing_cache *c);
PRT_API void prt_timing_cache_destroy(prt_timing_cache *c);

/* ---- building ---------------------------------------------------------- */

/* What the builder does with a layer whose plugin lists several tactics. */
typedef enum prt_tactic_timing {
    PRT_TACTIC_TIMING_ON = 0, /* time each on the target device at the profile's opt shapes; the fastest wins */
    PRT_TACTIC_TIMING_OFF = 1 /* take the first listed, time nothing: deterministic plans */
} prt_tactic_timing;

typedef struct prt_builder_config {
    uint32_t struct_size;
    uint32_t abi_version;
    prt_precision precision;
    prt_device device;       /* target device recorded in the plan */
    int32_t nb_ranges;       /* entries of `ranges`: one per input with -1 extents */
    int32_t reserved_;
    const prt_profile_range *ranges;
    uint64_t workspace_limit; /* bytes any one layer may ask for; 0: no limit */
    /* Appended (read only when struct_size covers them): tactic selection. */
    prt_tactic_timing tactic_timing;
    int32_t timing_warmup;   /* untimed runs of each tactic first (>= 0; default 2) */
    int32_t timing_runs;     /* timed runs of each tactic; its median counts (>= 1; default 5) */
    int32_t timing_threads;  /* CPU: threads the runs use (0: one per core, as contexts) */
    prt_timing_cache *timing_cache; /* NULL: none; read, and updated by a build that succeeds */
} prt_builder_config;

/* fp32, CPU, no ranges, no workspace limit; tactics timed (2 warm-up runs,
 * 5 timed runs, one thread per core), no timing cache. */
PRT_API void prt_builder_config_init(prt_builder_config *cfg);

PRT_API PRT_NODISCARD prt_status prt_engine_build(const prt_network *net, const prt_builder_config *cfg,
                                                 prt_registry *r, prt_engine **out, char *err, size_t cap);

/* The plan. buf == NULL: *len gets the size needed. */
PRT_API PRT_NODISCARD prt_status prt_engine_serialize(const prt_engine *e, void *buf, size_t cap, size_t *len);
PRT_API PRT_NODISCARD prt_status prt_engine_save(const prt_engine *e, const char *path, char *err, size_t cap);

/* Load a plan from memory (copied) or a file, finding every plugin's creator
 * in `r` (NULL: the global registry). Every byte is checked before use. */
PRT_API PRT_NODISCARD prt_status prt_engine_deserialize(prt_registry *r, const void *data, size_t len,
                                                       prt_engine **out, char *err, size_t cap);
PRT_API PRT_NODISCARD prt_status prt_engine_load(prt_registry *r, const char *path, prt_engine **out,
                                                char *err, size_t cap);
PRT_API void prt_engine_destroy(prt_engine *e);

/* ---- describing an engine ---------------------------------------------- */

typedef enum prt_io_mode { PRT_IO_INPUT = 0, PRT_IO_OUTPUT = 1 } prt_io_mode;

typedef struct prt_io_desc {
    const char *name;   /* valid as long as the engine */
    prt_io_mode mode;
    prt_dtype dtype;
    prt_dims dims;      /* -1 where the extent depends on input shapes or data */
    prt_dims min, opt, max; /* inputs: the profile; outputs: extents at those */
} prt_io_desc;

PRT_API int32_t prt_engine_nb_io(const prt_engine *e);
/* For a shape-value input: the profile's bounds of its values (nb = the
 * number of values) and PRT_OK; PRT_STATUS_NOT_FOUND for any other io. */
PRT_API PRT_NODISCARD prt_status prt_engine_io_values(const prt_engine *e, int32_t index, prt_dims *min,
                                                     prt_dims *opt, prt_dims *max);
PRT_API PRT_NODISCARD prt_status prt_engine_io(const prt_engine *e, int32_t index, prt_io_desc *out);
/* Index of the input or output called `name`, or -1. */
PRT_API int32_t prt_engine_find_io(const prt_engine *e, const char *name);
PRT_API int32_t prt_engine_nb_layers(const prt_engine *e);
PRT_API const char *prt_engine_layer_name(const prt_engine *e, int32_t index);
PRT_API prt_device prt_engine_device(const prt_engine *e);
PRT_API prt_precision prt_engine_precision(const prt_engine *e);
/* Bytes of activation memory every context allocates. */
PRT_API uint64_t prt_engine_arena_size(const prt_engine *e);
PRT_API uint64_t prt_engine_workspace_size(const prt_engine *e);

/* ---- execution contexts -------------------------------------------------- */

/* Device memory for contexts. alloc returns NULL when it cannot. */
typedef struct prt_allocator {
    uint32_t struct_size;
    uint32_t abi_version;
    void *(*alloc)(void *user, prt_device device, size_t bytes);
    void (*free)(void *user, prt_device device, void *p);
    void *user;
} prt_allocator;

typedef struct prt_context_config {
    uint32_t struct_size;
    uint32_t abi_version;
    prt_device device;       /* where the context runs; prt_context_config_init sets
                              * (prt_device)-1, meaning the engine's target device */
    int32_t cuda_device;
    int32_t nb_threads;      /* CPU thread pool; 0 = number of cores */
    int32_t reserved_;
    void *cuda_stream;       /* NULL: the context creates its own stream */
    const prt_allocator *allocator; /* NULL: malloc on the CPU, cudaMalloc on CUDA */
} prt_context_config;

/* The engine's device, own stream, pool of the machine's cores. */
PRT_API void prt_context_config_init(prt_context_config *cfg);

/* cfg NULL: defaults. Errors: prt_engine_last_error(e). */
PRT_API PRT_NODISCARD prt_status prt_context_create(prt_engine *e, const prt_context_config *cfg,
                                                   prt_context **out);
PRT_API void prt_context_destroy(prt_context *ctx);
PRT_API const char *prt_engine_last_error(const prt_engine *e);

/* Extents of a dynamic input, within the profile. Static inputs may be set to
 * their own dims. */
PRT_API PRT_NODISCARD prt_status prt_context_set_input_shape(prt_context *ctx, const char *name,
                                                            const prt_dims *dims);
/* The values of a shape-value input (prt_network_add_shape_input), within
 * the profile's bounds; until set, the profile's opt values. Its buffer
 * (prt_context_set_tensor) must hold the same values as data: CPU contexts
 * check that before each run. */
PRT_API PRT_NODISCARD prt_status prt_context_set_input_values(prt_context *ctx, const char *name,
                                                             const int64_t *values, int32_t nb);
/* Current extents of an input or output: after set_input_shape, the shapes
 * they imply (data-dependent extents at their upper bound); after a run, the
 * extents the run produced. */
PRT_API PRT_NODISCARD prt_status prt_context_get_shape(prt_context *ctx, const char *name, prt_dims *out);
/* Bytes the buffer bound to `name` needs for the current input shapes (the
 * upper bound for data-dependent outputs). */
PRT_API PRT_NODISCARD prt_status prt_context_buffer_size(prt_context *ctx, const char *name, size_t *bytes);
/* Host memory for CPU contexts, device memory for CUDA contexts. */
PRT_API PRT_NODISCARD prt_status prt_context_set_tensor(prt_context *ctx, const char *name, void *ptr);

/* Run and wait. */
PRT_API PRT_NODISCARD prt_status prt_context_execute(prt_context *ctx);
/* CUDA: enqueue on `stream` (NULL: the context's) and return; CPU: runs
 * synchronously. Data-dependent output extents are known after the stream
 * is synchronized. */
PRT_API PRT_NODISCARD prt_status prt_context_enqueue(prt_context *ctx, void *stream);
PRT_API void *prt_context_stream(const prt_context *ctx);
PRT_API prt_device prt_context_device(const prt_context *ctx);

PRT_API const char *prt_context_last_error(const prt_context *ctx);

/* Per-layer times, like a profiler: after each layer of a run, fn gets the
 * layer's name, its plugin ("ns::name" or "name"; casts the builder inserted
 * are "cast") and the milliseconds it took. CPU: wall time of the layer's
 * enqueue. CUDA: the stream is synchronized after every layer while a
 * profiler is set, so the time includes that wait (a profiled run is slower
 * than an unprofiled one). fn NULL turns it off. Strings are valid during
 * the call only. */
typedef void (*prt_layer_profiler_fn)(void *user, const char *layer, const char *plugin, double ms);
PRT_API PRT_NODISCARD prt_status prt_context_set_profiler(prt_context *ctx, prt_layer_profiler_fn fn, void *user);

#ifdef __cplusplus
}
#endif
#endif /* PLUGRT_ENGINE_H */
