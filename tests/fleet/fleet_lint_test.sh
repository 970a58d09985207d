#!/usr/bin/env bash
# Lints packaging/fleet: the Kubernetes Job's YAML against the keys a fleet run needs, the
# playbook's structure, and `ansible-playbook --syntax-check` where ansible is installed.
# A deliberately broken copy of each must fail, so the checks cannot pass vacuously.
# usage: fleet_lint_test.sh SOURCE_DIR
set -uo pipefail
src=$1
fleet=$src/packaging/fleet
here=$(cd "$(dirname "$0")" && pwd)
job=$fleet/kubernetes/diskprobe-job.yaml playbook=$fleet/ansible/diskprobe.yml
work=$(mktemp -d "${TMPDIR:-/tmp}/diskprobe-fleet-XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
python3 "$here/check_manifests.py" "$job" "$playbook"
rc=$?
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || fail "schema check"

# Negative controls: an unprivileged Job and a playbook that never aggregates are caught.
sed 's/privileged: true/privileged: false/' "$job" >"$work/job.yaml"
python3 "$here/check_manifests.py" "$work/job.yaml" "$playbook" 2>/dev/null && fail "an unprivileged Job passed"
sed "s/'aggregate'/'devices'/" "$playbook" >"$work/playbook.yml"
python3 "$here/check_manifests.py" "$job" "$work/playbook.yml" 2>/dev/null && fail "a playbook without aggregate passed"

if command -v ansible-playbook >/dev/null; then
  export ANSIBLE_LOCAL_TEMP=$work/ansible ANSIBLE_HOME=$work/ansible ANSIBLE_NOCOLOR=1
  ansible-playbook --syntax-check -i "$fleet/ansible/inventory.example.ini" "$playbook" ||
    fail "ansible-playbook --syntax-check $playbook"
  printf -- '- hosts: all\n  tasks:\n    - name: broken\n      ansible.builtin.command:\n      no_such_keyword: 1\n' >"$work/broken.yml"
  ansible-playbook --syntax-check -i "$fleet/ansible/inventory.example.ini" "$work/broken.yml" >/dev/null 2>&1 &&
    fail "--syntax-check accepted a broken playbook"
  echo "ansible-playbook --syntax-check: ok"
else
  echo "SKIP: ansible is not installed (packaging/install-deps.sh --test installs it); schema checks passed"
  exit 77
fi
echo "fleet_lint_test: ok"
