#include "diskprobe/report/run_summary.h"

#include <algorithm>
#include <cstdlib>

#include "diskprobe/base/json_io.h"
#include "diskprobe/report/report_keys.h"
#include "diskprobe/base/sysroot.h"

namespace diskprobe {

namespace {

using nlohmann::json;

namespace key {
using namespace report_key;
constexpr const char* kP99 = "99.00";
constexpr const char* kP999 = "99.90";
constexpr const char* kHost = "host";  // optional, from other writers: a hostname, or an object with one
constexpr const char* kName = "name";  // the job's
}  // namespace key

// j[k] when j is an object holding k, else null.
const json& at(const json& j, const char* k) {
  static const json null;
  if (!j.is_object()) return null;
  auto it = j.find(k);
  return it == j.end() ? null : *it;
}

double number(const json& v) { return v.is_number() ? v.get<double>() : kUnset; }

std::string text(const json& v) { return v.is_string() ? v.get<std::string>() : std::string(); }

// The first string among an object's candidate keys; a plain string is itself.
std::string first_text(const json& v, std::initializer_list<const char*> keys) {
  if (v.is_string()) return v.get<std::string>();
  for (const char* k : keys) {
    if (auto s = text(at(v, k)); !s.empty()) return s;
  }
  return {};
}

DirectionSummary direction(const json& d) {
  DirectionSummary s;
  if (!d.is_object()) return s;
  s.ios = number(at(d, key::kIos));
  s.present = is_set(s.ios) && s.ios > 0;
  if (!is_set(s.ios)) s.ios = 0;
  s.iops = number(at(d, key::kIops));
  s.bw_bytes_per_s = number(at(d, key::kBw));
  const json& lat = at(d, key::kClat);
  s.lat_mean_ns = number(at(lat, key::kMean));
  const json& pct = at(lat, key::kPercentiles);
  s.lat_p99_ns = number(at(pct, key::kP99));
  s.lat_p999_ns = number(at(pct, key::kP999));
  if (pct.is_object()) {
    for (const auto& [p, v] : pct.items()) {
      char* end = nullptr;
      double percent = std::strtod(p.c_str(), &end);
      if (end != p.c_str() && v.is_number()) s.percentiles.emplace_back(percent, v.get<double>());
    }
    std::sort(s.percentiles.begin(), s.percentiles.end());
  }
  return s;
}

// Expectation entries are read loosely: the report's writer may call the flag met, passed
// or ok, and the text expression, expect or text.
ExpectationOutcome expectation(const json& e) {
  ExpectationOutcome o;
  if (e.is_string()) {
    o.what = e.get<std::string>();
    return o;
  }
  o.what = first_text(e, {key::kExpression, "expr", "expect", "text", "name", "metric"});
  for (const char* k : {key::kMet, "passed", "ok", "pass"}) {
    if (const json& v = at(e, k); v.is_boolean()) {
      o.met = v.get<bool>();
      break;
    }
  }
  if (const json& v = at(e, "actual"); !v.is_null())
    o.detail = v.is_string() ? v.get<std::string>() : dump_json(v, -1);
  if (o.detail.empty()) o.detail = first_text(e, {"message", "detail", "reason"});
  return o;
}

}  // namespace

bool RunSummary::expectations_failed() const {
  return std::any_of(expectations.begin(), expectations.end(),
                     [](const ExpectationOutcome& e) { return !e.met; });
}

std::string RunSummary::label() const {
  std::string dev = !volume.empty() ? volume : device;
  if (!host.empty() && !dev.empty()) return host + ":" + dev;
  if (!dev.empty()) return dev;
  return origin;
}

Result<RunSummary> summarize_run(const json& j, const std::string& origin) {
  if (!j.is_object() || !at(j, key::kSchema).is_number()) {
    return make_error(origin + ": not a diskprobe run report (no " + key::kSchema +
                      "): write one with 'diskprobe run ... --output-format json'");
  }
  if (!at(j, key::kRead).is_object() && !at(j, key::kWrite).is_object()) {
    return make_error(origin + ": the report has neither read nor write results");
  }
  RunSummary s;
  s.origin = origin;
  const json& dev = at(j, key::kDevice);
  s.device = first_text(dev, {"path", "name"});
  s.volume = first_text(dev, {"serial", "volume_id", "id"});
  s.host = first_text(at(j, key::kHost), {"hostname", "name"});
  if (s.host.empty()) s.host = text(at(j, "hostname"));
  s.profile = first_text(at(j, key::kJob), {key::kName, "profile"});
  if (s.profile.empty()) s.profile = text(at(j, "profile"));
  s.started_at = text(at(j, key::kStartedAt));
  s.runtime_s = number(at(j, key::kRuntime));
  s.interrupted = at(j, key::kInterrupted).is_boolean() && at(j, key::kInterrupted).get<bool>();
  s.read = direction(at(j, key::kRead));
  s.write = direction(at(j, key::kWrite));
  s.preflight = first_text(at(j, key::kPreflight), {"summary", "verdict"});
  // Every report run writes has the array, empty when nothing was expected.
  if (const json& e = at(j, key::kExpectations); e.is_array() && !e.empty()) {
    s.has_expectations = true;
    for (const auto& x : e) s.expectations.push_back(expectation(x));
  }
  return s;
}

Result<RunSummary> parse_run_summary(std::string_view text, const std::string& origin) {
  auto j = parse_json(text, origin);
  if (!j) return make_error(j.error() + "; write it with 'diskprobe run ... --output-format json'");
  return summarize_run(*j, origin);
}

Result<RunSummary> load_run_summary(const std::string& path) {
  auto content = read_file(path);
  if (!content) return make_error(content.error());
  return parse_run_summary(*content, path);
}

}  // namespace diskprobe
