#!/usr/bin/env bash
# What each command takes, from the command line (no device is touched: every case that must
# fail does so before the preflight). Each FAIL here was a silent acceptance before: an option
# of another command ignored (`devices --iodepth 4`), a benchmark run (`run ... --restore`),
# a usage error found after the preflight (exit 3) or after files were laid out, a wrong
# message or exit code.
# usage: command_options_test.sh DISKPROBE FIXTURES_DIR
set -uo pipefail
# shellcheck source=lib.sh
. "$(dirname "$(realpath "$0")")/lib.sh"
bin=$(realpath "$1") fixtures=$(realpath "$2")
work=$(mktemp -d "${TMPDIR:-/tmp}/diskprobe-options-XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
export DISKPROBE_JOURNAL=$work/journal
contains() { grep -qF -- "$2" "$1" || fail "$3: '$2' not in $1: $(head -c 300 "$1")"; }
one_line() { [ "$(grep -c '^diskprobe: error' err)" -eq 1 ] || fail "$1: not one error line: $(cat err)"; }

# Options of another command, refused with the option and the command named.
run 2 "run --restore" run --profile essd-plx-latency --scratch 64M --restore
contains err "'run' takes no --restore" "run --restore"
one_line "run --restore"
run 2 "devices --iodepth" devices --iodepth 4
contains err "'devices' takes no --iodepth (a workload option)" "devices --iodepth"
run 2 "profiles extra" profiles extra
contains err "unexpected argument 'extra': 'profiles' takes none" "profiles extra"
run 2 "devices extra" devices extra
contains err "unexpected argument 'extra'" "devices extra"
run 2 "check --apply --bs" check nosuchdev --apply --bs 1k
contains err "'check' takes no --apply" "check --apply"
run 2 "check --bs" check nosuchdev --bs 1k
contains err "'check' takes no --bs (a workload option)" "check --bs"
run 2 "check --profile" check nosuchdev --profile essd-plx-latency
contains err "'check' takes no --profile" "check --profile"
run 2 "tune --restore --apply" tune --restore --apply
contains err "'tune --restore' takes no --apply" "tune --restore --apply"
run 2 "tune --restore --profile" tune --restore --profile essd-plx-latency
contains err "'tune --restore' takes no --profile" "tune --restore --profile"
run 2 "tune --scratch" tune nosuchdev --scratch 64M
contains err "'tune' takes no --scratch" "tune --scratch"
run 2 "profiles --mode" profiles --mode read
contains err "'profiles' takes no --mode" "profiles --mode"
run 2 "compare --no-tune" compare a.json b.json --no-tune
contains err "'compare' takes no --no-tune" "compare --no-tune"
run 2 "aggregate --keep-files" aggregate a.json --keep-files
contains err "'aggregate' takes no --keep-files" "aggregate --keep-files"
run 2 "accept --keep-files" accept nosuchdev --volume essd-pl1:100GiB --keep-files
contains err "'accept' takes no --keep-files" "accept --keep-files"
run 2 "run --gtod_reduce with accept" accept nosuchdev --volume essd-pl1:100GiB --gtod_reduce
contains err "'accept' takes no --gtod_reduce" "accept --gtod_reduce"

# fio merged silently: two --name jobs ran as one job of the last one's shape, and the last of a
# repeated option won (issue 32). Both are refused, naming what was given, before anything.
run 2 "run with two --name jobs" run --profile essd-plx-latency --scratch 64M --name=writer --rw=write --bs=128k \
  --name=reader --rw=randread --bs=4k
contains err "a second --name (reader after writer) starts a second job" "two --name"
contains err "diskprobe fio --name=A ... --name=B" "two --name"
one_line "two --name"
run 2 "run with --bs twice, fio's and diskprobe's spellings" run --profile essd-plx-latency --scratch 64M -bs=4k --bs 8k
contains err "--bs is given twice (4k, then 8k)" "--bs twice"
run 2 "run with --rw twice, = and space forms" run --profile essd-plx-latency --scratch 64M --rw=read --rw write
contains err "--rw is given twice (read, then write)" "--rw twice"
run 2 "run with a switch twice" run --profile essd-plx-latency --scratch 64M --norandommap --norandommap
contains err "--norandommap is given twice: give it once" "switch twice"
run 2 "run with one setting under two names" run --profile essd-plx-latency --scratch 64M --percentiles 50 \
  --percentile_list=99
contains err "--percentiles (also as --percentile_list) is given twice (50, then 99)" "alias twice"
run 2 "tune with --iodepth twice" tune nosuchdev --profile essd-plx-latency --iodepth 1 --iodepth 2
contains err "--iodepth is given twice (1, then 2)" "tune --iodepth twice"
run 2 "a diskprobe flag twice" devices --json --json
contains err "--json is given twice" "--json twice"
# --expect adds up: two of them pass the parser (and the run stops at the missing device).
run 3 "run with --expect twice" run --profile essd-plx-latency nosuchdev --expect 'iops>=1' --expect 'lat.p99<=10ms'

# What the commands do take still works (fixture trees: nothing real is read or changed).
sys=$fixtures/core/sys
run 0 "devices --json --paranoid --allow-nonzero" --sysfs "$sys" devices --json --paranoid --allow-nonzero
run 0 "profiles --json" profiles --json
run 0 "profile show with overrides and fio's spellings" profile show essd-plx-latency --runtime 5 -direct=1 \
  --ioengine libaio --gtod_reduce=1 --name x --json
run 0 "tune --restore --json, nothing to restore" tune --restore --json
run 0 "--help after another command's option" devices --iodepth 4 --help
run 3 "check --mode read --json --no-paranoid" check nosuchdev --mode read --json --no-paranoid
run 3 "run with its own options" run --profile essd-plx-latency nosuchdev --runtime 5 --no-tune --strict \
  --paranoid --allow-nonzero --output-format json --expect 'iops>=1' --volume essd-pl1:100GiB --tolerance 90% \
  --name x --gtod_reduce --report "$work/r.html" --json
run 3 "run --filename" run --profile essd-plx-latency --filename nosuchdev --runtime 5
run 3 "curve with its own options" curve nosuchdev --profile essd-plx-latency --max-iodepth 4 --step-time 2s \
  --past-knee 1 --no-tune --strict --output-format json
run 3 "accept with its own options" accept nosuchdev --volume essd-pl1:100GiB --tolerance 90% --max-time 600 \
  --no-tune --strict --no-paranoid --json

# Values that need no target are refused before the preflight (2, not 3) and before anything
# is made: no --directory files laid out, no scratch device.
run 2 "run nosuchdev --runtime 99999" run --profile essd-plx-latency nosuchdev --runtime 99999
contains err "runtime 99999 s is above the limit of 86400 s" "runtime 99999"
one_line "runtime 99999"
mkdir -p d
run 2 "run --directory --runtime 99999" run --profile essd-plx-latency --directory "$work/d" --size 64M \
  --runtime 99999
[ -z "$(ls -A d)" ] || fail "run --directory --runtime 99999 laid out files: $(ls d)"
run 2 "run --scratch --runtime 99999" run --profile essd-plx-latency --scratch 64M --runtime 99999
contains err "runtime 99999 s is above the limit" "scratch runtime 99999"
run 2 "run --rate_iops with --rate" run --profile essd-plx-latency nosuchdev --rate_iops 10 --rate 1m
contains err "rate_iops and rate both cap reads" "rate_iops with rate"
# A runtime that truncates to 0 ns meant no limit: the run never ended.
run 2 "run --runtime under 1 us" run --profile essd-plx-latency --directory "$work/d" --size 1M \
  --runtime 0.0000000001 --time_based
contains err "below 1 us" "runtime under 1 us"
[ -z "$(ls -A d)" ] || fail "run --runtime 0.0000000001 laid out files: $(ls d)"
run 2 "run --ramp_time under 1 us" run --profile essd-plx-latency nosuchdev --ramp_time 0.0000000001
contains err "ramp_time 1e-10 s is above 0 but below 1 us" "ramp_time under 1 us"

# The exit code and the message say what was wrong.
run 2 "run --scratch 0" run --profile essd-plx-latency --scratch 0
contains err "--scratch 0: give a size above 0, like 1G" "scratch 0"
run 2 "run DEVICE extra" run --profile essd-plx-latency nosuchdev extra
contains err "unexpected argument 'extra'" "run DEVICE extra"
one_line "run DEVICE extra"

[ "$failures" -eq 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
echo "all passed"
