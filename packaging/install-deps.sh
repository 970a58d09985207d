#!/usr/bin/env bash
# Installs what diskprobe needs to build and test on Debian 12, and nothing already present.
# Idempotent: a second run installs nothing. Usage: packaging/install-deps.sh [--test]
set -euo pipefail

# go-md2man converts the man page at build time (packaging/CMakeLists.txt).
build_pkgs=(build-essential cmake pkg-config liburing-dev libblkid-dev libspdlog-dev
            nlohmann-json3-dev catch2 util-linux go-md2man)
# The integration tests put real signatures on loop devices with the real tools.
test_pkgs=(e2fsprogs xfsprogs gdisk fdisk dosfstools btrfs-progs cryptsetup-bin lvm2 mdadm fio
           python3 python3-yaml kmod time groff-base man-db dpkg-dev rpm cpio chromium ansible)
# The QEMU test bed (tests/vm/): the guest boots Debian's kernel (fetched by apt-get download
# at test time) with a busybox initramfs and stacks dm, md and LVM on its disks.
test_pkgs+=(qemu-system-x86 busybox-static mdadm dmsetup)

want=("${build_pkgs[@]}")
[ "${1:-}" = "--test" ] && want+=("${test_pkgs[@]}")
# valgrind: tests/perf/bench.py --instructions counts instructions per I/O with callgrind.
[ "${1:-}" = "--test" ] && want+=(valgrind)
# python3-six: fio's fio_jsonplus_clat2csv imports six, which Debian's fio does not depend on.
[ "${1:-}" = "--test" ] && want+=(python3-six)
# promtool (prometheus) and node_exporter read --output-format openmetrics in its test.
[ "${1:-}" = "--test" ] && want+=(prometheus prometheus-node-exporter)
# strace: the tuning test that proves `diskprobe tune` never opens the device.
[ "${1:-}" = "--test" ] && want+=(strace)
# clang and its libFuzzer runtime: the fuzz stage of packaging/test.sh (tests/fuzz).
[ "${1:-}" = "--test" ] && want+=(clang libclang-rt-14-dev)

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#want[@]} packages present"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages: ${missing[*]}; run this script as root to install them" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
