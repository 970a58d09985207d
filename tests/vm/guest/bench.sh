#!/bin/bash
# tests/perf/bench.py --vm: the benchmark on the guest's null_blk, with the arguments the
# host passed (DP_ARGS, comma-separated).
. "$(dirname "$0")/lib.sh"
mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config
exec python3 "$DP_SRC/tests/perf/bench.py" --diskprobe "$dp" ${DP_ARGS//,/ }
