/* nms_harness.c - see nms_harness.h */
#include "nms_harness.h"

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prt_test.h"

#ifdef PLUGRT_HAVE_CUDA
#include <cuda_runtime.h>
#endif

/* ---- exec ---- */

static void th_serial_for(prt_exec *ex, int64_t n, int64_t grain, prt_range_fn fn, void *arg)
{
    (void)ex;
    (void)grain;
    if (n > 0) fn(arg, 0, n);
}

typedef struct th_chunk {
    prt_range_fn fn;
    void *arg;
    int64_t b, e;
} th_chunk;

static void *th_chunk_main(void *p)
{
    th_chunk *c = (th_chunk *)p;
    c->fn(c->arg, c->b, c->e);
    return NULL;
}

/* Splits [0, n) over up to nb_threads threads (chunks of >= grain). */
static void th_threaded_for(prt_exec *ex, int64_t n, int64_t grain, prt_range_fn fn, void *arg)
{
    pthread_t tid[16];
    th_chunk ch[16];
    int64_t nt = ex->nb_threads, i, per;
    if (n <= 0) return;
    if (grain < 1) grain = 1;
    if (nt > 16) nt = 16;
    if (nt > (n + grain - 1) / grain) nt = (n + grain - 1) / grain;
    if (nt < 1) nt = 1;
    per = (n + nt - 1) / nt;
    for (i = 0; i < nt; i++) {
        ch[i].fn = fn;
        ch[i].arg = arg;
        ch[i].b = i * per;
        ch[i].e = (i + 1) * per < n ? (i + 1) * per : n;
        if (ch[i].b >= ch[i].e) { ch[i].b = ch[i].e = 0; }
        if (pthread_create(&tid[i], NULL, th_chunk_main, &ch[i]) != 0) {
            th_chunk_main(&ch[i]);
            tid[i] = 0;
        }
    }
    for (i = 0; i < nt; i++)
        if (tid[i]) pthread_join(tid[i], NULL);
}

static void th_set_error(prt_exec *ex, const char *msg)
{
    th_exec *t = (th_exec *)ex;
    snprintf(t->error, sizeof t->error, "%s", msg);
}

static prt_status th_set_dims(prt_exec *ex, int32_t i, const prt_dims *d)
{
    th_exec *t = (th_exec *)ex;
    if (i < 0 || i > 3) return PRT_STATUS_INVALID_ARGUMENT;
    t->out_dims[i] = *d;
    t->have_dims[i] = 1;
    return PRT_OK;
}

static prt_status th_set_extent_device(prt_exec *ex, int32_t i, int32_t dim, const int64_t *dev)
{
    th_exec *t = (th_exec *)ex;
    t->nb_dev_calls++;
    if (i < 0 || i > 3 || dim < 0 || dim >= PRT_MAX_DIMS || !dev) return PRT_STATUS_INVALID_ARGUMENT;
    t->dev_extent[i] = dev;
    t->dev_dim[i] = dim;
    t->have_dev[i] = 1;
    return PRT_OK;
}

static int th_extent_mode = TH_EXTENT_DEVICE;
void th_set_extent_mode(int mode) { th_extent_mode = mode; }

void th_exec_init(th_exec *t, prt_device dev, int threads, void *stream)
{
    memset(t, 0, sizeof *t);
    t->ex.struct_size = sizeof(prt_exec);
    t->ex.abi_version = PRT_ABI_VERSION;
    t->ex.device = dev;
    t->ex.cuda_stream = stream;
    t->ex.nb_threads = threads < 1 ? 1 : threads;
    t->ex.parallel_for = threads > 1 ? th_threaded_for : th_serial_for;
    t->ex.set_error = th_set_error;
    t->ex.set_output_dims = th_set_dims;
    if (dev == PRT_DEVICE_CUDA) {
        t->ex.set_output_extent_device = th_set_extent_device;
        if (th_extent_mode == TH_EXTENT_NULL) t->ex.set_output_extent_device = NULL;
        /* An older host: the member lies past struct_size and must not be
         * used (it is set anyway, so that a plugin using it is caught). */
        if (th_extent_mode == TH_EXTENT_OLD_HOST)
            t->ex.struct_size = (uint32_t)offsetof(prt_exec, set_output_extent_device);
    }
}

