/*
 * tests/engine/svplugins.h - shape-value test plugins (field style,
 * get_output_shapes_v2 only):
 *   TestShape   x -> int64 [rank]: the dims of x (values: x's extents).
 *   TestGather  (data, indices) -> data[indices] (values; both inputs are
 *               shape-value inputs; negative indices count from the end).
 *   TestConcat  (a, b, ...) -> the values one after the other.
 *   TestMul     (a, b) -> a * b element by element (values).
 *   TestReshape (x, shape) -> x with dims = shape's values (-1: the rest);
 *               shape is a shape-value input. Copies x at enqueue.
 * Only TestReshape is ever enqueued: the others' outputs are all values,
 * which the engine writes itself (enqueues are counted per kind).
 */
#ifndef TESTS_ENGINE_SVPLUGINS_H
#define TESTS_ENGINE_SVPLUGINS_H

#include "plugrt/plugin.h"

enum { K_SHAPE, K_GATHER, K_CONCAT, K_MUL, K_RESHAPE };
#define SV_NB_CREATORS 5

extern const prt_plugin_creator *const sv_creators[SV_NB_CREATORS];

/* How many times plugins of this kind were enqueued in this process. */
int sv_enqueues(int kind);

#endif
