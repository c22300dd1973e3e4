/* Fuzz target that runs loaded plans at random shapes inside their profile:
 * the input is a plan (its length and checksum are made to fit, so that
 * mutations reach the sections); one that loads runs on the CPU at the
 * profile's max and at three shapes drawn from a hash of the input, with
 * exactly sized buffers (fuzz_shapes.h). Seeds: corpus/plan/. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/plan.h"
#include "fuzz/fuzz_shapes.h"

#ifndef PRT_FUZZ_ENTRY
#define PRT_FUZZ_ENTRY LLVMFuzzerTestOneInput
#endif

int PRT_FUZZ_ENTRY(const uint8_t *data, size_t size);
int PRT_FUZZ_ENTRY(const uint8_t *data, size_t size)
{
    prt_engine *e = NULL;
    uint8_t *fixed;
    char err[512];
    int k;
    if (size < PRT__PLAN_HEADER_SIZE) return 0;
    fixed = malloc(size);
    if (!fixed) return 0;
    memcpy(fixed, data, size);
    for (k = 0; k < 8; k++) fixed[16 + k] = (uint8_t)((uint64_t)size >> (8 * k));
    {
        uint64_t sum = prt__plan_checksum(fixed + PRT__PLAN_HEADER_SIZE, size - PRT__PLAN_HEADER_SIZE);
        for (k = 0; k < 8; k++) fixed[24 + k] = (uint8_t)(sum >> (8 * k));
    }
    err[0] = 0;
    if (prt_engine_deserialize(fuzz_shapes_registry(), fixed, size, &e, err, sizeof err) == PRT_OK) {
        fuzz_shapes_run(e, fuzz_shapes_hash(data, size));
        prt_engine_destroy(e);
    } else if (e || !err[0]) {
        abort();
    }
    free(fixed);
    return 0;
}
