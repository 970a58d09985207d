// Histogram: fixed-size, log-linear, mergeable latency histogram in nanoseconds.
//
// Bucket design: values below 2^(kSubBits+1) (128 ns) get one exact bucket each. Above, every
// power of two [2^e, 2^(e+1)) is split into kSub = 64 equal buckets of width 2^(e-6).
// A bucket's width is at most 1/64 of its lower bound, so reporting its midpoint is off by
// at most 1/128 of the true value (relative error <= 1/128 < 1/64). Values at or above
// 2^kMaxExp ns (about 18 minutes) land in the last bucket; min/max stay exact.
// count, sum and sum of squares are exact integers, so mean and stdev carry no rounding
// from accumulation and merging is exact.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace diskprobe {

class Histogram {
 public:
  static constexpr int kSubBits = 6;
  static constexpr uint64_t kSub = 1u << kSubBits;  // buckets per power of two
  static constexpr int kMaxExp = 40;                // 2^40 ns ~ 18.3 min
  static constexpr size_t kBuckets = 2 * kSub + (kMaxExp - kSubBits - 1) * kSub;

  // Hot path: a few shifts, adds and one 64x64->128 multiply; no allocation, no branches
  // beyond the range checks.
  void record(uint64_t ns) { record(ns, 1); }
  // `n` samples of the same value at once: the same state as n record(ns) calls (the state
  // does not depend on order; sums wrap alike). For completions that share every timestamp.
  void record(uint64_t ns, uint64_t n) {
    buckets_[index_of(ns)] += n;
    count_ += n;
    sum_ += ns * n;
    sum_sq_ += static_cast<U128>(ns) * ns * n;
    if (ns < min_) min_ = ns;
    if (ns > max_) max_ = ns;
  }
  void merge(const Histogram& other);
  void clear();

  uint64_t count() const { return count_; }
  uint64_t min() const { return count_ ? min_ : 0; }
  uint64_t max() const { return max_; }
  uint64_t sum() const { return sum_; }
  double mean() const;
  double stdev() const;  // sample standard deviation, as fio prints it
  // Value at percentile p in [0, 100]: the midpoint of the bucket holding the sample of rank
  // ceil(p/100 * count) (fio's definition), clamped to [min, max] so p99.99 never exceeds max;
  // the first and last rank are min and max exactly.
  uint64_t percentile(double p) const;
  // Number of samples <= ns (for fio's "lat (usec): 50=99.86%" distribution lines), at
  // bucket resolution: a bucket counts when its midpoint is <= ns.
  uint64_t count_at_or_below(uint64_t ns) const;
  uint64_t bucket(size_t index) const { return buckets_[index]; }

  // Bucket (shift + 1) * kSub + (ns >> shift) - kSub for shift = e - kSubBits, written as
  // shift * kSub + (ns >> shift) with shift clamped at 0, which also puts every ns below
  // 2 * kSub in its own bucket: one branch instead of three, ~10 instructions less a record.
  static size_t index_of(uint64_t ns) {
    if (ns >> kMaxExp) [[unlikely]] return kBuckets - 1;
    int e = 63 - __builtin_clzll(ns | 1);
    int shift = e > kSubBits ? e - kSubBits : 0;
    return (static_cast<size_t>(shift) << kSubBits) + static_cast<size_t>(ns >> shift);
  }
  static uint64_t lower_bound_of(size_t index);
  static uint64_t upper_bound_of(size_t index);  // exclusive
  static uint64_t midpoint_of(size_t index);

 private:
  __extension__ typedef unsigned __int128 U128;  // -Wpedantic: __int128 is a GNU extension

  std::array<uint64_t, kBuckets> buckets_{};
  uint64_t count_ = 0;
  uint64_t sum_ = 0;
  U128 sum_sq_ = 0;  // exact: 2^40 ns squared times 2^48 samples still fits
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
};

}  // namespace diskprobe
