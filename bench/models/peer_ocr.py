"""The peer of examples/ocr/: runs rapidocr-onnxruntime 1.4.4 on an image and
prints one recognized line per output line (the strings the example must
print too); --boxes adds each line's box and score. Needs
`pip install rapidocr-onnxruntime==1.4.4`.
    python3 bench/models/peer_ocr.py IMAGE [--boxes]
"""
import argparse
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("image")
    ap.add_argument("--boxes", action="store_true")
    a = ap.parse_args()
    try:
        from rapidocr_onnxruntime import RapidOCR
    except ImportError:
        print("skip: rapidocr-onnxruntime is not installed (pip install rapidocr-onnxruntime==1.4.4)")
        return 77
    result, _ = RapidOCR()(a.image)
    for box, text, score in result or []:
        if a.boxes:
            print("%s\t%.4f\t%s" % (text, score, [[int(x), int(y)] for x, y in box]))
        else:
            print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
