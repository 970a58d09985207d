# Helpers for the guest tests (sourced). Each test is a bash script that exits 0 on pass,
# 1 on failure (saying what it expected and what it got), 77 when the guest lacks something.
# Tests run one after another in one boot: each leaves the disks as it found them.
dp=$DP_BUILD/cmd/diskprobe
. "$(dirname "${BASH_SOURCE[0]}")/volumes.sh"
export DISKPROBE_PROFILE_DIR=$DP_SRC/profiles/builtin
T=$(mktemp -d /tmp/vmtest.XXXXXX)
cleanups=()
on_exit() { local i; for ((i = ${#cleanups[@]} - 1; i >= 0; i--)); do eval "${cleanups[i]}" >/dev/null 2>&1; done; }
trap on_exit EXIT
cleanup() { cleanups+=("$*"); }  # run at exit, newest first: undoing what is gone already is fine

fail() { echo "FAIL: $*" >&2; exit 1; }
note() { echo "-- $*"; }

wait_for() {  # path: devtmpfs creates nodes asynchronously and there is no udev to settle
  local i
  for i in $(seq 100); do [ -e "$1" ] && return 0; sleep 0.1; done
  cat /proc/partitions; fail "$1 did not appear"
}

# run_dp RC ARGS...: diskprobe with stdout in $T/out, stderr in $T/err; fails unless it exits RC.
run_dp() {
  local want=$1 rc=0; shift
  echo "+ diskprobe $*"
  "$dp" "$@" > "$T/out" 2> "$T/err" || rc=$?
  if [ "$rc" != "$want" ]; then
    sed 's/^/   out: /' "$T/out" | head -n 80; sed 's/^/   err: /' "$T/err" | head -n 40
    fail "diskprobe $* exited $rc, expected $want"
  fi
}

# json FILE EXPR: a Python expression over the document d.
json() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
expect_eq() {  # what got want
  [ "$2" = "$3" ] || { sed 's/^/   err: /' "$T/err" | head -n 20; fail "$1: got '$2', expected '$3'"; }
  note "$1: $2"
}
expect_grep() {  # file extended-regex what
  grep -Eq "$2" "$1" || { sed 's/^/   /' "$1" | head -n 40; fail "$3: no /$2/ in the output above"; }
  note "$3"
}

# Every setting a run may change, in one listing, to compare before and after.
settings() {  # device...
  local d
  for d in "$@"; do
    grep -H . /sys/block/"$d"/queue/{rq_affinity,scheduler,nomerges} 2>/dev/null || true
  done
  grep -H . /sys/devices/system/cpu/cpu*/cpuidle/state*/disable 2>/dev/null || true
}
check_restored() {  # before-file device...
  local before=$1; shift
  settings "$@" > "$T/settings.after"
  diff "$before" "$T/settings.after" || fail "settings not restored after the run"
  [ ! -e "${DISKPROBE_JOURNAL:-/run/diskprobe/restore.json}" ] || fail "restore journal left behind"
  note "every setting back: $(wc -l < "$before") values as before, no journal left"
}

# "Nothing written": a device's edges, which every write run zeroes (its first and last 4 MiB),
# read past the page cache; and an idle disk's sectors-written counter (not vda's: its mounted
# ext4 writes by itself).
edges() {  # device: checksums of its first and last 4 MiB
  local mib=$(( $(blockdev --getsize64 "/dev/$1") / 1048576 ))
  dd if="/dev/$1" bs=1M count=4 iflag=direct status=none | sha256sum
  dd if="/dev/$1" bs=1M skip=$((mib - 4)) count=4 iflag=direct status=none | sha256sum
}
sectors_written() { awk '{print $7}' "/sys/block/$1/stat"; }

virtio_of() { readlink -f "/sys/block/$1/device" | grep -o 'virtio[0-9]*' | tail -n1; }

# irq_snapshot REGEX: "IRQ count-per-CPU..." for every interrupt whose name matches.
irq_snapshot() {
  awk -v pat="$1" 'NR == 1 { n = NF; next }
    $NF ~ pat { line = $1; for (i = 2; i <= n + 1; i++) line = line " " $i; print line }' /proc/interrupts
}
# irq_delta BEFORE AFTER: per IRQ "IRQ total" lines, then "cpu c0 c1 ..." summed over them.
irq_delta() {
  python3 - "$1" "$2" <<'PY'
import sys
rows = lambda f: {l.split()[0]: list(map(int, l.split()[1:])) for l in open(f) if l.strip()}
b, a = rows(sys.argv[1]), rows(sys.argv[2])
cpus = [0] * len(next(iter(a.values())))
for irq in sorted(a):
    d = [x - y for x, y in zip(a[irq], b.get(irq, [0] * len(cpus)))]
    print(irq, sum(d))
    cpus = [c + x for c, x in zip(cpus, d)]
print("cpu", *cpus)
PY
}
irq_total() { awk '$1 == "cpu" {t = 0; for (i = 2; i <= NF; i++) t += $i; print t}' "$1"; }
# cpu_took CPU DELTA-FILE: the interrupts CPU took in DELTA-FILE.
cpu_took() { awk -v c=$(($1 + 2)) '$1 == "cpu" {print $c}' "$2"; }
# expect_cpu_took_job CPU DELTA-FILE IOS DISK: on a disk with a queue per CPU, CPU took at
# least 90% as many interrupts as the job completed I/Os (IOS). The share of all the disk's
# interrupts is no measure there: diskprobe's own reads and writes outside the job (preflight,
# edge zeroing) come from its main thread, on whatever CPU that runs, and so complete on that
# CPU's queue (one CI run: 413 of 3,622, and the job's CPU took 88.5% of the total).
expect_cpu_took_job() {
  local took total
  took=$(cpu_took "$1" "$2")
  total=$(irq_total "$2")
  note "CPU $1 took $took of $4's $total completion interrupts; the job completed $3 I/Os"
  [ "$3" -gt 0 ] && [ $((took * 10)) -ge $(($3 * 9)) ] ||
    fail "the job's CPU $1 took fewer interrupts than 90% of the job's $3 I/Os"
}
