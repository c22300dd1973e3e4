"""Times each OCR model with plugrt (`plugrt run --iterations N --threads T
--json`) and with onnxruntime (T intra-op threads) on the same inputs in the
same run, and prints a table with the ratio. Shapes as rapidocr runs them:
det [1,3,736,1472], rec [5,3,48,1000], cls [5,3,48,192].
    python3 bench/models/bench_models.py --plugrt build/tools/plugrt/plugrt [--threads 2] [--iterations 20]
                                         [--rounds 3] [--gflops 234] [--gbs 25] [--no-fuse]
Each runtime is timed in --rounds rounds (a new onnxruntime session, a new
plugrt process), alternating, each the median of --iterations runs; the
table gives the median of the rounds and, in brackets, their range. On a
shared virtual machine a whole process can land in a slow stretch (both
runtimes were seen at twice their usual time for a round): rounds keep one
such stretch from deciding the number.
The floor column is bench/models/model_cost.py's: the larger of the
model's multiply-adds over the FMA rate (--gflops, of the threads used) and
the bytes it must touch over the bandwidth (--gbs).
Until the ONNX op plugins the models need are registered, the plugrt column
says why it has no number.
"""
import argparse
import json
import os
import sys
import tempfile
import time

import numpy as np
import onnxruntime as ort

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import model_cost  # noqa: E402

SHAPES = {"det": (1, 3, 736, 1472), "rec": (5, 3, 48, 1000), "cls": (5, 3, 48, 192)}


def ort_median_ms(path, iname, x, threads, iterations):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    sess.run(None, {iname: x})  # warm-up
    t = []
    for _ in range(iterations):
        t0 = time.perf_counter()
        sess.run(None, {iname: x})
        t.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(t))


def plugrt_median_ms(plugrt, path, iname, shape, xin, threads, iterations, extra):
    out = common.plugrt_run(plugrt, path, common.profile_arg(iname, shape) +
                            ["--input", "%s=%s" % (iname, xin), "--iterations", str(iterations),
                             "--threads", str(threads), "--json"] + extra)
    return float(json.loads(out)["wall_ms"]["median"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plugrt", required=True)
    ap.add_argument("--models", default=common.MODELS)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3, help="rounds per runtime, alternating (median reported)")
    ap.add_argument("--gflops", type=float, default=234.0, help="FMA rate of the threads used, GFLOP/s")
    ap.add_argument("--gbs", type=float, default=25.0, help="memory bandwidth, GB/s")
    ap.add_argument("--no-fuse", action="store_true", help="import without layer fusion")
    a = ap.parse_args()
    common.require_models(a.models)
    rng = np.random.default_rng(11)
    print("onnxruntime %s, %d threads, median of %d rounds of the median of %d runs [range of the rounds]" %
          (ort.__version__, a.threads, a.rounds, a.iterations))
    print("floor: max(2 * MACs / %.0f GFLOP/s, bytes / %.0f GB/s)" % (a.gflops, a.gbs))
    print("| model | input | floor ms | onnxruntime ms | % floor | plugrt ms | % floor | plugrt / onnxruntime speed |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, shape in SHAPES.items():
            path = common.model_path(name, a.models)
            iname = common.OCR_MODELS[name][1]
            x = rng.uniform(-1, 1, size=shape).astype(np.float32)
            xin = os.path.join(tmp, "x.npy")
            np.save(xin, x)
            macs, nbytes, _ = model_cost.cost(path, iname, shape)
            floor = max(2.0 * macs / (a.gflops * 1e9), nbytes / (a.gbs * 1e9)) * 1e3
            refs, ours = [], []
            cell, ratio = None, None
            for _ in range(max(1, a.rounds)):
                refs.append(ort_median_ms(path, iname, x, a.threads, a.iterations))
                if cell is not None:
                    continue
                try:
                    ours.append(plugrt_median_ms(a.plugrt, path, iname, shape, xin, a.threads, a.iterations,
                                                 ["--no-fuse"] if a.no_fuse else []))
                except common.MissingOp as e:
                    cell, ratio = "cannot run yet (%s) | -" % e, "-"
                except (RuntimeError, KeyError, ValueError) as e:
                    cell, ratio = "failed (%s) | -" % str(e).splitlines()[0], "-"
            ref = float(np.median(refs))
            if cell is None:
                o = float(np.median(ours))
                cell = "%.2f [%.2f-%.2f] | %.0f%%" % (o, min(ours), max(ours), 100.0 * floor / o)
                ratio = "%.2fx" % (ref / o)
            print("| %s | %s | %.2f | %.2f [%.2f-%.2f] | %.0f%% | %s | %s |" % (
                name, list(shape), floor, ref, min(refs), max(refs), 100.0 * floor / ref, cell, ratio))
    return 0


if __name__ == "__main__":
    sys.exit(main())
