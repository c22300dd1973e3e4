/*
 * onnx/common/ew_prog.h - fp32 elementwise programs.
 *
 * A program is a short list of unary and binary instructions over broadcast
 * fp32 inputs and scalar constants. It is evaluated in one pass over the
 * output, a chunk of consecutive output elements at a time, every
 * intermediate value living in a small stack buffer (never in memory the
 * size of the tensor). Single elementwise ops in fp32 run as a program of one
 * instruction; the importer turns chains of elementwise nodes into one
 * program (plugrt::Elementwise) and appends a chain that follows a
 * convolution to it as an epilogue (plugrt::FusedConv).
 *
 * Values: 0 .. nb_in-1 are the inputs; nb_in + i is the result of
 * instruction i. An operand < 0 names the scalar constant consts[-1 - op].
 * Instructions with parameters (Clip, HardSigmoid, LeakyRelu, Elu, ...)
 * read them from consts[p], consts[p + 1]. The program's result is the
 * value of its last instruction; a program without instructions is input 0.
 *
 * Numerics: every instruction is computed in fp32 (libm's float functions),
 * so a program agrees with a float64 evaluation of the same ops within a few
 * ulp per instruction.
 *
 * Encoded as fields (plugrt::Elementwise, plugrt::FusedConv): "program" is
 * an int64 list of 4 entries per instruction (op, a, b, p), "consts" a
 * float32 list.
 */
#ifndef PLUGRT_ONNX_EW_PROG_H
#define PLUGRT_ONNX_EW_PROG_H

#include <stdint.h>

#include "plugrt/plugin.h"

#define PRT__EW_MAX_INS 32   /* instructions in one program */
#define PRT__EW_MAX_IN 8     /* inputs of one program */
#define PRT__EW_MAX_CONSTS 64

/* Opcodes. Binary ops use a and b; unary ops use a (b ignored, 0). The
 * numbering is part of the plan format: append only. */
typedef enum prt__ew_op {
    PRT__EW_ADD = 0,
    PRT__EW_SUB = 1,
    PRT__EW_MUL = 2,
    PRT__EW_DIV = 3,
    PRT__EW_MAX = 4,         /* ONNX Max: NaN if either is NaN */
    PRT__EW_MIN = 5,
    PRT__EW_POW = 6,
    PRT__EW_NEG = 7,
    PRT__EW_ABS = 8,
    PRT__EW_RELU = 9,
    PRT__EW_SIGMOID = 10,
    PRT__EW_TANH = 11,
    PRT__EW_EXP = 12,
    PRT__EW_LOG = 13,
    PRT__EW_SQRT = 14,
    PRT__EW_RECIPROCAL = 15,
    PRT__EW_ERF = 16,
    PRT__EW_FLOOR = 17,
    PRT__EW_CEIL = 18,
    PRT__EW_CLIP = 19,        /* lo = consts[p], hi = consts[p + 1]; NaN stays NaN */
    PRT__EW_HARDSIGMOID = 20, /* max(0, min(1, consts[p] * a + consts[p + 1])) */
    PRT__EW_LEAKYRELU = 21,   /* a < 0 ? consts[p] * a : a */
    PRT__EW_HARDSWISH = 22,   /* a * max(0, min(1, a / 6 + 0.5)) */
    PRT__EW_ELU = 23,         /* a < 0 ? consts[p] * (exp(a) - 1) : a */
    PRT__EW_SOFTPLUS = 24,    /* log(1 + exp(a)), overflow-safe */
    PRT__EW_GELU = 25,        /* 0.5 a (1 + erf(a / sqrt 2)) */
    PRT__EW_SQUARE = 26,      /* a * a */
    PRT__EW_PRELU = 27,       /* a < 0 ? a * b : a (binary: the slope is a value) */
    PRT__EW_NB_OPS = 28
} prt__ew_op;

/* The op's name as in ONNX ("Add", "HardSigmoid"; "Square" for a * a), or
 * NULL for an unknown opcode; its operand count (1 or 2, 0 when unknown) and
 * the number of constants it reads from consts[p]. */
const char *prt__ew_op_name(int32_t op);
int32_t prt__ew_op_arity(int32_t op);
int32_t prt__ew_op_nb_params(int32_t op);

typedef struct prt__ew_instr {
    int32_t op, a, b, p;
} prt__ew_instr;

