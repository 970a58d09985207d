#!/usr/bin/env bash
# Runs the fleet playbook (packaging/fleet/ansible/diskprobe.yml) for real against three
# inventory hosts with ansible_connection=local, each with its own scratch loop device,
# package root, work directory and journal directory (DISKPROBE_JOURNAL):
#   node-a  blank device, expectations met
#   node-b  blank device and an expectation it cannot meet (exit 4): its report still counts
#   node-c  a device holding a swap signature: check refuses it (exit 3), it fails alone
# Asserts: each host runs the package unpacked into its root (dpkg's database untouched); the
# aggregate lists node-a and node-b with their devices and the figures of their reports, not
# node-c nor an older file in the results directory; the kernel counted each run device's
# writes (/sys/block/loopN/stat); node-c's device was not written.
# usage: fleet_run_test.sh SOURCE_DIR BUILD_DIR PACKAGE_DIR (the .deb, ctest fixture package_deb)
# Exit 77 without root, ansible-playbook, loop devices or the .deb.
set -uo pipefail
src=$1 build=$2 packages=$3
playbook=$src/packaging/fleet/ansible/diskprobe.yml
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }
# Well inside ctest's TIMEOUT, so the trap below still removes the devices.
playbook_timeout=300

[ "$(id -u)" -eq 0 ] || skip "needs root (loop devices)"
[ -e /dev/loop-control ] && command -v losetup >/dev/null || skip "no loop devices (/dev/loop-control, losetup)"
for t in ansible-playbook python3 mkswap dpkg-deb; do
  command -v $t >/dev/null || skip "$t is not installed (packaging/install-deps.sh --test installs it)"