/* ---- expressions ---- */

struct prt_expr {
    int64_t v;
    int dd;
};

struct th_builder {
    prt_expr_builder eb;
    struct prt_expr pool[256];
    int n;
};

static const prt_expr *th_new(th_builder *b, int64_t v, int dd)
{
    if (b->n >= 256) return NULL;
    b->pool[b->n].v = v;
    b->pool[b->n].dd = dd;
    return &b->pool[b->n++];
}

static const prt_expr *th_constant(prt_expr_builder *eb, int64_t v) { return th_new((th_builder *)eb, v, 0); }

static const prt_expr *th_operation(prt_expr_builder *eb, prt_expr_op op, const prt_expr *a,
                                    const prt_expr *b)
{
    int64_t v = 0;
    if (!a || !b) return NULL;
    switch (op) {
    case PRT_EXPR_SUM: v = a->v + b->v; break;
    case PRT_EXPR_PROD: v = a->v * b->v; break;
    case PRT_EXPR_MAX: v = a->v > b->v ? a->v : b->v; break;
    case PRT_EXPR_MIN: v = a->v < b->v ? a->v : b->v; break;
    case PRT_EXPR_SUB: v = a->v - b->v; break;
    case PRT_EXPR_EQUAL: v = a->v == b->v; break;
    case PRT_EXPR_LESS: v = a->v < b->v; break;
    case PRT_EXPR_FLOOR_DIV: if (!b->v) return NULL; v = a->v / b->v; break;
    case PRT_EXPR_CEIL_DIV: if (!b->v) return NULL; v = (a->v + b->v - 1) / b->v; break;
    }
    return th_new((th_builder *)eb, v, a->dd || b->dd);
}

static int th_get_constant(prt_expr_builder *eb, const prt_expr *e, int64_t *v)
{
    (void)eb;
    if (!e || e->dd) return 0;
    *v = e->v;
    return 1;
}

static const prt_expr *th_data_dependent(prt_expr_builder *eb, const prt_expr *upper)
{
    if (!upper) return NULL;
    return th_new((th_builder *)eb, upper->v, 1);
}

th_builder *th_builder_new(void)
{
    th_builder *b = (th_builder *)calloc(1, sizeof *b);
    if (!b) return NULL;
    b->eb.struct_size = sizeof(prt_expr_builder);
    b->eb.abi_version = PRT_ABI_VERSION;
    b->eb.constant = th_constant;
    b->eb.operation = th_operation;
    b->eb.get_constant = th_get_constant;
    b->eb.data_dependent = th_data_dependent;
    return b;
}

void th_builder_free(th_builder *b) { free(b); }
prt_expr_builder *th_builder_eb(th_builder *b) { return &b->eb; }

int64_t th_expr_value(const prt_expr *e, int *data_dep)
{
    if (data_dep) *data_dep = e ? e->dd : 0;
    return e ? e->v : -1;
}

/* ---- tensors and files ---- */

int64_t th_numel(const th_tensor *t) { return prt_dims_volume(&t->dims); }
size_t th_bytes(const th_tensor *t) { return (size_t)th_numel(t) * prt_dtype_size(t->dtype); }

void th_tensor_alloc(th_tensor *t, const char *name, prt_dtype dt, int nb, const int64_t *d)
{
    int i;
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    t->dtype = dt;
    t->dims.nb = nb;
    for (i = 0; i < nb; i++) t->dims.d[i] = d[i];
    t->data = calloc(th_bytes(t) + 8, 1);
}

void th_tensor_free(th_tensor *t)
{
    free(t->data);
    t->data = NULL;
}

void th_tensors_free(th_tensor *t, int n)
{
    int i;
    for (i = 0; i < n; i++) th_tensor_free(&t[i]);
}

const char *th_data_dir(void)
{
    const char *e = getenv("PRT_NMS_DATA_DIR");
    return e && *e ? e : prt_test_data_dir();
}

