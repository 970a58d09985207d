// stdout as the README promises it: the report, and in JSON mode (--json, --output-format json
// without --output) exactly one JSON document whatever the outcome — the report, or the
// error document {"exit_code", "error", "verdict" (refusals only)}. A write that fails (a full
// disk, a closed pipe, a closed stdout) is an error, exit 1.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "diskprobe/safety/preflight.h"

namespace diskprobe::cli {

enum Exit { kOk = 0, kRuntime = 1, kUsage = 2, kRefused = 3, kExpectations = 4 };

void set_json_mode(bool on);
void print(std::string_view s);
void print_json(const nlohmann::json& j);
// The error on stderr; in JSON mode also the error document, unless a document is out already.
int fail(int code, const std::string& message);
int refuse(const safety::Verdict& v, const std::string& message);  // exit 3, with the verdict
// The exit code once stdout is flushed: a failed write turns any code into 1, with the reason.
int finish(int code);

}  // namespace diskprobe::cli
