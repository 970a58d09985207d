// A curve's text, JSON and HTML: every step in each, the knee marked, the page self-contained.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "diskprobe/curve/curve_report.h"

using namespace diskprobe;
using namespace diskprobe::curve;
using Catch::Matchers::Contains;

namespace {

size_t count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + needle.size())) ++n;
  return n;
}

// QD 1..32 on a device that flattens at 8,000 IOPS: the knee is QD 16.
CurveReport knee_at_qd16() {
  CurveReport r;
  r.spec.name = "cloud-randwrite <iops>";
  r.device = "/dev/loop7";
  r.preflight = "safe";
  double iops[] = {1000, 2000, 4000, 8000, 8050, 8100};
  for (int i = 0; i < 6; ++i) {
    Point p;
    p.load.iodepth = 1u << i;
    p.iops = iops[i];
    p.bw_bytes = iops[i] * 4096;
    p.p50_ns = p.load.iodepth * 1e9 / iops[i];
    p.mean_ns = 1.1 * p.p50_ns;
    p.p99_ns = 2 * p.p50_ns;
    p.p999_ns = 3 * p.p50_ns;
    p.steady = i % 2;
    r.points.push_back(p);
  }
  r.ended = "one step past the knee";
  return r;
}

}  // namespace

TEST_CASE("curve text: a row per step, the knee marked and explained", "[curve][report]") {
  auto r = knee_at_qd16();
  auto t = render_text(r);
  CHECK(count(t, "\nQD ") == 6);
  CHECK_THAT(t, Contains("QD 16") && Contains("<- knee"));
  CHECK(count(t, "<- knee") == 1);
  CHECK_THAT(t, Contains("knee: QD 16 at 8050 IOPS, mean 2.19 ms"));
  CHECK_THAT(t, Contains("ended: one step past the knee"));
}

TEST_CASE("curve text without a knee says so", "[curve][report]") {
  auto r = knee_at_qd16();
  r.points.resize(4);
  CHECK_THAT(render_text(r), Contains("knee: none found"));
  CHECK(to_json(r)["knee"].is_null());
}

TEST_CASE("curve JSON: every step's load and figures, the knee by index", "[curve][report]") {
  auto j = to_json(knee_at_qd16());
  REQUIRE(j["steps"].size() == 6);
  CHECK(j["steps"][3]["iodepth"] == 8);
  CHECK(j["steps"][3]["iops"] == 8000.0);
  CHECK(j["steps"][3]["series"] == "iodepth");
  CHECK(j["steps"][0]["clat_p99_ns"] == 2e6);
  CHECK(j["steps"][0]["clat_mean_ns"] == Approx(1.1e6));
  CHECK(j["knee"]["step"] == 4);
  CHECK(j["knee"]["name"] == "QD 16");
  CHECK(j["device"] == "/dev/loop7");
  CHECK(j["job"]["name"] == "cloud-randwrite <iops>");
  CHECK(j["knee_rule"]["max_elasticity"] == 2.0);
}

TEST_CASE("curve HTML: one series per percentile, a point per step each, the knee marked",
          "[curve][report]") {
  auto h = render_html(knee_at_qd16());
  CHECK(count(h, "<path class=\"series\"") == 4);  // p50, p99, p99.9 and the mean the knee is judged on
  CHECK(count(h, "<circle class=\"point\" data-series=\"mean\"") == 6);
  CHECK(count(h, "<circle class=\"point\" data-series=\"p50\"") == 6);
  CHECK(count(h, "<circle class=\"point\" data-series=\"p99\"") == 6);
  CHECK(count(h, "<circle class=\"point\" data-series=\"p99.9\"") == 6);
  CHECK(count(h, "<g class=\"knee\" data-step=\"4\"") == 1);
  CHECK_THAT(h, Contains(">IOPS delivered<") && Contains("completion latency (log scale)"));
  CHECK_THAT(h, Contains("cloud-randwrite &lt;iops&gt;"));
  CHECK_THAT(h, !Contains("<script") && Contains("default-src 'none'"));
  CHECK(count(h, "<tr><td>QD ") == 6);
}

TEST_CASE("curve HTML of a rate sweep draws the rate steps only", "[curve][report]") {
  auto r = knee_at_qd16();
  for (double f : {0.5, 1.0}) {
    Point p = r.points[3];
    p.load.rate_iops = static_cast<uint64_t>(8000 * f);
    p.load.fraction = f;
    p.iops = 8000 * f;
    r.points.push_back(p);
  }
  auto h = render_html(r);
  CHECK(count(h, "<circle class=\"point\" data-series=\"p50\"") == 2);
  CHECK(count(h, "<tr><td>") == 8);  // the table lists every step
}

TEST_CASE("curve HTML with no step says so", "[curve][report]") {
  CurveReport r;
  CHECK_THAT(render_html(r), Contains("no step was measured"));
}
