#!/usr/bin/env python3
"""Time torchvision's batched_nms against bench_nms on the same data, in the same run.

  peer_nms.py --bench PATH/TO/bench_nms [--iters N] [--out DIR]

bench_nms generates the cases of docs/BENCHMARKS.md, times our CUDA plugins and dumps its
data; this script loads that data and drives torchvision the way a user
would: per image, keep the (box, class) pairs whose score passes the
threshold (score > thr, torch.nonzero), then torchvision.ops.batched_nms on
them (IoU > 0.5), then keep the first 100 (NMS-L/M/T). torchvision has no
per-class topK, so it runs NMS on every candidate of a class, where BatchedNMS
first cuts each class to its best topK (1000 here; no class reaches it in
these cases).

NMS-D (1 image, 100000 boxes, 1 class, threshold 0.0): the same call keeps
every box with score > 0 (all of them), class id 0 for all (so batched_nms is
class-agnostic, plain torchvision.ops.nms), and every kept box is returned,
no cap. That is what our ONNX NonMaxSuppression variant computes
(max_output_boxes_per_class = N). Our EfficientNMS_TRT row of NMS-D does
less work (top 4096 candidates, 100 rows): its ratio is not like for like.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torchvision

SHAPES = {  # id: (B, N, C, score_thr, iou_thr)
    "NMS-L": (1, 8400, 80, 0.25, 0.5),
    "NMS-M": (1, 8400, 80, 0.05, 0.5),
    "NMS-T": (32, 20000, 80, 0.05, 0.5),
    "NMS-D": (1, 100000, 1, 0.0, 0.5),
}


def tv_run(boxes, scores, thr, iou, keep_first=100):
    out = []
    for b in range(boxes.shape[0]):
        s = scores[b]
        n, c = torch.nonzero(s > thr, as_tuple=True)
        keep = torchvision.ops.batched_nms(boxes[b][n], s[n, c], c, iou)[:keep_first]
        out.append(keep)
    return out


def time_tv(boxes, scores, thr, iou, iters, keep_first):
    for _ in range(3):
        tv_run(boxes, scores, thr, iou, keep_first)
    torch.cuda.synchronize()
    ts = []
    for _ in range(iters):
        e0 = torch.cuda.Event(enable_timing=True)
        e1 = torch.cuda.Event(enable_timing=True)
        e0.record()
        keeps = tv_run(boxes, scores, thr, iou, keep_first)
        e1.record()
        torch.cuda.synchronize()
        ts.append(e0.elapsed_time(e1) * 1000.0)
    ts.sort()
    return ts[len(ts) // 2], sum(int(k.numel()) for k in keeps)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="nms_peer_")
    res = subprocess.run([a.bench, "--json", "--dump", tmp, "--iters", "50"], capture_output=True, text=True)
    if res.returncode != 0:
        print(res.stdout, res.stderr)
        sys.exit(1)
    ours = [json.loads(l) for l in res.stdout.splitlines() if l.startswith("{")]
    rows = []
    peer = {}
    for cid, (B, N, C, thr, iou) in SHAPES.items():
        bx = np.fromfile(os.path.join(tmp, f"{cid}_boxes.f32"), dtype=np.float32).reshape(B, N, 4)
        sc = np.fromfile(os.path.join(tmp, f"{cid}_scores.f32"), dtype=np.float32).reshape(B, N, C)
        boxes = torch.from_numpy(bx).cuda()
        scores = torch.from_numpy(sc).cuda()
        iters = a.iters if cid != "NMS-T" else max(5, a.iters // 4)
        # NMS-D: every kept box (ONNX semantics, no cap); others: first 100 per image
        peer[cid] = time_tv(boxes, scores, thr, iou, iters, None if cid == "NMS-D" else 100)
        os.remove(os.path.join(tmp, f"{cid}_boxes.f32"))
        os.remove(os.path.join(tmp, f"{cid}_scores.f32"))
        del boxes, scores
    print("torchvision %s, torch %s, %s" % (torchvision.__version__, torch.__version__, torch.cuda.get_device_name()))
    print("torchvision driven per image: score filter (score > thr, nonzero) + batched_nms (IoU 0.5); "
          "NMS-L/M/T: first 100 kept, no per-class topK; NMS-D: one class (class-agnostic), every kept box, no cap")
    print("NMS-D efficient row: EfficientNMS keeps its top 4096 candidates and 100 rows; not the same work")
    hdr = "%-6s %-10s %12s %9s %14s %9s %10s %9s %8s %8s" % (
        "case", "ours", "ours us", "graph us", "torchvision us", "speedup", "floor us", "x floor", "our det", "tv det")
    print(hdr)
    for o in ours:
        tv_us, tv_det = peer[o["case"]]
        r = {"case": o["case"], "variant": o["variant"], "ours_us": o["median_us"], "torchvision_us": round(tv_us, 1),
             "speedup": round(tv_us / o["median_us"], 1), "floor_us": o["floor_us"],
             "x_floor": round(o["median_us"] / o["floor_us"], 2), "our_detections": o["detections"],
             "torchvision_detections": tv_det, "desc": o["desc"], "graph_us": o.get("graph_us", -1)}
        rows.append(r)
        g = "%9.1f" % r["graph_us"] if r["graph_us"] >= 0 else "%9s" % "-"
        print("%-6s %-10s %12.1f %s %14.1f %8.1fx %10.1f %9.2f %8d %8d" % (
            r["case"], r["variant"], r["ours_us"], g, r["torchvision_us"], r["speedup"], r["floor_us"], r["x_floor"],
            r["our_detections"], r["torchvision_detections"]))
    for o in ours:
        print("  %s %s: %s" % (o["case"], o["variant"], o["desc"]))
    if a.out:
        with open(os.path.join(a.out, "nms_bench.json"), "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
