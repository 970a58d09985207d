// Report writers: a fio-like text report and a JSON document.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "diskprobe/core/results.h"

namespace diskprobe {

enum class OutputFormat { Text, Json };
std::optional<OutputFormat> parse_output_format(std::string_view s);

// fio's layout: "write: IOPS=..., BW=...", slat/clat/lat lines with auto units,
// clat percentiles 1..99.99, bw/iops per-second samples, the latency distribution, cpu,
// disk stats.
std::string render_text(const Results& r);
// Every number carries its unit in its name (lat_ns, bw_bytes_per_s).
nlohmann::json to_json(const Results& r);
std::string render(const Results& r, OutputFormat f);

}  // namespace diskprobe
