// compare and aggregate on real reports (two 2 s scratch runs of essd-plx-latency, saved in
// tests/fixtures/reports) and on edited copies of them.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "diskprobe/fleet/aggregate.h"
#include "diskprobe/fleet/compare.h"
#include "diskprobe/report/run_summary.h"

using namespace diskprobe;
using nlohmann::json;

namespace {

const std::string kReports = std::string(DISKPROBE_FIXTURES) + "/reports/";

json load(const std::string& name) {
  std::ifstream f(kReports + name);
  REQUIRE(f);
  std::stringstream s;
  s << f.rdbuf();
  return json::parse(s.str());
}

RunSummary summary(const json& j, const std::string& origin = "x.json") {
  auto r = summarize_run(j, origin);
  INFO((r ? "" : r.error()));
  REQUIRE(r);
  return *r;
}

// B = A with IOPS and bandwidth scaled by `throughput` and latencies by `latency`.
json scaled(json j, double throughput, double latency) {
  auto& w = j["write"];
  w["iops"] = w["iops"].get<double>() * throughput;
  w["bw_bytes_per_s"] = w["bw_bytes_per_s"].get<double>() * throughput;
  w["clat_ns"]["mean"] = w["clat_ns"]["mean"].get<double>() * latency;
  for (auto& [k, v] : w["clat_ns"]["percentiles"].items()) v = v.get<double>() * latency;
  return j;
}

const CompareRow& row(const Comparison& c, const std::string& dir, const std::string& metric) {
  for (const auto& r : c.rows) {
    if (r.direction == dir && r.metric == metric) return r;
  }
  FAIL("no row " << dir << " " << metric);
  return c.rows.front();
}

}  // namespace

TEST_CASE("a real report reads back the numbers to_json wrote", "[compare]") {
  json j = load("latency-run-a.json");
  RunSummary s = summary(j);
  CHECK(s.profile == "essd-plx-latency");
  CHECK(s.device == j["device"].get<std::string>());
  CHECK(s.write.present);
  CHECK_FALSE(s.read.present);  // a randwrite run
  CHECK(s.write.iops == Approx(j["write"]["iops"].get<double>()));
  CHECK(s.write.lat_p99_ns == Approx(j["write"]["clat_ns"]["percentiles"]["99.00"].get<double>()));
  CHECK(s.write.lat_p999_ns == Approx(j["write"]["clat_ns"]["percentiles"]["99.90"].get<double>()));
  CHECK(s.write.percentiles.size() == 17);
  CHECK_FALSE(s.has_expectations);
}

TEST_CASE("missing optional keys leave fields unset instead of failing", "[compare]") {
  json j = load("latency-run-a.json");
  j["write"].erase("clat_ns");
  j.erase("job");
  j.erase("started_at");
  RunSummary s = summary(j);
  CHECK(s.write.present);
  CHECK_FALSE(is_set(s.write.lat_p99_ns));
  CHECK(s.profile.empty());
  Comparison c = compare_runs(s, s, 5.0);
  CHECK_FALSE(c.regressed);  // an unset number is never a regression
  CHECK_FALSE(is_set(row(c, "write", "p99 latency").change_percent));
}

TEST_CASE("a device object with host metadata is read too", "[compare]") {
  json j = load("latency-run-a.json");
  j["device"] = {{"path", "/dev/vdc"}, {"serial", "d-abc123"}};
  j["host"] = {{"hostname", "node-7"}};
  RunSummary s = summary(j);
  CHECK(s.device == "/dev/vdc");
  CHECK(s.label() == "node-7:d-abc123");
}

TEST_CASE("not a run report: the error names the file and what to do", "[compare]") {
  auto r = summarize_run(json{{"hello", 1}}, "notes.json");
  REQUIRE_FALSE(r);
  CHECK_THAT(r.error(), Catch::Contains("notes.json") && Catch::Contains("--output-format json"));
  auto missing = load_run_summary(kReports + "no-such-report.json");
  REQUIRE_FALSE(missing);
  CHECK_THAT(missing.error(), Catch::Contains("no-such-report.json"));
}

