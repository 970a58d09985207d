// Results: what a run measured, per job and for the whole group.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "diskprobe/device/block_device.h"
#include "diskprobe/stats/histogram.h"
#include "diskprobe/spec/job_spec.h"

namespace diskprobe {

struct DirectionStats {
  uint32_t bs = 0;                          // block size of this direction (bytes), for bw samples
  uint64_t ios = 0;
  uint64_t bytes = 0;
  Histogram slat, clat, lat;                // ns
  std::vector<uint64_t> ios_per_second;     // completions in each whole second of the run
  // This direction's own measured time where it is not the job's (fio's verify read-back: the
  // reads after the writes); 0 = the job's runtime.
  double runtime_s = 0;
  void merge(const DirectionStats& o);      // histograms summed, per-second series added
};
inline double runtime_of(const DirectionStats& d, double job_runtime_s) {
  return d.runtime_s > 0 ? d.runtime_s : job_runtime_s;
}

// How often one kind of error happened and where it first did.
struct ErrorCount {
  uint64_t count = 0;
  uint64_t first_offset = 0;      // byte offset of the first one (valid when count > 0)
  void add(uint64_t offset) {
    if (count++ == 0) first_offset = offset;
  }
  void merge(const ErrorCount& o);
};

struct ErrorStats {
  uint64_t count = 0;             // failed I/Os (res < 0, -EAGAIN excluded: it is resent)
  uint64_t short_ios = 0;         // completed with fewer bytes than asked
  int first_errno = 0;            // positive errno of the first error
  uint64_t first_offset = 0;
  // Per kind: errno values the issue names, the rest, short reads/writes, -EAGAIN resends.
  ErrorCount eio, enospc, other, short_read, short_write, eagain;
  bool stopped = false;           // a job ended early on an error continue_on_error did not allow
  std::string stop_reason;        // "write error Input/output error at offset 4096 (continue_on_error=none)"
};

// A verify mismatch: which block and what was wrong with it.
struct VerifyMismatch {
  unsigned job = 0;
  uint64_t offset = 0;
  const char* reason = "";        // static text: "bad checksum", "no diskprobe header", ...
  uint64_t seq = 0;               // stale blocks: the write seq found, and the last one written
  uint64_t expected_seq = 0;      // there (a lower bound when expected_at_least)
  bool expected_at_least = false;
};

// "stale: seq 11, expected 523" (an older write of this run: the last one there was lost), or
// the reason alone for other mismatches.
std::string mismatch_text(const VerifyMismatch& m);

struct VerifyStats {
  uint64_t blocks_checked = 0;
  uint64_t mismatches = 0;
  std::vector<VerifyMismatch> first;  // the first kMaxListed, in the order found
  static constexpr size_t kMaxListed = 16;
  std::vector<std::string> dumped;    // verify_dump: the files the failed blocks went to
  void add_mismatch(unsigned job, uint64_t offset, const char* reason);
  void add_mismatch(const VerifyMismatch& m);
  void merge(const VerifyStats& o);
};

struct CpuUsage {
  double user_s = 0, sys_s = 0;
  uint64_t voluntary_ctx = 0, involuntary_ctx = 0;
};

// One measured I/O, as fio's per-I/O logs need it (JobSpec::logs; kept only when a log is asked).
struct IoSample {
  uint64_t t_ns = 0;     // completion, from the measured window's start
  uint64_t slat_ns = 0;
  uint64_t clat_ns = 0;
  uint64_t offset = 0;
  uint32_t bytes = 0;
  uint16_t prio = 0;     // the I/O's ioprio value (class << 13 | level)
  bool write = false;
};

// fio's "IO depths" figures, counted as fio's io_u_mark_depth/_submit/_complete count them:
// each submit call adds its I/Os to the bucket of the depth then in flight (level: 1, 2-3, 4-7,
// ..., 64 and more), and one to the bucket of how many it submitted (submit: 0, 1-4, 5-8, 9-16,
// ..., 65 and more); each reap one to the bucket of how many it reaped (complete). Only I/Os
// the measured window counts (fio resets these after its ramp).
struct DepthStats {
  std::array<uint64_t, 7> level{}, submit{}, complete{};
  uint64_t ios = 0, submits = 0, completes = 0;  // the totals each map is a share of
  static unsigned level_bucket(uint32_t depth) { return std::min(6, std::max(0, static_cast<int>(std::bit_width(depth)) - 1)); }
  static unsigned batch_bucket(uint32_t n) {
    return n == 0 ? 0 : std::min(6, std::max(1, static_cast<int>(std::bit_width(n - 1)) - 1));
  }
  void submitted(uint32_t n, uint32_t depth) {
    level[level_bucket(depth)] += n;
    ios += n;
    ++submit[batch_bucket(n)];
    ++submits;
  }
  void reaped(uint32_t n) {
    ++complete[batch_bucket(n)];
    ++completes;
  }
  void merge(const DepthStats& o);
  // fio's stat_calc_dist: a count's share of `total` in percent, at least 0.1 where it is not
  // 0; 0 when nothing was counted.
  static double percent(uint64_t n, uint64_t total) {
    if (total == 0) return 0;
    const double p = 100.0 * static_cast<double>(n) / static_cast<double>(total);
    return n && p < 0.1 ? 0.1 : p;
  }
};

struct JobResult {
  unsigned job = 0;
  int cpu = -1;                   // pinned CPU, -1 = unpinned
  DirectionStats read, write;
  ErrorStats errors;
  VerifyStats verify;
  double runtime_s = 0;           // measured, ramp excluded
  uint32_t latency_depth = 0;     // latency_target: the depth the search ended at (0: no search)
  bool terminated = false;        // its runtime or another job's exitall ended it before its size was done
  DepthStats depths;              // counted where the spec asks (JobSpec::io_depths)
  std::vector<IoSample> samples;  // every measured I/O in completion order, when the spec logs them
};

// A setting a run changed on the host, for the report.
struct AppliedSetting {
  std::string what;               // "/sys/block/loop3/queue/rq_affinity"
  std::string old_value, new_value;
};


// What a steadystate criterion found (JobSpec::steadystate): fio's "steadystate" object.
struct SteadyStateResult {
  bool checked = false;      // a criterion was asked
  bool attained = false;     // the run ended because it held over the whole window
  double criterion = 0;      // the last judged value, in the limit's unit (% of the mean or absolute)
  double max_deviation = 0;  // of the last window: largest |sample - mean|, IOPS or bytes/s
  double slope = 0;          // of the last window: least-squares slope per second
  double duration_s = 0;     // the window's length
  std::vector<uint64_t> iops, bw;  // the last window's samples (all jobs, per second)
};

// What the engine measured, nothing else; a report wraps it in a RunReport (report/run_report.h).
struct Results {
  std::string started_at;         // ISO 8601 UTC
  double runtime_s = 0;           // wall time of the measured part
  std::vector<JobResult> jobs;
  DirectionStats read, write;     // all jobs merged
  ErrorStats errors;              // all jobs merged
  DepthStats depths;              // all jobs merged
  VerifyStats verify;             // all jobs merged, plus the verify pass after the writes
  VerifyStats verify_pass;        // what the read-back after a write workload found
  bool verified = false;          // a verify pass ran or reads were checked
  CpuUsage cpu;
  DiskStats disk;
  std::vector<std::string> notes; // the engine's: "io_uring registration refused (...)"
  bool interrupted = false;       // stopped early by SIGINT/SIGTERM
  bool exit_all = false;          // a job's exitall with exit_what=all ended the run: no later group runs
  SteadyStateResult steadystate;

  // Folds jobs into read/write/errors.
  void aggregate();
};

}  // namespace diskprobe
