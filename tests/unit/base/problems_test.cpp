// Every problem said at once (lib/problems), in the one form every message uses.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "diskprobe/base/problems.h"

using namespace diskprobe;

TEST_CASE("join_problems counts them and shows at most the cap", "[problems]") {
  std::vector<std::string> p{"a", "b", "c"};
  CHECK(join_problems("f.json", {"a"}) == "f.json: 1 problem: a");
  CHECK(join_problems("f.json", p) == "f.json: 3 problems: a; b; c");
  CHECK(join_problems("f.json", p, 2) == "f.json: 3 problems: a; b; and 1 more");
  CHECK(join_problems("f.json", p, 3) == "f.json: 3 problems: a; b; c");
  CHECK(join(p, ", ") == "a, b, c");
  CHECK(join({}) == "");
}

TEST_CASE("problems_status is Ok for none and one error for all", "[problems]") {
  CHECK(problems_status({}).ok());
  auto s = problems_status({"iodepth 0 is out of range", "numjobs 0 is out of range"});
  REQUIRE_FALSE(s.ok());
  CHECK(s.error() == "iodepth 0 is out of range; numjobs 0 is out of range");
}
