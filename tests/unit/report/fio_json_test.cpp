// The fio-json writer on Results built here: fio 3.33's keys, JSON types and units.
#include <string>

#include <catch2/catch.hpp>

#include "diskprobe/report/fio_json.h"
#include "diskprobe/report/report.h"

using namespace diskprobe;
using nlohmann::json;

namespace {

// Two jobs of 4k random writes, 2.5 s each: 1000 writes per job at 40/50/60 us clat, 2 us slat.
RunReport two_job_results() {
  Results r;
  JobSpec spec;
  spec.name = "fiojson";
  spec.rw = RwMode::RandWrite;
  spec.bs = 4096;
  spec.iodepth = 8;
  spec.numjobs = 2;
  spec.runtime_s = 2.5;
  r.started_at = "2026-12-01T15:48:41Z";
  r.runtime_s = 2.5;
  for (unsigned n = 0; n < 2; ++n) {
    JobResult j;
    j.job = n;
    j.runtime_s = 2.5;
    j.write.bs = 4096;
    j.write.ios = 1000;
    j.write.bytes = 1000 * 4096;
    for (uint64_t i = 0; i < 1000; ++i) {
      uint64_t clat = 40000 + (i % 3) * 10000;
      j.write.slat.record(2000);
      j.write.clat.record(clat);
      j.write.lat.record(2000 + clat);
    }
    j.write.ios_per_second = {300, 500, 200};  // the third second is partial: left out
    j.errors.short_write.count = n;            // job 1 had one short write
    r.jobs.push_back(j);
  }
  r.aggregate();
  r.cpu.user_s = 0.5;
  r.cpu.sys_s = 1.0;
  r.cpu.voluntary_ctx = 900;
  r.cpu.involuntary_ctx = 100;
  r.disk.valid = true;
  r.disk.write_ios = 1990;
  r.disk.write_merges = 3;
  r.disk.write_ticks_ms = 95;
  r.disk.time_in_queue_ms = 90;
  r.disk.util_percent = 88.5;
  RunReport rep = report_of(std::move(r), spec, "/dev/loop7");
  rep.preflight = "safe";
  rep.tuning.push_back({"/sys/block/loop7/queue/rq_affinity", "1", "2"});
  rep.environment.diskprobe_version = "0.1.0";
  rep.environment.kernel = "6.1.0";
  ExpectationResult e;
  e.met = true;
  e.measured = 0;
  rep.expectations.push_back(e);
  return rep;
}

const char* type_of(const json& j) { return j.type_name(); }

}  // namespace

TEST_CASE("fio-json has fio's top-level keys and keeps diskprobe's facts under one key", "[fio_json]") {
  RunReport r = two_job_results();
  json j = to_fio_json(r, false);
  CHECK(j["fio version"] == "fio-3.33");
  // The run's end: 15:48:41 plus 2.5 s.
  CHECK(j["timestamp"] == 1796140123);
  CHECK(j["timestamp_ms"] == 1796140123500);
  CHECK(j["time"] == "Tue Dec  1 15:48:43 2026");
  CHECK(j["global options"]["bs"] == "4k");
  CHECK(j["global options"]["iodepth"] == "8");
  CHECK(j["global options"]["filename"] == "/dev/loop7");
  REQUIRE(j["jobs"].size() == 1);  // group_reporting: one entry for both jobs
  for (const char* k : {"fio version", "timestamp", "timestamp_ms", "time", "global options", "jobs",
                        "disk_util", "diskprobe"}) {
    CHECK(j.contains(k));
  }
  CHECK(j.size() == 8);  // nothing else at the top: fio's readers see only fio's keys and "diskprobe"
  const json& own = j["diskprobe"];
  CHECK(own["preflight"] == "safe");
  CHECK(own["tuning"][0]["new_value"] == "2");
  CHECK(own["environment"]["kernel"] == "6.1.0");
  CHECK(own["expectations_met"] == true);
  CHECK(own["device"] == "/dev/loop7");
}

