#include <cerrno>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "diskprobe/report/report.h"
#include "diskprobe/report/run_summary.h"

using namespace diskprobe;
using Catch::Matchers::Contains;

namespace {

// The seed's ESSD PL-X latency job (fio 3.12, 30 s randwrite 4k QD1).
JobSpec seed_spec() {
  JobSpec s;
  s.name = "test";
  s.rw = RwMode::RandWrite;
  s.bs = 4096;
  s.iodepth = 1;
  s.numjobs = 1;
  s.runtime_s = 30;
  return s;
}

// What that run measured, rebuilt by hand.
Results seed_like_results() {
  Results r;
  r.started_at = "2022-03-08T16:20:45Z";
  r.runtime_s = 30.001;

  JobResult j;
  j.job = 0;
  j.cpu = 4;
  j.runtime_s = 30.001;
  const uint64_t ios = 1107300;
  j.write.ios = ios;
  j.write.bytes = ios * 4096;
  for (uint64_t i = 0; i < ios; ++i) {
    uint64_t clat = 23000 + (i % 4) * 1000;  // 23..26 us
    if (i % 10000 == 0) clat = 120000;       // a 0.01% tail
    if (i == 5) clat = 4937000;              // one 4.9 ms outlier
    uint64_t slat = 2000 + i % 16;
    j.write.slat.record(slat);
    j.write.clat.record(clat);
    j.write.lat.record(slat + clat);
  }
  // 30 whole seconds and a partial one the report must leave out of min/avg.
  for (int s = 0; s < 30; ++s) j.write.ios_per_second.push_back(s % 2 ? 37000 : 36800);
  j.write.ios_per_second.push_back(10);
  r.jobs.push_back(j);
  r.aggregate();

  r.cpu.user_s = 0.0566 * 30.001;
  r.cpu.sys_s = 0.1051 * 30.001;
  r.cpu.voluntary_ctx = 1107000;
  r.cpu.involuntary_ctx = 304;
  r.disk.valid = true;
  r.disk.read_ios = 51;
  r.disk.write_ios = 1102570;
  r.disk.read_ticks_ms = 3;
  r.disk.write_ticks_ms = 26754;
  r.disk.time_in_queue_ms = 25568;
  r.disk.util_percent = 85.26;
  r.notes.push_back("pinned to CPU 4, which takes vdc's completion interrupt");
  return r;
}

// The report the seed run's measurement went out in.
RunReport report(const Results& r) {
  RunReport rep = report_of(r, seed_spec(), "/dev/vdc");
  rep.preflight = "safe";
  rep.tuning.push_back({"/sys/block/vdc/queue/rq_affinity", "1", "2"});
  return rep;
}

}  // namespace

TEST_CASE("text report has fio's header, IOPS and BW line with fio's units") {
  auto text = render_text(report(seed_like_results()));
  INFO(text);
  CHECK_THAT(text,
             Contains("test: (g=0): rw=randwrite, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) 4096B-4096B, "
                      "ioengine=io_uring, iodepth=1\n"));
  // 1107300 I/Os in 30.001 s: 36.9k IOPS, 144 MiB/s (151 MB/s), 4325 MiB in all.
  CHECK_THAT(text, Contains("  write: IOPS=36.9k, BW=144MiB/s (151MB/s)(4325MiB/30001msec)\n"));
  CHECK_THAT(text, !Contains("  read: "));
}

TEST_CASE("text report latency lines pick fio's units") {
  auto text = render_text(report(seed_like_results()));
  INFO(text);
  // slat varies by a few ns: stays in nsec. clat spans 23 us .. 4.9 ms with stdev > 1 us: usec.
  CHECK_THAT(text, Contains("    slat (nsec): min=2000, max=2015, avg=2007.50, stdev="));
  CHECK_THAT(text, Contains("    clat (usec): min=23, max=4937, avg=24."));
  CHECK_THAT(text, Contains("     lat (usec): min=25, max=4939, avg=26."));
}

