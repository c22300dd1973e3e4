#!/usr/bin/env python3
"""Run single-node ONNX node-suite tests directly on the op plugins.

Usage: scripts/onnx_node_ops_check.py LIBPLUGRT.so PLUGRT_BINARY NODE_DIR [--verbose] [--filter SUBSTR]

A check of the op plugins alone, without an importer: for every test folder
whose model is one node of the default domain, picks the registered creator
(largest version <= the model's opset), turns the node's attributes into
fields (INT -> int64, INTS -> int64 list, FLOAT -> float32, FLOATS -> float32
list, STRING -> char), passes each input the creator declares as a field
"input:<k>" as that field (the interim shape-value form) and the others as
layer inputs, runs test_data_set_0 through prt_op (ctypes) on the CPU and
compares with ONNX's backend tolerances (rtol 1e-3, atol 1e-7). Prints one
line per failure and a summary. Test tooling only (numpy, onnx).
"""
import ctypes as C
import glob
import json
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

MAX_DIMS = 8
DTYPES = {np.dtype(np.float32): 0, np.dtype(np.float16): 1, np.dtype(np.int8): 3, np.dtype(np.uint8): 4,
          np.dtype(np.int32): 5, np.dtype(np.int64): 6, np.dtype(np.bool_): 7}
NP_OF = {v: k for k, v in DTYPES.items()}
FIELD_INT64, FIELD_FLOAT32, FIELD_CHAR = 3, 5, 7


class Field(C.Structure):
    _fields_ = [("name", C.c_char_p), ("data", C.c_void_p), ("type", C.c_int32), ("reserved", C.c_int32),
                ("count", C.c_int64)]


class Fields(C.Structure):
    _fields_ = [("fields", C.POINTER(Field)), ("nb", C.c_int32), ("reserved", C.c_int32)]


class Dims(C.Structure):
    _fields_ = [("nb", C.c_int32), ("reserved", C.c_int32), ("d", C.c_int64 * MAX_DIMS)]


class Desc(C.Structure):
    _fields_ = [("dtype", C.c_int32), ("format", C.c_int32), ("dims", Dims)]


class Config(C.Structure):
    _fields_ = [("struct_size", C.c_uint32), ("abi_version", C.c_uint32), ("device", C.c_int32),
                ("cuda_device", C.c_int32), ("nb_threads", C.c_int32), ("reserved", C.c_int32),
                ("stream", C.c_void_p)]


def creators(binary):
    out = subprocess.run([binary, "plugins", "--json"], check=True, capture_output=True, text=True).stdout
    table = {}
    for c in json.loads(out)["creators"]:
        if c["namespace"] == "" and c["version"].isdigit():
            table.setdefault(c["name"], {})[int(c["version"])] = {f["name"]: f["type"] for f in c["fields"]}
    return table


