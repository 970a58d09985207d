// The exact percentile a histogram's estimate is checked against, shared by the histogram tests.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

// fio's definition, the one Histogram::percentile documents: the sample of rank ceil(p/100*n).
inline uint64_t exact_percentile(const std::vector<uint64_t>& sorted, double p) {
  double threshold = p * static_cast<double>(sorted.size()) / 100.0;
  auto rank = static_cast<size_t>(std::ceil(threshold * (1.0 - 1e-12)));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}
