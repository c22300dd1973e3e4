/*
 * onnx/common/onnx_tensor.h - dtype dispatch and the broadcasting iterator
 * shared by the ONNX op kernels.
 *
 * Kernels work on runs of at most PRT__ONNX_RUN elements: gather the inputs of
 * a run into double (float dtypes) or int64 (integer and bool dtypes) arrays,
 * compute, scatter into the output's dtype. fp16 and bf16 are computed in
 * double and rounded once on store.
 */
#ifndef PLUGRT_ONNX_TENSOR_H
#define PLUGRT_ONNX_TENSOR_H

#include "plugrt/plugin.h"

#define PRT__ONNX_RUN 256
#define PRT__BCAST_MAX_IN 3

static inline int prt__onnx_is_float(prt_dtype t)
{
    return t == PRT_DTYPE_F32 || t == PRT_DTYPE_F16 || t == PRT_DTYPE_BF16;
}

/* dst[k] = src[off + k * stride] converted, k < n. */
void prt__onnx_gather_f64(double *dst, const void *src, prt_dtype t, int64_t off, int64_t stride, int64_t n);
void prt__onnx_gather_i64(int64_t *dst, const void *src, prt_dtype t, int64_t off, int64_t stride, int64_t n);
/* dst[off + k] = src[k] converted. Float to integer truncates toward zero,
 * saturating at the type's range (NaN gives 0); to bool is "!= 0". Integer
 * to a narrower integer wraps (two's complement). */
void prt__onnx_scatter_f64(void *dst, prt_dtype t, int64_t off, const double *src, int64_t n);
void prt__onnx_scatter_i64(void *dst, prt_dtype t, int64_t off, const int64_t *src, int64_t n);

/* One element as double / int64. */
double prt__onnx_get_f64(const void *src, prt_dtype t, int64_t i);
int64_t prt__onnx_get_i64(const void *src, prt_dtype t, int64_t i);

/* The output index space with, per input, its element strides (0 where the
 * input is broadcast). Adjacent dims that every input walks contiguously are
 * merged. */
typedef struct prt__bcast {
    int32_t rank;
    int32_t nb_in;
    int64_t volume;
    int64_t dims[PRT_MAX_DIMS];
    int64_t strides[PRT__BCAST_MAX_IN][PRT_MAX_DIMS];
} prt__bcast;

/* A run: n (<= PRT__ONNX_RUN) consecutive output elements from out_off;
 * input i's elements are at in_off[i] + k * in_stride[i]. */
typedef void (*prt__bcast_fn)(void *ctx, int64_t out_off, const int64_t *in_off, const int64_t *in_stride,
                              int64_t n);

/* Plan broadcasting `nb_in` inputs into `out`; fails when an input cannot
 * broadcast to it (message says which). */
prt_status prt__bcast_plan(prt__bcast *b, const prt_dims *out, const prt_dims *const *in, int32_t nb_in,
                           prt_msg *err);
/* Call fn over every run, split over the exec's threads. */
void prt__bcast_exec(const prt__bcast *b, prt_exec *ex, prt__bcast_fn fn, void *ctx);

/* dst (contiguous, `dims`) gets src's elements at base + sum(idx[i] *
 * strides[i]) (element units; strides may be 0 or negative): transpose,
 * slice, expand and tile are all this. rank <= PRT_MAX_DIMS. */
void prt__onnx_strided_copy(prt_exec *ex, void *dst, const void *src, size_t esize, int32_t rank,
                            const int64_t *dims, const int64_t *strides, int64_t base);

/* ONNX TensorProto.DataType -> prt_dtype, or -1 where plugrt has no such
 * type; and the ONNX name of a TensorProto.DataType ("DOUBLE"). */
int prt__onnx_dtype_from_onnx(int64_t t);
const char *prt__onnx_dtype_onnx_name(int64_t t);
#define PRT__ONNX_DTYPES_TEXT "1 FLOAT, 2 UINT8, 3 INT8, 6 INT32, 7 INT64, 9 BOOL, 10 FLOAT16, 16 BFLOAT16"

/* Row-major strides of dims (elements). */
void prt__onnx_strides(const prt_dims *d, int64_t *strides);

#endif /* PLUGRT_ONNX_TENSOR_H */
