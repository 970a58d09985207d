#!/usr/bin/env bash
# The bash completion offers subcommands, options, profile names (asked of the binary) and
# block devices (from a fixture sysfs tree given with --sysfs).
# usage: completion_test.sh COMPLETION_FILE DISKPROBE FIXTURE_SYSFS
set -uo pipefail
file=$1 bin=$2 sysfs=$3
# shellcheck source=/dev/null
source "$file" || { echo "FAIL: cannot source $file" >&2; exit 1; }
failures=0

# complete WORD... : completes the last word of "diskprobe WORD..." and prints the candidates.
complete_line() {
  COMP_WORDS=("$bin" "$@")
  COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
  COMPREPLY=()
  _diskprobe
  printf '%s\n' "${COMPREPLY[@]}"
}
expect() {  # expect "description" "candidate" WORD...
  local what=$1 want=$2; shift 2
  local got
  got=$(complete_line "$@")
  if grep -qx -- "$want" <<<"$got"; then
    echo "ok: $what"
  else
    echo "FAIL: $what: '$want' not among: $(tr '\n' ' ' <<<"$got")" >&2
    failures=$((failures + 1))
  fi
}
refuse() {  # refuse "description" "candidate" WORD...
  local what=$1 bad=$2; shift 2
  if complete_line "$@" | grep -qx -- "$bad"; then
    echo "FAIL: $what: '$bad' offered" >&2
    failures=$((failures + 1))
  else
    echo "ok: $what"
  fi
}

expect "subcommand run" run r
expect "subcommand accept" accept acc
expect "accept options: --max-time" --max-time accept /dev/vdb --max
expect "accept --volume custom" custom:iops= accept /dev/vdb --volume cu
expect "subcommand compare" compare comp
expect "subcommand aggregate" aggregate ""
refuse "no devices before a subcommand" vdc ""
expect "global --version" --version --ver
expect "run options" --scratch run --scr
expect "run --report" --report run --rep
expect "override keys" --iodepth run --io
expect "compare --max-regression" --max-regression compare a.json --max
profiles=$("$bin" profiles | awk '{print $1}')
[ -n "$profiles" ] || { echo "FAIL: $bin profiles lists none" >&2; exit 1; }
for p in $profiles; do
  expect "profile name $p after --profile" "$p" run --profile ""
  expect "profile name $p after profile show" "$p" profile show ""
done
expect "profile show" show profile ""
expect "device vdc from --sysfs" vdc --sysfs "$sysfs" check ""
expect "partition vdc1 from --sysfs" vdc1 --sysfs "$sysfs" run --profile x ""
expect "device prefix" loop0 --sysfs "$sysfs" tune lo
refuse "prefix filters" vdc --sysfs "$sysfs" tune lo
expect "--mode values" read check vdc --mode ""
expect "--output-format values" json run --output-format j
expect "--output-format fio-json+" fio-json+ run --output-format fio
expect "--output-format openmetrics" openmetrics run --output-format o
expect "--rw values" randwrite run --rw randw
expect "subcommand curve" curve cu
expect "curve options" --max-iodepth curve --max-iod
expect "curve --rate-steps" --rate-steps curve vdc --rate
expect "curve devices" vdc --sysfs "$sysfs" curve ""
refuse "--step-time is curve's" --step-time run --step
expect "override --rate_iops" --rate_iops run --rate_i
expect "override --ss_dur" --ss_dur run --ss_d
expect "--ss criteria" iops_slope: run --ss iops_

[ "$failures" -eq 0 ] || { echo "$failures completion check(s) failed" >&2; exit 1; }
echo "completion_test: ok"
