// The command line a user pastes from a vendor's fio script: one word per line, parsed as
// `diskprobe WORDS...`, its overrides applied to a profile and the result rendered.
#include <string>
#include <vector>

#include "diskprobe/cli/args.h"
#include "diskprobe/cli/render.h"
#include "diskprobe/base/json_io.h"
#include "diskprobe/base/units.h"
#include "diskprobe/profiles/profiles.h"
#include "fuzz_input.h"

using namespace diskprobe;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto words = fuzz::split(fuzz::as_text(data, size), "\n", 64);
  std::vector<std::string> owned{"diskprobe"};
  for (auto w : words) owned.emplace_back(w);
  std::vector<char*> argv;
  for (auto& w : owned) argv.push_back(w.data());
  argv.push_back(nullptr);
  std::string error;
  auto args = cli::parse(static_cast<int>(owned.size()), argv.data(), error);
  if (!args) return 0;
  JobSpec spec;
  spec.name = args->name;
  spec.runtime_s = 1;
  if (profiles::apply_overrides(spec, args->overrides)) {
    (void)cli::spec_text(spec);
    (void)dump_json(to_json(spec));
  }
  if (!args->scratch.empty()) (void)parse_size(args->scratch);
  return 0;
}
