#include "diskprobe/core/job_spec.h"

#include <array>
#include <utility>

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

}  // namespace diskprobe
