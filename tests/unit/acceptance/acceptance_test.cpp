// Expectations, the volume catalog, JUnit, extends and the one JobSpec JSON.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "diskprobe/acceptance/expect.h"
#include "diskprobe/report/report.h"
#include "diskprobe/profiles/profiles.h"
#include "diskprobe/profiles/volumes.h"

using namespace diskprobe;
using Catch::Matchers::Contains;

namespace {

const std::vector<std::string> kBuiltIn{DISKPROBE_PROFILE_SOURCE_DIR};

// 10 s of 4k writes: 50,000 IOPS, 195.3 MiB/s; latencies 100 us, one 3 ms outlier.
Results results_50k() {
  Results r;
  r.runtime_s = 10;
  r.write.ios = 500000;
  r.write.bytes = 500000ull * 4096;
  for (int i = 0; i < 999; ++i) r.write.lat.record(100000);
  r.write.lat.record(3000000);
  r.read.ios = 0;
  return r;
}

// ... of job "t", 4k blocks.
RunReport safe_report(const Results& r, std::string name = "t") {
  JobSpec spec;
  spec.name = std::move(name);
  spec.bs = 4096;
  RunReport rep = report_of(r, spec, "/dev/vdc");
  rep.preflight = "safe";
  return rep;
}

const nlohmann::json& catalog() {
  static const nlohmann::json c = [] {
    auto j = profiles::load_volume_catalog(kBuiltIn);
    REQUIRE(j.ok());
    return *j;
  }();
  return c;
}

profiles::VolumePerformance volume(const std::string& v) {
  auto p = profiles::volume_performance(v, catalog());
  INFO(v << ": " << (p.ok() ? std::string() : p.error()));
  REQUIRE(p.ok());
  return *p;
}

constexpr double kMiB = 1048576.0;

}  // namespace

TEST_CASE("expectations parse with their units", "[expect]") {
  struct Case {
    const char* text;
    Quantity q;
    Compare op;
    double threshold;
  };
  const Case cases[] = {
      {"iops>=38000", Quantity::Iops, Compare::Ge, 38000},
      {"iops>=38k", Quantity::Iops, Compare::Ge, 38000},
      {"write.iops>1.5M", Quantity::Iops, Compare::Gt, 1.5e6},
      {"write.lat.p99<=2ms", Quantity::Latency, Compare::Le, 2e6},
      {"lat.p99.9<250us", Quantity::Latency, Compare::Lt, 250e3},
      {"read.clat.mean<=1s", Quantity::Latency, Compare::Le, 1e9},
      {"slat.max<=900ns", Quantity::Latency, Compare::Le, 900},
      {"bw>=350MB/s", Quantity::Bandwidth, Compare::Ge, 350e6},
      {"bw>=350MiB/s", Quantity::Bandwidth, Compare::Ge, 350 * kMiB},
      {"read.bw>=512KiB", Quantity::Bandwidth, Compare::Ge, 512 * 1024.0},
      {"bw>=1GB/s", Quantity::Bandwidth, Compare::Ge, 1e9},
      {"errors==0", Quantity::Errors, Compare::Eq, 0},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    auto e = parse_expectation(c.text);
    INFO((e.ok() ? std::string() : e.error()));
    REQUIRE(e.ok());
    CHECK(e->quantity == c.q);
    CHECK(e->op == c.op);
    CHECK(e->threshold == Approx(c.threshold));
  }
}

TEST_CASE("bad expectation syntax names and marks the bad part", "[expect]") {
  struct Case {
    const char* text;
    const char* says;
    const char* marked;
  };
  const Case cases[] = {
      {"iops>=38q", "unknown unit 'q' for IOPS", "iops>=38>>q"},
      {"iops=>38000", "unknown comparison", "iops>>=>38000"},
      {"iops 38000", "no comparison", ""},
      {"write.lat.p99<=2", "latency needs a unit", "write.lat.p99<=2>>"},
      {"bw>=350", "bandwidth needs a unit", "bw>=350>>"},
      {"bw>=350MX/s", "unknown unit 'MX/s' for bandwidth", "bw>=350>>MX/s"},
      {"lat.p101<=1ms", "unknown latency statistic 'p101'", "lat.>>p101"},
      {"lat<=1ms", "lat needs one statistic", ""},
      {"wrte.iops>1", "unknown metric 'wrte'", ">>wrte.iops"},
      {"errors==0.5", "errors is a whole number", ""},
      {"read.errors==0", "errors are counted for the whole run", ""},
      {"iops>=-5", "expected a number", "iops>=>>-5"},
      {"iops>=1e6", "unknown unit 'e6'", ""},
      {">=5", "no metric", ""},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    auto e = parse_expectation(c.text);
    REQUIRE_FALSE(e.ok());
    CHECK_THAT(e.error(), Contains(c.says));
    CHECK_THAT(e.error(), Contains(std::string("--expect '") + c.text + "'"));
    if (*c.marked) CHECK_THAT(e.error(), Contains(c.marked));
  }
}

