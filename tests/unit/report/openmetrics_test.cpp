// The openmetrics writer on a RunReport built here: families, labels, units, escapes.
#include <string>

#include <catch2/catch.hpp>

#include "diskprobe/report/openmetrics.h"
#include "diskprobe/report/report.h"

using namespace diskprobe;
using Catch::Matchers::Contains;

namespace {

// 2 s of 4k random reads: 1000 I/Os at 100 us clat, 2 us slat, one expectation met, one not.
RunReport read_run() {
  Results m;
  RunReport rep;
  rep.spec.name = "cloud-randread-iops";
  rep.spec.rw = RwMode::RandRead;
  rep.spec.percentiles = {50, 99};
  rep.device = "/dev/vdc";
  m.runtime_s = 2;
  m.read.ios = 1000;
  m.read.bytes = 1000 * 4096;
  for (int i = 0; i < 1000; ++i) {
    m.read.slat.record(2000);
    m.read.clat.record(100000);
    m.read.lat.record(102000);
  }
  m.errors.count = 3;
  m.errors.short_ios = 1;
  rep.results = std::move(m);
  rep.environment.device_model = "Virtio \"Block\"\\Device";
  rep.environment.device_serial = "bp1abc";
  rep.environment.diskprobe_version = "0.1.0";
  ExpectationResult met;
  met.expectation.text = "errors==0";
  met.expectation.origin = "profile cloud-randread-iops";
  met.met = false;
  ExpectationResult volume;
  volume.expectation.text = "iops>=6460";
  volume.expectation.origin = "--volume essd-pl1:100GiB";
  volume.met = true;
  rep.expectations = {met, volume};
  return rep;
}

const std::string kLabels =
    R"(device="vdc",model="Virtio \"Block\"\\Device",serial="bp1abc",profile="cloud-randread-iops",volume_type="essd-pl1")";

}  // namespace

TEST_CASE("openmetrics gives rates and counts per direction with the run's labels", "[openmetrics]") {
  std::string m = render_openmetrics(read_run());
  CHECK_THAT(m, Contains("# TYPE diskprobe_iops gauge\n"));
  CHECK_THAT(m, Contains("diskprobe_iops{" + kLabels + ",direction=\"read\"} 500\n"));
  CHECK_THAT(m,
             Contains("diskprobe_bandwidth_bytes_per_second{" + kLabels + ",direction=\"read\"} 2048000\n"));
  CHECK_THAT(m, Contains("diskprobe_ios{" + kLabels + ",direction=\"read\"} 1000\n"));
  // A read workload has no write samples.
  CHECK(m.find("direction=\"write\"") == std::string::npos);
  CHECK_THAT(m, Contains("diskprobe_failed_ios{" + kLabels + "} 3\n"));
  CHECK_THAT(m, Contains("diskprobe_short_ios{" + kLabels + "} 1\n"));
  CHECK_THAT(m, Contains("diskprobe_runtime_seconds{" + kLabels + "} 2\n"));
}

TEST_CASE("openmetrics latency is a summary in seconds with the report's percentiles", "[openmetrics]") {
  RunReport r = read_run();
  std::string m = render_openmetrics(r);
  CHECK_THAT(m, Contains("# TYPE diskprobe_completion_latency_seconds summary\n"));
  const std::string l = "{" + kLabels + ",direction=\"read\"";
  char p99[64];
  std::snprintf(p99, sizeof p99, "%.10g", static_cast<double>(r.results.read.clat.percentile(99)) / 1e9);
  CHECK_THAT(m, Contains("diskprobe_completion_latency_seconds" + l + ",quantile=\"0.99\"} " + p99 + "\n"));
  CHECK_THAT(m, Contains("diskprobe_completion_latency_seconds" + l + ",quantile=\"0.5\"} "));
  CHECK_THAT(m, Contains("diskprobe_completion_latency_seconds_sum" + l + "} 0.1\n"));
  CHECK_THAT(m, Contains("diskprobe_completion_latency_seconds_count" + l + "} 1000\n"));
  CHECK_THAT(m, Contains("diskprobe_latency_seconds_sum" + l + "} 0.102\n"));
  CHECK(m.find("quantile=\"0.9\"") == std::string::npos);  // only the profile's list
}

