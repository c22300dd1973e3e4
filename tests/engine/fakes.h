/*
 * fakes.h - small plugins of both styles that record every call made into
 * them (tests of the adapter and of prt_op).
 *
 *   test::FakeBlob v1 (blob):   y = scale * x, f32, same shape; field scale
 *                               (float32, default 2); blob "FKB1" + f32 scale.
 *   test::FakeField v1 (field): y = scale * x, or with ddep = 1 the positive
 *                               elements of x times scale as a 1-D output of
 *                               data-dependent length (upper bound: volume
 *                               of x); fields scale (default 3), ddep (int32).
 *   Both acquire the per-context resource "fake.counter" when attached and
 *   release it when detached/destroyed, and both use a workspace of
 *   volume(x) floats.
 */
#ifndef PRT_TEST_FAKES_H
#define PRT_TEST_FAKES_H

#include "plugrt/plugin.h"

extern char fake_log[8192];           /* "B:call F:call ..." */
extern const char *fake_fail_call;    /* the call that fails (NULL: none) */
extern int fake_fail_silent;          /* fail without a message */
extern int fake_res_created, fake_res_destroyed;
extern int fake_live_objects;         /* created - destroyed plugin objects */

void fake_reset(void);
extern const prt_plugin_creator fake_blob_creator;
extern const prt_plugin_creator fake_field_creator;
/* The blob ops with struct_size cut before attach_to_context and that member
 * (and detach) pointing at functions that fail the test if called. */
extern const prt_plugin_creator fake_short_ops_creator;

#endif
