#!/bin/bash
# virtio-scsi: every request queue's interrupt has the same name (virtioN-request), so the
# one of the job's hardware queue is found by order; the job runs on the CPU that takes it.
. "$(dirname "$0")/lib.sh"
v=$(virtio_of sda)
[ -n "$v" ] || fail "sda is not on virtio-scsi"
run_dp 0 tune sda --json
pin='d["plan"]["pins"][0]'
cpu=$(json "$T/out" "$pin[\"cpu\"]")
expect_eq "job 0's completion interrupt" "$(json "$T/out" "$pin[\"completion_irq\"][\"name\"]")" "$v-request"
expect_eq "the CPU it is delivered to" "$(json "$T/out" "$pin[\"completion_irq\"][\"effective_cpu\"]")" "$cpu"
settings sda > "$T/settings.before"
irq_snapshot "^$v-request\$" > "$T/irq.before"
run_dp 0 run --profile essd-plx-latency sda --runtime 3 --output-format json
irq_snapshot "^$v-request\$" > "$T/irq.after"
expect_eq "job CPU" "$(json "$T/out" 'd["jobs"][0]["cpu"]')" "$cpu"
irq_delta "$T/irq.before" "$T/irq.after" | tee "$T/delta"
ios=$(json "$T/out" 'd["jobs"][0]["write"]["ios"]')
expect_cpu_took_job "$cpu" "$T/delta" "$ios" sda
check_restored "$T/settings.before" sda
