// cpus_allowed against the host (validate_on_host) on a fake sysfs: the CPUs it names as
// offline or not allowed are written as one CPU list, and the affinity mask reaches every CPU
// a CPU list can hold (it stopped at glibc's 1,024, so CPU 2000 passed and failed later).
#include <sched.h>

#include <catch2/catch.hpp>
#include <string>

#include "diskprobe/base/sysroot.h"
#include "diskprobe/spec/host_checks.h"
#include "fake_sys.h"

namespace {

using namespace diskprobe;
using Catch::Matchers::Contains;

// A sysfs tree with only devices/system/cpu/online, removed when the test ends.
class FakeSys : public spec_fixtures::FakeSys {
 public:
  explicit FakeSys(const std::string& online) { file("sys/devices/system/cpu/online", online); }
};

}  // namespace

TEST_CASE("host checks: offline CPUs are named as one sorted CPU list with ranges", "[cpu_list]") {
  FakeSys sys("0-1");
  JobSpec spec;
  spec.cpus_allowed = {9, 5, 7, 6};
  auto st = validate_on_host(spec, sys.root());
  REQUIRE_FALSE(st.ok());
  CHECK_THAT(st.error(), Contains("cpus_allowed: CPU 5-7,9 is not online (online: 0-1)"));
}

TEST_CASE("host checks: a CPU above 1023 outside this process's affinity is refused here", "[cpu_list]") {
  FakeSys sys("0-4095");
  JobSpec spec;
  spec.cpus_allowed = {2000, 2001};
  auto st = validate_on_host(spec, sys.root());
  REQUIRE_FALSE(st.ok());
  CHECK_THAT(st.error(), Contains("cpus_allowed: CPU 2000-2001 is not allowed for this process"));
}

TEST_CASE("host checks: CPUs online and allowed pass", "[cpu_list]") {
  FakeSys sys("0-4095");
  JobSpec spec;
  spec.cpus_allowed = {0};  // every process may run on some CPU; 0 is online on any host
  cpu_set_t mask;
  CPU_ZERO(&mask);
  REQUIRE(sched_getaffinity(0, sizeof mask, &mask) == 0);
  if (!CPU_ISSET(0, &mask)) return;  // pinned away from CPU 0 (taskset): nothing to check
  CHECK(validate_on_host(spec, sys.root()).ok());
}
