// The report reader of `compare` and `aggregate`: two JSON reports separated by a
// "\n----\n" line, compared, aggregated and rendered as both commands render them.
#include <string>
#include <vector>

#include "diskprobe/fleet/aggregate.h"
#include "diskprobe/fleet/compare.h"
#include "diskprobe/base/json_io.h"
#include "diskprobe/report/run_summary.h"
#include "fuzz_input.h"

using namespace diskprobe;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto parts = fuzz::split(fuzz::as_text(data, size), "\n----\n", 2);
  auto a = parse_run_summary(parts[0], "a.json");
  if (!a) return 0;
  auto b = parts.size() > 1 ? parse_run_summary(parts[1], "b.json") : a;
  if (!b) return 0;
  Comparison c = compare_runs(*a, *b, 5.0);
  (void)comparison_text(c, *a, *b);
  (void)dump_json(comparison_json(c, *a, *b));
  Fleet f = aggregate_runs({*a, *b});
  (void)fleet_text(f);
  (void)dump_json(fleet_json(f));
  return 0;
}
