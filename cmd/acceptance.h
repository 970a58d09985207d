// What a run must deliver: the profile's expectations, --expect and --volume, gathered and
// checked for syntax before any device is touched.
#pragma once

#include <vector>

#include "diskprobe/cli/args.h"
#include "diskprobe/acceptance/expect.h"
#include "diskprobe/spec/job_spec.h"
#include "diskprobe/base/status.h"

namespace diskprobe::cli {

// Every bad expression is reported together; the message points at the bad part.
Result<std::vector<Expectation>> gather_expectations(const Args& a, const JobSpec& spec);

}  // namespace diskprobe::cli