TEST_CASE("openmetrics has each expectation's result and the run's", "[openmetrics]") {
  std::string m = render_openmetrics(read_run());
  CHECK_THAT(m, Contains("diskprobe_expectation_met{" + kLabels +
                         ",expectation=\"errors==0\",origin=\"profile cloud-randread-iops\"} 0\n"));
  CHECK_THAT(m, Contains("diskprobe_expectation_met{" + kLabels +
                         ",expectation=\"iops>=6460\",origin=\"--volume essd-pl1:100GiB\"} 1\n"));
  CHECK_THAT(m, Contains("diskprobe_expectations_met{" + kLabels + "} 0\n"));
  CHECK_THAT(m, Contains("diskprobe_preflight_safe{" + kLabels + "} 1\n"));
  CHECK_THAT(m, Contains("diskprobe_run_info{" + kLabels + ",version=\"0.1.0\",kernel=\"\"} 1\n"));
}

TEST_CASE("openmetrics names each family once, HELP and TYPE before its samples", "[openmetrics]") {
  RunReport r = read_run();
  r.expectations.clear();  // no --volume: volume_type is empty, still there
  std::string m = render_openmetrics(r);
  CHECK_THAT(m, Contains("volume_type=\"\""));
  CHECK_THAT(m, Contains("diskprobe_expectations_met{device=\"vdc\""));
  size_t families = 0;
  for (size_t at = m.find("# TYPE "); at != std::string::npos; at = m.find("# TYPE ", at + 1)) {
    ++families;
    std::string name = m.substr(at + 7, m.find(' ', at + 7) - at - 7);
    CHECK(m.find("# TYPE " + name + " ", at + 1) == std::string::npos);
    CHECK(m.rfind("# HELP " + name + " ", at) != std::string::npos);
  }
  CHECK(families == 13);
  CHECK(m.back() == '\n');
  CHECK(m.find("\n\n") == std::string::npos);
}

TEST_CASE("openmetrics label values are UTF-8 even when a name or path is not", "[openmetrics]") {
  RunReport r = read_run();
  r.spec.name = "job\xff";
  r.device = "/dev/disk/by-id/\xfe\n";
  std::string m = render_openmetrics(r);
  CHECK_THAT(m, Contains("{device=\"\xef\xbf\xbd\\n\",model="));
  CHECK_THAT(m, Contains(",profile=\"job\xef\xbf\xbd\","));
  CHECK(m.find('\xff') == std::string::npos);
}

TEST_CASE("--output-format openmetrics renders the Prometheus text format", "[openmetrics]") {
  CHECK(parse_output_format("openmetrics") == OutputFormat::OpenMetrics);
  CHECK_FALSE(parse_output_format("prometheus"));
  RunReport r = read_run();
  CHECK(render(r, OutputFormat::OpenMetrics) == render_openmetrics(r));
}

TEST_CASE("openmetrics gives the run's start as a gauge in Unix seconds, not a sample timestamp",
          "[openmetrics]") {
  RunReport r = read_run();
  r.results.started_at = "2026-12-01T18:00:00Z";
  std::string m = render_openmetrics(r);
  CHECK_THAT(m, Contains("# TYPE diskprobe_run_timestamp_seconds gauge\n"));
  CHECK_THAT(m, Contains("diskprobe_run_timestamp_seconds{" + kLabels + "} 1796148000\n"));
  // Every sample line is "name{labels} value": nothing after the value.
  CHECK(m.find("} 1796148000 ") == std::string::npos);
}

TEST_CASE("openmetrics leaves the run's start out when started_at is not a time", "[openmetrics]") {
  for (const char* bad : {"", "yesterday", "2026-12-01T18:00:00Z trailing", "2026-12-01"}) {
    RunReport r = read_run();
    r.results.started_at = bad;
    INFO(bad);
    CHECK(render_openmetrics(r).find("diskprobe_run_timestamp_seconds") == std::string::npos);
  }
}
