#include "diskprobe/fleet/aggregate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "diskprobe/fleet/compare.h"

namespace diskprobe {

namespace {

using nlohmann::json;

json number_or_null(double v) { return is_set(v) ? json(v) : json(nullptr); }

double sum_set(double a, double b) {
  if (!is_set(a)) return b;
  if (!is_set(b)) return a;
  return a + b;
}

VolumeRow row_of(const RunSummary& r) {
  VolumeRow v;
  v.run = r;
  for (const DirectionSummary* d : {&r.read, &r.write}) {
    if (!d->present) continue;
    v.iops = sum_set(v.iops, d->iops);
    v.bw_bytes_per_s = sum_set(v.bw_bytes_per_s, d->bw_bytes_per_s);
    if (is_set(d->lat_p99_ns))
      v.p99_ns = is_set(v.p99_ns) ? std::max(v.p99_ns, d->lat_p99_ns) : d->lat_p99_ns;
  }
  return v;
}

FleetStat stat_of(const std::string& profile, const char* metric, const char* unit, bool higher_is_better,
                  const std::vector<double>& values) {
  FleetStat s;
  s.profile = profile;
  s.metric = metric;
  s.unit = unit;
  s.volumes = values.size();
  if (values.empty()) return s;
  s.p50 = nearest_rank(values, 50);
  s.p90 = nearest_rank(values, 90);
  s.p99 = nearest_rank(values, 99);
  auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  s.worst = higher_is_better ? *lo : *hi;
  s.best = higher_is_better ? *hi : *lo;
  return s;
}

// Without a host name in the reports, the file tells same-named devices of different hosts apart.
std::string volume_name(const RunSummary& r) {
  if (!r.host.empty()) return r.label();
  auto slash = r.origin.rfind('/');
  return (slash == std::string::npos ? r.origin : r.origin.substr(slash + 1)) + ":" + r.label();
}

std::string value_text(const FleetStat& s, double v) {
  return s.unit == "IOPS" ? format_iops(v) : format_latency(v);
}

}  // namespace

double nearest_rank(std::vector<double> values, double p) {
  if (values.empty()) return kUnset;
  std::sort(values.begin(), values.end());
  auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(values.size())));
  rank = std::clamp<size_t>(rank, 1, values.size());
  return values[rank - 1];
}

Fleet aggregate_runs(const std::vector<RunSummary>& runs) {
  Fleet f;
  std::vector<std::string> profiles;
  for (const auto& r : runs) {
    f.volumes.push_back(row_of(r));
    if (!r.has_expectations) ++f.without_expectations;
    if (r.expectations_failed()) f.failed.push_back(f.volumes.size() - 1);
    if (std::find(profiles.begin(), profiles.end(), r.profile) == profiles.end())
      profiles.push_back(r.profile);
  }
  for (const auto& p : profiles) {
    std::vector<double> iops, p99;
    for (const auto& v : f.volumes) {
      if (v.run.profile != p) continue;
      if (is_set(v.iops)) iops.push_back(v.iops);
      if (is_set(v.p99_ns)) p99.push_back(v.p99_ns);
    }
    f.stats.push_back(stat_of(p, "IOPS", "IOPS", true, iops));
    f.stats.push_back(stat_of(p, "p99 latency", "ns", false, p99));
  }
  return f;
}

std::string fleet_text(const Fleet& f) {
  std::string o;
  char line[512];
  std::snprintf(line, sizeof line, "%-32s %-20s %10s %12s %11s  %s\n", "VOLUME", "PROFILE", "IOPS",
                "BANDWIDTH", "P99 LAT", "EXPECTATIONS");
  o += line;
  for (const auto& v : f.volumes) {
    std::string expect = !v.run.has_expectations ? "-"
                         : v.run.expectations_failed()
                             ? "FAILED"
                             : "met (" + std::to_string(v.run.expectations.size()) + ")";
    if (v.run.interrupted) expect += " (interrupted)";
    std::snprintf(line, sizeof line, "%-32s %-20s %10s %12s %11s  %s\n", volume_name(v.run).c_str(),
                  v.run.profile.c_str(), format_iops(v.iops).c_str(),
                  format_bandwidth(v.bw_bytes_per_s).c_str(), format_latency(v.p99_ns).c_str(),
                  expect.c_str());
    o += line;
  }
  o += "\nfleet percentiles across volumes, per profile (worst = lowest IOPS, highest latency):\n";
  std::snprintf(line, sizeof line, "%-20s %-12s %7s %10s %10s %10s %10s\n", "PROFILE", "METRIC", "VOLUMES",
                "P50", "P90", "P99", "WORST");
  o += line;
  for (const auto& s : f.stats) {
    std::snprintf(line, sizeof line, "%-20s %-12s %7zu %10s %10s %10s %10s\n", s.profile.c_str(),
                  s.metric.c_str(), s.volumes, value_text(s, s.p50).c_str(), value_text(s, s.p90).c_str(),
                  value_text(s, s.p99).c_str(), value_text(s, s.worst).c_str());
    o += line;
  }
  o += "\n";
  if (f.failed.empty()) {
    o += "no volume failed its expectations";
  } else {
    o += std::to_string(f.failed.size()) + (f.failed.size() == 1 ? " volume failed its expectations:\n"
                                                                 : " volumes failed their expectations:\n");
    for (size_t i : f.failed) {
      const RunSummary& r = f.volumes[i].run;
      for (const auto& e : r.expectations) {
        if (e.met) continue;
        o += "  " + volume_name(r) + ": " + e.what + (e.detail.empty() ? "" : " (" + e.detail + ")") + "\n";
      }
    }
  }
  if (f.without_expectations) {
    o += (f.failed.empty() ? " (" : "") + std::to_string(f.without_expectations) + " of " +
         std::to_string(f.volumes.size()) + " reports carry no expectations" + (f.failed.empty() ? ")" : "");
  }
  if (o.back() != '\n') o += "\n";
  return o;
}

json fleet_json(const Fleet& f) {
  json volumes = json::array();
  for (const auto& v : f.volumes) {
    json failed = json::array();
    for (const auto& e : v.run.expectations) {
      if (!e.met) failed.push_back({{"expectation", e.what}, {"detail", e.detail}});
    }
    volumes.push_back({{"file", v.run.origin},
                       {"host", v.run.host},
                       {"device", v.run.device},
                       {"volume", volume_name(v.run)},
                       {"profile", v.run.profile},
                       {"iops", number_or_null(v.iops)},
                       {"bw_bytes_per_s", number_or_null(v.bw_bytes_per_s)},
                       {"lat_p99_ns", number_or_null(v.p99_ns)},
                       {"has_expectations", v.run.has_expectations},
                       {"expectations_failed", failed}});
  }
  json stats = json::array();
  for (const auto& s : f.stats) {
    stats.push_back({{"profile", s.profile},
                     {"metric", s.metric},
                     {"unit", s.unit},
                     {"volumes", s.volumes},
                     {"p50", number_or_null(s.p50)},
                     {"p90", number_or_null(s.p90)},
                     {"p99", number_or_null(s.p99)},
                     {"worst", number_or_null(s.worst)},
                     {"best", number_or_null(s.best)}});
  }
  return {{"volumes", volumes},
          {"fleet", stats},
          {"failed_volumes", f.failed.size()},
          {"reports_without_expectations", f.without_expectations}};
}

}  // namespace diskprobe
