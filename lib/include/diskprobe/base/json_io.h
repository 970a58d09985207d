// JSON in and out at the edges: every document diskprobe reads (profiles, reports) is parsed
// here with limits, and every document it writes is dumped here whatever the strings' bytes.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "diskprobe/base/status.h"

namespace diskprobe {

// Deeper nesting than any profile or report has; a limit keeps recursive code (dump, copy,
// the error messages) off a stack that 60,000 levels would overflow.
constexpr size_t kMaxJsonDepth = 64;

// The document, or one line naming `origin`, where and why; never an exception, whatever the
// text (a number out of range such as 1e400, nesting past kMaxJsonDepth, invalid UTF-8).
Result<nlohmann::json> parse_json(std::string_view text, const std::string& origin);

// j as text; bytes that are not UTF-8 (a disk's model string, a path, argv) become U+FFFD
// instead of the exception that would lose the report.
std::string dump_json(const nlohmann::json& j, int indent = 2);

// s with each byte that is not part of valid UTF-8 replaced by U+FFFD (for XML and HTML).
std::string valid_utf8(std::string_view s);

// At most about `max` bytes of s for an error message, cut at a character boundary and
// marked "... (N bytes)" when cut: a 10 MB value must not make a 10 MB line.
std::string excerpt(std::string_view s, size_t max = 64);

}  // namespace diskprobe
