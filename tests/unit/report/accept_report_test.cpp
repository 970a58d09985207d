// accept's verdicts and its one report: the sustained rate judged, bursts named, JUnit with a
// testcase per metric.
#include <catch2/catch.hpp>

#include "diskprobe/report/accept_report.h"

using namespace diskprobe;
using Catch::Matchers::Contains;

namespace {

constexpr double kMiB = 1048576.0;

SuitePhase rate_phase(const char* name, RwMode rw, uint32_t bs, Quantity q, double provisioned) {
  SuitePhase p;
  p.name = name;
  p.profile = "cloud-test";
  p.spec.rw = rw;
  p.spec.bs = bs;
  p.judged = q;
  p.provisioned = provisioned;
  return p;
}

// A run that completed `per_second[i]` I/Os of `bs` in second i.
RunReport run_of(const SuitePhase& p, const std::vector<uint64_t>& per_second) {
  RunReport rep;
  rep.spec = p.spec;
  Results& r = rep.results;
  DirectionStats& d = does_writes(p.spec.rw) ? r.write : r.read;
  d.bs = p.spec.bs;
  for (uint64_t n : per_second) {
    d.ios_per_second.push_back(n);
    d.ios += n;
    d.bytes += n * p.spec.bs;
    d.lat.record(800000, n);  // 0.8 ms each
  }
  r.runtime_s = static_cast<double>(per_second.size());
  return rep;
}

}  // namespace

TEST_CASE("a steady rate at the provisioned figure passes, quoted with its spread", "[accept]") {
  auto p = rate_phase("random write IOPS", RwMode::RandWrite, 4096, Quantity::Iops, 50000);
  auto v = judge_phase(p, run_of(p, std::vector<uint64_t>(20, 49350)), 0.95);
  CHECK(v.judged);
  CHECK(v.passed);
  CHECK(v.measured == Approx(49350));
  CHECK(v.line == "random write IOPS: delivered 98.7% of provisioned 50,000 IOPS (49,350 IOPS ± 0.0%)");
}

TEST_CASE("half the provisioned rate fails", "[accept]") {
  auto p = rate_phase("sequential read throughput", RwMode::Read, 1 << 20, Quantity::Bandwidth, 23 * kMiB);
  auto v = judge_phase(p, run_of(p, std::vector<uint64_t>(10, 11)), 0.95);
  CHECK_FALSE(v.passed);
  CHECK(v.delivered == Approx(11.0 / 23));
  CHECK_THAT(v.line, Contains("delivered 47.8% of provisioned 23.0 MiB/s"));
}

TEST_CASE("after a burst, the sustained rate is judged and the burst is named", "[accept]") {
  auto p = rate_phase("random write IOPS", RwMode::RandWrite, 4096, Quantity::Iops, 1237);
  std::vector<uint64_t> s(5, 3000);
  s.insert(s.end(), 15, 1237);
  auto v = judge_phase(p, run_of(p, s), 0.95);
  REQUIRE(v.burst.burst);
  CHECK(v.measured == Approx(1237));  // not the run's mean, 1,678
  CHECK(v.passed);
  CHECK_THAT(v.line, Contains("(sustained 1,237 IOPS ± 0.0%); burst of 3,000 IOPS for 5 s, then 1,237 IOPS"));
  // The burst does not carry a volume that cannot sustain its rate.
  std::vector<uint64_t> low(5, 3000);
  low.insert(low.end(), 15, 600);
  CHECK_FALSE(judge_phase(p, run_of(p, low), 0.95).passed);
}

TEST_CASE("without a burst the rate is the run's count over its time, not the per-second mean", "[accept]") {
  auto p = rate_phase("random read IOPS", RwMode::RandRead, 4096, Quantity::Iops, 1000);
  auto rep = run_of(p, std::vector<uint64_t>(10, 1000));
  rep.results.read.ios += 500;  // half a second more after the last whole one
  rep.results.runtime_s = 10.5;
  CHECK(judge_phase(p, rep, 0.95).measured == Approx(10500 / 10.5));
}

