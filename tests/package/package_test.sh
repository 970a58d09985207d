#!/usr/bin/env bash
# Tests the .deb (or .rpm) CPack builds (build_package.sh): unpacked into a temporary root,
# diskprobe runs from those files only: --version, profiles (which must come from the
# package), the man page, the completion, and a 2 s run on a scratch loop device (root only).
# usage: package_test.sh deb|rpm BUILD_DIR [PACKAGE_DIR]  (PACKAGE_DIR: built already by build_package.sh)
# Exit 77 (skipped) when the packaging tools are missing or, after every other check
# passed, when there is no root for the scratch run.
set -uo pipefail
kind=$1 build=$2 built=${3:-}
fail() { echo "FAIL: $*" >&2; exit 1; }
need() { command -v "$1" >/dev/null || { echo "SKIP: $1 is not installed (packaging/install-deps.sh --test installs it)"; exit 77; }; }

case $kind in
  deb) need dpkg-deb; need dpkg-shlibdeps ;;
  rpm) need rpmbuild; need rpm2cpio; need cpio ;;
  *) fail "usage: package_test.sh deb|rpm BUILD_DIR" ;;
esac

work=$(mktemp -d "${TMPDIR:-/tmp}/diskprobe-package-XXXXXX")
trap 'rm -rf "$work"' EXIT
if [ -n "$built" ]; then
  pkg=$(ls "$built"/*."$kind" 2>/dev/null | head -1)
  [ -n "$pkg" ] || fail "no .$kind in $built (tests/package/build_package.sh builds it)"
else
  "$(dirname "$0")/build_package.sh" "$kind" "$build" "$work/out" || exit
  pkg=$(ls "$work"/out/*."$kind" | head -1)
fi
echo "testing $(basename "$pkg")"

# Every shared library the binary needs must be a declared dependency. On x86_64,
# cmd/diskprobe is the static launcher and the binary with the libraries is libexec/diskprobe.
bin="$build/cmd/diskprobe"
[ -x "$build/libexec/diskprobe" ] && bin="$build/libexec/diskprobe"
needed=$(objdump -p "$bin" | awk '$1 == "NEEDED" {print $2}')
[ -n "$needed" ] || fail "objdump found no NEEDED libraries in $bin"
root="$work/root"
mkdir -p "$root"
if [ "$kind" = deb ]; then
  depends=$(dpkg-deb -f "$pkg" Depends)
  echo "Depends: $depends"
  depend_names=$(tr ',|' '\n\n' <<<"$depends" | sed 's/(.*//; s/[[:space:]]//g')
  for lib in $needed; do
    # The file the loader picks, asked of dpkg under its /lib and /usr/lib names (merged /usr).
    path=$(ldd "$bin" | awk -v l="$lib" '$1 == l {print $3}')
    owner=""
    for cand in "$path" "/usr$path" "$(readlink -f "$path")"; do
      [ -n "$owner" ] || owner=$(dpkg -S "$cand" 2>/dev/null | head -1 | cut -d: -f1)
    done
    [ -n "$owner" ] || fail "no installed package owns $lib"
    # The shlibs file may name a virtual package the owner provides (libspdlog1.10-fmt9).
    names="$owner $(dpkg-query -W -f='${Provides}' "$owner" 2>/dev/null | sed 's/([^)]*)//g; s/,/ /g')"
    found=""
    for n in $names; do
      grep -qxF -- "${n%:*}" <<<"$depend_names" && found=$n
    done
    [ -n "$found" ] || fail "$lib comes from $owner ($names), which Depends does not list"
  done
  dpkg -x "$pkg" "$root" || fail "dpkg -x $pkg"
else
  requires=$(rpm -qpR "$pkg")
  for lib in $needed; do
    grep -q "^$lib()(64bit)" <<<"$requires" || fail "Requires lacks $lib()(64bit)"
  done
  echo "Requires names every NEEDED soname: $(tr '\n' ' ' <<<"$needed")"
  (cd "$root" && rpm2cpio "$pkg" | cpio -idm --quiet) || fail "rpm2cpio | cpio $pkg"
fi

for f in usr/bin/diskprobe usr/share/man/man1/diskprobe.1.gz usr/share/bash-completion/completions/diskprobe; do
  [ -s "$root/$f" ] || fail "the package has no /$f"
done
[ "$bin" = "$build/cmd/diskprobe" ] || [ -s "$root/usr/libexec/diskprobe" ] || fail "the package has no /usr/libexec/diskprobe (the launcher's real binary)"
ls "$root"/usr/share/diskprobe/profiles/*.json >/dev/null 2>&1 || fail "no profiles in /usr/share/diskprobe/profiles"

# Nothing from the build or the user's setup may leak in.
bin="$root/usr/bin/diskprobe"
run() { env -u DISKPROBE_PROFILE_DIR HOME="$work/home" "$bin" "$@"; }
run --version >"$work/version" || fail "diskprobe --version failed"
cat "$work/version"
grep -q '^diskprobe [0-9]' "$work/version" || fail "--version has no version line"

run profiles --json >"$work/profiles.json" || fail "diskprobe profiles failed"
python3 - "$work/profiles.json" "$root/usr/share/diskprobe/profiles/" <<'PY' || fail "profiles do not come from the package"
import json, sys
profiles = json.load(open(sys.argv[1]))
assert profiles, "no profiles listed"
for p in profiles:
    assert p["path"].startswith(sys.argv[2]), f'{p["name"]} loaded from {p["path"]}, not from the package'
print("profiles from the package:", ", ".join(p["name"] for p in profiles))
PY

if command -v man >/dev/null; then
  MANWIDTH=80 man -l "$root/usr/share/man/man1/diskprobe.1.gz" 2>/dev/null | grep -q "max-regression" ||
    fail "man -l cannot show the packaged man page"
fi
bash -c "source '$root/usr/share/bash-completion/completions/diskprobe' && complete -p diskprobe" >/dev/null ||
  fail "the packaged completion does not register for diskprobe"

if [ "$(id -u)" -ne 0 ] || [ ! -e /dev/loop-control ]; then
  echo "SKIP: the scratch run needs root and /dev/loop-control; every other check passed"
  exit 77
fi
# essd-plx-latency covers the whole device, so it fits the small scratch device (the sized
# profiles ask for 1G or more).
profile=essd-plx-latency
# --no-tune: this checks the package, not tuning, and must not wait for another run's settings.
TMPDIR="$work" run run --profile "$profile" --scratch 256M --runtime 2 --no-tune --output-format json \
  >"$work/run.json" 2>"$work/run.err" || { cat "$work/run.err" >&2; fail "the 2 s scratch run failed"; }
python3 - "$work/run.json" <<'PY' || fail "the scratch run's JSON is wrong"
import json, sys
r = json.load(open(sys.argv[1]))
ios = r["read"]["ios"] + r["write"]["ios"]
assert ios > 0, "no I/O completed"
assert 1.5 <= r["runtime_s"] <= 10, f'runtime {r["runtime_s"]} s'
print(f'scratch run from the package: {ios} I/Os in {r["runtime_s"]:.2f} s on {r["device"]}')
PY
echo "package_test $kind: ok"
