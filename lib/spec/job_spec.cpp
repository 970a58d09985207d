#include "diskprobe/spec/job_spec.h"

#include <array>
#include <bitset>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include "diskprobe/base/units.h"

namespace diskprobe {

namespace {

// fio's own words, so a profile or an override reads like a fio job file.
constexpr std::array<std::pair<RwMode, std::string_view>, 6> kRwNames{{
    {RwMode::Read, "read"},
    {RwMode::Write, "write"},
    {RwMode::RandRead, "randread"},
    {RwMode::RandWrite, "randwrite"},
    {RwMode::RandRW, "randrw"},
    {RwMode::ReadWrite, "readwrite"},
}};
constexpr std::array<std::pair<EngineKind, std::string_view>, 2> kEngineNames{{
    {EngineKind::IoUring, "io_uring"},
    {EngineKind::Sync, "sync"},
}};
constexpr std::array<std::pair<PinPolicy, std::string_view>, 3> kPinNames{{
    {PinPolicy::None, "none"},
    {PinPolicy::Irq, "irq"},
    {PinPolicy::HwQueues, "hw-queues"},
}};

constexpr std::array<std::pair<ContinueOnError, std::string_view>, 6> kContinueNames{{
    {ContinueOnError::None, "none"},
    {ContinueOnError::Read, "read"},
    {ContinueOnError::Write, "write"},
    {ContinueOnError::Io, "io"},
    {ContinueOnError::Verify, "verify"},
    {ContinueOnError::All, "all"},
}};
constexpr std::array<std::pair<SteadyStateKind, std::string_view>, 5> kSteadyNames{{
    {SteadyStateKind::None, "none"},
    {SteadyStateKind::Iops, "iops"},
    {SteadyStateKind::IopsSlope, "iops_slope"},
    {SteadyStateKind::Bw, "bw"},
    {SteadyStateKind::BwSlope, "bw_slope"},
}};
constexpr std::array<std::pair<VerifyKind, std::string_view>, 2> kVerifyNames{{
    {VerifyKind::None, "none"},
    {VerifyKind::Crc32c, "crc32c"},
}};

template <class E, size_t N>
std::string_view name_of(const std::array<std::pair<E, std::string_view>, N>& table, E value) {
  for (const auto& [v, name] : table) {
    if (v == value) return name;
  }
  return "unknown";
}

template <class E, size_t N>
std::optional<E> value_of(const std::array<std::pair<E, std::string_view>, N>& table, std::string_view s) {
  for (const auto& [v, name] : table) {
    if (name == s) return v;
  }
  return std::nullopt;
}

}  // namespace

std::string_view to_string(RwMode m) { return name_of(kRwNames, m); }
std::string_view to_string(EngineKind e) { return name_of(kEngineNames, e); }
std::string_view to_string(PinPolicy p) { return name_of(kPinNames, p); }

std::optional<RwMode> parse_rw(std::string_view s) {
  // fio also accepts "rw" for readwrite.
  if (s == "rw") return RwMode::ReadWrite;
  return value_of(kRwNames, s);
}
std::optional<EngineKind> parse_engine(std::string_view s) { return value_of(kEngineNames, s); }
std::optional<PinPolicy> parse_pinning(std::string_view s) { return value_of(kPinNames, s); }
std::string_view to_string(ContinueOnError c) { return name_of(kContinueNames, c); }
std::string_view to_string(VerifyKind v) { return name_of(kVerifyNames, v); }

std::optional<ContinueOnError> parse_continue_on_error(std::string_view s) {
  // fio also takes 0 and 1 (old boolean form: 1 = all).
  if (s == "0") return ContinueOnError::None;
  if (s == "1") return ContinueOnError::All;
  return value_of(kContinueNames, s);
}

std::optional<VerifyKind> parse_verify(std::string_view s) {
  if (s == "0") return VerifyKind::None;
  return value_of(kVerifyNames, s);
}

std::optional<std::vector<int>> parse_cpus_allowed(std::string_view s) {
  auto cpus = parse_cpu_list(s);
  if (!cpus || cpus->empty()) return std::nullopt;
  return *cpus;
}

std::optional<std::vector<double>> parse_percentile_list(std::string_view s) {
  std::vector<double> out;
  std::string text(s);
  for (char& c : text) {
    if (c == ':') c = ',';
  }
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string part = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    auto p = parse_decimal(part);
    if (!p || *p <= 0 || *p > 100) return std::nullopt;
    out.push_back(*p);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  if (out.empty() || out.size() > 64) return std::nullopt;
  return out;
}

std::string_view to_string(SteadyStateKind k) { return name_of(kSteadyNames, k); }

std::optional<SteadyState> parse_steadystate(std::string_view s) {
  SteadyState ss;
  if (s == "none" || s == "0") return ss;
  size_t colon = s.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  auto kind = value_of(kSteadyNames, s.substr(0, colon));
  if (!kind || *kind == SteadyStateKind::None) return std::nullopt;
  std::string_view limit = s.substr(colon + 1);
  ss.kind = *kind;
  ss.percent = !limit.empty() && limit.back() == '%';
  bool bw = *kind == SteadyStateKind::Bw || *kind == SteadyStateKind::BwSlope;
  if (ss.percent) {
    auto v = parse_percent(limit, true);
    if (!v) return std::nullopt;
    ss.limit = *v;
  } else if (auto v = parse_decimal(limit)) {
    ss.limit = *v;
  } else if (auto b = parse_size(limit); bw && b) {
    ss.limit = static_cast<double>(*b);  // bw:10m, bytes per second; an IOPS limit takes no unit
  } else {
    return std::nullopt;
  }
  if (!(ss.limit > 0)) return std::nullopt;  // a criterion below 0 is never met
  return ss;
}

std::string steadystate_text(const SteadyState& ss) {
  if (!ss.enabled()) return "none";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.10g%s", ss.limit, ss.percent ? "%" : "");
  return std::string(to_string(ss.kind)) + ":" + buf;
}

std::optional<std::array<uint64_t, 2>> parse_rate(std::string_view s, bool bytes) {
  auto one = [bytes](std::string_view t) -> std::optional<uint64_t> {
    // IOPS: whole I/Os, no unit ("0x" is no number).
    if (!bytes && t.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
    auto v = parse_size(t);
    return v ? std::optional<uint64_t>(*v) : std::nullopt;
  };
  size_t comma = s.find(',');
  if (comma == std::string_view::npos) {
    auto v = one(s);
    if (!v) return std::nullopt;
    return std::array<uint64_t, 2>{*v, *v};
  }
  std::string_view r = s.substr(0, comma), w = s.substr(comma + 1);
  if ((r.empty() && w.empty()) || w.find(',') != std::string_view::npos) return std::nullopt;
  std::array<uint64_t, 2> out{0, 0};
  if (!r.empty()) {
    auto v = one(r);
    if (!v) return std::nullopt;
    out[0] = *v;
  }
  if (!w.empty()) {
    auto v = one(w);
    if (!v) return std::nullopt;
    out[1] = *v;
  }
  return out;
}

}  // namespace diskprobe
