/*
 * deform_conv/deform_conv_cuda.cu - CUDA implementation of
 * ModulatedDeformConv2d: a bilinear im2col kernel (fp32 or fp16 storage,
 * fp32 coordinates, weights and sums) into a column buffer in the workspace,
 * then cuBLAS GEMMs with fp32 accumulation (CUBLAS_COMPUTE_32F; TF32 for fp32
 * tensors only in a build with PLUGRT_DCN_TF32). The entry point also
 * dispatches to the fused kernels (deform_conv_fused.cu, and for fp32 the
 * 3xTF32 tiles of deform_conv_wgmma.cu) by tactic or default policy.
 *
 * Slicing: the column buffer holds at most B = max(128, CAP / (Cin*K*elt))
 * columns. When one image's Hout*Wout columns fit, a slice is as many whole
 * images as fit; otherwise a slice is a tile of columns of one image. The
 * column buffer of a slice is [images][Cin*K][cols]. Bias (or zero) is
 * written to the output first; the GEMMs then accumulate with beta = 1.
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cublas_v2.h>
#include <stdio.h>

#include "deform_conv.h"

namespace {

struct Geo {
    int64_t cin, h, w, hout, wout, hw, K, kw, cd, dg;
    int64_t sh, sw, ph, pw, dh, dw;
};

__device__ __forceinline__ float to_f(float v) { return v; }
__device__ __forceinline__ float to_f(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> __device__ __forceinline__ T from_f(float v);
template <> __device__ __forceinline__ float from_f<float>(float v) { return v; }
template <> __device__ __forceinline__ __half from_f<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

/* One thread per (image in slice, deformable group, channel chunk, tap,
 * column): computes the four corners once and writes that tap's column
 * entry for every channel of its chunk. Adjacent threads take adjacent
 * columns, so the column writes are coalesced. */
template <typename T>
__global__ void im2col_kernel(const T *__restrict__ x, const T *__restrict__ off, const T *__restrict__ mask,
                              T *__restrict__ col, Geo g, int64_t n0, int64_t p0, int64_t tc, int64_t chunk,
                              int64_t nchunks, int64_t total)
{
    int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= total) return;
    const int64_t q = idx % tc;
    int64_t r = idx / tc;
    const int64_t k = r % g.K;
    r /= g.K;
    const int64_t ch = r % nchunks;
    r /= nchunks;
    const int64_t d = r % g.dg;
    const int64_t nl = r / g.dg;
    const int64_t n = n0 + nl;
    const int64_t pos = p0 + q;
    const int64_t oy = pos / g.wout, ox = pos % g.wout;
    const int64_t i = k / g.kw, j = k % g.kw;
    const int64_t och = (n * 2 * g.dg * g.K + d * 2 * g.K + 2 * k) * g.hw + pos;
    const float dy = to_f(off[och]);
    const float dx = to_f(off[och + g.hw]);
    const float m = to_f(mask[(n * g.dg * g.K + d * g.K + k) * g.hw + pos]);
    /* The sampling point is an integer base plus the offset. The bilinear
     * fractions come from the offset alone, so they keep full fp32 precision
     * however far the point is from the origin. */
    const int64_t by = oy * g.sh - g.ph + i * g.dh, bx = ox * g.sw - g.pw + j * g.dw;
    /* a corner outside the image reads nothing (a NaN or Inf elsewhere in x
     * must not meet its zero weight): in0..in3 */
    int64_t i0 = 0, i1 = 0, i2 = 0, i3 = 0;
    float w0 = 0.f, w1 = 0.f, w2 = 0.f, w3 = 0.f;
    bool in0 = false, in1 = false, in2 = false, in3 = false;
    if (fabsf(dy) < 1e9f && fabsf(dx) < 1e9f) { /* false for NaN and Inf */
        const float fy = floorf(dy), fx = floorf(dx);
        const float lh = dy - fy, lw = dx - fx;
        const int64_t h0 = by + (int64_t)fy, x0 = bx + (int64_t)fx;
        /* inside unless py <= -1, py >= H, px <= -1 or px >= W */
        if ((h0 >= 0 || (h0 == -1 && lh > 0.f)) && h0 < g.h && (x0 >= 0 || (x0 == -1 && lw > 0.f)) && x0 < g.w) {
            if (h0 >= 0 && x0 >= 0) { i0 = h0 * g.w + x0; w0 = m * (1.f - lh) * (1.f - lw); in0 = true; }
            if (h0 >= 0 && x0 + 1 < g.w) { i1 = h0 * g.w + x0 + 1; w1 = m * (1.f - lh) * lw; in1 = true; }
            if (h0 + 1 < g.h && x0 >= 0) { i2 = (h0 + 1) * g.w + x0; w2 = m * lh * (1.f - lw); in2 = true; }
            if (h0 + 1 < g.h && x0 + 1 < g.w) { i3 = (h0 + 1) * g.w + x0 + 1; w3 = m * lh * lw; in3 = true; }
        }
    }
    const int64_t hwin = g.h * g.w;
    const int64_t c0 = d * g.cd + ch * chunk;
    const int64_t cn = (ch + 1) * chunk <= g.cd ? chunk : g.cd - ch * chunk;
    const T *xc = x + (n * g.cin + c0) * hwin;
    T *dst = col + ((nl * g.cin + c0) * g.K + k) * tc + q;
    const int64_t step = g.K * tc;
