#include "diskprobe/report/openmetrics.h"

#include "diskprobe/base/json_io.h"
#include "diskprobe/report/report.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace diskprobe {

namespace {

using Labels = MetricLabels;

// The exposition format's escapes for a label value: backslash, double quote, newline; it
// must be UTF-8, so other bytes (a model string, a path) become U+FFFD first.
std::string escape_label(const std::string& raw) {
  std::string out;
  for (char c : valid_utf8(raw)) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

// One metric family: HELP and TYPE once, then its samples, as the format requires.
class Family {
 public:
  Family(std::string& out, const char* name, const char* type, const char* help) : out_(out), name_(name) {
    out_ += "# HELP " + name_ + " " + help + "\n# TYPE " + name_ + " " + type + "\n";
  }
  void sample(const Labels& labels, double value, const char* suffix = "") {
    out_ += name_ + suffix;
    if (!labels.empty()) {
      out_ += '{';
      for (size_t i = 0; i < labels.size(); ++i) {
        out_ += (i ? "," : "") + labels[i].first + "=\"" + escape_label(labels[i].second) + "\"";
      }
      out_ += '}';
    }
    out_ += " " + number(value) + "\n";
  }

 private:
  std::string& out_;
  std::string name_;
};

// --volume essd-pl3:2000GiB -> "essd-pl3", from the expectation it added.
std::string volume_type(const RunReport& rep) {
  const std::string prefix = "--volume ";
  for (const auto& e : rep.expectations) {
    const std::string& o = e.expectation.origin;
    if (o.rfind(prefix, 0) == 0) return o.substr(prefix.size(), o.find(':') - prefix.size());
  }
  return "";
}

// The labels every sample carries. device is the kernel name, as node_exporter's own
// node_disk_* metrics have it, so the two join.
Labels run_labels(const RunReport& rep) {
  auto slash = rep.device.rfind('/');
  return {{"device", slash == std::string::npos ? rep.device : rep.device.substr(slash + 1)},
          {"model", rep.environment.device_model},
          {"serial", rep.environment.device_serial},
          {"profile", rep.spec.name},
          {"volume_type", volume_type(rep)}};
}

Labels with(Labels l, const char* name, const std::string& value) {
  l.emplace_back(name, value);
  return l;
}

struct Direction {
  const char* name;
  const DirectionStats& d;
};

std::vector<Direction> directions(const RunReport& rep) {
  const Results& r = rep.results;
  std::vector<Direction> out;
  if (r.read.ios || does_reads(rep.spec.rw)) out.push_back({"read", r.read});
  if (r.write.ios || does_writes(rep.spec.rw)) out.push_back({"write", r.write});
  return out;
}

// A run and the labels every one of its samples carries.
struct Run {
  const RunReport& rep;
  Labels base;
};

std::vector<Run> runs_of(const std::vector<LabelledRun>& runs) {
  std::vector<Run> out;
  for (const auto& r : runs) {
    Labels base = run_labels(*r.report);
    base.insert(base.end(), r.labels.begin(), r.labels.end());
    out.push_back({*r.report, std::move(base)});
  }
  return out;
}

// A latency histogram as a summary: the report's percentiles as quantiles, in seconds.
void latency_summary(std::string& out, const char* name, const char* help, const std::vector<Run>& runs,
                     Histogram DirectionStats::*which) {
  Family f(out, name, "summary", help);
  for (const auto& run : runs) {
    const auto pcts = report_percentiles(run.rep.spec);
    for (const auto& dir : directions(run.rep)) {
      const Histogram& h = dir.d.*which;
      Labels l = with(run.base, "direction", dir.name);
      for (double p : pcts)
        f.sample(with(l, "quantile", number(p / 100)), static_cast<double>(h.percentile(p)) / 1e9);
      f.sample(l, static_cast<double>(h.sum()) / 1e9, "_sum");
      f.sample(l, static_cast<double>(h.count()), "_count");
    }
  }
}

// A gauge with one sample per run, from `value(run)`.
template <typename F>
void per_run(std::string& out, const char* name, const char* help, const std::vector<Run>& runs, F value) {
  Family f(out, name, "gauge", help);
  for (const auto& run : runs) f.sample(run.base, value(run.rep));
}

// A gauge with one sample per run and direction, from `value(run, direction's stats)`.
template <typename F>
void per_direction(std::string& out, const char* name, const char* help, const std::vector<Run>& runs, F value) {
  Family f(out, name, "gauge", help);
  for (const auto& run : runs) {
    for (const auto& dir : directions(run.rep)) f.sample(with(run.base, "direction", dir.name), value(run.rep, dir.d));
  }
}

double rate(const RunReport& rep, uint64_t v) {
  const double secs = rep.results.runtime_s;
  return secs > 0 ? static_cast<double>(v) / secs : 0.0;
}

}  // namespace

std::string render_openmetrics(const RunReport& rep) { return render_openmetrics({LabelledRun{&rep, {}}}); }

std::string render_openmetrics(const std::vector<LabelledRun>& labelled) {
  const std::vector<Run> runs = runs_of(labelled);
  std::string out;
  Family info(out, "diskprobe_run_info", "gauge", "The diskprobe version and kernel of the run, always 1.");
  for (const auto& run : runs) {
    const RunEnvironment& env = run.rep.environment;
    info.sample(with(with(run.base, "version", env.diskprobe_version), "kernel", env.kernel), 1);
  }
  per_direction(out, "diskprobe_iops", "I/Os completed per second over the measured runtime.", runs,
                [](const RunReport& r, const DirectionStats& d) { return rate(r, d.ios); });
  per_direction(out, "diskprobe_bandwidth_bytes_per_second", "Bytes transferred per second over the measured runtime.",
                runs, [](const RunReport& r, const DirectionStats& d) { return rate(r, d.bytes); });
  per_direction(out, "diskprobe_ios", "I/Os completed in the run.", runs,
                [](const RunReport&, const DirectionStats& d) { return static_cast<double>(d.ios); });
  latency_summary(out, "diskprobe_completion_latency_seconds",
                  "Completion latency (fio's clat): submission to completion, quantiles of the run.", runs,
                  &DirectionStats::clat);
  latency_summary(out, "diskprobe_latency_seconds", "Total latency (fio's lat), quantiles of the run.", runs,
                  &DirectionStats::lat);
  per_run(out, "diskprobe_failed_ios", "I/Os that failed with an error in the run.", runs,
          [](const RunReport& r) { return static_cast<double>(r.results.errors.count); });
  per_run(out, "diskprobe_short_ios", "I/Os that transferred fewer bytes than asked in the run.", runs,
          [](const RunReport& r) { return static_cast<double>(r.results.errors.short_ios); });
  Family met(out, "diskprobe_expectation_met", "gauge", "1 when the expectation was met, 0 when not.");
  for (const auto& run : runs) {
    for (const auto& e : run.rep.expectations) {
      met.sample(with(with(run.base, "expectation", e.expectation.text), "origin", e.expectation.origin),
                 e.met ? 1 : 0);
    }
  }
  per_run(out, "diskprobe_expectations_met", "1 when every expectation of the run was met, 0 when not.", runs,
          [](const RunReport& r) {
            return std::all_of(r.expectations.begin(), r.expectations.end(),
                               [](const ExpectationResult& e) { return e.met; });
          });
  per_run(out, "diskprobe_preflight_safe", "1 when the preflight found the device safe to use.", runs,
          [](const RunReport& r) { return r.preflight_safe ? 1 : 0; });
  per_run(out, "diskprobe_run_interrupted", "1 when SIGINT or SIGTERM stopped the run early.", runs,
          [](const RunReport& r) { return r.results.interrupted ? 1 : 0; });
  per_run(out, "diskprobe_runtime_seconds", "The measured runtime of the run, ramp excluded.", runs,
          [](const RunReport& r) { return r.results.runtime_s; });
  // A gauge, not a sample timestamp: the textfile collector refuses those, and a dashboard
  // wants the run's age (time() - this) long after the file was written. Left out for a run
  // whose start is not a time.
  std::vector<GaugeSample> starts;
  for (const auto& run : runs) {
    if (auto start = started_unix_seconds(run.rep.results)) starts.push_back({run.base, static_cast<double>(*start)});
  }
  if (!starts.empty()) {
    out += render_gauge("diskprobe_run_timestamp_seconds",
                        "When the measured run started, in seconds since the Unix epoch.", starts);
  }
  return out;
}

std::string render_gauge(const char* name, const char* help, const std::vector<GaugeSample>& samples) {
  std::string out;
  Family f(out, name, "gauge", help);
  for (const auto& s : samples) f.sample(s.labels, s.value);
  return out;
}

}  // namespace diskprobe
