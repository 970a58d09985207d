// Two runs side by side: IOPS, bandwidth and latency per direction, the change from A to B,
// and whether B regressed beyond a tolerance (for a CI job watching a volume type).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "diskprobe/base/status.h"
#include "diskprobe/report/run_summary.h"

namespace diskprobe {

struct CompareRow {
  std::string direction;  // "read", "write"
  std::string metric;     // "IOPS", "bandwidth", "mean latency", "p99 latency", "p99.9 latency"
  std::string unit;       // "IOPS", "B/s", "ns"
  bool higher_is_better = true;
  double a = kUnset, b = kUnset;
  double change_percent = kUnset;  // (b - a) / a * 100; unset when a or b is missing or a is 0
  double worse_percent = kUnset;   // how much worse B is, > 0 worse, < 0 better
  bool regression = false;         // worse than the tolerance (only with one)
};

struct Comparison {
  std::vector<CompareRow> rows;
  std::optional<double> max_regression_percent;
  bool regressed = false;
};

Comparison compare_runs(const RunSummary& a, const RunSummary& b,
                        std::optional<double> max_regression_percent);
std::string comparison_text(const Comparison& c, const RunSummary& a, const RunSummary& b);
nlohmann::json comparison_json(const Comparison& c, const RunSummary& a, const RunSummary& b);

// Human numbers shared by compare and aggregate: "36.9k", "144.2 MiB/s", "25.3 us".
std::string format_iops(double v);
std::string format_bandwidth(double bytes_per_s);
std::string format_latency(double ns);

}  // namespace diskprobe