TEST_CASE("text report has fio's clat percentile block") {
  auto text = render_text(report(seed_like_results()));
  INFO(text);
  CHECK_THAT(text, Contains("    clat percentiles (usec):\n"
                            "     |  1.00th=[   23],  5.00th=[   23], 10.00th=[   23], 20.00th=[   23],\n"
                            "     | 30.00th=[   24], 40.00th=[   24], 50.00th=[   25], 60.00th=[   25],\n"
                            "     | 70.00th=[   25], 80.00th=[   26], 90.00th=[   26], 95.00th=[   26],\n"
                            "     | 99.00th=[   26], 99.50th=[   26], 99.90th=[   26], 99.95th=[   26],\n"
                            "     | 99.99th=[  121]\n"));
  // 120 us lies in the bucket [119.808, 120.832) us, reported by its midpoint and rounded
  // up to whole microseconds as fio does.
}

TEST_CASE("text report bw and iops lines come from whole seconds only") {
  auto text = render_text(report(seed_like_results()));
  INFO(text);
  // 36800 and 37000 IOPS alternate: 147200 and 148000 KiB/s; the 10-I/O partial second is left out.
  CHECK_THAT(text, Contains("   bw (  KiB/s): min=147200, max=148000, per=99.98%, avg=147600.00, stdev="));
  CHECK_THAT(text, Contains(", samples=30\n"));
  CHECK_THAT(text, Contains("   iops        : min=36800, max=37000, avg=36900.00, stdev="));
}

TEST_CASE("text report has the latency distribution, cpu, group and disk lines") {
  auto text = render_text(report(seed_like_results()));
  INFO(text);
  // lat = slat + clat: 25..28 us -> the "50" (20..50 us) range; the 122 us tail -> "250".
  CHECK_THAT(text, Contains("  lat (usec)   : 50=99.99%, 250=0.01%\n"));
  CHECK_THAT(text, Contains("  lat (msec)   : 10=0.01%\n"));
  CHECK_THAT(text, Contains("  cpu          : usr=5.66%, sys=10.51%, ctx=1107304\n"));
  CHECK_THAT(
      text,
      Contains("Run status group 0 (all jobs):\n"
               "  WRITE: bw=144MiB/s (151MB/s), 144MiB/s-144MiB/s (151MB/s-151MB/s), io=4325MiB (4536MB), "
               "run=30001-30001msec\n"));
  CHECK_THAT(text,
             Contains("Disk stats (read/write):\n"
                      "  vdc: ios=51/1102570, merge=0/0, ticks=3/26754, in_queue=25568, util=85.26%\n"));
  CHECK_THAT(text, Contains("preflight: safe\n"));
  CHECK_THAT(text, Contains("tuning: /sys/block/vdc/queue/rq_affinity 1 -> 2\n"));
  CHECK_THAT(text, Contains("note: pinned to CPU 4"));
  CHECK_THAT(text, !Contains("interrupted"));
  CHECK_THAT(text, !Contains("errors"));
}

TEST_CASE("text report says when a run was interrupted or had errors") {
  auto r = seed_like_results();
  r.interrupted = true;
  r.runtime_s = 12.5;
  r.jobs[0].errors.count = 3;
  r.jobs[0].errors.first_errno = EIO;
  r.jobs[0].errors.first_offset = 8192;
  r.aggregate();
  auto text = render_text(report_of(r, seed_spec(), "/dev/vdc"));
  INFO(text);
  CHECK_THAT(
      text,
      Contains(
          "interrupted: stopped early by a signal; the numbers above cover 12.5 s of the planned 30.0 s"));
  CHECK_THAT(text, Contains("  errors       : count=3, short=0, first=Input/output error at offset 8192\n"));
  CHECK_THAT(text, Contains("err= 5:"));
}

