/*
 * bench/scale/bench_scale.c - how loading, building and registration grow
 * with the size of what they are given (docs/engine-format.md, "Limits").
 *
 *   bench_scale [TENSORS [LAYERS [CREATORS]]]   (defaults 1000000 100000 200000)
 *
 *   plan load:  a plan with TENSORS tensors (one input, one Swish layer, one
 *               output, the rest zero-element constants) loaded with
 *               prt_engine_deserialize. The builder drops constants no layer
 *               reads, so the plan is the one-layer plan built through the
 *               public API with the extra constants spliced in, following
 *               the plan format of docs/engine-format.md (the only contract
 *               this program relies on besides the public headers).
 *   build:      a network of LAYERS Swish layers in a chain, built into a plan.
 *   registry:   CREATORS field-style creators registered in one batch with
 *               prt_registry_add_many (what loading a plugin library does),
 *               then looked up once each.
 *
 * Each row is timed at half the size too: a ratio near 2 is linear, near 4
 * quadratic.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plugrt/engine.h"
#include "plugrt/network.h"
#include "plugrt/op.h"

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

/* ---- the plan format (docs/engine-format.md), little-endian ---------------- */

typedef struct obuf {
    uint8_t *p;
    size_t len, cap;
} obuf;

static void put(obuf *o, const void *d, size_t n)
{
    if (o->len + n > o->cap) {
        size_t nc = o->cap ? o->cap : 4096;
        while (nc < o->len + n) nc *= 2;
        o->p = realloc(o->p, nc);
        if (!o->p) die("plan", "out of memory");
        o->cap = nc;
    }
    if (n) memcpy(o->p + o->len, d, n);
    o->len += n;
}

static void put_le(obuf *o, uint64_t v, int bytes)
{
    uint8_t b[8];
    int i;
    for (i = 0; i < bytes; i++) b[i] = (uint8_t)(v >> (8 * i));
    put(o, b, (size_t)bytes);
}

static uint64_t get_le(const uint8_t *p, int bytes)
{
    uint64_t v = 0;
    int i;
    for (i = 0; i < bytes; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static void set_le(uint8_t *p, uint64_t v, int bytes)
{
    int i;
    for (i = 0; i < bytes; i++) p[i] = (uint8_t)(v >> (8 * i));
}

#define TAG4(a, b, c, d) ((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | (uint32_t)(d) << 24)

/* `plan` grown to `total` tensors by zero-element f32 constants appended to TENS (extent
 * node: one constant-0 node appended to EXPR; MEMP entries 0, 0; WGHT padded
 * again to its new file offset; length and checksum rewritten). */
static uint8_t *splice_constants(const uint8_t *plan, size_t len, int32_t total, size_t *out_len)
{
    obuf o = {NULL, 0, 0};
    const uint32_t nsec = (uint32_t)get_le(plan + 36, 4);
    uint32_t k, zero_node = 0;
    int32_t extra = 0;
    size_t at = 64;
    uint64_t h = 0xcbf29ce484222325ull;
    int32_t i;
    put(&o, plan, 64);
    for (k = 0; k < nsec; k++) {
        const uint32_t tag = (uint32_t)get_le(plan + at, 4), flags = (uint32_t)get_le(plan + at + 4, 4);
        const uint64_t plen = get_le(plan + at + 8, 8);
        const uint8_t *pay = plan + at + 16;
        obuf b = {NULL, 0, 0};
        if (at + 16 + plen > len) die("plan", "section past the end");
        if (tag == TAG4('E', 'X', 'P', 'R')) {
            const uint32_t n = (uint32_t)get_le(pay, 4);
            zero_node = n;
            put_le(&b, n + 1, 4);
            put(&b, pay + 4, (size_t)plen - 4);
            put_le(&b, 0, 1); /* kind 0: constant */
            put_le(&b, 0, 1);
            put_le(&b, 0, 2);
            put_le(&b, 0, 4);
            put_le(&b, 0, 4);
            put_le(&b, 0, 8); /* value 0 */
        } else if (tag == TAG4('T', 'E', 'N', 'S')) {
            const uint32_t n = (uint32_t)get_le(pay, 4);
            extra = total > (int32_t)n ? total - (int32_t)n : 0;
            put_le(&b, n + (uint32_t)extra, 4);
            put(&b, pay + 4, (size_t)plen - 4);
            for (i = 0; i < extra; i++) {
                char name[32];
                const int nl = snprintf(name, sizeof name, "c%d", (int)(n + (uint32_t)i));
                put_le(&b, (uint64_t)nl, 4);
                put(&b, name, (size_t)nl);
                put_le(&b, 3, 4);                 /* role: constant */
                put_le(&b, PRT_DTYPE_F32, 4);
                put_le(&b, PRT_FORMAT_LINEAR, 4);
                put_le(&b, 1, 4);                 /* nb_dims */
                put_le(&b, zero_node, 4);         /* extent node */
                put_le(&b, 0, 8);                 /* extent */
                put_le(&b, 0, 8);                 /* min, opt, max */
                put_le(&b, 0, 8);
                put_le(&b, 0, 8);
            }
        } else if (tag == TAG4('M', 'E', 'M', 'P')) {
            const uint32_t n = (uint32_t)get_le(pay + 16, 4);
            put(&b, pay, 16);
            put_le(&b, n + (uint32_t)extra, 4);
            put(&b, pay + 20, (size_t)plen - 20);
            for (i = 0; i < extra; i++) {
                put_le(&b, 0, 8);
                put_le(&b, 0, 8);
            }
        } else if (tag == TAG4('W', 'G', 'H', 'T')) {
            const size_t old_pad = (64 - (at + 16) % 64) % 64, new_pad = (64 - (o.len + 16) % 64) % 64;
            static const uint8_t zeros[64];
            put(&b, zeros, new_pad);
            put(&b, pay + old_pad, (size_t)plen - old_pad);
        } else {
            put(&b, pay, (size_t)plen);
        }
        put_le(&o, tag, 4);
        put_le(&o, flags, 4);
        put_le(&o, b.len, 8);
        put(&o, b.p, b.len);
        free(b.p);
        at += 16 + (size_t)plen;
    }
    set_le(o.p + 16, o.len, 8);
    for (at = 64; at < o.len; at++) h = (h ^ o.p[at]) * 0x100000001b3ull;
    set_le(o.p + 24, h, 8);
    *out_len = o.len;
    return o.p;
}

/* A one-layer plan with `tensors` tensors in all. */
static uint8_t *big_plan(int32_t tensors, size_t *len)
{
    prt_network *net = chain(1);
    prt_engine *e = NULL;
    uint8_t *small, *bytes;
    size_t slen;
    char err[1024];
    if (prt_engine_build(net, NULL, NULL, &e, err, sizeof err) != PRT_OK) die("build", err);
    if (prt_engine_serialize(e, NULL, 0, &slen) != PRT_OK) die("serialize", "failed");
    small = malloc(slen);
    if (!small || prt_engine_serialize(e, small, slen, &slen) != PRT_OK) die("serialize", "failed");
    bytes = splice_constants(small, slen, tensors, len);
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
    free(plan);
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
    if (prt_registry_add_many(r, ptrs, n, "bench") != PRT_OK) die("registry", prt_registry_last_error(r));
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
