// steadystate: the thread that waits for the jobs samples the group's completed I/Os and bytes
// once a second, keeps the last ss_dur samples, and when fio's criterion holds over a full
// window stops every job at a whole second of its measured window, as the deadline does.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>

#include "diskprobe/spec/job_spec.h"
#include "diskprobe/stats/results.h"

namespace diskprobe::engine {

// A job's measured totals, stored (relaxed) once per reaped batch; a cache line each, so the
// jobs' stores do not contend.
struct alignas(64) JobTotals {
  std::atomic<uint64_t> ios{0};
  std::atomic<uint64_t> bytes{0};
};

// The jobs that have ended, so one thread can wait for them and for a clock at once.
class JobsDone {
 public:
  explicit JobsDone(unsigned jobs) : left_(jobs) {}
  void one_done();
  // Waits until every job ended (true) or CLOCK_MONOTONIC reached t_ns (false).
  bool wait_until(uint64_t t_ns);
  void wait_all();

 private:
  std::mutex m_;
  std::condition_variable cv_;
  unsigned left_;
};

class SteadyWatch {
 public:
  SteadyWatch(const SteadyState& ss, unsigned jobs);
  JobTotals* totals(unsigned job) { return &totals_[job]; }
  // Whole seconds of its measured window after which each job stops; 0 = run on.
  const std::atomic<uint64_t>* stop_second() const { return &stop_second_; }
  // From the jobs' start until every one ended: the window opens at open_at (the ramp's end),
  // the first sample covers the second after open_at + ss_ramp. runtime_ns is the measured
  // part's length (0: none); a tick at or past its end is not judged.
  SteadyStateResult watch(uint64_t open_at, uint64_t runtime_ns, JobsDone& done);

 private:
  void sums(uint64_t& ios, uint64_t& bytes) const;
  SteadyState ss_;
  unsigned jobs_;
  std::unique_ptr<JobTotals[]> totals_;
  std::atomic<uint64_t> stop_second_{0};
};

}  // namespace diskprobe::engine
