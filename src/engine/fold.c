/* engine/fold.c - running a layer once at build time (see fold.h). */
#include <stdio.h>
#include <string.h>

#include "core/core.h"
#include "engine/fold.h"
#include "engine/plugctx.h"

typedef struct fold_exec {
    prt_exec ex;
    char err[512];
    int err_set;
} fold_exec;

static void fx_parallel_for(prt_exec *ex, int64_t n, int64_t grain, prt_range_fn fn, void *arg)
{
    (void)ex; (void)grain;
    if (n > 0) fn(arg, 0, n);
}

static void fx_set_error(prt_exec *ex, const char *msg)
{
    fold_exec *f = (fold_exec *)ex->host_;
    if (f->err_set) return;
    snprintf(f->err, sizeof f->err, "%s", msg ? msg : "");
    f->err_set = 1;
}

static prt_status fx_set_output_dims(prt_exec *ex, int32_t index, const prt_dims *dims)
{
    (void)index; (void)dims;
    fx_set_error(ex, "set_output_dims: a folded layer has no data-dependent outputs");
    return PRT_STATUS_INVALID_ARGUMENT;
}

prt_status prt__fold_run(prt__plugin *pl, const prt_tensor_desc *in, const void *const *in_data, int32_t nb_in,
                         const prt_tensor_desc *out, void **out_data, int32_t nb_out, size_t workspace, char *err,
                         size_t cap)
{
    prt__plugctx *res = NULL;
    prt__plugin *inst = NULL;
    void *ws = NULL;
    fold_exec fx;
    prt_status s;
    int32_t i;

    for (i = 0; i < nb_out; i++) out_data[i] = NULL;
    if ((s = prt__plugctx_create(PRT_DEVICE_CPU, 0, &res)) != PRT_OK) {
        snprintf(err, cap, "out of memory");
        return s;
    }
    ws = workspace == SIZE_MAX ? NULL : prt__malloc(workspace ? workspace : 1);
    s = ws ? PRT_OK : PRT_STATUS_OUT_OF_MEMORY;
    for (i = 0; i < nb_out && s == PRT_OK; i++) {
        int64_t n = prt_dims_volume(&out[i].dims);
        size_t es = prt_dtype_size(out[i].dtype);
        if (n < 0 || es == 0 || (uint64_t)n > SIZE_MAX / es) s = PRT_STATUS_INVALID_ARGUMENT;
        else if (!(out_data[i] = prt__malloc(n ? (size_t)n * es : 1))) s = PRT_STATUS_OUT_OF_MEMORY;
        else memset(out_data[i], 0, (size_t)n * es);
    }
    if (s != PRT_OK) {
        snprintf(err, cap, "out of memory for the outputs");
        goto done;
    }
    if ((s = prt__plugin_attach(pl, prt__plugctx_get(res), &inst, err, cap)) != PRT_OK) goto done;
    if ((s = prt__plugin_shapes(inst, in, nb_in, out, nb_out, err, cap)) != PRT_OK) goto done;
    memset(&fx, 0, sizeof fx);
    fx.ex.struct_size = (uint32_t)sizeof fx.ex;
    fx.ex.abi_version = PRT_ABI_VERSION;
    fx.ex.device = PRT_DEVICE_CPU;
    fx.ex.nb_threads = 1;
    fx.ex.parallel_for = fx_parallel_for;
    fx.ex.set_error = fx_set_error;
    fx.ex.set_output_dims = fx_set_output_dims;
    fx.ex.host_ = &fx;
    s = prt__plugin_enqueue(inst, in, out, in_data, out_data, ws, &fx.ex);
    if (s != PRT_OK)
        snprintf(err, cap, "enqueue on the CPU failed: %s", fx.err_set ? fx.err : prt_status_str(s));
done:
    prt__plugin_destroy(inst);
    prt__plugctx_destroy(res);
    prt__free(ws);
    if (s != PRT_OK)
        for (i = 0; i < nb_out; i++) {
            prt__free(out_data[i]);
            out_data[i] = NULL;
        }
    return s;
}
