#!/bin/bash
# null_blk without memory_backed completes reads without filling the buffer: the sampler
# must see that as no data, not foreign data, so the blank device passes and runs.
. "$(dirname "$0")/lib.sh"
run_dp 0 check nullb0 --json
expect_eq "nullb0 safe" "$(json "$T/out" 'd["safe"]')" "True"
expect_eq "sampler ran" "$(json "$T/out" 'd["sampler"]["ran"]')" "True"
settings nullb0 > "$T/settings.before"
run_dp 0 run --profile essd-plx-latency nullb0 --runtime 2 --output-format json
note "nullb0: $(json "$T/out" 'd["write"]["ios"]') writes"
run_dp 0 run --profile cloud-randread-iops nullb0 --iodepth 32 --runtime 2 --output-format json
note "nullb0: $(json "$T/out" 'd["read"]["ios"]') reads at QD32"
check_restored "$T/settings.before" nullb0