TEST_CASE("QD1 latency: judged against lat_ms only when given", "[accept]") {
  auto p = rate_phase("QD1 read latency", RwMode::RandRead, 4096, Quantity::Latency, 0);
  auto rep = run_of(p, std::vector<uint64_t>(5, 1200));
  auto none = judge_phase(p, rep, 0.95);
  CHECK_FALSE(none.judged);
  CHECK(none.passed);
  CHECK_THAT(none.line, Contains("not judged"));
  p.provisioned = 1e6;  // lat_ms=1
  CHECK(judge_phase(p, rep, 0.95).passed);
  p.provisioned = 0.5e6;
  auto over = judge_phase(p, rep, 0.95);
  CHECK_FALSE(over.passed);
  CHECK_THAT(over.line, Contains("against lat_ms 500.0 us"));
}

TEST_CASE("a phase that asked for steady state and did not reach it is flagged", "[accept]") {
  auto p = rate_phase("random write IOPS", RwMode::RandWrite, 4096, Quantity::Iops, 1000);
  p.spec.steadystate.kind = SteadyStateKind::IopsSlope;
  auto rep = run_of(p, std::vector<uint64_t>(10, 1000));
  CHECK_THAT(judge_phase(p, rep, 0.95).line, Contains("; not steady: ran to its time limit"));
  rep.results.steadystate.attained = true;
  CHECK_THAT(judge_phase(p, rep, 0.95).line, Contains("; steady"));
}

TEST_CASE("accept's JUnit: one testcase per metric; a refusal is one failed preflight", "[accept][junit]") {
  AcceptReport r;
  r.device = "/dev/loop7";
  r.volume = "custom:iops=1237,mbps=23";
  r.preflight = "safe";
  auto good = rate_phase("random write IOPS", RwMode::RandWrite, 4096, Quantity::Iops, 1237);
  auto bad = rate_phase("random read IOPS", RwMode::RandRead, 4096, Quantity::Iops, 1237);
  auto lat = rate_phase("QD1 read latency", RwMode::RandRead, 4096, Quantity::Latency, 0);
  r.planned = {good.name, bad.name, lat.name, "QD1 write latency"};
  for (const auto& [p, n] : {std::pair{good, 1237u}, {bad, 600u}, {lat, 1000u}}) {
    auto rep = run_of(p, std::vector<uint64_t>(8, n));
    r.phases.push_back({p, rep, judge_phase(p, rep, 0.95)});
  }
  r.ended = "interrupted by Interrupt";
  auto x = render_accept_junit(r);
  CHECK_THAT(x, Contains("<testsuites tests=\"4\" failures=\"2\">"));
  CHECK_THAT(x, Contains("skipped=\"1\""));
  CHECK_THAT(x, Contains("name=\"random write IOPS\""));
  CHECK_THAT(x, Contains("<failure message=\"random read IOPS: delivered 48.5% of provisioned 1,237 IOPS"));
  CHECK_THAT(x, Contains("<failure message=\"not run: interrupted by Interrupt\" type=\"not-run\"/>"));
  CHECK_FALSE(r.passed());
  CHECK_THAT(render_accept_text(r), Contains("NOT RUN  QD1 write latency"));

  AcceptReport refused;
  refused.volume = "custom:iops=1,mbps=1";
  refused.preflight_safe = false;
  refused.preflight = "refused: /dev/loop7 holds an ext4 filesystem";
  refused.planned = r.planned;
  auto y = render_accept_junit(refused);
  CHECK_THAT(y, Contains("<testsuites tests=\"1\" failures=\"1\">"));
  CHECK_THAT(y, Contains("name=\"preflight\""));
}

TEST_CASE("accept's HTML has every phase", "[accept][html]") {
  AcceptReport r;
  r.device = "/dev/loop7";
  r.volume = "custom:iops=1237,mbps=23";
  auto a = rate_phase("random write IOPS", RwMode::RandWrite, 4096, Quantity::Iops, 1237);
  auto b = rate_phase("random read IOPS", RwMode::RandRead, 4096, Quantity::Iops, 1237);
  r.planned = {a.name, b.name};
  for (const auto& p : {a, b}) {
    auto rep = run_of(p, std::vector<uint64_t>(4, 1237));
    r.phases.push_back({p, rep, judge_phase(p, rep, 0.95)});
  }
  auto h = render_accept_html(r);
  CHECK_THAT(h, Contains("<section id=\"phase-1\">"));
  CHECK_THAT(h, Contains("<section id=\"phase-2\">"));
  CHECK_THAT(h, Contains("<td>random read IOPS</td><td>PASS</td>"));
  CHECK_THAT(h, Contains("</html>"));
}

