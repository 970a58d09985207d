#!/bin/bash
# Where the CPU goes per I/O, diskprobe beside fio tuned, on the guest's null_blk (4k random
# read, 1 job, QD32, 5 s each): `perf record -e cpu-clock` of each whole tool, then every
# symbol's samples per million I/Os side by side, and the symbols diskprobe spends more on.
# Not a test (nothing is judged): `tests/vm/run.sh BUILD kprofile`, output in
# BUILD/vm/out/kprofile.log. It found the two kernel functions t_kernel_path.sh counts.
. "$(dirname "$0")/lib.sh"
command -v perf >/dev/null || { echo "perf not found: apt-get install linux-perf"; exit 77; }
dev=/dev/nullb0
profile() {  # name command...: perf data in $T/name.data, the tool's JSON in $T/name.json
  local name=$1; shift
  perf record -q -e cpu-clock -F 20000 -o "$T/$name.data" -- "$@" > "$T/$name.json" 2> "$T/$name.err" ||
    { cat "$T/$name.err"; fail "$name did not run"; }
  perf report -i "$T/$name.data" --no-children --sort sym --stdio -n -g none 2>/dev/null |
    awk '!/^#/ && NF >= 3 {n = $2; $1 = $2 = ""; sub(/^ +/, ""); print n "\t" $0}' > "$T/$name.syms"
}
profile diskprobe "$dp" run --profile essd-plx-latency "$dev" --no-tune --no-paranoid --rw randread --bs 4k \
  --iodepth 32 --numjobs 1 --runtime 5 --time_based true --ramp_time 0 --pinning none --hold_cstates false \
  --output-format json
profile fio-tuned fio --name=k --filename="$dev" --ioengine=io_uring --rw=randread --bs=4k --iodepth=32 --direct=1 \
  --time_based --runtime=5 --iodepth_batch_submit=32 --iodepth_batch_complete_max=32 --fixedbufs --registerfiles \
  --output-format=json
python3 - "$T" <<'PY'
import json, sys
t = sys.argv[1]
ios = {"diskprobe": json.load(open(f"{t}/diskprobe.json"))["read"]["ios"],
       "fio-tuned": sum(j["read"]["total_ios"] for j in json.load(open(f"{t}/fio-tuned.json"))["jobs"])}
per = {}
for tool, n in ios.items():
    d = per[tool] = {}
    for line in open(f"{t}/{tool}.syms"):
        samples, sym = line.rstrip("\n").split("\t", 1)
        d[sym] = d.get(sym, 0) + int(samples) * 1e6 / n
a, b = per["diskprobe"], per["fio-tuned"]
print(f"I/Os: diskprobe {ios['diskprobe']}, fio tuned {ios['fio-tuned']}; samples (50 us each) per million I/Os:"
      f" diskprobe {sum(a.values()):.0f}, fio tuned {sum(b.values()):.0f}")
row = lambda k: f"{a.get(k, 0):9.0f} {b.get(k, 0):9.0f} {a.get(k, 0) - b.get(k, 0):9.0f}  {k}"
print(f"{'diskprobe':>9} {'fio-tuned':>9} {'diff':>9}  symbol ([k] kernel, [.] user)")
for k in sorted(set(a) | set(b), key=lambda k: -max(a.get(k, 0), b.get(k, 0)))[:60]:
    print(row(k))
print("-- where diskprobe spends more")
for k in sorted(set(a) | set(b), key=lambda k: b.get(k, 0) - a.get(k, 0))[:25]:
    print(row(k))
PY
