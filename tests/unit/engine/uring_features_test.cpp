#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "diskprobe/engine/uring_features.h"

using namespace diskprobe;

TEST_CASE("the io_uring probe reports every feature the engine uses, or why there is no ring", "[uring]") {
  UringFeatures f = probe_uring_features();
  CHECK_FALSE(f.kernel_release.empty());
  if (!f.ring) {
    INFO("no io_uring here: " << f.ring_error);
    CHECK_FALSE(f.ring_error.empty());
    CHECK(f.features.empty());
    CHECK_FALSE(f.all_supported());
    return;
  }
  std::vector<std::string> names;
  for (const auto& x : f.features) names.push_back(x.name);
  for (const char* want : {"registered files", "fixed buffers", "opcode READ_FIXED", "opcode WRITE_FIXED",
                           "opcode READ", "opcode WRITE"}) {
    CHECK(std::find(names.begin(), names.end(), want) != names.end());
  }
  // all_supported is exactly "every entry is supported".
  bool every =
      std::all_of(f.features.begin(), f.features.end(), [](const UringFeature& x) { return x.supported; });
  CHECK(f.all_supported() == every);
  for (const auto& x : f.features) {
    if (!x.supported) CHECK_FALSE(x.detail.empty());
  }
}