int th_file_read(th_file *f, const char *path)
{
    FILE *fp = fopen(path, "r");
    char word[64];
    memset(f, 0, sizeof *f);
    if (!fp) return -1;
    while (fscanf(fp, "%63s", word) == 1) {
        if (strcmp(word, "case") == 0) {
            if (f->nb_case >= 4 || fscanf(fp, "%63s", f->case_name[f->nb_case]) != 1) break;
            f->case_start[f->nb_case] = f->nb_attr;
            f->case_tensor_start[f->nb_case] = f->nb_tensor;
            f->nb_case++;
        } else if (strcmp(word, "attr") == 0) {
            if (f->nb_attr >= 16 || fscanf(fp, "%63s %lf", f->attr_name[f->nb_attr], &f->attr_val[f->nb_attr]) != 2)
                break;
            f->nb_attr++;
        } else if (strcmp(word, "tensor") == 0) {
            th_tensor *t;
            char name[64], dt[8];
            int nb, i;
            int64_t d[8], n;
            if (f->nb_tensor >= 16 || fscanf(fp, "%63s %7s %d", name, dt, &nb) != 3 || nb < 0 || nb > 8) break;
            for (i = 0; i < nb; i++)
                if (fscanf(fp, "%lld", (long long *)&d[i]) != 1) goto bad;
            t = &f->tensor[f->nb_tensor++];
            th_tensor_alloc(t, name, strcmp(dt, "f32") == 0 ? PRT_DTYPE_F32 : PRT_DTYPE_I64, nb, d);
            n = th_numel(t);
            for (i = 0; i < n; i++) {
                if (t->dtype == PRT_DTYPE_F32) {
                    double v;
                    if (fscanf(fp, "%lf", &v) != 1) goto bad;
                    ((float *)t->data)[i] = (float)v;
                } else {
                    long long v;
                    if (fscanf(fp, "%lld", &v) != 1) goto bad;
                    ((int64_t *)t->data)[i] = v;
                }
            }
        } else {
            goto bad;
        }
    }
    fclose(fp);
    return 0;
bad:
    fclose(fp);
    return -2;
}

void th_file_free(th_file *f)
{
    int i;
    for (i = 0; i < f->nb_tensor; i++) th_tensor_free(&f->tensor[i]);
}

/* ---- running ---- */

void th_run_free(th_run *r)
{
    int i;
    for (i = 0; i < r->nb_out; i++) th_tensor_free(&r->out[i]);
    r->nb_out = 0;
}

static void th_dyn(const th_tensor *t, prt_dyn_tensor_desc *d)
{
    memset(d, 0, sizeof *d);
    d->desc.dtype = t->dtype;
    d->desc.format = PRT_FORMAT_LINEAR;
    d->desc.dims = t->dims;
    d->min = d->opt = d->max = t->dims;
}

static void th_poison(th_tensor *t)
{
    memset(t->data, 0xA5, th_bytes(t)); /* neither a plausible float nor index */
}

/* Runs enqueue through `enq` with host or device buffers. */
typedef prt_status (*th_enqueue_fn)(void *plugin, const prt_tensor_desc *in, const prt_tensor_desc *out,
                                    const void *const *inputs, void *const *outputs, void *ws, prt_exec *ex);

static int th_graph_capture;
void th_set_graph_capture(int on) { th_graph_capture = on; }

#ifdef PLUGRT_HAVE_CUDA
/* The enqueue captured into a CUDA graph on `s`, then the graph launched and
 * waited for. */
static prt_status th_enqueue_captured(void *plugin, th_enqueue_fn enq, const prt_tensor_desc *ind,
                                      const prt_tensor_desc *outd, const void *const *inp, void *const *outp,
                                      void *dws, th_exec *t, cudaStream_t s)
{
    cudaGraph_t g = NULL;
    cudaGraphExec_t ge = NULL;
    prt_status st;
    if (cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) != cudaSuccess) return PRT_STATUS_CUDA_ERROR;
    st = enq(plugin, ind, outd, inp, outp, dws, &t->ex);
    if (cudaStreamEndCapture(s, &g) != cudaSuccess) {
        snprintf(t->error, sizeof t->error, "the enqueue could not be captured into a CUDA graph (%s)",
                 st == PRT_OK ? "capture invalidated" : t->error);
        st = PRT_STATUS_CUDA_ERROR;
    } else if (st == PRT_OK &&
               (cudaGraphInstantiate(&ge, g, 0) != cudaSuccess || cudaGraphLaunch(ge, s) != cudaSuccess ||
                cudaStreamSynchronize(s) != cudaSuccess)) {
        snprintf(t->error, sizeof t->error, "the captured graph failed to run");
        st = PRT_STATUS_CUDA_ERROR;
    }
    (void)cudaGetLastError();
    if (ge) cudaGraphExecDestroy(ge);
    if (g) cudaGraphDestroy(g);
    return st;
}
#endif

