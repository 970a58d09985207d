#!/bin/bash
# `diskprobe devices` lists every guest disk with the verdict its layout calls for.
. "$(dirname "$0")/lib.sh"
run_dp 0 devices --json
python3 - "$T/out" <<'PY' || fail "devices verdicts differ (above)"
import json, sys
# disk: (reason codes it must have, codes it may have too); none at all: safe to write.
# The deeper preflight also finds the first partition's filesystem as a `signature`.
want = {
    "vda": ({"mounted", "partition-table", "has-partitions"}, {"busy", "signature"}),
    "vdb": ({"partition-table", "has-partitions"}, {"signature"}),
    **{d: (set(), set()) for d in ("vdc", "vdd", "vde", "vdf", "vdg", "nvme0n1", "sda", "nullb0")},
}
got = {d["name"]: {r["code"] for r in d["verdict"]["reasons"]} for d in json.load(open(sys.argv[1]))}
shown = lambda c: ", ".join(sorted(c)) or "safe"
bad = 0
for name, (must, may) in want.items():
    codes = got.get(name)
    ok = codes is not None and must <= codes <= must | may
    bad += not ok
    print(f"-- {name}: {shown(codes) if codes is not None else 'missing'}"
          + ("" if ok else f" (expected {shown(must)}" + (f", maybe {shown(may)})" if may else ")")))
extra = set(got) - set(want)
print(f"-- not expected: {sorted(extra)}" if extra else "-- no other disks")
sys.exit(1 if bad or extra else 0)
PY
