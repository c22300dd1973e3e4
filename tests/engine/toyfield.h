/*
 * tests/engine/toyfield.h - the common part of small stateless field-style
 * test plugins: names from the creator, no fields, attach_to_context and
 * clone make a fresh object. A test writes its build and runtime ops, puts
 * them in a prt_field_plugin_ops with toy_core / toy_clone / toy_destroy,
 * and points its creator's `user` at a toy_kind. Also: an engine's plan
 * bytes.
 */
#ifndef TESTS_ENGINE_TOYFIELD_H
#define TESTS_ENGINE_TOYFIELD_H

#include "plugrt/engine.h"
#include "plugrt/plugin.h"

typedef struct toy_kind {
    const prt_field_plugin_ops *ops;
    int kind;
} toy_kind;

typedef struct toy_pl {
    prt_field_plugin base;
    const prt_plugin_creator *creator;
    int kind;
    int32_t nb_in, nb_out; /* free for the test's own use */
} toy_pl;

extern const prt_plugin_core_ops toy_core;

static inline int toy_kind_of(const prt_field_plugin *p) { return ((const toy_pl *)p)->kind; }

prt_status toy_create(const prt_plugin_creator *c, const prt_fields *fc, prt_phase phase, prt_field_plugin **out,
                      prt_msg *err);
prt_status toy_clone(const prt_field_plugin *p, prt_field_plugin **out, prt_msg *err);
prt_status toy_attach(prt_field_plugin *p, prt_plugin_context *ctx, prt_field_plugin **out, prt_msg *err);
prt_status toy_fields(prt_field_plugin *p, prt_fields *out, prt_msg *err);
void toy_destroy(prt_field_plugin *p);
/* Build calls of a plugin whose output 0 is input 0's type and shape. */
int32_t toy_one_output(const prt_field_plugin *p);
prt_status toy_same_types(const prt_field_plugin *p, const prt_dtype *in, int32_t nb_in, prt_dtype *out,
                          int32_t nb_out, prt_msg *err);
prt_status toy_same_shapes(prt_field_plugin *p, const prt_dims_expr *in, int32_t nb_in, prt_dims_expr *out,
                           int32_t nb_out, prt_expr_builder *eb, prt_msg *err);

/* The engine's plan in a new buffer (free()) of *len bytes; NULL on failure. */
uint8_t *toy_plan_bytes(prt_engine *e, size_t *len);
/* Load `rounds` copies of the plan, each with one bit flipped past the
 * header and the checksum fixed up, so that the section readers see it:
 * every load must succeed or fail with a message, never crash or leak.
 * Returns how many loaded. */
int toy_flip_and_load(prt_registry *r, const uint8_t *plan, size_t len, int rounds);

#endif
