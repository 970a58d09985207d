#!/usr/bin/env bash
# The man page is maintained: every subcommand and long option `diskprobe --help` (and each
# subcommand's --help) lists is in packaging/diskprobe.1.md and on the formatted page, and the
# troff go-md2man generates from it formats without a warning (groff -ww, man --warnings).
# The INPUT LIMITS section gives the numbers the code enforces, read from the code itself.
# usage: man_test.sh DISKPROBE MAN_SOURCE GENERATED_PAGE SOURCE_DIR
set -uo pipefail
bin=$1 src=$2 page=$3 root=$4
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

[ -s "$page" ] || { echo "FAIL: $page was not generated" >&2; exit 1; }
# go-md2man puts .nh (no hyphenation) before the title line.
grep -m1 -v '^\.nh$' "$page" | grep -q '^\.TH DISKPROBE 1 ' || fail "$page does not start with .TH DISKPROBE 1"
grep -q '^\.SH NAME$' "$page" || fail "no NAME section"
grep -q '^\.SH SYNOPSIS$' "$page" || fail "no SYNOPSIS section"

help=$("$bin" --help)
commands=$(sed -n 's/^  diskprobe \([a-z][a-z]*\).*/\1/p' <<<"$help" | sort -u)
[ -n "$commands" ] || fail "no subcommands found in --help"
for c in $commands; do
  grep -q "^\*\*$c\b" "$src" || fail "subcommand '$c' (in --help) has no entry under COMMANDS in $src"
done
for c in $commands; do help+=$'\n'$("$bin" "$c" --help); done
options=$(grep -o -- '--[a-z][a-z_-]*' <<<"$help" | sort -u)
for o in $options; do
  grep -q -- "$o" "$src" || fail "option $o (in --help) is not in $src"
done

# limit FILE CONSTANT PHRASE: the constant's value (N, or N MiB) in place of % in PHRASE is in
# the man page's INPUT LIMITS section.
limits=$(sed -n '/^# INPUT LIMITS$/,/^# /p' "$src" | tr '\n' ' ' | tr -s ' ' | sed 's/\*\*//g')
[ -n "$limits" ] || fail "no INPUT LIMITS section in $src"
limit() {
  local expr value
  expr=$(sed -n "s/.*constexpr [a-z_:0-9 ]*\b$2 = \([^;]*\);.*/\1/p" "$root/$1" | head -1)
  [ -n "$expr" ] || { fail "no constant $2 in $1"; return; }
  value=$((${expr//u/}))
  [ $((value % 1048576)) -eq 0 ] && value="$((value >> 20)) MiB"
  grep -qF -- "${3//%/$value}" <<<"$limits" || fail "INPUT LIMITS does not say '${3//%/$value}' ($2 in $1)"
}
limit profiles/profiles.cpp kMaxProfileBytes "A profile is at most %"
limit lib/include/diskprobe/base/sysroot.h kMaxFileBytes "any other file at most %"
limit profiles/profiles.cpp kMaxExtendsDepth "extends chains are at most % deep"
limit lib/include/diskprobe/base/json_io.h kMaxJsonDepth "JSON nests at most % deep"
limit cmd/args.cpp kMaxWordBytes "path) is at most % bytes"
limit lib/acceptance/expect.cpp kMaxExpressionBytes "expression at most % bytes"
limit lib/include/diskprobe/base/units.h kMaxCpus "a set of at most % CPUs"
limit lib/include/diskprobe/spec/validate.h kMaxSeconds "runtime and ramp_time are at most % s"
limit lib/include/diskprobe/spec/validate.h kMaxIodepth "iodepth is 1 to %"
limit lib/include/diskprobe/spec/validate.h kMaxNumjobs "numjobs 1 to %"
limit profiles/profiles.cpp kMaxProblemsShown "list at most % problems"
limit profiles/profiles.cpp kMaxBs "bs is 512 bytes to %"

if command -v groff >/dev/null; then
  warnings=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
  [ -z "$warnings" ] || fail "groff warns: $warnings"
  groff -man -Tutf8 "$page" 2>/dev/null | grep -q "max-regression" || fail "formatted page lacks --max-regression"
else
  echo "groff not installed: the troff is not formatted (packaging/install-deps.sh --test installs it)"
fi
if command -v man >/dev/null; then
  # MANROFFSEQ='' keeps man from running preprocessors the page does not ask for.
  warnings=$(MANROFFSEQ='' MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
  [ -z "$warnings" ] || fail "man --warnings -l warns: $warnings"
  # Words hyphenated at a line's end are joined again before looking for an option.
  shown=$(MANROFFSEQ='' MANWIDTH=80 man -l "$page" 2>/dev/null | perl -0pe 's/(?:\xe2\x80\x90|-)\n\s*//g')
  for o in $options; do
    grep -q -- "$o" <<<"$shown" || fail "option $o (in --help) is not on the page man -l shows"
  done
else
  echo "man not installed: the page is not rendered by man (packaging/install-deps.sh --test installs man-db)"
fi
[ "$failures" -eq 0 ] || exit 1
echo "man_test: ok ($(wc -w <<<"$commands") subcommands, $(wc -w <<<"$options") options checked)"
