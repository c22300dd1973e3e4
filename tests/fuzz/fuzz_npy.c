/* Fuzz target for the .npy reader: read, and for accepted input write it
 * back, read that again and compare, and convert to every dtype. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plugrt/npy.h"

#ifndef PRT_FUZZ_ENTRY
#define PRT_FUZZ_ENTRY LLVMFuzzerTestOneInput
#endif

int PRT_FUZZ_ENTRY(const uint8_t *data, size_t size);
int PRT_FUZZ_ENTRY(const uint8_t *data, size_t size)
{
    prt_npy_array a, b;
    void *buf;
    size_t len;
    int dt;
    if (prt_npy_read_mem(data, size, &a) != PRT_OK) return 0;
    if (prt_npy_write_mem(&a, &buf, &len) != PRT_OK) abort();
    if (prt_npy_read_mem(buf, len, &b) != PRT_OK) abort();
    if (b.type != a.type || !prt_dims_equal(&a.shape, &b.shape) || b.nbytes != a.nbytes ||
        (a.nbytes && memcmp(a.data, b.data, a.nbytes) != 0))
        abort();
    for (dt = 0; dt < PRT_DTYPE_COUNT_; dt++) {
        size_t n = (size_t)a.count * prt_dtype_size((prt_dtype)dt);
        void *dst = malloc(n ? n : 1);
        if (dst) {
            prt_status s = prt_npy_convert(&a, (prt_dtype)dt, dst, n);
            /* every value converts to a float type */
            if (s != PRT_OK && (dt == PRT_DTYPE_F32 || dt == PRT_DTYPE_F16 || dt == PRT_DTYPE_BF16))
                abort();
            free(dst);
        }
    }
    (void)prt_npy_get_f64(&a, a.count - 1);
    prt_npy_free(buf);
    prt_npy_array_clear(&a);
    prt_npy_array_clear(&b);
    return 0;
}
