// The expectation parser (--expect and a profile's "expect"), and --volume and --tolerance,
// the other expressions a user types.
#include <string>

#include "diskprobe/acceptance/expect.h"
#include "diskprobe/stats/results.h"
#include "diskprobe/profiles/volumes.h"
#include "fuzz_input.h"

using namespace diskprobe;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text = fuzz::as_text(data, size);
  if (auto e = parse_expectation(text)) {
    Results r;
    r.runtime_s = 1;
    for (const auto& res : check_expectations({*e}, r))
      (void)format_quantity(res.expectation.quantity, res.measured);
  }
  static const auto catalog = profiles::load_volume_catalog({DISKPROBE_PROFILE_SOURCE_DIR});
  if (catalog) {
    if (auto v = profiles::volume_performance(text, *catalog)) {
      (void)profiles::volume_expectation(*v, JobSpec{}, 0.95);
    }
  }
  (void)profiles::parse_tolerance(text);
  return 0;
}
