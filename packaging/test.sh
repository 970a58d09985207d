#!/usr/bin/env bash
# Installs what is missing, builds with -Werror and runs every test through ctest (real
# drivers in a QEMU guest too); fuzzes each input parser briefly (clang, tests/fuzz); then
# builds again with AddressSanitizer + UndefinedBehaviorSanitizer and runs the suite a second
# time (all but the QEMU test bed and the fleet playbook's run).
# Integration tests need root and loop devices; without them they are reported as skipped.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

packaging/install-deps.sh --test

jobs=$(nproc)
run_suite() {  # build-dir, extra cmake args...
  local dir=$1; shift
  echo "=== building $dir ($*)"
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDISKPROBE_WERROR=ON "$@" >/dev/null
  cmake --build "$dir" -j"$jobs"
  echo "=== testing $dir"
  ctest --test-dir "$dir" --output-on-failure "${ctest_args[@]}"
}

ctest_args=()
run_suite build-test
# libFuzzer targets (clang), in a build directory of their own and only here: each input
# parser fuzzed for 12 s on a corpus kept between runs. Not again under the ASan suite below.
echo "=== fuzzing (tests/fuzz, clang)"
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ -DDISKPROBE_FUZZ=ON \
      -DDISKPROBE_TESTS=OFF >/dev/null
cmake --build build-fuzz -j"$jobs" --target fuzz
tests/fuzz/run.sh build-fuzz 12
# The QEMU test bed (label vm) and the fleet playbook's run of the .deb (label fleet) ran
# above; under ASan they would boot the same guest and install the same package again, slower.
ctest_args=(-LE '^(vm|fleet)$')
# halt_on_error: a sanitizer report fails the test instead of scrolling past.
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
run_suite build-asan -DDISKPROBE_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