namespace {

// Two phases run on loop7: a write that passed, a read at half the volume's IOPS.
AcceptReport two_phases() {
  AcceptReport r;
  r.device = "/dev/loop7";
  r.volume = "custom:iops=1237,mbps=23";
  r.preflight = "safe";
  auto a = rate_phase("random write IOPS", RwMode::RandWrite, 4096, Quantity::Iops, 1237);
  auto b = rate_phase("random read IOPS", RwMode::RandRead, 4096, Quantity::Iops, 1237);
  r.planned = {a.name, b.name};
  for (const auto& [p, n] : {std::pair{a, 1237u}, {b, 600u}}) {
    auto rep = run_of(p, std::vector<uint64_t>(4, n));
    rep.device = r.device;
    rep.spec.name = p.name == a.name ? "cloud-randwrite-iops" : "cloud-randread-iops";
    rep.results.started_at = "2026-12-01T20:00:00Z";
    rep.results.disk.valid = true;
    rep.results.disk.write_ios = p.name == a.name ? 4948 : 0;
    rep.results.disk.read_ios = p.name == a.name ? 0 : 2400;
    rep.results.disk.util_percent = p.name == a.name ? 90 : 50;
    r.phases.push_back({p, rep, judge_phase(p, rep, 0.95)});
  }
  return r;
}

}  // namespace

TEST_CASE("accept's openmetrics: every phase under one family each, with its phase label, and the verdicts",
          "[accept][openmetrics]") {
  auto m = render_accept_openmetrics(two_phases());
  // Each family once, though two runs are in it.
  for (size_t at = m.find("# TYPE "); at != std::string::npos; at = m.find("# TYPE ", at + 1)) {
    std::string name = m.substr(at + 7, m.find(' ', at + 7) - at - 7);
    INFO(name);
    CHECK(m.find("# TYPE " + name + " ", at + 1) == std::string::npos);
  }
  CHECK_THAT(m, Contains("diskprobe_iops{device=\"loop7\",model=\"\",serial=\"\",profile=\"cloud-randwrite-iops\","
                         "volume_type=\"\",phase=\"random write IOPS\",direction=\"write\"} 1237\n"));
  CHECK_THAT(m, Contains("profile=\"cloud-randread-iops\",volume_type=\"\",phase=\"random read IOPS\",direction="
                         "\"read\"} 600\n"));
  CHECK_THAT(m, Contains("diskprobe_run_timestamp_seconds{device=\"loop7\""));
  CHECK_THAT(m, Contains("diskprobe_accept_delivered_ratio{device=\"loop7\",volume=\"custom:iops=1237,mbps=23\","
                         "metric=\"random write IOPS\"} 1\n"));
  CHECK_THAT(m, Contains("diskprobe_accept_metric_passed{device=\"loop7\",volume=\"custom:iops=1237,mbps=23\","
                         "metric=\"random read IOPS\"} 0\n"));
  CHECK_THAT(m, Contains("diskprobe_accept_passed{device=\"loop7\",volume=\"custom:iops=1237,mbps=23\"} 0\n"));
  CHECK(m.find("\n\n") == std::string::npos);
}

TEST_CASE("accept's fio-json: each phase a group of jobs, disk_util summed, the verdicts under diskprobe.accept",
          "[accept][fio-json]") {
  auto r = two_phases();
  auto j = accept_fio_json(r, false);
  REQUIRE(j["jobs"].size() == 2);
  CHECK(j["jobs"][0]["groupid"] == 0);
  CHECK(j["jobs"][1]["groupid"] == 1);
  CHECK(j["jobs"][0]["write"]["total_ios"] == 4 * 1237);
  CHECK(j["jobs"][1]["read"]["total_ios"] == 4 * 600);
  REQUIRE(j["disk_util"].size() == 1);
  CHECK(j["disk_util"][0]["name"] == "loop7");
  CHECK(j["disk_util"][0]["write_ios"] == 4948);
  CHECK(j["disk_util"][0]["read_ios"] == 2400);
  CHECK(j["disk_util"][0]["util"].get<double>() == Approx(70));  // both 4 s: the mean of 90 and 50
  // Each phase's util is over the time its counters span, so it weighs by that span: 90% of
  // 10 s and 50% of 30 s are 60% of the 40 s.
  AcceptReport spans = two_phases();
  spans.phases[0].report.results.disk.span_s = 10;
  spans.phases[1].report.results.disk.span_s = 30;
  CHECK(accept_fio_json(spans, false)["disk_util"][0]["util"].get<double>() == Approx(60));
  CHECK(j["diskprobe"]["runs"].size() == 2);
  CHECK(j["diskprobe"]["accept"]["passed"] == false);
  CHECK(j["diskprobe"]["accept"]["metrics"][1]["name"] == "random read IOPS");
  CHECK_FALSE(j["diskprobe"]["accept"]["metrics"][1].contains("run"));
  CHECK(j.contains("fio version"));
  CHECK(j.contains("global options"));
}

