"""Writes tests/data/ocr/stages.json: inputs and the outputs rapidocr-onnxruntime
1.4.4's own Python functions give for them, for the stage tests of
examples/ocr/ (test_ocr_stages.c). Needs the rapidocr-onnxruntime==1.4.4 wheel
and its dependencies (opencv, pyclipper, shapely) installed.
    python3 tests/examples/ocr/make_expected.py
"""
import json
import math
import os
import tempfile

import cv2
import numpy as np
from rapidocr_onnxruntime.ch_ppocr_det.text_detect import TextDetector
from rapidocr_onnxruntime.ch_ppocr_det.utils import DBPostProcess, DetPreProcess
from rapidocr_onnxruntime.ch_ppocr_rec.utils import CTCLabelDecode
from rapidocr_onnxruntime.ch_ppocr_cls.text_cls import TextClassifier
from rapidocr_onnxruntime.ch_ppocr_rec.text_recognize import TextRecognizer
from rapidocr_onnxruntime.main import RapidOCR

rng = np.random.default_rng(11)
out = {}

# detection input sizes
pre = DetPreProcess(736, "min")
sizes = []
for h, w in [(191, 384), (736, 1472), (30, 900), (1000, 500), (37, 1200), (800, 801), (17, 33), (2000, 40)]:
    img = np.zeros((h, w, 3), np.uint8)
    r = pre.resize(img)
    sizes.append({"h": h, "w": w, "out_h": int(r.shape[0]), "out_w": int(r.shape[1])})
out["det_size"] = sizes

# box ordering, clipping and filtering, then reading order
det = TextDetector.__new__(TextDetector)
quads = []
for _ in range(40):
    x, y = rng.uniform(-20, 400), rng.uniform(-10, 200)
    w, h = rng.uniform(1, 150), rng.uniform(1, 30)
    a = rng.uniform(-0.2, 0.2)
    c, s = math.cos(a), math.sin(a)
    pts = [(x + c * u - s * v, y + s * u + c * v) for u, v in [(0, 0), (w, 0), (w, h), (0, h)]]
    pts = [pts[i] for i in rng.permutation(4)]
    quads.append(np.round(np.array(pts, np.float32)))
kept = det.filter_tag_det_res(np.array(quads, np.int32), (191, 384))
ordered = RapidOCR.sorted_boxes(kept)
out["boxes"] = {"img_h": 191, "img_w": 384, "in": [q.tolist() for q in quads],
                "filtered": [b.tolist() for b in kept], "sorted": [b.tolist() for b in ordered]}

# crop widths for the classifier (48 x 192) and the recognizer (48, batch width)
crops = [[int(rng.integers(8, 60)), int(rng.integers(5, 900))] for _ in range(13)]
crops += [[20, 40], [10, 20], [30, 60]]  # equal ratios: the order stays stable
ratios = np.array([w / float(h) for h, w in crops])
order = np.argsort(ratios, kind="stable")
# the packages' own resize functions; a white crop makes the resized part 1.0 and the padding 0
rec = TextRecognizer.__new__(TextRecognizer)
rec.rec_image_shape = [3, 48, 320]
clf = TextClassifier.__new__(TextClassifier)
clf.cls_image_shape = [3, 48, 192]
batches = []
for beg in range(0, len(crops), 6):
    idx = order[beg:beg + 6]
    max_r = max([320 / 48] + [crops[i][1] / crops[i][0] for i in idx])
    norm = [rec.resize_norm_img(np.full((crops[i][0], crops[i][1], 3), 255, np.uint8), max_r) for i in idx]
    batches.append({"index": [int(i) for i in idx], "width": int(norm[0].shape[2]),
                    "resized": [int((n[0, 0] > 0.5).sum()) for n in norm]})
cls_w = [int((clf.resize_norm_img(np.full((h, w, 3), 255, np.uint8))[0, 0] > 0.5).sum()) for h, w in crops]
out["crops"] = {"hw": crops, "order": [int(i) for i in order], "cls_resized": cls_w, "rec_batches": batches}

# greedy CTC decoding with a small dictionary
symbols = ["a", "b", "c", "\u4e2d", "\u6587", "1", "."]
with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, encoding="utf-8") as f:
    f.write("\n".join(symbols) + "\n")
    keys = f.name
dec = CTCLabelDecode(character_path=keys)
os.unlink(keys)
t, c = 25, len(symbols) + 2
logits = rng.normal(size=(4, t, c)).astype(np.float32)
logits[1, :, 0] += 5  # mostly blanks
logits[2] = 0
logits[2, :, 0] = 1  # all blank: empty text, score 0
logits[3, 3:9, 2] += 10  # a long repeat
prob = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
prob = prob.astype(np.float32)
res = dec(prob)
out["ctc"] = {"symbols": symbols, "t": t, "c": c, "prob": prob.reshape(-1).tolist(),
              "text": [r[0] for r in res], "score": [float(r[1]) for r in res]}

# classifier rule: rotate when "180" wins with score > 0.9
cls = [[0.05, 0.95], [0.2, 0.8], [0.95, 0.05], [0.1, 0.9], [0.5, 0.5]]
out["cls"] = {"prob": cls, "thresh": 0.9,
              "rotate": [int(np.argmax(p) == 1 and p[int(np.argmax(p))] > 0.9) for p in cls]}

# cv2.resize (INTER_LINEAR) of 8-bit images, as rapidocr calls it, and the
# classifier's normalization with zero padding
resize = []
for (h, w), (dh, dw) in [((13, 17), (40, 52)), ((13, 17), (7, 9)), ((13, 17), (13, 30)), ((13, 17), (48, 61)),
                         ((30, 95), (48, 152)), ((30, 95), (48, 48)), ((60, 121), (23, 46))]:
    img = rng.integers(0, 256, size=(h, w, 3), dtype=np.uint8)
    resize.append({"h": h, "w": w, "dst_h": dh, "dst_w": dw, "src": img.reshape(-1).tolist(),
                   "dst": cv2.resize(img, (dw, dh)).reshape(-1).tolist()})
