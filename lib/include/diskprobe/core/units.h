#pragma once
// Numbers with units as a user writes them, on the command line and in profiles, parsed in one
// place so every option reads "4k", "30s" and "5%" alike. Each returns nothing (or an error) for
// text that is not wholly the form it reads; ranges are the caller's.
#include <cstdint>
#include <optional>
#include <string_view>

#include "diskprobe/core/result.h"

namespace diskprobe {

// "1G", "512M", "4k", "4KiB", "4096" -> bytes (binary multiples: fio's default kb_base=1024).
Result<uint64_t> parse_size(std::string_view text);

// A plain decimal: digits with at most one inner point ("5", "2.5"), nothing else (no sign,
// exponent, space, hex, inf or nan, which strtod would take).
std::optional<double> parse_decimal(std::string_view text);

// "30", "30s", "500ms", "100us", "2m", "1h" -> seconds (fio's time suffixes; bare is seconds).
std::optional<double> parse_seconds(std::string_view text);

// "5%" or "5" -> 5 (a percentage); with percent_sign, only "5%". Not range-checked.
std::optional<double> parse_percent(std::string_view text, bool percent_sign = false);

}  // namespace diskprobe
