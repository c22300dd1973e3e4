"""The floor of each OCR model on the CPU: multiply-adds of its Conv,
ConvTranspose, MatMul and Gemm nodes at the benchmarked input shape (from
ONNX shape inference), and the bytes a run must at least touch (weights read
once, the input read once, the output written once). The floor is the larger
of FLOPs / rate and bytes / bandwidth; rate and bandwidth are arguments,
measured on the machine being reported (see docs/BENCHMARKS.md).

    python3 bench/models/model_cost.py [--gflops 234] [--gbs 25]
"""
import argparse
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper, shape_inference

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

SHAPES = {"det": (1, 3, 736, 1472), "rec": (5, 3, 48, 1000), "cls": (5, 3, 48, 192)}


def pin_input(model, name, shape):
    for i in model.graph.input:
        if i.name == name:
            dims = i.type.tensor_type.shape.dim
            for d, v in zip(dims, shape):
                d.ClearField("dim_param")
                d.dim_value = v


def static_shapes(model):
    out = {}
    for vi in list(model.graph.value_info) + list(model.graph.input) + list(model.graph.output):
        dims = vi.type.tensor_type.shape.dim
        if vi.type.tensor_type.HasField("shape") and all(d.HasField("dim_value") for d in dims):
            out[vi.name] = [d.dim_value for d in dims]
    for t in model.graph.initializer:
        out[t.name] = list(t.dims)
    for n in model.graph.node:
        if n.op_type == "Constant":
            for a in n.attribute:
                if a.name == "value":
                    out[n.output[0]] = list(a.t.dims)
    return out


def run_shapes(model, iname, shape):
    """Every node output's extents from one onnxruntime run at `shape`, for
    what shape inference leaves symbolic (shapes computed by Shape/Reshape)."""
    import onnxruntime as ort
    m = onnx.ModelProto()
    m.CopyFrom(model)
    known = {o.name for o in m.graph.output}
    names = [o for n in m.graph.node for o in n.output if o and o not in known and n.op_type != "Constant"]
    for o in names:
        m.graph.output.append(onnx.ValueInfoProto(name=o))
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    outs = sess.run(None, {iname: np.zeros(shape, np.float32)})
    return {o.name: list(v.shape) for o, v in zip(sess.get_outputs(), outs)}


def cost(path, iname, shape):
    m = onnx.load(path)
    pin_input(m, iname, shape)
    m = shape_inference.infer_shapes(m)
    sh = static_shapes(m)
    sh.update(run_shapes(m, iname, shape))
    macs, unknown = 0, []
    weight_bytes = sum(numpy_helper.to_array(t).nbytes for t in m.graph.initializer)
    for n in m.graph.node:
        if n.op_type == "Constant":
            for a in n.attribute:
                if a.name == "value":
                    weight_bytes += numpy_helper.to_array(a.t).nbytes
        if n.op_type in ("Conv", "ConvTranspose"):
            w, y, x = sh.get(n.input[1]), sh.get(n.output[0]), sh.get(n.input[0])
            if w is None or y is None or x is None:
                unknown.append(n.name)
                continue
            per = int(np.prod(w[1:]))  # Cin/group * kernel
            if n.op_type == "Conv":
                macs += int(np.prod(y)) * per
            else:  # every input element meets Cout/group * kernel weights
                macs += int(np.prod(x)) * int(np.prod(w[1:]))
        elif n.op_type in ("MatMul", "Gemm"):
            a, y = sh.get(n.input[0]), sh.get(n.output[0])
            if not a or not y:
                unknown.append(n.name)
                continue
            k = a[-1]
            if n.op_type == "Gemm":
                trans_a = any(at.name == "transA" and at.i for at in n.attribute)
                k = a[0] if trans_a else a[-1]
            macs += int(np.prod(y)) * k
    io_bytes = 4 * int(np.prod(shape))
    for o in m.graph.output:
        if o.name in sh:
            io_bytes += 4 * int(np.prod(sh[o.name]))
    return macs, weight_bytes + io_bytes, unknown


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default=common.MODELS)
    ap.add_argument("--gflops", type=float, default=234.0,
                    help="fp32 FMA rate of the threads used, GFLOP/s (2 cores of the development machine: 2 x 117)")
    ap.add_argument("--gbs", type=float, default=25.0, help="memory bandwidth, GB/s (numpy copy on the development machine: 25.6)")
    a = ap.parse_args()
    common.require_models(a.models)
    print("| model | input | GMAC | MB touched | compute floor ms | memory floor ms | floor ms |")
    print("|---|---|---|---|---|---|---|")
    for name, shape in SHAPES.items():
        macs, nbytes, unknown = cost(common.model_path(name, a.models), common.OCR_MODELS[name][1], shape)
        cf = 2.0 * macs / (a.gflops * 1e9) * 1e3
        mf = nbytes / (a.gbs * 1e9) * 1e3
        note = " (%d nodes without static shapes not counted)" % len(unknown) if unknown else ""
        print("| %s | %s | %.2f | %.1f | %.2f | %.2f | %.2f%s |" %
              (name, list(shape), macs / 1e9, nbytes / 1e6, cf, mf, max(cf, mf), note))


if __name__ == "__main__":
    main()