TEST_CASE("compare: a run against itself changes nothing and passes a 0% tolerance", "[compare]") {
  RunSummary a = summary(load("latency-run-a.json"));
  Comparison c = compare_runs(a, a, 0.0);
  REQUIRE(c.rows.size() == 5);  // write only: IOPS, bandwidth, mean, p99, p99.9
  for (const auto& r : c.rows) CHECK(r.change_percent == Approx(0.0));
  CHECK_FALSE(c.regressed);
}

TEST_CASE("compare: a worse copy regresses beyond 5%, a better one does not", "[compare]") {
  json a = load("latency-run-a.json");
  RunSummary ra = summary(a);
  RunSummary worse = summary(scaled(a, 0.90, 1.0));  // 10% fewer IOPS, same latency
  Comparison c = compare_runs(ra, worse, 5.0);
  CHECK(c.regressed);
  CHECK(row(c, "write", "IOPS").change_percent == Approx(-10.0));
  CHECK(row(c, "write", "IOPS").regression);
  CHECK_FALSE(row(c, "write", "p99 latency").regression);
  CHECK_THAT(comparison_text(c, ra, worse), Catch::Contains("REGRESSION") && Catch::Contains("-10.0%"));

  RunSummary slower = summary(scaled(a, 1.0, 1.06));  // latency 6% higher
  Comparison s = compare_runs(ra, slower, 5.0);
  CHECK(s.regressed);
  CHECK(row(s, "write", "p99.9 latency").change_percent == Approx(6.0));
  CHECK(compare_runs(ra, slower, 7.0).regressed == false);

  RunSummary better = summary(scaled(a, 1.5, 0.5));
  CHECK_FALSE(compare_runs(ra, better, 5.0).regressed);
  CHECK(compare_runs(better, ra, 5.0).regressed);                // and back again it is worse
  CHECK_FALSE(compare_runs(ra, worse, std::nullopt).regressed);  // no tolerance, no verdict
}

TEST_CASE("compare: the two real runs' changes are what their numbers say", "[compare]") {
  json ja = load("latency-run-a.json"), jb = load("latency-run-b.json");
  Comparison c = compare_runs(summary(ja), summary(jb), std::nullopt);
  double ia = ja["write"]["iops"].get<double>(), ib = jb["write"]["iops"].get<double>();
  CHECK(row(c, "write", "IOPS").change_percent == Approx((ib - ia) / ia * 100));
  json cj = comparison_json(c, summary(ja), summary(jb));
  CHECK(cj["rows"].size() == 5);
  CHECK(cj["regressed"] == false);
}

TEST_CASE("compare: a direction B stopped doing counts as all of its throughput lost", "[compare]") {
  json a = load("latency-run-a.json");
  json b = a;
  b["write"]["ios"] = 0;
  Comparison c = compare_runs(summary(a), summary(b), 5.0);
  CHECK(c.regressed);
  CHECK(row(c, "write", "IOPS").change_percent == Approx(-100.0));
}

TEST_CASE("nearest-rank percentiles", "[aggregate]") {
  std::vector<double> v{5, 1, 4, 2, 3};
  CHECK(nearest_rank(v, 50) == 3);
  CHECK(nearest_rank(v, 90) == 5);
  CHECK(nearest_rank(v, 0) == 1);
  CHECK(nearest_rank({7}, 99) == 7);
  CHECK_FALSE(is_set(nearest_rank({}, 50)));
}

