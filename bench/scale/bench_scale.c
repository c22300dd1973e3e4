/*
 * bench/scale/bench_scale.c - how loading, building and registration grow
 * with the size of what they are given (docs/engine-format.md, "Limits").
 *
 *   bench_scale [TENSORS [LAYERS [CREATORS]]]   (defaults 1000000 100000 200000)
 *
 *   plan load:  a plan with TENSORS tensors (one input, one Swish layer, one
 *               output, the rest zero-element constants), written in memory
 *               and loaded with prt_engine_deserialize.
 *   build:      a network of LAYERS Swish layers in a chain, built into a plan.
 *   registry:   CREATORS field-style creators registered in one batch (what a
 *               plugin library does), then looked up once each.
 *
 * Each row is timed at half the size too: a ratio near 2 is linear, near 4
 * quadratic.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/core.h"
#include "engine/plan.h"
#include "plugrt/engine.h"
#include "plugrt/network.h"
#include "plugrt/op.h"
#include "registry/registry_impl.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what, const char *msg)
{
    fprintf(stderr, "bench_scale: %s: %s\n", what, msg);
    exit(1);
}

static prt_dims dims1(int64_t n)
{
    prt_dims d;
    memset(&d, 0, sizeof d);
    d.nb = 1;
    d.d[0] = n;
    return d;
}

static const float k_beta = 1.0f;

static prt_fields beta_fields(prt_field *f)
{
    prt_fields fc;
    memset(f, 0, sizeof *f);
    f->name = "beta";
    f->data = &k_beta;
    f->type = PRT_FIELD_FLOAT32;
    f->count = 1;
    fc.fields = f;
    fc.nb = 1;
    fc.reserved_ = 0;
    return fc;
}

/* A chain of n Swish layers x -> t1 -> ... -> y. */
static prt_network *chain(int32_t n)
{
    prt_network *net = NULL;
    prt_dims d = dims1(16);
    prt_field f;
    prt_fields fc = beta_fields(&f);
    char a[32], b[32];
    int32_t i;
    if (prt_network_create(NULL, &net) != PRT_OK || prt_network_add_input(net, "x", PRT_DTYPE_F32, &d) != PRT_OK)
        die("network", "cannot create");
    for (i = 0; i < n; i++) {
        const char *in[1] = {a}, *out[1] = {b};
        char name[32];
        snprintf(a, sizeof a, i ? "t%d" : "x", (int)i);
        snprintf(b, sizeof b, i == n - 1 ? "y" : "t%d", (int)i + 1);
        snprintf(name, sizeof name, "swish%d", (int)i);
        if (prt_network_add_layer(net, name, "Swish", "1", "", &fc, in, 1, out, 1) != PRT_OK)
            die("network", prt_last_error(net));
    }
    if (prt_network_mark_output(net, "y") != PRT_OK) die("network", prt_last_error(net));
    return net;
}

static double time_build(int32_t layers)
{
    prt_network *net;
    prt_engine *e = NULL;
    char err[1024];
    double t0, t1;
    t0 = now_s();
    net = chain(layers);
    if (prt_engine_build(net, NULL, NULL, &e, err, sizeof err) != PRT_OK) die("build", err);
    t1 = now_s();
    prt_engine_destroy(e);
    prt_network_destroy(net);
    return t1 - t0;
}

/* A one-layer plan with `tensors` tensors in all. */
static uint8_t *big_plan(int32_t tensors, size_t *len)
{
    prt_network *net = chain(1);
    prt_engine *e = NULL;
    prt__plan *p = NULL;
    uint8_t *bytes = NULL;
    void *small;
    size_t slen;
    char err[1024];
    int32_t i, base, zero;
    if (prt_engine_build(net, NULL, NULL, &e, err, sizeof err) != PRT_OK) die("build", err);
    if (prt_engine_serialize(e, NULL, 0, &slen) != PRT_OK) die("serialize", "failed");
    small = malloc(slen);
    if (!small || prt_engine_serialize(e, small, slen, &slen) != PRT_OK) die("serialize", "failed");
    if (prt__plan_read(small, slen, &p, err, sizeof err) != PRT_OK) die("read", err);
    base = p->nb_tensors;
    p->nodes = prt__realloc(p->nodes, (size_t)(p->nb_nodes + 1) * sizeof *p->nodes);
    p->tensors = prt__realloc(p->tensors, (size_t)tensors * sizeof *p->tensors);
    if (!p->nodes || !p->tensors) die("plan", "out of memory");
    zero = p->nb_nodes++;
    memset(&p->nodes[zero], 0, sizeof p->nodes[zero]);
    for (i = base; i < tensors; i++) {
        prt__ptensor *t = &p->tensors[i];
        char name[32];
        memset(t, 0, sizeof *t);
        snprintf(name, sizeof name, "c%d", (int)i);
        t->name = prt__strdup(name);
        t->role = PRT__ROLE_CONSTANT;
        t->dtype = PRT_DTYPE_F32;
        t->nb_dims = 1;
        t->expr[0] = zero;
        t->dims = t->min = t->opt = t->max = dims1(0);
    }
    p->nb_tensors = tensors;
    if (prt__plan_write(p, &bytes, len, err, sizeof err) != PRT_OK) die("write", err);
    prt__plan_free(p);
    free(small);
    prt_engine_destroy(e);
    prt_network_destroy(net);
    return bytes;
}

