#!/usr/bin/env bash
# Downloads the pinned scikit-image wheel with pip (no dependencies) into a
# cache folder and extracts its skimage/data/page.png (a scanned text page,
# BSD-3-Clause, scikit-image's licence) for the OCR example and its peer.
#   bench/models/fetch_image.sh [CACHE_DIR]   (default: .models/ in the repository, ignored by git)
# Prints the image's path.
set -euo pipefail
VERSION=0.26.0
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
CACHE="${1:-$ROOT/.models}"
OUT="$CACHE/scikit-image-$VERSION"
if [ ! -s "$OUT/page.png" ]; then
    mkdir -p "$CACHE/wheels" "$OUT"
    if ! ls "$CACHE"/wheels/scikit_image-"$VERSION"-*.whl >/dev/null 2>&1; then
        python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$CACHE/wheels" \
            "scikit-image==$VERSION" >&2
    fi
    WHEEL="$(ls "$CACHE"/wheels/scikit_image-"$VERSION"-*.whl | head -n 1)"
    python3 - "$WHEEL" "$OUT" <<'PY'
import os, sys, zipfile
wheel, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    data = z.read("skimage/data/page.png")
tmp = os.path.join(out, "page.png.part")
with open(tmp, "wb") as f:
    f.write(data)
os.replace(tmp, os.path.join(out, "page.png"))
PY
fi
echo "$OUT/page.png"