#pragma unroll 4
    for (int64_t c = 0; c < cn; c++) {
        const float v = (in0 ? w0 * to_f(xc[i0]) : 0.f) + (in1 ? w1 * to_f(xc[i1]) : 0.f) +
                        (in2 ? w2 * to_f(xc[i2]) : 0.f) + (in3 ? w3 * to_f(xc[i3]) : 0.f);
        *dst = from_f<T>(v);
        dst += step;
        xc += hwin;
    }
}

template <typename T>
__global__ void bias_kernel(T *__restrict__ y, const T *__restrict__ bias, int64_t cout, int64_t hw, int64_t total)
{
    int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= total) return;
    const int64_t oc = (idx / hw) % cout;
    y[idx] = bias ? bias[oc] : from_f<T>(0.f);
}

int64_t slice_cols(const prt__dcn_shape *s, int is_f16)
{
    const int64_t ckk = s->cin * s->kh * s->kw;
    const int64_t elt = is_f16 ? 2 : 4;
    int64_t b = (int64_t)(PRT_DCN_CUDA_COL_CAP / (size_t)(ckk * elt));
    if (b < 128) b = 128;
    return b;
}

int fail(char *err, size_t cap, const char *what, int code)
{
    if (err && cap) snprintf(err, cap, "ModulatedDeformConv2d CUDA: %s failed (%d)", what, code);
    return -1;
}

} // namespace

extern "C" size_t prt__deform_conv_cuda_workspace(const prt__dcn_params *p, const prt__dcn_shape *s, int is_f16)
{
    const int64_t ckk = s->cin * s->kh * s->kw, elt = is_f16 ? 2 : 4;
    const int64_t hw = s->hout * s->wout;
    if (s->n <= 0 || hw <= 0 || ckk <= 0) return 0;
    int64_t cols = s->n * hw;
    const int64_t b = slice_cols(s, is_f16);
    if (cols > b) cols = b;
    size_t bytes = (size_t)(ckk * elt * cols) + 256;
    const size_t f = is_f16 ? prt__deform_conv_cuda_fused_workspace(p, s)
                     : prt__deform_conv_cuda_fused_fits(p, s) ? prt__deform_conv_wgmma_workspace(p, s, PRT_DCN_F32)
                                                              : 0;
    if (f > bytes) bytes = f;
    return bytes;
}

extern "C" int prt__deform_conv_cuda_blas_create(void **out, char *err, size_t cap)
{
    cublasHandle_t h = NULL;
    cublasStatus_t st = cublasCreate(&h);
    if (st != CUBLAS_STATUS_SUCCESS) return fail(err, cap, "cublasCreate", (int)st);
    cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);
    *out = (void *)h;
    return 0;
}

extern "C" void prt__deform_conv_cuda_blas_destroy(void *blas)
{
    if (blas) cublasDestroy((cublasHandle_t)blas);
}

