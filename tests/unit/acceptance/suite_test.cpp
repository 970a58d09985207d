// accept's suite planned from a volume's figures and the host, with a fake profile loader.
#include <catch2/catch.hpp>

#include "diskprobe/acceptance/suite.h"

using namespace diskprobe;
using Catch::Matchers::Contains;

namespace {

constexpr double kMiB = 1048576.0;

// Each "built-in profile" marks its host wishes with its own rq_affinity, so a test sees
// which one a phase came from.
Result<JobSpec> fake_profile(const std::string& name) {
  JobSpec s;
  s.name = name;
  s.bs = name.find("seq") != std::string::npos ? 1024 * 1024 : 4096;
  s.rw = name == "cloud-randwrite-iops"  ? RwMode::RandWrite
         : name == "cloud-randread-iops" ? RwMode::RandRead
         : name == "cloud-seqread-bw"    ? RwMode::Read
         : name == "cloud-seqwrite-bw"   ? RwMode::Write
         : name == "cloud-randread-lat"  ? RwMode::RandRead
                                         : RwMode::RandWrite;
  s.iodepth = 128;
  s.size = 1ull << 30;
  s.time_based = false;
  s.host.rq_affinity = static_cast<int>(name.size() % 3);
  s.host.hold_cstates = name.find("lat") != std::string::npos;
  s.expect = {"errors==0"};
  return s;
}

std::vector<SuitePhase> plan(const SuiteVolume& v, SuiteHost host = {}, double max_time = kDefaultMaxTimeS) {
  auto p = plan_suite(v, host, max_time, fake_profile);
  REQUIRE(p.ok());
  return *p;
}

}  // namespace

TEST_CASE("the suite: six phases, each from its built-in profile, on the whole device", "[suite]") {
  auto phases = plan({"custom:iops=1237,mbps=23", 1237, 23 * kMiB, 0});
  REQUIRE(phases.size() == 6);
  const std::vector<std::string> names = {"random write IOPS",          "random read IOPS",
                                          "sequential read throughput", "sequential write throughput",
                                          "QD1 read latency",           "QD1 write latency"};
  for (size_t i = 0; i < phases.size(); ++i) {
    const auto& p = phases[i];
    INFO(p.name);
    CHECK(p.name == names[i]);
    auto base = fake_profile(p.profile);
    CHECK(p.spec.rw == base->rw);
    CHECK(p.spec.bs == base->bs);
    CHECK(p.spec.host.rq_affinity == base->host.rq_affinity);  // the profile's host wishes
    CHECK(p.spec.host.hold_cstates == base->host.hold_cstates);
    CHECK(p.spec.size == 0);
    CHECK(p.spec.time_based);
    CHECK(p.spec.expect.empty());  // judged by the suite, on the sustained rate
  }
  CHECK(phases[0].profile == "cloud-randwrite-iops");
  CHECK(phases[2].profile == "cloud-seqread-bw");
  CHECK(phases[5].profile == "cloud-randwrite-lat");
}

