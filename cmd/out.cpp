#include "out.h"

#include "diskprobe/base/json_io.h"

#include <cstdio>
#include <optional>

#include "diskprobe/base/output_file.h"
#include "diskprobe/base/sysroot.h"

#include "diskprobe/base/write_out.h"
#include "diskprobe/cli/render.h"

namespace diskprobe::cli {
namespace {

struct Stdout {
  bool json = false;
  bool printed = false;
  std::string error;  // the first write that failed; nothing more is written after it
};
Stdout g_out;

// --output FILE in JSON mode: the first error's document, written by finish() when no report
// reached FILE. Written at the end, not at the error, so FILE's own checks have all run (or
// FILE was never opened) and the document is the outcome's first error.
struct JsonFile {
  std::string path;
  std::vector<std::string> others;
  bool done = false;  // the report is there, or FILE was refused
  std::optional<nlohmann::json> document;
};
JsonFile g_file;

int report_error(int code, const std::string& message, const safety::Verdict* verdict) {
  std::fprintf(stderr, "diskprobe: error: %s\n", message.c_str());
  if (g_out.json && !g_out.printed) print_json(error_json(code, message, verdict));
  if (!g_file.path.empty() && !g_file.document) g_file.document = error_json(code, message, verdict);
  return code;
}

// The error document into FILE, through the same checks as the report (never onto a device,
// the run's target or a kernel file): a FILE refused keeps the outcome's code, a write that
// fails is 1. Its contents are replaced: no report of an earlier run is left there to be taken
// for this one's.
int write_json_file(int code) {
  if (g_file.path.empty() || g_file.done || !g_file.document) return code;
  auto f = OutputFile::open("--output", g_file.path, SysRoot(), g_file.others);
  if (!f) {
    std::fprintf(stderr, "diskprobe: error: no error document written: %s\n", f.error().c_str());
    return code;
  }
  if (auto st = f->write(dump_json(*g_file.document) + "\n"); !st) {
    std::fprintf(stderr, "diskprobe: error: the error document is lost: %s\n", st.error().c_str());
    return kRuntime;
  }
  return code;
}

}  // namespace

void set_json_mode(bool on) { g_out.json = on; }

void set_json_file(std::string path, std::vector<std::string> others) {
  g_file.path = std::move(path);
  g_file.others = std::move(others);
}
void leave_json_file() { g_file.done = true; }

void print(std::string_view s) {
  g_out.printed = true;
  if (!g_out.error.empty()) return;
  if (auto st = write_stdout(s); !st) g_out.error = st.error();
}

// Bytes that are not UTF-8 (a device name, a path from argv) become U+FFFD instead of an
// exception that would lose the document.
void print_json(const nlohmann::json& j) {
  print(dump_json(j) + "\n");
}

int fail(int code, const std::string& message) { return report_error(code, message, nullptr); }

int refuse(const safety::Verdict& v, const std::string& message) {
  return report_error(kRefused, message, &v);
}

int finish(int code) {
  code = write_json_file(code);
  if (g_out.error.empty()) return code;
  std::fprintf(stderr, "diskprobe: error: the output is lost: %s\n", g_out.error.c_str());
  return kRuntime;
}

}  // namespace diskprobe::cli
