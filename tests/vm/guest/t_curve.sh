#!/bin/bash
# curve on a volume QEMU throttles to vdg_iops (volumes.sh), judged from its JSON: by queue
# depth, IOPS flattens at the throttle and latency rises past it (the queue waits in the
# hypervisor: mean = QD / IOPS), the knee at the limit; rate steps below the limit deliver
# their rate (fio's rate_iops) without that wait. Every setting back.
. "$(dirname "$0")/lib.sh"
settings vdg > "$T/settings.before"
run_dp 0 curve vdg --profile essd-plx-iops --numjobs 1 --step-time 2 --max-iodepth 32 --past-knee 2 \
  --output-format json --report "$T/curve.html"
cp "$T/out" "$T/qd.json"
check_restored "$T/settings.before" vdg
[ "$(stat -c %s "$T/curve.html")" -gt 2000 ] || fail "no curve drawn in $T/curve.html"
run_dp 0 curve vdg --profile essd-plx-iops --numjobs 1 --iodepth 8 --step-time 2 \
  --rate-steps 25,50,90% --max-iops "$vdg_iops" --output-format json
cp "$T/out" "$T/rate.json"
check_restored "$T/settings.before" vdg

python3 - "$T/qd.json" "$T/rate.json" "$vdg_iops" <<'PY' || fail "curve's JSON: see FAILED above"
import json, sys
qd, rate = (json.load(open(f)) for f in sys.argv[1:3])
limit = float(sys.argv[3])
bad = []
def check(ok, what):
    print(("-- " if ok else "-- FAILED: ") + what)
    if not ok: bad.append(what)
def line(s):
    return (f"{s['name']}: {s['iops']:.0f} IOPS, mean {s['clat_mean_ns'] / 1000:.0f} us, "
            f"p50 {s['clat_p50_ns'] / 1000:.0f} us, p99 {s['clat_p99_ns'] / 1000:.0f} us")

steps = qd["steps"]
for s in steps: print("   " + line(s))
check([s["iodepth"] for s in steps] == [2 ** i for i in range(len(steps))], "queue depth 1, 2, 4 ...")
k = qd["knee"]["step"] if qd["knee"] else None
check(k is not None, f"knee found: {qd['knee'] and qd['knee']['name']}; ended: {qd['ended']}")
if k is not None:
    # A throttle lets no more through than its limit; at and past the knee, the limit (the
    # steps run back to back, so no step starts on a full bucket).
    for s in steps[k:]:
        check(0.97 * limit <= s["iops"] <= 1.03 * limit, f"{s['name']} at the throttle's {limit:g} IOPS: {s['iops']:.0f}")
    # Past it the queue waits: each doubling of the queue doubles the mean (Little's law).
    for a, b in zip(steps[k:], steps[k + 1:]):
        check(b["clat_mean_ns"] >= 1.5 * a["clat_mean_ns"],
              f"{b['name']}: mean {b['clat_mean_ns'] / 1000:.0f} us, up from {a['clat_mean_ns'] / 1000:.0f} us")
    # And no more than the queue explains: an I/O's time in flight is at most QD / IOPS.
    for s in steps[k:]:
        little = s["iodepth"] / s["iops"] * 1e9
        check(s["clat_mean_ns"] <= 1.1 * little,
              f"{s['name']}: mean {s['clat_mean_ns'] / 1000:.0f} us, at most QD / IOPS {little / 1000:.0f} us")
    check(len(steps) <= k + 3 and "past the knee" in qd["ended"] or steps[-1]["iodepth"] == 32,
          f"stopped 2 past the knee or at QD 32: {qd['ended']}")

rs = rate["steps"]
for s in rs: print("   " + line(s))
check([round(s["rate_fraction"] * 100) for s in rs] == [25, 50, 90], "rate steps 25, 50, 90%")
for s in rs:
    check(abs(s["iops"] - s["rate_iops"]) <= 0.02 * s["rate_iops"],
          f"{s['name']}: {s['iops']:.1f} IOPS for a rate of {s['rate_iops']}")
# Capped below the limit, nothing waits in the hypervisor: the 90% step's mean is well under
# the uncapped step's at the same queue depth, where the queue waits for the throttle.
same = [s for s in steps if s["iodepth"] == rs[-1]["iodepth"]]
if same:
    check(rs[-1]["clat_mean_ns"] < 0.5 * same[0]["clat_mean_ns"],
          f"{rs[-1]['name']}: mean {rs[-1]['clat_mean_ns'] / 1000:.0f} us, under half of {same[0]['name']}'s "
          f"{same[0]['clat_mean_ns'] / 1000:.0f} us uncapped")
sys.exit(1 if bad else 0)
PY