TEST_CASE("fio-json directions carry fio's units: ms runtime, KiB/s bw, iops from ios and runtime",
          "[fio_json]") {
  json job = to_fio_json(two_job_results(), false)["jobs"][0];
  const json& w = job["write"];
  CHECK(w["total_ios"] == 2000);
  CHECK(w["io_bytes"] == 2000 * 4096);
  CHECK(w["io_kbytes"] == 8000);
  CHECK(w["runtime"] == 2500);
  CHECK(w["bw_bytes"] == 2000ull * 4096 * 1000 / 2500);
  CHECK(w["bw"] == (2000ull * 4096 * 1000 / 2500) >> 10);
  CHECK(w["iops"].get<double>() == Approx(800.0));
  CHECK(w["iops"].is_number_float());
  CHECK(w["bw"].is_number_integer());
  CHECK(w["short_ios"] == 1);
  CHECK(w["drop_ios"] == 0);
  CHECK(w["slat_ns"]["min"] == 2000);
  CHECK(w["slat_ns"]["N"] == 2000);
  CHECK(w["clat_ns"]["max"] == 60000);
  CHECK(w["lat_ns"]["mean"].get<double>() == Approx(52000).epsilon(0.01));
  CHECK(w["lat_ns"]["mean"].is_number_float());
  CHECK(w["lat_ns"]["stddev"].is_number_float());
  // group_reporting: fio's job_runtime is its jobs' runtimes summed (two of 2.5 s), each
  // direction's runtime the longest job's.
  CHECK(job["job_runtime"] == 5000);
  CHECK(job["elapsed"] == 3);
  CHECK(job["error"] == 0);
  CHECK(job["jobname"] == "fiojson");
  CHECK(job["groupid"] == 0);
}

TEST_CASE("fio-json bw and iops samples come from whole seconds, bw in KiB/s", "[fio_json]") {
  json w = to_fio_json(two_job_results(), false)["jobs"][0]["write"];
  // Both jobs summed per second: 600 and 1000 I/Os; the partial third second is left out.
  CHECK(w["iops_samples"] == 2);
  CHECK(w["iops_min"] == 600);
  CHECK(w["iops_max"] == 1000);
  CHECK(w["iops_mean"].get<double>() == Approx(800));
  CHECK(w["iops_stddev"].get<double>() == Approx(282.8427).epsilon(1e-4));
  CHECK(w["bw_samples"] == 2);
  CHECK(w["bw_min"] == 600 * 4);  // 600 4 KiB writes a second
  CHECK(w["bw_max"] == 1000 * 4);
  CHECK(w["bw_mean"].get<double>() == Approx(3200));
  CHECK(w["bw_dev"].is_number_float());
  CHECK(w["bw_min"].is_number_integer());
  // The group's mean over its bandwidth (3200 / 3200 KiB/s): 100%, never more.
  CHECK(w["bw_agg"].get<double>() == Approx(100.0));
}

TEST_CASE("fio-json clat percentiles are keyed like fio's, with fio's default list or the profile's",
          "[fio_json]") {
  RunReport r = two_job_results();
  json p = to_fio_json(r, false)["jobs"][0]["write"]["clat_ns"]["percentile"];
  for (const char* k : {"1.000000", "5.000000", "10.000000", "20.000000", "30.000000", "40.000000",
                        "50.000000", "60.000000", "70.000000", "80.000000", "90.000000", "95.000000",
                        "99.000000", "99.500000", "99.900000", "99.950000", "99.990000"}) {
    CHECK(p.contains(k));
  }
  CHECK(p.size() == 17);
  CHECK(p["50.000000"] == r.results.write.clat.percentile(50));
  CHECK(p["99.000000"].is_number_integer());

  r.spec.percentiles = {50, 99.9, 99.999};
  p = to_fio_json(r, false)["jobs"][0]["write"]["clat_ns"]["percentile"];
  CHECK(p.size() == 3);
  CHECK(p["99.999000"] == r.results.write.clat.percentile(99.999));
  // fio lists percentiles for clat only, and only where there were samples.
  json j = to_fio_json(r, false)["jobs"][0];
  CHECK_FALSE(j["write"]["slat_ns"].contains("percentile"));
  CHECK_FALSE(j["write"]["lat_ns"].contains("percentile"));
  CHECK_FALSE(j["read"]["clat_ns"].contains("percentile"));
}

