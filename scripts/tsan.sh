#!/usr/bin/env bash
# ThreadSanitizer build of the concurrency tests (scripts/test.sh runs it
# after the plain and ASan builds; it can also run on its own):
#   build-tsan/   -DPLUGRT_TSAN=ON, CPU backend only, Debug; only the three
#                 test programs below are built
# Runs the cases that use several threads at once: the thread pool, the
# registry under concurrent lookups and registration, and eight execution
# contexts on four threads. Any data race reported fails the run. On the
# 2-core development machine the whole script (configure, build, run) took
# 20 s.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh || exit 1
jobs=$(nproc)
dir=build-tsan
mkdir -p "$dir"
echo "== configure $dir"
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DPLUGRT_TSAN=ON -DPLUGRT_CUDA=OFF >"$dir/configure.log" 2>&1 ||
    { cat "$dir/configure.log"; exit 1; }
echo "== build $dir"
cmake --build "$dir" -j"$jobs" --target test_engine_threadpool test_registry_registry test_runtime_engine \
    >"$dir/build.log" 2>&1 || { tail -50 "$dir/build.log"; exit 1; }
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
status=0
run() { # program, cases...
    local prog=$1
    shift
    for c in "$@"; do
        echo "== $prog $c"
        "$dir/$prog" "$c" || status=1
    done
}
run tests/engine/test_engine_threadpool every_index_once invalid_size_is_refused out_of_memory_is_clean
run tests/registry/test_registry_registry registry_errors_are_per_registry_and_thread \
    registry_global_first_use_from_threads registry_concurrent_lookups_during_registration
run tests/runtime/test_runtime_engine eight_contexts_on_four_threads_identical_outputs
if [ $status = 0 ]; then echo "tsan: no data race found"; else echo "tsan: FAILED"; fi
exit $status
