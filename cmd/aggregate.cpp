// `diskprobe aggregate FILE.json... [--json]`.
#include <string>
#include <vector>

#include "diskprobe/fleet/aggregate.h"
#include "diskprobe/base/json_io.h"
#include "diskprobe/base/problems.h"
#include "diskprobe/report/run_summary.h"
#include "out.h"
#include "commands.h"

namespace diskprobe::cli {

int cmd_aggregate(const Args& a) {
  if (a.positional.empty()) {
    return fail(kUsage, "usage: diskprobe aggregate FILE.json... [--json]");
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
    return fail(kUsage, join(problems));
  }
  Fleet f = aggregate_runs(runs);
  std::string out = a.json ? dump_json(fleet_json(f)) + "\n" : fleet_text(f);
  print(out);
  return f.failed.empty() ? kOk : kExpectations;
}

}  // namespace diskprobe::cli