TEST_CASE("fio-json+ bins are keyed by fio's own bucket values and sum to N", "[fio_json]") {
  RunReport r = two_job_results();
  CHECK_FALSE(to_fio_json(r, false)["jobs"][0]["write"]["clat_ns"].contains("bins"));
  json bins = to_fio_json(r, true)["jobs"][0]["write"]["clat_ns"]["bins"];
  uint64_t n = 0;
  for (auto& [k, v] : bins.items()) n += v.get<uint64_t>();
  CHECK(n == 2000);
  CHECK(bins.size() == 3);
  CHECK_FALSE(to_fio_json(r, true)["jobs"][0]["write"]["slat_ns"].contains("bins"));

  // Values fio 3.33 itself wrote: 19068 ns went to its bin "19072", a p1 of 54016 is a bin
  // value too, and below 128 ns every value is its own bin.
  Results one;
  JobSpec one_spec;
  one_spec.name = "bins";
  one.runtime_s = 1;
  one.write.ios = 3;
  for (uint64_t ns : {19068u, 54000u, 100u}) one.write.clat.record(ns);
  json b = to_fio_json(report_of(one, one_spec, "/dev/loop7"), true)["jobs"][0]["write"]["clat_ns"]["bins"];
  CHECK(b == json{{"19072", 1}, {"54016", 1}, {"100", 1}});
}

TEST_CASE("fio-json lists each job on its own without group_reporting; unmeasured figures are 0",
          "[fio_json]") {
  RunReport r = two_job_results();
  r.spec.group_reporting = false;
  json j = to_fio_json(r, false);
  REQUIRE(j["jobs"].size() == 2);
  const json& job1 = j["jobs"][1];
  CHECK(job1["write"]["total_ios"] == 1000);
  CHECK(job1["write"]["short_ios"] == 1);
  CHECK(job1["write"]["iops"].get<double>() == Approx(400));
  // bw_agg: a job's share of the group's bandwidth.
  CHECK(job1["write"]["bw_agg"].get<double>() == Approx(50.0));
  // CPU time is measured for the whole process only: a job alone has none, as fio writes it.
  CHECK(job1["usr_cpu"] == 0.0);
  CHECK(job1["ctx"] == 0);
  json grouped = to_fio_json(two_job_results(), false)["jobs"][0];
  CHECK(grouped["ctx"] == 1000);
  CHECK(grouped["usr_cpu"].get<double>() == Approx(10.0));  // 0.5 s of 2 jobs x 2.5 s
  CHECK(grouped["sys_cpu"].get<double>() == Approx(20.0));
  for (const char* k : {"majf", "minf", "latency_target", "latency_window"}) CHECK(grouped[k] == 0);
  for (const char* k : {"iodepth_level", "iodepth_submit", "iodepth_complete"}) {
    CHECK(grouped[k].size() == 7);
    for (auto& [key, v] : grouped[k].items()) CHECK(v == 0.0);
  }
  CHECK(grouped["iodepth_level"].contains(">=64"));
  CHECK(grouped["latency_depth"] == 8);
  CHECK(grouped["latency_percentile"] == 100.0);
  CHECK(grouped["trim"]["total_ios"] == 0);
  CHECK(grouped["trim"]["iops"].is_number_float());
  CHECK(grouped["sync"]["lat_ns"]["N"] == 0);
}

