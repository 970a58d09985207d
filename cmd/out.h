// stdout as the README promises it: the report, and in JSON mode (--json, --output-format json
// without --output) exactly one JSON document whatever the outcome — the report, or the
// error document {"exit_code", "error", "verdict" (refusals only)}. A write that fails (a full
// disk, a closed pipe, a closed stdout) is an error, exit 1. With --output FILE and
// --output-format json the document's place is FILE: an outcome without a report leaves its
// error document there, whether FILE was opened yet or not, unless FILE itself was refused.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "diskprobe/run/exit_codes.h"
#include "diskprobe/safety/preflight.h"

namespace diskprobe::cli {

using diskprobe::Exit;  // the codes live in one place: diskprobe/run/exit_codes.h
using diskprobe::kExpectations;
using diskprobe::kOk;
using diskprobe::kRefused;
using diskprobe::kRuntime;
using diskprobe::kUsage;

void set_json_mode(bool on);
// FILE of --output FILE --output-format json, and the command line's other values (targets
// FILE must not be).
void set_json_file(std::string path, std::vector<std::string> others);
// The report is in FILE, or FILE was refused: no error document goes there.
void leave_json_file();
void print(std::string_view s);
void print_json(const nlohmann::json& j);
// The error on stderr; in JSON mode also the error document, unless a document is out already.
int fail(int code, const std::string& message);
int refuse(const safety::Verdict& v, const std::string& message);  // exit 3, with the verdict
// The exit code once stdout (and FILE's error document) is out: a failed write turns any code
// into 1, with the reason.
int finish(int code);

}  // namespace diskprobe::cli
