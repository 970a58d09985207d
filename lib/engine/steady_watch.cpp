#include "steady_watch.h"

#include <chrono>

#include "clock.h"
#include "diskprobe/stats/steadystate.h"

namespace diskprobe::engine {

void JobsDone::one_done() {
  std::lock_guard lock(m_);
  if (left_ > 0 && --left_ == 0) cv_.notify_all();
}

bool JobsDone::wait_until(uint64_t t_ns) {
  // libstdc++'s steady_clock is CLOCK_MONOTONIC, the engine's clock.
  const std::chrono::steady_clock::time_point at{std::chrono::nanoseconds(t_ns)};
  std::unique_lock lock(m_);
  return cv_.wait_until(lock, at, [&] { return left_ == 0; });
}

void JobsDone::wait_all() {
  std::unique_lock lock(m_);
  cv_.wait(lock, [&] { return left_ == 0; });
}

SteadyWatch::SteadyWatch(const SteadyState& ss, unsigned jobs)
    : ss_(ss), jobs_(jobs), totals_(std::make_unique<JobTotals[]>(jobs)) {}

void SteadyWatch::sums(uint64_t& ios, uint64_t& bytes) const {
  ios = bytes = 0;
  for (unsigned j = 0; j < jobs_; ++j) {
    ios += totals_[j].ios.load(std::memory_order_relaxed);
    bytes += totals_[j].bytes.load(std::memory_order_relaxed);
  }
}

SteadyStateResult SteadyWatch::watch(uint64_t open_at, uint64_t runtime_ns, JobsDone& done) {
  SteadyStateWindow window(ss_);
  const auto ramp_ns = static_cast<uint64_t>(ss_.ramp_s * 1e9);
  const uint64_t first = open_at + ramp_ns;
  bool attained = false;
  if (!done.wait_until(first)) {
    uint64_t t_prev = now_ns(), ios_prev = 0, bytes_prev = 0;
    sums(ios_prev, bytes_prev);
    for (uint64_t i = 1;; ++i) {
      const uint64_t tick = first + i * kNsPerSec;
      // A window that first holds at the deadline's tick did not end the run: the run ran its
      // time out, not steady. Judging that tick would make the verdict a race between this
      // wake-up and the jobs' drain (steady when the drain took longer, as 1 MiB I/Os on a
      // throttled volume do), and "steady" would no longer mean "ended early".
      if (runtime_ns && tick >= open_at + runtime_ns) break;
      if (done.wait_until(tick)) break;
      // The wake-up may come late: a sample is its own interval's rate, as fio's (1000 *
      // bytes / ms); a batch reaped just before the tick and published just after it counts in
      // the next sample, which is at most one batch of I/Os.
      uint64_t t = now_ns(), ios = 0, bytes = 0;
      sums(ios, bytes);
      const uint64_t dt = t > t_prev ? t - t_prev : 1;
      const auto iops = static_cast<uint64_t>(static_cast<double>(ios - ios_prev) * 1e9 / static_cast<double>(dt));
      const auto bw = static_cast<uint64_t>(static_cast<double>(bytes - bytes_prev) * 1e9 / static_cast<double>(dt));
      t_prev = t, ios_prev = ios, bytes_prev = bytes;
      if (window.add(iops, bw)) {
        attained = true;
        // Every job keeps whole seconds of its window (so its samples add up to its total):
        // the ones up to this tick, rounded up when ss_ramp is not whole.
        stop_second_.store((tick - open_at + kNsPerSec - 1) / kNsPerSec, std::memory_order_relaxed);
        break;
      }
    }
  }
  done.wait_all();
  return window.result(attained);
}

}  // namespace diskprobe::engine
