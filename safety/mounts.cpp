#include "diskprobe/safety/mounts.h"

#include <cstdio>
#include <filesystem>

namespace diskprobe::safety {
namespace {

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t b = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > b) out.push_back(line.substr(b, i - b));
  }
  return out;
}

bool is_octal(char c) { return c >= '0' && c <= '7'; }

// The kernel writes space, tab, newline and backslash in paths as \040, \011, \012, \134.
std::string unescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && is_octal(s[i + 1]) && is_octal(s[i + 2]) && is_octal(s[i + 3])) {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

template <class F>
Status for_each_line(std::string_view text, F&& f) {
  size_t lineno = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++lineno;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    auto st = f(lineno, line);
    if (!st) return st;
  }
  return Ok{};
}

Error bad_line(std::string_view where, size_t lineno, std::string_view line, const char* expected) {
  return make_error(std::string(where) + ":" + std::to_string(lineno) + ": expected " + expected +
                    ", read '" + std::string(line) + "'");
}

}  // namespace

Result<std::vector<MountEntry>> parse_mountinfo(std::string_view text, std::string_view where) {
  std::vector<MountEntry> mounts;
  auto st = for_each_line(text, [&](size_t lineno, std::string_view line) -> Status {
    // id parent major:minor root mount-point options [optional...] - fstype source superopts
    auto f = split_fields(line);
    size_t dash = 6;
    while (dash < f.size() && f[dash] != "-") ++dash;
    if (f.size() < 7 || dash + 2 >= f.size()) {
      return bad_line(where, lineno, line,
                      "'ID PARENT MAJOR:MINOR ROOT MOUNTPOINT OPTIONS ... - TYPE SOURCE ...'");
    }
    MountEntry m;
    std::string devfield(f[2]);
    char tail = 0;
    if (std::sscanf(devfield.c_str(), "%u:%u%c", &m.dev.major, &m.dev.minor, &tail) != 2) {
      return bad_line(where, lineno, line, "MAJOR:MINOR in field 3");
    }
    m.mount_point = unescape(f[4]);
    m.fstype = unescape(f[dash + 1]);
    m.source = unescape(f[dash + 2]);
    mounts.push_back(std::move(m));
    return Ok{};
  });
  if (!st) return make_error(st.error());
  return mounts;
}

Result<std::vector<SwapEntry>> parse_swaps(std::string_view text, std::string_view where) {
  std::vector<SwapEntry> swaps;
  auto st = for_each_line(text, [&](size_t lineno, std::string_view line) -> Status {
    auto f = split_fields(line);
    if (lineno == 1 && !f.empty() && f[0] == "Filename") return Ok{};  // the header
    if (f.size() < 5) return bad_line(where, lineno, line, "'FILENAME TYPE SIZE USED PRIORITY'");
    swaps.push_back(SwapEntry{unescape(f[0]), std::string(f[1])});
    return Ok{};
  });
  if (!st) return make_error(st.error());
  return swaps;
}

Result<std::vector<MountEntry>> read_mounts(const SysRoot& root) {
  auto text = root.read_proc_raw("self/mountinfo");
  if (!text) return make_error(text.error());
  return parse_mountinfo(*text, root.proc_path("self/mountinfo"));
}

Result<std::vector<SwapEntry>> read_swaps(const SysRoot& root) {
  std::error_code ec;
  if (!std::filesystem::exists(root.proc_path("swaps"), ec) && !ec) {
    return std::vector<SwapEntry>{};  // CONFIG_SWAP=n
  }
  auto text = root.read_proc_raw("swaps");
  if (!text) return make_error(text.error());
  return parse_swaps(*text, root.proc_path("swaps"));
}

}  // namespace diskprobe::safety
