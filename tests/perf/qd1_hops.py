#!/usr/bin/env python3
"""Where a QD1 read's time goes, hop by hop, for diskprobe and fio on the same loop device.

A measurement, not a test (issue 14's unchecked row "loop, worker on another CPU, C-states
free"): it never fails on a number. Run as root after a build, with perf installed:

    sudo tests/perf/qd1_hops.py                 # 4 alternating rounds of 1.5 s each
    sudo tests/perf/qd1_hops.py --rounds 8

The placement is the fidelity row's: a loop device (--direct-io=on) over a sparse file, the
unbound workqueues (loop's worker) on CPU 0, both tools on CPU 1 (taskset), C-states as the
machine has them, 4k random reads at QD1. perf records, on every CPU, the tracepoints of each
hop of one I/O:

  issue -> ipi0          block_rq_issue on CPU 1 to the IPI that wakes CPU 0 (the host
                         waking the halted vCPU, when idle CPUs halt)
  ipi0 -> worker         to loop's work item starting on CPU 0
  worker run             the read itself, to the kworker switching out
  worker done -> wait returns
                         the completion's way back: the IPI to CPU 1, the task woken, the
                         io_uring_enter that waited returning
  wait returns -> next issue
                         the tool's own user-space work between two I/Os (reap, record,
                         prep) and its submit call up to the block layer

and prints each hop's median per tool and round. Only the last hop is the tool's; the others
are the kernel's and the host's, the same events per I/O for both tools (perf stat counts
them alike), so a difference there between rounds is the machine. The loop device and the
workqueue mask are put back however the script ends.
"""

import argparse
import atexit
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MASK = "/sys/devices/virtual/workqueue/cpumask"
EVENTS = ",".join([
    "block:block_rq_issue", "irq_vectors:call_function_single_entry", "workqueue:workqueue_execute_start",
    "sched:sched_switch", "syscalls:sys_exit_io_uring_enter"])
HOPS = ("issue -> ipi0", "ipi0 -> worker", "worker run", "worker done -> wait returns",
        "wait returns -> next issue", "issue -> issue")
LINE = re.compile(r"\s*(\S.*?)\s+(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+(\S+):\s*(.*)")

cleanups = []


def cleanup():
    while cleanups:
        try:
            cleanups.pop()()
        except Exception as e:  # keep undoing the rest
            print(f"qd1_hops: cleanup: {e}", file=sys.stderr)


def on_signal(signum, _frame):
    cleanup()
    sys.exit(128 + signum)


