// Report writers: a fio-like text report, a JSON document and JUnit XML.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "diskprobe/report/run_report.h"

namespace diskprobe {

enum class OutputFormat { Text, Json, Junit, FioJson, FioJsonPlus, OpenMetrics };
std::optional<OutputFormat> parse_output_format(std::string_view s);

// fio's layout: "write: IOPS=..., BW=...", slat/clat/lat lines with auto units,
// clat percentiles 1..99.99, bw/iops per-second samples, the latency distribution, cpu,
// disk stats.
std::string render_text(const RunReport& r);
// Several reports as fio prints one job file: every job's section in order, then each group's
// "Run status group" over all its jobs (RunReport::groupid), the disk's counters summed
// (merged_disk_stats), and diskprobe's preflight, tuning and notes once.
std::string render_fio_text(const std::vector<const RunReport*>& runs);
// The counters of the reports that have them, summed; util weighted by the time each spans.
DiskStats merged_disk_stats(const std::vector<const RunReport*>& runs);
// fio's verify read-back: the reads of `readback` (a read of what `writer` wrote, run after it)
// become the writer's own, job by job, each direction over its own time; its checks join the
// writer's verify pass, its runtime and the device's counters the writer's.
void fold_readback(RunReport& writer, const RunReport& readback);
// fio's group_reporting over different jobs run at once: `other`'s jobs summed into `first`'s
// entry (fio's: named after the group's first job, jobs= every clone of every job in it, its
// options the first job's, the longest runtime); first's disk counters kept (one device).
void fold_group(RunReport& first, const RunReport& other);
// The entries fio reports for these jobs' reports, in order: with group_reporting, each group's
// jobs folded into its first one's (fold_group); every other report its own.
std::vector<const RunReport*> fio_entries(const std::vector<RunReport*>& reports);
// Every number carries its unit in its name (lat_ns, bw_bytes_per_s).
nlohmann::json to_json(const RunReport& r);
std::string render(const RunReport& r, OutputFormat f);
// JUnit XML for CI: one testsuite per run, a testcase for the preflight and one per
// expectation; a failed expectation is a <failure> with the measured value.
std::string render_junit(const RunReport& r);
// "PASS  iops>=38000: measured 38.2k IOPS; delivered 98.7% of provisioned IOPS (...)"
std::string expectation_line(const ExpectationResult& e);

// steadystate's verdict in one line, or "" when the run asked for none: "steady state: attained
// after 23 s (iops_slope 0.08% < 0.1% over 10 s)", "not steady: ..." (text and HTML reports).
std::string steadystate_line(const RunReport& r);
// The JSON report's "steadystate" object (null when none was asked for).
nlohmann::json steadystate_json(const RunReport& r);

// Shared with the fio-json and openmetrics writers, so every format gives the same figures.
// The clat percentiles a report lists: the profile's percentile_list, or fio's default.
std::vector<double> report_percentiles(const JobSpec& s);
// fio's latency_ns / latency_us / latency_ms maps of a completion-latency histogram, as fio
// writes them: a nonzero share below 0.01% is 0.01 (diskprobe's own JSON keeps it exact).
nlohmann::json fio_latency_distribution_json(const Histogram& clat);
// Reads' and writes' completion latency in one histogram: what fio's distribution bins.
Histogram completion_latency(const DirectionStats& read, const DirectionStats& write);
// Completions in each whole second of the run.
std::vector<uint64_t> whole_second_ios(const DirectionStats& d, double runtime_s);
// {"min", "max", "mean", "stdev", "samples"} of per-second samples.
nlohmann::json sample_stats_json(const std::vector<double>& v);
// Results::started_at as seconds since the Unix epoch (whole seconds); nullopt when unparsable.
std::optional<int64_t> started_unix_seconds(const Results& r);

}  // namespace diskprobe
