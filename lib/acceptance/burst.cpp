#include "diskprobe/acceptance/burst.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace diskprobe {

namespace {

using Span = std::pair<std::vector<double>::const_iterator, std::vector<double>::const_iterator>;

double median(Span s) {
  std::vector<double> v(s.first, s.second);
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2) return *mid;
  return (*mid + *std::max_element(v.begin(), mid)) / 2;
}

double mean(Span s) {
  return std::accumulate(s.first, s.second, 0.0) / static_cast<double>(s.second - s.first);
}

double stdev(Span s) {
  const double m = mean(s);
  double sq = 0;
  for (auto it = s.first; it != s.second; ++it) sq += (*it - m) * (*it - m);
  return std::sqrt(sq / static_cast<double>(s.second - s.first));
}

// Sum of |x - median|: the L1 cost of one level over the span; medians, so one odd second
// does not move a level.
double cost(Span s) {
  const double m = median(s);
  double c = 0;
  for (auto it = s.first; it != s.second; ++it) c += std::fabs(*it - m);
  return c;
}

// Share of the span's samples on the `above` side of `line`.
double share(Span s, double line, bool above) {
  auto n = std::count_if(s.first, s.second, [&](double x) { return above ? x > line : x < line; });
  return static_cast<double>(n) / static_cast<double>(s.second - s.first);
}

// Most of each side on its own side of the midpoint, and the last seconds still down: a dip
// that recovers, or noise around one level, is no burst.
constexpr double kOnItsSide = 0.8;

std::string thousands(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  std::string digits = buf, out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0 && digits[i - 1] != '-') out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace

BurstFinding find_burst(const std::vector<double>& x) {
  BurstFinding f;
  const auto all = Span{x.begin(), x.end()};
  if (x.empty()) return f.too_short = true, f;
  f.sustained_rate = mean(all);
  f.spread = stdev(all);
  if (x.size() < kMinBurstSamples + kMinSustainedSamples) return f.too_short = true, f;

  // The split that best fits two levels (least absolute deviation from each side's median).
  size_t best = 0;
  double best_cost = INFINITY;
  for (size_t k = kMinBurstSamples; k + kMinSustainedSamples <= x.size(); ++k) {
    auto at = x.begin() + static_cast<std::ptrdiff_t>(k);
    double c = cost({x.begin(), at}) + cost({at, x.end()});
    if (c < best_cost) best_cost = c, best = k;
  }
  auto at = x.begin() + static_cast<std::ptrdiff_t>(best);
  const Span before{x.begin(), at}, after{at, x.end()};
  const double high = median(before), low = median(after), line = (high + low) / 2;
  const Span tail{x.end() - static_cast<std::ptrdiff_t>(kMinSustainedSamples), x.end()};
  bool dropped = high > 0 && low <= kBurstDropRatio * high;
  bool stayed = share(before, line, true) >= kOnItsSide && share(after, line, false) >= kOnItsSide &&
                median(tail) < line;
  if (!dropped || !stayed) return f;
  f.burst = true;
  f.burst_rate = mean(before);
  f.burst_s = static_cast<double>(best);
  f.sustained_from = best;
  f.sustained_rate = mean(after);
  f.spread = stdev(after);
  return f;
}

std::string burst_text(const BurstFinding& b, const std::string& unit, double scale) {
  if (!b.burst) return "";
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.0f", b.burst_s);
  return "burst of " + thousands(b.burst_rate / scale) + " " + unit + " for " + secs + " s, then " +
         thousands(b.sustained_rate / scale) + " " + unit;
}

}  // namespace diskprobe
