#!/bin/bash
# The kernel's work per I/O on a real driver (null_blk, the cheapest path there is): what
# diskprobe's engine asks of the block layer is no more than fio asks. Two kernel functions
# are counted with kprobes (kprobe_profile's hits; nothing is recorded): touch_atime, which
# every read of a device opened without O_NOATIME calls, and __bio_split_to_limits, which
# blk_mq_submit_bio calls for any bio of more than one segment. A 4k I/O into a buffer
# registered on its own is one segment; inside one registration of every slot it was as many
# as the pages after it, and both functions ran once per I/O (a guest profile, 2026-12-05).
. "$(dirname "$0")/lib.sh"
tr=/sys/kernel/tracing
mountpoint -q "$tr" || mount -t tracefs nodev "$tr" 2>/dev/null || true
if [ ! -w "$tr/kprobe_events" ]; then echo "no kprobe events in this kernel ($tr/kprobe_events)"; exit 77; fi
funcs=(touch_atime __bio_split_to_limits)
echo 0 > "$tr/tracing_on"  # the probes count their hits; the ring buffer keeps nothing
cleanup "echo 1 > $tr/tracing_on"
cleanup "echo > $tr/kprobe_events"
cleanup "echo 0 > $tr/events/kprobes/enable"
for f in "${funcs[@]}"; do echo "p:dp_$f $f" >> "$tr/kprobe_events" || fail "kprobe on $f"; done
echo 1 > "$tr/events/kprobes/enable"

hits() { awk -v e="dp_$1" '$1 == e {print $2}' "$tr/kprobe_profile"; }
# counted NAME IOS COMMAND...: runs COMMAND (whose I/O count is IOS) and prints, per function,
# its calls during the run.
counted() {
  local name=$1; shift
  local -A before
  local f
  for f in "${funcs[@]}"; do before[$f]=$(hits "$f"); done
  "$@" > "$T/$name.json" 2> "$T/$name.err" || { cat "$T/$name.err"; fail "$name exited non-zero"; }
  for f in "${funcs[@]}"; do echo "$f $(( $(hits "$f") - before[$f] ))"; done > "$T/$name.calls"
}

dev=nullb0
bad=()
n=16384  # 64 MiB of 4k I/Os
for rw in randread randwrite; do
  counted "dp-$rw" "$dp" run --profile essd-plx-latency "$dev" --no-tune --rw "$rw" --bs 4k --iodepth 32 \
    --time_based 0 --runtime 0 --size 64M --output-format json
  side=${rw#rand}
  expect_eq "diskprobe $rw I/Os" "$(json "$T/dp-$rw.json" "d['$side']['ios']")" "$n"
  counted "fio-$rw" fio --name=k --filename="/dev/$dev" --ioengine=io_uring --rw="$rw" --bs=4k --iodepth=32 \
    --direct=1 --size=64M --iodepth_batch_submit=32 --iodepth_batch_complete_max=32 --fixedbufs \
    --registerfiles --output-format=json
  for f in "${funcs[@]}"; do
    d=$(awk -v f="$f" '$1 == f {print $2}' "$T/dp-$rw.calls")
    r=$(awk -v f="$f" '$1 == f {print $2}' "$T/fio-$rw.calls")
    note "$rw: $f called $d times for diskprobe's $n I/Os (its preflight's reads too), $r for fio's"
    # Counted machine-wide: every file any process reads meanwhile (diskprobe's profiles and
    # preflight, the shell's tools) calls touch_atime too, hundreds of times; per I/O is 16384.
    [ "$d" -le $((n / 4)) ] || bad+=("$rw: $f ran $d times for $n I/Os: the kernel did it per I/O")
  done
done
[ ${#bad[@]} -eq 0 ] || fail "$(printf '%s; ' "${bad[@]}")"