TEST_CASE("queue depth and jobs from Little's law on the provisioned rate", "[suite]") {
  SECTION("1,237 IOPS at the assumed 1 ms (and 0.17 ms to move 4k at 23 MiB/s): 3 in flight, one job") {
    auto p = plan({"v", 1237, 23 * kMiB, 0});
    CHECK(p[0].spec.iodepth == 3);
    CHECK(p[0].spec.numjobs == 1);
    CHECK(p[0].judged == Quantity::Iops);
    CHECK(p[0].provisioned == 1237);
    CHECK_THAT(p[0].how, Contains("QD 3 x 1 job: Little's law, 1237 IOPS x 1.17 ms x 2 in flight"));
  }
  SECTION("lat_ms is the latency assumed") {
    auto p = plan({"v", 50000, 350 * kMiB, 0.5});
    CHECK(p[1].spec.iodepth == 52);  // 50,000 x (0.5 + 0.011 ms) x 2
  }
  SECTION("a deep queue is spread over the hardware queues, up to the CPUs") {
    auto p = plan({"v", 1000000, 4000 * kMiB, 0}, {8, 4});
    CHECK(p[0].spec.numjobs == 4);  // 2,000 in flight: 8 jobs' worth, 4 queues
    CHECK(p[0].spec.iodepth == kSuiteMaxIodepth);
    auto q = plan({"v", 1000000, 4000 * kMiB, 0}, {2, 16});
    CHECK(q[0].spec.numjobs == 2);  // the CPUs there are
    auto one = plan({"v", 1000000, 4000 * kMiB, 0}, {8, 1});
    CHECK(one[0].spec.numjobs == 1);
  }
  SECTION("1 MiB phases: QD from the throughput, with each I/O's transfer time") {
    auto p = plan({"v", 1237, 23 * kMiB, 0});
    CHECK(p[2].judged == Quantity::Bandwidth);
    CHECK(p[2].provisioned == Approx(23 * kMiB));
    CHECK(p[2].spec.iodepth == 3);  // 23 I/Os a second x (1 ms + 43.5 ms) x 2
    CHECK(p[3].spec.iodepth == 3);
  }
  SECTION("a 4k phase that the throughput limits is judged on throughput") {
    auto p = plan({"v", 50000, 100 * kMiB, 0});  // 50,000 x 4k = 195 MiB/s > 100
    CHECK(p[0].judged == Quantity::Bandwidth);
    CHECK(p[0].provisioned == Approx(100 * kMiB));
  }
}

TEST_CASE("QD1 latency phases: judged only against lat_ms", "[suite]") {
  auto none = plan({"v", 1237, 23 * kMiB, 0});
  CHECK(none[4].spec.iodepth == 1);
  CHECK(none[4].spec.numjobs == 1);
  CHECK(none[4].judged == Quantity::Latency);
  CHECK(none[4].provisioned == 0);
  auto given = plan({"v", 1237, 23 * kMiB, 2.5});
  CHECK(given[5].provisioned == Approx(2.5e6));
  CHECK_THAT(given[5].how, Contains("lat_ms 2.5 ms"));
}

TEST_CASE("--max-time is split over the phases, each with its steady-state window", "[suite]") {
  auto p = plan({"v", 1237, 23 * kMiB, 0}, {}, 600);
  CHECK(p[0].spec.runtime_s == 150);
  CHECK(p[2].spec.runtime_s == 100);
  CHECK(p[4].spec.runtime_s == 50);
  double total = 0;
  for (const auto& ph : p) total += ph.spec.runtime_s;
  CHECK(total <= 600);
  CHECK(p[0].spec.steadystate.kind == SteadyStateKind::IopsSlope);
  CHECK(p[2].spec.steadystate.kind == SteadyStateKind::BwSlope);
  CHECK(p[0].spec.steadystate.duration_s == 30);
  CHECK(p[0].spec.steadystate.ramp_s == 37);  // a quarter of the phase: a burst shorter is seen
  CHECK(p[0].spec.steadystate.percent);
  // Too short for a window after the ramp: the phase runs to its limit.
  auto shortest = plan({"v", 1237, 23 * kMiB, 0}, {}, 24);
  CHECK(shortest[4].spec.runtime_s == 2);
  CHECK_FALSE(shortest[4].spec.steadystate.enabled());
}

TEST_CASE("a --max-time too short for the suite, or a missing profile, is an error", "[suite]") {
  auto p = plan_suite({"v", 1237, 23 * kMiB, 0}, {}, 23, fake_profile);
  REQUIRE_FALSE(p.ok());
  CHECK(p.error() == "--max-time 23: the suite's 6 phases need at least 24 s; give --max-time 24 or more");
  auto missing = plan_suite({"v", 1237, 23 * kMiB, 0}, {}, 600, [](const std::string& n) -> Result<JobSpec> {
    return make_error("no profile " + n);
  });
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error() == "no profile cloud-randwrite-iops");
}
