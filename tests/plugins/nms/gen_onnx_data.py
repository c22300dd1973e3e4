#!/usr/bin/env python3
"""Convert the NMS reference data into the plain text files the NMS tests read.

  gen_onnx_data.py ONNX_NODE_DIR TRT_GOLDEN_JSON OUT_DATA_DIR

- ONNX backend node tests test_nonmaxsuppression_* (model.onnx + test_data_set_0/*.pb)
  -> OUT/onnx_nms/<test>.txt
- TensorRT EfficientNMS golden IO (JSON of base64 .npy, configs config1 and class_agnostic)
  -> OUT/tensorrt/efficientnms_golden.txt

Text format, one record per line:
  attr NAME VALUE
  tensor NAME DTYPE RANK D0 D1 ... V0 V1 ...     (DTYPE f32 or i64, C order)
"""
import base64
import glob
import io
import json
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def tensor_line(name, arr):
    arr = np.ascontiguousarray(arr)  # C order (the golden scores are Fortran order)
    if arr.dtype.kind == "f":
        dt, vals = "f32", " ".join(repr(float(np.float32(v))) for v in arr.ravel())
    else:
        dt, vals = "i64", " ".join(str(int(v)) for v in arr.ravel())
    dims = " ".join(str(d) for d in arr.shape)
    return f"tensor {name} {dt} {arr.ndim} {dims} {vals}".rstrip() + "\n"


def convert_onnx(node_dir, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    for d in sorted(glob.glob(os.path.join(node_dir, "test_nonmaxsuppression_*"))):
        model = onnx.load(os.path.join(d, "model.onnx"))
        node = model.graph.node[0]
        cpb = 0
        for a in node.attribute:
            if a.name == "center_point_box":
                cpb = a.i
        lines = [f"attr center_point_box {cpb}\n"]
        names = [i for i in node.input]
        for k, name in enumerate(names):
            t = onnx.TensorProto()
            with open(os.path.join(d, "test_data_set_0", f"input_{k}.pb"), "rb") as f:
                t.ParseFromString(f.read())
            lines.append(tensor_line(name or f"input{k}", numpy_helper.to_array(t)))
        t = onnx.TensorProto()
        with open(os.path.join(d, "test_data_set_0", "output_0.pb"), "rb") as f:
            t.ParseFromString(f.read())
        lines.append(tensor_line("selected_indices", numpy_helper.to_array(t)))
        with open(os.path.join(out_dir, os.path.basename(d) + ".txt"), "w") as f:
            f.writelines(lines)


def npy(entry):
    return np.load(io.BytesIO(base64.b64decode(entry["array"])), allow_pickle=False)


def convert_golden(path, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    with open(path) as f:
        doc = json.load(f)
    lines = []
    for cfg in ("config1", "class_agnostic"):
        case = doc[cfg][0]
        lines.append(f"case {cfg}\n")
        for k, v in case["attributes"].items():
            val = npy(v).reshape(-1)[0] if isinstance(v, dict) else v
            lines.append(f"attr {k} {repr(float(val)) if isinstance(val, (float, np.floating)) else int(val)}\n")
        for k, v in case["inputs"].items():
            lines.append(tensor_line(k, npy(v)))
        for k, v in case["outputs"].items():
            a = npy(v)
            lines.append(tensor_line(k, a.astype(np.int64) if a.dtype.kind in "iu" else a))
    with open(os.path.join(out_dir, "efficientnms_golden.txt"), "w") as f:
        f.writelines(lines)


if __name__ == "__main__":
    node_dir, golden, out = sys.argv[1:4]
    convert_onnx(node_dir, os.path.join(out, "onnx_nms"))
    convert_golden(golden, os.path.join(out, "tensorrt"))
