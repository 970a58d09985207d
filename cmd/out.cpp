#include "out.h"

#include "diskprobe/core/json_io.h"

#include <cstdio>

#include "diskprobe/core/write_out.h"
#include "render.h"

namespace diskprobe::cli {
namespace {

struct Stdout {
  bool json = false;
  bool printed = false;
  std::string error;  // the first write that failed; nothing more is written after it
};
Stdout g_out;

int report_error(int code, const std::string& message, const safety::Verdict* verdict) {
  std::fprintf(stderr, "diskprobe: error: %s\n", message.c_str());
  if (g_out.json && !g_out.printed) print_json(error_json(code, message, verdict));
  return code;
}

}  // namespace

void set_json_mode(bool on) { g_out.json = on; }

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
  if (g_out.error.empty()) return code;
  std::fprintf(stderr, "diskprobe: error: the output is lost: %s\n", g_out.error.c_str());
  return kRuntime;
}

}  // namespace diskprobe::cli
