/* tests/engine/toyfield.c - see toyfield.h. */
#include <stdlib.h>

#include "toyfield.h"
#ifndef SV_LIBRARY
#include "engine/plan.h"
#endif

static const char *toy_name(const prt_field_plugin *p) { return ((const toy_pl *)p)->creator->name; }
static const char *toy_version(const prt_field_plugin *p) { return ((const toy_pl *)p)->creator->version; }
static const char *toy_ns(const prt_field_plugin *p) { return ((const toy_pl *)p)->creator->plugin_namespace; }

const prt_plugin_core_ops toy_core = {
    .struct_size = sizeof toy_core, .abi_version = PRT_ABI_VERSION,
    .get_name = toy_name, .get_version = toy_version, .get_namespace = toy_ns,
};

static prt_status toy_new(const prt_plugin_creator *c, prt_field_plugin **out, prt_msg *err)
{
    const toy_kind *k = c->user;
    toy_pl *o = calloc(1, sizeof *o);
    if (!o) {
        prt_msg_set(err, "out of memory");
        return PRT_STATUS_OUT_OF_MEMORY;
    }
    o->base.ops = k->ops;
    o->creator = c;
    o->kind = k->kind;
    *out = &o->base;
    return PRT_OK;
}

prt_status toy_create(const prt_plugin_creator *c, const prt_fields *fc, prt_phase phase, prt_field_plugin **out,
                      prt_msg *err)
{
    (void)fc; (void)phase;
    return toy_new(c, out, err);
}

prt_status toy_clone(const prt_field_plugin *p, prt_field_plugin **out, prt_msg *err)
{
    return toy_new(((const toy_pl *)p)->creator, out, err);
}

prt_status toy_attach(prt_field_plugin *p, prt_plugin_context *ctx, prt_field_plugin **out, prt_msg *err)
{
    (void)ctx;
    return toy_clone(p, out, err);
}

prt_status toy_fields(prt_field_plugin *p, prt_fields *out, prt_msg *err)
{
    (void)p; (void)err;
    out->fields = NULL;
    out->nb = 0;
    return PRT_OK;
}

void toy_destroy(prt_field_plugin *p) { free(p); }

int32_t toy_one_output(const prt_field_plugin *p)
{
    (void)p;
    return 1;
}

prt_status toy_same_types(const prt_field_plugin *p, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                          int32_t nb_out, prt_msg *err)
{
    (void)p; (void)nb_in; (void)nb_out; (void)err;
    out[0] = in[0];
    return PRT_OK;
}

prt_status toy_same_shapes(prt_field_plugin *p, const prt_dims_expr *in, int32_t nb_in, prt_dims_expr *out,
                           int32_t nb_out, prt_expr_builder *eb, prt_msg *err)
{
    (void)p; (void)nb_in; (void)nb_out; (void)eb; (void)err;
    out[0] = in[0];
    return PRT_OK;
}

#ifndef SV_LIBRARY /* a plugin library links nothing of plugrt */
uint8_t *toy_plan_bytes(prt_engine *e, size_t *len)
{
    uint8_t *b;
    *len = 0;
    if (prt_engine_serialize(e, NULL, 0, len) != PRT_OK || !(b = malloc(*len ? *len : 1))) return NULL;
    if (prt_engine_serialize(e, b, *len, len) != PRT_OK) {
        free(b);
        return NULL;
    }
    return b;
}

int toy_flip_and_load(prt_registry *r, const uint8_t *plan, size_t len, int rounds)
{
    uint8_t *q = malloc(len);
    unsigned seed = 12345u;
    int i, k, loaded = 0;
    char err[1024];
    if (!q || len <= 64) {
        free(q);
        return -1;
    }
    for (i = 0; i < rounds; i++) {
        size_t at;
        uint64_t sum;
        prt_engine *e = NULL;
        seed = seed * 1103515245u + 12345u;
        at = 64 + (seed >> 8) % (len - 64);
        memcpy(q, plan, len);
        q[at] ^= (uint8_t)(1u << ((seed >> 4) & 7));
        sum = prt__plan_checksum(q + 64, len - 64);
        for (k = 0; k < 8; k++) q[24 + k] = (uint8_t)(sum >> (8 * k));
        err[0] = 0;
        if (prt_engine_deserialize(r, q, len, &e, err, sizeof err) == PRT_OK) {
            loaded++;
            prt_engine_destroy(e);
        } else if (!err[0]) {
            loaded = -1000000; /* a failure without a message */
        }
    }
    free(q);
    return loaded;
}
#endif
