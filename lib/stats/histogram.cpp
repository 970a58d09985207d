#include "diskprobe/stats/histogram.h"

#include <cmath>

namespace diskprobe {

void Histogram::merge(const Histogram& o) {
  for (size_t i = 0; i < kBuckets; ++i) buckets_[i] += o.buckets_[i];
  count_ += o.count_;
  sum_ += o.sum_;
  sum_sq_ += o.sum_sq_;
  if (o.min_ < min_) min_ = o.min_;
  if (o.max_ > max_) max_ = o.max_;
}

void Histogram::clear() { *this = Histogram(); }

double Histogram::mean() const {
  return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0.0;
}

double Histogram::stdev() const {
  if (count_ < 2) return 0.0;
  // n * sum(x^2) - (sum x)^2 in exact integers when it fits; latencies cluster tightly
  // around their mean, and the textbook double formula loses the stdev to cancellation.
  U128 n = count_;
  U128 n_sum_sq = 0;
  long double numer;
  if (!__builtin_mul_overflow(n, sum_sq_, &n_sum_sq)) {
    U128 sq_sum = static_cast<U128>(sum_) * sum_;
    numer = n_sum_sq >= sq_sum ? static_cast<long double>(n_sum_sq - sq_sum) : 0.0L;
  } else {
    long double s = static_cast<long double>(sum_);
    numer = static_cast<long double>(n) * static_cast<long double>(sum_sq_) - s * s;
    if (numer < 0) numer = 0;
  }
  long double nn = static_cast<long double>(count_);
  return static_cast<double>(std::sqrt(numer / (nn * (nn - 1))));
}

uint64_t Histogram::lower_bound_of(size_t index) {
  if (index < 2 * kSub) return index;
  uint64_t shift = index / kSub - 1;
  return (kSub + index % kSub) << shift;
}

uint64_t Histogram::upper_bound_of(size_t index) {
  if (index < 2 * kSub) return index + 1;
  uint64_t shift = index / kSub - 1;
  return lower_bound_of(index) + (uint64_t{1} << shift);
}

uint64_t Histogram::midpoint_of(size_t index) {
  uint64_t lo = lower_bound_of(index);
  return lo + (upper_bound_of(index) - lo) / 2;
}

uint64_t Histogram::percentile(double p) const {
  if (count_ == 0) return 0;
  if (p < 0) p = 0;
  if (p > 100) p = 100;
  // Multiply before dividing so 99.99% of 10^6 is exactly rank 999900; the tiny relative
  // nudge keeps a product like 999900.0000001 from skipping to the next rank.
  double threshold = p * static_cast<double>(count_) / 100.0;
  uint64_t rank = static_cast<uint64_t>(std::ceil(threshold * (1.0 - 1e-12)));
  if (rank < 1) rank = 1;
  if (rank > count_) rank = count_;
  // The extreme ranks are known exactly.
  if (rank == count_) return max_;
  if (rank == 1) return min_;
  uint64_t seen = 0;
  size_t i = 0;
  for (; i < kBuckets; ++i) {
    seen += buckets_[i];
    if (seen >= rank) break;
  }
  uint64_t v = midpoint_of(i < kBuckets ? i : kBuckets - 1);
  if (v < min_) v = min_;
  if (v > max_) v = max_;
  return v;
}

uint64_t Histogram::count_at_or_below(uint64_t ns) const {
  // The exact min and max settle the ends that bucket resolution would blur.
  if (count_ == 0 || ns < min_) return 0;
  if (ns >= max_) return count_;
  uint64_t n = 0;
  for (size_t i = 0; i < kBuckets && midpoint_of(i) <= ns; ++i) n += buckets_[i];
  return n;
}

}  // namespace diskprobe
