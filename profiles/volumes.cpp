#include "diskprobe/profiles/volumes.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <string_view>

#include "diskprobe/base/json_io.h"
#include "diskprobe/device/loop_device.h"
#include "diskprobe/base/sysroot.h"
#include "diskprobe/base/units.h"

namespace diskprobe::profiles {

using nlohmann::json;

namespace {

constexpr double kMiB = 1048576.0;
constexpr double kGiB = 1073741824.0;

double num(const json& obj, const char* key, double fallback) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_number() ? it->get<double>() : fallback;
}

// max(min(base + per_gib x GiB, max), floor)
double linear(const json& f, double gib) {
  double v = num(f, "base", 0) + num(f, "per_gib", 0) * gib;
  v = std::min(v, num(f, "max", INFINITY));
  return std::max(v, num(f, "floor", 0));
}

// Throughput from provisioned IOPS: per_iops_mib x IOPS up to max, or the first tier whose
// up_to_iops holds the IOPS.
double from_iops(const json& f, double iops) {
  if (f.contains("tiers")) {
    for (const auto& t : f["tiers"]) {
      if (!t.contains("up_to_iops") || iops <= num(t, "up_to_iops", 0)) return from_iops(t, iops);
    }
    return 0;
  }
  return std::min(num(f, "per_iops_mib", 0) * iops, num(f, "max", INFINITY));
}

Result<double> whole_number(const std::string& what, std::string_view s) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string_view::npos) {
    return make_error(what + " '" + excerpt(s) + "' is not a whole number");
  }
  // parse_decimal, as every other number here, not std::stod: that throws out_of_range past
  // 1.8e308 and the throw aborted the run. volume_performance's 128-byte cap keeps the value
  // finite; a caller without it gets this line, not a throw.
  auto v = parse_decimal(s);
  if (!v) return make_error(what + " '" + excerpt(s) + "' is too large");
  return *v;
}

// Provisioned throughput in MiB/s: "500" and "500MiB/s" are 500 MiB/s (AWS provisions gp3 in
// MiB/s), "500MB/s" is 500 x 10^6 bytes/s, as in --expect and fio; the "/s" may be left out.
std::optional<double> throughput_mib(std::string_view text) {
  struct Unit {
    std::string_view name;
    double mib;
  };
  constexpr Unit kUnits[] = {{"MiB/s", 1}, {"MiB", 1}, {"MB/s", 1e6 / kMiB}, {"MB", 1e6 / kMiB}, {"", 1}};
  for (const Unit& u : kUnits) {
    if (text.size() <= u.name.size() || !text.ends_with(u.name)) continue;
    auto n = parse_decimal(text.substr(0, text.size() - u.name.size()));
    if (!n) return std::nullopt;
    return *n * u.mib;
  }
  return std::nullopt;
}

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

Status in_range(const std::string& volume, const std::string& what, double v, const json& range,
                const std::string& unit) {
  double lo = num(range, "min", 0), hi = num(range, "max", INFINITY);
  if (v < lo || v > hi) {
    return make_error("--volume " + volume + ": " + what + " " + fmt(v) + unit +
                      " is outside the type's range " + fmt(lo) + " to " + fmt(hi) + unit);
  }
  return Ok{};
}

// custom:iops=N,mbps=M[,lat_ms=L]: every key once, each a positive plain number (IOPS whole).
Result<VolumePerformance> custom_volume(const std::string& v, const std::string& arg) {
  const std::string form = std::string(" (give ") + kCustomVolumeForm + ", like custom:iops=5000,mbps=200)";
  std::map<std::string, double> got;
  size_t start = 0;
  while (start <= arg.size()) {
    size_t comma = std::min(arg.find(',', start), arg.size());
    std::string item = arg.substr(start, comma - start);
    start = comma + 1;
    auto eq = item.find('=');
    std::string key = item.substr(0, eq);
    if (key != "iops" && key != "mbps" && key != "lat_ms") {
      return make_error("--volume " + v + ": '" + excerpt(item) + "' is not iops=, mbps= or lat_ms=" + form);
    }
    if (got.count(key)) return make_error("--volume " + v + ": " + key + " is given twice" + form);
    auto value = eq == std::string::npos ? std::nullopt : parse_decimal(item.substr(eq + 1));
    if (!value || !(*value > 0) || (key == "iops" && *value != std::floor(*value))) {
      return make_error("--volume " + v + ": " + key + " needs a " + (key == "iops" ? "whole " : "") +
                        "number above 0" + form);
    }
    got[key] = *value;
  }
  for (const char* key : {"iops", "mbps"}) {
    if (!got.count(key)) return make_error("--volume " + v + ": " + key + "= is missing" + form);
  }
  VolumePerformance p;
  p.volume = v;
  p.provider = "custom";
  p.formula = "as given: " + fmt(got["iops"]) + " IOPS, " + fmt(got["mbps"]) + " MiB/s" +
              (got.count("lat_ms") ? ", " + fmt(got["lat_ms"]) + " ms" : "");
  p.source = "the command line";
  p.iops = got["iops"];
  p.throughput_bytes_per_s = got["mbps"] * kMiB;
  p.latency_ms = got.count("lat_ms") ? got["lat_ms"] : 0;
  return p;
}

}  // namespace

