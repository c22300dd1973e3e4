/* Fuzz target for the plan reader: prt_engine_deserialize against a registry
 * holding the bundled plugins and the test fakes. Each input is tried as
 * given and again with the header's length and checksum made to fit, so
 * that mutations reach the sections instead of stopping at the checksum.
 * A plan that loads must serialize to bytes that load again, describe
 * itself, and, when its memory is small, create a context and run once on
 * zeroed inputs (the run may fail, but cleanly). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/plan.h"
#include "plugrt/engine.h"
#include "runtime/fakeplugins.h"

#ifndef PRT_FUZZ_ENTRY
#define PRT_FUZZ_ENTRY LLVMFuzzerTestOneInput
#endif

#define FUZZ_PLAN_MEM_CAP (16u << 20) /* bytes of arena, workspace and io a run may use */

static prt_registry *fuzz_plan_registry(void)
{
    static prt_registry *r;
    if (!r) r = fake_registry(1, 1, 10);
    if (!r) abort();
    return r;
}

static void fuzz_plan_run(prt_engine *e)
{
    prt_context *ctx = NULL;
    prt_context_config cc;
    int32_t i, n = prt_engine_nb_io(e);
    void *bufs[64];
    uint64_t arena = prt_engine_arena_size(e), ws = prt_engine_workspace_size(e), total;
    /* Each alone first: their sum may wrap around. */
    if (n <= 0 || n > 64 || arena > FUZZ_PLAN_MEM_CAP || ws > FUZZ_PLAN_MEM_CAP) return;
    total = arena + ws;
    if (total > FUZZ_PLAN_MEM_CAP) return;
    prt_context_config_init(&cc);
    cc.device = PRT_DEVICE_CPU;
    cc.nb_threads = 1;
    if (prt_context_create(e, &cc, &ctx) != PRT_OK) return;
    memset(bufs, 0, sizeof bufs);
    for (i = 0; i < n; i++) {
        prt_io_desc d;
        size_t bytes = 0;
        if (prt_engine_io(e, i, &d) != PRT_OK) abort();
        if (prt_context_buffer_size(ctx, d.name, &bytes) != PRT_OK) goto done;
        if (bytes > FUZZ_PLAN_MEM_CAP - total) goto done;
        total += bytes;
        bufs[i] = calloc(1, bytes ? bytes : 1);
        if (!bufs[i] || prt_context_set_tensor(ctx, d.name, bufs[i]) != PRT_OK) goto done;
    }
    if (prt_context_execute(ctx) != PRT_OK && !prt_context_last_error(ctx)[0]) abort(); /* failures say why */
done:
    prt_context_destroy(ctx);
    for (i = 0; i < n; i++) free(bufs[i]);
}

static void fuzz_plan_try(const uint8_t *data, size_t size)
{
    prt_engine *e = NULL, *e2 = NULL;
    char err[512];
    size_t len = 0;
    void *again;
    int32_t i, n;
    if (prt_engine_deserialize(fuzz_plan_registry(), data, size, &e, err, sizeof err) != PRT_OK) {
        if (e || !err[0]) abort(); /* a failure sets no engine and always says why */
        return;
    }
    if (prt_engine_serialize(e, NULL, 0, &len) != PRT_OK) abort();
    again = malloc(len ? len : 1);
    if (!again || prt_engine_serialize(e, again, len, &len) != PRT_OK) abort();
    if (prt_engine_deserialize(fuzz_plan_registry(), again, len, &e2, err, sizeof err) != PRT_OK) abort();
    prt_engine_destroy(e2);
    free(again);
    n = prt_engine_nb_io(e);
    for (i = 0; i < n; i++) {
        prt_io_desc d;
        if (prt_engine_io(e, i, &d) != PRT_OK || !d.name || prt_engine_find_io(e, d.name) != i) abort();
    }
    for (i = 0; i < prt_engine_nb_layers(e); i++)
        if (!prt_engine_layer_name(e, i)) abort();
    fuzz_plan_run(e);
    prt_engine_destroy(e);
}

static void fuzz_plan_put_u64(uint8_t *b, uint64_t v)
{
    int k;
    for (k = 0; k < 8; k++) b[k] = (uint8_t)(v >> (8 * k));
}

int PRT_FUZZ_ENTRY(const uint8_t *data, size_t size);
int PRT_FUZZ_ENTRY(const uint8_t *data, size_t size)
{
    uint8_t *fixed;
    fuzz_plan_try(data, size);
    if (size < PRT__PLAN_HEADER_SIZE) return 0;
    fixed = malloc(size);
    if (!fixed) return 0;
    memcpy(fixed, data, size);
    fuzz_plan_put_u64(fixed + 16, (uint64_t)size);
    fuzz_plan_put_u64(fixed + 24, prt__plan_checksum(fixed + PRT__PLAN_HEADER_SIZE, size - PRT__PLAN_HEADER_SIZE));
    fuzz_plan_try(fixed, size);
    free(fixed);
    return 0;
}
