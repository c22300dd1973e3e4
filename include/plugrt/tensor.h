/*
 * plugrt/tensor.h - data types, tensor formats, dimensions, descriptors.
 *
 * Contract
 *   Plain data only; nothing here allocates or fails. The numeric values of
 *   the enums are part of the plan file format and the plugin ABI: they are
 *   never renumbered, only appended.
 */
#ifndef PLUGRT_TENSOR_H
#define PLUGRT_TENSOR_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum prt_dtype {
    PRT_DTYPE_ABSENT = -1, /* an absent optional input (plugin.h); never a tensor's type */
    PRT_DTYPE_F32 = 0,
    PRT_DTYPE_F16 = 1,
    PRT_DTYPE_BF16 = 2,
    PRT_DTYPE_I8 = 3,
    PRT_DTYPE_U8 = 4,
    PRT_DTYPE_I32 = 5,
    PRT_DTYPE_I64 = 6,
    PRT_DTYPE_BOOL = 7,
    PRT_DTYPE_COUNT_
} prt_dtype;

/* Memory layouts. Only LINEAR (row-major, NCHW for 4-D) is produced today;
 * the others are reserved so that plans and plugins can name them later. */
typedef enum prt_format {
    PRT_FORMAT_LINEAR = 0,
    PRT_FORMAT_NHWC = 1,   /* channel-last */
    PRT_FORMAT_NC4HW4 = 2, /* channels vectorized by 4 */
    PRT_FORMAT_NC32HW32 = 3,
    PRT_FORMAT_COUNT_
} prt_format;

#define PRT_MAX_DIMS 8
#define PRT_DIM_DYNAMIC (-1)

typedef struct prt_dims {
    int32_t nb;              /* 0..PRT_MAX_DIMS; 0 is a scalar */
    int32_t reserved_;       /* must be 0 */
    int64_t d[PRT_MAX_DIMS]; /* extents; PRT_DIM_DYNAMIC where unknown */
} prt_dims;

/* A tensor as a plugin sees it: type, layout, concrete extents (at run time)
 * or the extents known so far (at build time, -1 for dynamic). */
typedef struct prt_tensor_desc {
    prt_dtype dtype;
    prt_format format;
    prt_dims dims;
} prt_tensor_desc;

/* A tensor at build time: the descriptor plus the range its optimization
 * profile allows. `desc.dims` may hold -1; min and max are concrete. */
typedef struct prt_dyn_tensor_desc {
    prt_tensor_desc desc;
    prt_dims min;
    prt_dims opt;
    prt_dims max;
} prt_dyn_tensor_desc;

/* Bytes per element; 0 for values outside the enum. */
static inline size_t prt_dtype_size(prt_dtype t)
{
    switch (t) {
    case PRT_DTYPE_F32: case PRT_DTYPE_I32: return 4;
    case PRT_DTYPE_F16: case PRT_DTYPE_BF16: return 2;
    case PRT_DTYPE_I8: case PRT_DTYPE_U8: case PRT_DTYPE_BOOL: return 1;
    case PRT_DTYPE_I64: return 8;
    default: return 0;
    }
}

/* "f32", "f16", ...; "?" outside the enum. */
static inline const char *prt_dtype_name(prt_dtype t)
{
    switch (t) {
    case PRT_DTYPE_F32: return "f32";
    case PRT_DTYPE_F16: return "f16";
    case PRT_DTYPE_BF16: return "bf16";
    case PRT_DTYPE_I8: return "i8";
    case PRT_DTYPE_U8: return "u8";
    case PRT_DTYPE_I32: return "i32";
    case PRT_DTYPE_I64: return "i64";
    case PRT_DTYPE_BOOL: return "bool";
    case PRT_DTYPE_ABSENT: return "absent";
    default: return "?";
    }
}

static inline const char *prt_format_name(prt_format f)
{
    switch (f) {
    case PRT_FORMAT_LINEAR: return "linear";
    case PRT_FORMAT_NHWC: return "nhwc";
    case PRT_FORMAT_NC4HW4: return "nc4hw4";
    case PRT_FORMAT_NC32HW32: return "nc32hw32";
    default: return "?";
    }
}

/* Number of elements, or -1 if any extent is negative or the product
 * overflows int64. A scalar (nb == 0) has one element. */
static inline int64_t prt_dims_volume(const prt_dims *d)
{
    int64_t v = 1;
    int32_t i;
    if (d->nb < 0 || d->nb > PRT_MAX_DIMS) return -1;
    for (i = 0; i < d->nb; i++) {
        if (d->d[i] < 0) return -1;
        if (d->d[i] != 0 && v > INT64_MAX / d->d[i]) return -1;
        v *= d->d[i];
    }
    return v;
}

static inline int prt_dims_equal(const prt_dims *a, const prt_dims *b)
{
    int32_t i;
    if (a->nb != b->nb) return 0;
    for (i = 0; i < a->nb && i < PRT_MAX_DIMS; i++)
        if (a->d[i] != b->d[i]) return 0;
    return 1;
}

#ifndef PRT_PLUGIN_AS_LIBRARY /* a plugin library uses prt_host_dims_str() */
/* Writes "[2, 3, -1]" into buf (always NUL-terminated when cap > 0). */
PRT_API const char *prt_dims_str(const prt_dims *d, char *buf, size_t cap);
#endif

/* IEEE half <-> float, round to nearest even; NaN and Inf preserved. */
static inline float prt_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    uint32_t bits;
    float f;
    if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else { /* subnormal: normalize */
            exp = 127 - 15 + 1;
            while (!(man & 0x400u)) { man <<= 1; exp--; }
            man &= 0x3ffu;
            bits = sign | (exp << 23) | (man << 13);
        }
    } else if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13);
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
    }
    memcpy(&f, &bits, 4);
    return f;
}

static inline uint16_t prt_f32_to_f16(float f)
{
    uint32_t x, sign, absx;
    memcpy(&x, &f, 4);
    sign = (x >> 16) & 0x8000u;
    absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) /* Inf or NaN */
        return (uint16_t)(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0));
    if (absx >= 0x477ff000u) /* rounds to >= 65520: overflow to Inf */
        return (uint16_t)(sign | 0x7c00u);
    if (absx < 0x38800000u) { /* below the smallest normal half */
        uint32_t shift, man, r, half, rem;
        if (absx < 0x33000000u) return (uint16_t)sign; /* < 2^-25: zero */
        shift = 126u - (absx >> 23); /* 14..24 */
        man = (absx & 0x7fffffu) | 0x800000u;
        r = man >> (shift);
        rem = man & ((1u << shift) - 1u);
        half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (r & 1u))) r++;
        return (uint16_t)(sign | r);
    } else {
        uint32_t r = ((absx - 0x38000000u) >> 13);
        uint32_t rem = absx & 0x1fffu;
        if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) r++;
        return (uint16_t)(sign | r);
    }
}

static inline float prt_bf16_to_f32(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static inline uint16_t prt_f32_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

#ifdef __cplusplus
}
#endif
#endif /* PLUGRT_TENSOR_H */
