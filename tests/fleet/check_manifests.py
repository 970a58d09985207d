#!/usr/bin/env python3
"""Schema checks for packaging/fleet: the Kubernetes Job and the Ansible playbook hold what
a fleet run needs. usage: check_manifests.py JOB.yaml PLAYBOOK.yml; exit 77 without PyYAML."""
import sys

try:
    import yaml
except ImportError:
    print("SKIP: python3-yaml is not installed (packaging/install-deps.sh --test installs it)")
    sys.exit(77)

problems = []


def need(cond, what):
    if not cond:
        problems.append(what)


def dig(obj, *path):
    for p in path:
        if isinstance(obj, dict):
            obj = obj.get(p)
        elif isinstance(obj, list) and isinstance(p, int) and p < len(obj):
            obj = obj[p]
        else:
            return None
    return obj


def check_job(path):
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    for d in docs:
        for key in ("apiVersion", "kind", "metadata", "spec"):
            need(key in d, f"{path}: a {d.get('kind', '?')} lacks {key}")
    jobs = [d for d in docs if d.get("kind") == "Job"]
    need(len(jobs) == 1, f"{path}: expected one Job, found {len(jobs)}")
    if not jobs:
        return
    job = jobs[0]
    need(job.get("apiVersion") == "batch/v1", f"{path}: Job apiVersion is not batch/v1")
    pod = dig(job, "spec", "template", "spec") or {}
    need(pod.get("restartPolicy") in ("Never", "OnFailure"), f"{path}: a Job's pod needs restartPolicy Never or OnFailure")
    containers = pod.get("containers") or []
    need(len(containers) == 1, f"{path}: expected one container")
    if not containers:
        return
    c = containers[0]
    for key in ("name", "image"):
        need(key in c, f"{path}: container lacks {key}")
    need(dig(c, "securityContext", "privileged") is True, f"{path}: the container must be privileged")
    args = [str(a) for a in (c.get("command") or []) + (c.get("args") or [])]
    need("run" in args and "--profile" in args, f"{path}: the container does not 'run --profile'")
    need("--output-format" in args and args[args.index("--output-format") + 1] == "json",
         f"{path}: results must be --output-format json")
    volumes = {v.get("name"): v for v in pod.get("volumes") or []}
    devices = c.get("volumeDevices") or []
    host_dev = [m for m in c.get("volumeMounts") or []
                if dig(volumes.get(m.get("name")), "hostPath", "path") == "/dev"]
    need(devices or host_dev, f"{path}: no block device passed through (volumeDevices or hostPath /dev)")
    for d in devices:
        need(d.get("name") in volumes, f"{path}: volumeDevice {d.get('name')} has no volume")
        need(d.get("devicePath") in args, f"{path}: the device {d.get('devicePath')} is not the one run is given")
        claim = dig(volumes.get(d.get("name")), "persistentVolumeClaim", "claimName")
        pvcs = [x for x in docs if x.get("kind") == "PersistentVolumeClaim" and dig(x, "metadata", "name") == claim]
        for pvc in pvcs:
            need(dig(pvc, "spec", "volumeMode") == "Block", f"{path}: claim {claim} must be volumeMode: Block")
    if "--output" in args:
        out = args[args.index("--output") + 1]
        mounted = [m for m in c.get("volumeMounts") or [] if out.startswith(m.get("mountPath", "//") + "/")]
        need(mounted, f"{path}: --output {out} is not on a mounted volume")
        for m in mounted:
            need(m.get("name") in volumes, f"{path}: volumeMount {m.get('name')} has no volume")


def check_playbook(path):
    with open(path) as f:
        plays = yaml.safe_load(f)
    need(isinstance(plays, list) and plays, f"{path}: not a list of plays")
    if not isinstance(plays, list):
        return
    text = str([p.get("tasks") for p in plays])  # the tasks only: a comment proves nothing
    for p in plays:
        need("hosts" in p and "tasks" in p, f"{path}: a play lacks hosts or tasks")
    tasks = [t for p in plays for t in p.get("tasks") or []]
    runs = [t for t in tasks if "'run', '--profile'" in str(t) or "diskprobe run" in str(t)]
    need(runs, f"{path}: no task runs 'diskprobe run'")
    need("'--output-format', 'json'" in text or "--output-format json" in text,
         f"{path}: the run does not write JSON")
    need(any("ansible.builtin.fetch" in t or "fetch" in t for t in tasks), f"{path}: no task fetches the reports")
    need("'aggregate'" in text or "diskprobe aggregate" in text, f"{path}: nothing runs 'diskprobe aggregate'")
    for t in tasks:
        need("name" in t, f"{path}: a task has no name")


check_job(sys.argv[1])
check_playbook(sys.argv[2])
for p in problems:
    print("FAIL:", p, file=sys.stderr)
if problems:
    sys.exit(1)
print("manifest and playbook: ok")
