#!/usr/bin/env bash
# Installs what is missing, builds with -Werror and runs every test through ctest (real
# drivers in a QEMU guest too); then builds once more with clang, AddressSanitizer +
# UndefinedBehaviorSanitizer and libFuzzer's coverage, fuzzes each input parser briefly
# (tests/fuzz) and runs the suite a second time in that build (all but the QEMU test bed, the
# fleet playbook's run, the timed comparisons with fio and the cases tagged [slow]).
# Integration tests need root and loop devices; without them they are reported as skipped.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

packaging/install-deps.sh --test

jobs=$(nproc)
# Each step with the time since the script started (ctest prints each test's own).
say() { printf '=== [%dm%02ds] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }
run_suite() {  # build-dir, extra cmake args...
  local dir=$1; shift
  say "building $dir ($*)"
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDISKPROBE_WERROR=ON "$@" >/dev/null
  cmake --build "$dir" -j"$jobs"
  say "testing $dir"
  # -j: the unit and command-line tests side by side; every test that uses a device, the
  # clock or a package build is RUN_SERIAL and runs alone.
  ctest --test-dir "$dir" --output-on-failure -j"$jobs"
}

run_suite build-test
# One clang build for both what follows (it was two, 13 minutes of the CI's time): every
# library with ASan+UBSan and libFuzzer's coverage, at -O1 (in 12 s the fuzzers ran 81-122%
# of the inputs they ran at -O2; the tests need no more). The fuzz targets come first: each
# input parser for 12 s on a corpus kept between runs. Then the suite again, but for the QEMU
# test bed (label vm), the fleet playbook's run of the .deb (label fleet) and the fidelity
# suites side by side with fio (label fidelity: minutes of alternating timed rounds, whose
# parsing and engine paths the first suite's tests cover), which ran above and would boot the
# same guest, install the same package and time the same rounds again, slower.
# halt_on_error: a sanitizer report fails the test instead of scrolling past.
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
say "building build-asan (clang: ASan+UBSan, libFuzzer coverage)"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g -DNDEBUG" \
      -DCMAKE_CXX_COMPILER=clang++ -DDISKPROBE_SANITIZE=ON -DDISKPROBE_FUZZ=ON -DDISKPROBE_WERROR=ON >/dev/null
cmake --build build-asan -j"$jobs"
say "fuzzing (tests/fuzz)"
tests/fuzz/run.sh build-asan 12
say "testing build-asan"
ctest --test-dir build-asan --output-on-failure -j"$jobs" -LE '^(vm|fleet|fidelity)$'
say "done"
