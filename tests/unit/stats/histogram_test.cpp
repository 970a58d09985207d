#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "diskprobe/stats/histogram.h"
#include "exact_percentile.h"

using diskprobe::Histogram;

namespace {

// Deterministic generator so every run tests the same samples.
struct SplitMix {
  uint64_t x;
  uint64_t next() {
    uint64_t z = (x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) / 9007199254740992.0; }  // [0, 1)
};

// Latency-like: lognormal around 25 us with a long tail.
std::vector<uint64_t> lognormal_sample(size_t n, uint64_t seed) {
  SplitMix rng{seed};
  std::vector<uint64_t> v;
  v.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    double u1 = rng.uniform(), u2 = rng.uniform();
    double z = std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(2 * M_PI * u2);
    v.push_back(static_cast<uint64_t>(std::exp(std::log(25000.0) + 0.6 * z)));
  }
  return v;
}

const double kPercentiles[] = {0,  1,  5,  10, 20,   30,   40,    50,    60, 70,
                               80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 100};

void check_percentiles(std::vector<uint64_t> values) {
  Histogram h;
  for (uint64_t v : values) h.record(v);
  std::sort(values.begin(), values.end());
  for (double p : kPercentiles) {
    INFO("p" << p);
    double exact = static_cast<double>(exact_percentile(values, p));
    double got = static_cast<double>(h.percentile(p));
    CHECK(std::abs(got - exact) <= exact / 64.0);
    CHECK(h.percentile(p) >= h.min());
    CHECK(h.percentile(p) <= h.max());
  }
}

}  // namespace

TEST_CASE("every value lands in a bucket whose bounds contain it") {
  std::vector<uint64_t> values;
  for (uint64_t v = 0; v < 5000; ++v) values.push_back(v);
  for (int e = 7; e < 40; ++e) {
    uint64_t p = uint64_t{1} << e;
    for (uint64_t d : {uint64_t{0}, uint64_t{1}, uint64_t{3}, p / 3, p / 2, p - 1}) {
      values.push_back(p + d);
      values.push_back(p - 1 - d % p);
    }
  }
  SplitMix rng{42};
  for (int i = 0; i < 100000; ++i) values.push_back(rng.next() >> (24 + rng.next() % 40));

  for (uint64_t v : values) {
    if (v >= (uint64_t{1} << Histogram::kMaxExp)) continue;
    size_t i = Histogram::index_of(v);
    INFO("value " << v << " index " << i);
    REQUIRE(i < Histogram::kBuckets);
    uint64_t lo = Histogram::lower_bound_of(i), hi = Histogram::upper_bound_of(i);
    REQUIRE(lo <= v);
    REQUIRE(v < hi);
    // Width at most 1/64 of the lower bound (exact buckets have width 1).
    REQUIRE((hi - lo == 1 || static_cast<double>(hi - lo) <= static_cast<double>(lo) / 64.0));
    uint64_t mid = Histogram::midpoint_of(i);
    REQUIRE(std::abs(static_cast<double>(mid) - static_cast<double>(v)) <=
            static_cast<double>(v) / 128.0 + 0.5);
  }
}

TEST_CASE("buckets tile the whole range without gaps or overlaps") {
  REQUIRE(Histogram::lower_bound_of(0) == 0);
  for (size_t i = 0; i + 1 < Histogram::kBuckets; ++i) {
    INFO("index " << i);
    REQUIRE(Histogram::upper_bound_of(i) == Histogram::lower_bound_of(i + 1));
    REQUIRE(Histogram::index_of(Histogram::lower_bound_of(i)) == i);
    REQUIRE(Histogram::index_of(Histogram::upper_bound_of(i) - 1) == i);
  }
  REQUIRE(Histogram::upper_bound_of(Histogram::kBuckets - 1) == uint64_t{1} << Histogram::kMaxExp);
  // Beyond the last power of two: the last bucket, never out of bounds.
  REQUIRE(Histogram::index_of(uint64_t{1} << Histogram::kMaxExp) == Histogram::kBuckets - 1);
  REQUIRE(Histogram::index_of(UINT64_MAX) == Histogram::kBuckets - 1);
}

TEST_CASE("percentiles of 1..1,000,000 match the exact ones within 1/64") {
  std::vector<uint64_t> v;
  for (uint64_t i = 1; i <= 1000000; ++i) v.push_back(i);
  check_percentiles(v);
}

TEST_CASE("percentiles of a lognormal latency sample match the exact ones within 1/64") {
  check_percentiles(lognormal_sample(200000, 7));
}

TEST_CASE("percentiles of a small sample stay within min and max") {
  Histogram h;
  h.record(100000);
  h.record(100001);
  h.record(100002);
  CHECK(h.percentile(0) >= 100000);
  CHECK(h.percentile(99.99) <= 100002);
  CHECK(h.percentile(100) == 100002);
  // One sample: every percentile is that sample, exactly.
  Histogram one;
  one.record(123457);
  for (double p : kPercentiles) CHECK(one.percentile(p) == 123457);
}

TEST_CASE("an empty histogram reports zeros") {
  Histogram h;
  CHECK(h.count() == 0);
  CHECK(h.min() == 0);
  CHECK(h.max() == 0);
  CHECK(h.mean() == 0.0);
  CHECK(h.stdev() == 0.0);
  CHECK(h.percentile(50) == 0);
  CHECK(h.count_at_or_below(1000) == 0);
}