TEST_CASE("expectations are measured against the results", "[expect]") {
  auto r = results_50k();
  std::vector<Expectation> list;
  for (const char* t : {"iops>=48000", "iops>=60000", "write.iops>=50000", "read.iops>=1", "bw>=190MiB/s",
                        "write.lat.p50<=110us", "write.lat.max<=2ms", "errors==0", "read.lat.p99<=1ms"}) {
    list.push_back(*parse_expectation(t));
  }
  auto res = check_expectations(list, r);
  REQUIRE(res.size() == list.size());
  CHECK(res[0].met);
  CHECK(res[0].measured == Approx(50000));
  CHECK_FALSE(res[1].met);
  CHECK(res[2].met);
  CHECK_FALSE(res[3].met);  // no reads at all
  CHECK(res[4].met);
  CHECK(res[4].measured == Approx(50000 * 4096.0));
  CHECK(res[5].met);
  CHECK_FALSE(res[6].met);  // the 3 ms outlier
  CHECK(res[7].met);
  CHECK_FALSE(res[8].met);  // nothing read: a latency expectation on reads is never met
  CHECK(std::isnan(res[8].measured));
}

TEST_CASE("volume catalog formulas at their edges", "[volumes]") {
  // ESSD PL1: IOPS = min(1800 + 50 x GiB, 50000); MB/s = min(120 + 0.5 x GiB, 350).
  auto pl1_min = volume("essd-pl1:20GiB");
  CHECK(pl1_min.iops == 2800);
  CHECK(pl1_min.throughput_bytes_per_s == Approx(130 * kMiB));
  auto pl1_bw_cap = volume("essd-pl1:460GiB");  // throughput reaches its cap first
  CHECK(pl1_bw_cap.iops == 24800);
  CHECK(pl1_bw_cap.throughput_bytes_per_s == Approx(350 * kMiB));
  CHECK(volume("essd-pl1:964").iops == 50000);  // a bare number is GiB
  CHECK(volume("essd-pl1:2TiB").iops == 50000);
  // PL0 caps at 10,000 IOPS / 180 MB/s; PL2 at 100,000 / 750; PL3 at 1,000,000 / 4,000.
  CHECK(volume("essd-pl0:1GiB").iops == 1812);
  CHECK(volume("essd-pl0:65536GiB").iops == 10000);
  CHECK(volume("essd-pl0:65536GiB").throughput_bytes_per_s == Approx(180 * kMiB));
  CHECK(volume("essd-pl2:461GiB").iops == 24850);
  CHECK(volume("essd-pl2:65536GiB").iops == 100000);
  CHECK(volume("essd-pl3:1261GiB").iops == 64850);
  CHECK(volume("essd-pl3:32768GiB").iops == 1000000);
  CHECK(volume("essd-pl3:32768GiB").throughput_bytes_per_s == Approx(4000 * kMiB));
  // AutoPL baseline has floors: at least 3,000 IOPS and 125 MB/s.
  CHECK(volume("essd-autopl:1GiB").iops == 3000);
  CHECK(volume("essd-autopl:1GiB").throughput_bytes_per_s == Approx(125 * kMiB));
  CHECK(volume("essd-autopl:40GiB").iops == 3800);
  // io1: 256 KiB per IOPS up to 500 MiB/s through 32,000 IOPS, then 16 KiB per IOPS.
  CHECK(volume("ebs-io1:100").throughput_bytes_per_s == Approx(25 * kMiB));
  CHECK(volume("ebs-io1:2000").throughput_bytes_per_s == Approx(500 * kMiB));
  CHECK(volume("ebs-io1:32000").throughput_bytes_per_s == Approx(500 * kMiB));
  CHECK(volume("ebs-io1:48000").throughput_bytes_per_s == Approx(750 * kMiB));
  CHECK(volume("ebs-io1:64000").throughput_bytes_per_s == Approx(1000 * kMiB));
  CHECK(volume("ebs-io2:256000").throughput_bytes_per_s == Approx(4000 * kMiB));
  CHECK(volume("ebs-gp3:3000,125").iops == 3000);
  CHECK(volume("ebs-gp3:16000,1000MiB/s").throughput_bytes_per_s == Approx(1000 * kMiB));
  CHECK(volume("essd-plx:3000000").iops == 3000000);
}