class Runner:
    def __init__(self, lib):
        self.lib = C.CDLL(lib)
        L = self.lib
        L.prt_registry_global.restype = C.c_void_p
        L.prt_op_create.argtypes = [C.c_void_p, C.c_char_p, C.c_char_p, C.c_char_p, C.POINTER(Fields),
                                    C.POINTER(C.c_void_p)]
        L.prt_op_configure.argtypes = [C.c_void_p, C.POINTER(Desc), C.c_int32, C.POINTER(Config)]
        L.prt_op_output_desc.argtypes = [C.c_void_p, C.c_int32, C.POINTER(Desc)]
        L.prt_op_run.argtypes = [C.c_void_p, C.POINTER(C.c_void_p), C.POINTER(C.c_void_p)]
        L.prt_op_last_error.argtypes = [C.c_void_p]
        L.prt_op_last_error.restype = C.c_char_p
        L.prt_op_destroy.argtypes = [C.c_void_p]
        L.prt_op_nb_outputs.argtypes = [C.c_void_p]
        self.reg = L.prt_registry_global()

    def run(self, name, version, fields, inputs, nb_needed):
        L = self.lib
        keep = []
        arr = (Field * max(1, len(fields)))()
        for i, (fname, ftype, data) in enumerate(fields):
            keep.append(data)
            arr[i] = Field(fname.encode(), data.ctypes.data if data.size else None, ftype, 0, data.size)
        fc = Fields(arr, len(fields), 0)
        op = C.c_void_p()
        if L.prt_op_create(self.reg, name.encode(), str(version).encode(), b"", C.byref(fc), C.byref(op)) != 0:
            return None, "create: " + L.prt_op_last_error(None).decode(errors="replace")
        try:
            descs = (Desc * max(1, len(inputs)))()
            ptrs = (C.c_void_p * max(1, len(inputs)))()
            for i, a in enumerate(inputs):
                a = np.ascontiguousarray(a)
                inputs[i] = a
                d = Dims(a.ndim, 0)
                for k, e in enumerate(a.shape):
                    d.d[k] = e
                descs[i] = Desc(DTYPES[a.dtype], 0, d)
                ptrs[i] = a.ctypes.data if a.size else None
            cfg = Config(C.sizeof(Config), 1, 0, 0, 2, 0, None)
            if L.prt_op_configure(op, descs, len(inputs), C.byref(cfg)) != 0:
                return None, "configure: " + L.prt_op_last_error(op).decode(errors="replace")
            nout = L.prt_op_nb_outputs(op)
            if nout < nb_needed:
                return None, "the plugin has %d outputs, the node %d" % (nout, nb_needed)
            outs, optrs = [], (C.c_void_p * nout)()
            for i in range(nout):
                od = Desc()
                L.prt_op_output_desc(op, i, C.byref(od))
                shape = tuple(od.dims.d[k] for k in range(od.dims.nb))
                buf = np.zeros(max(1, int(np.prod(shape))), dtype=NP_OF[od.dtype])
                outs.append((buf, od.dtype))
                optrs[i] = buf.ctypes.data
            if L.prt_op_run(op, ptrs, optrs) != 0:
                return None, "run: " + L.prt_op_last_error(op).decode(errors="replace")
            res = []
            for i, (buf, dt) in enumerate(outs):
                od = Desc()
                L.prt_op_output_desc(op, i, C.byref(od))
                shape = tuple(od.dims.d[k] for k in range(od.dims.nb))
                res.append(buf[: int(np.prod(shape))].reshape(shape))
            return res, None
        finally:
            L.prt_op_destroy(op)


def attr_fields(node):
    out = []
    for a in node.attribute:
        t = a.type
        if t == onnx.AttributeProto.INT:
            out.append((a.name, FIELD_INT64, np.array([a.i], dtype=np.int64)))
        elif t == onnx.AttributeProto.INTS:
            out.append((a.name, FIELD_INT64, np.array(a.ints, dtype=np.int64)))
        elif t == onnx.AttributeProto.FLOAT:
            out.append((a.name, FIELD_FLOAT32, np.array([a.f], dtype=np.float32)))
        elif t == onnx.AttributeProto.FLOATS:
            out.append((a.name, FIELD_FLOAT32, np.array(a.floats, dtype=np.float32)))
        elif t == onnx.AttributeProto.STRING:
            out.append((a.name, FIELD_CHAR, np.frombuffer(a.s, dtype=np.uint8).copy()))
        else:
            raise ValueError("attribute %s of type %s" % (a.name, onnx.AttributeProto.AttributeType.Name(t)))
    return out


