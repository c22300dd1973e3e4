#!/usr/bin/env python3
"""Writes the small ONNX models of tests/data/onnx/ used by tests/onnx/.

Run from the repository root: python3 tests/onnx/make_onnx_fixtures.py
Needs the onnx Python package (1.22); the tests only read the files.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUT = os.path.join(os.path.dirname(__file__), "..", "data", "onnx")


def save(model, name, check=True):
    if check:
        onnx.checker.check_model(model)
    onnx.save(model, os.path.join(OUT, name))


def vi(name, elem, dims):
    return helper.make_tensor_value_info(name, elem, dims)


def model(nodes, inputs, outputs, inits=(), opsets=(("", 14),), ir=8):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets],
                          producer_name="plugrt-tests")
    m.ir_version = ir
    return m


def main():
    os.makedirs(OUT, exist_ok=True)
    # relu_add: y = Relu(x + (a + b)); a + b folds at import
    a = numpy_helper.from_array(np.array([1, -2, 3, -4], np.float32), "a")
    b = numpy_helper.from_array(np.array([0.5, 0.5, 0.5, 0.5], np.float32), "b")
    save(model([helper.make_node("Add", ["a", "b"], ["ab"], name="fold_me"),
                helper.make_node("Add", ["x", "ab"], ["s"], name="add"),
                helper.make_node("Relu", ["s"], ["y"], name="relu")],
               [vi("x", TensorProto.FLOAT, [4])], [vi("y", TensorProto.FLOAT, [4])], [a, b]),
         "relu_add.onnx")
    # dynamic: Relu over [N, 4] with a symbolic batch
    save(model([helper.make_node("Relu", ["x"], ["y"])],
               [vi("x", TensorProto.FLOAT, ["N", 4])], [vi("y", TensorProto.FLOAT, ["N", 4])]),
         "relu_dynamic.onnx")
    # reshape: the shape input is a Constant node, passed as field input:1
    shape = helper.make_tensor("shape_value", TensorProto.INT64, [2], [2, 3])
    save(model([helper.make_node("Constant", [], ["shape"], value=shape),
                helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")],
               [vi("x", TensorProto.FLOAT, [6])], [vi("y", TensorProto.FLOAT, [2, 3])]),
         "reshape_const.onnx")
    # reshape_input: the shape is a graph input, bound to a value by the import config
    save(model([helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")],
               [vi("x", TensorProto.FLOAT, [6]), vi("shape", TensorProto.INT64, [2])],
               [vi("y", TensorProto.FLOAT, [None, None])]),
         "reshape_input.onnx")
    # reshape_input_chain: the shape input reaches Reshape through an Identity
    save(model([helper.make_node("Identity", ["shape"], ["s2"]),
                helper.make_node("Reshape", ["x", "s2"], ["y"], name="reshape")],
               [vi("x", TensorProto.FLOAT, [6]), vi("shape", TensorProto.INT64, [2])],
               [vi("y", TensorProto.FLOAT, [None, None])]),
         "reshape_input_chain.onnx")
    # shape_chain: Shape of a static input folds, feeds Reshape's shape
    save(model([helper.make_node("Relu", ["x"], ["r"]),
                helper.make_node("Shape", ["r"], ["shp"]),
                helper.make_node("Reshape", ["x", "shp"], ["y"])],
               [vi("x", TensorProto.FLOAT, [2, 3])], [vi("y", TensorProto.FLOAT, [2, 3])]),
         "shape_chain.onnx")
    # the same chain on a dynamic batch: known at import only when the profile pins it
    save(model([helper.make_node("Relu", ["x"], ["r"]),
                helper.make_node("Shape", ["r"], ["shp"]),
                helper.make_node("Reshape", ["x", "shp"], ["y"], name="reshape")],
               [vi("x", TensorProto.FLOAT, ["N", 3])], [vi("y", TensorProto.FLOAT, ["N", 3])]),
         "shape_dynamic.onnx")
    # custom op in its own domain with plugin_namespace / plugin_version
    save(model([helper.make_node("ToyScale", ["x"], ["y"], domain="toy.ops", alpha=2.5, times=3,
                                 plugin_namespace="toy", plugin_version="1")],
               [vi("x", TensorProto.FLOAT, [4])], [vi("y", TensorProto.FLOAT, [4])],
               opsets=(("", 14), ("toy.ops", 1))), "custom_toyscale.onnx", check=False)
    # mmcv's export of a modulated deformable convolution (alias table)
    rng = np.random.default_rng(1)
    wt = numpy_helper.from_array(rng.standard_normal([2, 2, 3, 3]).astype(np.float32), "weight")
    bs = numpy_helper.from_array(np.array([0.5, -0.5], np.float32), "bias")
    save(model([helper.make_node("MMCVModulatedDeformConv2d", ["x", "offset", "mask", "weight", "bias"], ["y"],
                                 domain="mmcv", name="dcn", stride=[1, 1], padding=[1, 1], dilation=[1, 1],
                                 groups=1, deform_groups=1)],
               [vi("x", TensorProto.FLOAT, [1, 2, 4, 4]), vi("offset", TensorProto.FLOAT, [1, 18, 4, 4]),
                vi("mask", TensorProto.FLOAT, [1, 9, 4, 4])], [vi("y", TensorProto.FLOAT, [1, 2, 4, 4])],
               [wt, bs], opsets=(("", 14), ("mmcv", 1))), "mmcv_dcn.onnx", check=False)
    # the same Relu at opsets 13 and 5 (the lookup picks by opset)
    for v in (13, 5):
        save(model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x", TensorProto.FLOAT, [4])],
                   [vi("y", TensorProto.FLOAT, [4])], opsets=(("", v),)), "relu_opset%d.onnx" % v)
    # TensorRT's EfficientNMS_TRT as its exporters write it: own domain, plugin_version, int attributes
    save(model([helper.make_node("EfficientNMS_TRT", ["boxes", "scores"],
                                 ["num_detections", "detection_boxes", "detection_scores", "detection_classes"],
                                 domain="TRT", name="nms", plugin_version="1", background_class=-1, box_coding=0,
                                 iou_threshold=0.5, max_output_boxes=10, score_activation=0,
                                 score_threshold=0.25)],
               [vi("boxes", TensorProto.FLOAT, [1, 16, 4]), vi("scores", TensorProto.FLOAT, [1, 16, 3])],
               [vi("num_detections", TensorProto.INT32, [1, 1]), vi("detection_boxes", TensorProto.FLOAT, [1, 10, 4]),
                vi("detection_scores", TensorProto.FLOAT, [1, 10]),
                vi("detection_classes", TensorProto.INT32, [1, 10])],
               opsets=(("", 14), ("TRT", 1))), "trt_efficient_nms.onnx", check=False)
    # an op nobody provides
    save(model([helper.make_node("Relu", ["x"], ["r"], name="ok"),
                helper.make_node("NoSuchOp", ["r"], ["y"], name="mystery", domain="acme")],
               [vi("x", TensorProto.FLOAT, [4])], [vi("y", TensorProto.FLOAT, [4])],
               opsets=(("", 14), ("acme", 2))), "unknown_op.onnx", check=False)
    # a tensor attribute on a non-Constant node
    save(model([helper.make_node("Relu", ["x"], ["y"], name="odd",
                                 t=helper.make_tensor("t", TensorProto.FLOAT, [1], [1.0]))],
               [vi("x", TensorProto.FLOAT, [4])], [vi("y", TensorProto.FLOAT, [4])]),
         "tensor_attr.onnx", check=False)
    # an absent input before a given one, for a plugin with no "input:1" field
    save(model([helper.make_node("Add", ["x", "", "x"], ["y"], name="gap")],
               [vi("x", TensorProto.FLOAT, [4])], [vi("y", TensorProto.FLOAT, [4])]),
         "absent_middle_input.onnx", check=False)
    # a cycle
    save(model([helper.make_node("Add", ["x", "q"], ["p"], name="first"),
                helper.make_node("Relu", ["p"], ["q"], name="second")],
               [vi("x", TensorProto.FLOAT, [4])], [vi("q", TensorProto.FLOAT, [4])]),
         "cycle.onnx", check=False)
    # a missing initializer
    save(model([helper.make_node("Add", ["x", "w"], ["y"], name="needs_w")],
               [vi("x", TensorProto.FLOAT, [4])], [vi("y", TensorProto.FLOAT, [4])]),
         "missing_init.onnx", check=False)
    # IR version 2 (too old)
    save(model([helper.make_node("Relu", ["x"], ["y"])],
               [vi("x", TensorProto.FLOAT, [4])], [vi("y", TensorProto.FLOAT, [4])], ir=2),
         "ir2.onnx", check=False)
    # -1 as a dynamic extent (older exporters write it)
    save(model([helper.make_node("Relu", ["x"], ["y"])],
               [vi("x", TensorProto.FLOAT, [-1, 4])], [vi("y", TensorProto.FLOAT, [-1, 4])]),
         "minus_one_dim.onnx", check=False)
    # huge dim in an input
    save(model([helper.make_node("Relu", ["x"], ["y"])],
               [vi("x", TensorProto.FLOAT, [1 << 50])], [vi("y", TensorProto.FLOAT, [1 << 50])]),
         "huge_dim.onnx", check=False)
    # shape conflict: an initializer listed as a graph input with other dims
    w = numpy_helper.from_array(np.ones([2, 2], np.float32), "w")
    save(model([helper.make_node("Add", ["x", "w"], ["y"])],
               [vi("x", TensorProto.FLOAT, [2, 2]), vi("w", TensorProto.FLOAT, [3, 2])],
               [vi("y", TensorProto.FLOAT, [2, 2])], [w]), "shape_conflict.onnx", check=False)
    # wrong attribute type: declared INT, holds a float
    n = helper.make_node("ToyScale", ["x"], ["y"], domain="toy.ops", plugin_namespace="toy")
    at = onnx.AttributeProto(name="times", type=onnx.AttributeProto.INT, f=1.5)
    n.attribute.append(at)
    save(model([n], [vi("x", TensorProto.FLOAT, [4])], [vi("y", TensorProto.FLOAT, [4])],
               opsets=(("", 14), ("toy.ops", 1))), "wrong_attr_type.onnx", check=False)
    # every initializer dtype the reader decodes, typed fields and raw_data
    inits, outs = [], []
    for i, (dt, arr) in enumerate([(np.float32, [1.5, -2]), (np.float16, [1.5, -2]), (np.int8, [-3, 4]),
                                   (np.uint8, [3, 250]), (np.int32, [-7, 8]), (np.int64, [-9, 1 << 40]),
                                   (np.bool_, [True, False]), (np.float64, [0.25, -8])]):
        t = numpy_helper.from_array(np.array(arr, dt), "raw%d" % i)
        inits.append(t)
        t2 = helper.make_tensor("typed%d" % i, helper.np_dtype_to_tensor_dtype(np.dtype(dt)), [2],
                                np.array(arr, dt).tolist() if dt != np.float16 else np.array(arr, dt))
        inits.append(t2)
    save(model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", TensorProto.FLOAT, [4])],
               [vi("y", TensorProto.FLOAT, [4])], inits), "dtypes.onnx", check=False)
    # external data: good, escaping, short
    for name, loc, off, length in [("ext_good", "ext_good.bin", 16, 16), ("ext_escape", "../escape.bin", 0, 16),
                                   ("ext_short", "ext_short.bin", 0, 16)]:
        t = onnx.TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4])
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", loc), ("offset", str(off)), ("length", str(length))):
            e = t.external_data.add()
            e.key, e.value = k, v
        save(model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x", TensorProto.FLOAT, [4])],
                   [vi("y", TensorProto.FLOAT, [4])], [t]), name + ".onnx", check=False)
    with open(os.path.join(OUT, "ext_good.bin"), "wb") as f:
        f.write(b"\0" * 16 + np.array([1, 2, 3, 4], np.float32).tobytes())
    with open(os.path.join(OUT, "ext_short.bin"), "wb") as f:
        f.write(np.array([1, 2], np.float32).tobytes())


if __name__ == "__main__":
    main()
