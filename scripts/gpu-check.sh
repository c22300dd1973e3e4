#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: run the test suite of a CUDA build (its GPU
# tests then run instead of skipping) and every benchmark with its peer
# comparison (PyTorch / torchvision / ONNX Runtime must be importable).
#   scripts/gpu-check.sh [BUILD_DIR] [RESULTS_DIR]
# BUILD_DIR defaults to build/ (configure it with CUDA: nvcc must have been
# found). Results: ctest.log, dcn.json, nms.json and the printed tables.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:-bench-results}
mkdir -p "$out"
status=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader || true
date -u +"date: %Y-%m-%d %H:%M UTC"
echo "cpu: $(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2 | sed "s/^ //"), $(nproc) cores"
echo "== test suite ($build)"
(cd "$build" && ctest --output-on-failure -j4 --timeout 900) >"$out/ctest.log" 2>&1 || status=1
grep -E "tests passed|tests failed|Failed|\*\*\*" "$out/ctest.log" | tail -15
awk '/^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$/ {p += $1; f += $3; s += $5}
     END {printf "cases: %d passed, %d failed, %d skipped\n", p, f, s}' "$build/Testing/Temporary/LastTest.log"
echo "== ModulatedDeformConv2d"
python3 bench/dcn/peer_dcn.py --bench "$build/bench/dcn/bench_dcn" --out "$out/dcn.json" 2>&1 | tee "$out/dcn.txt" || status=1
echo "== NMS"
python3 bench/nms/peer_nms.py --bench "$build/bench/nms/bench_nms" --out "$out" 2>&1 | tee "$out/nms.txt" || status=1
exit $status
