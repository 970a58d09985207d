// fio's rate_iops, rate and steadystate (ss, ss_dur, ss_ramp) as JobSpec reads them, and what
// validate() refuses of them: one line each, saying what to do.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "diskprobe/spec/validate.h"

using namespace diskprobe;
using Catch::Matchers::Contains;

namespace {

using Rate = std::array<uint64_t, 2>;

const Target kDisk{"/dev/vdc", 1 << 30, 512};

JobSpec steady(double dur, double ramp = 0, double runtime = 30) {
  JobSpec s;
  s.runtime_s = runtime;
  s.steadystate = *parse_steadystate("iops_slope:0.1%");
  s.steadystate.duration_s = dur;
  s.steadystate.ramp_s = ramp;
  return s;
}

}  // namespace

TEST_CASE("parse_rate: fio's R[,W] forms, IOPS in whole I/Os, bytes in fio's units", "[spec][rate]") {
  CHECK(parse_rate("1237", false) == Rate{1237, 1237});
  CHECK(parse_rate("1237,", false) == Rate{1237, 0});
  CHECK(parse_rate(",500", false) == Rate{0, 500});
  CHECK(parse_rate("100,500", false) == Rate{100, 500});
  CHECK(parse_rate("0", false) == Rate{0, 0});
  CHECK(parse_rate("10m", true) == Rate{10ull << 20, 10ull << 20});
  CHECK(parse_rate("7m,1k", true) == Rate{7ull << 20, 1024});
  CHECK(parse_rate("4096", true) == Rate{4096, 4096});
  for (const char* bad : {"", ",", "0x", "1k", "1.5", "-1", "1,2,3", "1,,", "abc", "99999999999999999999999"}) {
    INFO(bad);
    CHECK_FALSE(parse_rate(bad, false).has_value());
  }
  for (const char* bad : {"", ",", "10q", "1.5m", "10m,x"}) {
    INFO(bad);
    CHECK_FALSE(parse_rate(bad, true).has_value());
  }
}

TEST_CASE("parse_steadystate: fio's KIND:LIMIT[%], bw limits in fio's units", "[spec][steadystate]") {
  auto a = parse_steadystate("iops:0.2%");
  REQUIRE(a);
  CHECK(a->kind == SteadyStateKind::Iops);
  CHECK(a->limit == Approx(0.2));
  CHECK(a->percent);
  CHECK(a->duration_s == 0);
  auto b = parse_steadystate("iops_slope:0.1%");
  REQUIRE(b);
  CHECK(b->kind == SteadyStateKind::IopsSlope);
  auto c = parse_steadystate("bw:10m");
  REQUIRE(c);
  CHECK(c->kind == SteadyStateKind::Bw);
  CHECK(c->limit == 10.0 * 1024 * 1024);
  CHECK_FALSE(c->percent);
  auto d = parse_steadystate("bw_slope:2%");
  REQUIRE(d);
  CHECK(d->kind == SteadyStateKind::BwSlope);
  CHECK(d->limit == 2);
  auto e = parse_steadystate("iops:50");
  REQUIRE(e);
  CHECK(e->limit == 50);
  CHECK_FALSE(e->percent);
  CHECK_FALSE(parse_steadystate("none")->enabled());
  for (const char* bad : {"", "iops", "iops:", "iops:%", "iops:0", "iops:0%", "iops:10m", "lat:1%", "none:1%",
                          "iops:-1", "iops:1%%", "bw:", ":1%", "iops_slope:0.1 %"}) {
    INFO(bad);
    CHECK_FALSE(parse_steadystate(bad).has_value());
  }
}

TEST_CASE("steadystate_text: reads back as the same criterion", "[spec][steadystate]") {
  for (const char* t : {"iops:0.2%", "iops_slope:0.1%", "bw:10485760", "bw_slope:2%", "iops:50"}) {
    auto ss = parse_steadystate(t);
    REQUIRE(ss);
    CHECK(steadystate_text(*ss) == t);
  }
  CHECK(steadystate_text(SteadyState{}) == "none");
}

TEST_CASE("to_json(JobSpec): the caps and the criterion", "[spec][steadystate]") {
  JobSpec s = steady(10, 2);
  s.rate_iops[0] = 1237;
  s.rate_bytes[1] = 7 << 20;
  auto j = to_json(s);
  CHECK(j["rate_iops"] == nlohmann::json::array({1237, 0}));
  CHECK(j["rate_bytes_per_s"] == nlohmann::json::array({0, 7 << 20}));
  CHECK(j["steadystate"]["criterion"] == "iops_slope:0.1%");
  CHECK(j["steadystate"]["kind"] == "iops_slope");
  CHECK(j["steadystate"]["limit_unit"] == "percent_of_mean");
  CHECK(j["steadystate"]["duration_s"] == 10);
  CHECK(j["steadystate"]["ramp_s"] == 2);
  CHECK(to_json(JobSpec{})["steadystate"].is_null());
}

TEST_CASE("validate: steadystate needs time_based and a window of 2 s to runtime", "[spec][steadystate]") {
  CHECK(validate(steady(10), kDisk).ok());
  CHECK(validate(steady(2), kDisk).ok());
  CHECK(validate(steady(30), kDisk).ok());
  CHECK(validate(steady(10, 20), kDisk).ok());
  struct Case {
    JobSpec spec;
    const char* says;
  };
  JobSpec not_timed = steady(10);
  not_timed.time_based = false;
  not_timed.size = 1 << 20;
  const Case cases[] = {
      {not_timed, "ends a time-based run early: add time_based=1"},
      {steady(0), "needs ss_dur, a window of at least 2 s (one sample a second): use ss_dur=10s"},
      {steady(1), "needs ss_dur, a window of at least 2 s"},
      {steady(2.5), "ss_dur 2.5 s is not whole seconds (one sample a second): use ss_dur=3s"},
      {steady(40), "ss_dur 40 s is longer than runtime 30 s: the window could never fill; use ss_dur=30s or less"},
      {steady(10, 25), "ss_ramp 25 s + ss_dur 10 s is longer than runtime 30 s"},
  };
  for (const auto& c : cases) {
    auto st = validate(c.spec, kDisk);
    INFO(c.says);
    REQUIRE_FALSE(st.ok());
    CHECK_THAT(st.error(), Contains(c.says));
    CHECK(st.error().find('\n') == std::string::npos);  // one line
  }
}

TEST_CASE("validate: rate_iops and rate capping one direction twice is refused", "[spec][rate]") {
  JobSpec s;
  s.rate_iops[0] = 1000;
  s.rate_bytes[1] = 1 << 20;
  CHECK(validate(s, kDisk).ok());
  s.rate_bytes[0] = 1 << 20;
  auto st = validate(s, kDisk);
  REQUIRE_FALSE(st.ok());
  CHECK_THAT(st.error(), Contains("rate_iops and rate both cap reads: give one of them"));
}
