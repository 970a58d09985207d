#!/bin/bash
# Seed 001's test100w.sh on the NVMe: one job per hardware queue's CPU in its order (queue 0,
# 1, ..., each queue's first CPU, CPU 0 skipped and taken last, the poll queue left out; README,
# Pinning), and every I/O queue's interrupt fires. The guest's two NUMA nodes map the queues to
# CPUs 2, 3, 0, 1, not to their own numbers: CPU 0 is queue 2's, not queue 0's.
. "$(dirname "$0")/lib.sh"
nq=$(ls /sys/block/nvme0n1/mq | wc -l)
[ "$nq" -ge 5 ] || fail "nvme0n1 has $nq hardware queues, expected 4 I/O queues and a poll queue"
expected=()
for q in $(seq 0 $((nq - 2))); do
  c=$(cut -d, -f1 "/sys/block/nvme0n1/mq/$q/cpu_list")
  [ "$c" = 0 ] || expected+=("$c")
done
expected+=(0)
settings nvme0n1 > "$T/settings.before"
irq_snapshot '^nvme0q[1-9][0-9]*$' > "$T/irq.before"
run_dp 0 run --profile essd-pl3-test100w nvme0n1 --size 1g --runtime 3 --output-format json
irq_snapshot '^nvme0q[1-9][0-9]*$' > "$T/irq.after"
expect_eq "job CPUs" "$(json "$T/out" '" ".join(str(j["cpu"]) for j in d["jobs"])')" "${expected[*]}"
expect_grep "$T/err" 'test100w' "the spread is test100w.sh's"
irq_delta "$T/irq.before" "$T/irq.after" | tee "$T/delta"
[ "$(grep -vc '^cpu' "$T/delta")" = $((nq - 1)) ] || fail "expected $((nq - 1)) interrupt-driven I/O queues"
! awk '$1 != "cpu" && $2 == 0' "$T/delta" | grep -q . || fail "an I/O queue's interrupt did not fire"
note "every I/O queue's interrupt fired"
check_restored "$T/settings.before" nvme0n1