TEST_CASE("volume arguments outside the published ranges are refused with the range", "[volumes]") {
  struct Case {
    const char* v;
    const char* says;
  };
  const Case cases[] = {
      {"essd-pl1:19GiB", "size 19 GiB is outside the type's range 20 to 65536 GiB"},
      {"essd-pl3:1000GiB", "size 1000 GiB is outside the type's range 1261 to 65536 GiB"},
      {"essd-pl2:100GiB", "outside the type's range 461"},
      {"ebs-io1:99", "IOPS 99 is outside the type's range 100 to 64000"},
      {"ebs-io1:64001", "outside the type's range"},
      {"ebs-io1:40k", "is not a whole number"},
      {"ebs-gp3:3000", "give IOPS and throughput"},
      {"ebs-gp3:3000,1000", "more than 0.25 MiB/s per provisioned IOPS"},
      {"ebs-gp3:3000,100", "throughput 100 MiB/s is outside"},
      // MB/s is 10^6 bytes a second: 130 MB/s is 123.98 MiB/s, 2,100 MB/s 2,002.7 MiB/s.
      {"ebs-gp3:3000,130MB/s", "throughput 123.978 MiB/s is outside the type's range 125 to 2000 MiB/s"},
      {"ebs-gp3:16000,2100MB/s", "outside the type's range 125 to 2000 MiB/s"},
      {"ebs-gp3:3000,790MB/s", "more than 0.25 MiB/s per provisioned IOPS"},
      {"ebs-gp3:3000,500Mb/s", "give it like ebs-gp3:6000,500MiB/s"},
      {"ebs-gp3:3000,500 MB/s", "give it like ebs-gp3:6000,500MiB/s"},
      {"ebs-gp3:3000,0.5GB/s", "give it like ebs-gp3:6000,500MiB/s"},
      {"ebs-gp3:3000,MB/s", "give it like ebs-gp3:6000,500MiB/s"},
      {"ebs-gp3:3000,-500MB/s", "give it like ebs-gp3:6000,500MiB/s"},
      {"essd-pl9:100GiB", "unknown volume type 'essd-pl9'"},
      {"essd-pl1", "give TYPE:ARGUMENT"},
      {"essd-pl1:big", "give the size like 1000GiB"},
  };
  for (const auto& c : cases) {
    INFO(c.v);
    auto p = profiles::volume_performance(c.v, catalog());
    REQUIRE_FALSE(p.ok());
    CHECK_THAT(p.error(), Contains(c.says));
  }
}

