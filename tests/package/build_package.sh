#!/usr/bin/env bash
# Builds the .deb (or .rpm) once with CPack into OUT_DIR, for every test that installs it
# (ctest fixture package_KIND: package_test.sh and the fleet playbook's run).
# usage: build_package.sh deb|rpm BUILD_DIR OUT_DIR
set -uo pipefail
kind=$1 build=$2 out=$3
case $kind in
  deb) tool=dpkg-deb ;;
  rpm) tool=rpmbuild ;;
  *) echo "usage: build_package.sh deb|rpm BUILD_DIR OUT_DIR" >&2; exit 2 ;;
esac
command -v "$tool" >/dev/null || { echo "SKIP: $tool is not installed (packaging/install-deps.sh --test installs it)"; exit 77; }
rm -rf "$out" && mkdir -p "$out" || exit 1
gen=$(tr a-z A-Z <<<"$kind")
cpack --config "$build/CPackConfig.cmake" -G "$gen" -B "$out" >"$out/cpack.log" 2>&1 ||
  { cat "$out/cpack.log" >&2; echo "FAIL: cpack -G $gen failed" >&2; exit 1; }
pkg=$(ls "$out"/*."$kind" 2>/dev/null | head -1)
[ -n "$pkg" ] || { echo "FAIL: cpack made no .$kind in $out" >&2; exit 1; }
echo "built $pkg"