TEST_CASE("aggregate: volumes, fleet percentiles per profile and failed expectations", "[aggregate]") {
  json a = load("latency-run-a.json"), b = load("latency-run-b.json");
  json c = scaled(a, 0.5, 2.0);
  c["expectations"] =
      json::array({{{"expression", "write.iops >= 10000"}, {"met", false}, {"actual", 3691.2}},
                   {{"expression", "write.lat_p99 <= 5ms"}, {"met", true}}});
  json d = b;
  d["expectations"] = json::array({{{"expression", "write.iops >= 1000"}, {"met", true}}});
  std::vector<RunSummary> runs{summary(a, "a.json"), summary(b, "b.json"), summary(c, "c.json"),
                               summary(d, "d.json")};
  Fleet f = aggregate_runs(runs);
  REQUIRE(f.volumes.size() == 4);
  REQUIRE(f.failed.size() == 1);
  CHECK(f.volumes[f.failed[0]].run.origin == "c.json");
  CHECK(f.without_expectations == 2);
  REQUIRE(f.stats.size() == 2);  // one profile: IOPS and p99 latency
  const FleetStat& iops = f.stats[0];
  CHECK(iops.metric == "IOPS");
  CHECK(iops.volumes == 4);
  std::vector<double> all{runs[0].write.iops, runs[1].write.iops, runs[2].write.iops, runs[3].write.iops};
  CHECK(iops.p50 == Approx(nearest_rank(all, 50)));
  CHECK(iops.worst == Approx(*std::min_element(all.begin(), all.end())));
  CHECK(iops.worst == Approx(runs[0].write.iops * 0.5));
  const FleetStat& p99 = f.stats[1];
  CHECK(p99.worst == Approx(runs[0].write.lat_p99_ns * 2.0));

  std::string text = fleet_text(f);
  CHECK_THAT(text, Catch::Contains("FAILED") && Catch::Contains("write.iops >= 10000") &&
                       Catch::Contains("1 volume failed") && Catch::Contains("essd-plx-latency"));
  json fj = fleet_json(f);
  CHECK(fj["failed_volumes"] == 1);
  CHECK(fj["volumes"][2]["expectations_failed"][0]["expectation"] == "write.iops >= 10000");
}

TEST_CASE("aggregate: different profiles never share fleet percentiles", "[aggregate]") {
  json a = load("latency-run-a.json");
  json other = a;
  other["job"]["name"] = "essd-plx-iops";
  Fleet f = aggregate_runs({summary(a), summary(other)});
  REQUIRE(f.stats.size() == 4);
  CHECK(f.stats[0].profile == "essd-plx-latency");
  CHECK(f.stats[0].volumes == 1);
  CHECK(f.stats[2].profile == "essd-plx-iops");
  CHECK_THAT(fleet_text(f),
             Catch::Contains("no volume failed") && Catch::Contains("2 of 2 reports carry no"));
}

// Every report run writes carries an "expectations" array, empty when none were asked for;
// aggregate counted an empty one as expectations all met ("met (0)").
TEST_CASE("aggregate: an empty expectations array is a report without expectations", "[aggregate]") {
  json a = load("latency-run-a.json");
  a["expectations"] = json::array();
  a["expectations_met"] = true;
  json b = load("latency-run-b.json");
  b["expectations"] = json::array({{{"expression", "write.iops >= 1000"}, {"met", true}}});
  Fleet f = aggregate_runs({summary(a, "a.json"), summary(b, "b.json")});
  CHECK_FALSE(f.volumes[0].run.has_expectations);
  CHECK(f.volumes[1].run.has_expectations);
  CHECK(f.without_expectations == 1);
  std::string text = fleet_text(f);
  INFO(text);
  CHECK_THAT(text, !Catch::Contains("met (0)") && Catch::Contains("met (1)"));
  CHECK_THAT(text, Catch::EndsWith("no volume failed its expectations (1 of 2 reports carry no expectations)\n"));
  json fj = fleet_json(f);
  CHECK(fj["volumes"][0]["has_expectations"] == false);
  CHECK(fj["reports_without_expectations"] == 1);
}
