#pragma once
// Numbers with units as a user writes them, on the command line and in profiles, parsed in one
// place so every option reads "4k", "30s" and "5%" alike. Each returns nothing (or an error) for
// text that is not wholly the form it reads; ranges are the caller's.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diskprobe/base/status.h"

namespace diskprobe {

// "1G", "512M", "4k", "4KiB", "4096" -> bytes (binary multiples: fio's default kb_base=1024).
Result<uint64_t> parse_size(std::string_view text);

// A plain decimal: digits with at most one inner point ("5", "2.5"), nothing else (no sign,
// exponent, space, hex, inf or nan, which strtod would take).
std::optional<double> parse_decimal(std::string_view text);

// Bytes as fio's options take them, the largest binary unit that divides it exactly: 4096 -> "4k",
// 1048576 -> "1m", 1536 -> "1536"; what parse_size reads back to the same number.
std::string fio_size_text(uint64_t bytes);

// "30", "30s", "500ms", "100us", "2m", "1h" -> seconds (fio's time suffixes; bare is seconds).
std::optional<double> parse_seconds(std::string_view text);

// "5%" or "5" -> 5 (a percentage); with percent_sign, only "5%". Not range-checked.
std::optional<double> parse_percent(std::string_view text, bool percent_sign = false);

// CPU numbers go below the kernel's largest NR_CPUS (x86-64 MAXSMP).
constexpr int kMaxCpus = 8192;

// A CPU list as sysfs and fio write it ("0-3,8", " 1 \n") -> each CPU once, sorted. A set, so
// "0-8191" said 8,000 times is 8,192 CPUs, not 65 million; more entries than CPUs is an error.
// Empty text is an empty list (sysfs writes one); the caller says whether that will do.
Result<std::vector<int>> parse_cpu_list(std::string_view text);

// {0,1,2,3,8} -> "0-3,8", sorted, each CPU once.
std::string format_cpu_list(const std::vector<int>& cpus);

}  // namespace diskprobe
