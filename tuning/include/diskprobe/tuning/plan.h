// The tuning plan: which CPU each job runs on, which queue settings change, and advice.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "diskprobe/core/job_spec.h"
#include "diskprobe/tuning/topology.h"

namespace diskprobe::tuning {

struct QueueSetting {
  std::string attribute;  // "rq_affinity"
  std::string value;      // "2"
};

struct Plan {
  std::vector<int> cpus;            // cpus[j] for job j; -1 = unpinned
  std::vector<QueueSetting> queue;  // set on /sys/block/<disk>/queue/
  bool hold_cstates = false;        // hold /dev/cpu_dma_latency at 0
  std::vector<std::string> notes;   // why the plan is what it is
  std::vector<std::string> advice;  // what a person can do that diskprobe will not
};

Plan make_plan(const Topology& topo, const JobSpec& spec);

}  // namespace diskprobe::tuning
