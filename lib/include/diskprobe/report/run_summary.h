// RunSummary: the numbers `compare` and `aggregate` read back from a JSON run report.
// Every key of the report they use is named in lib/run_summary.cpp and nowhere else, so a
// renamed key is a one-line change there; a missing optional key leaves its field unset.
#pragma once

#include <cmath>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "diskprobe/base/status.h"

namespace diskprobe {

constexpr double kUnset = NAN;  // a number the report did not carry
inline bool is_set(double v) { return !std::isnan(v); }

struct DirectionSummary {
  bool present = false;  // the run did I/O in this direction
  double ios = 0;
  double iops = kUnset;
  double bw_bytes_per_s = kUnset;
  double lat_mean_ns = kUnset;  // completion latency, as fio's clat and the vendors' specs
  double lat_p99_ns = kUnset;
  double lat_p999_ns = kUnset;
  std::vector<std::pair<double, double>> percentiles;  // (percent, ns), ascending
};

struct ExpectationOutcome {
  std::string what;  // "write.iops >= 10000"
  bool met = false;
  std::string detail;  // the measured value or the reason, when the report says
};

struct RunSummary {
  std::string origin;  // the file it was read from
  std::string host;    // "" when the report does not say
  std::string device;  // "/dev/vdc"
  std::string volume;  // serial or other stable id of the volume when known, else device
  std::string profile;
  std::string started_at;
  double runtime_s = kUnset;
  bool interrupted = false;
  DirectionSummary read, write;
  bool has_expectations = false;
  std::vector<ExpectationOutcome> expectations;
  std::string preflight;

  bool expectations_failed() const;
  // "host:/dev/vdc", or the device, or the file name.
  std::string label() const;
};

Result<RunSummary> summarize_run(const nlohmann::json& report, const std::string& origin);
// Parses a JSON run report read from `origin`; errors name it and what to do.
Result<RunSummary> parse_run_summary(std::string_view text, const std::string& origin);
// Reads and parses a JSON run report; errors name the file and what to do.
Result<RunSummary> load_run_summary(const std::string& path);

}  // namespace diskprobe