def hops_of(script_text, loop_major):
    """Per-hop durations (us) of every I/O whose five steps were all seen in order."""
    out = {h: [] for h in HOPS}
    cur = None
    for line in script_text.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        _comm, _tid, cpu, t, event, rest = m.groups()
        cpu, t = int(cpu), float(t) * 1e6
        if event == "block:block_rq_issue" and cpu == 1 and rest.startswith(f"{loop_major},"):
            if cur and len(cur) == 5:
                for i, h in enumerate(HOPS[:4]):
                    out[h].append(cur[i + 1] - cur[i])
                out[HOPS[4]].append(t - cur[4])
                out[HOPS[5]].append(t - cur[0])
            cur = [t]
        elif cur is None:
            continue
        elif len(cur) == 1 and event == "irq_vectors:call_function_single_entry" and cpu == 0:
            cur.append(t)
        elif len(cur) == 2 and event == "workqueue:workqueue_execute_start" and cpu == 0:
            cur.append(t)
        elif len(cur) == 3 and event == "sched:sched_switch" and cpu == 0 and "prev_comm=kworker" in rest:
            cur.append(t)
        elif len(cur) == 4 and event == "syscalls:sys_exit_io_uring_enter" and cpu == 1:
            cur.append(t)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--runtime", type=float, default=1.5, help="seconds per run")
    ap.add_argument("--diskprobe", default=os.path.join(REPO, "build", "cmd", "diskprobe"))
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("qd1_hops: needs root (loop devices, perf -a, the workqueue mask)", file=sys.stderr)
        return 77
    for tool in ("perf", "fio", "losetup", "taskset"):
        if not shutil.which(tool):
            print(f"qd1_hops: {tool} is missing (perf: apt-get install linux-perf)", file=sys.stderr)
            return 77
    if os.cpu_count() < 2 or not os.access(MASK, os.W_OK):
        print(f"qd1_hops: needs two CPUs and a writable {MASK}", file=sys.stderr)
        return 77
    atexit.register(cleanup)
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, on_signal)

    tmp = tempfile.mkdtemp(prefix="diskprobe-hops-", dir="/var/tmp")
    cleanups.append(lambda: shutil.rmtree(tmp, ignore_errors=True))
    img = os.path.join(tmp, "loop.img")
    with open(img, "wb") as f:
        f.truncate(256 << 20)  # sparse: a read of a hole, no disk under it
    dev = subprocess.run(["losetup", "-f", "--show", "--direct-io=on", img], check=True,
                         capture_output=True, text=True).stdout.strip()
    cleanups.append(lambda: subprocess.run(["losetup", "-d", dev], check=False))
    major = os.major(os.stat(dev).st_rdev)
    old = open(MASK).read().strip()
    cleanups.append(lambda: open(MASK, "w").write(old))
    with open(MASK, "w") as f:
        f.write("1")  # CPU 0

    rt = f"{args.runtime:g}"
    lines = {
        "fio": ["fio", "--name=hops", f"--filename={dev}", "--rw=randread", "--bs=4k", "--iodepth=1",
                "--ioengine=io_uring", "--direct=1", "--time_based", f"--runtime={rt}", "--offset=8M",
                "--size=200M", "--randrepeat=0", "--output-format=json", "--output=" + os.path.join(tmp, "fio.json")],
        "diskprobe": [args.diskprobe, "run", "--profile", "essd-plx-latency", dev, "--no-tune", "--rw", "randread",
                      "--bs", "4k", "--iodepth", "1", "--numjobs", "1", "--runtime", rt, "--offset", "8M",
                      "--size", "200M", "--output-format", "json", "--output", os.path.join(tmp, "diskprobe.json")],
    }
    print(f"# QD1 4k randread on {dev} (sparse file), loop's worker on CPU 0, the tool on CPU 1; "
          "median us per hop, per round")
    print("# 'traced': the I/Os whose five steps were all seen, of those the tool completed; the")
    print("# others (CPU 0 already awake, so no IPI; a step perf missed) are not in the medians")
    print("| round | tool | I/Os traced | " + " | ".join(HOPS) + " |")
    print("|---|---|---:|" + "---:|" * len(HOPS))
    totals = {}
    for r in range(args.rounds):
        order = ("fio", "diskprobe") if r % 2 == 0 else ("diskprobe", "fio")
        for tool in order:
            data = os.path.join(tmp, f"{tool}.data")
            rec = subprocess.run(["perf", "record", "-q", "-a", "-e", EVENTS, "-o", data, "--", "taskset", "-c", "1"] +
                                 lines[tool], capture_output=True, text=True)
            if rec.returncode != 0:
                print(f"qd1_hops: {tool} under perf record: exit {rec.returncode}: {rec.stderr.strip()[-300:]}",
                      file=sys.stderr)
                return 1
            text = subprocess.run(["perf", "script", "-i", data, "-F", "comm,tid,cpu,time,event,trace"],
                                  capture_output=True, text=True).stdout
            h = hops_of(text, major)
            n = len(h[HOPS[0]])
            with open(os.path.join(tmp, f"{tool}.json")) as f:
                d = json.load(f)
            done = d["jobs"][0]["read"]["total_ios"] if tool == "fio" else d["read"]["ios"]
            med = {k: statistics.median(v) if v else float("nan") for k, v in h.items()}
            for k in HOPS:
                totals.setdefault(tool, {}).setdefault(k, []).append(med[k])
            print(f"| {r + 1} | {tool} | {n:,} of {done:,} | " + " | ".join(f"{med[k]:.1f}" for k in HOPS) + " |")
            sys.stdout.flush()
    print("| all | median of rounds | | " + " | ".join(
        "fio {:.1f}, diskprobe {:.1f}".format(statistics.median(totals["fio"][k]), statistics.median(totals["diskprobe"][k]))
        for k in HOPS) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
