#!/usr/bin/env python3
"""Writes the ONNX models of tests/data/onnx/fuse_*.onnx that tests/onnx/test_fuse.c
imports with and without layer fusion (src/onnx/fuse.c).

Run from the repository root: python3 tests/onnx/make_fuse_fixtures.py
Needs numpy and the onnx Python package (1.22); the tests only read the files.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(__file__), "..", "data", "onnx")
rng = np.random.default_rng(5)


def const(name, a):
    return numpy_helper.from_array(np.asarray(a, np.float32), name)


def vi(name, dims, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, dims)


def save(nodes, inputs, outputs, inits, name, opset=13):
    g = helper.make_graph(nodes, "g", inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="plugrt-tests")
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(OUT, name))


def conv(name, x, y, cin, cout, k=3, pad=1, group=1, bias=True):
    w = const(name + "_w", rng.uniform(-1, 1, (cout, cin // group, k, k)) / np.sqrt(cin * k * k / group))
    ins, inits = [x, w.name], [w]
    if bias:
        b = const(name + "_b", rng.uniform(-0.5, 0.5, cout))
        ins.append(b.name)
        inits.append(b)
    node = helper.make_node("Conv", ins, [y], name=name, kernel_shape=[k, k], pads=[pad] * 4, group=group)
    return node, inits


def hswish(p, x, y):
    """x * clip(x + 3, 0, 6) / 6 as exporters write it (Clip 11 bounds as inputs)."""
    inits = [const(p + "_three", [3.0]), const(p + "_zero", 0.0), const(p + "_six", 6.0),
             const(p + "_six_d", [6.0])]
    nodes = [helper.make_node("Add", [x, p + "_three"], [p + "_a"], name=p + "_add"),
             helper.make_node("Clip", [p + "_a", p + "_zero", p + "_six"], [p + "_c"], name=p + "_clip"),
             helper.make_node("Div", [p + "_c", p + "_six_d"], [p + "_d"], name=p + "_div"),
             helper.make_node("Mul", [x, p + "_d"], [y], name=p + "_mul")]
    return nodes, inits


def main():
    os.makedirs(OUT, exist_ok=True)
    # 1. Conv -> BatchNormalization -> HardSwish chain: one FusedConv layer.
    c, ci = conv("conv", "x", "c", 3, 8)
    bn = [const("bn_s", rng.uniform(0.5, 1.5, 8)), const("bn_b", rng.uniform(-0.5, 0.5, 8)),
          const("bn_m", rng.uniform(-0.2, 0.2, 8)), const("bn_v", rng.uniform(0.5, 2.0, 8))]
    h, hi = hswish("hs", "n", "y")
    save([c, helper.make_node("BatchNormalization", ["c"] + [t.name for t in bn], ["n"], name="bn", epsilon=1e-3)] + h,
         [vi("x", [1, 3, 9, 11])], [vi("y", [1, 8, 9, 11])], ci + bn + hi, "fuse_conv_bn_hswish.onnx")

    # 2. A block: conv+relu, depthwise conv + hswish, squeeze-excite scale, residual add,
    #    at static and dynamic extents (the residual and the scale join a conv only where
    #    the extents are known at import).
    nodes, inits = [], []
    n, i = conv("c1", "x", "c1", 4, 8)
    nodes += [n, helper.make_node("Relu", ["c1"], ["r1"], name="relu1")]
    inits += i
    n, i = conv("dw", "r1", "dw", 8, 8, group=8)
    nodes.append(n)
    inits += i
    h, hi = hswish("hs", "dw", "h")
    nodes += h
    inits += hi
    nodes.append(helper.make_node("GlobalAveragePool", ["h"], ["gap"], name="gap"))
    n, i = conv("se1", "gap", "se1", 8, 4, k=1, pad=0)
    nodes += [n, helper.make_node("Relu", ["se1"], ["se1r"], name="se_relu")]
    inits += i
    n, i = conv("se2", "se1r", "se2", 4, 8, k=1, pad=0)
    nodes += [n, helper.make_node("HardSigmoid", ["se2"], ["se2h"], name="se_hsig", alpha=1.0 / 6, beta=0.5)]
    inits += i
    nodes.append(helper.make_node("Mul", ["h", "se2h"], ["scaled"], name="se_mul"))
    n, i = conv("pw", "scaled", "pw", 8, 8, k=1, pad=0, bias=False)
    nodes += [n, helper.make_node("Add", ["pw", "r1"], ["res"], name="residual"),
              helper.make_node("Sigmoid", ["res"], ["y"], name="sig")]
    inits += i
    save(nodes, [vi("x", [2, 4, 10, 7])], [vi("y", [2, 8, 10, 7])], inits, "fuse_block.onnx")
    save(nodes, [vi("x", ["N", 4, "H", "W"])], [vi("y", ["N", 8, "H", "W"])], inits, "fuse_block_dynamic.onnx")

    # 3. What must not fuse: an inner result that is also a graph output, an int64 chain,
    #    an integer exponent, a widening broadcast after a conv, and LeakyRelu / Elu /
    #    Tanh / Sqrt / Softplus / Gelu / Max chains that do fuse among themselves.
    nodes, inits = [], []
    n, i = conv("cv", "x", "cv", 2, 3)
    nodes.append(n)
    inits += i
    inits += [const("wide", rng.uniform(-1, 1, (2, 3, 5, 6))), const("half", 0.5), const("two_f", [2.0]),
              numpy_helper.from_array(np.array([2], np.int64), "two_i"),
              numpy_helper.from_array(np.array([3], np.int64), "three_i")]
    nodes += [helper.make_node("Add", ["cv", "wide"], ["wide_sum"], name="widening_add"),  # [1,3,5,6] -> [2,3,5,6]
              helper.make_node("LeakyRelu", ["wide_sum"], ["lr"], name="leaky", alpha=0.1),
              helper.make_node("Elu", ["lr"], ["el"], name="elu", alpha=0.7),
              helper.make_node("Tanh", ["el"], ["th"], name="tanh"),
              helper.make_node("Mul", ["th", "half"], ["out_a"], name="half_mul"),  # out_a is also read below
              helper.make_node("Abs", ["out_a"], ["ab"], name="abs"),
              helper.make_node("Sqrt", ["ab"], ["sq"], name="sqrt"),
              helper.make_node("Softplus", ["sq"], ["sp"], name="softplus"),
              helper.make_node("Max", ["sp", "out_a"], ["mx"], name="max"),
              helper.make_node("Pow", ["mx", "two_f"], ["pw_f"], name="pow_f"),
              helper.make_node("Pow", ["pw_f", "two_i"], ["out_b"], name="pow_i"),  # integer exponent
              helper.make_node("Mul", ["n", "two_i"], ["n2"], name="int_mul"),
              helper.make_node("Add", ["n2", "three_i"], ["out_c"], name="int_add")]
    save(nodes, [vi("x", [1, 2, 5, 6]), vi("n", [4], TensorProto.INT64)],
         [vi("out_a", [2, 3, 5, 6]), vi("out_b", [2, 3, 5, 6]), vi("out_c", [4], TensorProto.INT64)], inits,
         "fuse_limits.onnx")


if __name__ == "__main__":
    main()
