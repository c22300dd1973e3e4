#!/usr/bin/env bash
# Build plugrt and run the demo on its bundled defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target plugrt_cli -j"$(nproc)"
exec build/tools/plugrt/plugrt demo "$@"
