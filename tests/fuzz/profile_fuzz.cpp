// The profile loader: one profile, and after a "\n----\n" line the base.json it may extend
// ("extends": "base" by name, "./base.json" by path, or "f.json" itself for a cycle).
#include <string>

#include "diskprobe/base/json_io.h"
#include "diskprobe/profiles/profiles.h"
#include "fuzz_input.h"

using namespace diskprobe;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto parts = fuzz::split(fuzz::as_text(data, size), "\n----\n", 2);
  const std::string& dir = fuzz::scratch_dir();
  std::string self = dir + "/f.json", base = dir + "/base.json";
  fuzz::write_file(self, parts[0]);
  if (parts.size() > 1) {
    fuzz::write_file(base, parts[1]);
  } else {
    std::remove(base.c_str());
  }
  auto spec = profiles::parse(std::string(parts[0]), self, {dir});
  if (spec) {
    (void)dump_json(to_json(*spec));
    (void)profiles::fio_command_line(*spec);
  }
  (void)profiles::load("base", {dir});
  return 0;
}
