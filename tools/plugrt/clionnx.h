/*
 * tools/plugrt/clionnx.h - ONNX models wherever the `plugrt` command takes a
 * network or a plan: telling them apart by content, importing and building.
 */
#ifndef PLUGRT_TOOLS_CLIONNX_H
#define PLUGRT_TOOLS_CLIONNX_H

#include <stddef.h>

#include "plugrt/engine.h"

/* 1 if the file at `path` starts like an ONNX model (prt_onnx_sniff); 0 for
 * anything else, including unreadable files (their own reader reports). */
int prt__clionnx_is_onnx(const char *path);

/* Set by --no-fuse: import every node as a layer of its own (no fusion). */
extern int prt__clionnx_no_fuse;

/* Import the model at `path` over `reg` with the builder config's profile
 * ranges (extents with min == max are known at import). */
int prt__clionnx_import(prt_registry *reg, const char *path, const prt_builder_config *cfg, prt_network **out,
                        char *err, size_t cap);

/* "name:MIN,OPT,MAX" (dims joined by 'x') into r; cuts `arg` up (r->input
 * points into it). 1 on success. */
int prt__clionnx_parse_profile(char *arg, prt_profile_range *r);

/* `plugrt inspect model.onnx`: inputs/outputs, opsets, op counts and every
 * node that cannot be imported, with the reason. Returns the exit status. */
int prt__clionnx_inspect(prt_registry *reg, const char *path, const prt_builder_config *cfg, int json);

#endif
