#!/usr/bin/env python3
"""Writes the weights of examples/detector_tail.json as .npy files into
examples/detector_tail/ (fixed seed, so the files are reproducible).

The network is a tiny detector tail on an 8-channel 6x6 feature map:
Swish (v2, per-channel weights) -> ModulatedDeformConv2d 3x3 (fixed learned
offsets and mask) -> Swish (v1) -> two dense heads written as deformable
convolutions with zero offsets and unit masks (box deltas [1, 16, 1, 4] and
class logits [1, 16, 3, 1] for 16 anchors and 3 classes) -> EfficientNMS_TRT
with centre-size box coding against 16 anchors.
"""
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "detector_tail")

C, H, W = 8, 6, 6      # feature map
N, CLASSES = 16, 3     # anchors, classes


def main():
    rng = np.random.default_rng(20261129)
    os.makedirs(OUT, exist_ok=True)
    files = {
        # 3x3 deformable convolution, deformable_group 1: offsets are (dy, dx)
        # pairs per tap, small and smooth; the mask is in (0, 1).
        "dcn_offset": (0.4 * np.sin(np.arange(18 * H * W).reshape(1, 18, H, W) * 0.37)),
        "dcn_mask": 1.0 / (1.0 + np.exp(-rng.normal(0.5, 1.0, (1, 9, H, W)))),
        "dcn_weight": rng.normal(0.0, 1.0 / np.sqrt(C * 9), (C, C, 3, 3)),
        # Box head: kernel 6x3 over the 6x6 map, 16 output channels (one per
        # anchor) and 4 output columns (dx, dy, dw, dh).
        "box_weight": rng.normal(0.0, 0.02, (N, C, 6, 3)),
        "box_offset": np.zeros((1, 2 * 18, 1, 4)),
        "box_mask": np.ones((1, 18, 1, 4)),
        # Class head: kernel 4x6, 16 output channels and 3 output rows (one
        # logit per class).
        "cls_weight": rng.normal(0.0, 0.15, (N, C, 4, 6)),
        "cls_offset": np.zeros((1, 2 * 24, CLASSES, 1)),
        "cls_mask": np.ones((1, 24, CLASSES, 1)),
    }
    for name, a in files.items():
        np.save(os.path.join(OUT, name + ".npy"), np.ascontiguousarray(a, dtype=np.float32))


if __name__ == "__main__":
    main()