TEST_CASE("text report switches to larger units for big numbers") {
  Results r;
  JobSpec spec;
  spec.rw = RwMode::Read;
  spec.bs = 128 * 1024;
  r.runtime_s = 10;
  JobResult j;
  j.runtime_s = 10;
  j.read.ios = 100000;  // 10000 IOPS of 128 KiB: 1250 MiB/s
  j.read.bytes = j.read.ios * spec.bs;
  for (int i = 0; i < 1000; ++i) {  // 3..4 ms
    j.read.clat.record(3000000 + i * 1000);
    j.read.lat.record(3000000 + i * 1000);
  }
  for (int s = 0; s < 10; ++s) j.read.ios_per_second.push_back(10000);
  r.jobs.push_back(j);
  r.aggregate();
  auto text = render_text(report_of(r, spec, "/dev/vdc"));
  INFO(text);
  CHECK_THAT(text, Contains("  read: IOPS=10.0k, BW=1250MiB/s (1311MB/s)(12.2GiB/10000msec)\n"));
  CHECK_THAT(text, Contains("    clat (usec): min=3000, max=3999, avg=3499.50, stdev="));
  CHECK_THAT(
      text,
      Contains("   bw (  MiB/s): min= 1250, max= 1250, per=100.00%, avg=1250.00, stdev= 0.00, samples=10\n"));
  CHECK_THAT(text, Contains("  lat (msec)   : 4=100.00%\n"));
  CHECK_THAT(text, Contains("   READ: bw=1250MiB/s (1311MB/s)"));
}

TEST_CASE("json report carries every field with its unit") {
  auto r = seed_like_results();
  auto j = to_json(report(r));
  CHECK(j["schema_version"] == 1);
  CHECK(j["job"]["rw"] == "randwrite");
  CHECK(j["job"]["bs_bytes"] == 4096);
  CHECK(j["job"]["iodepth"] == 1);
  CHECK(j["job"]["numjobs"] == 1);
  CHECK(j["job"]["runtime_s"] == 30.0);
  CHECK(j["device"] == "/dev/vdc");
  CHECK(j["started_at"] == "2022-03-08T16:20:45Z");
  CHECK(j["runtime_s"] == 30.001);
  CHECK(j["interrupted"] == false);

  const auto& w = j["write"];
  CHECK(w["ios"] == 1107300);
  CHECK(w["bytes"] == 1107300ull * 4096);
  CHECK(w["iops"].get<double>() == Approx(1107300 / 30.001));
  CHECK(w["bw_bytes_per_s"].get<double>() == Approx(1107300.0 * 4096 / 30.001));
  CHECK(w["clat_ns"]["min"] == 23000);
  CHECK(w["clat_ns"]["max"] == 4937000);
  CHECK(w["clat_ns"]["samples"] == 1107300);
  CHECK(w["clat_ns"]["percentiles"]["50.00"].get<uint64_t>() == r.write.clat.percentile(50));
  CHECK(w["clat_ns"]["percentiles"]["99.99"].get<uint64_t>() <= 4937000);
  CHECK(w["clat_ns"]["percentiles"].size() == 17);
  CHECK(w["slat_ns"]["mean"].get<double>() == Approx(2007.5));
  CHECK(w["lat_ns"]["stdev"].get<double>() > 0);
  CHECK(w["iops_samples"].size() == 30);  // whole seconds only, as in the text
  CHECK(w["iops_samples"][0] == 36800);
  CHECK(j["read"]["ios"] == 0);

  CHECK(j["errors"]["count"] == 0);
  CHECK(j["cpu"]["user_s"].get<double>() == Approx(0.0566 * 30.001));
  CHECK(j["cpu"]["usr_percent"].get<double>() == Approx(5.66));
  CHECK(j["disk"]["write_ios"] == 1102570);
  CHECK(j["disk"]["util_percent"] == 85.26);
  CHECK(j["preflight"] == "safe");
  REQUIRE(j["tuning"].size() == 1);
  CHECK(j["tuning"][0]["what"] == "/sys/block/vdc/queue/rq_affinity");
  CHECK(j["tuning"][0]["old_value"] == "1");
  CHECK(j["tuning"][0]["new_value"] == "2");
  CHECK(j["notes"].size() == 1);
  REQUIRE(j["jobs"].size() == 1);
  CHECK(j["jobs"][0]["job"] == 0);
  CHECK(j["jobs"][0]["cpu"] == 4);
  CHECK(j["jobs"][0]["write"]["ios"] == 1107300);
  CHECK(j["jobs"][0]["write"]["lat_ns_mean"].get<double>() == Approx(r.write.lat.mean()));
}

