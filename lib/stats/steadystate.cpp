#include "diskprobe/stats/steadystate.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace diskprobe {

SteadyStateJudgement judge_steadystate(const SteadyState& ss, const std::vector<uint64_t>& samples) {
  SteadyStateJudgement j;
  const size_t n = samples.size();
  if (n == 0) return j;
  double sum_y = 0, sum_xy = 0;
  for (size_t i = 0; i < n; ++i) {
    sum_y += static_cast<double>(samples[i]);
    sum_xy += static_cast<double>(i) * static_cast<double>(samples[i]);
  }
  const double dn = static_cast<double>(n);
  j.mean = sum_y / dn;
  for (uint64_t y : samples) j.max_deviation = std::max(j.max_deviation, std::fabs(static_cast<double>(y) - j.mean));
  // fio's closed form for x = 0..n-1: sum_x = n(n-1)/2, sum_x^2 = (n-1)n(2n-1)/6.
  const double sum_x = dn * (dn - 1) / 2, sum_x_sq = (dn - 1) * dn * (2 * dn - 1) / 6;
  const double denom = sum_x_sq - sum_x * sum_x / dn;
  j.slope = denom > 0 ? (sum_xy - sum_x * sum_y / dn) / denom : 0;
  const bool slope = ss.kind == SteadyStateKind::IopsSlope || ss.kind == SteadyStateKind::BwSlope;
  const double figure = slope ? j.slope : j.max_deviation;
  if (!ss.percent) {
    j.criterion = figure;
  } else if (j.mean > 0) {
    j.criterion = 100.0 * figure / j.mean;
  } else {
    j.criterion = std::numeric_limits<double>::infinity();  // nothing moved: no share of it holds
  }
  j.holds = ss.enabled() && std::fabs(j.criterion) < ss.limit;
  return j;
}

SteadyStateWindow::SteadyStateWindow(const SteadyState& ss)
    : ss_(ss), size_(static_cast<size_t>(ss.duration_s > 0 ? ss.duration_s : 0)) {
  iops_.reserve(size_ + 1);
  bw_.reserve(size_ + 1);
}

bool SteadyStateWindow::judges_iops() const {
  return ss_.kind == SteadyStateKind::Iops || ss_.kind == SteadyStateKind::IopsSlope;
}

bool SteadyStateWindow::add(uint64_t iops, uint64_t bw) {
  iops_.push_back(iops);
  bw_.push_back(bw);
  if (iops_.size() > size_) {
    iops_.erase(iops_.begin());
    bw_.erase(bw_.begin());
  }
  return size_ > 0 && full() && judge_steadystate(ss_, judges_iops() ? iops_ : bw_).holds;
}

SteadyStateResult SteadyStateWindow::result(bool attained) const {
  SteadyStateResult r;
  r.checked = ss_.enabled();
  r.attained = attained;
  r.duration_s = static_cast<double>(size_);
  r.iops = iops_;
  r.bw = bw_;
  SteadyStateJudgement j = judge_steadystate(ss_, judges_iops() ? iops_ : bw_);
  r.criterion = j.criterion;
  r.max_deviation = j.max_deviation;
  r.slope = j.slope;
  return r;
}

}  // namespace diskprobe