static prt_status th_execute(void *plugin, th_enqueue_fn enq, const th_tensor *in, int nb_in, th_run *r,
                             size_t ws_size, prt_device dev, int threads)
{
    prt_tensor_desc ind[8], outd[4];
    const void *inp[8];
    void *outp[4];
    void *ws = NULL;
    th_exec t;
    prt_status st;
    int i;
    for (i = 0; i < nb_in; i++) {
        ind[i].dtype = in[i].dtype;
        ind[i].format = PRT_FORMAT_LINEAR;
        ind[i].dims = in[i].dims;
    }
    for (i = 0; i < r->nb_out; i++) {
        outd[i].dtype = r->out[i].dtype;
        outd[i].format = PRT_FORMAT_LINEAR;
        outd[i].dims = r->out[i].dims;
        th_poison(&r->out[i]);
    }
    if (dev == PRT_DEVICE_CPU) {
        th_exec_init(&t, dev, threads, NULL);
        ws = malloc(ws_size + 1);
        for (i = 0; i < nb_in; i++) inp[i] = in[i].data;
        for (i = 0; i < r->nb_out; i++) outp[i] = r->out[i].data;
        st = enq(plugin, ind, outd, inp, outp, ws, &t.ex);
        free(ws);
    } else {
#ifdef PLUGRT_HAVE_CUDA
        cudaStream_t s;
        void *dws = NULL;
        if (cudaStreamCreate(&s) != cudaSuccess) return PRT_STATUS_CUDA_ERROR;
        th_exec_init(&t, dev, 1, s);
        for (i = 0; i < nb_in; i++) {
            void *p = NULL;
            cudaMalloc(&p, th_bytes(&in[i]) + 16);
            cudaMemcpy(p, in[i].data, th_bytes(&in[i]), cudaMemcpyHostToDevice);
            inp[i] = p;
        }
        for (i = 0; i < r->nb_out; i++) {
            cudaMalloc(&outp[i], th_bytes(&r->out[i]) + 16);
            cudaMemcpy(outp[i], r->out[i].data, th_bytes(&r->out[i]), cudaMemcpyHostToDevice);
        }
        cudaMalloc(&dws, ws_size + 16);
        if (th_graph_capture) st = th_enqueue_captured(plugin, enq, ind, outd, inp, outp, dws, &t, s);
        else st = enq(plugin, ind, outd, inp, outp, dws, &t.ex);
        if (cudaStreamSynchronize(s) != cudaSuccess && st == PRT_OK) st = PRT_STATUS_CUDA_ERROR;
        /* A host offering set_output_extent_device reads the value only
         * after the stream has run; it must lie in the workspace. */
        for (i = 0; i < r->nb_out && st == PRT_OK; i++) {
            const char *lo = (const char *)dws, *at = (const char *)t.dev_extent[i];
            int64_t v = -1;
            if (!t.have_dev[i]) continue;
            if (t.have_dims[i]) {
                snprintf(t.error, sizeof t.error, "both set_output_dims and set_output_extent_device were used");
                st = PRT_STATUS_INTERNAL;
                break;
            }
            if (th_extent_mode != TH_EXTENT_DEVICE) {
                snprintf(t.error, sizeof t.error, "set_output_extent_device used though not offered");
                st = PRT_STATUS_INTERNAL;
                break;
            }
            if (at < lo || at + sizeof(int64_t) > lo + ws_size) {
                snprintf(t.error, sizeof t.error, "device extent of output %d lies outside the workspace", i);
                st = PRT_STATUS_INTERNAL;
                break;
            }
            if (cudaMemcpy(&v, at, sizeof v, cudaMemcpyDeviceToHost) != cudaSuccess) {
                st = PRT_STATUS_CUDA_ERROR;
                break;
            }
            t.out_dims[i] = r->out[i].dims;
            t.out_dims[i].d[t.dev_dim[i]] = v;
            t.have_dims[i] = 2;
        }
        for (i = 0; i < r->nb_out; i++) {
            cudaMemcpy(r->out[i].data, outp[i], th_bytes(&r->out[i]), cudaMemcpyDeviceToHost);
            cudaFree(outp[i]);
        }
        for (i = 0; i < nb_in; i++) cudaFree((void *)inp[i]);
        cudaFree(dws);
        cudaStreamDestroy(s);
#else
        (void)ws;
        return PRT_STATUS_UNSUPPORTED;
#endif
    }
    snprintf(r->error, sizeof r->error, "%s", t.error);
    if (st == PRT_OK && t.have_dims[0]) {
        r->out[0].dims = t.out_dims[0];
        r->extent_path = t.have_dims[0];
    }
    return st;
}

