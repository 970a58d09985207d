// `diskprobe aggregate FILE.json... [--json]`.
#include <cstdio>
#include <string>
#include <vector>

#include "diskprobe/core/aggregate.h"
#include "diskprobe/core/json_io.h"
#include "diskprobe/core/run_summary.h"
#include "tools.h"

namespace diskprobe::cli {

int cmd_aggregate(const Args& a) {
  if (a.positional.empty()) {
    std::fprintf(stderr, "diskprobe: error: usage: diskprobe aggregate FILE.json... [--json]\n");
    return 2;
  }
  // Every unreadable report is named, not only the first.
  std::vector<RunSummary> runs;
  std::vector<std::string> problems;
  for (const auto& path : a.positional) {
    auto r = load_run_summary(path);
    if (r) {
      runs.push_back(std::move(*r));
    } else {
      problems.push_back(r.error());
    }
  }
  if (!problems.empty()) {
    for (const auto& p : problems) std::fprintf(stderr, "diskprobe: error: %s\n", p.c_str());
    return 2;
  }
  Fleet f = aggregate_runs(runs);
  std::string out = a.json ? dump_json(fleet_json(f)) + "\n" : fleet_text(f);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return f.failed.empty() ? 0 : 4;
}

}  // namespace diskprobe::cli
