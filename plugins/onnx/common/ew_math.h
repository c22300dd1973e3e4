/*
 * onnx/common/ew_math.h - float functions written so that loops calling
 * them vectorize (no calls, no branches, no lookup tables).
 *
 * prt__ew_expf: e^x for every float x, within 2 ulp of the correctly rounded
 * value for normal results (subnormal results within 2 ulp of the smallest
 * subnormal), +inf past 88.7228, +0 below -103.98, NaN for NaN. Method:
 * x = k ln 2 + r with k = round(x / ln 2) (rounded by adding and removing
 * 1.5 * 2^23) and ln 2 split in two parts so r is exact to about 2^-32 of x,
 * e^r by its degree-7 Taylor polynomial on |r| <= ln 2 / 2 (truncation below
 * 7e-9 relative), and 2^k applied as two powers of two so k down to -252
 * (subnormal results) needs no special case.
 */
#ifndef PLUGRT_ONNX_EW_MATH_H
#define PLUGRT_ONNX_EW_MATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline float prt__ew_pow2i(int32_t k) /* 2^k for k in [-126, 127] */
{
    const uint32_t bits = (uint32_t)(k + 127) << 23;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static inline float prt__ew_expf(float x)
{
    const float shifter = 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */
    const float xc = x > 88.7228394f ? 88.7228394f : x < -103.98f ? -103.98f : x;
    const float kf = (xc * 1.44269504088896341f + shifter) - shifter;
    const float r = (xc - kf * 0.693145751953125f) - kf * 1.42860682030941723e-06f;
    const float p = 1.0f + r * (1.0f + r * (0.5f + r * (1.66666672e-1f + r * (4.16666679e-2f +
                    r * (8.33333377e-3f + r * (1.38888892e-3f + r * 1.98412701e-4f))))));
    const int32_t k = (int32_t)kf, k1 = k / 2, k2 = k - k1;
    const float y = p * prt__ew_pow2i(k1) * prt__ew_pow2i(k2);
    /* past the clamp: inf above, NaN stays NaN (comparisons with NaN are false) */
    return x > 88.7228394f ? (float)INFINITY : x != x ? x : y;
}

#endif /* PLUGRT_ONNX_EW_MATH_H */
