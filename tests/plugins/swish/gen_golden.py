#!/usr/bin/env python3
"""Writes the golden Swish version 1 files in tests/data/swish/. Run once;
the files are committed and must never change: bytes written by version 1
load with version 1 forever.

Written from the documented layout (plugins/swish/README.md), not by the
plugin itself, so the test also checks the plugin against its documentation.

  swish_v1_beta_1p5.bin     the blob: u8 layout version 1, f32 LE beta 1.5
  swish_v1_beta_1p5.record  the plugin record (docs/engine-format.md):
                            u8 style (1 = blob), str name "Swish",
                            str version "1", str namespace "", str owner
                            "static", u64 blob length, blob
                            (str = u32 LE byte length + bytes)
"""
import os
import struct

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "..", "..", "data", "swish")
os.makedirs(out, exist_ok=True)

blob = struct.pack("<Bf", 1, 1.5)
assert len(blob) == 5


def s(text):
    b = text.encode()
    return struct.pack("<I", len(b)) + b


record = struct.pack("<B", 1) + s("Swish") + s("1") + s("") + s("static") + struct.pack("<Q", len(blob)) + blob

with open(os.path.join(out, "swish_v1_beta_1p5.bin"), "wb") as f:
    f.write(blob)
with open(os.path.join(out, "swish_v1_beta_1p5.record"), "wb") as f:
    f.write(record)
print("wrote", len(blob), "and", len(record), "bytes")
