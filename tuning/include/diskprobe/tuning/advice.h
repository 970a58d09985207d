// Advice: what a person can change on the host that diskprobe will not (boot parameters,
// daemons, governors), with the exact commands for the distribution it runs on.
#pragma once

#include <string>
#include <vector>

#include "diskprobe/spec/job_spec.h"
#include "diskprobe/tuning/plan.h"
#include "diskprobe/tuning/topology.h"

namespace diskprobe::tuning {

enum class DistroFamily { RedHat, Debian, Unknown };
DistroFamily distro_family(const HostFacts& host);

// True when the kernel command line carries idle=poll (before any "--").
bool has_idle_poll(const std::string& cmdline);

// Advice for this topology, workload and plan (make_plan calls it to fill Plan::advice).
std::vector<std::string> advise(const Topology& topo, const JobSpec& spec, const Plan& plan);

}  // namespace diskprobe::tuning
