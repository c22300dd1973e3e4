/* tools/plugrt/clionnx.c - ONNX models in `plugrt build`, `run` and `inspect`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clionnx.h"
#ifdef PLUGRT_HAVE_ONNX
#include "plugrt/onnx.h"
#endif

int prt__clionnx_is_onnx(const char *path)
{
#ifdef PLUGRT_HAVE_ONNX
    /* Only a regular file is sniffed, opened without blocking: anything else
     * (a FIFO, a directory) is left to the JSON reader, which refuses it with
     * its kind named. */
    unsigned char head[32];
    ssize_t n;
    struct stat st;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return 0;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return 0;
    }
    n = read(fd, head, sizeof head);
    close(fd);
    return n > 0 && prt_onnx_sniff(head, (size_t)n);
#else
    (void)path;
    return 0;
#endif
}

int prt__clionnx_no_fuse;

int prt__clionnx_import(prt_registry *reg, const char *path, const prt_builder_config *cfg, prt_network **out,
                        char *err, size_t cap)
{
#ifdef PLUGRT_HAVE_ONNX
    prt_onnx_import_config ic;
    prt_onnx_import_config_init(&ic);
    ic.nb_ranges = cfg->nb_ranges;
    ic.ranges = cfg->ranges;
    ic.no_fuse = prt__clionnx_no_fuse;
    return prt_network_from_onnx_file(reg, path, &ic, out, err, cap) == PRT_OK;
#else
    (void)reg; (void)cfg; (void)out;
    snprintf(err, cap, "%s: this plugrt was built without the ONNX importer (protobuf-c was not found)", path);
    return 0;
#endif
}

/* "1x3x8x8" */
static int parse_dims(const char *s, const char *end, prt_dims *d)
{
    char *e;
    memset(d, 0, sizeof *d);
    if (s == end) return 0;
    while (s < end) {
        long long v;
        if (d->nb == PRT_MAX_DIMS) return 0;
        v = strtoll(s, &e, 10);
        if (e == s || e > end || v < 0) return 0;
        d->d[d->nb++] = v;
        s = e;
        if (s < end) {
            if (*s != 'x') return 0;
            s++;
            if (s == end) return 0;
        }
    }
    return 1;
}

int prt__clionnx_parse_profile(char *arg, prt_profile_range *r)
{
    char *colon = strrchr(arg, ':'), *c1, *c2;
    if (!colon || colon == arg) return 0;
    *colon = 0;
    r->input = arg;
    c1 = strchr(colon + 1, ',');
    if (!c1) return 0;
    c2 = strchr(c1 + 1, ',');
    if (!c2 || strchr(c2 + 1, ',')) return 0;
    return parse_dims(colon + 1, c1, &r->min) && parse_dims(c1 + 1, c2, &r->opt) &&
           parse_dims(c2 + 1, c2 + strlen(c2), &r->max);
}

#ifdef PLUGRT_HAVE_ONNX
#include <cjson/cJSON.h>

typedef struct issue_list {
    cJSON *arr; /* JSON: objects; text: printed at once */
    int n;
} issue_list;

static void on_issue(void *user, const char *node, const char *op_type, const char *domain, const char *reason)
{
    issue_list *l = user;
    l->n++;
    if (l->arr) {
        cJSON *o = cJSON_CreateObject();
        if (!o) return;
        cJSON_AddStringToObject(o, "node", node);
        cJSON_AddStringToObject(o, "op_type", op_type);
        cJSON_AddStringToObject(o, "domain", domain);
        cJSON_AddStringToObject(o, "reason", reason);
        cJSON_AddItemToArray(l->arr, o);
    } else {
        if (l->n == 1) printf("cannot import:\n");
        printf("  %s\n", reason);
    }
}

static void io_text(const prt_onnx_io *io, char *buf, size_t cap)
{
    size_t n = 0;
    int32_t k;
    if (io->rank < 0) {
        snprintf(buf, cap, "(rank unknown)");
        return;
    }
    n += (size_t)snprintf(buf + n, cap - n, "[");
    for (k = 0; k < io->rank && n < cap; k++) {
        if (io->dims[k] >= 0) n += (size_t)snprintf(buf + n, cap - n, "%s%lld", k ? ", " : "", (long long)io->dims[k]);
        else n += (size_t)snprintf(buf + n, cap - n, "%s%s", k ? ", " : "", io->dim_params[k] ? io->dim_params[k] : "?");
    }
    if (n < cap) snprintf(buf + n, cap - n, "]");
}

/* Op types and their counts, in order of first appearance. */
typedef struct op_count {
    const char *op, *domain;
    int n;
} op_count;