out["resize"] = resize
crop = rng.integers(0, 256, size=(30, 95, 3), dtype=np.uint8)
norm = clf.resize_norm_img(crop)
out["cls_norm"] = {"h": 30, "w": 95, "src": crop.reshape(-1).tolist(), "dst": [round(float(v), 7) for v in norm.reshape(-1)]}

# DB post-processing: threshold + 2x2 dilation, minimum-area boxes
post = DBPostProcess(thresh=0.3, box_thresh=0.5, unclip_ratio=1.6, use_dilation=True)
pred = rng.uniform(0, 0.45, size=(9, 11)).astype(np.float32)
mask = cv2.dilate((pred > post.thresh).astype(np.uint8), post.dilation_kernel)
out["db_mask"] = {"h": 9, "w": 11, "prob": pred.reshape(-1).tolist(), "mask": mask.reshape(-1).tolist()}
mini = []
for i in range(30):
    n = int(rng.integers(3, 40))
    cx, cy, a = rng.uniform(0, 300), rng.uniform(0, 100), rng.uniform(-0.5, 0.5)
    u, v = rng.uniform(-60, 60, n), rng.uniform(-8, 8, n)
    pts = np.stack([cx + np.cos(a) * u - np.sin(a) * v, cy + np.sin(a) * u + np.cos(a) * v], 1)
    pts = np.round(pts).astype(np.int32).reshape(-1, 1, 2)
    box, sside = post.get_mini_boxes(pts)
    mini.append({"pts": pts.reshape(-1).tolist(), "box": np.asarray(box, np.float64).tolist(), "side": float(sside)})
out["min_area"] = mini
unclip = []
for m in mini[:20]:
    box = np.array(m["box"], np.float32)
    exp = post.unclip(box)
    b2, s2 = post.get_mini_boxes(exp)
    unclip.append({"box": box.tolist(), "out": np.asarray(b2, np.float64).tolist(), "side": float(s2)})
out["unclip"] = unclip
smap = rng.uniform(0, 1, size=(24, 40)).astype(np.float32)
score = []
for m in mini[:20]:
    box = (np.array(m["box"], np.float32) * [40 / 300.0, 24 / 100.0]).astype(np.float32)
    score.append({"box": box.tolist(), "score": float(post.box_score_fast(smap, box.reshape(-1, 2)))})
scaled = []
for m in mini[:20]:
    box = np.array(m["box"], np.float32)
    b = box.copy()  # the two lines of boxes_from_bitmap that scale a box back to the image
    b[:, 0] = np.clip(np.round(b[:, 0] / 100 * 191), 0, 191)
    b[:, 1] = np.clip(np.round(b[:, 1] / 40 * 77), 0, 77)
    scaled.append({"box": box.tolist(), "out": b.astype(np.int32).tolist()})
out["to_image"] = {"map_h": 40, "map_w": 100, "img_h": 77, "img_w": 191, "boxes": scaled}
# contours of a blob mask: the min-area box of each, in any order
blob = np.zeros((40, 70), np.uint8)
for _ in range(9):
    cx, cy = int(rng.integers(0, 70)), int(rng.integers(0, 40))
    cv2.ellipse(blob, (cx, cy), (int(rng.integers(3, 14)), int(rng.integers(2, 6))), float(rng.uniform(-20, 20)),
                0, 360, 1, -1)
cv2.rectangle(blob, (40, 20), (60, 32), 1, -1)
cv2.rectangle(blob, (45, 24), (52, 27), 0, -1)  # a hole
blob[0, 0] = 1  # a one-pixel region
contours = cv2.findContours(blob * 255, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)[0]
regions = []
for ct in contours:
    box, sside = post.get_mini_boxes(ct)
    regions.append({"box": np.asarray(box, np.float64).tolist(), "side": float(sside)})
out["regions"] = {"h": 40, "w": 70, "mask": blob.reshape(-1).tolist(), "boxes": regions}
# perspective crops (rapidocr's get_rotate_crop_image) and the 180-degree turn
page = rng.integers(0, 256, size=(40, 60, 3), dtype=np.uint8)
page = cv2.GaussianBlur(page, (5, 5), 0)  # smooth, as text images are
crop_cases = []
ocr = RapidOCR.__new__(RapidOCR)
for quad in [[[3, 4], [50, 6], [49, 20], [2, 18]], [[10.5, 2.25], [30, 2], [31, 38], [10, 39]],
             [[-2, -1], [61, 0], [62, 41], [0, 40]], [[5, 30], [40, 25], [41, 33], [6, 38]]]:
    q = np.array(quad, np.float32)
    crop = ocr.get_crop_img_list(page, [q])[0]
    crop_cases.append({"quad": q.tolist(), "h": int(crop.shape[0]), "w": int(crop.shape[1]),
                       "dst": np.ascontiguousarray(crop).reshape(-1).tolist()})
out["crop"] = {"h": 40, "w": 60, "src": page.reshape(-1).tolist(), "cases": crop_cases,
               "rot180": cv2.rotate(page, 1).reshape(-1).tolist()}
out["box_score"] = {"h": 24, "w": 40, "prob": smap.reshape(-1).tolist(), "boxes": score}

path = os.path.join(os.path.dirname(__file__), "..", "..", "data", "ocr", "stages.json")
with open(path, "w", encoding="utf-8") as f:
    json.dump(out, f, ensure_ascii=False)
print("wrote", os.path.normpath(path))
