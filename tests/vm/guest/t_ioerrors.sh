#!/bin/bash
# I/O errors from the kernel, not from a fake: a dm `error` zone in the middle of vdd and a
# dm-flakey device that fails every I/O in its down intervals. Errors are counted per kind
# with offsets; a job stopped by one exits 1, errors a run went on through fail the profile's
# errors==0 (exit 4); no crash, every setting back.
. "$(dirname "$0")/lib.sh"
modprobe dm_mod; modprobe dm_flakey
sectors=$(blockdev --getsz /dev/vdd)
# 1 MiB of errors at 100 MiB: clear of what the preflight reads (the first and last 4 MiB;
# superblock copies at 64 MiB and at ext/xfs group starts) and of the zeroing after a write.
zs=$((100 * 2048)); zl=2048
dmsetup create dp-error --table "0 $zs linear /dev/vdd 0
$zs $zl error
$((zs + zl)) $((sectors - zs - zl)) linear /dev/vdd $((zs + zl))"
cleanup dmsetup remove dp-error
dm_of() { basename "$(dirname "$(dirname "$(grep -l "^$1\$" /sys/block/dm-*/dm/name)")")"; }
dm=$(dm_of dp-error)
note "dp-error is /dev/$dm"
settings "$dm" > "$T/settings.before"

run_dp 1 run --profile essd-plx-latency "/dev/$dm" --runtime 5 --rw randread --output-format json
expect_eq "stopped" "$(json "$T/out" 'd["errors"]["stopped"]')" "True"
expect_grep "$T/err" 'EIO|Input/output error' "the stop reason names EIO"
check_restored "$T/settings.before" "$dm"

run_dp 4 run --profile essd-plx-latency "/dev/$dm" --runtime 3 --iodepth 8 --continue_on_error all --output-format json
cp "$T/out" "$T/error.json"
eio=$(json "$T/error.json" 'd["errors"]["eio"]["count"]')
off=$(json "$T/error.json" 'd["errors"]["eio"]["first_offset_bytes"]')
other=$(json "$T/error.json" 'd["errors"]["other"]["count"]')
note "EIO $eio, first at byte $off; other $other; written $(json "$T/error.json" 'd["write"]["ios"]')"
[ "$eio" -gt 0 ] || fail "no EIO counted"
[ "$off" -ge $((zs * 512)) ] && [ "$off" -lt $(((zs + zl) * 512)) ] || fail "first EIO at $off, outside the error zone"
expect_eq "errors==0 not met" "$(json "$T/error.json" 'd["expectations_met"]')" "False"
check_restored "$T/settings.before" "$dm"
dmsetup remove dp-error

# dm-flakey (up 1 s, then down 1 s: every I/O fails) loaded under a running read job, so
# the preflight's reads see a healthy disk however long they take on this emulated CPU.
dmsetup create dp-flakey --table "0 $sectors linear /dev/vdd 0"
cleanup dmsetup remove dp-flakey
dm=$(dm_of dp-flakey)
settings "$dm" > "$T/settings.before"
"$dp" run --profile essd-plx-latency "/dev/$dm" --rw randread --runtime 6 --continue_on_error all \
  --output-format json > "$T/out" 2> "$T/err" &
job=$!
for i in $(seq 300); do  # the job's own reads: more than libblkid's few
  [ "$(awk '{print $1}' "/sys/block/$dm/stat")" -gt 200 ] && break
  kill -0 $job 2>/dev/null || break
  sleep 0.1
done
dmsetup load dp-flakey --table "0 $sectors flakey /dev/vdd 0 1 1"
dmsetup suspend dp-flakey && dmsetup resume dp-flakey
rc=0; wait $job || rc=$?
[ "$rc" = 4 ] || { cat "$T/err"; fail "flakey run exited $rc, expected 4"; }
eio=$(json "$T/out" 'd["errors"]["eio"]["count"]')
off=$(json "$T/out" 'd["errors"]["eio"]["first_offset_bytes"]')
reads=$(json "$T/out" 'd["read"]["ios"]')
note "flakey: $reads reads, EIO $eio, first at byte $off"
[ "$eio" -gt 0 ] && [ "$reads" -gt 0 ] || fail "expected both reads and EIO from the flakey device"
[ "$off" -ge 0 ] && [ "$off" -lt $((sectors * 512)) ] && [ $((off % 4096)) = 0 ] ||
  fail "first EIO offset $off is not a 4k block of the device"
check_restored "$T/settings.before" "$dm"