done
deb=$(ls "$packages"/*.deb 2>/dev/null | head -1)
[ -n "$deb" ] || skip "no .deb in $packages (ctest runs package.build_deb first)"

work=$(mktemp -d "${TMPDIR:-/var/tmp}/diskprobe-fleet-run-XXXXXX")
loops=()
cleanup() {
  for l in "${loops[@]}"; do losetup -d "$l" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
dpkg_before=$(dpkg-query -W -f='${Status}' diskprobe 2>/dev/null)

hosts=(node-a node-b node-c)
declare -A dev
for h in "${hosts[@]}"; do
  truncate -s 64M "$work/$h.img" || fail "truncate $work/$h.img"
  l=$(losetup -f --show "$work/$h.img") || fail "losetup -f --show $work/$h.img"
  loops+=("$l")
  dev[$h]=$l
  cat "/sys/block/$(basename "$l")/queue/rq_affinity" >"$work/$h.rq_affinity"
done
mkswap "${dev[node-c]}" >/dev/null || fail "mkswap ${dev[node-c]}"
sum_c=$(md5sum <"${dev[node-c]}")
stat_of() { cat "/sys/block/$(basename "$1")/stat"; }
for h in "${hosts[@]}"; do stat_of "${dev[$h]}" >"$work/$h.stat0"; done

# Each host's own root, work and journal directory (not made here: diskprobe makes it when it
# journals the device's rq_affinity, which shows the variable reached it). The profile tunes
# only the device and holds /dev/cpu_dma_latency per process: no host setting (cpuidle) that
# two runs journalling in different directories would both claim on this one kernel.
args='["--runtime", "2"]'
cat >"$work/inventory.yml" <<EOF
diskprobe_hosts:
  vars:
    ansible_connection: local
    ansible_python_interpreter: /usr/bin/python3
    diskprobe_profile: essd-plx-latency
    diskprobe_extra_args: $args
  hosts:
EOF
for h in "${hosts[@]}"; do
  cat >>"$work/inventory.yml" <<EOF
    $h:
      diskprobe_device: ${dev[$h]}
      diskprobe_root: $work/$h/root
      diskprobe_workdir: $work/$h/work
      diskprobe_journal: $work/$h/journal
EOF
  [ "$h" = node-b ] && echo "      diskprobe_extra_args: ${args%]}, \"--expect\", \"iops>=1000000000\"]" >>"$work/inventory.yml"
done
# A report left by an earlier run: the playbook must aggregate only what it fetched now.
mkdir -p "$work/results"
echo '{}' >"$work/results/stale.json"

export ANSIBLE_CONFIG=$work/ansible.cfg ANSIBLE_HOME=$work/ansible ANSIBLE_LOCAL_TEMP=$work/ansible/tmp \
  ANSIBLE_REMOTE_TEMP=$work/ansible/remote ANSIBLE_NOCOLOR=1 ANSIBLE_RETRY_FILES_ENABLED=0
: >"$ANSIBLE_CONFIG"
start=$(date +%s)
# From the package's directory with a relative diskprobe_deb, as the README's command gives it.
(cd "$(dirname "$deb")" &&
  timeout $playbook_timeout ansible-playbook -i "$work/inventory.yml" "$playbook" -e diskprobe_deb="$(basename "$deb")" \
    -e diskprobe_results="$work/results" -e diskprobe_local="$build/cmd/diskprobe") >"$work/play.log" 2>&1
rc=$?
cat "$work/play.log"
echo "ansible-playbook: exit $rc after $(($(date +%s) - start)) s"
# node-c's refusal fails that host, so ansible-playbook exits 2; the other hosts go on.
[ $rc -eq 2 ] || fail "ansible-playbook exited $rc, expected 2 (node-c refused, the others fine)"

python3 - "$work" "${dev[node-a]}" "${dev[node-b]}" "${dev[node-c]}" <<'PY' || fail "the fleet run's results are wrong"
import json, os, re, sys
work, devs = sys.argv[1], dict(zip(["node-a", "node-b", "node-c"], sys.argv[2:]))
log = open(f"{work}/play.log").read()
recap = dict(re.findall(r"^(node-\w)\s+:.*?failed=(\d+)", log, re.M))
assert recap == {"node-a": "0", "node-b": "0", "node-c": "1"}, f"PLAY RECAP failed counts: {recap}"
assert re.search(r"fatal: \[node-c\]: FAILED!.*\"rc\": 3", log), "node-c did not fail with check's exit 3"

def iops_text(v):  # lib/fleet/compare.cpp format_iops
    return f"{v / 1e6:.2f}M" if v >= 1e6 else f"{v / 1e3:.1f}k" if v >= 1e4 else f"{v:.0f}"

def stat(path):  # /sys/block/X/stat: field 5 writes completed, 7 sectors written
    f = [int(x) for x in open(path).read().split()]
    return f[4], f[6]

table = open(f"{work}/results/fleet.txt").read()
print(table, end="")
rows = {m.group(1): m.group(0) for m in re.finditer(r"^(node-\w)\.json:(\S+).*$", table, re.M)}
assert sorted(rows) == ["node-a", "node-b"], f"aggregated volumes: {sorted(rows)}"
assert "stale" not in table, "an older report in the results directory was aggregated"
for h in ("node-a", "node-b"):
    r = json.load(open(f"{work}/results/{h}.json"))
    assert r["device"] == devs[h], f"{h}: report of {r['device']}, not {devs[h]}"
    cols = rows[h].split()
    assert cols[0] == f"{h}.json:{devs[h]}", f"{h}: volume {cols[0]}"
    assert cols[1] == "essd-plx-latency", f"{h}: profile {cols[1]}"
    iops = r["write"]["iops"]
    assert iops > 0 and cols[2] == iops_text(iops), f"{h}: IOPS {cols[2]}, report {iops}"
    (w0, s0), (w1, s1) = stat(f"{work}/{h}.stat0"), stat(f"/sys/block/{devs[h][5:]}/stat")
    # The kernel saw at least the run's writes (and the preflight's zeroing besides).
    assert w1 - w0 >= r["write"]["ios"] > 0, f"{h}: {w1 - w0} writes counted, the report has {r['write']['ios']}"
    assert (s1 - s0) * 512 >= r["write"]["bytes"], f"{h}: {(s1 - s0) * 512} bytes written, report {r['write']['bytes']}"
    print(f"{h}: {devs[h]} wrote {w1 - w0} I/Os ({r['write']['ios']} measured), {iops:.0f} IOPS")
    journalled = [t for t in r["tuning"] if t["what"].startswith("/sys/")]
    if journalled:  # made by that run, left empty when it restored
        assert os.path.isdir(f"{work}/{h}/journal"), f"{h}: diskprobe_journal unused (DISKPROBE_JOURNAL)"
        assert os.listdir(f"{work}/{h}/journal") == [], f"{h}: a journal left behind"
    print(f"{h}: tuned {[t['what'] for t in r['tuning']]}, journalled in its own directory: {bool(journalled)}")
assert rows["node-a"].endswith(")") and " met (" in rows["node-a"], f"node-a: {rows['node-a']}"
assert rows["node-b"].rstrip().endswith("FAILED"), f"node-b: {rows['node-b']}"
assert re.search(r"^1 volume failed its expectations:\n  node-b\.json:\S+: iops>=1000000000", table, re.M), \
    "the aggregate does not list node-b's unmet expectation"
assert re.search(r"^essd-plx-latency\s+IOPS\s+2\s", table, re.M), "the fleet IOPS line is not over 2 volumes"
(w0, _), (w1, _) = stat(f"{work}/node-c.stat0"), stat(f"/sys/block/{devs['node-c'][5:]}/stat")
assert w1 == w0, f"node-c: refused, yet {w1 - w0} writes"
PY
[ "$(md5sum <"${dev[node-c]}")" = "$sum_c" ] || fail "node-c's device changed although check refused it"
for h in "${hosts[@]}"; do
  [ -x "$work/$h/root/usr/bin/diskprobe" ] || fail "$h: the package was not unpacked into its root"
  [ "$(cat "/sys/block/$(basename "${dev[$h]}")/queue/rq_affinity")" = "$(cat "$work/$h.rq_affinity")" ] ||
    fail "$h: rq_affinity of ${dev[$h]} was not restored"
done
[ ! -e "$work/node-c/journal" ] || fail "node-c: refused, yet a journal directory was made"
[ "$(dpkg-query -W -f='${Status}' diskprobe 2>/dev/null)" = "$dpkg_before" ] || fail "dpkg's state of diskprobe changed"
echo "fleet_run_test: ok"
