// One job's measured window, in CLOCK_MONOTONIC nanoseconds: when it opens, which of its
// seconds a completion counts in, when it ends. Header-only: second_of() runs once per reaped
// batch and counts() once per I/O in the engines' loops.
//
// It opens at an event, the first completion reaped at or after the ramp's end (a
// size-bounded run without ramp at the start, so every I/O counts), and measures only the I/Os
// issued after it opened. A deadline is then `runtime` after the opening, as fio's is (fio
// restarts its clock when it sees the ramp is over and runs `runtime` from there). It was the
// planned ramp end + runtime: a first completion that came late (a throttle holding the ramp's
// I/Os, a thread starved on a loaded machine) shortened the window by as much, so an 8 s run
// counted 7 per-second samples, the last one partial. What it costs: the run ends that much
// later. The I/Os in flight at the deadline are waited for and count in its last second (the
// drain), so the samples add up to the total.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace diskprobe {

class MeasuredWindow {
 public:
  static constexpr uint64_t kNsPerSec = 1'000'000'000;

  // runtime_ns: the deadline's distance from the opening; 0 = none (a size-bounded run).
  explicit MeasuredWindow(uint64_t runtime_ns = 0) : runtime_ns_(runtime_ns) {}

  void open(uint64_t t) {
    start_ = t;
    if (runtime_ns_) fold_from_ = t + runtime_ns_ - 1;
  }
  bool is_open() const { return start_ != kNever; }
  uint64_t start() const { return start_; }
  uint64_t deadline() const { return fold_from_ == kNever ? 0 : fold_from_ + 1; }  // 0: none or not open

  // The second completions reaped at `t` count in; -1 before the window opened. Reaped at or
  // after the deadline, the deadline's last second.
  ptrdiff_t second_of(uint64_t t) const {
    if (t < start_) return -1;
    return static_cast<ptrdiff_t>((std::min(t, fold_from_) - start_) / kNsPerSec);
  }
  // An I/O first submitted at t_prep is measured: issued after the window opened.
  bool counts(uint64_t t_prep) const { return t_prep >= start_; }
  void completed_at(uint64_t t_reaped) { end_ = t_reaped; }

  // steadystate: the window ends k whole seconds after it opened, when that is sooner than its
  // deadline; false when not (or when it is not open).
  bool end_after_seconds(uint64_t k) {
    if (!is_open() || k == 0) return false;
    const uint64_t at = start_ + k * kNsPerSec;
    if (at > fold_from_) return false;
    fold_from_ = at - 1;
    return true;
  }
  // A deadline moved earlier after completions past it were counted (steadystate's stop, seen
  // a batch late): they move into its last second, where the drain after it counts.
  void fold(std::vector<uint64_t>& per_second) const {
    if (!is_open() || fold_from_ == kNever) return;
    const auto last = static_cast<size_t>(second_of(fold_from_));
    for (size_t s = last + 1; s < per_second.size(); ++s) {
      per_second[last] += per_second[s];
      per_second[s] = 0;
    }
  }

  // The seconds the window's series holds: to the last measured completion, or every second
  // to the deadline when the run went on to it (`reached`): an 8 s window is 8 samples even
  // when nothing completed in its last second (a stalled device), that one 0 as fio logs it.
  size_t seconds(bool reached) const {
    if (!is_open()) return 0;
    if (reached && fold_from_ != kNever) return static_cast<size_t>(second_of(fold_from_)) + 1;
    if (end_ < start_) return 0;  // nothing measured
    return static_cast<size_t>(second_of(end_)) + 1;
  }
  // What a rate divides by: from the opening to the last measured completion.
  double runtime_s() const {
    return is_open() && end_ > start_ ? static_cast<double>(end_ - start_) / 1e9 : 0.0;
  }

 private:
  static constexpr uint64_t kNever = UINT64_MAX;
  uint64_t runtime_ns_ = 0;
  uint64_t start_ = kNever;      // the opening reap
  uint64_t end_ = 0;             // the last measured completion's reap
  uint64_t fold_from_ = kNever;  // deadline - 1: later reaps count in its second
};

}  // namespace diskprobe
