#!/usr/bin/env bash
# Installs what is missing, builds with -Werror and runs every test through ctest (real
# drivers in a QEMU guest too); meanwhile, at SCHED_IDLE, builds once more with clang,
# AddressSanitizer + UndefinedBehaviorSanitizer and libFuzzer's coverage, fuzzes each input
# parser briefly (tests/fuzz) and runs the unit tests in that build; then the rest of the suite
# a second time there (all but the QEMU test bed, the fleet playbook's run, the timed
# comparisons with fio and the cases tagged [slow]). Every entry's time is printed at the end.
# Integration tests need root and loop devices; without them they are reported as skipped.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

packaging/install-deps.sh --test

jobs=$(nproc)
# Each step with the time since the script started (ctest prints each test's own; every
# entry's time is listed again, slowest first, at the end).
say() { printf '=== [%dm%02ds] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }
logs=$(mktemp -d)
bg=
trap 'rc=$?; [ -z "$bg" ] || kill -- -"$bg" 2>/dev/null || true; [ $rc = 0 ] || summary; rm -rf "$logs"' EXIT
ctest_logged() {  # name, ctest args...: ctest, its output kept for the summary
  local name=$1; shift
  ctest "$@" 2>&1 | tee "$logs/$name.ctest"
  return "${PIPESTATUS[0]}"
}
summary() {
  say "time per entry, slowest first"
  local f
  for f in "$logs"/*.ctest; do
    [ -f "$f" ] || continue
    grep -o 'Test *#[0-9]*: [^ ]* .*sec$' "$f" |
      sed -E "s/^Test *#[0-9]*: ([^ ]*) .* ([0-9.]+) sec$/\\2 \\1 ($(basename "$f" .ctest))/" || true
  done | sort -rn | awk '{ printf "  %8.1f s  %s %s\n", $1, $2, $3 }'
}

# Debug info as line tables only (-g1): backtraces and sanitizer reports keep file and line,
# and every file compiles in a third less time (a test file: 12.5 s at -O2 -g, 8.9 s at -g1).
say "building build-test (gcc, -Werror)"
cmake -S . -B build-test -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
      -DDISKPROBE_WERROR=ON >/dev/null
cmake --build build-test -j"$jobs"

# The clang build, the fuzzing and the sanitizer build's unit tests run while the first suite
# runs, at SCHED_IDLE (chrt --idle): they take only CPU time the suite leaves idle (most of its
# entries wait on throttled devices, fio's runs and the guest's I/O), and the suite's
# processes preempt them at once, so what the suite times is timed as before. One clang build
# serves both: every library with ASan+UBSan and libFuzzer's coverage, at -O1 (in 12 s the
# fuzzers ran 81-122% of the inputs they ran at -O2; the tests need no more). Each input parser
# is fuzzed for 12 s on a corpus kept between runs. unit.engine (real I/O against the clock)
# waits for the suite's end with the rest.
# halt_on_error: a sanitizer report fails the test instead of scrolling past.
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
say "building build-asan in the background (clang: ASan+UBSan, libFuzzer coverage), then fuzzing (tests/fuzz) and its unit tests; log: build-asan.log"
setsid chrt --idle 0 bash -c '
  set -euo pipefail
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
        -DCMAKE_CXX_COMPILER=clang++ -DDISKPROBE_SANITIZE=ON -DDISKPROBE_FUZZ=ON -DDISKPROBE_WERROR=ON >/dev/null
  cmake --build build-asan -j'"$jobs"'
  echo "=== build-asan built after ${SECONDS}s; fuzzing"
  tests/fuzz/run.sh build-asan 12
  echo "=== fuzzed after ${SECONDS}s; unit tests"
  ctest --test-dir build-asan --output-on-failure -j'"$jobs"' -R "^unit\." -E "^unit\.engine$"
  echo "=== done after ${SECONDS}s"
' >build-asan.log 2>&1 &
bg=$!

say "testing build-test"
# -j: the unit and command-line tests side by side; every test that uses a device, the
# clock or a package build is RUN_SERIAL and runs alone.
ctest_logged first --test-dir build-test --output-on-failure -j"$jobs"

say "waiting for the background build, fuzzing and unit tests (build-asan.log)"
if ! wait "$bg"; then
  bg=
  tail -n 80 build-asan.log
  echo "error: the clang build, the fuzzing or the sanitizer unit tests failed: see build-asan.log" >&2
  exit 1
fi
bg=
grep -h '^===' build-asan.log || true
cp build-asan.log "$logs/asan-unit.ctest"

# The suite again in the sanitizer build, but for what ran above (the unit tests but
# unit.engine), the QEMU test bed (label vm), the fleet playbook's run of the .deb (label fleet)
# and the fidelity suites side by side with fio (label fidelity: minutes of alternating timed
# rounds, whose parsing and engine paths the first suite's tests cover), which would boot the
# same guest, install the same package and time the same rounds again, slower.
say "testing build-asan"
ctest_logged asan --test-dir build-asan --output-on-failure -j"$jobs" -LE '^(vm|fleet|fidelity)$' -E '^unit\.'
ctest_logged asan-engine --test-dir build-asan --output-on-failure -R '^unit\.engine$'
summary
say "done"