TEST_CASE("json disk is null when the disk counters were not read") {
  auto r = seed_like_results();
  r.disk.valid = false;
  CHECK(to_json(report_of(r, seed_spec(), "/dev/vdc"))["disk"].is_null());
}

TEST_CASE("render picks the format and parse_output_format knows text, json and junit") {
  auto r = seed_like_results();
  CHECK(parse_output_format("text") == OutputFormat::Text);
  CHECK(parse_output_format("json") == OutputFormat::Json);
  CHECK(parse_output_format("junit") == OutputFormat::Junit);
  CHECK_FALSE(parse_output_format("xml").has_value());
  CHECK_FALSE(parse_output_format("").has_value());
  CHECK(render(report_of(r, seed_spec(), "/dev/vdc"), OutputFormat::Text) == render_text(report_of(r, seed_spec(), "/dev/vdc")));
  auto doc = nlohmann::json::parse(render(report_of(r, seed_spec(), "/dev/vdc"), OutputFormat::Json));
  CHECK(doc["write"]["ios"] == 1107300);
}

// compare and aggregate read the report back through run_summary; the keys are named once
// (report_keys.h), and this is what would catch a writer and a reader that drifted apart.
TEST_CASE("the JSON report reads back through run_summary with the figures it wrote", "[report][compare]") {
  Results r = seed_like_results();
  r.interrupted = true;
  ExpectationResult e;
  e.expectation.text = "write.iops>=30000";
  e.measured = 36900;
  e.met = true;
  RunReport rep = report(r);
  rep.spec.name = "essd-plx-latency";
  rep.expectations.push_back(e);
  nlohmann::json j = to_json(rep);
  auto s = summarize_run(j, "r.json");
  INFO((s ? "" : s.error()));
  REQUIRE(s);
  CHECK(s->device == "/dev/vdc");
  CHECK(s->profile == "essd-plx-latency");
  CHECK(s->started_at == "2022-03-08T16:20:45Z");
  CHECK(s->runtime_s == Approx(30.001));
  CHECK(s->interrupted);
  CHECK_FALSE(s->read.present);
  REQUIRE(s->write.present);
  CHECK(s->write.ios == Approx(1107300));
  CHECK(s->write.iops == Approx(j["write"]["iops"].get<double>()));
  CHECK(s->write.bw_bytes_per_s == Approx(j["write"]["bw_bytes_per_s"].get<double>()));
  CHECK(s->write.lat_mean_ns == Approx(r.write.clat.mean()));
  CHECK(s->write.lat_p99_ns == Approx(static_cast<double>(r.write.clat.percentile(99))));
  CHECK_FALSE(s->write.percentiles.empty());
  CHECK(s->preflight == "safe");
  REQUIRE(s->expectations.size() == 1);
  CHECK(s->expectations[0].what == "write.iops>=30000");
  CHECK(s->expectations[0].met);
}

