"""Runs examples/ocr's program on scikit-image's page.png and checks it prints
what rapidocr-onnxruntime 1.4.4 prints (tests/data/ocr/page_rapidocr.txt,
written by bench/models/peer_ocr.py). Exit 77 (skip) when the models or the
image are not fetched, or the ops the models need are not registered.
    python3 run_ocr_example.py OCR_PROGRAM [IMAGE EXPECTED.txt]
"""
import os
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
MODELS = os.path.join(ROOT, ".models", "rapidocr-onnxruntime-1.4.4")
IMAGE = os.path.join(ROOT, ".models", "scikit-image-0.26.0", "page.png")
WANT = os.path.join(ROOT, "tests", "data", "ocr", "page_rapidocr.txt")


def main():
    global IMAGE, WANT
    if len(sys.argv) == 4:
        IMAGE, WANT = sys.argv[2], sys.argv[3]
    for p in (os.path.join(MODELS, "ppocr_keys_v1.txt"), IMAGE):
        if not os.path.isfile(p):
            print("skip: %s is not fetched (scripts/fetch_models.sh, bench/models/fetch_image.sh)" % p)
            return 77
    r = subprocess.run([sys.argv[1], MODELS, IMAGE], capture_output=True, text=True)
    if "no plugin provides op" in r.stderr:
        print("skip: the models cannot run yet: " + r.stderr.strip().splitlines()[0])
        return 77
    if r.returncode != 0:
        print("FAIL: ocr exited with %d: %s" % (r.returncode, r.stderr.strip()))
        return 1
    with open(WANT, encoding="utf-8") as f:
        want = f.read().splitlines()
    got = r.stdout.splitlines()
    for i in range(max(len(got), len(want))):
        g = got[i] if i < len(got) else "<none>"
        w = want[i] if i < len(want) else "<none>"
        print("%s %s%s" % ("ok  " if g == w else "FAIL", g, "" if g == w else "   (rapidocr: %s)" % w))
    return 0 if got == want else 1


if __name__ == "__main__":
    sys.exit(main())
