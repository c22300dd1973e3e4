#!/usr/bin/env python3
"""Writes the small .npy fixtures that tests/harness/test_npy.c reads.

The C tests recompute every expected value from the formulas below, so the
files are an independent reference for the reader (NumPy wrote them).
Run from this folder: python3 make_npy_fixtures.py
"""
import base64
import io
import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def save(name, a, version=None):
    with open(os.path.join(HERE, name), "wb") as f:
        np.lib.format.write_array(f, a, version=version, allow_pickle=False)


def main():
    # value(i, j, k) = 0.5 * (C-order index) - 3
    c = (np.arange(24, dtype=np.float32) * 0.5 - 3).reshape(2, 3, 4)
    save("c_f4_2x3x4.npy", c)
    save("fortran_f4_2x3x4.npy", np.asfortranarray(c))
    # value = C-order index, int32, 4-D
    save("fortran_i4_2x3x4x5.npy", np.asfortranarray(np.arange(120, dtype=np.int32).reshape(2, 3, 4, 5)))
    # value(i, j) = 1000 * i + j, int64, 2-D
    i8 = np.add.outer(np.arange(3) * 1000, np.arange(5)).astype(np.int64)
    save("fortran_i8_3x5.npy", np.asfortranarray(i8))
    # one file per element type
    save("f2_7.npy", (np.arange(7) * 0.25 - 1).astype(np.float16))
    save("f8_5.npy", np.arange(5, dtype=np.float64) / 3)
    save("i1_8.npy", np.arange(-4, 4, dtype=np.int8))
    save("u1_6.npy", np.arange(250, 256, dtype=np.uint8))
    save("i4_6.npy", np.arange(6, dtype=np.int32) * -100000)
    save("i8_4.npy", np.arange(4, dtype=np.int64) * 2**40 - 5)
    save("b1_6.npy", np.arange(6) % 3 == 0)
    # header versions 2.0 and 3.0 (same data as c_f4_2x3x4)
    save("v2_f4_2x3x4.npy", c, version=(2, 0))
    save("v3_f4_2x3x4.npy", c, version=(3, 0))
    # 0-d and empty arrays
    save("scalar_f4.npy", np.array(3.5, dtype=np.float32))
    save("empty_f4_0x3.npy", np.zeros((0, 3), dtype=np.float32))
    # refused: big-endian and complex
    save("be_f4_3.npy", np.arange(3, dtype=">f4"))
    save("c8_2.npy", np.arange(2, dtype=np.complex64))

    # The Fortran-order input of the EfficientNMS golden file, as NumPy
    # decodes it, written back in C order: test_golden compares with it.
    gpath = os.path.join(HERE, "..", "tensorrt", "configs", "toplevel", "EfficientNMSPlugin_PluginGoldenIO.json")
    with open(gpath) as f:
        g = json.load(f)
    scores = np.load(io.BytesIO(base64.b64decode(g["config1"][0]["inputs"]["scores"]["array"])))
    save("nms_config1_scores_c.npy", np.ascontiguousarray(scores))


if __name__ == "__main__":
    main()
