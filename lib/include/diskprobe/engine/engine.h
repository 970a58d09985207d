// The I/O engines. run_jobs() starts spec.numjobs threads, each with its own ring (or
// pread/pwrite for the sync engine), and returns when runtime or size is done, or `stop`
// becomes true (SIGINT/SIGTERM).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "diskprobe/device/block_header.h"
#include "diskprobe/spec/job_spec.h"
#include "diskprobe/spec/region.h"
#include "diskprobe/spec/target.h"
// validate() was declared here; cmd still finds it through this header.
#include "diskprobe/spec/validate.h"
#include "diskprobe/base/status.h"
#include "diskprobe/stats/results.h"
#include "diskprobe/base/sysroot.h"

namespace diskprobe {



// Two blk-throttle slices of 100 ms and a jiffy of 10 ms: see EngineOptions::settle_ns.
inline constexpr uint64_t kSettleAfterOwnIoNs = 250'000'000;

struct EngineOptions {
  // cpus[j] is the CPU job j is pinned to; empty or -1 = unpinned.
  std::vector<int> cpus;
  const std::atomic<bool>* stop = nullptr;
  uint64_t run_id = 0;      // 0 = pick a random one
  // The caller's resolve_region(spec, target), the one it also zeroes in; unset = resolved here.
  std::optional<Region> region;
  // A pause between the jobs being ready and their first I/O, for a caller that has just read
  // the device itself (the preflight). A rate limiter counts its budget from its first I/O in a
  // slice: blk-throttle's slice (100 ms on a rotational queue, 20 ms otherwise; its end rounded
  // up to a whole slice after the last I/O) opened by the preflight's reads was still running,
  // and its unused budget went to the run's first reads at once: 3,063 read IOPS reported for a
  // limit of 3,000 in 4 s (issue 14). kSettleAfterOwnIoNs outlasts such a slice; it costs that
  // much wall time per run, nothing measured.
  uint64_t settle_ns = 0;
  // The caller ran validate(spec, target) already (the run module does, once per run).
  bool spec_validated = false;
  // Tests: called after the write jobs, before the verify pass reads their blocks back (to
  // lose a write behind the engine's back at a known moment).
  std::function<void()> before_verify;
};

Result<Results> run_jobs(const JobSpec& spec, const Target& target, const EngineOptions& opts);

// fio's jobs with no stonewall between them: different specs (rw, bs, iodepth, region, rate,
// engine, startdelay) run at the same time, every job of every member behind one start gate.
// Each member's numjobs clones run as in run_jobs, on its own CPUs and region (opts.cpus and
// opts.region are not read); the Results come back in the members' order. steadystate is for
// a run of one member.
struct GroupMember {
  const JobSpec* spec = nullptr;
  const Target* target = nullptr;
  std::optional<Region> region;  // unset = resolve_region(spec, target)
  std::vector<int> cpus;         // cpus[j] for the member's job j; empty or -1 = unpinned
  int wait_for = -1;             // an earlier member whose jobs all end before this one's start
};
Result<std::vector<Results>> run_group(const std::vector<GroupMember>& members, const EngineOptions& opts);

}  // namespace diskprobe
