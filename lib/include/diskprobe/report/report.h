// Report writers: a fio-like text report, a JSON document and JUnit XML.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "diskprobe/report/run_report.h"

namespace diskprobe {

enum class OutputFormat { Text, Json, Junit };
std::optional<OutputFormat> parse_output_format(std::string_view s);

// fio's layout: "write: IOPS=..., BW=...", slat/clat/lat lines with auto units,
// clat percentiles 1..99.99, bw/iops per-second samples, the latency distribution, cpu,
// disk stats.
std::string render_text(const RunReport& r);
// Every number carries its unit in its name (lat_ns, bw_bytes_per_s).
nlohmann::json to_json(const RunReport& r);
std::string render(const RunReport& r, OutputFormat f);
// JUnit XML for CI: one testsuite per run, a testcase for the preflight and one per
// expectation; a failed expectation is a <failure> with the measured value.
std::string render_junit(const RunReport& r);
// "PASS  iops>=38000: measured 38.2k IOPS; delivered 98.7% of provisioned IOPS (...)"
std::string expectation_line(const ExpectationResult& e);

}  // namespace diskprobe
