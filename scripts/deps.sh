#!/usr/bin/env bash
# Installs the Debian packages plugrt needs, if any is missing. Safe to run
# again. The CUDA toolkit is optional: without nvcc the CPU backend alone is
# built.
set -euo pipefail
pkgs=(build-essential cmake ninja-build pkg-config libyaml-dev libcjson-dev libprotobuf-c-dev protobuf-c-compiler libpng-dev)
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "plugrt: installing ${missing[*]}"
    SUDO=""
    if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
