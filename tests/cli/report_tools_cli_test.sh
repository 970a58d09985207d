#!/usr/bin/env bash
# compare and aggregate from the command line, without root: on the two real scratch-run
# reports kept in tests/fixtures/reports, and their usage errors (exit 2, one line, no change).
# usage: report_tools_cli_test.sh DISKPROBE FIXTURES_DIR
set -uo pipefail
bin=$1 reports=$2/reports
a=$reports/latency-run-a.json b=$reports/latency-run-b.json
work=$(mktemp -d "${TMPDIR:-/tmp}/diskprobe-cli-XXXXXX")
trap 'rm -rf "$work"' EXIT
failures=0
expect() {  # expect CODE "what" ARGS...: exit code CODE; stdout+stderr kept in $work/out
  local want=$1 what=$2; shift 2
  "$bin" "$@" >"$work/out" 2>"$work/err"
  local got=$?
  if [ "$got" -ne "$want" ]; then
    echo "FAIL: $what: exit $got, want $want: $(cat "$work/err")" >&2
    failures=$((failures + 1))
  else
    echo "ok: $what"
  fi
}
contains() {  # contains FILE TEXT "what"
  grep -qF -- "$2" "$work/$1" || { echo "FAIL: $3: '$2' not in $1: $(head -3 "$work/$1")" >&2; failures=$((failures + 1)); }
}

expect 0 "compare a run with itself at 0%" compare "$a" "$a" --max-regression 0%
contains out "B is within 0% of A" "self-compare verdict"
expect 0 "compare the two real runs without a tolerance" compare "$a" "$b"
contains out "write  p99.9 latency" "table rows"
python3 - "$a" "$work/worse.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["write"]["iops"] *= 0.5
json.dump(j, open(sys.argv[2], "w"))
PY
expect 4 "half the IOPS is a regression beyond 5%" compare "$a" "$work/worse.json" --max-regression 5%
contains out "-50.0%" "the change"
contains out "REGRESSION" "the flagged row"
expect 0 "an improvement is not" compare "$work/worse.json" "$a" --max-regression 5%
expect 0 "aggregate of real reports" aggregate "$a" "$b"
contains out "no volume failed its expectations" "aggregate verdict"

expect 2 "compare needs two files" compare "$a"
contains err "usage: diskprobe compare" "compare usage"
expect 2 "a missing file" compare "$a" "$work/missing.json"
contains err "missing.json" "the missing file named"
expect 2 "a bad percentage" compare "$a" "$b" --max-regression lots
contains err "'lots' is not a percentage" "the bad value named"
expect 2 "aggregate needs files" aggregate
expect 2 "--report only with run" profiles --report "$work/x.html"
contains err "--report FILE.html goes with 'run'" "--report misuse"
[ ! -e "$work/x.html" ] || { echo "FAIL: a refused --report wrote a file" >&2; failures=$((failures + 1)); }
expect 2 "--max-regression only with compare" aggregate "$a" --max-regression 5%
expect 2 "an unknown command names the new ones" comparre "$a" "$b"
contains err "compare or aggregate" "the command list"

[ "$failures" -eq 0 ] || { echo "$failures check(s) failed" >&2; exit 1; }
echo "report_tools_cli_test: ok"
