/* Fuzz target for the timing-cache reader (prt_timing_cache_deserialize).
 * Each input is tried as given and again with the header's length and
 * checksum made to fit, so that mutations reach the entries instead of
 * stopping at the checksum. A cache that loads must serialize to the same
 * entries, byte for byte (they are kept sorted and written as read), and
 * load again. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/plan.h"
#include "plugrt/engine.h"

#ifndef PRT_FUZZ_ENTRY
#define PRT_FUZZ_ENTRY LLVMFuzzerTestOneInput
#endif

static void fuzz_tcache_one(const uint8_t *data, size_t size)
{
    prt_timing_cache *c = NULL, *c2 = NULL;
    uint8_t *out;
    size_t len = 0, len2 = 0;
    char err[512];
    if (prt_timing_cache_deserialize(data, size, &c, err, sizeof err) != PRT_OK) {
        if (!err[0]) abort(); /* a refusal says why */
        return;
    }
    if (prt_timing_cache_serialize(c, NULL, 0, &len) != PRT_OK) abort();
    out = malloc(len ? len : 1);
    if (!out || prt_timing_cache_serialize(c, out, len, &len2) != PRT_OK || len2 != len) abort();
    /* The entries come back byte for byte (the header's write version is the writer's own). */
    if (len != size || memcmp(out + 48, data + 48, size - 48) != 0 || memcmp(out, data, 12) != 0) abort();
    if (prt_timing_cache_deserialize(out, len, &c2, err, sizeof err) != PRT_OK) abort();
    if (prt_timing_cache_nb_entries(c2) != prt_timing_cache_nb_entries(c)) abort();
    prt_timing_cache_destroy(c2);
    prt_timing_cache_destroy(c);
    free(out);
}

int PRT_FUZZ_ENTRY(const uint8_t *data, size_t size);
int PRT_FUZZ_ENTRY(const uint8_t *data, size_t size)
{
    uint8_t *q;
    uint64_t sum;
    int k;
    fuzz_tcache_one(data, size);
    if (size < 48) return 0;
    q = malloc(size);
    if (!q) return 0;
    memcpy(q, data, size);
    for (k = 0; k < 8; k++) q[16 + k] = (uint8_t)((uint64_t)size >> (8 * k));
    sum = prt__plan_checksum(q + 48, size - 48);
    for (k = 0; k < 8; k++) q[24 + k] = (uint8_t)(sum >> (8 * k));
    fuzz_tcache_one(q, size);
    free(q);
    return 0;
}
