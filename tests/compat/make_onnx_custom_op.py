"""Writes tests/data/compat/trt_swish_custom_op/: an ONNX backend-style test
folder whose one node is the TensorRT-style SwishPlugin (version 2, per-channel
weights) as a custom op, the way TensorRT exporters write plugin nodes: op type
= plugin name, its own domain, plugin_version as an attribute. Expected output
from the float64 formula y = w[c] * x / (1 + exp(-beta * x)).
Run: python3 tests/compat/make_onnx_custom_op.py"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "..", "data", "compat", "trt_swish_custom_op")
os.makedirs(os.path.join(out, "test_data_set_0"), exist_ok=True)
beta, w = 1.5, [1.0, -0.5, 2.0]
node = helper.make_node("SwishPlugin", ["x"], ["y"], domain="trt.plugins", plugin_version="2", beta=beta,
                        weights=w)
graph = helper.make_graph([node], "trt_swish_custom_op",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4, 5])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 4, 5])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("trt.plugins", 1)])
model.ir_version = 8
onnx.save(model, os.path.join(out, "model.onnx"))
rng = np.random.default_rng(7)
x = rng.uniform(-4, 4, size=(2, 3, 4, 5)).astype(np.float32)
xd = x.astype(np.float64)
y = (np.array(w).reshape(1, 3, 1, 1) * xd / (1 + np.exp(-beta * xd))).astype(np.float32)
for name, arr in (("input_0.pb", x), ("output_0.pb", y)):
    with open(os.path.join(out, "test_data_set_0", name), "wb") as f:
        f.write(numpy_helper.from_array(arr, "x" if name.startswith("input") else "y").SerializeToString())
