#!/bin/bash
# Seed 000 on its own layout: essd-plx-latency refuses the system disk vda and the data disk
# vdb, runs on the blank vdc pinned to the CPU that takes vdc's completion interrupt, and puts
# every setting back. vdc has a queue per CPU, so the job's CPU is judged against the job's own
# I/Os: the preflight and edge writes of diskprobe's main thread complete on whatever CPU that
# thread ran on (one CI run: CPU 1 took 3,034 of 3,470, with the job's 3,036 writes all there).
. "$(dirname "$0")/lib.sh"
run_dp 3 run --profile essd-plx-latency vda --runtime 2
expect_grep "$T/err" 'mounted|partition-table' "vda refused (mounted, partition table)"
run_dp 3 run --profile essd-plx-latency vdb --runtime 2
expect_grep "$T/err" 'partition-table' "vdb refused (partition table)"

v=$(virtio_of vdc)
settings vdc > "$T/settings.before"
irq_snapshot "^$v-req[.][0-9]+\$" > "$T/irq.before"
run_dp 0 run --profile essd-plx-latency vdc --runtime 4 --output-format json
irq_snapshot "^$v-req[.][0-9]+\$" > "$T/irq.after"
cp "$T/out" "$T/run.json"
cpu=$(json "$T/run.json" 'd["jobs"][0]["cpu"]')
ios=$(json "$T/run.json" 'd["write"]["ios"]')
irq_delta "$T/irq.before" "$T/irq.after" | tee "$T/delta"
note "job on CPU $cpu, $ios writes"
[ "$cpu" -ge 0 ] && [ "$ios" -gt 0 ] || fail "expected a pinned job that wrote"
expect_cpu_took_job "$cpu" "$T/delta" "$ios" vdc
check_restored "$T/settings.before" vdc