def check(runner, table, folder):
    m = onnx.load(os.path.join(folder, "model.onnx"))
    if len(m.graph.node) != 1 or m.graph.node[0].domain not in ("", "ai.onnx"):
        return "skip", "not a single default-domain node"
    node = m.graph.node[0]
    opset = max(o.version for o in m.opset_import if o.domain in ("", "ai.onnx"))
    versions = [v for v in table.get(node.op_type, {}) if v <= opset]
    if not versions:
        return "unsupported", "no creator for %s at opset %d" % (node.op_type, opset)
    version = max(versions)
    schema = table[node.op_type][version]
    sets = sorted(glob.glob(os.path.join(folder, "test_data_set_*")))
    if not sets:
        return "skip", "no data"
    data = {}
    names = [i.name for i in m.graph.input]
    for k, nm in enumerate(names):
        p = os.path.join(sets[0], "input_%d.pb" % k)
        if os.path.exists(p):
            t = onnx.TensorProto()
            t.ParseFromString(open(p, "rb").read())
            data[nm] = numpy_helper.to_array(t)
    for init in m.graph.initializer:
        data[init.name] = numpy_helper.to_array(init)
    try:
        fields = attr_fields(node)
    except ValueError as e:
        return "unsupported", str(e)
    if node.op_type == "Split" and not any(f[0] in ("split", "num_outputs") for f in fields) and \
            not (len(node.input) > 1 and node.input[1]):
        # what the importer passes when a Split has neither sizes nor num_outputs
        fields.append(("num_outputs", FIELD_INT64, np.array([len(node.output)], dtype=np.int64)))
    inputs = []
    for k, nm in enumerate(node.input):
        key = "input:%d" % k
        if key in schema:
            if nm:
                v = np.asarray(data[nm])
                if schema[key] == "int64":
                    fields.append((key, FIELD_INT64, v.astype(np.int64).ravel()))
                else:
                    fields.append((key, FIELD_FLOAT32, v.astype(np.float32).ravel()))
            continue
        if not nm:
            continue
        a = np.asarray(data[nm])
        if a.dtype not in DTYPES:
            return "unsupported", "input dtype %s" % a.dtype
        inputs.append(a)
    outs = [o for o in node.output if o]
    res, err = runner.run(node.op_type, version, fields, inputs, len(node.output))
    if err:
        return "fail", err
    for k, nm in enumerate(node.output):
        if not nm:
            continue
        p = os.path.join(sets[0], "output_%d.pb" % list(o.name for o in m.graph.output).index(nm))
        t = onnx.TensorProto()
        t.ParseFromString(open(p, "rb").read())
        want = numpy_helper.to_array(t)
        got = res[k]
        if want.dtype not in DTYPES:
            return "unsupported", "output dtype %s" % want.dtype
        if got.shape != want.shape:
            return "fail", "output %d shape %s, expected %s" % (k, got.shape, want.shape)
        if want.dtype.kind == "f":
            if not np.allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-3, atol=1e-7, equal_nan=True):
                d = np.abs(got.astype(np.float64) - want.astype(np.float64))
                return "fail", "output %d differs: max |diff| %.3g" % (k, np.nanmax(d) if d.size else 0)
        elif not np.array_equal(got, want):
            return "fail", "output %d differs" % k
    del outs
    return "pass", ""


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    runner = Runner(sys.argv[1])
    table = creators(sys.argv[2])
    flt = sys.argv[sys.argv.index("--filter") + 1] if "--filter" in sys.argv else ""
    counts = {"pass": 0, "fail": 0, "unsupported": 0, "skip": 0}
    for folder in sorted(glob.glob(os.path.join(sys.argv[3], "*"))):
        if flt not in os.path.basename(folder) or not os.path.exists(os.path.join(folder, "model.onnx")):
            continue
        try:
            status, why = check(runner, table, folder)
        except Exception as e:  # a test-data quirk, not a plugin result
            status, why = "skip", "%s: %s" % (type(e).__name__, e)
        counts[status] += 1
        if status == "fail" or ("--verbose" in sys.argv and status != "pass"):
            print("%-11s %s: %s" % (status, os.path.basename(folder), why))
    print("%d passed, %d failed, %d unsupported, %d skipped (not one default-domain node, or data quirks)" %
          (counts["pass"], counts["fail"], counts["unsupported"], counts["skip"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