static prt_status th_blob_enq(void *p, const prt_tensor_desc *in, const prt_tensor_desc *out,
                              const void *const *inputs, void *const *outputs, void *ws, prt_exec *ex)
{
    prt_blob_plugin *bp = (prt_blob_plugin *)p;
    return bp->ops->enqueue(bp, in, out, inputs, outputs, ws, ex);
}

static prt_status th_field_enq(void *p, const prt_tensor_desc *in, const prt_tensor_desc *out,
                               const void *const *inputs, void *const *outputs, void *ws, prt_exec *ex)
{
    prt_field_plugin *fp = (prt_field_plugin *)p;
    return fp->ops->runtime->enqueue(fp, in, out, inputs, outputs, ws, ex);
}

prt_status th_run_blob(const prt_plugin_creator *c, const prt_fields *fc, const th_tensor *in, int nb_in,
                       prt_device dev, int threads, th_run *r)
{
    prt_blob_plugin *p0 = NULL, *p = NULL;
    prt_msg err = {r->error, sizeof r->error};
    prt_dtype it[8], ot[4];
    prt_dims_expr ie[8], oe;
    prt_dyn_tensor_desc din[8], dout[4];
    prt_tensor_desc tin[8], tout[4];
    th_builder *b = th_builder_new();
    uint8_t *blob = NULL;
    size_t n, ws;
    int i, j, nb_out;
    prt_status st;

    memset(r, 0, sizeof *r);
    st = c->create_blob(c, fc, &p0, &err);
    if (st != PRT_OK) goto done;
    /* Round trip through the blob; run the deserialized copy. */
    n = p0->ops->get_serialization_size(p0);
    blob = (uint8_t *)malloc(n + 1);
    if ((st = p0->ops->serialize(p0, blob, n)) != PRT_OK) goto done;
    if ((st = c->deserialize_blob(c, blob, n, &p, &err)) != PRT_OK) goto done;
    nb_out = p->ops->get_nb_outputs(p);
    for (i = 0; i < nb_in; i++) it[i] = in[i].dtype;
    if ((st = p->ops->get_output_data_types(p, it, nb_in, ot, nb_out, &err)) != PRT_OK) goto done;
    for (i = 0; i < nb_in; i++) {
        ie[i].nb = in[i].dims.nb;
        ie[i].reserved_ = 0;
        for (j = 0; j < in[i].dims.nb; j++) ie[i].d[j] = th_builder_eb(b)->constant(th_builder_eb(b), in[i].dims.d[j]);
        th_dyn(&in[i], &din[i]);
        tin[i] = din[i].desc;
    }
    r->nb_out = nb_out;
    for (i = 0; i < nb_out; i++) {
        int64_t d[8];
        if ((st = p->ops->get_output_dims(p, i, ie, nb_in, th_builder_eb(b), &oe, &err)) != PRT_OK) goto done;
        for (j = 0; j < oe.nb; j++) d[j] = th_expr_value(oe.d[j], NULL);
        th_tensor_alloc(&r->out[i], "out", ot[i], oe.nb, d);
        th_dyn(&r->out[i], &dout[i]);
        tout[i] = dout[i].desc;
    }
    for (i = 0; i < nb_in + nb_out; i++) {
        prt_tensor_desc io[12];
        for (j = 0; j < nb_in; j++) io[j] = tin[j];
        for (j = 0; j < nb_out; j++) io[nb_in + j] = tout[j];
        if (!p->ops->supports_format_combination(p, i, io, nb_in, nb_out)) {
            prt_msg_set(&err, "format combination refused at position %d", i);
            st = PRT_STATUS_UNSUPPORTED;
            goto done;
        }
    }
    if ((st = p->ops->configure_plugin(p, din, nb_in, dout, nb_out, &err)) != PRT_OK) goto done;
    ws = p->ops->get_workspace_size(p, tin, nb_in, tout, nb_out);
    st = th_execute(p, th_blob_enq, in, nb_in, r, ws, dev, threads);
done:
    r->status = st;
    if (st != PRT_OK) th_run_free(r);
    if (p0) p0->ops->destroy(p0);
    if (p) p->ops->destroy(p);
    free(blob);
    th_builder_free(b);
    return st;
}

