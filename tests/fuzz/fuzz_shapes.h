/*
 * tests/fuzz/fuzz_shapes.h - what fuzz_planrun and fuzz_netrun share: run an
 * engine on the CPU at several input shapes drawn inside its profile (not
 * only opt), with every buffer allocated at exactly the size the context
 * asks for, so that a plugin writing past it is caught by ASan. A run may
 * fail, but cleanly and saying why.
 */
#ifndef TESTS_FUZZ_FUZZ_SHAPES_H
#define TESTS_FUZZ_FUZZ_SHAPES_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plugrt/engine.h"
#include "runtime/fakeplugins.h"

/* The bundled plugins and the engine tests' fakes. */
static prt_registry *fuzz_shapes_registry(void)
{
    static prt_registry *r;
    if (!r) r = fake_registry(1, 1, 10);
    if (!r) abort();
    return r;
}

#define FUZZ_SHAPES_MEM_CAP (16u << 20) /* bytes of arena, workspace and io one run may use */
#define FUZZ_SHAPES_RUNS 4

static uint64_t fuzz_shapes_hash(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    size_t i;
    for (i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static uint64_t fuzz_shapes_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* One run at shapes drawn from *seed (run 0: the profile's max, where
 * buffers are largest; then random points inside min..max). */
static void fuzz_shapes_run_once(prt_engine *e, prt_context *ctx, uint64_t *seed, int run)
{
    int32_t i, n = prt_engine_nb_io(e);
    void *bufs[64];
    uint64_t total = prt_engine_arena_size(e) + prt_engine_workspace_size(e), draw[PRT_MAX_DIMS];
    memset(bufs, 0, sizeof bufs);
    /* Draws shared by the inputs, picked by a dim's range: extents that must
     * agree (a batch, a box count) and have the same range get the same
     * value, wherever they sit. */
    for (i = 0; i < PRT_MAX_DIMS; i++) draw[i] = fuzz_shapes_next(seed);
    for (i = 0; i < n; i++) {
        prt_io_desc d;
        prt_dims s;
        int32_t j;
        if (prt_engine_io(e, i, &d) != PRT_OK) abort();
        if (d.mode != PRT_IO_INPUT) continue;
        s = d.max;
        for (j = 0; j < s.nb; j++) {
            uint64_t span = (uint64_t)(d.max.d[j] - d.min.d[j]) + 1;
            if (run)
                s.d[j] = d.min.d[j] + (int64_t)(draw[((uint64_t)d.min.d[j] * 31u + (uint64_t)d.max.d[j]) % PRT_MAX_DIMS] %
                                                span);
        }
        if (prt_context_set_input_shape(ctx, d.name, &s) != PRT_OK) abort(); /* inside the profile */
    }
    for (i = 0; i < n; i++) {
        prt_io_desc d;
        size_t bytes = 0, k;
        if (prt_engine_io(e, i, &d) != PRT_OK) abort();
        if (prt_context_buffer_size(ctx, d.name, &bytes) != PRT_OK) {
            if (!prt_context_last_error(ctx)[0]) abort();
            goto done;
        }
        if (bytes > FUZZ_SHAPES_MEM_CAP - total) goto done;
        total += bytes;
        bufs[i] = malloc(bytes ? bytes : 1); /* exact: a write past it is caught */
        if (!bufs[i]) goto done;
        for (k = 0; k < bytes; k++) ((uint8_t *)bufs[i])[k] = (uint8_t)fuzz_shapes_next(seed);
        if (d.dtype == PRT_DTYPE_F32) /* finite floats in [-4, 4) */
            for (k = 0; k + 4 <= bytes; k += 4) {
                float v = (float)(fuzz_shapes_next(seed) % 8192) / 1024.0f - 4.0f;
                memcpy((uint8_t *)bufs[i] + k, &v, 4);
            }
        if (prt_context_set_tensor(ctx, d.name, bufs[i]) != PRT_OK) abort();
    }
    if (prt_context_execute(ctx) != PRT_OK && !prt_context_last_error(ctx)[0]) abort(); /* failures say why */
done:
    for (i = 0; i < n; i++) free(bufs[i]);
}

static void fuzz_shapes_run(prt_engine *e, uint64_t seed)
{
    prt_context *ctx = NULL;
    prt_context_config cc;
    int32_t n = prt_engine_nb_io(e);
    int run;
    if (n <= 0 || n > 64 || prt_engine_arena_size(e) > FUZZ_SHAPES_MEM_CAP ||
        prt_engine_workspace_size(e) > FUZZ_SHAPES_MEM_CAP ||
        prt_engine_arena_size(e) + prt_engine_workspace_size(e) > FUZZ_SHAPES_MEM_CAP)
        return;
    prt_context_config_init(&cc);
    cc.device = PRT_DEVICE_CPU;
    cc.nb_threads = 1;
    if (prt_context_create(e, &cc, &ctx) != PRT_OK) return;
    if (!seed) seed = 1;
    for (run = 0; run < FUZZ_SHAPES_RUNS; run++) fuzz_shapes_run_once(e, ctx, &seed, run);
    prt_context_destroy(ctx);
}

#endif
