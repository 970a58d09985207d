#include "diskprobe/fleet/compare.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace diskprobe {

namespace {

using nlohmann::json;

std::string fmt(const char* f, double v, const char* unit) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v, unit);
  return buf;
}

std::string format_value(const CompareRow& r, double v) {
  if (!is_set(v)) return "-";
  if (r.unit == "IOPS") return format_iops(v);
  if (r.unit == "B/s") return format_bandwidth(v);
  return format_latency(v);
}

std::string format_change(const CompareRow& r) {
  if (!is_set(r.change_percent)) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", r.change_percent);
  return buf;
}

json number_or_null(double v) { return is_set(v) ? json(v) : json(nullptr); }

void add_direction(Comparison& c, const char* name, const DirectionSummary& a, const DirectionSummary& b) {
  if (!a.present && !b.present) return;
  struct Metric {
    const char* metric;
    const char* unit;
    bool higher_is_better;
    double a, b;
  };
  const Metric metrics[] = {
      {"IOPS", "IOPS", true, a.iops, b.iops},
      {"bandwidth", "B/s", true, a.bw_bytes_per_s, b.bw_bytes_per_s},
      {"mean latency", "ns", false, a.lat_mean_ns, b.lat_mean_ns},
      {"p99 latency", "ns", false, a.lat_p99_ns, b.lat_p99_ns},
      {"p99.9 latency", "ns", false, a.lat_p999_ns, b.lat_p999_ns},
  };
  for (const auto& m : metrics) {
    CompareRow r;
    r.direction = name;
    r.metric = m.metric;
    r.unit = m.unit;
    r.higher_is_better = m.higher_is_better;
    // A direction B no longer does at all lost all of its throughput.
    r.a = a.present ? m.a : (m.higher_is_better ? 0.0 : kUnset);
    r.b = b.present ? m.b : (m.higher_is_better ? 0.0 : kUnset);
    if (is_set(r.a) && is_set(r.b) && r.a > 0) {
      r.change_percent = (r.b - r.a) / r.a * 100.0;
      r.worse_percent = m.higher_is_better ? -r.change_percent : r.change_percent;
    }
    if (c.max_regression_percent && is_set(r.worse_percent) && r.worse_percent > *c.max_regression_percent) {
      r.regression = true;
      c.regressed = true;
    }
    c.rows.push_back(std::move(r));
  }
}

}  // namespace

std::string format_iops(double v) {
  if (!is_set(v)) return "-";
  if (v >= 1e6) return fmt("%.2f%s", v / 1e6, "M");
  if (v >= 1e4) return fmt("%.1f%s", v / 1e3, "k");
  return fmt("%.0f%s", v, "");
}

std::string format_bandwidth(double b) {
  if (!is_set(b)) return "-";
  if (b >= 1024.0 * 1024 * 1024) return fmt("%.2f %s", b / (1024.0 * 1024 * 1024), "GiB/s");
  if (b >= 1024.0 * 1024) return fmt("%.1f %s", b / (1024.0 * 1024), "MiB/s");
  return fmt("%.1f %s", b / 1024.0, "KiB/s");
}

std::string format_latency(double ns) {
  if (!is_set(ns)) return "-";
  if (ns >= 1e6) return fmt("%.2f %s", ns / 1e6, "ms");
  if (ns >= 1e3) return fmt("%.1f %s", ns / 1e3, "us");
  return fmt("%.0f %s", ns, "ns");
}

Comparison compare_runs(const RunSummary& a, const RunSummary& b,
                        std::optional<double> max_regression_percent) {
  Comparison c;
  c.max_regression_percent = max_regression_percent;
  add_direction(c, "read", a.read, b.read);
  add_direction(c, "write", a.write, b.write);
  return c;
}

std::string comparison_text(const Comparison& c, const RunSummary& a, const RunSummary& b) {
  std::string o;
  o += "A: " + a.origin + " (" + a.profile + " on " + a.label() + ", " + a.started_at + ")\n";
  o += "B: " + b.origin + " (" + b.profile + " on " + b.label() + ", " + b.started_at + ")\n";
  if (a.profile != b.profile)
    o += "note: the runs used different profiles (" + a.profile + ", " + b.profile + ")\n";
  char line[256];
  std::snprintf(line, sizeof line, "\n%-6s %-14s %14s %14s %9s\n", "DIR", "METRIC", "A", "B", "CHANGE");
  o += line;
  for (const auto& r : c.rows) {
    std::snprintf(line, sizeof line, "%-6s %-14s %14s %14s %9s%s\n", r.direction.c_str(), r.metric.c_str(),
                  format_value(r, r.a).c_str(), format_value(r, r.b).c_str(), format_change(r).c_str(),
                  r.regression ? "  REGRESSION" : "");
    o += line;
  }
  if (c.rows.empty()) o += "(neither run did any I/O)\n";
  if (c.max_regression_percent) {
    std::snprintf(line, sizeof line, "%.4g%%", *c.max_regression_percent);
    o += c.regressed ? std::string("\nB is worse than A by more than ") + line +
                           " (lower IOPS or bandwidth, higher latency)\n"
                     : std::string("\nB is within ") + line + " of A\n";
  }
  return o;
}

json comparison_json(const Comparison& c, const RunSummary& a, const RunSummary& b) {
  json rows = json::array();
  for (const auto& r : c.rows) {
    rows.push_back({{"direction", r.direction},
                    {"metric", r.metric},
                    {"unit", r.unit},
                    {"higher_is_better", r.higher_is_better},
                    {"a", number_or_null(r.a)},
                    {"b", number_or_null(r.b)},
                    {"change_percent", number_or_null(r.change_percent)},
                    {"regression", r.regression}});
  }
  return {
      {"a", {{"file", a.origin}, {"profile", a.profile}, {"volume", a.label()}}},
      {"b", {{"file", b.origin}, {"profile", b.profile}, {"volume", b.label()}}},
      {"max_regression_percent", c.max_regression_percent ? json(*c.max_regression_percent) : json(nullptr)},
      {"regressed", c.regressed},
      {"rows", rows}};
}

}  // namespace diskprobe
