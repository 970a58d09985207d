// The sweep on synthetic curves: which steps it runs, where it finds the knee, when it stops.
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>

#include "diskprobe/curve/sweep.h"

using namespace diskprobe;
using namespace diskprobe::curve;

namespace {

// A device by Little's law: below `limit` IOPS every I/O takes `base_ns`; at the limit the
// queue waits, so latency grows with the queue depth (or the offered rate).
struct Device {
  double limit = 1e12;
  double base_ns = 100'000;
  std::function<double(size_t)> noise = [](size_t) { return 1.0; };  // by step number
  Point measure(const Load& l, size_t step) const {
    Point p;
    p.load = l;
    double offered = l.rate_iops ? static_cast<double>(l.rate_iops) : l.iodepth * 1e9 / base_ns;
    p.iops = std::min(offered, limit) * noise(step);
    // M/M/1-like: latency grows as the offered load nears the limit, and past it with the queue.
    double rho = std::min(offered / limit, 0.999);
    double lat = l.rate_iops ? base_ns / (1 - rho * rho) : l.iodepth * 1e9 / std::min(offered, limit);
    p.mean_ns = 1.2 * lat * noise(step + 400);
    p.p50_ns = lat * noise(step + 100);
    p.p99_ns = 2 * lat * noise(step + 200);
    p.p999_ns = 3 * lat * noise(step + 300);
    return p;
  }
};

// A point at `iops` whose latencies are `lat` (mean and p50), twice it (p99), three times (p99.9).
Point at(double iops, double lat, uint32_t qd = 0) {
  Point p;
  p.load.iodepth = qd;
  p.iops = iops;
  p.mean_ns = p.p50_ns = lat;
  p.p99_ns = 2 * lat;
  p.p999_ns = 3 * lat;
  return p;
}

std::vector<Point> sweep(const Options& o, const Device& d) {
  std::vector<Point> done;
  while (auto l = next_load(o, done)) {
    done.push_back(d.measure(*l, done.size()));
    REQUIRE(done.size() < 64);
  }
  return done;
}

std::vector<uint32_t> depths(const std::vector<Point>& v) {
  std::vector<uint32_t> d;
  for (const auto& p : v) d.push_back(p.load.iodepth);
  return d;
}

}  // namespace

TEST_CASE("a linear device: QD doubles up to the limit, no knee", "[curve][sweep]") {
  Options o;
  o.max_iodepth = 64;
  auto pts = sweep(o, Device{});
  CHECK(depths(pts) == std::vector<uint32_t>{1, 2, 4, 8, 16, 32, 64});
  CHECK_FALSE(find_knee(pts, o.knee));
}

TEST_CASE("max_iodepth that is no power of two is the last step", "[curve][sweep]") {
  Options o;
  o.max_iodepth = 24;
  CHECK(depths(sweep(o, Device{})) == std::vector<uint32_t>{1, 2, 4, 8, 16, 24});
}

TEST_CASE("knee at step k: the first step that bought latency only; the sweep stops one step past it",
          "[curve][sweep]") {
  // base 100 us: QD q offers 10,000 q IOPS; the limit 80,000 is reached at QD 8 (step 3).
  Device d;
  d.limit = 80'000;
  Options o;
  auto pts = sweep(o, d);
  CHECK(depths(pts) == std::vector<uint32_t>{1, 2, 4, 8, 16, 32});
  auto knee = find_knee(pts, o.knee);
  REQUIRE(knee);
  CHECK(*knee == 4);  // QD 16: IOPS flat, latency doubled
  SECTION("two steps past the knee when asked") {
    o.steps_past_knee = 2;
    CHECK(depths(sweep(o, d)).back() == 64);
  }
}

TEST_CASE("a limit between two steps: the knee is the step that crossed it, or the next", "[curve][sweep]") {
  Options o;
  for (double limit : {21'000.0, 25'000.0, 30'000.0, 38'000.0}) {
    INFO("limit " << limit);
    Device d;
    d.limit = limit;  // QD 2 offers 20,000, QD 4 offers 40,000
    auto pts = sweep(o, d);
    auto knee = find_knee(pts, o.knee);
    REQUIRE(knee);
    CHECK(pts[*knee].iops == Approx(limit));  // at the limit, never below it
    CHECK((pts[*knee].load.iodepth == 4 || pts[*knee].load.iodepth == 8));
  }
}

