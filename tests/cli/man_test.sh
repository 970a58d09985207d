#!/usr/bin/env bash
# The man page is maintained: every subcommand and long option `diskprobe --help` lists is
# in doc/diskprobe.1.md, and the troff generated from it formats without a warning.
# usage: man_test.sh DISKPROBE MAN_SOURCE GENERATED_PAGE
set -uo pipefail
bin=$1 src=$2 page=$3
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

[ -s "$page" ] || { echo "FAIL: $page was not generated" >&2; exit 1; }
head -1 "$page" | grep -q '^\.TH DISKPROBE 1 ' || fail "$page does not start with .TH DISKPROBE 1"
grep -q '^\.SH NAME$' "$page" || fail "no NAME section"
grep -q '^\.SH SYNOPSIS$' "$page" || fail "no SYNOPSIS section"

help=$("$bin" --help)
commands=$(sed -n 's/^  diskprobe \([a-z][a-z]*\).*/\1/p' <<<"$help" | sort -u)
[ -n "$commands" ] || fail "no subcommands found in --help"
for c in $commands; do
  grep -q "^- \*\*$c\b" "$src" || fail "subcommand '$c' (in --help) has no entry under COMMANDS in $src"
done
for o in $(grep -o -- '--[a-z][a-z_-]*' <<<"$help" | sort -u); do
  grep -q -- "$o" "$src" || fail "option $o (in --help) is not in $src"
done

if command -v groff >/dev/null; then
  warnings=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
  [ -z "$warnings" ] || fail "groff warns: $warnings"
  groff -man -Tutf8 "$page" 2>/dev/null | grep -q "max-regression" || fail "formatted page lacks --max-regression"
else
  echo "groff not installed: the troff is not formatted (packaging/install-deps.sh --test installs it)"
fi
[ "$failures" -eq 0 ] || exit 1
echo "man_test: ok ($(wc -w <<<"$commands") subcommands checked)"
