/*
 * core/checked.h - size arithmetic that cannot wrap.
 *
 * Every volume, byte count, offset and arena placement the library computes
 * from data it did not make itself (plans, networks, plugin answers) goes
 * through these helpers. Each returns 0 and stores the result, or -1 and
 * leaves *out alone when the result would not fit.
 *
 * PRT_MAX_TENSOR_BYTES is the largest tensor (at a profile's max shapes),
 * activation arena, workspace or weight block the library accepts: 2^48 bytes
 * (256 TiB). It keeps every sum of a few such sizes far from 2^64 and far from
 * what any allocator can return, so a size that passes it cannot wrap later.
 * Errors that refuse a size name this limit.
 */
#ifndef PLUGRT_CORE_CHECKED_H
#define PLUGRT_CORE_CHECKED_H

#include <stddef.h>
#include <stdint.h>

#include "plugrt/tensor.h"

#define PRT_MAX_TENSOR_BYTES ((uint64_t)1 << 48)
#define PRT_MAX_TENSOR_BYTES_STR "2^48 bytes (256 TiB)"

static inline int prt__add_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    if (a > UINT64_MAX - b) return -1;
    *out = a + b;
    return 0;
}

static inline int prt__mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
    if (a && b > UINT64_MAX / a) return -1;
    *out = a * b;
    return 0;
}

static inline int prt__add_size(size_t a, size_t b, size_t *out)
{
    if (a > SIZE_MAX - b) return -1;
    *out = a + b;
    return 0;
}

static inline int prt__mul_size(size_t a, size_t b, size_t *out)
{
    if (a && b > SIZE_MAX / a) return -1;
    *out = a * b;
    return 0;
}

/* a rounded up to a multiple of `align` (a power of two or any value > 0). */
static inline int prt__align_u64(uint64_t a, uint64_t align, uint64_t *out)
{
    uint64_t r;
    if (!align) return -1;
    r = a % align;
    if (!r) {
        *out = a;
        return 0;
    }
    return prt__add_u64(a, align - r, out);
}

/* Element count of dims (every extent >= 0), or -1. */
static inline int prt__volume(const prt_dims *d, uint64_t *out)
{
    uint64_t v = 1;
    int32_t i;
    if (d->nb < 0 || d->nb > PRT_MAX_DIMS) return -1;
    for (i = 0; i < d->nb; i++) {
        if (d->d[i] < 0 || prt__mul_u64(v, (uint64_t)d->d[i], &v) != 0) return -1;
    }
    *out = v;
    return 0;
}

/* Bytes of dims in elements of `elem` bytes, at most PRT_MAX_TENSOR_BYTES;
 * or -1. */
static inline int prt__tensor_bytes(const prt_dims *d, size_t elem, uint64_t *out)
{
    uint64_t v, b;
    if (prt__volume(d, &v) != 0 || prt__mul_u64(v, (uint64_t)elem, &b) != 0 || b > PRT_MAX_TENSOR_BYTES) return -1;
    *out = b;
    return 0;
}

/* [off, off + n) lies inside [0, cap). */
static inline int prt__range_fits(uint64_t off, uint64_t n, uint64_t cap)
{
    return off <= cap && n <= cap - off;
}

#endif