int prt__clionnx_inspect(prt_registry *reg, const char *path, const prt_builder_config *cfg, int json)
{
    prt_onnx_model *m = NULL;
    prt_onnx_import_config ic;
    prt_network *net = NULL;
    issue_list issues = {NULL, 0};
    op_count *ops = NULL;
    int nops = 0, rc = 1;
    int32_t i, nn;
    char err[2048], dims[256];
    cJSON *root = NULL;
    prt_status s;

    if (prt_onnx_model_load(path, &m, err, sizeof err) != PRT_OK) {
        fprintf(stderr, "plugrt inspect: %s\n", err);
        return 1;
    }
    nn = prt_onnx_model_nb_nodes(m);
    ops = calloc((size_t)nn + 1, sizeof *ops);
    if (!ops) goto done;
    for (i = 0; i < nn; i++) {
        const char *op, *dom;
        int k;
        if (prt_onnx_model_node(m, i, NULL, &op, &dom) != PRT_OK) continue;
        for (k = 0; k < nops; k++)
            if (strcmp(ops[k].op, op) == 0 && strcmp(ops[k].domain, dom) == 0) break;
        if (k == nops) {
            ops[nops].op = op;
            ops[nops++].domain = dom;
        }
        ops[k].n++;
    }
    if (json) {
        cJSON *a;
        root = cJSON_CreateObject();
        if (!root) goto done;
        cJSON_AddStringToObject(root, "file", path);
        cJSON_AddStringToObject(root, "format", "onnx");
        cJSON_AddNumberToObject(root, "ir_version", (double)prt_onnx_model_ir_version(m));
        cJSON_AddStringToObject(root, "producer", prt_onnx_model_producer(m));
        a = cJSON_AddArrayToObject(root, "opsets");
        for (i = 0; i < prt_onnx_model_nb_opsets(m); i++) {
            const char *d;
            int64_t v;
            cJSON *o = cJSON_CreateObject();
            if (!o || prt_onnx_model_opset(m, i, &d, &v) != PRT_OK) {
                cJSON_Delete(o);
                continue;
            }
            cJSON_AddStringToObject(o, "domain", d);
            cJSON_AddNumberToObject(o, "version", (double)v);
            cJSON_AddItemToArray(a, o);
        }
        for (int out = 0; out < 2; out++) {
            int32_t nb = out ? prt_onnx_model_nb_outputs(m) : prt_onnx_model_nb_inputs(m);
            a = cJSON_AddArrayToObject(root, out ? "outputs" : "inputs");
            for (i = 0; i < nb; i++) {
                prt_onnx_io io;
                cJSON *o;
                if ((out ? prt_onnx_model_output(m, i, &io) : prt_onnx_model_input(m, i, &io)) != PRT_OK) continue;
                if (!(o = cJSON_CreateObject())) continue;
                io_text(&io, dims, sizeof dims);
                cJSON_AddStringToObject(o, "name", io.name);
                cJSON_AddStringToObject(o, "type", io.elem_type);
                cJSON_AddStringToObject(o, "dims", dims);
                cJSON_AddItemToArray(a, o);
            }
        }
        a = cJSON_AddArrayToObject(root, "ops");
        for (i = 0; i < nops; i++) {
            cJSON *o = cJSON_CreateObject();
            if (!o) continue;
            cJSON_AddStringToObject(o, "op_type", ops[i].op);
            cJSON_AddStringToObject(o, "domain", ops[i].domain);
            cJSON_AddNumberToObject(o, "count", ops[i].n);
            cJSON_AddItemToArray(a, o);
        }
        issues.arr = cJSON_AddArrayToObject(root, "cannot_import");
    } else {
        printf("%s: ONNX model, IR version %lld, producer \"%s\", %d nodes\nopsets:", path,
               (long long)prt_onnx_model_ir_version(m), prt_onnx_model_producer(m), (int)nn);
        for (i = 0; i < prt_onnx_model_nb_opsets(m); i++) {
            const char *d;
            int64_t v;
            if (prt_onnx_model_opset(m, i, &d, &v) == PRT_OK) printf(" \"%s\" %lld", d, (long long)v);
        }
        printf("\n");
        for (int out = 0; out < 2; out++) {
            int32_t nb = out ? prt_onnx_model_nb_outputs(m) : prt_onnx_model_nb_inputs(m);
            printf("%s:\n", out ? "outputs" : "inputs");
            for (i = 0; i < nb; i++) {
                prt_onnx_io io;
                if ((out ? prt_onnx_model_output(m, i, &io) : prt_onnx_model_input(m, i, &io)) != PRT_OK) continue;
                io_text(&io, dims, sizeof dims);
                printf("  %-24s %-8s %s\n", io.name, io.elem_type, dims);
            }
        }
        printf("ops:\n");
        for (i = 0; i < nops; i++)
            printf("  %-28s %5d%s%s%s\n", ops[i].op, ops[i].n, ops[i].domain[0] ? "  (domain \"" : "", ops[i].domain,
                   ops[i].domain[0] ? "\")" : "");
    }
    prt_onnx_import_config_init(&ic);
    ic.keep_going = 1;
    ic.issue = on_issue;
    ic.issue_user = &issues;
    ic.nb_ranges = cfg->nb_ranges;
    ic.ranges = cfg->ranges;
    err[0] = 0;
    s = prt_onnx_import(m, reg, &ic, &net, err, sizeof err);
    if (json) {
        cJSON_AddBoolToObject(root, "imports", s == PRT_OK);
        if (s != PRT_OK && !issues.n) cJSON_AddStringToObject(root, "import_error", err);
        {
            char *txt = cJSON_Print(root);
            if (txt) printf("%s\n", txt);
            free(txt);
        }
    } else if (s == PRT_OK) {
        printf("every node imports (%d layers)\n", (int)prt_network_nb_layers(net));
    } else if (!issues.n) {
        printf("cannot import: %s\n", err);
    }
    rc = 0;
done:
    cJSON_Delete(root);
    prt_network_destroy(net);
    free(ops);
    prt_onnx_model_destroy(m);
    return rc;
}
#else
int prt__clionnx_inspect(prt_registry *reg, const char *path, const prt_builder_config *cfg, int json)
{
    (void)reg; (void)cfg; (void)json;
    fprintf(stderr, "plugrt inspect: %s: this plugrt was built without the ONNX importer\n", path);
    return 1;
}
#endif
