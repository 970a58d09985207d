#!/bin/bash
# Two builds of diskprobe on the guest's null_blk, alternating with fio tuned round by round
# (4k random read, 1 job, QD32, 5 s a run, rotating which goes first): did a commit move the
# engine's speed, apart from how fast the emulator happens to run this hour? Not a test
# (nothing is judged). DISKPROBE_VM_ARGS=OTHER_BUILD/cmd/diskprobe[,ROUNDS] tests/vm/run.sh
# BUILD ab; output in BUILD/vm/out/ab.log. The other build must be outside the host's /tmp.
. "$(dirname "$0")/lib.sh"
IFS=, read -r other rounds <<< "${DP_ARGS:-}"
[ -x "$other" ] || { echo "ab: DISKPROBE_VM_ARGS must name another build's cmd/diskprobe (got '$other')"; exit 2; }
mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config
exec python3 - "$DP_SRC" "$dp" "$other" "${rounds:-8}" <<'PY'
import statistics
import sys
sys.path.insert(0, sys.argv[1] + "/tests/perf")
import bench  # noqa: E402
this, other, rounds = sys.argv[2], sys.argv[3], int(sys.argv[4])
dev = bench.make_nullblk(1 << 30)
w = next(w for w in bench.WORKLOADS if w[0] == "randread-qd32")
tools = [("this", this), ("other", other), ("fio-tuned", None)]
iops = {name: [] for name, _ in tools}
try:
    for r in range(rounds):
        for name, binary in tools[r % 3:] + tools[:r % 3]:
            m = (bench.run_fio(dev, w, 5, list(bench.FIO_TUNED)) if binary is None
                 else bench.run_diskprobe(binary, dev, w, 5))
            iops[name].append(m["iops"])
            print(f"round {r + 1}: {name}: {m['iops']:,.0f} IOPS, job's kernel CPU "
                  f"{m['job_sys_per_io'] * 1e9:,.0f} ns/IO", flush=True)
finally:
    bench.cleanup()
print(f"this build: {this}\nother build: {other}")
for name, _ in tools:
    print(f"{name}: median {statistics.median(iops[name]):,.0f} IOPS")
for a, b in (("this", "other"), ("this", "fio-tuned"), ("other", "fio-tuned")):
    r = bench.paired_ratios(iops[a], iops[b])
    iv = bench.median_interval(r)
    span = "" if iv is None else f", {iv[2]:.0%} interval {iv[0]:.2f}x-{iv[1]:.2f}x"
    print(f"{a} / {b} per round: {' '.join(f'{x:.2f}' for x in r)}: median {statistics.median(r):.2f}x{span}")
PY
