#!/usr/bin/env bash
# Packs what scripts/gpu-check.sh needs from a CUDA build into one archive,
# for a GPU machine that has the CUDA runtime but not this machine's build
# tools or -dev packages: the GPU test programs (stripped), the plugrt
# command, the benchmark programs, the plugin libraries the tests load, and
# the shared libraries they link that such a machine may lack (libyaml,
# libprotobuf-c, libcjson, libpng).
#   scripts/gpu-pack.sh BUILD_DIR OUT.tar.gz   (or OUT.tar.xz: xz, about 5x smaller)
# On the GPU machine, from the repository root at the same path as here:
#   tar xzf OUT.tar.gz && LD_LIBRARY_PATH=$PWD/BUILD_DIR/gpu-libs \
#     PRT_GPU_CHECK_TESTS="..." scripts/gpu-check.sh BUILD_DIR
set -euo pipefail
build=${1:?build dir}
out=${2:?output archive}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
keep() { # path relative to the repository root
    mkdir -p "$tmp/$(dirname "$1")"
    if file "$1" | grep ELF >/dev/null; then strip -o "$tmp/$1" "$1"; else cp "$1" "$tmp/$1"; fi
}
for d in compat conformance engine runtime plugins/deform_conv plugins/nms plugins/swish plugins/template; do
    [ -d "$build/tests/$d" ] || continue
    find "$build/tests/$d" -maxdepth 1 -type f \( -name "test_*" -o -name "*.so" -o -name "prt_*" \) -executable |
        while read -r f; do keep "$f"; done
done
for f in "$build"/tools/plugrt/plugrt "$build"/bench/*/bench_* "$build"/libplugrt.so* "$build"/tests/*/lib*.so; do
    [ -f "$f" ] && keep "$f"
done
mkdir -p "$tmp/$build/gpu-libs"
for lib in libyaml-0.so.2 libprotobuf-c.so.1 libcjson.so.1 libpng16.so.16; do
    p=$(ldconfig -p | awk -v l="$lib" '$1 == l && !f {print $NF; f = 1}')
    [ -n "$p" ] && cp -L "$p" "$tmp/$build/gpu-libs/"
done
case "$out" in
*.xz) XZ_OPT=${XZ_OPT:--6 -T0} tar cJf "$out" -C "$tmp" . ;; # the test programs each embed the kernels: xz packs them ~5x smaller
*) tar czf "$out" -C "$tmp" . ;;
esac
echo "$out: $(du -h "$out" | cut -f1)"
