"""Runs each OCR model with `plugrt run --input/--output` and with onnxruntime on
the same inputs at several sizes (detection on text cut from page.png, the
others on random values), and checks
max|plugrt - ort| <= 1e-4 * max|ort| for each. Exit 0: all match; 1: a
mismatch or failure; 77 (skip): the models are not fetched or the ops they
need are not registered.
    python3 bench/models/compare_models.py --plugrt build/tools/plugrt/plugrt [--models DIR]
"""
import argparse
import os
import sys
import tempfile

import numpy as np

try:
    import onnxruntime as ort
except ImportError:
    print("skip: onnxruntime is not installed")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

SIZES = {
    "det": [(1, 3, 64, 64), (1, 3, 96, 160), (1, 3, 320, 256), (1, 3, 736, 1472)],
    "rec": [(1, 3, 48, 320), (2, 3, 48, 100), (5, 3, 48, 1000)],
    "cls": [(1, 3, 48, 192), (5, 3, 48, 192)],
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plugrt", required=True)
    ap.add_argument("--models", default=common.MODELS)
    ap.add_argument("--tol", type=float, default=1e-4)
    a = ap.parse_args()
    common.require_models(a.models)
    rng = np.random.default_rng(11)
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, shapes in SIZES.items():
            path = common.model_path(name, a.models)
            _, iname, oname = common.OCR_MODELS[name]
            sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
            for shape in shapes:
                # detection on text (on noise its map is ~1e-5 everywhere, under fp32 noise); the others on noise
                x = common.text_input(shape) if name == "det" and os.path.exists(common.PAGE) else \
                    rng.uniform(-1, 1, size=shape).astype(np.float32)
                xin, yout = os.path.join(tmp, "x.npy"), os.path.join(tmp, "y.npy")
                np.save(xin, x)
                ref = sess.run([oname], {iname: x})[0]
                try:
                    common.plugrt_run(a.plugrt, path, common.profile_arg(iname, shape) +
                                      ["--input", "%s=%s" % (iname, xin), "--output", "%s=%s" % (oname, yout)])
                except common.MissingOp as e:
                    print("skip: %s cannot run yet: %s" % (name, e))
                    return common.SKIP
                except RuntimeError as e:
                    print("FAIL %s %s: %s" % (name, list(shape), e))
                    bad += 1
                    continue
                got = np.load(yout)
                if got.shape != ref.shape:
                    print("FAIL %s %s: output shape %s, onnxruntime %s" % (name, list(shape), got.shape, ref.shape))
                    bad += 1
                    continue
                diff = float(np.max(np.abs(got.astype(np.float64) - ref)))
                scale = float(np.max(np.abs(ref)))
                ok = diff <= a.tol * scale
                bad += not ok
                print("%s %-4s %-18s max|diff| %.3g  max|ref| %.3g  limit %.3g" %
                      ("ok  " if ok else "FAIL", name, list(shape), diff, scale, a.tol * scale))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
