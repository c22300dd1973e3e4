#!/usr/bin/env python3
"""Convert the ONNX backend node tests of DeformConv into small text files.

Usage: gen_onnx_data.py ONNX_NODE_DIR OUT_DIR

Each test_*deform_conv* folder becomes OUT_DIR/<name>.txt:
    dcn-case stride_h stride_w pad_h pad_w dil_h dil_w group offset_group
    <number of tensors>
    then per tensor: <name> <rank> <dims...> followed by its values (%.9g),
    names x, offset, mask, weight, [bias], y.
ONNX's input order is X, W, offset, B, mask; an absent mask is written as
ones and an absent bias is left out. Values are float32, so %.9g is exact.
"""
import glob
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def attrs(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def load_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t).astype(np.float32)


def convert(case_dir, out_dir):
    name = os.path.basename(case_dir.rstrip("/"))
    model = onnx.load(os.path.join(case_dir, "model.onnx"))
    node = model.graph.node[0]
    assert node.op_type == "DeformConv", node.op_type
    a = attrs(node)
    pads = list(a.get("pads", [0, 0, 0, 0]))
    if pads[0] != pads[2] or pads[1] != pads[3]:
        raise SystemExit(f"{name}: asymmetric pads {pads} are not supported")
    strides = list(a.get("strides", [1, 1]))
    dil = list(a.get("dilations", [1, 1]))
    group = int(a.get("group", 1))
    og = int(a.get("offset_group", 1))
    ds = os.path.join(case_dir, "test_data_set_0")
    inputs = {}
    for i, iname in enumerate(node.input):
        if iname:
            inputs[i] = load_pb(os.path.join(ds, f"input_{len(inputs)}.pb"))
    y = load_pb(os.path.join(ds, "output_0.pb"))
    x, w, off = inputs[0], inputs[1], inputs[2]
    bias = inputs.get(3)
    mask = inputs.get(4)
    if "kernel_shape" in a:
        assert list(a["kernel_shape"]) == list(w.shape[2:])
    if mask is None:
        kh, kw = w.shape[2:]
        mask = np.ones((x.shape[0], og * kh * kw, y.shape[2], y.shape[3]), np.float32)
    tensors = [("x", x), ("offset", off), ("mask", mask), ("weight", w)]
    if bias is not None:
        tensors.append(("bias", bias))
    tensors.append(("y", y))
    lines = ["dcn-case %d %d %d %d %d %d %d %d" % (strides[0], strides[1], pads[0], pads[1], dil[0], dil[1],
                                                   group, og), str(len(tensors))]
    for tname, t in tensors:
        lines.append("%s %d %s" % (tname, t.ndim, " ".join(str(d) for d in t.shape)))
        lines.append(" ".join("%.9g" % v for v in t.reshape(-1)))
    with open(os.path.join(out_dir, name + ".txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(name, {k: v.shape for k, v in tensors})


def main():
    src, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    dirs = sorted(glob.glob(os.path.join(src, "test_*deform_conv*")))
    if not dirs:
        raise SystemExit("no test_*deform_conv* folders under " + src)
    for d in dirs:
        convert(d, out)


if __name__ == "__main__":
    main()