TEST_CASE("fio-json latency maps and disk_util are fio's", "[fio_json]") {
  RunReport r = two_job_results();
  json j = to_fio_json(r, false);
  const json& job = j["jobs"][0];
  // Completion latency 40, 50 and 60 us. 50 us is on an edge, which the histogram resolves to
  // its bucket's midpoint (49.92 us, histogram.h): two thirds in [20, 50) us, a third in [50, 100).
  CHECK(job["latency_us"]["50"].get<double>() == Approx(200.0 / 3).epsilon(0.01));
  CHECK(job["latency_us"]["100"].get<double>() == Approx(100.0 / 3).epsilon(0.01));
  CHECK(job["latency_ns"].size() == 10);
  CHECK(job["latency_ms"].contains(">=2000"));
  REQUIRE(j["disk_util"].size() == 1);
  const json& d = j["disk_util"][0];
  CHECK(d["name"] == "loop7");
  CHECK(d["write_ios"] == 1990);
  CHECK(d["write_merges"] == 3);
  CHECK(d["write_ticks"] == 95);
  CHECK(d["in_queue"] == 90);
  CHECK(d["util"] == 88.5);
  CHECK(std::string(type_of(d["util"])) == "number");
  r.results.disk.valid = false;
  CHECK(to_fio_json(r, false)["disk_util"].empty());
}

TEST_CASE("--output-format fio-json and fio-json+ render fio's document", "[fio_json]") {
  CHECK(parse_output_format("fio-json") == OutputFormat::FioJson);
  CHECK(parse_output_format("fio-json+") == OutputFormat::FioJsonPlus);
  CHECK_FALSE(parse_output_format("fio-json++"));
  CHECK_FALSE(parse_output_format("json+"));
  RunReport r = two_job_results();
  json plain = json::parse(render(r, OutputFormat::FioJson));
  json plus = json::parse(render(r, OutputFormat::FioJsonPlus));
  CHECK(plain == to_fio_json(r, false));
  CHECK(plus["jobs"][0]["write"]["clat_ns"].contains("bins"));
}

namespace {

// One job: `ios` writes at 40 us clat and 20 us slat (60 us total latency), then one at 5 ms.
RunReport clat_and_outlier(uint64_t ios) {
  Results r;
  JobSpec spec;
  spec.name = "dist";
  spec.rw = RwMode::RandWrite;
  r.started_at = "2026-12-01T15:48:41Z";
  r.runtime_s = 10;
  JobResult j;
  j.runtime_s = 10;
  j.write.bs = 4096;
  j.write.ios = ios + 1;
  j.write.bytes = j.write.ios * 4096;
  for (uint64_t i = 0; i < ios; ++i) {
    j.write.slat.record(20000);
    j.write.clat.record(40000);
    j.write.lat.record(60000);
  }
  j.write.slat.record(20000);
  j.write.clat.record(5000000);
  j.write.lat.record(5020000);
  r.jobs.push_back(j);
  r.aggregate();
  return report_of(std::move(r), spec, "/dev/loop7");
}

}  // namespace

// fio-json's latency_us/latency_ms were binned by total latency and never floored; fio bins
// clat and, in stat_calc_lat, shows a nonzero share below 0.01% as 0.01.
TEST_CASE("fio-json latency maps bin completion latency and floor a rare range at 0.01", "[fio_json]") {
  json job = to_fio_json(clat_and_outlier(99999), false)["jobs"][0];
  CHECK(job["latency_us"]["50"].get<double>() == Approx(99.999));
  CHECK(job["latency_us"]["100"].get<double>() == 0.0);
  CHECK(job["latency_ms"]["10"].get<double>() == 0.01);  // 1 in 100,000: 0.001%, shown as fio shows it
  CHECK(job["latency_ms"]["20"].get<double>() == 0.0);   // empty ranges stay 0
  // Above the floor a share is exact.
  json few = to_fio_json(clat_and_outlier(99), false)["jobs"][0];
  CHECK(few["latency_ms"]["10"].get<double>() == Approx(1.0));
  CHECK(few["latency_us"]["50"].get<double>() == Approx(99.0));
}

