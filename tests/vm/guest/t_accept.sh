#!/bin/bash
# accept on a volume QEMU throttles in the hypervisor (vdf, volumes.sh), judged from its JSON:
# every rate delivered at the throttle within a bound the leaky bucket sets, the write burst
# bucket named ("burst of X IOPS for Y s, then Z IOPS") and the sustained rate judged, each
# phase's steady state as fio defines it, fio's random read on the same volume beside it;
# refused on vda and vdb with nothing written; every setting back.
. "$(dirname "$0")/lib.sh"
volume=custom:iops=$vdf_iops,mbps=$vdf_mbps

vdb_written=$(sectors_written vdb)
for d in vda vdb; do
  edges $d > "$T/$d.edges"
  run_dp 3 accept $d --volume "$volume" --max-time 24
  expect_grep "$T/err" 'refused by the preflight: nothing was written' "$d refused (exit 3)"
  edges $d | cmp -s - "$T/$d.edges" || fail "$d's first or last 4 MiB changed"
  note "$d: first and last 4 MiB unchanged"
done
[ "$(sectors_written vdb)" = "$vdb_written" ] || fail "vdb: sectors written went $vdb_written -> $(sectors_written vdb)"
note "vdb: sectors written still $vdb_written"

# 48 s: a 12 s write phase whose steady-state window (3 s, after 3 s) cannot close inside
# the burst, which lasts about 3 s at the guest's rate.
settings vdf > "$T/settings.before"
run_dp 0 accept vdf --volume "$volume" --max-time 48 --output-format json --output "$T/accept.json"
sed '/^== /,$d' "$T/out"
check_restored "$T/settings.before" vdf

# fio on the same volume for the random read phase: same queue, same time.
qd=$(json "$T/accept.json" 'd["metrics"][1]["run"]["job"]["iodepth"]')
jobs=$(json "$T/accept.json" 'd["metrics"][1]["run"]["job"]["numjobs"]')
secs=$(json "$T/accept.json" 'round(d["metrics"][1]["run"]["runtime_s"])')
echo "+ fio randread 4k QD $qd x $jobs, ${secs} s on vdf"
fio --name=accept-read --filename=/dev/vdf --direct=1 --ioengine=io_uring --rw=randread --bs=4k \
  --iodepth="$qd" --numjobs="$jobs" --group_reporting --time_based --runtime="$secs" \
  --output-format=json > "$T/fio.json" || fail "fio failed"

python3 - "$T/accept.json" "$T/fio.json" "$vdf_iops" "$vdf_mbps" "$vdf_burst_iops" "$vdf_burst_len" <<'PY' || fail "accept's JSON: see FAILED above"
import json, re, sys
d = json.load(open(sys.argv[1]))
fio = json.load(open(sys.argv[2]))["jobs"][0]["read"]
iops, mbps, burst_iops, burst_len = (float(a) for a in sys.argv[3:7])
MiB = 1048576
bad = []
def check(ok, what):
    print(("-- " if ok else "-- FAILED: ") + what)
    if not ok: bad.append(what)

m = {x["name"]: x for x in d["metrics"]}
check(d["passed"] and len(m) == 6 and not d["not_run"], f"accepted, 6 metrics: {list(m)}")

def direction(x):
    run = x["run"]
    return run["write"] if run["job"]["rw"] in ("randwrite", "write") else run["read"]

# The throttle's leaky bucket lets through its rate, plus what it holds when the phase
# starts (a tenth of a second's worth unless a burst bucket is set), plus the queue admitted
# at its brim; below the rate only when the guest cannot keep the queue full (3% allowed).
def bounds(x, rate, per_io):
    run = x["run"]
    t, qd = run["runtime_s"], run["job"]["iodepth"] * run["job"]["numjobs"]
    return 0.97 * rate, rate * (1 + 0.1 / t) + qd * per_io / t + 0.01 * rate