typedef struct prt__ew_prog {
    const prt__ew_instr *ins;
    int32_t nb_ins;
    const float *consts;
    int32_t nb_consts;
    int32_t nb_in; /* 1 .. PRT__EW_MAX_IN */
} prt__ew_prog;

/* Check a program: known opcodes, operands naming earlier values or existing
 * constants, parameters inside consts, the limits above. err names the first
 * bad instruction. */
prt_status prt__ew_check(const prt__ew_prog *p, prt_msg *err);

/* Decode the fields "program" (int64, 4 per instruction) and "consts"
 * (float32) of fc into ins[PRT__EW_MAX_INS] / consts[PRT__EW_MAX_CONSTS]
 * and check the result for nb_in inputs. */
prt_status prt__ew_decode(const prt_fields *fc, int32_t nb_in, prt__ew_instr *ins, float *consts,
                          prt__ew_prog *out, prt_msg *err);

/* How each input walks the output: the output's dims collapsed to at most
 * PRT_MAX_DIMS extents and per-input element strides (0 where the input is
 * broadcast). */
typedef struct prt__ew_bcast {
    int32_t nb_in, rank;
    int64_t ext[PRT_MAX_DIMS];
    int64_t stride[PRT__EW_MAX_IN][PRT_MAX_DIMS];
    int64_t volume;
} prt__ew_bcast;

/* Plan the walk: each in[i] must broadcast (numpy rules, right-aligned) to
 * out. Fails with SHAPE_MISMATCH naming the input otherwise. */
prt_status prt__ew_plan(prt__ew_bcast *bc, int32_t nb_in, const prt_dims *in, const prt_dims *out, prt_msg *err);

/* A program bound to its inputs and output (prt__ew_bind), to be evaluated
 * over any ranges of the output by prt__ew_exec, from any number of threads
 * at once (it is only read). Binding classifies every value once: a caller
 * that evaluates many small ranges (a convolution's epilogue, block by
 * block) binds once per run. Filled by prt__ew_bind; fields are private. */
typedef struct prt__ew_bound {
    const prt__ew_prog *p;
    const prt__ew_bcast *bc;
    const float *x[PRT__EW_MAX_IN];
    float *y;
    int8_t kind[PRT__EW_MAX_IN + PRT__EW_MAX_INS];
    int8_t slot[PRT__EW_MAX_IN + PRT__EW_MAX_INS];
    float s[PRT__EW_MAX_IN + PRT__EW_MAX_INS];
    int32_t nb_gather, gather[PRT__EW_MAX_IN]; /* inputs loaded by the walk */
    int32_t nb_copy, copy[PRT__EW_MAX_IN];     /* flat inputs that overlap y without being y: copied */
    int32_t result, result_in_y;
    int32_t rows;                              /* row mode (see ew_prog.c) */
    int32_t nb_rowc, rowc[PRT__EW_MAX_IN];     /* row mode: inputs constant along each row */
    int32_t nb_rowv, rowv[PRT__EW_MAX_IN];     /* row mode: inputs contiguous along each row */
} prt__ew_bound;

/* Bind p to the inputs x[0 .. p->nb_in) and the output y, walked as bc says.
 * An input may be y itself when it has the output's shape (the program then
 * runs in place: each element is read before it is written). */
void prt__ew_bind(prt__ew_bound *b, const prt__ew_prog *p, const prt__ew_bcast *bc, const float *const *x,
                  float *y);

/* Evaluate output elements [begin, end) (flat, row-major) into the bound y. */
void prt__ew_exec(const prt__ew_bound *b, int64_t begin, int64_t end);

/* prt__ew_bind then prt__ew_exec. */
void prt__ew_range(const prt__ew_prog *p, const prt__ew_bcast *bc, const float *const *x, float *y, int64_t begin,
                   int64_t end);

/* The whole output, split over ex's threads (ex may be NULL: serial). */
void prt__ew_run(const prt__ew_prog *p, const prt__ew_bcast *bc, const float *const *x, float *y, prt_exec *ex);

/* Whether the single ONNX ops (Add, Relu, Clip, ...) take their f32 path
 * through this engine (1, the default) or the generic one that computes in
 * double (0): tests compare the two. Set it before running anything. */
void prt__ew_set_fast_paths(int on);
int prt__ew_fast_paths(void);

#endif /* PLUGRT_ONNX_EW_PROG_H */
