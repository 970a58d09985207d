// `diskprobe profiles` and `diskprobe profile show NAME`.
#include <cstdio>

#include "commands.h"
#include "diskprobe/base/json_io.h"
#include "diskprobe/profiles/profiles.h"
#include "out.h"
#include "diskprobe/cli/render.h"

namespace diskprobe::cli {

using nlohmann::json;

int cmd_profiles(const cli::Args& a) {
  auto all = profiles::list();
  if (a.json) {
    json out = json::array();
    for (const auto& p : all) out.push_back({{"name", p.name}, {"description", p.description}, {"path", p.path}});
    print_json(out);
    return kOk;
  }
  for (const auto& p : all) {
    char line[512];
    std::snprintf(line, sizeof line, "%-24s %s\n", p.name.c_str(), p.description.c_str());
    print(line);
  }
  return kOk;
}

int cmd_profile(const cli::Args& a) {
  if (a.positional.size() != 2 || a.positional[0] != "show") {
    return fail(kUsage, "usage: diskprobe profile show NAME [--json]");
  }
  auto spec = spec_from(a, a.positional[1]);
  if (!spec) return fail(kUsage, spec.error());
  print(a.json ? dump_json(diskprobe::to_json(*spec)) + "\n" : cli::spec_text(*spec));
  return kOk;
}

}  // namespace diskprobe::cli
