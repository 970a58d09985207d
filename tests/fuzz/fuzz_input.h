// What the fuzz targets share: the input split into parts, and a scratch directory that
// lives as long as the fuzzer process.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace diskprobe::fuzz {

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Parts of `in` between separators, at most `max` (the last holds the rest).
inline std::vector<std::string_view> split(std::string_view in, std::string_view sep, size_t max) {
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < max) {
    size_t at = in.find(sep);
    if (at == std::string_view::npos) break;
    parts.push_back(in.substr(0, at));
    in.remove_prefix(at + sep.size());
  }
  parts.push_back(in);
  return parts;
}

inline void write_file(const std::string& path, std::string_view content) {
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(content.data(), static_cast<std::streamsize>(content.size()));
}

// mkdtemp under $TMPDIR, removed at exit (libFuzzer ends with exit(), so atexit runs). Never
// destroyed itself: the exit handler still needs it.
inline const std::string& scratch_dir() {
  static const std::string* dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    auto* d = new std::string(std::string(tmp && *tmp ? tmp : "/tmp") + "/diskprobe-fuzz-XXXXXX");
    if (!::mkdtemp(d->data())) std::abort();
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(scratch_dir(), ec);
    });
    return d;
  }();
  return *dir;
}

}  // namespace diskprobe::fuzz
