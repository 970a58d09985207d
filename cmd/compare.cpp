// `diskprobe compare A.json B.json [--max-regression 5%] [--json]`.
#include <optional>
#include <string>

#include "diskprobe/fleet/compare.h"
#include "diskprobe/base/json_io.h"
#include "diskprobe/report/run_summary.h"
#include "diskprobe/base/units.h"
#include "out.h"
#include "commands.h"

namespace diskprobe::cli {

namespace {

int usage_error(const std::string& message) { return fail(kUsage, message); }

}  // namespace

int cmd_compare(const Args& a) {
  if (a.positional.size() != 2) {
    return usage_error("usage: diskprobe compare A.json B.json [--max-regression PERCENT] [--json]");
  }
  std::optional<double> tolerance;
  if (!a.max_regression.empty()) {
    auto p = parse_percent(a.max_regression);
    if (!p) {
      return usage_error("--max-regression '" + excerpt(a.max_regression) +
                         "' is not a percentage: use a number like 5% or 2.5");
    }
    tolerance = *p;
  }
  auto run_a = load_run_summary(a.positional[0]);
  if (!run_a) return usage_error(run_a.error());
  auto run_b = load_run_summary(a.positional[1]);
  if (!run_b) return usage_error(run_b.error());

  Comparison c = compare_runs(*run_a, *run_b, tolerance);
  std::string out =
      a.json ? dump_json(comparison_json(c, *run_a, *run_b)) + "\n" : comparison_text(c, *run_a, *run_b);
  print(out);
  return c.regressed ? kExpectations : kOk;
}

}  // namespace diskprobe::cli
