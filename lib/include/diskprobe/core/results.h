// Results: what a run measured, per job and for the whole group.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "diskprobe/core/environment.h"
#include "diskprobe/core/expect.h"
#include "diskprobe/core/histogram.h"
#include "diskprobe/core/job_spec.h"

namespace diskprobe {

struct DirectionStats {
  uint64_t ios = 0;
  uint64_t bytes = 0;
  Histogram slat, clat, lat;                // ns
  std::vector<uint64_t> ios_per_second;     // completions in each whole second of the run
  void merge(const DirectionStats& o);      // histograms summed, per-second series added
};

struct ErrorStats {
  uint64_t count = 0;
  uint64_t short_ios = 0;
  int first_errno = 0;            // positive errno of the first error
  uint64_t first_offset = 0;
};

struct CpuUsage {
  double user_s = 0, sys_s = 0;
  uint64_t voluntary_ctx = 0, involuntary_ctx = 0;
};

struct JobResult {
  unsigned job = 0;
  int cpu = -1;                   // pinned CPU, -1 = unpinned
  DirectionStats read, write;
  ErrorStats errors;
  double runtime_s = 0;           // measured, ramp excluded
};

// A setting a run changed on the host, for the report.
struct AppliedSetting {
  std::string what;               // "/sys/block/loop3/queue/rq_affinity"
  std::string old_value, new_value;
};

// The device's own counters from /sys/block/X/stat, before/after (fio's "Disk stats").
struct DiskStats {
  bool valid = false;
  uint64_t read_ios = 0, read_merges = 0, read_ticks_ms = 0;
  uint64_t write_ios = 0, write_merges = 0, write_ticks_ms = 0;
  uint64_t io_ticks_ms = 0, time_in_queue_ms = 0;
  double util_percent = 0;
};

struct Results {
  JobSpec spec;
  std::string device;             // "/dev/loop3"
  std::string started_at;         // ISO 8601 UTC
  double runtime_s = 0;           // wall time of the measured part
  std::vector<JobResult> jobs;
  DirectionStats read, write;     // all jobs merged
  ErrorStats errors;              // all jobs merged
  CpuUsage cpu;
  DiskStats disk;
  std::string preflight;          // "safe" or the verdict summary
  std::vector<AppliedSetting> tuning;
  std::vector<std::string> notes; // "loop3 has no completion interrupt: running unpinned"
  bool interrupted = false;       // stopped early by SIGINT/SIGTERM
  bool preflight_safe = true;     // the verdict behind `preflight`
  RunEnvironment environment;     // filled by the caller (cmd), not the engine
  std::vector<ExpectationResult> expectations;

  // Folds jobs into read/write/errors.
  void aggregate();
};

}  // namespace diskprobe