TEST_CASE("flat then a wall: latency flat while IOPS grows, then latency only", "[curve][sweep]") {
  std::vector<Point> pts;
  for (double iops : {1000.0, 2000.0, 4000.0, 8000.0}) pts.push_back(at(iops, 50e3));
  pts.push_back(at(8100, 500e3));
  pts.push_back(at(8150, 1e6));
  CHECK(find_knee(pts, KneeRule{}) == std::optional<size_t>(4));
}

TEST_CASE("latency that grows in step with IOPS is no knee", "[curve][sweep]") {
  // latency +40% for IOPS +100%: elasticity 0.49.
  std::vector<Point> pts;
  double lat = 100e3;
  for (double iops = 1000; iops < 100000; iops *= 2, lat *= 1.4) pts.push_back(at(iops, lat));
  CHECK_FALSE(find_knee(pts, KneeRule{}));
}

TEST_CASE("a small IOPS gain that costs much latency is the knee even when IOPS still grows",
          "[curve][sweep]") {
  // +10% IOPS for +30% latency: elasticity 2.75 > 2.
  std::vector<Point> pts = {at(1000, 1e5), at(1100, 1.3e5)};
  CHECK(find_knee(pts, KneeRule{}) == std::optional<size_t>(1));
  // +10% IOPS for +20% latency is under min_latency_growth: noise, not a knee.
  pts[1].mean_ns = 1.2e5;
  CHECK_FALSE(find_knee(pts, KneeRule{}));
}

TEST_CASE("a noisy device: +-5% on every figure finds the same knee, no early stop", "[curve][sweep]") {
  Device d;
  d.limit = 80'000;
  // deterministic noise in [0.95, 1.05]
  d.noise = [](size_t i) { return 1.0 + 0.05 * std::sin(static_cast<double>(i) * 2.3 + 0.7); };
  Options o;
  auto pts = sweep(o, d);
  auto knee = find_knee(pts, o.knee);
  REQUIRE(knee);
  CHECK(pts[*knee].load.iodepth == 16);
  CHECK(pts.back().load.iodepth == 32);
}

TEST_CASE("a dip that the next step recovers from is noise, not the knee", "[curve][sweep]") {
  // Measured on a shared machine: QD 4 lost IOPS to a neighbour, QD 8 beat QD 2 (mean latency
  // by Little's law: QD / IOPS).
  std::vector<Point> pts = {at(7063, 141.6e3, 1), at(115.6e3, 17.3e3, 2), at(81.5e3, 49e3, 4)};
  CHECK(find_knee(pts, KneeRule{}) == std::optional<size_t>(2));  // a candidate until a later step says
  pts.push_back(at(137.6e3, 58e3, 8));
  CHECK_FALSE(find_knee(pts, KneeRule{}));
  Options o;
  CHECK(next_load(o, pts)->iodepth == 16);  // the sweep goes on
  // A later step within 10% of the best before the dip confirms it.
  pts.back().iops = 120e3;
  pts.back().mean_ns = 66.7e3;
  CHECK(find_knee(pts, KneeRule{}) == std::optional<size_t>(2));
}

TEST_CASE("rate steps of a known maximum", "[curve][sweep]") {
  Options o;
  o.rate_fractions = {0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 1.0};
  o.max_iops = 10'000;
  o.rate_iodepth = 32;
  o.steps_past_knee = 10;  // every step
  Device d;
  d.limit = 10'000;
  auto pts = sweep(o, d);
  REQUIRE(pts.size() == 7);
  CHECK(pts[0].load.rate_iops == 1000);
  CHECK(pts[2].load.rate_iops == 5000);
  CHECK(pts[6].load.rate_iops == 10000);
  for (const auto& p : pts) CHECK(p.load.iodepth == 32);
  auto knee = find_knee(pts, o.knee);
  REQUIRE(knee);
  // latency by 1/(1 - rho^2): 50% -> 75% is +71% p99 for +50% IOPS (elasticity 1.3); 75% -> 90% is
  // +130% for +20% (4.6).
  CHECK(pts[*knee].load.fraction == 0.9);
  SECTION("and the sweep stops one step past the knee") {
    o.steps_past_knee = 1;
    CHECK(sweep(o, d).back().load.fraction == 0.95);
  }
}

