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

// Why `name` cannot name a job's file (fio's NAME.JOB.0 in --directory): empty, a path
// separator, "." or ".."; "" when it can.
std::string file_name_problem(std::string_view name);

}  // namespace diskprobe
