#!/usr/bin/env bash
# Hostile input from the command line (issue 13), no root: each case crashed, hung or
# printed a megabyte-long line before. Every one must now be a clear one-line error with
# exit 2 (or valid JSON where the bytes are not UTF-8: U+FFFD in their place).
# usage: hostile_input_test.sh DISKPROBE FIXTURES_DIR
set -uo pipefail
# shellcheck source=lib.sh
. "$(dirname "$(realpath "$0")")/lib.sh"
bin=$(realpath "$1") fixture=$(realpath "$2")/hostile/nvme-model-0xff
work=$(mktemp -d "${TMPDIR:-/tmp}/diskprobe-hostile-XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
# one_short_line "what": stderr is one line of at most 400 bytes.
one_short_line() {
  local lines bytes
  lines=$(wc -l <err) bytes=$(wc -c <err)
  [ "$lines" -le 1 ] && [ "$bytes" -le 400 ] || fail "$1: stderr is $lines lines, $bytes bytes: $(head -c 200 err)"
}
contains() { grep -qF -- "$2" "$1" || fail "$3: '$2' not in $1: $(head -c 300 "$1")"; }
# valid_json FILE "what" [PYTHON-EXPR]: FILE parses as JSON (d), and the expression holds.
valid_json() {
  python3 - "$1" "${3:-True}" 2>py.err <<'PY' || fail "$2: not valid JSON or the check failed: $(tail -1 py.err)"
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
assert eval(sys.argv[2]), sys.argv[2]
PY
}
export DISKPROBE_JOURNAL=${DISKPROBE_JOURNAL:-$work/journal.json}
nested() { python3 -c "import sys; n=int(sys.argv[1]); print(sys.argv[2] % ('['*n + ']'*n))" "$@"; }

# SIGSEGV: the stack overflowed while the error for a 60,000-deep value was built.
nested 60000 '{"workload":{"rw":%s}}' >deep.json
run 2 "profile show of a profile nested 60000 deep" profile show ./deep.json
one_short_line "deep profile"
contains err "nested more than 64 deep" "deep profile"
run 2 "run --profile of a profile nested 60000 deep" run --profile ./deep.json ./never.dat
one_short_line "deep profile run"

# abort: the number overflow exception was not caught.
echo '{"workload":{"iodepth":1e400}}' >big.json
run 2 "iodepth 1e400" profile show ./big.json
one_short_line "1e400"
contains err "out of range" "1e400"

# abort: --name not UTF-8, when the JSON is written.
run 0 "profile show --json --name 0xFF" profile show essd-plx-latency --name $'\xff' --json
valid_json out "profile show --name 0xFF" 'd["name"] == "\ufffd"'
# Not a name diskprobe accepts: bad input (2), with the verdict document still valid JSON.
run 2 "check 0xFF --json" check $'\xff' --json
valid_json out "check 0xFF" 'd["device"] == "\ufffd" and not d["safe"]'

# A name that names nothing is refused (3, not-found), one that is no block device is bad input
# (2), from check, run and tune alike; tune exited 1 for both, and --restore ignored a DEVICE.
mkfifo names.fifo
for target in nosuchdev /dev/nosuchdev; do
  for cmd in "check $target" "run --profile essd-plx-latency $target" "tune $target" "tune $target --apply"; do
    read -ra words <<<"$cmd"
    run 3 "$cmd: names nothing" "${words[@]}" --json
    valid_json out "$cmd" 'd["exit_code"] == 3 if "exit_code" in d else not d["safe"]'
    [ "${words[0]}" = check ] && continue
    contains err "$target refused by the preflight" "$cmd"
    valid_json out "$cmd" 'd["verdict"]["reasons"][0]["code"] == "not-found"'
    [ "$(grep -c '^diskprobe: error' err)" -eq 1 ] || fail "$cmd: not one error line: $(cat err)"
  done
done
for target in "$work/names.fifo" /dev/null /dev/zero; do
  for cmd in "check $target" "run --profile essd-plx-latency $target" "tune $target" "tune $target --apply"; do
    read -ra words <<<"$cmd"
    run 2 "$cmd: no block device" "${words[@]}"
    contains "$([ "${words[0]}" = check ] && echo out || echo err)" "$target is not a block device" "$cmd"
  done
  run 2 "tune $target --json: the error document" tune "$target" --json
  valid_json out "tune $target --json" 'd["exit_code"] == 2 and "not a block device" in d["error"]'
  one_short_line "tune $target"
done
run 2 "tune --restore with a DEVICE" tune --restore nosuchdev
contains err "tune --restore takes no DEVICE" "tune --restore DEVICE"
one_short_line "tune --restore DEVICE"

# abort: sysfs strings (model, serial, a mount point, a C-state name) not UTF-8.
sys=(--sysfs "$fixture/sys" --procfs "$fixture/proc")
run 0 "devices --json, model with 0xFF" devices --json "${sys[@]}"
valid_json out "devices model 0xFF" '"\ufffd" in d[0]["model"] and "\ufffd" in d[0]["serial"]'
run 3 "check --json, a mount point with 0xFF" check nvme0n1 --json "${sys[@]}"
valid_json out "check mount 0xFF" 'any("\ufffd" in m for m in d["mounts"])'
run 0 "tune --json, a C-state name with 0xFF" tune nvme0n1 --json "${sys[@]}"
valid_json out "tune cstate 0xFF" 'any("\ufffd" in c["name"] for c in d["topology"]["cstates"])'

# Unbounded reads: /dev/zero as a profile, as what a profile extends, a pipe, a report.
run 2 "--profile /dev/zero" profile show /dev/zero
one_short_line "/dev/zero"
contains err "character device" "/dev/zero"
echo '{"extends": "/dev/zero", "workload": {"iodepth": 2}}' >ext.json
run 2 "extends /dev/zero" profile show ./ext.json
contains err "character device" "extends /dev/zero"
mkfifo fifo.json
run 2 "a profile that is a pipe is refused without waiting for a writer" profile show ./fifo.json
contains err "a pipe" "fifo"
run 2 "compare /dev/zero" compare /dev/zero /dev/zero
contains err "character device" "compare /dev/zero"

# Sizes: a profile over the limit, a value of almost a megabyte, a 126 KB word on the line.
head -c $((2 << 20)) /dev/zero | tr '\0' ' ' >huge.json
run 2 "a 2 MiB profile" profile show ./huge.json
one_short_line "2 MiB profile"
python3 -c 'print("{\"workload\":{\"rw\":\"%s\", \"%s\": 1}}" % ("x" * 900000, "k" * 900000))' >long.json
run 2 "a 900 KB value and key are quoted short" profile show ./long.json
one_short_line "900 KB value"
python3 -c 'print("{%s \"workload\": {}}" % "".join("\"k%d\": 1, " % i for i in range(20000)))' >many.json
run 2 "20000 unknown fields make one short line" profile show ./many.json
contains err "and 19990 more" "many problems"
[ "$(wc -c <err)" -le 2000 ] || fail "many problems: $(wc -c <err) bytes"
run 2 "--cpus_allowed of 126 KB" profile show essd-plx-latency --cpus_allowed "$(python3 -c 'print("0-4095,"*18000 + "0")')"
one_short_line "126 KB cpus_allowed"
# The same list from a file: a set of 4096 CPUs, not 73 million entries.
python3 -c 'print("{\"extends\": \"essd-plx-latency\", \"workload\": {\"cpus_allowed\": \"%s\"}}" % ("0-4095," * 4000 + "0"))' >cpus.json
run 0 "cpus_allowed 0-4095 said 4000 times" profile show ./cpus.json --json
valid_json out "cpus_allowed set" 'd["cpus_allowed"] == list(range(4096))'
[ "$(wc -c <out)" -le 100000 ] || fail "cpus_allowed JSON is $(wc -c <out) bytes"
run 0 "cpus_allowed in text, as ranges" profile show ./cpus.json
contains out "cpus_allowed=0-4095 " "compact CPU list"
# Refused before anything is made: never.dat is never created.
run 2 "--expect of 4000 bytes" run --profile essd-plx-latency ./never.dat --expect "iops>=$(printf '9%.0s' {1..4000})"
one_short_line "long --expect"
[ ! -e never.dat ] || fail "a refused run made its file"

# compare/aggregate: a report nested 60,000 deep where the reader dumps a value.
nested 60000 '{"schema_version": 1, "read": {"ios": 1}, "expectations": [{"actual": %s}]}' >deep-report.json
run 2 "compare of a report nested 60000 deep" compare deep-report.json deep-report.json
one_short_line "deep report"
run 2 "aggregate of a report with 1e400" aggregate <(echo '{"schema_version": 1e400, "read": {}}')
one_short_line "1e400 report"

# A run whose job name and file path are not UTF-8: the report comes out, in every format.
# A file target in $work: no device, no tuning, no root needed.
common=(run --profile local-randread-iops "$work/"$'\xff'.dat --size 4M --runtime 1 --numjobs 1 --direct 0
        --name $'job\xff')
run 0 "run --output-format json, name and path 0xFF" "${common[@]}" --output-format json
valid_json out "run report" 'd["job"]["name"] == "job\ufffd" and "\ufffd" in d["device"]'
run 0 "run --output-format junit and --report, name 0xFF" "${common[@]}" --output-format junit \
  --output r.xml --report r.html
python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1]); open(sys.argv[2], encoding="utf-8").read()' \
  r.xml r.html 2>py.err || fail "JUnit or HTML with 0xFF is not valid UTF-8 XML/HTML: $(tail -1 py.err)"
run 0 "run --output-format fio-json+, name and path 0xFF" "${common[@]}" --output-format fio-json+ --output f.json
valid_json f.json "fio-json+ report" 'd["jobs"][0]["jobname"] == "job\ufffd"'
run 0 "run --output-format openmetrics, name and path 0xFF" "${common[@]}" --output-format openmetrics --output m.prom
python3 -c 'import sys; open(sys.argv[1], encoding="utf-8").read()' m.prom 2>py.err ||
  fail "openmetrics with 0xFF is not UTF-8: $(tail -1 py.err)"

[ $failures -eq 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
echo "all hostile-input cases passed"