// expect_fuzz found it: a 400-digit number went to std::stod, which threw out_of_range, and
// the uncaught throw aborted the command instead of naming the bad argument.
TEST_CASE("a volume number too large for a double is refused with one line, not an abort", "[volumes]") {
  const std::string huge(400, '9');
  struct Case {
    std::string v;
    const char* says;
  };
  const Case cases[] = {
      {"ebs-io1:" + huge, "longer than 128 bytes"},   // IOPS
      {"essd-pl1:" + huge, "longer than 128 bytes"},  // a bare size, in GiB
      {"ebs-gp3:" + huge + ",500", "longer than 128 bytes"},
      {"ebs-gp3:3000," + huge + "MB/s", "longer than 128 bytes"},
      {"custom:iops=" + huge + ",mbps=1", "longer than 128 bytes"},
      // As long as an argument may be, and finite: the published range refuses it.
      {"ebs-io1:" + std::string(120, '9'), "IOPS 1e+120 is outside the type's range"},
      {"essd-pl1:" + std::string(119, '9'), "size 1e+119 GiB is outside the type's range"},
      {"essd-pl1:" + std::string(110, '9') + "GiB", "is too large; give the size like 1000GiB"},
      {"ebs-gp3:3000," + std::string(100, '9') + "MB/s", "throughput 9.53674e+99 MiB/s is outside"},
      {"custom:iops=" + std::string(100, '9') + ",mbps=" + std::string(10, '9'), ""},  // custom has no range
  };
  for (const auto& c : cases) {
    INFO(c.v);
    Result<profiles::VolumePerformance> p = make_error("not run");
    REQUIRE_NOTHROW(p = profiles::volume_performance(c.v, catalog()));
    if (!*c.says) {
      CHECK(p.ok());
      continue;
    }
    REQUIRE_FALSE(p.ok());
    CHECK_THAT(p.error(), Contains(c.says));
    CHECK(p.error().find('\n') == std::string::npos);
    CHECK(p.error().size() < 300);
  }
}

// "ebs-gp3:6000,500MB/s" took 500 MiB/s (4.86% too much): MB/s is 10^6 bytes a second, as in
// --expect and fio; MiB/s and a bare number (AWS provisions gp3 in MiB/s) are 2^20.
TEST_CASE("gp3 throughput in MB/s is 10^6 bytes a second and in MiB/s or bare 2^20", "[volumes]") {
  CHECK(volume("ebs-gp3:6000,500MB/s").throughput_bytes_per_s == Approx(500e6));
  CHECK(volume("ebs-gp3:6000,500MiB/s").throughput_bytes_per_s == Approx(500 * kMiB));
  CHECK(volume("ebs-gp3:6000,500").throughput_bytes_per_s == Approx(500 * kMiB));
  CHECK(volume("ebs-gp3:6000,500MB/s").iops == 6000);
  CHECK(volume("ebs-gp3:6000,500MB").throughput_bytes_per_s == Approx(500e6));  // the "/s" may be left out
  CHECK(volume("ebs-gp3:6000,500MiB").throughput_bytes_per_s == Approx(500 * kMiB));
  // The range and the per-IOPS cap are MiB/s: 2,097.152 MB/s is exactly 2,000 MiB/s.
  CHECK(volume("ebs-gp3:8000,2097.152MB/s").throughput_bytes_per_s == Approx(2000 * kMiB));
  CHECK(volume("ebs-gp3:3000,131.072MB/s").throughput_bytes_per_s == Approx(125 * kMiB));
  // 0.25 MiB/s per IOPS: 3,000 IOPS allow 750 MiB/s, 786.4 MB/s.
  CHECK(volume("ebs-gp3:3000,786MB/s").throughput_bytes_per_s == Approx(786e6));
}

TEST_CASE("every catalog entry names its formula and source", "[volumes]") {
  for (const auto& [name, t] : catalog()["volumes"].items()) {
    INFO(name);
    CHECK(t.value("formula", "").size() > 10);
    CHECK(t.value("source", "").rfind("https://", 0) == 0);
    CHECK(t.contains("verified"));
  }
}

TEST_CASE("a volume sets one expectation at the tolerance of what limits the workload", "[volumes]") {
  JobSpec four_k;
  four_k.bs = 4096;
  auto pl3 = volume("essd-pl3:2000GiB");  // 101,800 IOPS, 1,120 MB/s
  auto e = profiles::volume_expectation(pl3, four_k, 0.95);
  CHECK(e.quantity == Quantity::Iops);
  CHECK(e.provisioned == 101800);
  CHECK(e.threshold == 96710);
  CHECK(e.text == "iops>=96710");
  CHECK(e.origin == "--volume essd-pl3:2000GiB");

  JobSpec one_m;
  one_m.bs = 1 << 20;
  auto bw = profiles::volume_expectation(pl3, one_m, 0.95);
  CHECK(bw.quantity == Quantity::Bandwidth);
  CHECK(bw.provisioned == Approx(1120 * kMiB));
  CHECK(bw.threshold == Approx(1064 * kMiB));

  CHECK(*profiles::parse_tolerance("95%") == Approx(0.95));
  CHECK(*profiles::parse_tolerance("0.9") == Approx(0.9));
  CHECK(*profiles::parse_tolerance("100") == Approx(1.0));
  CHECK_FALSE(profiles::parse_tolerance("0%").ok());
  CHECK_FALSE(profiles::parse_tolerance("101%").ok());
  CHECK_FALSE(profiles::parse_tolerance("abc").ok());
}