Result<json> load_volume_catalog(const std::vector<std::string>& dirs) {
  for (const auto& d : dirs) {
    std::string path = d + "/catalog/volumes.json";
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) continue;
    auto text = read_file(path);
    if (!text) return make_error(text.error());
    auto j = parse_json(*text, path);
    if (!j) return make_error(j.error());
    if (!j->is_object() || !j->contains("volumes") || !(*j)["volumes"].is_object()) {
      return make_error(path + ": not a volume catalog (needs a \"volumes\" object)");
    }
    return j;
  }
  return make_error("no volume catalog (catalog/volumes.json) in the profile directories");
}

Result<VolumePerformance> volume_performance(std::string_view volume, const json& catalog) {
  // Far longer than any real one ("custom:iops=5000,mbps=200,lat_ms=0.25"): the errors below
  // quote the argument, and one of 400 digits would make them a screenful.
  constexpr size_t kMaxVolumeBytes = 128;
  if (volume.size() > kMaxVolumeBytes) {
    return make_error("--volume '" + excerpt(volume, 32) + "': longer than " + std::to_string(kMaxVolumeBytes) +
                      " bytes; give it like essd-pl1:1000GiB or ebs-io1:40000");
  }
  std::string v(volume);
  const json& types = catalog["volumes"];
  std::string known;
  for (const auto& [name, t] : types.items()) {
    known += (known.empty() ? "" : ", ") + name + ":" + t.value("argument", std::string("?"));
  }
  known += std::string(", ") + kCustomVolumeForm;
  auto colon = v.find(':');
  if (colon == std::string::npos) {
    return make_error("--volume " + v + ": give TYPE:ARGUMENT, one of " + known);
  }
  std::string type = v.substr(0, colon), arg = v.substr(colon + 1);
  if (type == kCustomVolume) return custom_volume(v, arg);
  if (!types.contains(type))
    return make_error("--volume " + v + ": unknown volume type '" + type + "'; known: " + known);
  const json& t = types[type];
  VolumePerformance p;
  p.volume = v;
  p.provider = t.value("provider", "");
  p.formula = t.value("formula", "");
  p.source = t.value("source", "");
  std::string argument = t.value("argument", "");
  if (argument == "size") {
    // A bare number is GiB, the unit the providers price in.
    double gib = 0;
    if (!arg.empty() && arg.find_first_not_of("0123456789") == std::string::npos) {
      auto n = whole_number("--volume " + v + ": size", arg);
      if (!n) return make_error(n.error() + "; give the size like 1000GiB");
      gib = *n;
    } else {
      auto bytes = parse_size(arg);
      if (!bytes) return make_error("--volume " + v + ": " + bytes.error() + "; give the size like 1000GiB");
      gib = static_cast<double>(*bytes) / kGiB;
    }
    if (auto st = in_range(v, "size", gib, t["size_gib"], " GiB"); !st) return make_error(st.error());
    p.iops = std::floor(linear(t["iops"], gib));
    p.throughput_bytes_per_s = linear(t["throughput_mib_s"], gib) * kMiB;
  } else if (argument == "iops") {
    auto iops = whole_number("--volume " + v + ": IOPS", arg);
    if (!iops) return make_error(iops.error() + "; give the provisioned IOPS like " + type + ":40000");
    if (auto st = in_range(v, "IOPS", *iops, t["iops_range"], ""); !st) return make_error(st.error());
    p.iops = *iops;
    p.throughput_bytes_per_s = from_iops(t["throughput_mib_s"], *iops) * kMiB;
  } else if (argument == "iops,throughput") {
    auto comma = arg.find(',');
    if (comma == std::string::npos) {
      return make_error("--volume " + v + ": give IOPS and throughput like " + type + ":6000,500MiB/s");
    }
    auto iops = whole_number("--volume " + v + ": IOPS", arg.substr(0, comma));
    if (!iops) return make_error(iops.error());
    auto mib = throughput_mib(arg.substr(comma + 1));
    if (!mib) {
      return make_error("--volume " + v + ": throughput '" + excerpt(arg.substr(comma + 1)) +
                        "' is not a number in MiB/s or MB/s; give it like " + type + ":6000,500MiB/s");
    }
    if (auto st = in_range(v, "IOPS", *iops, t["iops_range"], ""); !st) return make_error(st.error());
    if (auto st = in_range(v, "throughput", *mib, t["throughput_range_mib_s"], " MiB/s"); !st) {
      return make_error(st.error());
    }
    double ratio = num(t, "max_throughput_per_iops_mib", INFINITY);
    if (*mib > ratio * *iops) {
      return make_error("--volume " + v + ": " + fmt(*mib) + " MiB/s is more than " + fmt(ratio) +
                        " MiB/s per provisioned IOPS allows (" + fmt(ratio * *iops) + " MiB/s at " +
                        fmt(*iops) + " IOPS)");
    }
    p.iops = *iops;
    p.throughput_bytes_per_s = *mib * kMiB;
  } else {
    return make_error("volume catalog: type " + type + " has an unknown argument kind '" + argument + "'");
  }
  return p;
}

