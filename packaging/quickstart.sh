#!/usr/bin/env bash
# Installs what is missing, builds diskprobe, and runs the main job (ESSD PL-X latency) on a
# 1 GiB scratch loop device for 5 seconds. Run as root from anywhere in the checkout.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

packaging/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDISKPROBE_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)"
echo "+ build/cmd/diskprobe run --profile essd-plx-latency --scratch 1G --runtime 5"
exec build/cmd/diskprobe run --profile essd-plx-latency --scratch 1G --runtime 5
