// The I/O engines. run_jobs() starts spec.numjobs threads, each with its own ring (or
// pread/pwrite for the sync engine), and returns when runtime or size is done, or `stop`
// becomes true (SIGINT/SIGTERM).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "diskprobe/core/block_header.h"
#include "diskprobe/core/job_spec.h"
#include "diskprobe/core/result.h"
#include "diskprobe/core/results.h"

namespace diskprobe {


struct Target {
  std::string path;         // block device or regular file
  uint64_t size_bytes = 0;  // the whole target
  uint32_t logical_block_size = 512;
  uint64_t device_id = 0;   // device_identity() of the device, for every block header
};

struct EngineOptions {
  // cpus[j] is the CPU job j is pinned to; empty or -1 = unpinned.
  std::vector<int> cpus;
  const std::atomic<bool>* stop = nullptr;
  uint64_t run_id = 0;      // 0 = pick a random one
};

// Checks spec against the target (bs and offset alignment for O_DIRECT, region inside the
// target, iodepth 1..65536, numjobs 1..4096, runtime for time_based runs, rwmixread);
// every problem in one message.
Status validate(const JobSpec& spec, const Target& target);

Result<Results> run_jobs(const JobSpec& spec, const Target& target, const EngineOptions& opts);

}  // namespace diskprobe