static double time_load(int32_t tensors)
{
    size_t len;
    uint8_t *plan = big_plan(tensors, &len);
    prt_engine *e = NULL;
    char err[1024];
    double t0 = now_s(), t1;
    if (prt_engine_deserialize(NULL, plan, len, &e, err, sizeof err) != PRT_OK) die("load", err);
    t1 = now_s();
    prt_engine_destroy(e);
    prt__free(plan);
    return t1 - t0;
}

static prt_status never(const prt_plugin_creator *c, const prt_fields *fc, prt_phase ph, prt_field_plugin **out,
                        prt_msg *err)
{
    (void)c; (void)fc; (void)ph; (void)out; (void)err;
    return PRT_STATUS_UNSUPPORTED;
}

static double time_registry(int32_t n)
{
    prt_plugin_creator *cs = calloc((size_t)n, sizeof *cs);
    const prt_plugin_creator **ptrs = calloc((size_t)n, sizeof *ptrs);
    char *names = calloc((size_t)n, 16);
    prt_registry *r = NULL;
    char err[1024];
    double t0, t1;
    int32_t i;
    if (!cs || !ptrs || !names || prt_registry_create(NULL, &r) != PRT_OK) die("registry", "out of memory");
    for (i = 0; i < n; i++) {
        /* reverse order: the worst case for a sorted insertion */
        snprintf(names + (size_t)i * 16, 16, "Op%07d", (int)(n - i));
        cs[i].struct_size = sizeof cs[i];
        cs[i].abi_version = PRT_ABI_VERSION;
        cs[i].name = names + (size_t)i * 16;
        cs[i].version = "1";
        cs[i].plugin_namespace = "bench";
        cs[i].style = PRT_STYLE_FIELD;
        cs[i].field_schema_size = sizeof(prt_field_schema);
        cs[i].create_field = never;
        ptrs[i] = &cs[i];
    }
    t0 = now_s();
    if (prt__registry_add_many(r, ptrs, n, "bench", err, sizeof err) != PRT_OK) die("registry", err);
    for (i = 0; i < n; i++) {
        const prt_plugin_creator *c = NULL;
        if (prt_registry_find(r, cs[i].name, "1", "bench", &c, NULL) != PRT_OK || c != &cs[i])
            die("registry", "lookup failed");
    }
    t1 = now_s();
    prt_registry_destroy(r);
    free(cs);
    free(ptrs);
    free(names);
    return t1 - t0;
}

static void row(const char *what, int32_t n, double (*fn)(int32_t))
{
    double half = fn(n / 2), full = fn(n);
    printf("| %-40s | %9d | %9.3f s | %9.3f s | %5.2f |\n", what, (int)n, half, full, half > 0 ? full / half : 0.0);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int32_t tensors = argc > 1 ? atoi(argv[1]) : 1000000;
    int32_t layers = argc > 2 ? atoi(argv[2]) : 100000;
    int32_t creators = argc > 3 ? atoi(argv[3]) : 200000;
    printf("| %-40s | %9s | %11s | %11s | %5s |\n", "case", "n", "time n/2", "time n", "ratio");
    printf("|%s|%s|%s|%s|%s|\n", "------------------------------------------", "-----------", "-------------",
           "-------------", "-------");
    if (tensors >= 4) row("plan load (tensors)", tensors, time_load);
    if (layers >= 2) row("network + build + load (Swish layers)", layers, time_build);
    if (creators >= 2) row("registry: register one batch + find each", creators, time_registry);
    return 0;
}