TEST_CASE("fio-json latency maps of jobs listed on their own are each job's clat", "[fio_json]") {
  RunReport r = two_job_results();
  r.spec.group_reporting = false;
  r.results.jobs[1].write.clat = Histogram{};
  for (int i = 0; i < 1000; ++i) r.results.jobs[1].write.clat.record(150000);  // 150 us
  json jobs = to_fio_json(r, false)["jobs"];
  REQUIRE(jobs.size() == 2);
  CHECK(jobs[0]["latency_us"]["250"].get<double>() == 0.0);
  CHECK(jobs[1]["latency_us"]["250"].get<double>() == Approx(100.0));
  CHECK(jobs[1]["latency_us"]["100"].get<double>() == 0.0);
}

// fio's io_u_mark_depth/_submit/_complete buckets and stat_calc_dist's shares.
TEST_CASE("IO depths: fio's buckets, shares of each total, a rare bucket at least 0.1", "[fio_json]") {
  CHECK(DepthStats::level_bucket(1) == 0);
  CHECK(DepthStats::level_bucket(2) == 1);
  CHECK(DepthStats::level_bucket(3) == 1);
  CHECK(DepthStats::level_bucket(4) == 2);
  CHECK(DepthStats::level_bucket(7) == 2);
  CHECK(DepthStats::level_bucket(8) == 3);
  CHECK(DepthStats::level_bucket(16) == 4);
  CHECK(DepthStats::level_bucket(63) == 5);
  CHECK(DepthStats::level_bucket(64) == 6);
  CHECK(DepthStats::level_bucket(4096) == 6);
  CHECK(DepthStats::batch_bucket(0) == 0);
  CHECK(DepthStats::batch_bucket(1) == 1);
  CHECK(DepthStats::batch_bucket(4) == 1);
  CHECK(DepthStats::batch_bucket(5) == 2);
  CHECK(DepthStats::batch_bucket(8) == 2);
  CHECK(DepthStats::batch_bucket(9) == 3);
  CHECK(DepthStats::batch_bucket(16) == 3);
  CHECK(DepthStats::batch_bucket(17) == 4);
  CHECK(DepthStats::batch_bucket(64) == 5);
  CHECK(DepthStats::batch_bucket(65) == 6);

  RunReport r = two_job_results();
  r.spec.io_depths = true;
  // Job 0: a whole queue in its first call, then one I/O a call at depth 16, and one at depth
  // 2; job 1: 2,000 calls of one at 16. Each reap two.
  for (auto& j : r.results.jobs) {
    j.depths = DepthStats{};
    if (j.job == 0) j.depths.submitted(16, 16);
    for (int i = 0; i < (j.job == 0 ? 1984 : 2000); ++i) j.depths.submitted(1, 16);
    if (j.job == 0) j.depths.submitted(1, 2);
    for (int i = 0; i < 1000; ++i) j.depths.reaped(2);
  }
  r.results.aggregate();
  const json job = to_fio_json(r, false)["jobs"][0];
  CHECK(job["iodepth_level"]["16"].get<double>() == Approx(100.0 * 4000 / 4001));
  CHECK(job["iodepth_level"]["2"].get<double>() == Approx(0.1));  // 0.025%: fio shows a rare one as 0.1
  CHECK(job["iodepth_level"]["1"] == 0.0);
  CHECK(job["iodepth_submit"]["4"].get<double>() == Approx(100.0 * 3985 / 3986));
  CHECK(job["iodepth_submit"]["16"].get<double>() == Approx(0.1));
  CHECK(job["iodepth_complete"]["4"] == 100.0);
  const std::string text = render_fio_text({&r});
  INFO(text);
  CHECK(text.find("  IO depths    : 1=0.0%, 2=0.1%, 4=0.0%, 8=0.0%, 16=100.0%, 32=0.0%, >=64=0.0%\n") != std::string::npos);
  CHECK(text.find("     submit    : 0=0.0%, 4=100.0%, 8=0.0%, 16=0.1%, 32=0.0%, 64=0.0%, >=64=0.0%\n") != std::string::npos);
  CHECK(text.find("     complete  : 0=0.0%, 4=100.0%, 8=0.0%,") != std::string::npos);
}
