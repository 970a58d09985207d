// A curve's report: every step's load and measurement, the knee, why the sweep ended; as
// text, JSON and a self-contained HTML page that draws the curve.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "diskprobe/curve/sweep.h"

namespace diskprobe::curve {

struct CurveReport {
  JobSpec spec;           // the profile the steps vary
  std::string device;     // "/dev/loop3"
  std::string preflight;  // "safe" or the verdict summary
  Options options;
  std::vector<Point> points;  // every step, in the order run
  std::string ended;          // "past the knee", "at --max-iodepth 64", an error
  std::vector<std::string> notes;
};

// The knee as an index into r.points (found on main_series), or nullopt.
std::optional<size_t> knee_of(const CurveReport& r);

std::string render_text(const CurveReport& r);
nlohmann::json to_json(const CurveReport& r);
std::string render_html(const CurveReport& r);

// The progress line of one step: "QD 8: 12.5k IOPS, 48.8 MiB/s, p50 0.61 ms, p99 1.20 ms".
std::string step_line(const Point& p);

}  // namespace diskprobe::curve
