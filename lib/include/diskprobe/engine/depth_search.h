// fio's latency_target (JobSpec::latency): the deepest queue at which a job's I/Os keep their
// latency under a target, found while the job runs, as fio 3.33's io_u.c finds it:
//
// - The job starts at depth 1. Each window (latency_window, from the cycle's start) ends at
//   the first completion after it; if at least `percentile` % of the window's completions took
//   no longer than the target (total latency, from the I/O's preparation), the depth doubles
//   (bisects toward the lowest failed depth once one failed), else it bisects down toward the
//   highest depth that held.
// - When a success leaves the depth where it was, the search is over: what is in flight
//   completes, the job's figures start again (fio's reset_all_stats) and it runs one more
//   window at that depth; the next window that holds ends the job.
// - A ramp down waits for what is in flight first (fio's io_u_quiesce); the next window starts
//   when nothing is. With percentile 100, one I/O over the target ramps down at once, and at
//   depth 1 the job fails (fio: "latency of N nsec exceeds specified max").
// Pure logic: the engines ask depth() before each new I/O and tell it of every completion.
#pragma once

#include <cstdint>

#include "diskprobe/spec/job_spec.h"

namespace diskprobe::engine {

class DepthSearch {
 public:
  enum class Step {
    None,
    Quiesce,   // wait until nothing is in flight, then begin_cycle()
    FinalRun,  // the same, then the job's figures start again and begin_cycle()
    Done,      // the job ends
    Fatal,     // percentile 100 and an I/O over the target at depth 1
  };

  DepthSearch() = default;
  DepthSearch(const LatencyTarget& t, uint32_t iodepth) : t_(t), iodepth_(iodepth ? iodepth : 1) {
    qd_ = t_.target_ns ? 1 : iodepth_;
    high_ = iodepth_;
  }

  bool on() const { return t_.target_ns != 0; }
  uint32_t depth() const { return qd_; }
  bool quiescing() const { return quiescing_; }
  bool final_run() const { return end_run_; }

  // The job's start (fio's lat_target_init): the first window runs from here.
  void start(uint64_t t) { begin_cycle(t); }

  // One completion of total latency lat_ns; `measured`: inside the measured part (fio counts
  // one over the target only then). Fatal or Quiesce only with percentile 100.
  Step completed(uint64_t lat_ns, bool measured) {
    ++ios_;
    if (quiescing_ || !measured || lat_ns <= t_.target_ns) return Step::None;
    if (t_.percentile >= 100.0) return ramp_down() ? Step::Fatal : Step::Quiesce;
    ++failed_;
    return Step::None;
  }

  // After a batch of completions was reaped at t (fio's lat_target_check, outside the ramp).
  Step check(uint64_t t) {
    if (quiescing_ || t - cycle_start_ < t_.window_ns || ios_ == 0) return Step::None;
    const double ok = 100.0 * static_cast<double>(ios_ - failed_) / static_cast<double>(ios_);
    if (ok >= t_.percentile) return success(t);
    ramp_down();  // at depth 1 fio stays there and judges every later batch
    return quiescing_ ? Step::Quiesce : Step::None;
  }

  // Nothing is in flight any more after a Quiesce or FinalRun: the next window starts at t.
  void begin_cycle(uint64_t t) {
    quiescing_ = false;
    cycle_start_ = t;
    ios_ = 0;
    failed_ = 0;
  }

 private:
  // fio's __lat_target_failed: true at depth 1 (nothing lower to try).
  bool ramp_down() {
    if (qd_ == 1) return true;
    high_ = qd_;
    if (qd_ == low_) --low_;
    qd_ = (qd_ + low_) / 2;
    quiescing_ = true;
    return false;
  }

  // fio's lat_target_success.
  Step success(uint64_t t) {
    const uint32_t was = qd_;
    low_ = qd_;
    qd_ = high_ != iodepth_ ? (qd_ + high_) / 2 : qd_ * 2;
    if (qd_ > iodepth_) qd_ = iodepth_;
    if (qd_ == was) {
      if (end_run_) return Step::Done;
      end_run_ = true;
      quiescing_ = true;
      return Step::FinalRun;
    }
    begin_cycle(t);
    return Step::None;
  }

  LatencyTarget t_;
  uint32_t iodepth_ = 1;
  uint32_t qd_ = 1, low_ = 1, high_ = 1;
  bool end_run_ = false, quiescing_ = false;
  uint64_t cycle_start_ = 0, ios_ = 0, failed_ = 0;
};

}  // namespace diskprobe::engine