// Issue 17: cmd/accept.cpp built this report inline; now one pure function.
TEST_CASE("accept_report: the phases that ran, each judged; the rest planned, not run",
          "[accept][assemble]") {
  const std::vector<SuitePhase> suite = {
      rate_phase("random write IOPS", RwMode::RandWrite, 4096, Quantity::Iops, 1237),
      rate_phase("random read IOPS", RwMode::RandRead, 4096, Quantity::Iops, 1237),
      rate_phase("sequential read throughput", RwMode::Read, 1 << 20, Quantity::Bandwidth, 23 * kMiB)};
  auto first = run_of(suite[0], std::vector<uint64_t>(6, 1237));
  first.device = "/dev/loop7";
  first.preflight = "safe";
  auto second = run_of(suite[1], std::vector<uint64_t>(6, 600));
  second.device = "/dev/loop7";

  SECTION("every phase ran") {
    auto third = run_of(suite[2], std::vector<uint64_t>(4, 23));
    auto r =
        accept_report("custom:iops=1237,mbps=23", 0.95, suite, {first, second, third}, {"loop7", {}, ""});
    CHECK(r.volume == "custom:iops=1237,mbps=23");
    CHECK(r.tolerance == 0.95);
    CHECK(r.device == "/dev/loop7");  // the report's, not the argument
    CHECK(r.preflight == "safe");
    CHECK(r.preflight_safe);
    REQUIRE(r.phases.size() == 3);
    CHECK(r.planned ==
          std::vector<std::string>{"random write IOPS", "random read IOPS", "sequential read throughput"});
    CHECK(r.phases[0].verdict.passed);
    CHECK_FALSE(r.phases[1].verdict.passed);  // 600 of 1,237
    CHECK(r.phases[1].verdict.line == judge_phase(suite[1], second, 0.95).line);
    CHECK_FALSE(r.passed());
    CHECK(render_accept(r, OutputFormat::Text) == render_accept_text(r));
    CHECK(render_accept(r, OutputFormat::Json) == accept_json(r).dump(2) + "\n");
    CHECK(render_accept(r, OutputFormat::Junit) == render_accept_junit(r));
  }
  SECTION("interrupted after the first phase: the rest not run, the report says why") {
    auto r =
        accept_report("v", 0.95, suite, {first}, {"loop7", {}, "interrupted by Interrupt after 1 phase"});
    REQUIRE(r.phases.size() == 1);
    CHECK(r.ended == "interrupted by Interrupt after 1 phase");
    CHECK_FALSE(r.passed());
    CHECK_THAT(render_accept_text(r), Contains("NOT RUN  random read IOPS"));
  }
  SECTION("refused: no phase, the refusal's device and summary") {
    auto r =
        accept_report("v", 0.95, suite, {}, {"/dev/loop7", std::string("refused: holds ext4"), "refused"});
    CHECK(r.phases.empty());
    CHECK(r.device == "/dev/loop7");
    CHECK_FALSE(r.preflight_safe);
    CHECK(r.preflight == "refused: holds ext4");
    CHECK_THAT(render_accept_junit(r), Contains("refused: holds ext4"));
  }
  SECTION("nothing ran and nothing refused: not run") {
    auto r = accept_report("v", 0.95, suite, {}, {"loop7", {}, "interrupted before the first phase"});
    CHECK(r.device == "loop7");
    CHECK(r.preflight == "not run");
    CHECK(r.preflight_safe);
  }
}
