#include "diskprobe/report/openmetrics.h"

#include "diskprobe/base/json_io.h"
#include "diskprobe/report/report.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace diskprobe {

namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

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

// A latency histogram as a summary: the report's percentiles as quantiles, in seconds.
void latency_summary(std::string& out, const char* name, const char* help, const RunReport& rep,
                     const Labels& base, Histogram DirectionStats::*which) {
  Family f(out, name, "summary", help);
  const auto pcts = report_percentiles(rep.spec);
  for (const auto& dir : directions(rep)) {
    const Histogram& h = dir.d.*which;
    Labels l = with(base, "direction", dir.name);
    for (double p : pcts)
      f.sample(with(l, "quantile", number(p / 100)), static_cast<double>(h.percentile(p)) / 1e9);
    f.sample(l, static_cast<double>(h.sum()) / 1e9, "_sum");
    f.sample(l, static_cast<double>(h.count()), "_count");
  }
}

}  // namespace

std::string render_openmetrics(const RunReport& rep) {
  const Results& r = rep.results;
  std::string out;
  const Labels base = run_labels(rep);
  const double secs = r.runtime_s;
  auto rate = [&](uint64_t v) { return secs > 0 ? static_cast<double>(v) / secs : 0.0; };

  Family info(out, "diskprobe_run_info", "gauge", "The diskprobe version and kernel of the run, always 1.");
  info.sample(with(with(base, "version", rep.environment.diskprobe_version), "kernel", rep.environment.kernel),
              1);
  Family iops(out, "diskprobe_iops", "gauge", "I/Os completed per second over the measured runtime.");
  for (const auto& dir : directions(rep)) iops.sample(with(base, "direction", dir.name), rate(dir.d.ios));
  Family bw(out, "diskprobe_bandwidth_bytes_per_second", "gauge",
            "Bytes transferred per second over the measured runtime.");
  for (const auto& dir : directions(rep)) bw.sample(with(base, "direction", dir.name), rate(dir.d.bytes));
  Family ios(out, "diskprobe_ios", "gauge", "I/Os completed in the run.");
  for (const auto& dir : directions(rep))
    ios.sample(with(base, "direction", dir.name), static_cast<double>(dir.d.ios));
  latency_summary(out, "diskprobe_completion_latency_seconds",
                  "Completion latency (fio's clat): submission to completion, quantiles of the run.", rep, base,
                  &DirectionStats::clat);
  latency_summary(out, "diskprobe_latency_seconds", "Total latency (fio's lat), quantiles of the run.", rep,
                  base, &DirectionStats::lat);
  Family failed(out, "diskprobe_failed_ios", "gauge", "I/Os that failed with an error in the run.");
  failed.sample(base, static_cast<double>(r.errors.count));
  Family short_ios(out, "diskprobe_short_ios", "gauge",
                   "I/Os that transferred fewer bytes than asked in the run.");
  short_ios.sample(base, static_cast<double>(r.errors.short_ios));
  Family met(out, "diskprobe_expectation_met", "gauge", "1 when the expectation was met, 0 when not.");
  for (const auto& e : rep.expectations) {
    met.sample(with(with(base, "expectation", e.expectation.text), "origin", e.expectation.origin),
               e.met ? 1 : 0);
  }
  Family all(out, "diskprobe_expectations_met", "gauge",
             "1 when every expectation of the run was met, 0 when not.");
  all.sample(base, std::all_of(rep.expectations.begin(), rep.expectations.end(),
                               [](const ExpectationResult& e) { return e.met; }));
  Family safe(out, "diskprobe_preflight_safe", "gauge", "1 when the preflight found the device safe to use.");
  safe.sample(base, rep.preflight_safe ? 1 : 0);
  Family interrupted(out, "diskprobe_run_interrupted", "gauge",
                     "1 when SIGINT or SIGTERM stopped the run early.");
  interrupted.sample(base, r.interrupted ? 1 : 0);
  Family runtime(out, "diskprobe_runtime_seconds", "gauge",
                 "The measured runtime of the run, ramp excluded.");
  runtime.sample(base, secs);
  // A gauge, not a sample timestamp: the textfile collector refuses those, and a dashboard
  // wants the run's age (time() - this) long after the file was written.
  if (auto start = started_unix_seconds(r)) {
    Family when(out, "diskprobe_run_timestamp_seconds", "gauge",
                "When the measured run started, in seconds since the Unix epoch.");
    when.sample(base, static_cast<double>(*start));
  }
  return out;
}

}  // namespace diskprobe
