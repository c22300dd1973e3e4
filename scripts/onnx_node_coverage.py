#!/usr/bin/env python3
"""Which ONNX node-suite tests map to registered ONNX op creators.

Usage: scripts/onnx_node_coverage.py PLUGRT_BINARY NODE_DIR [--list]

For every test folder under NODE_DIR (model.onnx + test_data_set_*), reads the
model with the onnx package and checks that each node's op type has a creator
in the default namespace with a version <= the model's opset for that domain
(what the importer picks). Prints the number of covered tests, then the op
types that keep tests uncovered, most tests first. --list also prints every
covered test name. Needs the onnx Python package; never used by the library.
"""
import collections
import json
import os
import subprocess
import sys

import onnx


def registered(binary):
    out = subprocess.run([binary, "plugins", "--json"], check=True, capture_output=True, text=True).stdout
    versions = collections.defaultdict(list)
    for c in json.loads(out)["creators"]:
        if c["namespace"] == "" and c["version"].isdigit():
            versions[c["name"]].append(int(c["version"]))
    return versions


def main():
    if len(sys.argv) < 3:
        print(__doc__.strip().splitlines()[2])
        return 2
    versions = registered(sys.argv[1])
    root = sys.argv[2]
    covered, missing = [], collections.Counter()
    tests = sorted(d for d in os.listdir(root) if os.path.isfile(os.path.join(root, d, "model.onnx")))
    for t in tests:
        m = onnx.load(os.path.join(root, t, "model.onnx"), load_external_data=False)
        opset = {o.domain or "ai.onnx": o.version for o in m.opset_import}
        lacks = set()
        for node in m.graph.node:
            domain = node.domain or "ai.onnx"
            if domain != "ai.onnx" or not any(v <= opset.get(domain, 0) for v in versions.get(node.op_type, [])):
                lacks.add(node.op_type if domain == "ai.onnx" else domain + "::" + node.op_type)
        if lacks:
            missing.update(lacks)
        else:
            covered.append(t)
    print("%d of %d node tests use only registered ops" % (len(covered), len(tests)))
    print("ops that keep tests uncovered (tests):")
    for op, n in missing.most_common():
        print("  %-32s %d" % (op, n))
    if "--list" in sys.argv:
        print("\n".join(covered))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # output cut short by a pager or head
        sys.exit(0)
