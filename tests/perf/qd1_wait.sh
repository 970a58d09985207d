#!/bin/bash
# diskprobe, fio and tests/perf/qd1_wait.c (diskprobe's wait alone, in a few variants), QD1
# 4k random reads in alternating rounds on one loop device, in issue 14's unchecked placement:
# loop over a sparse file (--direct-io=on), the unbound workqueues (loop's worker) on CPU 0,
# every tool on CPU 1, C-states as the machine has them. Prints each run's mean and p50
# latency in us, then the medians per tool. A measurement, not a test: it never fails on a
# number. The loop device and the workqueue mask are put back however it ends.
#
#   sudo tests/perf/qd1_wait.sh [ROUNDS] [BUILD]    # default 10 rounds, build/
#   sudo TICK_NS=10000000 tests/perf/qd1_wait.sh     # and a sleeper on CPU 1 waking every 10 ms
#
# TICK_NS: fio's parent process wakes every 10 ms on the CPU it shares with the job (its
# clock_nanosleep and wait4 loop: about 100 of each a second under strace), and on this VM a
# CPU woken that often answers the I/O's wake-up sooner. The sleeper gives every tool that.
set -eu
ROUNDS=${1:-10}
BUILD=${2:-build}
HERE=$(cd "$(dirname "$0")" && pwd)
DP=$BUILD/cmd/diskprobe
[ "$(id -u)" = 0 ] || { echo "qd1_wait.sh: needs root (loop device, workqueue mask)" >&2; exit 77; }
[ -x "$DP" ] || { echo "qd1_wait.sh: $DP is missing: build first, or pass the build folder" >&2; exit 2; }
command -v fio >/dev/null || { echo "qd1_wait.sh: fio is missing: run packaging/install-deps.sh --test" >&2; exit 77; }
MASK=/sys/devices/virtual/workqueue/cpumask
[ -w $MASK ] || { echo "qd1_wait.sh: $MASK is not writable: cannot place loop's worker" >&2; exit 77; }
[ "$(nproc)" -ge 2 ] || { echo "qd1_wait.sh: needs 2 CPUs" >&2; exit 77; }

work=$(mktemp -d /var/tmp/qd1_wait.XXXXXX)
dev=""
ticker=""
old=$(cat $MASK)
cleanup() {
  [ -n "$ticker" ] && kill "$ticker" 2>/dev/null
  echo "$old" > $MASK
  [ -n "$dev" ] && losetup -d "$dev"
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
gcc -O2 -Wall -o "$work/qd1_wait" "$HERE/qd1_wait.c" -luring -lpthread
truncate -s 256M "$work/loop.img"
dev=$(losetup -f --show --direct-io=on "$work/loop.img")
echo 1 > $MASK
if [ -n "${TICK_NS:-}" ]; then
  taskset -c 1 "$work/qd1_wait" tick "$TICK_NS" &
  ticker=$!
fi

fio_run() {
  taskset -c 1 fio --name=f --filename="$dev" --rw=randread --bs=4k --iodepth=1 --ioengine=io_uring \
    --direct=1 --time_based --runtime=1.5 --offset=8M --size=200M --randrepeat=0 --lat_percentiles=1 \
    --output-format=json |
    python3 -c 'import json,sys; d=json.load(sys.stdin)["jobs"][0]["read"]["lat_ns"]; print("%.1f %.1f" % (d["mean"]/1e3, d["percentile"]["50.000000"]/1e3))'
}
dp_run() {
  taskset -c 1 "$DP" run --profile essd-plx-latency "$dev" --no-tune --rw randread --bs 4k --iodepth 1 \
    --numjobs 1 --runtime 1.5 --offset 8M --size 200M --output-format json 2>/dev/null |
    python3 -c 'import json,sys; d=json.load(sys.stdin)["read"]["lat_ns"]; print("%.1f %.1f" % (d["mean"]/1e3, d["percentiles"]["50.00"]/1e3))'
}
TOOLS=(fio diskprobe wait-proc wait-thread wait-fio-ring wait-fio-all)
one() {
  case $1 in
    fio) fio_run ;;
    diskprobe) dp_run ;;
    wait-proc) taskset -c 1 "$work/qd1_wait" "$dev" proc ;;
    wait-thread) taskset -c 1 "$work/qd1_wait" "$dev" thread ;;
    wait-fio-ring) taskset -c 1 "$work/qd1_wait" "$dev" proc 2 ;;
    wait-fio-all) taskset -c 1 "$work/qd1_wait" "$dev" proc 15 ;;  # fio 3.33's ring, calls, plain file and buffer
  esac
}
for ((r = 0; r < ROUNDS; r++)); do
  for ((k = 0; k < ${#TOOLS[@]}; k++)); do
    t=${TOOLS[$(((k + r) % ${#TOOLS[@]}))]}
    echo "round $((r + 1)) $t $(one "$t")"
  done
done | tee "$work/runs"
python3 - "$work/runs" <<'PY'
import collections, statistics, sys
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    p = line.split()
    d[p[2]].append((float(p[3]), float(p[4])))
print("\n| tool | mean, median of rounds (us) | p50, median (us) | means' range |")
print("|---|---:|---:|---:|")
for tool, v in d.items():
    m = [x[0] for x in v]
    print(f"| {tool} | {statistics.median(m):.1f} | {statistics.median(x[1] for x in v):.1f} | {min(m):.1f}-{max(m):.1f} |")
PY
