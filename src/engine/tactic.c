/* engine/tactic.c - timing a layer's tactics (see tactic.h). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "core/checked.h"
#include "core/core.h"
#include "engine/plugctx.h"
#include "engine/tactic.h"

struct prt__tactic_bench {
    prt_device device;
    const prt__backend *be;
    void *stream;
    int own_stream;
    void *pool;
    prt__plugctx *res;
    void *ev[2];
    char name[512];
    prt_exec ex;
    char err[512];
    int err_set;
};

static prt__tactic_clock_fn test_clock;
static void *test_clock_user;

void prt__tactic_set_clock(prt__tactic_clock_fn fn, void *user)
{
    test_clock = fn;
    test_clock_user = user;
}

/* ---- exec callbacks: runs whose outputs nobody reads ---------------------- */

static prt__tactic_bench *bench_of(prt_exec *ex) { return (prt__tactic_bench *)ex->host_; }

static void tx_parallel_for(prt_exec *ex, int64_t n, int64_t grain, prt_range_fn fn, void *arg)
{
    prt__tactic_bench *b = bench_of(ex);
    b->be->parallel_for(b->pool, n, grain, fn, arg);
}

static void tx_set_error(prt_exec *ex, const char *msg)
{
    prt__tactic_bench *b = bench_of(ex);
    if (b->err_set) return;
    snprintf(b->err, sizeof b->err, "%s", msg ? msg : "");
    b->err_set = 1;
}

/* Extents a timing run reports are not needed: accepted, not checked. */
static prt_status tx_set_output_dims(prt_exec *ex, int32_t index, const prt_dims *dims)
{
    (void)ex; (void)index; (void)dims;
    return PRT_OK;
}

static prt_status tx_set_output_extent_device(prt_exec *ex, int32_t index, int32_t dim, const int64_t *device_extent)
{
    (void)ex; (void)index; (void)dim; (void)device_extent;
    return PRT_OK;
}

/* ---- the bench -------------------------------------------------------------- */

void prt__tactic_bench_destroy(prt__tactic_bench *b)
{
    if (!b) return;
    prt__plugctx_destroy(b->res);
    b->be->event_destroy(b->ev[0]);
    b->be->event_destroy(b->ev[1]);
    if (b->own_stream) b->be->stream_destroy(b->stream);
    b->be->workers_destroy(b->pool);
    prt__free(b);
}