TEST_CASE("mean and stdev are exact") {
  auto v = lognormal_sample(100000, 3);
  Histogram h;
  long double sum = 0;
  for (uint64_t x : v) {
    h.record(x);
    sum += x;
  }
  long double mean = sum / v.size();
  long double sq = 0;
  for (uint64_t x : v) sq += (x - mean) * (x - mean);
  double stdev = static_cast<double>(std::sqrt(sq / (v.size() - 1)));
  CHECK(h.count() == v.size());
  CHECK(h.mean() == Approx(static_cast<double>(mean)).epsilon(1e-12));
  CHECK(h.stdev() == Approx(stdev).epsilon(1e-9));
  CHECK(h.min() == *std::min_element(v.begin(), v.end()));
  CHECK(h.max() == *std::max_element(v.begin(), v.end()));
}

TEST_CASE("stdev of tightly clustered large values does not cancel away") {
  // Latencies around 25 ms with a few ns of jitter: the double textbook formula loses this.
  Histogram h;
  for (int i = 0; i < 1000000; ++i) h.record(25000000 + (i % 2 ? 3 : 0));
  // Half 25000000, half 25000003: stdev = 1.5 * sqrt(n/(n-1)).
  CHECK(h.stdev() == Approx(1.5 * std::sqrt(1000000.0 / 999999.0)).epsilon(1e-9));
  CHECK(h.mean() == Approx(25000001.5));
}

TEST_CASE("merging two histograms equals the histogram of the union") {
  auto a = lognormal_sample(50000, 11);
  auto b = lognormal_sample(70000, 12);
  for (auto& x : b) x *= 3;  // a different range, so min and max come from different sides
  Histogram ha, hb, hu;
  for (uint64_t x : a) ha.record(x), hu.record(x);
  for (uint64_t x : b) hb.record(x), hu.record(x);
  Histogram merged = ha;
  merged.merge(hb);
  REQUIRE(merged.count() == hu.count());
  CHECK(merged.min() == hu.min());
  CHECK(merged.max() == hu.max());
  CHECK(merged.sum() == hu.sum());
  CHECK(merged.mean() == hu.mean());
  CHECK(merged.stdev() == hu.stdev());
  for (size_t i = 0; i < Histogram::kBuckets; ++i) {
    INFO("bucket " << i);
    REQUIRE(merged.bucket(i) == hu.bucket(i));
  }
  for (double p : kPercentiles) CHECK(merged.percentile(p) == hu.percentile(p));

  // Merging into an empty histogram keeps the other's min.
  Histogram empty;
  empty.merge(ha);
  CHECK(empty.min() == ha.min());
  empty.clear();
  CHECK(empty.count() == 0);
  CHECK(empty.min() == 0);
}

TEST_CASE("count_at_or_below follows the samples at bucket resolution") {
  Histogram h;
  for (uint64_t v = 1; v <= 100000; ++v) h.record(v);
  CHECK(h.count_at_or_below(0) == 0);
  CHECK(h.count_at_or_below(100) == 100);  // exact buckets below 128
  CHECK(h.count_at_or_below(100000) == 100000);
  for (uint64_t edge : {1000u, 2000u, 4000u, 10000u, 20000u, 50000u}) {
    double got = static_cast<double>(h.count_at_or_below(edge));
    CHECK(std::abs(got - static_cast<double>(edge)) <= edge / 64.0);
  }
}

// The io_uring loop records completions that share every timestamp with one weighted
// record: the histogram must be the one a record per sample gives, bucket for bucket.
TEST_CASE("a weighted record equals that many single records", "[histogram]") {
  SplitMix rng{11};
  Histogram one, weighted;
  const uint64_t values[] = {0, 1, 127, 128, 129, 4095, 77'777, 1'234'567, (uint64_t{1} << Histogram::kMaxExp) + 5};
  for (uint64_t v : values) {
    uint64_t n = 1 + rng.next() % 40;
    for (uint64_t i = 0; i < n; ++i) one.record(v);
    weighted.record(v, n);
  }
  for (int i = 0; i < 2000; ++i) {
    uint64_t v = rng.next() >> (24 + rng.next() % 40), n = 1 + rng.next() % 64;
    for (uint64_t k = 0; k < n; ++k) one.record(v);
    weighted.record(v, n);
  }
  REQUIRE(weighted.count() == one.count());
  REQUIRE(weighted.sum() == one.sum());
  REQUIRE(weighted.min() == one.min());
  REQUIRE(weighted.max() == one.max());
  REQUIRE(weighted.stdev() == one.stdev());
  for (size_t i = 0; i < Histogram::kBuckets; ++i) REQUIRE(weighted.bucket(i) == one.bucket(i));
}

// index_of's one-branch form must pick the bucket the three-branch formula picked.
TEST_CASE("bucket index is the log-linear formula's at every boundary", "[histogram]") {
  auto formula = [](uint64_t ns) -> size_t {
    if (ns < 2 * Histogram::kSub) return static_cast<size_t>(ns);
    int e = 63 - __builtin_clzll(ns);
    if (e >= Histogram::kMaxExp) return Histogram::kBuckets - 1;
    int shift = e - Histogram::kSubBits;
    return static_cast<size_t>((static_cast<uint64_t>(shift) + 1) * Histogram::kSub + ((ns >> shift) - Histogram::kSub));
  };
  for (int e = 0; e < 64; ++e) {
    uint64_t p = uint64_t{1} << e;
    for (uint64_t v : {p - 1, p, p + 1, p + p / 2, 2 * p - 1}) {
      INFO("value " << v);
      REQUIRE(Histogram::index_of(v) == formula(v));
    }
  }
  REQUIRE(Histogram::index_of(UINT64_MAX) == formula(UINT64_MAX));
}
