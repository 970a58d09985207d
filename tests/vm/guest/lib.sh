# Helpers for the guest tests (sourced). Each test is a bash script that exits 0 on pass,
# 1 on failure (with what it expected and what it got), 77 when the guest lacks something.
dp=$DP_BUILD/cmd/diskprobe
export DISKPROBE_PROFILE_DIR=$DP_SRC/profiles
T=$(mktemp -d /tmp/vmtest.XXXXXX)

fail() { echo "FAIL: $*" >&2; exit 1; }
note() { echo "-- $*"; }

wait_for() {  # path: devtmpfs creates nodes asynchronously; there is no udev to settle
  local i
  for i in $(seq 100); do [ -e "$1" ] && return 0; sleep 0.1; done
  cat /proc/partitions; fail "$1 did not appear"
}

# run_dp RC ARGS...: runs diskprobe, stdout in $T/out, stderr in $T/err; fails unless exit RC.
run_dp() {
  local want=$1 rc=0; shift
  echo "+ diskprobe $*"
  "$dp" "$@" > "$T/out" 2> "$T/err" || rc=$?
  if [ "$rc" != "$want" ]; then
    sed 's/^/   out: /' "$T/out" | head -n 60; sed 's/^/   err: /' "$T/err" | head -n 40
    fail "diskprobe $* exited $rc, expected $want"
  fi
}

# jq-like: json FILE EXPR evaluates a Python expression over the document d.
json() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

# Every setting a run may change, in one listing, to compare before and after.
settings() {  # device...
  local d
  for d in "$@"; do
    grep -H . /sys/block/"$d"/queue/{rq_affinity,scheduler,nomerges} 2>/dev/null || true
  done
  grep -H . /sys/devices/system/cpu/cpu*/cpuidle/state*/disable 2>/dev/null || true
}
check_restored() {  # before-file device...
  local before=$1; shift
  settings "$@" > "$T/settings.after"
  diff "$before" "$T/settings.after" || fail "settings not restored after the run"
  [ ! -e "${DISKPROBE_JOURNAL:-/run/diskprobe/restore.json}" ] || fail "restore journal left behind"
}

# Per-CPU counts of the interrupts whose name matches an extended regex, one line per IRQ:
# "NAME c0 c1 c2 c3".
irq_counts() {
  awk -v pat="$1" 'NR == 1 { n = NF; next }
    { name = $NF; if (name !~ pat) next; line = name
      for (i = 2; i <= n + 1; i++) line = line " " $i; print line }' /proc/interrupts | sort
}
