/*
 * plugrt/npy.h - reading and writing NumPy .npy arrays.
 *
 * Format (NumPy's .npy, versions 1.0, 2.0 and 3.0)
 *   bytes 0..5   magic "\x93NUMPY"
 *   byte  6, 7   major, minor version (1.0, 2.0 or 3.0)
 *   then         header length: uint16 LE (1.0) or uint32 LE (2.0, 3.0)
 *   then         header: a Python dict literal with exactly the keys
 *                'descr' (type string), 'fortran_order' (True/False) and
 *                'shape' (tuple of non-negative ints), padded with spaces
 *                and ended by '\n'
 *   then         the elements, nothing after them.
 *
 *   Accepted element types (descr): <f2 <f4 <f8 |i1 |u1 <i4 <i8 |b1 ('<' and
 *   '|' are both accepted as the byte-order mark, since all of these are
 *   read as little-endian). Big-endian, structured, string and object
 *   arrays are refused. Fortran-order arrays are converted to C order on
 *   read. The writer produces version 1.0 (2.0 when the header would not
 *   fit in 65535 bytes), C order.
 *
 * Contract
 *   prt_npy_array is plain data. Arrays filled by prt_npy_read_* and
 *   prt_npy_array_alloc own their `data`; release it with
 *   prt_npy_array_clear (accepts a zeroed or already cleared array).
 *   On failure every function leaves its outputs untouched and returns a
 *   status; the message, which names what was expected and what was found,
 *   is read with prt_last_error(out) for readers (the address of the array
 *   or buffer pointer that was to be filled) and prt_last_error(a) for
 *   functions that take a source array. Messages are per thread.
 *   Functions are re-entrant; there is no global state.
 */
#ifndef PLUGRT_NPY_H
#define PLUGRT_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"
#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Element types a .npy file may hold. Unlike prt_dtype this includes
 * float64 (golden data is often written in double precision). */
typedef enum prt_npy_type {
    PRT_NPY_F2 = 0, /* float16 */
    PRT_NPY_F4 = 1, /* float32 */
    PRT_NPY_F8 = 2, /* float64 */
    PRT_NPY_I1 = 3, /* int8 */
    PRT_NPY_U1 = 4, /* uint8 */
    PRT_NPY_I4 = 5, /* int32 */
    PRT_NPY_I8 = 6, /* int64 */
    PRT_NPY_B1 = 7, /* bool, one byte, 0 or 1 */
    PRT_NPY_COUNT_
} prt_npy_type;

typedef struct prt_npy_array {
    prt_npy_type type;
    prt_dims shape; /* shape.nb == 0 for a 0-d array, which holds one element */
    int64_t count;  /* number of elements */
    size_t nbytes;  /* count * element size */
    void *data;     /* C order, host byte order; owned, see the contract */
} prt_npy_array;

/* "<f4" style descr; "?" outside the enum. */
PRT_API const char *prt_npy_type_descr(prt_npy_type t);
/* Bytes per element; 0 outside the enum. */
PRT_API size_t prt_npy_type_size(prt_npy_type t);
/* The prt_dtype with the same element layout. PRT_NPY_F8 has none
 * (PRT_STATUS_UNSUPPORTED); use prt_npy_convert to get float32. */
PRT_API PRT_NODISCARD prt_status prt_npy_type_to_dtype(prt_npy_type t, prt_dtype *out);
/* The npy type for a prt_dtype; PRT_DTYPE_BF16 has none (UNSUPPORTED). */
PRT_API PRT_NODISCARD prt_status prt_npy_type_from_dtype(prt_dtype t, prt_npy_type *out);

/* Parse a whole .npy image. `out` is overwritten on success only (it is
 * not cleared first: clear an array you are reusing). */
PRT_API PRT_NODISCARD prt_status prt_npy_read_mem(const void *buf, size_t len,
                                                 prt_npy_array *out);
PRT_API PRT_NODISCARD prt_status prt_npy_read_file(const char *path, prt_npy_array *out);

/* Serialize `a` (C order, version 1.0 or 2.0). *buf is allocated and must
 * be released with prt_npy_free. `a->data` may be NULL only when
 * a->count is 0. */
PRT_API PRT_NODISCARD prt_status prt_npy_write_mem(const prt_npy_array *a, void **buf,
                                                  size_t *len);
PRT_API PRT_NODISCARD prt_status prt_npy_write_file(const prt_npy_array *a, const char *path);
PRT_API void prt_npy_free(void *buf);

/* Allocate a zero-filled array of the given type and shape (dims >= 0). */
PRT_API PRT_NODISCARD prt_status prt_npy_array_alloc(prt_npy_array *out, prt_npy_type t,
                                                    const prt_dims *shape);
/* Free `data` and zero the struct. NULL is accepted. */
PRT_API void prt_npy_array_clear(prt_npy_array *a);

/* Element i (C order) as a double; NAN for an index out of range. */
PRT_API double prt_npy_get_f64(const prt_npy_array *a, int64_t i);

/* Convert every element to `dt` into `dst`, which must hold exactly
 * a->count * prt_dtype_size(dt) bytes. Floats narrow with round to nearest
 * even. Conversions to an integer type or bool require every value to be
 * representable (integral, in range; bool: 0 or 1); otherwise the call
 * fails naming the first offending element, and `dst` is untouched. */
PRT_API PRT_NODISCARD prt_status prt_npy_convert(const prt_npy_array *a, prt_dtype dt,
                                                void *dst, size_t dst_bytes);

/* Also declared in op.h: the message of the last failed call on `obj`. */
PRT_API const char *prt_last_error(const void *obj);

#ifdef __cplusplus
}
#endif
#endif /* PLUGRT_NPY_H */