prt_status prt__tactic_bench_create(prt_device device, int32_t nb_threads, prt__tactic_bench **out, char *err,
                                    size_t cap)
{
    prt__tactic_bench *b;
    char msg[PRT_ERR_CAP], d[400];
    prt_status s;
    const prt__backend *be = prt__backend_of(device);
    if (!be || !out) {
        snprintf(err, cap, "device %d is neither cpu nor cuda", (int)device);
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    msg[0] = 0;
    if ((s = be->select(0, msg, sizeof msg)) != PRT_OK) {
        snprintf(err, cap, "%s", msg);
        return s == PRT_STATUS_OUT_OF_MEMORY ? s : PRT_STATUS_NO_DEVICE;
    }
    b = prt__calloc(1, sizeof *b);
    if (!b) {
        snprintf(err, cap, "out of memory");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    b->device = device;
    b->be = be;
    if ((s = be->stream_create(&b->stream, msg, sizeof msg)) != PRT_OK) goto fail_msg;
    b->own_stream = b->stream != NULL;
    if ((s = be->workers_create(nb_threads, &b->pool, msg, sizeof msg)) != PRT_OK) goto fail_msg;
    if ((s = be->event_create(&b->ev[0], msg, sizeof msg)) != PRT_OK) goto fail_msg;
    if ((s = be->event_create(&b->ev[1], msg, sizeof msg)) != PRT_OK) goto fail_msg;
    if ((s = prt__plugctx_create(device, 0, &b->res)) != PRT_OK) {
        snprintf(msg, sizeof msg, "out of memory");
        goto fail_msg;
    }
    be->describe(0, d, sizeof d);
    if (device == PRT_DEVICE_CPU)
        snprintf(b->name, sizeof b->name, "%s (%d thread%s)", d, (int)be->workers_size(b->pool),
                 be->workers_size(b->pool) == 1 ? "" : "s");
    else
        snprintf(b->name, sizeof b->name, "%s", d);
    b->ex.struct_size = (uint32_t)sizeof b->ex;
    b->ex.abi_version = PRT_ABI_VERSION;
    b->ex.device = device;
    b->ex.cuda_device = 0;
    b->ex.cuda_stream = device == PRT_DEVICE_CUDA ? b->stream : NULL;
    b->ex.nb_threads = be->workers_size(b->pool);
    b->ex.parallel_for = tx_parallel_for;
    b->ex.set_error = tx_set_error;
    b->ex.set_output_dims = tx_set_output_dims;
    b->ex.host_ = b;
    b->ex.set_output_extent_device = device == PRT_DEVICE_CUDA ? tx_set_output_extent_device : NULL;
    *out = b;
    return PRT_OK;
fail_msg:
    snprintf(err, cap, "%s", msg);
    prt__tactic_bench_destroy(b);
    return s;
}

const char *prt__tactic_bench_device(const prt__tactic_bench *b) { return b ? b->name : ""; }

/* ---- one layer ------------------------------------------------------------------ */

/* Synthetic input values: floats in [-1, 1) from a fixed sequence (so that
 * every build times the same data), everything else 0. */
static void synthetic(void *dst, prt_dtype t, int64_t n)
{
    uint32_t x = 0x9e3779b9u;
    int64_t i;
    if (t != PRT_DTYPE_F32 && t != PRT_DTYPE_F16 && t != PRT_DTYPE_BF16) {
        memset(dst, 0, (size_t)n * prt_dtype_size(t));
        return;
    }
    for (i = 0; i < n; i++) {
        float v;
        x = x * 1664525u + 1013904223u;
        v = (float)(x >> 8) * (1.0f / 8388608.0f) - 1.0f;
        if (t == PRT_DTYPE_F32) ((float *)dst)[i] = v;
        else if (t == PRT_DTYPE_F16) ((uint16_t *)dst)[i] = prt_f32_to_f16(v);
        else ((uint16_t *)dst)[i] = prt_f32_to_bf16(v);
    }
}

static int u64_less(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void set_why(char *why, size_t cap, int *have, const char *fmt, ...) PRT_PRINTF(4, 5);
static void set_why(char *why, size_t cap, int *have, const char *fmt, ...)
{
    va_list ap;
    if (*have || !why || !cap) return;
    va_start(ap, fmt);
    vsnprintf(why, cap, fmt, ap);
    va_end(ap);
    *have = 1;
}

/* One enqueue of inst; the plugin's message (or the status) into msg. */
static prt_status run_once(prt__tactic_bench *b, prt__plugin *inst, const prt__tactic_layer *l, const void **ins,
                           void **outs, void *ws, char *msg, size_t cap)
{
    prt_status s;
    b->err_set = 0;
    b->err[0] = 0;
    s = prt__plugin_enqueue(inst, l->in, l->out, ins, outs, ws, &b->ex);
    if (s != PRT_OK)
        snprintf(msg, cap, "enqueue failed: %s", b->err_set && b->err[0] ? b->err : prt_status_str(s));
    return s;
}

/* Time one tactic: its median in *ns. */
static prt_status time_one(prt__tactic_bench *b, const prt__tactic_layer *l, int32_t tactic, int32_t warmup,
                           int32_t runs, const void **ins, void **outs, void *ws, uint64_t *times, uint64_t *ns,
                           char *msg, size_t cap)
{
    prt__plugin *inst = NULL;
    prt_status s;
    int32_t r;
    const prt__backend *be = b->be;
    if ((s = prt__plugin_attach_tactic(l->pl, prt__plugctx_get(b->res), tactic, &inst, msg, cap)) != PRT_OK)
        return s;
    if ((s = prt__plugin_shapes(inst, l->in, l->nb_in, l->out, l->nb_out, msg, cap)) != PRT_OK) goto done;
    for (r = 0; r < warmup; r++)
        if ((s = run_once(b, inst, l, ins, outs, ws, msg, cap)) != PRT_OK) goto done;
    if ((s = be->stream_sync(b->stream, msg, cap)) != PRT_OK) goto done;
    for (r = 0; r < runs; r++) {
        if (test_clock) {
            uint64_t t0 = test_clock(test_clock_user), t1;
            if ((s = run_once(b, inst, l, ins, outs, ws, msg, cap)) != PRT_OK) goto done;
            if ((s = be->stream_sync(b->stream, msg, cap)) != PRT_OK) goto done;
            t1 = test_clock(test_clock_user);
            times[r] = t1 > t0 ? t1 - t0 : 0;
        } else {
            float ms = 0;
            if ((s = be->event_record(b->ev[0], b->stream, msg, cap)) != PRT_OK) goto done;
            if ((s = run_once(b, inst, l, ins, outs, ws, msg, cap)) != PRT_OK) goto done;
            if ((s = be->event_record(b->ev[1], b->stream, msg, cap)) != PRT_OK) goto done;
            if ((s = be->event_elapsed(b->ev[0], b->ev[1], &ms, msg, cap)) != PRT_OK) goto done;
            times[r] = ms > 0 ? (uint64_t)((double)ms * 1e6 + 0.5) : 0;
        }
    }
    qsort(times, (size_t)runs, sizeof *times, u64_less);
    *ns = times[(runs - 1) / 2];
    if (*ns == 0) *ns = 1; /* 0 means "not timed" in plans */
    if (*ns == PRT__TACTIC_NS_FAILED) *ns = PRT__TACTIC_NS_FAILED - 1;
done:
    prt__plugin_destroy(inst);
    if (s != PRT_OK) (void)be->stream_sync(b->stream, NULL, 0); /* nothing of it left queued */
    return s;
}

prt_status prt__tactic_time(prt__tactic_bench *b, const prt__tactic_layer *l, const int32_t *ids, int32_t nb,
                            int32_t warmup, int32_t runs, uint64_t *ns, char *why, size_t cap)
{
    const prt__backend *be;
    void **blocks = NULL, *ws = NULL, *ws_block = NULL, *host = NULL;
    const void **ins = NULL;
    void **outs = NULL;
    uint64_t *times = NULL;
    int32_t i, n;
    int have = 0;
    prt_status s = PRT_OK;
    char msg[PRT_ERR_CAP];

    for (i = 0; i < nb; i++) ns[i] = PRT__TACTIC_NS_FAILED;
    if (why && cap) why[0] = 0;
    if (!b || !l || !l->pl || nb < 0 || runs < 1 || warmup < 0) {
        set_why(why, cap, &have, "invalid arguments for timing");
        return PRT_STATUS_INVALID_ARGUMENT;
    }
    be = b->be;
    n = l->nb_in + l->nb_out;
    blocks = prt__calloc((size_t)n + 1, sizeof *blocks);
    ins = prt__calloc((size_t)l->nb_in + 1, sizeof *ins);
    outs = prt__calloc((size_t)l->nb_out + 1, sizeof *outs);
    times = prt__calloc((size_t)runs, sizeof *times);
    if (!blocks || !ins || !outs || !times) {
        set_why(why, cap, &have, "out of memory");
        s = PRT_STATUS_OUT_OF_MEMORY;
        goto done;
    }
    /* The layer's tensors on the device at the opt shapes. */
    for (i = 0; i < n; i++) {
        const prt_tensor_desc *d = i < l->nb_in ? &l->in[i] : &l->out[i - l->nb_in];
        uint64_t bytes = 0;
        void *p;
        if (i < l->nb_in && d->dims.nb < 0) continue; /* absent: NULL */
        if (prt__tensor_bytes(&d->dims, prt_dtype_size(d->dtype), &bytes) != 0 || bytes > (uint64_t)SIZE_MAX / 2) {
            set_why(why, cap, &have, "%s %d is too large to time", i < l->nb_in ? "input" : "output",
                    (int)(i < l->nb_in ? i : i - l->nb_in));
            s = PRT_STATUS_OUT_OF_MEMORY;
            goto done;
        }
        p = be->alloc((size_t)bytes, &blocks[i]);
        if (!p) {
            set_why(why, cap, &have, "cannot allocate %" PRIu64 " bytes on the %s", bytes, be->name);
            s = PRT_STATUS_OUT_OF_MEMORY;
            goto done;
        }
        if (i < l->nb_in) {
            const void *src = l->in_data ? l->in_data[i] : NULL;
            if (!src && bytes) {
                host = prt__malloc((size_t)bytes);
                if (!host) {
                    set_why(why, cap, &have, "out of memory");
                    s = PRT_STATUS_OUT_OF_MEMORY;
                    goto done;
                }
                synthetic(host, d->dtype, (int64_t)(bytes / prt_dtype_size(d->dtype)));
                src = host;
            }
            msg[0] = 0;
            if (bytes && (s = be->upload(p, src, (size_t)bytes, msg, sizeof msg)) != PRT_OK) {
                set_why(why, cap, &have, "%s", msg);
                goto done;
            }
            prt__free(host);
            host = NULL;
            ins[i] = p;
        } else {
            outs[i - l->nb_in] = p;
        }
    }
    ws = be->alloc(l->workspace ? l->workspace : 1, &ws_block);
    if (!ws) {
        set_why(why, cap, &have, "cannot allocate %zu workspace bytes on the %s", l->workspace, be->name);
        s = PRT_STATUS_OUT_OF_MEMORY;
        goto done;
    }
    for (i = 0; i < nb; i++) {
        uint64_t t = 0;
        prt_status ts;
        msg[0] = 0;
        ts = time_one(b, l, ids[i], warmup, runs, ins, outs, ws, times, &t, msg, sizeof msg);
        if (ts == PRT_OK) {
            ns[i] = t;
        } else {
            const char *name = prt__plugin_tactic_name(l->pl, ids[i]);
            if (ts == PRT_STATUS_OUT_OF_MEMORY) have = 0; /* this reason, not an earlier one */
            set_why(why, cap, &have, "tactic %d%s%s%s: %s", (int)ids[i], name ? " (" : "", name ? name : "",
                    name ? ")" : "", msg[0] ? msg : "failed");
            if (ts == PRT_STATUS_OUT_OF_MEMORY) { /* not the tactic's fault: the build fails */
                for (i = 0; i < nb; i++) ns[i] = PRT__TACTIC_NS_FAILED;
                s = ts;
                goto done;
            }
        }
    }
done:
    prt__free(host);
    if (blocks)
        for (i = 0; i < n; i++) be->free(blocks[i]);
    be->free(ws_block);
    prt__free(blocks);
    prt__free(ins);
    prt__free(outs);
    prt__free(times);
    return s;
}
