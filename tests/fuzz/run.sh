#!/usr/bin/env bash
# Runs every libFuzzer target of a DISKPROBE_FUZZ=ON build for SECONDS each, one after the
# other, on a corpus seeded from the profiles, the fixtures and the vendors' fio lines.
# Usage: tests/fuzz/run.sh [--together] BUILD_DIR SECONDS [TARGET...]   (default: every target)
# --together runs the targets at once, each at nice 19 in a libFuzzer job of its own (the
# long run by hand: tests/fuzz/run.sh --together build-fuzz 1800).
# A crash fails the script; its input is left as BUILD_DIR/fuzz-artifacts/TARGET/crash-*
# for a regression test.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
together=0
if [ "${1:-}" = --together ]; then together=1; shift; fi
build=$(cd "$1" && pwd)
seconds=$2
shift 2
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(profile_fuzz fio_cli_fuzz fio_job_fuzz expect_fuzz report_fuzz sysfs_fuzz)

seed() {  # target corpus-dir
  local t=$1 dir=$2 f n=0
  case $t in
    profile_fuzz)
      cp "$top"/profiles/builtin/*.json "$dir"/
      # A profile that extends another, the other after the separator.
      { printf '{"extends": "base", "workload": {"iodepth": 4}}\n----\n'; cat "$top/profiles/builtin/essd-plx-iops.json"; } \
        >"$dir/extends-seed" ;;
    fio_cli_fuzz) cp "$top"/tests/fuzz/seeds/fio_cli/* "$dir"/ ;;
    fio_job_fuzz)
      # fio's own examples/ where the workplace keeps them (read, never copied into the project).
      if [ -d "$top/../shared/fio-examples" ]; then cp "$top"/../shared/fio-examples/*.fio "$dir"/; fi
      printf '[global]\nbs=($pagesize*2)\n[a]\nrw=randread\ninclude inc.fio\n----\niodepth=($ncpus*4)\n' >"$dir/include-seed" ;;
    expect_fuzz) cp "$top"/tests/fuzz/seeds/expect/* "$dir"/ ;;
    report_fuzz)
      cp "$top"/tests/fixtures/reports/*.json "$dir"/
      { cat "$top/tests/fixtures/reports/latency-run-a.json"; printf '\n----\n'
        cat "$top/tests/fixtures/reports/latency-run-b.json"; } >"$dir/compare-seed" ;;
    sysfs_fuzz)
      # Every fixture file as "NAME\nCONTENT", the part format sysfs_fuzz reads.
      while IFS= read -r -d '' f; do
        n=$((n + 1))
        { basename "$f"; cat "$f"; } >"$dir/fixture-$n"
      done < <(find "$top/tests/fixtures" -type f -size -64k ! -name '*.sh' ! -name '*.json' -print0) ;;
  esac
}

fuzz() {  # target: runs it, then prints its executions, peak memory and corpus size
  local t=$1 corpus=$build/fuzz-corpus/$1 artifacts=$build/fuzz-artifacts/$1
  local log=$build/fuzz-artifacts/$t.log
  mkdir -p "$corpus" "$artifacts"
  [ -n "$(ls -A "$corpus")" ] || seed "$t" "$corpus"
  echo "=== fuzzing $t for ${seconds}s (corpus $corpus: $(ls "$corpus" | wc -l) inputs)"
  local how=() status=0
  # -jobs=1 keeps the fuzzer in a child that libFuzzer restarts; its log is fuzz-0.log in $PWD.
  [ $together = 1 ] && how=(nice -n 19)
  # -rss_limit_mb: a blow-up (a 126 KB cpus_allowed list took 2.6 GiB) is a finding too.
  (cd "$artifacts" && "${how[@]}" "$build/tests/fuzz/$t" -max_total_time="$seconds" -max_len=65536 \
     -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 -artifact_prefix="$artifacts/" \
     $([ $together = 1 ] && echo -jobs=1) "$corpus" >"$log" 2>&1) || status=$?
  [ $together = 1 ] && [ -f "$artifacts/fuzz-0.log" ] && cat "$artifacts/fuzz-0.log" >>"$log"
  if [ $status -ne 0 ] || ls "$artifacts"/crash-* "$artifacts"/leak-* "$artifacts"/oom-* "$artifacts"/timeout-* \
       >/dev/null 2>&1; then
    echo "=== $t found a crash (log $log):"
    grep -E -m1 -A12 '^==[0-9]+==ERROR|^SUMMARY|ERROR: libFuzzer' "$log" || tail -20 "$log"
    return 1
  fi
  echo "=== $t: $(grep -E '^stat::number_of_executed_units' "$log" | tail -1 | tr -s ' ') corpus $(ls "$corpus" | wc -l) inputs"
}

failed=0
if [ $together = 1 ]; then
  pids=()
  for t in "${targets[@]}"; do fuzz "$t" & pids+=($!); done
  for p in "${pids[@]}"; do wait "$p" || failed=1; done
else
  for t in "${targets[@]}"; do fuzz "$t" || failed=1; done
fi
exit $failed
