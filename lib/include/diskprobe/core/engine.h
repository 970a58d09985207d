// The I/O engines. run_jobs() starts spec.numjobs threads, each with its own ring (or
// pread/pwrite for the sync engine), and returns when runtime or size is done, or `stop`
// becomes true (SIGINT/SIGTERM).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "diskprobe/core/job_spec.h"
#include "diskprobe/core/result.h"
#include "diskprobe/core/results.h"

namespace diskprobe {

// Every block the engine writes starts with these 8 bytes, then the block's byte offset as a
// little-endian u64, so diskprobe can recognise its own data on a device later.
inline constexpr char kBlockMagic[8] = {'D', 'S', 'K', 'P', 'R', 'O', 'B', 'E'};
inline constexpr size_t kBlockHeaderBytes = 16;

struct Target {
  std::string path;         // block device or regular file
  uint64_t size_bytes = 0;  // the whole target
  uint32_t logical_block_size = 512;
};

struct EngineOptions {
  // cpus[j] is the CPU job j is pinned to; empty or -1 = unpinned.
  std::vector<int> cpus;
  const std::atomic<bool>* stop = nullptr;
};

// Checks spec against the target (bs and offset alignment for O_DIRECT, region inside the
// target, iodepth 1..65536, numjobs 1..4096, runtime for time_based runs, rwmixread);
// every problem in one message.
Status validate(const JobSpec& spec, const Target& target);

Result<Results> run_jobs(const JobSpec& spec, const Target& target, const EngineOptions& opts);

}  // namespace diskprobe
