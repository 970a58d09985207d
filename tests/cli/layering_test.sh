#!/usr/bin/env bash
# The house's arrows, checked on every #include: cmd -> {safety, tuning, profiles} -> lib, and
# inside lib each room includes only the rooms below it (lib/CMakeLists.txt lists them bottom
# up). Prints each include that runs the wrong way and fails; needs no build.
set -uo pipefail
src=${1:?usage: layering_test.sh SOURCE_DIR}
cd "$src" || exit 1

declare -A below=(
  [base]=""
  [device]="base"
  [spec]="device base"
  [stats]="spec device base"
  [engine]="stats spec device base"
  [acceptance]="stats spec device base"
  [report]="acceptance stats spec device base"
  [fleet]="report acceptance stats spec device base"
  [curve]="report acceptance stats spec device base"
)
lib_rooms="${!below[*]}"
declare -A allowed=(
  [safety]="$lib_rooms"
  [tuning]="$lib_rooms"
  [profiles]="$lib_rooms"
  [run]="safety tuning profiles $lib_rooms"  # cmd/run: below cmd, above the modules
)
# Known breaches, each with the work that removes it.
declare -A exempt=()

bad=0
check() {  # FILE ROOM ALLOWED...
  local file=$1 room=$2; shift 2
  local ok=" $room $* "
  while IFS= read -r inc; do
    local to=${inc#diskprobe/}; to=${to%%/*}
    [[ $ok == *" $to "* ]] && continue
    if [[ -n ${exempt["$file:$to"]:-} ]]; then
      echo "known: $file includes $inc: ${exempt["$file:$to"]}"
      continue
    fi
    echo "FAIL: $file ($room) includes $inc: $room may include only: $*"
    bad=1
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\(diskprobe\/[^"]*\)".*/\1/p' "$file")
  if grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"\.\./' "$file"; then
    echo "FAIL: $file reaches another folder's private header by a relative path"
    bad=1
  fi
}

n=0
for room in $lib_rooms; do
  for f in lib/$room/* lib/include/diskprobe/$room/*; do
    [[ -f $f ]] || continue
    check "$f" "$room" ${below[$room]}
    n=$((n + 1))
  done
done
for room in safety tuning profiles; do
  while IFS= read -r f; do
    check "$f" "$room" ${allowed[$room]}
    n=$((n + 1))
  done < <(find "$room" -name '*.h' -o -name '*.cpp')
done
while IFS= read -r f; do
  check "$f" run ${allowed[run]}
  n=$((n + 1))
done < <(find cmd/run -name '*.h' -o -name '*.cpp')
# Tests include public headers only (tests/integration's own harness.h by its include dir).
if grep -rHn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"\.\./' tests; then
  echo "FAIL: a test reaches a private header by a relative path: include the module's public header"
  bad=1
fi
# lib/ holds rooms only: a source file straight in lib/ or lib/include/diskprobe/core is a
# file that was not given a room.
for f in lib/*.cpp lib/*.h lib/include/diskprobe/*.h; do
  [[ -e $f ]] && { echo "FAIL: $f is in no room"; bad=1; }
done
for d in lib/include/diskprobe/*/; do
  r=$(basename "$d")
  [[ -n ${below[$r]+x} ]] || { echo "FAIL: lib/include/diskprobe/$r is not a room of lib/CMakeLists.txt"; bad=1; }
done
[[ $n -gt 50 ]] || { echo "FAIL: only $n files checked: is $src the source tree?"; exit 1; }
[[ $bad == 0 ]] && echo "layering: $n files, every include runs down"
exit $bad
