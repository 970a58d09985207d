#!/bin/bash
# numa: fio's examples/numa.fio in a guest of two NUMA nodes (CPUs 0-1 and 2-3, run.sh): both
# of its jobs (numa_cpu_nodes=0 with bind:0, 0-1 with interleave:0-1) as fio 3.33 runs them, and
# every job task's memory policy and CPUs, read from /proc while each tool runs, the same for
# both; each job's I/O buffers (its largest anonymous mapping) on the nodes its policy names.
. "$(dirname "$0")/lib.sh"
[ -d /sys/devices/system/node/node1 ] || { echo "the guest has one NUMA node (run.sh gives it two)"; exit 77; }
ex=$DP_SRC/../shared/fio-examples/numa.fio
[ -f "$ex" ] || { echo "fio's examples/ not found at $ex"; exit 77; }
command -v fio >/dev/null || { echo "fio is not installed on the host"; exit 77; }
# The example on vdd (blank, read only), 64 MiB, 10 s a job (TCG starts slowly, and a sample of
# every task takes a while with the other tests' load).
sed -e 's#^filename=.*#filename=/dev/vdd#' -e 's#^size=.*#size=64m#' -e '/^\[global\]/a time_based\nruntime=10' \
  "$ex" > "$T/numa.fio"

# A process and its children (fio's job processes), from /proc alone: pgrep over 9p under TCG
# took seconds a call, longer than a job.
tree_of() {  # pid
  local c
  echo "$1"
  for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do echo "$c"; done
}
# Each task of a process tree with a memory policy of its own (its numa_maps' policy): "policy CPUs", sorted.
tasks_of() {  # pid
  local p t pol cpus k v
  for p in $(tree_of "$1"); do
    for t in /proc/$p/task/*; do
      # bash's own reads: an awk per task (a binary over 9p under TCG) took seconds a sample
      read -r _ pol _ 2>/dev/null < "$t/numa_maps" || continue
      cpus=
      while read -r k v; do [ "$k" = Cpus_allowed_list: ] && cpus=$v; done 2>/dev/null < "$t/status"
      [ -n "$pol" ] && [ -n "$cpus" ] && [ "$pol" != default ] && echo "$pol $cpus"
    done
  done | sort -u
}
# Anonymous pages of a process tree on node 1 (a diskprobe run's threads share one address space).
node1_pages() {  # pid
  local p
  for p in $(tree_of "$1"); do cat "/proc/$p/numa_maps" 2>/dev/null; done |
    awk '/anon=/ {for (i = 1; i <= NF; i++) if ($i ~ /^N1=/) {split($i, kv, "="); n += kv[2]}} END {print n + 0}'
}
sample() {  # name command...: runs it; its tasks sampled every 0.5 s, the fullest sample kept
  local out=$1; shift
  "$@" > "$T/$out.json" 2> "$T/$out.err" &
  local pid=$! i
  : > "$T/$out.tasks"
  for i in $(seq 40); do
    sleep 0.5
    kill -0 "$pid" 2>/dev/null || break
    tasks_of "$pid" > "$T/$out.now"
    echo "sample $i at $(date +%s.%N | cut -c1-14): $(tr '\n' ';' < "$T/$out.now")" >> "$T/$out.trace"
    [ "$(wc -l < "$T/$out.now")" -gt "$(wc -l < "$T/$out.tasks")" ] && cp "$T/$out.now" "$T/$out.tasks"
    node1_pages "$pid" > "$T/$out.n1.now"
    [ "$(cat "$T/$out.n1.now")" -gt "$(cat "$T/$out.n1" 2>/dev/null || echo -1)" ] && cp "$T/$out.n1.now" "$T/$out.n1"
  done
  wait "$pid" || fail "$* exited $?: $(tail -n 5 "$T/$out.err")"
}
sample fio fio --output-format=json "$T/numa.fio"
sample dp "$dp" fio --output-format=json "$T/numa.fio"
for who in fio dp; do
  note "$who: jobs (name, error, runtime ms): $(json "$T/$who.json" '[(j["jobname"], j["error"], j["job_runtime"]) for j in d["jobs"]]')"
  note "$who: tasks (policy, CPUs): $(tr '\n' ';' < "$T/$who.tasks")"
done
sed 's/^/   /' "$T/fio.trace" | head -n 6
expect_eq "tasks' policies and CPUs, against fio's" "$(cat "$T/dp.tasks")" "$(cat "$T/fio.tasks")"
expect_grep "$T/dp.tasks" '^bind:0 0-1$' "job1: bound to node 0, on its CPUs"
expect_grep "$T/dp.tasks" '^interleave:0-1 0-3$' "job2: interleaved over both nodes, on all CPUs"
# The same jobs, directions and bytes per I/O as fio's.
facts='[(j["jobname"], j["read"]["total_ios"] > 0, j["write"]["total_ios"], j["read"]["io_bytes"] // max(1, j["read"]["total_ios"])) for j in d["jobs"]]'
expect_eq "jobs, reads, writes, bytes per read" "$(json "$T/dp.json" "$facts")" "$(json "$T/fio.json" "$facts")"

# Where the buffers go: one job on node 0's CPUs with its memory bound to node 1, where local
# allocation would put nothing. Its 16 buffers of 512 KiB are 2,048 pages: on node 1, both tools.
cat > "$T/far.fio" <<EOF2
[far]
filename=/dev/vdd
ioengine=libaio
direct=1
rw=randread
bs=512k
iodepth=16
size=64m
time_based
runtime=10
numa_cpu_nodes=0
numa_mem_policy=bind:1
EOF2
sample fiofar fio --output-format=json "$T/far.fio"
sample dpfar "$dp" fio --output-format=json "$T/far.fio"
note "pages on node 1 with bind:1 from node 0's CPUs: fio $(cat "$T/fiofar.n1"), diskprobe $(cat "$T/dpfar.n1")"
expect_eq "the far job's tasks, against fio's" "$(cat "$T/dpfar.tasks")" "$(cat "$T/fiofar.tasks")"
[ "$(cat "$T/fiofar.n1")" -ge 2048 ] || fail "fio put $(cat "$T/fiofar.n1") pages on node 1, expected its 2048 buffer pages"
[ "$(cat "$T/dpfar.n1")" -ge 2048 ] || fail "diskprobe put $(cat "$T/dpfar.n1") pages on node 1, expected its 2048 buffer pages"
