/*
 * engine/expr.h - symbolic shape expressions (the host side of
 * prt_expr_builder).
 *
 * An arena owns every node. Leaves are the extents of graph inputs: leaf
 * (input i, dim j) with a known value or -1 for dynamic. Interior nodes are
 * prt_expr_op operations and data-dependent extents. A network build uses one
 * arena, so that a layer's output expressions become the next layer's input
 * expressions.
 */
#ifndef PLUGRT_ENGINE_EXPR_H
#define PLUGRT_ENGINE_EXPR_H

#include "plugrt/plugin.h"

typedef struct prt__exprs prt__exprs;

prt_status prt__exprs_create(prt__exprs **out);
void prt__exprs_destroy(prt__exprs *x);
/* The builder handed to plugins; valid as long as the arena. */
prt_expr_builder *prt__exprs_builder(prt__exprs *x);
/* Leaf for extent `dim` of graph input `input`; `known` >= 0 makes it a
 * constant-foldable value, -1 leaves it symbolic. NULL when out of memory
 * (the arena remembers the failure: prt__exprs_failed). */
const prt_expr *prt__exprs_leaf(prt__exprs *x, int32_t input, int32_t dim, int64_t known);
const prt_expr *prt__exprs_const(prt__exprs *x, int64_t v);
int prt__exprs_failed(const prt__exprs *x);

/* Value of `e` when graph input i has extents in_dims[i]. Returns 0 and sets
 * *out, or -1 when it cannot be computed (division by zero, overflow, a leaf
 * outside in_dims, a NULL or foreign node). A data-dependent node evaluates
 * to its upper bound and sets *data_dep (may be NULL) to 1. */
int prt__expr_eval(const prt__exprs *x, const prt_expr *e, const prt_dims *in_dims, int32_t nb_in,
                   int64_t *out, int *data_dep);
/* a op b for a prt_expr_op `op`, with every overflow and division by zero
 * detected: 0 and *out set, or -1 (also for an op that is not a
 * prt_expr_op). The one definition of the operations, for the builder and
 * the plan reader alike. */
int prt__expr_apply(int op, int64_t a, int64_t b, int64_t *out);
/* Is `e` a node of this arena? */
int prt__exprs_owns(const prt__exprs *x, const prt_expr *e);
/* Human form, e.g. "floor_div(in0.d2 + 2 - 3, 1) + 1". */
const char *prt__expr_str(const prt__exprs *x, const prt_expr *e, char *buf, size_t cap);

#endif