Result<double> parse_tolerance(std::string_view text) {
  auto parsed = parse_percent(text);
  if (!parsed) return make_error("--tolerance '" + excerpt(text) + "': give a share like 95% or 0.95");
  double v = *parsed;
  if (text.back() == '%' || v > 1) v /= 100.0;
  if (!(v > 0) || v > 1) return make_error("--tolerance '" + excerpt(text) + "': must be above 0% and at most 100%");
  return v;
}

Expectation volume_expectation(const VolumePerformance& v, const JobSpec& spec, double tolerance) {
  Expectation e;
  e.origin = "--volume " + v.volume;
  e.op = Compare::Ge;
  char buf[96];
  double bs = spec.bs;
  if (v.iops * bs <= v.throughput_bytes_per_s) {
    e.quantity = Quantity::Iops;
    e.metric = "iops";
    e.provisioned = v.iops;
    e.threshold = std::ceil(v.iops * tolerance);
    std::snprintf(buf, sizeof buf, "iops>=%.0f", e.threshold);
  } else {
    e.quantity = Quantity::Bandwidth;
    e.metric = "bw";
    e.provisioned = v.throughput_bytes_per_s;
    e.threshold = v.throughput_bytes_per_s * tolerance;
    std::snprintf(buf, sizeof buf, "bw>=%.1fMiB/s", e.threshold / kMiB);
  }
  e.text = buf;
  return e;
}

std::optional<Expectation> volume_latency_expectation(const VolumePerformance& v, const JobSpec& spec,
                                                      double tolerance) {
  if (!(v.latency_ms > 0) || spec.iodepth != 1 || spec.numjobs != 1) return std::nullopt;
  Expectation e;
  e.origin = "--volume " + v.volume;
  e.quantity = Quantity::Latency;
  e.metric = "lat.mean";
  e.latency = "lat";
  e.stat = "mean";
  e.op = Compare::Le;
  e.threshold = v.latency_ms * 1e6 / tolerance;
  char buf[96];
  std::snprintf(buf, sizeof buf, "lat.mean<=%.4gms", e.threshold / 1e6);
  e.text = buf;
  return e;
}

std::vector<Expectation> volume_expectations(const VolumePerformance& v, const JobSpec& spec,
                                             double tolerance) {
  if (auto lat = volume_latency_expectation(v, spec, tolerance)) return {*lat};
  return {volume_expectation(v, spec, tolerance)};
}

}  // namespace diskprobe::profiles