namespace {

// Two jobs of 4 KiB I/O for 10 whole seconds each; the first does `ios_a` per second, the
// second `ios_b`, in the direction `dir`.
Results two_jobs(uint64_t ios_a, uint64_t ios_b, bool write) {
  Results r;
  r.started_at = "2026-12-01T10:00:00Z";
  r.runtime_s = 10;
  for (uint64_t per_s : {ios_a, ios_b}) {
    JobResult j;
    j.job = static_cast<unsigned>(r.jobs.size());
    j.runtime_s = 10;
    DirectionStats& d = write ? j.write : j.read;
    d.bs = 4096;
    d.ios = per_s * 10;
    d.bytes = d.ios * 4096;
    for (uint64_t i = 0; i < 100; ++i) {
      d.clat.record(50000);
      d.lat.record(52000);
    }
    d.ios_per_second.assign(10, per_s);
    r.jobs.push_back(j);
  }
  r.aggregate();
  return r;
}

JobSpec jobs_spec(RwMode rw) {
  JobSpec s;
  s.name = "jobs";
  s.rw = rw;
  s.numjobs = 2;
  s.group_reporting = false;
  return s;
}

// The "   bw (...): ..., per=NN.NN%" figures of a text report, in order.
std::vector<std::string> per_figures(const std::string& text) {
  std::vector<std::string> out;
  for (size_t at = text.find("per="); at != std::string::npos; at = text.find("per=", at + 4)) {
    out.push_back(text.substr(at + 4, text.find(',', at) - at - 4));
  }
  return out;
}

}  // namespace

// It was 100% on every job: each job's mean was divided by that job's own bandwidth. fio
// divides by the group's (two jobs at 1 and 3 GiB of 4 GiB: per=25.00% and per=75.00%).
TEST_CASE("per-job per= is the job's share of the group's bandwidth", "[report]") {
  auto text = render_text(report_of(two_jobs(1000, 3000, true), jobs_spec(RwMode::RandWrite), "/dev/loop7"));
  INFO(text);
  // job 0, job 1, then the group's own block.
  CHECK(per_figures(text) == std::vector<std::string>{"25.00%", "75.00%", "100.00%"});
  CHECK_THAT(text, Contains("jobs: (groupid=0, job=1)") && Contains("all jobs:\n"));
}

TEST_CASE("per-job per= of reads and of two equal jobs; group_reporting shows the group alone", "[report]") {
  SECTION("reads: the read group's bandwidth") {
    auto text = render_text(report_of(two_jobs(3000, 1000, false), jobs_spec(RwMode::RandRead), "/dev/loop7"));
    INFO(text);
    CHECK(per_figures(text) == std::vector<std::string>{"75.00%", "25.00%", "100.00%"});
  }
  SECTION("two equal jobs: half each") {
    auto text = render_text(report_of(two_jobs(2000, 2000, true), jobs_spec(RwMode::RandWrite), "/dev/loop7"));
    INFO(text);
    CHECK(per_figures(text) == std::vector<std::string>{"50.00%", "50.00%", "100.00%"});
  }
  SECTION("group_reporting: one block, 100%") {
    JobSpec s = jobs_spec(RwMode::RandWrite);
    s.group_reporting = true;
    auto text = render_text(report_of(two_jobs(1000, 3000, true), s, "/dev/loop7"));
    INFO(text);
    CHECK(per_figures(text) == std::vector<std::string>{"100.00%"});
  }
}

namespace {

// Completion latency 40 us, submission 20 us: total latency 60 us, in another of fio's ranges.
Results slow_submission(uint64_t ios) {
  Results r;
  r.started_at = "2026-12-01T10:00:00Z";
  r.runtime_s = 10;
  JobResult j;
  j.runtime_s = 10;
  j.write.bs = 4096;
  j.write.ios = ios;
  j.write.bytes = ios * 4096;
  for (uint64_t i = 0; i < ios; ++i) {
    j.write.slat.record(20000);
    j.write.clat.record(40000);
    j.write.lat.record(60000);
  }
  r.jobs.push_back(j);
  r.aggregate();
  return r;
}

}  // namespace

