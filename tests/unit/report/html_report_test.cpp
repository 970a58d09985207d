// The HTML report: self-contained, and its charts carry the run's own data points.
#include <algorithm>
#include <catch2/catch.hpp>
#include <regex>
#include <string>

#include "diskprobe/report/html_report.h"

using namespace diskprobe;
using Catch::Matchers::Contains;

namespace {

size_t count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + needle.size())) ++n;
  return n;
}

JobSpec mixed_spec() {
  JobSpec s;
  s.name = "mixed <test>";
  s.rw = RwMode::RandRW;
  s.bs = 4096;
  s.iodepth = 8;
  s.numjobs = 1;
  return s;
}

Results mixed_run() {
  Results r;
  r.started_at = "2026-11-30T22:00:00Z";
  r.runtime_s = 5.4;  // five whole seconds and a partial one
  JobResult j;
  j.runtime_s = 5.4;
  for (uint64_t i = 0; i < 20000; ++i) {
    uint64_t ns = 20000 + (i % 100) * 1000;  // 20..119 us
    if (i % 1000 == 0) ns = 3000000;         // a 3 ms tail
    DirectionStats& d = i % 2 ? j.write : j.read;
    d.ios++;
    d.bytes += 4096;
    d.clat.record(ns);
    d.lat.record(ns + 1500);
    d.slat.record(1500);
  }
  j.read.ios_per_second = {1800, 2000, 2100, 1900, 2000, 200};
  j.write.ios_per_second = {1700, 2050, 2000, 2000, 2050, 200};
  r.jobs.push_back(j);
  r.aggregate();
  r.notes.push_back("loop7 has no completion interrupt: <running unpinned>");
  return r;
}

RunReport report(const Results& r) {
  RunReport rep = report_of(r, mixed_spec(), "/dev/loop7");
  rep.preflight = "safe";
  rep.tuning.push_back({"/sys/block/loop7/queue/rq_affinity", "1", "2"});
  return rep;
}

}  // namespace

TEST_CASE("the HTML report is one self-contained page", "[html]") {
  std::string html = render_html(report(mixed_run()));
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK_THAT(html, Contains("</html>"));
  CHECK_THAT(html, !Contains("<script") && !Contains("src=") && !Contains("href=") && !Contains("@import") &&
                       !Contains("url("));
  // The only URL is the SVG namespace, which names and never fetches.
  std::string no_ns = std::regex_replace(html, std::regex("xmlns=\"http://www.w3.org/2000/svg\""), "");
  CHECK_THAT(no_ns, !Contains("http://") && !Contains("https://"));
  CHECK_THAT(html, Contains("Content-Security-Policy") && Contains("default-src 'none'"));
}

TEST_CASE("the timelines plot every whole second of both directions", "[html]") {
  Results r = mixed_run();
  std::string html = render_html(report(r));
  REQUIRE_THAT(html, Contains("id=\"iops-timeline\"") && Contains("id=\"bw-timeline\""));
  // 5 whole seconds per direction on each of the two timelines; the partial sixth is left out.
  CHECK(count(html, "class=\"point\" data-series=\"read\"") == 10);
  CHECK(count(html, "class=\"point\" data-series=\"write\"") == 10);
  CHECK_THAT(html, Contains("data-series=\"read\" data-second=\"3\" data-value=\"2100.000\""));
  CHECK_THAT(html, Contains("data-series=\"write\" data-second=\"5\" data-value=\"2050.000\""));
  CHECK_THAT(html, !Contains("data-second=\"6\""));
  // Bandwidth in MiB/s: 2000 x 4 KiB = 7.8125 MiB/s.
  CHECK_THAT(html, Contains("data-series=\"read\" data-second=\"2\" data-value=\"7.812\""));
  CHECK(count(html, "<path class=\"series\"") == 4);
}

TEST_CASE("a latency CDF and a percentile table per direction", "[html]") {
  Results r = mixed_run();
  std::string html = render_html(report(r));
  REQUIRE_THAT(html, Contains("id=\"cdf-read\"") && Contains("id=\"cdf-write\""));
  size_t nonempty = 0;
  for (size_t i = 0; i < Histogram::kBuckets; ++i) nonempty += r.write.clat.bucket(i) != 0;
  CHECK_THAT(html, Contains("data-buckets=\"" + std::to_string(nonempty) + "\""));
  // Each CDF marks p50, p99 and p99.9 at the histogram's own values.
  CHECK(count(html, "class=\"percentile\"") == 6);
  CHECK_THAT(html, Contains("data-percentile=\"99\" data-ns=\"" +
                            std::to_string(r.write.clat.percentile(99)) + "\""));
  CHECK(count(html, "<table class=\"percentiles\"") == 2);
  CHECK(count(html, "<td>99.99%</td>") == 2);
  CHECK_THAT(html, Contains("3.00 ms"));  // the tail shows in the table
}

TEST_CASE("preflight verdict, tuning and notes are in the page, escaped", "[html]") {
  std::string html = render_html(report(mixed_run()));
  CHECK_THAT(html, Contains("id=\"preflight\" class=\"safe\">safe<"));
  CHECK_THAT(html, Contains("<td>/sys/block/loop7/queue/rq_affinity</td><td>1</td><td>2</td>"));
  CHECK_THAT(html, Contains("&lt;running unpinned&gt;") && Contains("mixed &lt;test&gt;"));
  CHECK_THAT(html, !Contains("<running unpinned>"));
}

TEST_CASE("a run with one direction and no tuning draws only what it has", "[html]") {
  Results r = mixed_run();
  r.read = DirectionStats{};
  r.interrupted = true;
  RunReport rep = report(r);
  rep.tuning.clear();
  std::string html = render_html(rep);
  CHECK_THAT(html, !Contains("id=\"cdf-read\"") && Contains("id=\"cdf-write\""));
  CHECK(count(html, "class=\"point\" data-series=\"read\"") == 0);
  CHECK_THAT(html, Contains("none: the host was left as it was") && Contains("interrupted"));
}

// With --bs 4k,16k the write points were drawn with the read block size: 4x too low.
TEST_CASE("the bandwidth timeline uses each direction's own block size", "[html]") {
  Results r = mixed_run();
  JobSpec s = mixed_spec();
  s.bs_write = 16384;
  SECTION("the engine's block sizes") {
    r.read.bs = 4096;
    r.write.bs = 16384;
  }
  SECTION("none recorded: the spec's, per direction") {
    r.read.bs = r.write.bs = 0;
  }
  std::string html = render_html(report_of(r, s, "/dev/loop7"));
  // 2000 x 4 KiB = 7.8125 MiB/s read; 2050 x 16 KiB = 32.03 MiB/s write.
  CHECK_THAT(html, Contains("data-series=\"read\" data-second=\"2\" data-value=\"7.812\""));
  CHECK_THAT(html, Contains("data-series=\"write\" data-second=\"2\" data-value=\"32.031\""));
  CHECK_THAT(html, Contains("data-series=\"write\" data-second=\"1\" data-value=\"26.562\""));  // 1700 x 16 KiB
}