prt_status th_run_field(const prt_plugin_creator *c, const prt_fields *fc, const th_tensor *in, int nb_in,
                        prt_device dev, int threads, th_run *r)
{
    prt_field_plugin *p0 = NULL, *p = NULL;
    prt_msg err = {r->error, sizeof r->error};
    prt_dtype it[8], ot[4];
    prt_dims_expr ie[8], oe[4];
    prt_dyn_tensor_desc din[8], dout[4];
    th_builder *b = th_builder_new();
    prt_fields saved;
    size_t ws;
    int i, j, nb_out;
    prt_status st;

    memset(r, 0, sizeof *r);
    if ((st = c->create_field(c, fc, PRT_PHASE_BUILD, &p0, &err)) != PRT_OK) goto done;
    nb_out = p0->ops->build->get_nb_outputs(p0);
    for (i = 0; i < nb_in; i++) it[i] = in[i].dtype;
    if ((st = p0->ops->build->get_output_data_types(p0, it, nb_in, ot, nb_out, &err)) != PRT_OK) goto done;
    for (i = 0; i < nb_in; i++) {
        ie[i].nb = in[i].dims.nb;
        ie[i].reserved_ = 0;
        for (j = 0; j < in[i].dims.nb; j++) ie[i].d[j] = th_builder_eb(b)->constant(th_builder_eb(b), in[i].dims.d[j]);
        th_dyn(&in[i], &din[i]);
    }
    if ((st = p0->ops->build->get_output_shapes(p0, ie, nb_in, oe, nb_out, th_builder_eb(b), &err)) != PRT_OK)
        goto done;
    r->nb_out = nb_out;
    for (i = 0; i < nb_out; i++) {
        int64_t d[8];
        for (j = 0; j < oe[i].nb; j++) d[j] = th_expr_value(oe[i].d[j], NULL);
        th_tensor_alloc(&r->out[i], "out", ot[i], oe[i].nb, d);
        th_dyn(&r->out[i], &dout[i]);
    }
    if ((st = p0->ops->build->configure(p0, din, nb_in, dout, nb_out, &err)) != PRT_OK) goto done;
    ws = p0->ops->build->get_workspace_size(p0, din, nb_in, dout, nb_out);
    /* Re-create from the serialized fields (runtime phase), as a plan load does. */
    if ((st = p0->ops->runtime->get_fields_to_serialize(p0, &saved, &err)) != PRT_OK) goto done;
    if ((st = c->create_field(c, &saved, PRT_PHASE_RUNTIME, &p, &err)) != PRT_OK) goto done;
    if ((st = p->ops->build->configure(p, din, nb_in, dout, nb_out, &err)) != PRT_OK) goto done;
    st = th_execute(p, th_field_enq, in, nb_in, r, ws, dev, threads);
done:
    r->status = st;
    if (st != PRT_OK) th_run_free(r);
    if (p0) p0->ops->destroy(p0);
    if (p) p->ops->destroy(p);
    th_builder_free(b);
    return st;
}