// It was binned by total latency (slat + clat): fio bins the time from issue to completion,
// clat (io_u_mark_latency in account_io_completion).
TEST_CASE("the latency distribution bins completion latency not total latency", "[report]") {
  RunReport rep = report_of(slow_submission(1000), seed_spec(), "/dev/vdc");
  auto text = render_text(rep);
  INFO(text);
  CHECK_THAT(text, Contains("  lat (usec)   : 50=100.00%\n"));
  CHECK_THAT(text, !Contains("100=100.00%"));
  auto j = to_json(rep);
  CHECK(j["latency_distribution"]["latency_us"]["50"].get<double>() == Approx(100.0));
  CHECK(j["latency_distribution"]["latency_us"]["100"].get<double>() == 0.0);
}

TEST_CASE("the latency distribution merges reads' and writes' completion latency", "[report]") {
  Results r = slow_submission(300);
  JobResult& j = r.jobs[0];
  j.read.ios = 100;
  j.read.bytes = 100 * 4096;
  for (int i = 0; i < 100; ++i) {
    j.read.clat.record(3000000);  // 3 ms
    j.read.lat.record(3001000);
  }
  r.aggregate();
  RunReport rep = report_of(r, seed_spec(), "/dev/vdc");
  auto text = render_text(rep);
  INFO(text);
  CHECK_THAT(text, Contains("  lat (usec)   : 50=75.00%\n"));
  CHECK_THAT(text, Contains("  lat (msec)   : 4=25.00%\n"));
  auto d = to_json(rep)["latency_distribution"];
  CHECK(d["latency_us"]["50"].get<double>() == Approx(75.0));
  CHECK(d["latency_ms"]["4"].get<double>() == Approx(25.0));
}

// diskprobe's own JSON keeps each range's exact share: a JSON number shows 0.0001 as it is,
// so fio's 0.01 floor (there for "%3.2f" text) would only make the shares add up past 100.
TEST_CASE("the JSON latency distribution keeps a rare range's exact share and adds up to 100", "[report]") {
  Results r = slow_submission(99999);
  r.jobs[0].write.clat.record(5000000);  // one 5 ms completion in 100,000
  r.jobs[0].write.ios += 1;
  r.aggregate();
  RunReport rep = report_of(r, seed_spec(), "/dev/vdc");
  CHECK_THAT(render_text(rep), Contains("  lat (msec)   : 10=0.01%\n"));  // the text floors, as fio's
  auto d = to_json(rep)["latency_distribution"];
  CHECK(d["latency_ms"]["10"].get<double>() == Approx(0.001));
  double total = 0;
  for (const char* g : {"latency_ns", "latency_us", "latency_ms"}) {
    for (const auto& [k, v] : d[g].items()) total += v.get<double>();
  }
  CHECK(total == Approx(100.0));
  // No I/O at all: every range 0.
  auto none = to_json(report_of(Results{}, seed_spec(), "/dev/vdc"))["latency_distribution"];
  CHECK(none["latency_us"]["50"] == 0.0);
}

// aggregate read every report as carrying expectations: to_json always writes the array,
// so has_expectations only looked at whether the key was an array.
TEST_CASE("a report without expectations reads back as having none", "[report][compare]") {
  RunReport rep = report(seed_like_results());
  auto none = summarize_run(to_json(rep), "none.json");
  REQUIRE(none);
  CHECK_FALSE(none->has_expectations);
  CHECK(none->expectations.empty());

  ExpectationResult e;
  e.expectation.text = "write.iops>=30000";
  e.met = true;
  rep.expectations.push_back(e);
  auto one = summarize_run(to_json(rep), "one.json");
  REQUIRE(one);
  CHECK(one->has_expectations);
  CHECK(one->expectations.size() == 1);
}

TEST_CASE("json disk says the time its counts and util span", "[report]") {
  auto r = seed_like_results();
  r.disk.span_s = 31.5;  // 30.001 s measured, the rest before and after it
  auto j = to_json(report_of(r, seed_spec(), "/dev/vdc"));
  CHECK(j["disk"]["span_s"] == 31.5);
  CHECK(j["runtime_s"] == 30.001);
}
