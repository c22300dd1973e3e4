"""Shared by the model scripts of bench/models/: where the OCR models are, and
running `plugrt run` on .npy files."""
import os
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
MODELS = os.path.join(ROOT, ".models", "rapidocr-onnxruntime-1.4.4")
# name: (file, input name, output name)
OCR_MODELS = {
    "det": ("ch_PP-OCRv4_det_infer.onnx", "x", "sigmoid_0.tmp_0"),
    "rec": ("ch_PP-OCRv4_rec_infer.onnx", "x", "softmax_11.tmp_0"),
    "cls": ("ch_ppocr_mobile_v2.0_cls_infer.onnx", "x", "save_infer_model/scale_0.tmp_1"),
}
SKIP = 77  # ctest's SKIP_RETURN_CODE for these scripts


def model_path(name, models_dir=MODELS):
    return os.path.join(models_dir, OCR_MODELS[name][0])


def require_models(models_dir=MODELS):
    missing = [f for f, _, _ in OCR_MODELS.values() if not os.path.isfile(os.path.join(models_dir, f))]
    if missing:
        print("skip: the OCR models are not fetched (%s missing in %s); run scripts/fetch_models.sh"
              % (", ".join(missing), models_dir))
        sys.exit(SKIP)


class MissingOp(Exception):
    pass


def profile_arg(iname, shape):
    """`--profile` pinning a dynamic input to one shape (min = opt = max), as
    a user builds an engine for the size they run."""
    dims = "x".join(str(d) for d in shape)
    return ["--profile", "%s:%s,%s,%s" % (iname, dims, dims, dims)]


def plugrt_run(plugrt, model, args):
    """Runs `plugrt run model args...`; returns its stdout. Raises MissingOp when
    the model needs an op no plugin provides, RuntimeError on any other failure."""
    p = subprocess.run([plugrt, "run", model] + args, capture_output=True, text=True)
    text = p.stdout + p.stderr
    if "no plugin provides op" in text:
        raise MissingOp(text.strip().splitlines()[0])
    if p.returncode != 0:
        raise RuntimeError("plugrt run %s failed (%d): %s" % (model, p.returncode, text.strip()))
    return p.stdout
