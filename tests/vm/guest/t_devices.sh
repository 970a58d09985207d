#!/bin/bash
# `diskprobe devices` lists every guest disk with the verdict its layout calls for.
. "$(dirname "$0")/lib.sh"
run_dp 0 devices --json
python3 - "$T/out" <<'PY' || fail "devices verdicts differ (above)"
import json, sys
want = {  # disk: reason codes (empty: safe to write)
    "vda": {"mounted", "busy", "partition-table", "has-partitions"},
    "vdb": {"partition-table", "has-partitions"},
    "vdc": set(), "vdd": set(), "vde": set(), "nvme0n1": set(), "sda": set(), "nullb0": set(),
}
got = {d["name"]: {r["code"] for r in d["verdict"]["reasons"]} for d in json.load(open(sys.argv[1]))}
bad = 0
for name, codes in want.items():
    ok = got.get(name) == codes
    bad += not ok
    shown = lambda c: ", ".join(sorted(c)) or "safe"
    print(f"-- {name}: {shown(got[name]) if name in got else 'missing'}"
          + ("" if ok else f" (expected {shown(codes)})"))
extra = set(got) - set(want)
print(f"-- not expected: {sorted(extra)}" if extra else "-- no other disks")
sys.exit(1 if bad or extra else 0)
PY
