#!/usr/bin/env python3
"""Write ONNX DeformConv models in the backend-test folder layout, with outputs
from ONNX's own reference implementation (onnx.reference), for the cases the
node suite does not cover: strides, dilations, asymmetric pads, groups and
offset groups together, several batches, B as a constant (an initializer,
which the importer passes as field "input:3"), and an absent B before a given
mask.

Usage: gen_onnx_models.py OUT_DIR     (tests/data/onnx_deform_conv_models)

Each case is OUT_DIR/<name>/model.onnx and test_data_set_0/{input,output}_K.pb,
what `plugrt onnx-test` reads. Inputs are drawn from a fixed seed; offsets
reach beyond the image so that the zero padding of the sampling is used.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator


def out_extent(n, pb, pe, d, k, s):
    return (n + pb + pe - (d * (k - 1) + 1)) // s + 1


def case(out, name, n, c, h, w, oc, kh, kw, strides, dil, pads, group, og, bias, mask, seed):
    """bias: None, "input" or "const"; mask: True/False. B absent with a mask
    present is written as an empty input name."""
    rng = np.random.default_rng(seed)
    oh = out_extent(h, pads[0], pads[2], dil[0], kh, strides[0])
    ow = out_extent(w, pads[1], pads[3], dil[1], kw, strides[1])
    X = rng.uniform(-2, 2, (n, c, h, w)).astype(np.float32)
    W = rng.uniform(-1, 1, (oc, c // group, kh, kw)).astype(np.float32)
    off = rng.uniform(-2.5, 2.5, (n, og * kh * kw * 2, oh, ow)).astype(np.float32)
    B = rng.uniform(-1, 1, (oc,)).astype(np.float32)
    M = rng.uniform(0, 1, (n, og * kh * kw, oh, ow)).astype(np.float32)
    feeds = {"X": X, "W": W, "offset": off}
    inputs = [helper.make_tensor_value_info(k, TensorProto.FLOAT, v.shape) for k, v in feeds.items()]
    inits = []
    node_in = ["X", "W", "offset"]
    if bias == "input":
        feeds["B"] = B
        inputs.append(helper.make_tensor_value_info("B", TensorProto.FLOAT, B.shape))
        node_in.append("B")
    elif bias == "const":
        inits.append(numpy_helper.from_array(B, "B"))
        node_in.append("B")
    elif mask:
        node_in.append("")
    if mask:
        feeds["mask"] = M
        inputs.append(helper.make_tensor_value_info("mask", TensorProto.FLOAT, M.shape))
        node_in.append("mask")
    node = helper.make_node("DeformConv", node_in, ["Y"], kernel_shape=[kh, kw], strides=list(strides),
                            dilations=list(dil), pads=list(pads), group=group, offset_group=og)
    graph = helper.make_graph([node], name, inputs,
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, (n, oc, oh, ow))],
                              initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    model.ir_version = 9
    onnx.checker.check_model(model)
    # the reference runs on float64 copies of the inputs (a float64 model), so
    # the expected values carry no float32 rounding of their own
    ref = onnx.ModelProto()
    ref.CopyFrom(model)
    for v in list(ref.graph.input) + list(ref.graph.output):
        v.type.tensor_type.elem_type = TensorProto.DOUBLE
    for t in ref.graph.initializer:
        t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float64), t.name))
    (y,) = ReferenceEvaluator(ref).run(None, {k: v.astype(np.float64) for k, v in feeds.items()})
    d = os.path.join(out, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    for i, (k, v) in enumerate(feeds.items()):
        with open(os.path.join(d, "test_data_set_0", f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(v, k).SerializeToString())
    with open(os.path.join(d, "test_data_set_0", "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(y.astype(np.float32), "Y").SerializeToString())


def main():
    out = sys.argv[1]
    case(out, "dcn_strided_dilated_asymmetric_pads", 2, 4, 7, 9, 6, 3, 3, (2, 1), (1, 2), (1, 0, 2, 1), 2, 2,
         "input", True, 1)
    case(out, "dcn_constant_bias_no_mask", 1, 3, 6, 5, 4, 2, 3, (1, 2), (2, 1), (0, 1, 1, 0), 1, 3, "const",
         False, 2)
    case(out, "dcn_constant_bias_and_mask", 1, 4, 5, 6, 2, 3, 2, (1, 1), (1, 1), (2, 2, 0, 1), 2, 1, "const",
         True, 3)
    case(out, "dcn_absent_bias_before_mask", 2, 2, 6, 6, 3, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), 1, 2, None,
         True, 4)
    case(out, "dcn_no_bias_no_mask_grouped", 1, 6, 8, 7, 4, 3, 3, (2, 2), (1, 1), (1, 1, 1, 1), 2, 3, None,
         False, 5)


if __name__ == "__main__":
    main()
