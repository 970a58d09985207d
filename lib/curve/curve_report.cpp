#include "diskprobe/curve/curve_report.h"

#include <nlohmann/json.hpp>

#include "diskprobe/report/html_parts.h"

namespace diskprobe::curve {

using html::bandwidth;
using html::iops_text;
using html::latency;

std::optional<size_t> knee_of(const CurveReport& r) {
  auto series = main_series(r.points);
  auto k = find_knee(series, r.options.knee);
  if (!k) return std::nullopt;
  // The main series is the tail of points (rate steps come after any queue-depth steps).
  return r.points.size() - series.size() + *k;
}

std::string step_line(const Point& p) {
  return step_name(p.load) + ": " + iops_text(p.iops) + " IOPS, " + bandwidth(p.bw_bytes) + ", mean " +
         latency(p.mean_ns) + ", p50 " + latency(p.p50_ns) + ", p99 " + latency(p.p99_ns) + ", p99.9 " +
         latency(p.p999_ns) + (p.steady ? ", steady" : "");
}

std::string render_text(const CurveReport& r) {
  const JobSpec& s = r.spec;
  std::string o;
  html::appendf(o, "diskprobe curve: %s on %s (rw=%s bs=%u numjobs=%u)\n", s.name.c_str(), r.device.c_str(),
                std::string(to_string(s.rw)).c_str(), s.bs, s.numjobs);
  html::appendf(o, "%-26s %8s %12s %10s %10s %10s %10s  %s\n", "step", "IOPS", "bandwidth", "mean", "p50",
                "p99", "p99.9", "steady");
  auto knee = knee_of(r);
  for (size_t i = 0; i < r.points.size(); ++i) {
    const Point& p = r.points[i];
    html::appendf(o, "%-26s %8s %12s %10s %10s %10s %10s  %s%s\n", step_name(p.load).c_str(),
                  iops_text(p.iops).c_str(), bandwidth(p.bw_bytes).c_str(), latency(p.mean_ns).c_str(),
                  latency(p.p50_ns).c_str(), latency(p.p99_ns).c_str(), latency(p.p999_ns).c_str(),
                  p.steady ? "yes" : "no", knee == i ? "  <- knee" : "");
  }
  if (knee) {
    const Point& k = r.points[*knee];
    html::appendf(
        o,
        "knee: %s at %s IOPS, mean %s, p99 %s (mean latency grew more than %.0f%% while IOPS gained "
        "under %.0f%%, or more than %g times as fast as IOPS)\n",
        step_name(k.load).c_str(), iops_text(k.iops).c_str(), latency(k.mean_ns).c_str(),
        latency(k.p99_ns).c_str(), r.options.knee.min_latency_growth * 100,
        r.options.knee.min_iops_gain * 100, r.options.knee.max_elasticity);
  } else {
    o += "knee: none found: latency grew no faster than IOPS over the steps run\n";
  }
  if (!r.ended.empty()) o += "ended: " + r.ended + "\n";
  for (const auto& n : r.notes) o += "note: " + n + "\n";
  return o;
}

nlohmann::json to_json(const CurveReport& r) {
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& p : r.points) {
    steps.push_back({{"name", step_name(p.load)},
                     {"series", p.load.rate_iops ? "rate" : "iodepth"},
                     {"iodepth", p.load.iodepth},
                     {"rate_iops", p.load.rate_iops},
                     {"rate_fraction", p.load.fraction},
                     {"iops", p.iops},
                     {"bw_bytes_per_s", p.bw_bytes},
                     {"clat_mean_ns", p.mean_ns},
                     {"clat_p50_ns", p.p50_ns},
                     {"clat_p99_ns", p.p99_ns},
                     {"clat_p99_9_ns", p.p999_ns},
                     {"steady", p.steady}});
  }
  nlohmann::json knee = nullptr;
  if (auto k = knee_of(r)) {
    knee = {{"step", *k},
            {"name", step_name(r.points[*k].load)},
            {"iops", r.points[*k].iops},
            {"clat_mean_ns", r.points[*k].mean_ns},
            {"clat_p99_ns", r.points[*k].p99_ns}};
  }
  const KneeRule& rule = r.options.knee;
  return {{"device", r.device},
          {"preflight", r.preflight},
          {"job", diskprobe::to_json(r.spec)},
          {"steps", steps},
          {"knee", knee},
          {"knee_rule",
           {{"max_elasticity", rule.max_elasticity},
            {"min_iops_gain", rule.min_iops_gain},
            {"min_latency_growth", rule.min_latency_growth}}},
          {"ended", r.ended},
          {"notes", r.notes}};
}

}  // namespace diskprobe::curve
