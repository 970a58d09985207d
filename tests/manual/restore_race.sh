#!/bin/bash
# Manual harness for issue 37 (not in ctest: it is a search for a race, not a check of a
# figure): starts `diskprobe run` on a fresh loop device, runs `diskprobe tune --restore` at a
# random moment 0..MAXMS ms later (start-up included), SIGKILLs the run and restores again;
# every queue setting must then be what it was before. Uses the default journal directory.
#   sudo BIN=build/cmd/diskprobe RBIN=build/libexec/diskprobe N=40 MAXMS=80 tests/manual/restore_race.sh
# Prints one line per trial and "fails=F of N"; exit 1 when any trial left a setting changed.
BIN=${BIN:-build/cmd/diskprobe}; RBIN=${RBIN:-$BIN}
N=${N:-30}; fails=0
work=$(mktemp -d)
for i in $(seq 1 $N); do
  img=$work/img.$i; truncate -s 256M $img  # one file per trial: a detaching loop still holds the last
  loop=$(losetup -f --show --direct-io=on $img); d=${loop#/dev/}
  q=/sys/block/$d/queue
  b="$(cat $q/rq_affinity) $(cat $q/nomerges) $(sed 's/.*\[\(.*\)\].*/\1/' $q/scheduler)"
  $BIN run --profile essd-plx-latency $d --runtime 30 --rq_affinity 2 --nomerges 2 --scheduler none >/dev/null 2>$work/run.err &
  pid=$!
  sleep 0.$(printf %03d $((RANDOM % ${MAXMS:-400})))
  had=$( [ -e /run/diskprobe/$d.json ] && echo y || echo n)
  $RBIN tune --restore >$work/r1.out 2>$work/r1.err; rc1=$?
  alive=$(kill -0 $pid 2>/dev/null && echo y || echo n)
  after=$( [ -e /run/diskprobe/$d.json ] && echo y || echo n)
  kill -KILL $pid 2>/dev/null; wait $pid 2>/dev/null
  $RBIN tune --restore >$work/r2.out 2>$work/r2.err; rc2=$?
  a="$(cat $q/rq_affinity) $(cat $q/nomerges) $(sed 's/.*\[\(.*\)\].*/\1/' $q/scheduler)"
  st=ok; [ "$a" != "$b" ] && st=FAIL && fails=$((fails+1))
  [ $alive = n ] && { echo "run.err: $(head -c 300 $work/run.err)"; }; echo "$i $st had=$had after=$after alive=$alive rc1=$rc1 rc2=$rc2 before=[$b] now=[$a] $(head -c 200 $work/r1.err | tr '\n' ' ')"
  [ $st = FAIL ] && { echo "$b" | { read r n s; echo $r > $q/rq_affinity; echo $n > $q/nomerges; echo $s > $q/scheduler; }; }
  losetup -d $loop; rm -f $img
done
echo "fails=$fails of $N"
rm -rf "$work"; [ $fails -eq 0 ]
