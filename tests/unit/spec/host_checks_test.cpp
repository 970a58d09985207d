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

// fio's numa_cpu_nodes and numa_mem_policy on a fake sysfs of two nodes.
TEST_CASE("host checks: numa_cpu_nodes become the nodes' CPUs, within cpus_allowed; a missing node is named", "[numa]") {
  FakeSys sys("0-7");
  sys.file("sys/devices/system/node/online", "0-1");
  sys.file("sys/devices/system/node/node0/cpulist", "0-3");
  sys.file("sys/devices/system/node/node1/cpulist", "4-7");
  JobSpec one;
  one.numa.cpu_nodes = {1};
  std::string said;
  REQUIRE(resolve_numa(one, sys.root(), &said).ok());
  CHECK(one.cpus_allowed == std::vector<int>{4, 5, 6, 7});
  CHECK(said == "numa_cpu_nodes=1: CPUs 4-7");
  JobSpec both;
  both.numa.cpu_nodes = {0, 1};
  both.cpus_allowed = {2, 3, 4};
  REQUIRE(resolve_numa(both, sys.root(), nullptr).ok());
  CHECK(both.cpus_allowed == std::vector<int>{2, 3, 4});
  JobSpec apart;
  apart.numa.cpu_nodes = {0};
  apart.cpus_allowed = {5};
  auto st = resolve_numa(apart, sys.root(), nullptr);
  REQUIRE_FALSE(st.ok());
  CHECK_THAT(st.error(), Contains("share no CPU"));
  JobSpec missing;
  missing.numa.mem = NumaPolicy::Mem::Bind;
  missing.numa.mem_nodes = {1, 2, 3};
  st = resolve_numa(missing, sys.root(), nullptr);
  REQUIRE_FALSE(st.ok());
  CHECK_THAT(st.error(), Contains("numa_mem_policy: NUMA node 2-3 is not on this host (nodes: 0-1)"));
  JobSpec none;  // no numa option: nothing read, nothing changed
  REQUIRE(resolve_numa(none, SysRoot("/nonexistent", "/nonexistent"), nullptr).ok());
  CHECK(none.cpus_allowed.empty());
}
