#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: run the test suite of a CUDA build (its GPU
# tests then run instead of skipping) and every benchmark with its peer
# comparison (PyTorch / torchvision / ONNX Runtime must be importable).
#   scripts/gpu-check.sh [BUILD_DIR] [RESULTS_DIR]
# BUILD_DIR defaults to build/ (configure it with CUDA: nvcc must have been
# found). Results: ctest.log, dcn.json, dcn-sweep.txt, nms.json and the
# printed tables.
# Environment:
#   PRT_GPU_CHECK_TESTS="deform_conv nms"  run only these test programs
#       (BUILD_DIR/tests/plugins/NAME/test_*), directly rather than through
#       ctest: for a build tree copied to another machine, whose ctest files
#       name the paths of the machine that built it.
#   PRT_GPU_CHECK_SWEEP=0  skip the DCN sweeps, fp16 and fp32 (the fused kernels with each tile
#       and the im2col path, forced through PRT_DCN_CUDA_KERNEL).
#   PRT_GPU_CHECK_NMS=0  skip the NMS benchmark.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:-bench-results}
mkdir -p "$out"
status=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader || true
date -u +"date: %Y-%m-%d %H:%M UTC"
echo "cpu: $(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2 | sed "s/^ //"), $(nproc) cores"
if [ -n "${PRT_GPU_CHECK_TESTS:-}" ]; then
    echo "== test programs: $PRT_GPU_CHECK_TESTS ($build)"
    : >"$out/ctest.log"
    for t in $PRT_GPU_CHECK_TESTS; do
        for prog in "$build"/tests/plugins/"$t"/test_*; do
            [ -x "$prog" ] || continue
            PRT_TEST_DATA_DIR=$PWD/tests/data "$prog" >>"$out/ctest.log" 2>&1 || status=1
            echo "$(basename "$prog"): $(tail -1 "$out/ctest.log")"
        done
    done
    grep -E "FAIL|failed:" "$out/ctest.log" | head -20
else
    echo "== test suite ($build)"
    (cd "$build" && ctest --output-on-failure -j4 --timeout 900) >"$out/ctest.log" 2>&1 || status=1
    grep -E "tests passed|tests failed|Failed|\*\*\*" "$out/ctest.log" | tail -15
    awk '/^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$/ {p += $1; f += $3; s += $5}
         END {printf "cases: %d passed, %d failed, %d skipped\n", p, f, s}' "$build/Testing/Temporary/LastTest.log"
fi
echo "== ModulatedDeformConv2d"
python3 bench/dcn/peer_dcn.py --bench "$build/bench/dcn/bench_dcn" --out "$out/dcn.json" 2>&1 | tee "$out/dcn.txt" || status=1
if [ "${PRT_GPU_CHECK_SWEEP:-1}" != 0 ]; then
    echo "== ModulatedDeformConv2d fp16, every CUDA kernel (PRT_DCN_CUDA_KERNEL)"
    for k in im2col fused fused128x128 fused64x128 fused64x64 fused16x128 wgmma256x128 wgmma128x128 wgmma64x128 wgmma256x128k64 grouped128; do
        echo "-- $k"
        PRT_DCN_CUDA_KERNEL=$k "$build/bench/dcn/bench_dcn" --no-cpu --types f16 || status=1
    done 2>&1 | tee "$out/dcn-sweep.txt"
    echo "== ModulatedDeformConv2d fp32, every CUDA kernel (PRT_DCN_CUDA_KERNEL)"
    for k in im2col fused wgmma3xtf32_256x128 wgmma3xtf32_128x128 wgmma3xtf32_64x128 grouped128_3xtf32; do
        echo "-- $k"
        PRT_DCN_CUDA_KERNEL=$k "$build/bench/dcn/bench_dcn" --no-cpu --types f32 || status=1
    done 2>&1 | tee "$out/dcn-sweep-f32.txt"
fi
if [ "${PRT_GPU_CHECK_NMS:-1}" != 0 ]; then
    echo "== NMS"
    python3 bench/nms/peer_nms.py --bench "$build/bench/nms/bench_nms" --out "$out" 2>&1 | tee "$out/nms.txt" || status=1
fi
exit $status
