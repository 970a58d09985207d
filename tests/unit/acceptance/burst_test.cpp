// Burst detection over per-second samples: steady, noisy, burst-then-drop, drop-and-recover,
// short runs.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "diskprobe/acceptance/burst.h"

using namespace diskprobe;

namespace {

// `n` seconds at `level`, each off by up to ±`noise` (a share), the same every run.
std::vector<double> level(size_t n, double rate, double noise = 0, uint32_t seed = 1) {
  std::vector<double> v;
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    double u = static_cast<double>(seed >> 8) / static_cast<double>(1u << 24);  // [0, 1)
    v.push_back(rate * (1 + noise * (2 * u - 1)));
  }
  return v;
}

std::vector<double> then(std::vector<double> a, const std::vector<double>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

TEST_CASE("a steady rate is no burst; its sustained rate is the mean", "[burst]") {
  auto f = find_burst(level(30, 1237));
  CHECK_FALSE(f.burst);
  CHECK_FALSE(f.too_short);
  CHECK(f.sustained_rate == Approx(1237));
  CHECK(f.spread == Approx(0).margin(1e-9));
  CHECK(burst_text(f, "IOPS").empty());
}

TEST_CASE("noise around one level is no burst", "[burst]") {
  for (double noise : {0.05, 0.15, 0.25}) {
    for (uint32_t seed : {1u, 7u, 42u, 1000u}) {
      CAPTURE(noise, seed);
      auto f = find_burst(level(40, 5000, noise, seed));
      CHECK_FALSE(f.burst);
      CHECK(f.sustained_rate == Approx(5000).epsilon(0.05));
    }
  }
}

TEST_CASE("a rate that drops and stays down is a burst, judged on what follows it", "[burst]") {
  struct Case {
    const char* what;
    size_t high_s, low_s;
    double noise;
  };
  for (const auto& c : {Case{"clean", 5, 20, 0}, Case{"noisy", 8, 25, 0.08}, Case{"short burst", 2, 10, 0.05},
                        Case{"long burst", 30, 5, 0.05}}) {
    DYNAMIC_SECTION(c.what) {
      auto samples = then(level(c.high_s, 3000, c.noise, 3), level(c.low_s, 1237, c.noise, 9));
      auto f = find_burst(samples);
      REQUIRE(f.burst);
      CHECK(f.burst_s == Approx(static_cast<double>(c.high_s)));
      CHECK(f.sustained_from == c.high_s);
      CHECK(f.burst_rate == Approx(3000).epsilon(0.05));
      CHECK(f.sustained_rate == Approx(1237).epsilon(0.05));
    }
  }
  auto f = find_burst(then(level(5, 3000), level(20, 1237)));
  CHECK(burst_text(f, "IOPS") == "burst of 3,000 IOPS for 5 s, then 1,237 IOPS");
}

TEST_CASE("a first second lower than the rest (the ramp) does not hide a burst", "[burst]") {
  auto samples = then(then({900}, level(6, 3000, 0.03)), level(15, 1000, 0.03));
  auto f = find_burst(samples);
  REQUIRE(f.burst);
  CHECK(f.sustained_from == 7);
  CHECK(f.sustained_rate == Approx(1000).epsilon(0.05));
}

TEST_CASE("a drop that recovers is no burst", "[burst]") {
  SECTION("a dip in the middle") {
    auto samples = then(then(level(10, 3000, 0.05), level(5, 1000, 0.05)), level(10, 3000, 0.05));
    CHECK_FALSE(find_burst(samples).burst);
  }
  SECTION("a drop whose last seconds are back up") {
    auto samples = then(then(level(5, 3000), level(10, 1000)), level(4, 3000));
    CHECK_FALSE(find_burst(samples).burst);
  }
  SECTION("one slow second") {
    auto samples = level(20, 3000, 0.05);
    samples[12] = 500;
    CHECK_FALSE(find_burst(samples).burst);
  }
}

TEST_CASE("a rise is no burst, nor is a drop smaller than a quarter", "[burst]") {
  CHECK_FALSE(find_burst(then(level(5, 1000), level(20, 3000))).burst);
  CHECK_FALSE(find_burst(then(level(5, 1000), level(20, 800))).burst);
}

TEST_CASE("a run too short to tell is no burst, and says so", "[burst]") {
  CHECK(find_burst({}).too_short);
  auto f = find_burst({3000, 3000, 1000, 1000});
  CHECK(f.too_short);
  CHECK_FALSE(f.burst);
  CHECK(f.sustained_rate == Approx(2000));
  auto g = find_burst({3000, 3000, 1000, 1000, 1000});
  CHECK_FALSE(g.too_short);
  CHECK(g.burst);
}
