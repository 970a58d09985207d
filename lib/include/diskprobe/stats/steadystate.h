// fio's steadystate criteria (steadystate.c) over a rolling window of per-second samples of the
// whole group: deviation = max |x - mean|, slope = the least-squares slope with x = 0, 1, ...
// (per second); with `percent` each is divided by the mean and times 100. The iops/bw kinds
// judge the deviation, the *_slope kinds the slope; it holds when |criterion| < limit, strictly,
// as in fio.
#pragma once

#include <cstdint>
#include <vector>

#include "diskprobe/spec/job_spec.h"
#include "diskprobe/stats/results.h"

namespace diskprobe {

struct SteadyStateJudgement {
  double mean = 0;
  double max_deviation = 0;  // in the samples' unit
  double slope = 0;          // per second, signed
  double criterion = 0;      // the kind's figure in the limit's unit; +inf for a percent of a mean of 0
  bool holds = false;
};

// Judges `samples` (the criterion's quantity: IOPS or bytes/s) against ss.
SteadyStateJudgement judge_steadystate(const SteadyState& ss, const std::vector<uint64_t>& samples);

// The rolling window: add() one sample a second; true once a full window holds still.
class SteadyStateWindow {
 public:
  explicit SteadyStateWindow(const SteadyState& ss);
  bool add(uint64_t iops, uint64_t bw);
  bool full() const { return iops_.size() == size_; }
  // What the run reports: the last window (or what there is of it) and its judgement.
  SteadyStateResult result(bool attained) const;

 private:
  bool judges_iops() const;
  SteadyState ss_;
  size_t size_;
  std::vector<uint64_t> iops_, bw_;  // oldest first
};

}  // namespace diskprobe