TEST_CASE("the report says how much of the provisioned IOPS was delivered", "[volumes][report]") {
  auto r = results_50k();
  Expectation e;
  e.quantity = Quantity::Iops;
  e.text = "iops>=48450";
  e.metric = "iops";
  e.threshold = 48450;
  e.provisioned = 51000;
  e.origin = "--volume ebs-io1:51000";
  RunReport rep = safe_report(r);
  rep.expectations = check_expectations({e}, r);
  auto text = render_text(rep);
  CHECK_THAT(text, Contains("expectations: 1 of 1 met"));
  CHECK_THAT(text, Contains("PASS  iops>=48450: measured 50.0k IOPS; delivered 98.0% of provisioned IOPS"));
  auto j = to_json(rep);
  CHECK(j["expectations"][0]["delivered_percent"].get<double>() == Approx(98.04).epsilon(0.001));
  CHECK(j["expectations"][0]["measured_iops"] == 50000.0);
  CHECK(j["expectations"][0]["provisioned_iops"] == 51000.0);
  CHECK(j["expectations_met"] == true);
}

TEST_CASE("JUnit: one testsuite, a testcase for the preflight and each expectation", "[junit]") {
  auto r = results_50k();
  std::vector<Expectation> list{*parse_expectation("iops>=48000"), *parse_expectation("iops>=60000"),
                                *parse_expectation("write.lat.max<=2ms")};
  RunReport rep = safe_report(r, "essd<&>");
  rep.expectations = check_expectations(list, r);
  auto xml = render_junit(rep);
  CHECK_THAT(xml, Contains("<testsuites tests=\"4\" failures=\"2\">"));
  CHECK_THAT(xml, Contains("name=\"diskprobe.essd&lt;&amp;&gt;\" tests=\"4\" failures=\"2\""));
  CHECK_THAT(xml, Contains("name=\"preflight\""));
  CHECK_THAT(xml, Contains("name=\"iops&gt;=60000\""));
  CHECK_THAT(xml, Contains("<failure message=\"FAIL  iops&gt;=60000: measured 50.0k IOPS\""));
  CHECK(std::count(xml.begin(), xml.end(), '\n') > 10);
  size_t failures = 0;
  for (size_t at = xml.find("<failure"); at != std::string::npos; at = xml.find("<failure", at + 1))
    ++failures;
  CHECK(failures == 2);

  rep.preflight_safe = false;
  rep.preflight = "refused: has an ext4 signature";
  rep.expectations.clear();
  auto refused = render_junit(rep);
  CHECK_THAT(refused, Contains("tests=\"1\" failures=\"1\""));
  CHECK_THAT(refused, Contains("<failure message=\"refused: has an ext4 signature\" type=\"preflight\"/>"));
}

TEST_CASE("one JSON form of a JobSpec, with units in its names", "[profiles][json]") {
  auto spec = profiles::load("ebs-io1-randwrite", kBuiltIn);
  REQUIRE(spec.ok());
  auto j = to_json(*spec);
  CHECK(j["bs_bytes"] == 16384);
  CHECK(j["runtime_s"] == 180.0);
  CHECK(j["size_bytes"] == 1ull << 30);
  CHECK(j["norandommap"] == true);
  CHECK(j["host"]["hold_cstates"] == true);
  CHECK(j["host"]["rq_affinity"].is_null());
  CHECK(j["expect"] == nlohmann::json::array({"errors==0"}));
  CHECK(to_json(report_of(Results{}, *spec, "/dev/vdc"))["job"] == j);  // the run report's job object is the same document
}

