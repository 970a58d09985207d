// fio's steadystate criteria (steadystate.c) against windows computed by hand: the deviation
// max |x - mean| and the least-squares slope over x = 0..n-1, each absolute or as a percent of
// the mean; it holds when |criterion| < limit, strictly, as fio's.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "diskprobe/stats/steadystate.h"

using namespace diskprobe;

namespace {

SteadyState criterion(const char* text, double dur = 0) {
  auto ss = parse_steadystate(text);
  REQUIRE(ss);
  ss->duration_s = dur;
  return *ss;
}

}  // namespace

TEST_CASE("steadystate: deviation and slope of a window, by hand", "[steadystate]") {
  // mean 100; |x - mean| = 0, 2, 2, 0; sum_x = 6, sum_x^2 = 14, sum_y = 400,
  // sum_xy = 102 + 196 + 300 = 598: slope = (598 - 6 * 400 / 4) / (14 - 36 / 4) = -2 / 5.
  const std::vector<uint64_t> w{100, 102, 98, 100};
  auto dev = judge_steadystate(criterion("iops:2.01%"), w);
  CHECK(dev.mean == 100);
  CHECK(dev.max_deviation == 2);
  CHECK(dev.slope == Approx(-0.4));
  CHECK(dev.criterion == Approx(2.0));
  CHECK(dev.holds);
  CHECK_FALSE(judge_steadystate(criterion("iops:2%"), w).holds);  // strictly below, as fio
  auto abs_dev = judge_steadystate(criterion("iops:2.5"), w);
  CHECK(abs_dev.criterion == 2);
  CHECK(abs_dev.holds);
  CHECK_FALSE(judge_steadystate(criterion("iops:2"), w).holds);
  auto slope_pct = judge_steadystate(criterion("iops_slope:0.5%"), w);
  CHECK(slope_pct.criterion == Approx(-0.4));  // -0.4 per second of a mean of 100
  CHECK(slope_pct.holds);                      // |-0.4| < 0.5
  CHECK_FALSE(judge_steadystate(criterion("iops_slope:0.4%"), w).holds);
  auto slope_abs = judge_steadystate(criterion("iops_slope:0.41"), w);
  CHECK(slope_abs.criterion == Approx(-0.4));
  CHECK(slope_abs.holds);
}

TEST_CASE("steadystate: a rising window, bandwidth in bytes/s", "[steadystate]") {
  // 10 MiB/s growing by 1 MiB/s each second: mean 12 MiB/s, max deviation 2 MiB/s (16.67%),
  // slope exactly 1 MiB/s per second (8.33% of the mean).
  const uint64_t M = 1 << 20;
  const std::vector<uint64_t> w{10 * M, 11 * M, 12 * M, 13 * M, 14 * M};
  auto slope = judge_steadystate(criterion("bw_slope:10%"), w);
  CHECK(slope.mean == 12.0 * M);
  CHECK(slope.slope == Approx(1.0 * M));
  CHECK(slope.criterion == Approx(100.0 / 12));
  CHECK(slope.holds);
  CHECK_FALSE(judge_steadystate(criterion("bw_slope:8%"), w).holds);
  CHECK(judge_steadystate(criterion("bw_slope:2m"), w).holds);  // 1 MiB/s per s < 2 MiB/s
  auto dev = judge_steadystate(criterion("bw:20%"), w);
  CHECK(dev.max_deviation == 2.0 * M);
  CHECK(dev.criterion == Approx(200.0 / 12));
  CHECK(dev.holds);
  CHECK_FALSE(judge_steadystate(criterion("bw:1m"), w).holds);
}

TEST_CASE("steadystate: nothing moved is no share of a mean; a flat window holds", "[steadystate]") {
  auto zero = judge_steadystate(criterion("iops:5%"), {0, 0, 0});
  CHECK(std::isinf(zero.criterion));
  CHECK_FALSE(zero.holds);
  auto flat = judge_steadystate(criterion("iops_slope:0.01%"), {1237, 1237, 1237});
  CHECK(flat.criterion == 0);
  CHECK(flat.holds);
}

TEST_CASE("steadystate: the rolling window judges only when full and keeps the last samples", "[steadystate]") {
  SteadyStateWindow w(criterion("iops:1%", 3));
  CHECK_FALSE(w.add(500, 5000));  // a ramp-up sample, then three steady ones
  CHECK_FALSE(w.add(1000, 10000));
  CHECK_FALSE(w.add(1001, 10010));  // full, but 500 is still in it
  CHECK(w.add(999, 9990));
  auto r = w.result(true);
  CHECK(r.checked);
  CHECK(r.attained);
  CHECK(r.duration_s == 3);
  CHECK(r.iops == std::vector<uint64_t>{1000, 1001, 999});
  CHECK(r.bw == std::vector<uint64_t>{10000, 10010, 9990});
  CHECK(r.max_deviation == 1);
  CHECK(r.criterion == Approx(0.1));
  CHECK(r.slope == Approx(-0.5));
  // A window not yet full reports what it has, not attained.
  SteadyStateWindow short_one(criterion("bw:1%", 5));
  CHECK_FALSE(short_one.add(10, 100));
  auto s = short_one.result(false);
  CHECK_FALSE(s.attained);
  CHECK(s.bw == std::vector<uint64_t>{100});
}
