// The tuning plan: which CPU each job runs on, which queue settings change, and advice.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "diskprobe/spec/job_spec.h"
#include "diskprobe/tuning/topology.h"

namespace diskprobe::tuning {

struct QueueSetting {
  std::string attribute;  // "rq_affinity"
  std::string value;      // "2"
};

// Why job j sits where it does, for the report and `tune --json`.
struct Pin {
  int job = 0;
  int cpu = -1;
  int hw_queue = -1;     // the hardware queue the job submits to, -1 unknown
  int irq = -1;          // irq plans: the completion interrupt this CPU receives
  std::string irq_name;  // "virtio1-req.0"
};

// A cpuidle state to disable for the run: devices/system/cpu/cpuN/cpuidle/stateK/disable = 1.
struct CStateSetting {
  int cpu = 0;
  int state = 0;
  std::string name;         // for the notes: "haltpoll idle"
  unsigned latency_us = 0;  // exit latency
};

struct Plan {
  unsigned numjobs = 0;             // jobs the run uses: the profile's, or fewer when clamped
  std::vector<int> cpus;            // cpus[j] for job j; -1 = unpinned
  std::vector<Pin> pins;            // the pinned jobs, with their queue and interrupt
  std::vector<QueueSetting> queue;  // set on /sys/block/<disk>/queue/
  std::vector<CStateSetting> disable_cstates;
  bool hold_cstates = false;       // hold /dev/cpu_dma_latency at 0
  std::vector<std::string> notes;  // why the plan is what it is
  // Where the plan falls short of what the profile asks (also in notes, as "warning: ...");
  // `--strict` refuses to run such a plan.
  std::vector<std::string> deviations;
  std::vector<std::string> advice;  // what a person can do that diskprobe will not
};

Plan make_plan(const Topology& topo, const JobSpec& spec);

}  // namespace diskprobe::tuning
