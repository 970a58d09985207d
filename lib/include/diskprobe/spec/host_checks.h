// Checks of a JobSpec against this host that need no target, run before anything changes:
// CPU lists against the online CPUs (read through SysRoot) and this process's affinity, names
// that become file names. Every problem in one message.
#pragma once

#include <string>
#include <string_view>

#include "diskprobe/spec/job_spec.h"
#include "diskprobe/base/status.h"
#include "diskprobe/base/sysroot.h"

namespace diskprobe {

Status validate_on_host(const JobSpec& spec, const SysRoot& root);

// fio's numa_cpu_nodes and numa_mem_policy against this host's NUMA nodes (sysfs
// devices/system/node): every node named must be online; numa_cpu_nodes becomes the job's
// cpus_allowed (the nodes' CPUs, within cpus_allowed where that is given too). What it came to
// for the log in *said ("numa_cpu_nodes=0: CPUs 0-1").
Status resolve_numa(JobSpec& spec, const SysRoot& root, std::string* said);

// Why `name` cannot name a job's file (fio's NAME.JOB.0 in --directory): empty, a path
// separator, "." or ".."; "" when it can.
std::string file_name_problem(std::string_view name);

}  // namespace diskprobe