extern "C" int prt__deform_conv_cuda(const prt__dcn_params *p, const prt__dcn_shape *s, int elt,
                                     const void *x, const void *offset, const void *mask, const void *weight,
                                     const void *bias, void *y, void *workspace, void *stream, void *blas,
                                     char *err, size_t cap)
{
    return prt__deform_conv_cuda_tactic(p, s, elt, 0, x, offset, mask, weight, bias, y, workspace, stream, blas,
                                        err, cap);
}

extern "C" int prt__deform_conv_cuda_tactic(const prt__dcn_params *p, const prt__dcn_shape *s, int elt,
                                            int32_t tactic, const void *x, const void *offset, const void *mask,
                                            const void *weight, const void *bias, void *y, void *workspace,
                                            void *stream, void *blas, char *err, size_t cap)
{
    cudaStream_t st = (cudaStream_t)stream;
    cublasHandle_t h = (cublasHandle_t)blas;
    const int is_f16 = elt != PRT_DCN_F32, is_bf16 = elt == PRT_DCN_BF16; /* 16-bit storage; bfloat16 */
    Geo g;
    const int64_t hw = s->hout * s->wout;
    if (s->n == 0 || s->cout == 0 || hw == 0) return 0;
    if (!is_f16) {
        /* fp32: the 3xTF32 wgmma kernel where the tactic, the environment
         * or the default policy says so */
        const int w = prt__deform_conv_cuda_f32_tile(p, s, tactic);
        if (w >= 0)
            return prt__deform_conv_wgmma(p, s, elt, w, x, offset, mask, weight, bias, y, workspace, stream, err, cap);
    } else if (tactic != 0 && !prt__deform_conv_cuda_env_override()) {
        /* The tactic the plan chose; a fused one whose kernel does not fit
         * these shapes (outside the profile it was listed for) runs im2col. */
        if (((tactic >= PRT_DCN_TACTIC_FUSED && tactic < PRT_DCN_TACTIC_F32) || tactic == PRT_DCN_TACTIC_GROUPED) &&
            prt__deform_conv_cuda_fused_fits(p, s))
            return prt__deform_conv_cuda_fused_tiled(p, s, elt, tactic - PRT_DCN_TACTIC_FUSED, x, offset, mask, weight,
                                                     bias, y, workspace, stream, err, cap);
    } else if (prt__deform_conv_cuda_fused_applies(p, s, is_f16)) {
        return prt__deform_conv_cuda_fused(p, s, elt, x, offset, mask, weight, bias, y, workspace, stream, err, cap);
    }
    g.cin = s->cin; g.h = s->h; g.w = s->w; g.hout = s->hout; g.wout = s->wout; g.hw = hw;
    g.K = s->kh * s->kw; g.kw = s->kw; g.dg = p->deformable_group; g.cd = s->cin / p->deformable_group;
    g.sh = p->stride[0]; g.sw = p->stride[1]; g.ph = p->padding[0]; g.pw = p->padding[1];
    g.dh = p->dilation[0]; g.dw = p->dilation[1];
    const int64_t G = p->group, cg = s->cin / G, coutg = s->cout / G, ckk = cg * g.K;
    const size_t esz = is_f16 ? 2 : 4;
    void *col = (void *)(((uintptr_t)workspace + 255) & ~(uintptr_t)255);
    const int64_t B = slice_cols(s, is_f16);
    int64_t ns, tile;
    if (hw <= B) { tile = hw; ns = B / hw; if (ns > s->n) ns = s->n; }
    else { ns = 1; tile = B >= 256 ? B / 128 * 128 : B; }
    cublasStatus_t bs = cublasSetStream(h, st);
    if (bs != CUBLAS_STATUS_SUCCESS) return fail(err, cap, "cublasSetStream", (int)bs);

    /* Output := bias (or 0); the GEMMs add into it. */
    {
        const int64_t total = s->n * s->cout * hw;
        const int64_t blocks = (total + 255) / 256;
        if (is_bf16)
            bias_kernel<__nv_bfloat16><<<(unsigned)blocks, 256, 0, st>>>((__nv_bfloat16 *)y, (const __nv_bfloat16 *)bias,
                                                                         s->cout, hw, total);
        else if (is_f16) bias_kernel<__half><<<(unsigned)blocks, 256, 0, st>>>((__half *)y, (const __half *)bias, s->cout, hw, total);
        else bias_kernel<float><<<(unsigned)blocks, 256, 0, st>>>((float *)y, (const float *)bias, s->cout, hw, total);
        cudaError_t ce = cudaGetLastError();
        if (ce != cudaSuccess) return fail(err, cap, cudaGetErrorString(ce), (int)ce);
    }
    const float one = 1.0f;
    const cudaDataType_t dt = is_bf16 ? CUDA_R_16BF : is_f16 ? CUDA_R_16F : CUDA_R_32F;
#ifdef PLUGRT_DCN_TF32
    const cublasComputeType_t ct = is_f16 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F_FAST_TF32;
#else
    const cublasComputeType_t ct = CUBLAS_COMPUTE_32F; /* exact fp32: never TF32 */
#endif
    for (int64_t n0 = 0; n0 < s->n; n0 += ns) {
        const int64_t nn = (s->n - n0) < ns ? (s->n - n0) : ns;
        for (int64_t p0 = 0; p0 < hw; p0 += tile) {
            const int64_t tc = (hw - p0) < tile ? (hw - p0) : tile;
            /* Split each deformable group's channels into chunks so that
             * there are enough threads to fill the GPU. */
            const int64_t base = nn * g.dg * g.K * tc;
            int64_t chunk = g.cd;
            while (chunk > 8 && base * ((g.cd + chunk - 1) / chunk) < ((int64_t)1 << 20)) chunk = (chunk + 1) / 2;
            const int64_t nchunks = (g.cd + chunk - 1) / chunk;
            const int64_t total = base * nchunks;
            const int64_t blocks = (total + 255) / 256;
            if (is_bf16)
                im2col_kernel<__nv_bfloat16><<<(unsigned)blocks, 256, 0, st>>>((const __nv_bfloat16 *)x,
                    (const __nv_bfloat16 *)offset, (const __nv_bfloat16 *)mask, (__nv_bfloat16 *)col, g, n0, p0, tc,
                    chunk, nchunks, total);
            else if (is_f16)
                im2col_kernel<__half><<<(unsigned)blocks, 256, 0, st>>>((const __half *)x, (const __half *)offset,
                    (const __half *)mask, (__half *)col, g, n0, p0, tc, chunk, nchunks, total);
            else
                im2col_kernel<float><<<(unsigned)blocks, 256, 0, st>>>((const float *)x, (const float *)offset,
                    (const float *)mask, (float *)col, g, n0, p0, tc, chunk, nchunks, total);
            cudaError_t ce = cudaGetLastError();
            if (ce != cudaSuccess) return fail(err, cap, cudaGetErrorString(ce), (int)ce);
            /* Row-major y_g[coutg x tc] = W_g[coutg x ckk] * col_g[ckk x tc], i.e. column-major
             * y^T[tc x coutg] = col^T[tc x ckk] * W^T[ckk x coutg]. */
            if (G == 1 && nn > 1) {
                bs = cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)tc, (int)coutg, (int)ckk, &one,
                    col, dt, (int)tc, (long long)(s->cin * g.K * tc), weight, dt, (int)ckk, 0LL, &one,
                    (char *)y + (size_t)(n0 * s->cout * hw + p0) * esz, dt, (int)hw, (long long)(s->cout * hw),
                    (int)nn, ct, CUBLAS_GEMM_DEFAULT);
                if (bs != CUBLAS_STATUS_SUCCESS) return fail(err, cap, "cublasGemmStridedBatchedEx", (int)bs);
            } else {
                for (int64_t l = 0; l < nn; l++) {
                    const char *cb = (const char *)col + (size_t)(l * s->cin * g.K * tc) * esz;
                    char *yb = (char *)y + (size_t)((n0 + l) * s->cout * hw + p0) * esz;
                    bs = cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, (int)tc, (int)coutg, (int)ckk, &one,
                        cb, dt, (int)tc, (long long)(ckk * tc), weight, dt, (int)ckk, (long long)(coutg * ckk), &one,
                        yb, dt, (int)hw, (long long)(coutg * hw), (int)G, ct, CUBLAS_GEMM_DEFAULT);
                    if (bs != CUBLAS_STATUS_SUCCESS) return fail(err, cap, "cublasGemmStridedBatchedEx", (int)bs);
                }
            }
        }
    }
    return 0;
}
