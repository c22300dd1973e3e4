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
PAGE = os.path.join(ROOT, ".models", "scikit-image-0.26.0", "page.png")  # bench/models/fetch_image.sh


def read_gray_png(path):
    """An 8-bit grayscale, non-interlaced PNG (scikit-image's page.png) as a
    uint8 array [h, w]: chunks, zlib, and the five row filters."""
    import struct
    import zlib

    import numpy as np
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("%s: not a PNG file" % path)
    pos, idat, w = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or color != 0 or interlace:
                raise ValueError("%s: expected 8-bit grayscale, non-interlaced" % path)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    out = np.zeros((h, w), np.uint8)
    prev = np.zeros(w, np.int32)
    for y in range(h):
        f, row = raw[y * (w + 1)], np.frombuffer(raw, np.uint8, w, y * (w + 1) + 1).astype(np.int32)
        cur = np.zeros(w, np.int32)
        for x in range(w):
            a = cur[x - 1] if x else 0
            c = prev[x - 1] if x else 0
            b = prev[x]
            if f == 0:
                p = 0
            elif f == 1:
                p = a
            elif f == 2:
                p = b
            elif f == 3:
                p = (a + b) // 2
            else:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                p = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            cur[x] = (row[x] + p) & 255
        out[y] = cur
        prev = cur
    return out


def text_input(shape):
    """A detection input of `shape` [n, 3, h, w] cut from page.png (tiled to
    cover it), normalized as rapidocr does ((v / 255 - 0.5) / 0.5): real text,
    so the probability map is not all near zero as on noise."""
    import numpy as np
    img = read_gray_png(PAGE)
    n, c, h, w = shape
    reps = (-(-h // img.shape[0]), -(-w // img.shape[1]))
    tile = np.tile(img, reps)[:h, :w].astype(np.float32)
    x = (tile / 255.0 - 0.5) / 0.5
    return np.broadcast_to(x, (n, c, h, w)).astype(np.float32).copy()


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