TEST_CASE("rate steps without a maximum: a queue-depth sweep finds it first", "[curve][sweep]") {
  Options o;
  o.rate_fractions = {0.5, 1.0};
  Device d;
  d.limit = 80'000;
  auto pts = sweep(o, d);
  REQUIRE(pts.size() == 8);  // QD 1..32 (the knee at 16), then two rate steps
  CHECK(pts[6].load.rate_iops == 40'000);
  CHECK(pts[6].load.iodepth == 8);  // the first step with the best IOPS
  CHECK(pts[7].load.rate_iops == 80'000);
  CHECK(main_series(pts).size() == 2);
}

TEST_CASE("a step's spec: its queue depth, the cap split over jobs and directions", "[curve][sweep]") {
  JobSpec p;
  p.rw = RwMode::RandWrite;
  p.numjobs = 4;
  p.iodepth = 128;
  auto s = step_spec(p, Load{8, 0, 0});
  CHECK(s.iodepth == 8);
  CHECK(s.rate_iops[0] == 0);
  CHECK(s.rate_iops[1] == 0);
  s = step_spec(p, Load{32, 10'000, 0.5});
  CHECK(s.rate_iops[0] == 0);
  CHECK(s.rate_iops[1] == 2500);
  p.rw = RwMode::RandRW;
  p.rwmixread = 70;
  s = step_spec(p, Load{32, 10'000, 0.5});
  CHECK(s.rate_iops[0] == 1750);
  CHECK(s.rate_iops[1] == 750);
  p.rw = RwMode::Read;
  p.numjobs = 3;
  s = step_spec(p, Load{1, 10, 0.5});
  CHECK(s.rate_iops[0] == 3);
  CHECK(s.rate_iops[1] == 0);
}

TEST_CASE("a step's point from the engine's results", "[curve][sweep]") {
  Results r;
  r.runtime_s = 2;
  for (uint64_t i = 0; i < 1000; ++i) r.write.clat.record(i < 990 ? 100'000 : 5'000'000);
  r.write.ios = 1000;
  r.write.bytes = 1000 * 4096;
  r.read.ios = 200;
  r.read.bytes = 200 * 4096;
  for (int i = 0; i < 200; ++i) r.read.clat.record(100'000);
  r.steadystate.attained = true;
  auto p = point_of(r, Load{4, 0, 0});
  CHECK(p.iops == Approx(600));
  CHECK(p.bw_bytes == Approx(600 * 4096));
  CHECK(p.p50_ns == Approx(100'000).epsilon(0.02));
  CHECK(p.mean_ns == Approx((1190 * 100'000.0 + 10 * 5'000'000.0) / 1200).epsilon(0.02));
  CHECK(p.p999_ns == Approx(5'000'000).epsilon(0.02));
  CHECK(p.steady);
  CHECK(step_name(p.load) == "QD 4");
  CHECK(step_name(Load{32, 5000, 0.5}) == "50% (5000 IOPS, QD 32)");
}

TEST_CASE("why the sweep ended", "[curve][sweep]") {
  Options o;
  o.max_iodepth = 8;
  CHECK(why_ended(o, sweep(o, Device{})) == "at --max-iodepth 8 without a knee");
  Device d;
  d.limit = 80'000;
  o.max_iodepth = 256;
  CHECK(why_ended(o, sweep(o, d)) == "1 step past the knee");
  o.rate_fractions = {0.1, 0.2};
  o.max_iops = 1e6;
  CHECK(why_ended(o, sweep(o, Device{})) == "after the last rate step");
}
