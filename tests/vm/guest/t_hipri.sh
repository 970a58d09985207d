#!/bin/bash
# hipri: polled completions on the NVMe's poll queue (nvme.poll_queues=1), so the reads
# complete without an interrupt; refused with the reason on vdc, which has no poll queue.
. "$(dirname "$0")/lib.sh"
run_dp 2 run --profile essd-plx-latency vdc --hipri 1 --runtime 1
expect_grep "$T/err" 'vdc has no poll queues' "refused on vdc: no poll queues"

mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug
poll=$(( $(ls /sys/block/nvme0n1/mq | wc -l) - 1 ))
expect_eq "hardware queue $poll type" "$(cat /sys/kernel/debug/block/nvme0n1/hctx$poll/type)" poll
# blk-mq keeps no per-queue counter here; a read that was not polled would have completed
# through one of the I/O queues' interrupts.
irq_snapshot '^nvme0q[1-9][0-9]*$' > "$T/irq.before"
run_dp 0 run --profile essd-plx-latency nvme0n1 --hipri 1 --rw randread --runtime 2 --output-format json
irq_snapshot '^nvme0q[1-9][0-9]*$' > "$T/irq.after"
ios=$(json "$T/out" 'd["read"]["ios"]')
irq_delta "$T/irq.before" "$T/irq.after" > "$T/delta"
irqs=$(irq_total "$T/delta")
note "$ios polled reads; I/O queue interrupts meanwhile: $irqs"
[ "$ios" -gt 0 ] || fail "no reads"
# The preflight's reads are not polled and take their interrupts; the run's reads none.
[ "$irqs" -lt $((ios / 10 + 100)) ] || fail "$irqs interrupts for $ios polled reads"