for name, rate, unit in (("random write IOPS", iops, 1), ("random read IOPS", iops, 1),
                         ("sequential read throughput", mbps * MiB, MiB),
                         ("sequential write throughput", mbps * MiB, MiB)):
    x = m[name]
    lo, hi = bounds(x, rate, unit)
    check(x["judged"] and x["passed"] and x["delivered_percent"] >= 95,
          f"{x['line']}")
    check(lo <= x["measured"] <= hi,
          f"{name}: {x['measured'] / unit:.1f} within [{lo / unit:.1f}, {hi / unit:.1f}] of the throttle's {rate / unit:g}")
    # Steady state as fio's iops_slope / bw_slope: the window's least-squares slope, in %
    # of its mean, below the limit exactly when the phase ended steady, before its time.
    ss, run = x["run"]["steadystate"], x["run"]
    y = ss["bw_bytes_per_s_samples"] if ss["samples_unit"] == "bytes_per_s" else ss["iops_samples"]
    n = len(y)
    if n >= 2 and ss["window_filled"]:
        xm, ym = (n - 1) / 2, sum(y) / n
        slope = sum((i - xm) * (v - ym) for i, v in enumerate(y)) / sum((i - xm) ** 2 for i in range(n))
        crit = 100 * slope / ym if ym else float("inf")
        check(abs(crit - ss["value"]) < 0.01 and x["steady"] == (abs(crit) < ss["limit"]),
              f"{name}: slope {crit:+.2f}%/s of the mean over {n} s, limit {ss['limit']}%: steady {x['steady']}")
    else:
        check(not x["steady"], f"{name}: the window never filled, not steady")
    if x["steady"]:
        check(run["runtime_s"] < run["job"]["runtime_s"] - 0.5,
              f"{name}: steady after {run['runtime_s']:.1f} s of its {run['job']['runtime_s']:g} s")

# Writes: the burst bucket (burst_iops x burst_len I/Os) spent, then the rate. Every write
# above the rate went into the bucket, which ends full: the total says how big it is.
w = m["random write IOPS"]
b, wd, wrun = w["burst"], direction(w), w["run"]
check(b["found"], f"write burst found: {w['line']}")
check(re.search(r"; burst of [0-9,]+ IOPS for [0-9]+ s, then [0-9,]+ IOPS", w["line"]) is not None,
      "the line says 'burst of X IOPS for Y s, then Z IOPS'")
check(w["measured"] == b["sustained_rate"], "judged on the sustained rate")
# The burst's own cap is a bucket too: a tenth of a second's worth over it, once.
cap = burst_iops * (1 + 0.1 / b["burst_s"]) + 0.01 * burst_iops if b["found"] else 0
check(w["measured"] / 0.75 <= b["burst_rate"] <= cap,
      f"burst at {b['burst_rate']:.0f} IOPS: 25% or more above the rate, at most {cap:.0f} (the cap {burst_iops:g})")
bucket = burst_iops * burst_len
extra = wd["ios"] - iops * wrun["runtime_s"]
check(abs(extra - bucket) <= 0.02 * iops * wrun["runtime_s"] + 2 * wrun["job"]["iodepth"],
      f"{wd['ios']} writes in {wrun['runtime_s']:.2f} s: {extra:.0f} above the rate, the bucket holds {bucket:.0f}")
if w["steady"]:
    check(wrun["runtime_s"] - wrun["steadystate"]["duration_s"] >= b["burst_s"],
          "the write phase's steady window lies after the burst")

# Reads: a plain throttle is no burst; everything above the rate is its tenth of a second.
r = m["random read IOPS"]
rd, rrun = direction(r), r["run"]
check(not r["burst"]["found"], f"no burst in the reads: {r['line']}")
extra = rd["ios"] - iops * rrun["runtime_s"]
check(-0.02 * iops * rrun["runtime_s"] <= extra <= iops / 10 + 0.02 * iops * rrun["runtime_s"],
      f"{rd['ios']} reads in {rrun['runtime_s']:.2f} s: {extra:.0f} above the rate (the bucket: {iops / 10:.0f})")
check(abs(r["measured"] - fio["iops"]) <= 0.03 * iops and 0.97 * iops <= fio["iops"] <= 1.03 * iops,
      f"random read: diskprobe {r['measured']:.1f} IOPS, fio {fio['iops']:.1f} IOPS, same queue and volume")

# QD1 reads wait for the throttle: a lone request every 1/rate, less the bucket's tenth.
q = m["QD1 read latency"]
t = q["run"]["runtime_s"]
floor_ns = 0.98e9 / (iops * (1 + 0.1 / t))
check(q["measured"] >= floor_ns, f"QD1 read mean {q['measured'] / 1000:.0f} us >= {floor_ns / 1000:.0f} us, the throttle's spacing")
sys.exit(1 if bad else 0)
PY
