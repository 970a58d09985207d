// fio's rate and rate_iops, per job and direction: the n-th I/O of a direction is due at
// start + n / rate and is not issued sooner. As fio's rate_process=linear, a job that fell
// behind (a device slower than the cap) issues at once until it has caught up. Exact without
// a division per I/O: each step adds the interval's whole nanoseconds and carries its
// remainder, as Bresenham's line does.
#pragma once

#include <cmath>
#include <cstdint>

namespace diskprobe::engine {

class Pacer {
 public:
  // ns_num / ns_den nanoseconds between two I/Os of direction d; ns_num 0 = no cap (always due).
  void set(int d, uint64_t ns_num, uint64_t ns_den) {
    step_[d] = ns_den ? ns_num / ns_den : 0;
    rem_[d] = ns_den ? ns_num % ns_den : 0;
    den_[d] = ns_den ? ns_den : 1;
  }
  // rate= over I/Os of several sizes: each I/O of direction d takes its own bytes' time at
  // bytes_per_s (issued(write, len)).
  void set_bytes(int d, uint64_t bytes_per_s) {
    set(d, 0, 1);
    per_byte_[d] = bytes_per_s;
  }
  // The schedule starts (again: fio restarts it when the ramp ends) at t.
  void start(uint64_t t) {
    for (int d = 0; d < 2; ++d) {
      next_[d] = t;
      acc_[d] = 0;
    }
  }
  // The measured window opened at t, at a completion: its first I/O is due an interval later,
  // so N I/Os fill N intervals of the window (due at t itself, a 3 s window at 50 IOPS measured
  // 150 I/Os in 2.98 s: 50.3).
  void start_window(uint64_t t) {
    start(t);
    issued(false);
    issued(true);
  }
  uint64_t due(bool write) const { return next_[write]; }

  // fio's rate_ddir for an I/O drawn as `drawn`: that direction when it is due at t; else the
  // other when the job may issue it (`may_switch`, a mixed job) and it is due; else -1, and
  // first_due() is when one will be. So with rate_iops=R,W each direction keeps its own cap
  // whatever rwmixread draws, instead of the drawn one waiting while the other could go.
  int pick(bool drawn, bool may_switch, uint64_t t) const {
    if (next_[drawn] <= t) return drawn;
    if (may_switch && next_[!drawn] <= t) return !drawn;
    return -1;
  }
  uint64_t first_due(bool drawn, bool may_switch) const {
    return may_switch && next_[!drawn] < next_[drawn] ? next_[!drawn] : next_[drawn];
  }
  void issued(bool write, uint32_t len) {
    if (!per_byte_[write]) return issued(write);
    const uint64_t ns = uint64_t{len} * 1'000'000'000ull + acc_[write];
    next_[write] += ns / per_byte_[write];
    acc_[write] = ns % per_byte_[write];
  }
  // rate_process=poisson: each gap drawn from an exponential of the interval's mean.
  void set_poisson(uint64_t seed) {
    poisson_ = true;
    state_ = seed | 1;
  }
  void issued(bool write) {
    if (poisson_) [[unlikely]] {
      next_[write] += poisson_gap(write);
      return;
    }
    next_[write] += step_[write];
    acc_[write] += rem_[write];
    if (acc_[write] >= den_[write]) {
      acc_[write] -= den_[write];
      ++next_[write];
    }
  }

 private:
  uint64_t next_[2] = {0, 0};
  uint64_t step_[2] = {0, 0}, rem_[2] = {0, 0}, den_[2] = {1, 1}, acc_[2] = {0, 0};
  uint64_t per_byte_[2] = {0, 0};
  bool poisson_ = false;
  uint64_t state_ = 1;

  // fio's poisson: mean * -ln(U), U uniform in (0, 1] (xorshift64*, the pacer's own stream).
  uint64_t poisson_gap(bool write) {
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    const double u = static_cast<double>(((state_ * 0x2545F4914F6CDD1Dull) >> 11) + 1) * 0x1p-53;
    const double mean = static_cast<double>(step_[write]) + static_cast<double>(rem_[write]) / static_cast<double>(den_[write]);
    return static_cast<uint64_t>(mean * -std::log(u));
  }
};

}  // namespace diskprobe::engine
