#!/bin/bash
# virtio-scsi: every request queue's interrupt has the same name (virtioN-request), so the
# one of the job's hardware queue is found by order; the job runs on the CPU that takes it.
. "$(dirname "$0")/lib.sh"
v=$(virtio_of sda)
[ -n "$v" ] || fail "sda is not on virtio-scsi"
run_dp 0 tune sda --json
irq=$(json "$T/out" '[p.get("completion_irq") for p in d["plan"]["pins"]][0]')
cpu=$(json "$T/out" 'd["plan"]["pins"][0]["cpu"]')
note "plan: job 0 on CPU $cpu, completion IRQ $irq"
expect_grep "$T/out" "\"name\": \"$v-request\"" "the request queues' interrupts are found"
settings sda > "$T/settings.before"
irq_snapshot "^$v-request\$" > "$T/irq.before"
run_dp 0 run --profile essd-plx-latency sda --runtime 3 --output-format json
irq_snapshot "^$v-request\$" > "$T/irq.after"
expect_eq "job CPU" "$(json "$T/out" 'd["jobs"][0]["cpu"]')" "$cpu"
irq_delta "$T/irq.before" "$T/irq.after" | tee "$T/delta"
took=$(awk -v c=$((cpu + 2)) '$1 == "cpu" {t = 0; for (i = 2; i <= NF; i++) t += $i; print $c, t}' "$T/delta")
note "CPU $cpu took ${took% *} of ${took#* } sda completion interrupts"
[ "${took% *}" -ge $(( ${took#* } * 9 / 10 )) ] || fail "the job's CPU took under 90% of sda's completion interrupts"
check_restored "$T/settings.before" sda
