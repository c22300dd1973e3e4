/* Fuzz target for plugin records (registry/adapter.h): the field decoder,
 * schema re-validation and every bundled plugin's blob reader, through
 * prt_op_deserialize against the global registry. A record that loads must
 * serialize to the same bytes and load again. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plugrt/op.h"

#ifndef PRT_FUZZ_ENTRY
#define PRT_FUZZ_ENTRY LLVMFuzzerTestOneInput
#endif

int PRT_FUZZ_ENTRY(const uint8_t *data, size_t size);
int PRT_FUZZ_ENTRY(const uint8_t *data, size_t size)
{
    prt_op *op = NULL, *again = NULL;
    uint8_t *buf;
    size_t len = 0, len2 = 0;
    if (prt_op_deserialize(prt_registry_global(), data, size, &op) != PRT_OK) {
        if (op) abort(); /* a failed call leaves the out-parameter alone */
        return 0;
    }
    if (prt_op_serialize(op, NULL, 0, &len) != PRT_OK || len == 0) abort();
    buf = malloc(len);
    if (!buf) abort();
    if (prt_op_serialize(op, buf, len, &len2) != PRT_OK || len2 != len) abort();
    /* Re-serializing need not reproduce non-canonical input bytes (a field
     * given as int32 comes back widened), but it must load again and then
     * be stable. */
    if (prt_op_deserialize(prt_registry_global(), buf, len, &again) != PRT_OK) abort();
    {
        size_t len3 = 0;
        uint8_t *buf3;
        if (prt_op_serialize(again, NULL, 0, &len3) != PRT_OK || len3 != len) abort();
        buf3 = malloc(len3);
        if (!buf3 || prt_op_serialize(again, buf3, len3, &len3) != PRT_OK || memcmp(buf, buf3, len) != 0)
            abort();
        free(buf3);
    }
    free(buf);
    prt_op_destroy(again);
    prt_op_destroy(op);
    return 0;
}
