/*
 * nms_harness.h - what the NMS tests use to drive the plugins without a
 * registry or engine: a small exec (serial or threaded parallel_for, output
 * dims recorded), a constants-only expression builder, text data files, and
 * runners for the blob and field plugins on CPU and CUDA.
 */
#ifndef NMS_HARNESS_H
#define NMS_HARNESS_H

#include <stdint.h>

#include "plugins/nms/nms.h"

/* ---- exec ---- */
typedef struct th_exec {
    prt_exec ex;
    prt_dims out_dims[4];
    int have_dims[4];
    /* extents reported with set_output_extent_device (CUDA) */
    const int64_t *dev_extent[4];
    int32_t dev_dim[4];
    int have_dev[4];
    int nb_dev_calls;
    char error[512];
} th_exec;
/* CPU: no set_output_extent_device. CUDA: offered (see th_set_extent_mode). */
void th_exec_init(th_exec *t, prt_device dev, int threads, void *stream);

/* How the CUDA exec of th_run_* offers set_output_extent_device. */
enum {
    TH_EXTENT_DEVICE = 0,  /* offered; the harness reads the value after its stream sync */
    TH_EXTENT_NULL = 1,    /* member covered by struct_size but NULL */
    TH_EXTENT_OLD_HOST = 2 /* struct_size ends before the member (an older host) */
};
void th_set_extent_mode(int mode);
/* When set, the CUDA runs of th_run_* capture the enqueue into a CUDA graph
 * and launch the graph: an enqueue that synchronises with the host (or does
 * anything else a capturing stream refuses) then fails. */
void th_set_graph_capture(int on);

/* ---- expressions (constants only) ---- */
typedef struct th_builder th_builder;
th_builder *th_builder_new(void);
void th_builder_free(th_builder *b);
prt_expr_builder *th_builder_eb(th_builder *b);
/* value of an expression and whether it was data dependent */
int64_t th_expr_value(const prt_expr *e, int *data_dep);

/* ---- tensors ---- */
typedef struct th_tensor {
    char name[64];
    prt_dtype dtype;
    prt_dims dims;
    void *data; /* host */
} th_tensor;
int64_t th_numel(const th_tensor *t);
size_t th_bytes(const th_tensor *t);
void th_tensor_alloc(th_tensor *t, const char *name, prt_dtype dt, int nb, const int64_t *d);
void th_tensor_free(th_tensor *t);
void th_tensors_free(th_tensor *t, int n);

/* text file: "attr NAME VALUE" and "tensor ..." lines (gen_onnx_data.py) */
typedef struct th_file {
    int nb_attr;
    char attr_name[16][64];
    double attr_val[16];
    int nb_tensor;
    th_tensor tensor[16];
    int nb_case;
    int case_start[4]; /* index of first attr / tensor per "case" line */
    int case_tensor_start[4];
    char case_name[4][64];
} th_file;
int th_file_read(th_file *f, const char *path); /* 0 ok */
void th_file_free(th_file *f);
const char *th_data_dir(void);

/* ---- running ---- */
typedef struct th_run {
    int nb_out;
    th_tensor out[4];   /* host copies of the outputs (poisoned before the run) */
    prt_status status;
    char error[512];
    /* ONNX: how the extent came back: 0 not at all, 1 set_output_dims,
     * 2 set_output_extent_device (read after the stream sync) */
    int extent_path;
} th_run;

/* Create a blob plugin from fields, round trip it through serialize and
 * deserialize, shape/configure it for `in` and run it on `dev`. On failure
 * the outputs are freed already (th_run_free is still harmless). */
prt_status th_run_blob(const prt_plugin_creator *c, const prt_fields *fc, const th_tensor *in, int nb_in,
                       prt_device dev, int threads, th_run *out);
prt_status th_run_field(const prt_plugin_creator *c, const prt_fields *fc, const th_tensor *in, int nb_in,
                        prt_device dev, int threads, th_run *out);
void th_run_free(th_run *r);

#endif
