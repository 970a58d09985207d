#!/usr/bin/env bash
# `diskprobe --version` names the version, the git revision, the library versions built
# against, and what the running kernel's io_uring offers.
# usage: version_test.sh DISKPROBE SOURCE_DIR PROJECT_VERSION LIBURING_VERSION BLKID_VERSION
set -euo pipefail
bin=$1 src=$2 version=$3 liburing=$4 blkid=$5
out=$("$bin" --version)
echo "$out"
fail() { echo "FAIL: $*" >&2; exit 1; }

grep -qx "diskprobe $version (git .*)" <<<"$out" || fail "first line is not 'diskprobe $version (git REV)'"
rev=$(sed -n 's/^diskprobe [^ ]* (git \(.*\))$/\1/p' <<<"$out")
if expected=$(git -C "$src" rev-parse --short HEAD 2>/dev/null); then
  # The revision is taken when the build is configured; HEAD may have moved since.
  git -C "$src" cat-file -e "$rev^{commit}" 2>/dev/null || fail "git revision '$rev' is not a commit (HEAD is $expected)"
else
  [ "$rev" = unknown ] || fail "outside git the revision must be 'unknown', got '$rev'"
fi
grep -q "built against liburing $liburing, libblkid $blkid (running libblkid [0-9.]*)" <<<"$out" ||
  fail "library versions missing (want liburing $liburing, libblkid $blkid)"
grep -q "^kernel $(uname -r): io_uring " <<<"$out" || fail "no kernel io_uring line for $(uname -r)"
if grep -q "io_uring NOT available" <<<"$out"; then
  echo "io_uring is not available on this kernel: the feature list is not printed"
  exit 0
fi
for feature in "registered files" "fixed buffers" "opcode READ_FIXED" "opcode WRITE_FIXED" "opcode READ" "opcode WRITE"; do
  grep -Eq "^  (yes|no ) +$feature( \(|$)" <<<"$out" || fail "feature '$feature' not reported"
done
echo "version_test: ok"