TEST_CASE("a user profile extends a built-in one and changes only what it says", "[profiles][extends]") {
  std::string dir =
      (std::filesystem::temp_directory_path() / ("diskprobe-extends-" + std::to_string(::getpid()))).string();
  std::filesystem::create_directories(dir);
  std::vector<std::string> dirs{DISKPROBE_PROFILE_SOURCE_DIR, dir};
  std::ofstream(dir + "/mine.json") << R"({"extends": "essd-plx-iops", "description": "shorter",
      "workload": {"runtime": "5s", "numjobs": 4}, "expect": ["iops>=1000"]})";
  std::ofstream(dir + "/mine2.json") << R"({"extends": "./mine.json", "host": {"rq_affinity": 1}})";
  std::ofstream(dir + "/loop.json") << R"({"extends": "./loop.json"})";
  std::ofstream(dir + "/bad.json") << R"({"extends": "essd-nope", "workload": {"iodepth": 0}})";

  auto mine = profiles::load("mine", dirs);
  INFO((mine.ok() ? std::string() : mine.error()));
  REQUIRE(mine.ok());
  CHECK(mine->name == "mine");
  CHECK(mine->description == "shorter");
  CHECK(mine->runtime_s == 5);
  CHECK(mine->numjobs == 4);
  CHECK(mine->iodepth == 64);           // from essd-plx-iops
  CHECK(*mine->host.rq_affinity == 0);  // from essd-plx-iops
  CHECK(mine->source.find("test_plx_iops.sh") != std::string::npos);  // from essd-plx-iops
  CHECK(mine->expect == std::vector<std::string>{"iops>=1000"});

  auto by_path = profiles::load(dir + "/mine2.json", dirs);
  REQUIRE(by_path.ok());
  CHECK(by_path->numjobs == 4);
  CHECK(*by_path->host.rq_affinity == 1);

  auto loop = profiles::load("loop", dirs);
  REQUIRE_FALSE(loop.ok());
  CHECK_THAT(loop.error(), Contains("levels of extends"));

  auto bad = profiles::load("bad", dirs);
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.error(), Contains(dir + "/bad.json: 2 problems"));
  CHECK_THAT(bad.error(), Contains("extends: unknown profile 'essd-nope'"));
  CHECK_THAT(bad.error(), Contains("workload.iodepth: 0 is not allowed; use a whole number from 1 to 65536"));

  auto bad_expect = profiles::parse(R"({"workload": {}, "expect": ["iops>=5x"]})", "/tmp/e.json", dirs);
  REQUIRE_FALSE(bad_expect.ok());
  CHECK_THAT(bad_expect.error(),
             Contains("/tmp/e.json: 1 problem: expect: --expect 'iops>=5x': unknown unit 'x'"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("--volume custom:iops=N,mbps=M[,lat_ms=L] is a volume outside the catalog", "[volumes][custom]") {
  auto v = volume("custom:iops=1237,mbps=23");
  CHECK(v.iops == 1237);
  CHECK(v.throughput_bytes_per_s == Approx(23 * kMiB));
  CHECK(v.latency_ms == 0);
  CHECK(v.provider == "custom");
  auto l = volume("custom:lat_ms=0.5,mbps=23.5,iops=50000");  // any order, decimals where they fit
  CHECK(l.iops == 50000);
  CHECK(l.throughput_bytes_per_s == Approx(23.5 * kMiB));
  CHECK(l.latency_ms == Approx(0.5));
  // A volume expectation works on it as on the catalog's.
  JobSpec four_k;
  four_k.bs = 4096;
  auto e = profiles::volume_expectation(v, four_k, 0.95);
  CHECK(e.text == "iops>=1176");
  CHECK(e.origin == "--volume custom:iops=1237,mbps=23");
}

// Issue 17: run took custom's lat_ms and judged nothing with it.
TEST_CASE("run --volume custom:...,lat_ms=L judges a QD 1 workload's mean latency against L",
          "[volumes][custom]") {
  auto v = volume("custom:iops=5000,mbps=200,lat_ms=0.1");
  JobSpec qd1;
  qd1.bs = 4096;
  qd1.iodepth = 1;
  qd1.numjobs = 1;
  auto judged = profiles::volume_expectations(v, qd1, 0.95);
  REQUIRE(judged.size() == 1);  // QD 1 cannot reach 5,000 IOPS: the latency alone
  const Expectation& e = judged[0];
  CHECK(e.quantity == Quantity::Latency);
  CHECK(e.op == Compare::Le);
  CHECK(e.latency == "lat");
  CHECK(e.stat == "mean");
  CHECK(e.threshold == Approx(0.1e6 / 0.95));  // as accept: within lat_ms / tolerance
  CHECK(e.text == "lat.mean<=0.1053ms");
  CHECK(e.origin == "--volume custom:iops=5000,mbps=200,lat_ms=0.1");

  auto r = results_50k();  // mean 102.9 us
  RunReport rep = safe_report(r);
  rep.expectations = check_expectations(judged, r);
  REQUIRE(rep.expectations.size() == 1);
  CHECK(rep.expectations[0].met);
  CHECK(rep.expectations[0].measured == Approx(102900));
  CHECK_THAT(
      render_text(rep),
      Contains(
          "PASS  lat.mean<=0.1053ms: measured 102.9 us (--volume custom:iops=5000,mbps=200,lat_ms=0.1)"));
  auto slow = check_expectations(
      profiles::volume_expectations(volume("custom:iops=5000,mbps=200,lat_ms=0.09"), qd1, 0.95), r);
  CHECK_FALSE(slow[0].met);
  rep.expectations = slow;
  auto xml = render_junit(rep);
  CHECK_THAT(xml, Contains("name=\"lat.mean&lt;=0.09474ms\""));
  CHECK_THAT(xml, Contains("<failure message=\"FAIL  lat.mean&lt;=0.09474ms: measured 102.9 us"));
}

TEST_CASE("lat_ms is not judged on a workload that queues, nor without lat_ms", "[volumes][custom]") {
  JobSpec deep;
  deep.bs = 4096;
  deep.iodepth = 32;
  deep.numjobs = 1;
  auto judged = profiles::volume_expectations(volume("custom:iops=5000,mbps=200,lat_ms=0.1"), deep, 0.95);
  REQUIRE(judged.size() == 1);
  CHECK(judged[0].text == "iops>=4750");
  JobSpec two_jobs = deep;
  two_jobs.iodepth = 1;
  two_jobs.numjobs = 2;
  CHECK_FALSE(
      profiles::volume_latency_expectation(volume("custom:iops=5000,mbps=200,lat_ms=0.1"), two_jobs, 0.95)
          .has_value());
  JobSpec qd1 = two_jobs;
  qd1.numjobs = 1;
  auto no_lat = profiles::volume_expectations(volume("custom:iops=5000,mbps=200"), qd1, 0.95);
  REQUIRE(no_lat.size() == 1);
  CHECK(no_lat[0].quantity == Quantity::Iops);
}

TEST_CASE("bad --volume custom: arguments name what is wrong and the form", "[volumes][custom]") {
  struct Case {
    const char* v;
    const char* says;
  };
  const Case cases[] = {
      {"custom:iops=1000", "mbps= is missing"},
      {"custom:mbps=100", "iops= is missing"},
      {"custom:", "'' is not iops=, mbps= or lat_ms="},
      {"custom:iops=1000,mbps=100,burst=5", "'burst=5' is not iops=, mbps= or lat_ms="},
      {"custom:iops=1000,iops=2000,mbps=1", "iops is given twice"},
      {"custom:iops=1.5,mbps=100", "iops needs a whole number above 0"},
      {"custom:iops=0,mbps=100", "iops needs a whole number above 0"},
      {"custom:iops=10k,mbps=100", "iops needs a whole number above 0"},
      {"custom:iops=1000,mbps=-1", "mbps needs a number above 0"},
      {"custom:iops=1000,mbps=100,lat_ms=", "lat_ms needs a number above 0"},
      {"custom:iops=1000,mbps", "mbps needs a number above 0"},
      {"custom:iops=1000,,mbps=1", "'' is not iops="},
  };
  for (const auto& c : cases) {
    INFO(c.v);
    auto p = profiles::volume_performance(c.v, catalog());
    REQUIRE_FALSE(p.ok());
    CHECK_THAT(p.error(), Contains(c.says));
    CHECK_THAT(p.error(), Contains("custom:iops=N,mbps=M[,lat_ms=L]"));
    CHECK(p.error().find('\n') == std::string::npos);
  }
  // The catalog's own error lists custom too.
  auto unknown = profiles::volume_performance("nope:1", catalog());
  REQUIRE_FALSE(unknown.ok());
  CHECK_THAT(unknown.error(), Contains("custom:iops=N,mbps=M[,lat_ms=L]"));
}
