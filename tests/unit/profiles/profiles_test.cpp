#include <catch2/catch.hpp>

#include "diskprobe/profiles/profiles.h"

using namespace diskprobe;

namespace {
const std::vector<std::string> kBuiltIn{DISKPROBE_PROFILE_SOURCE_DIR};
}

TEST_CASE("essd-plx-latency is test_plx_lat.sh's workload", "[profiles]") {
  auto spec = profiles::load("essd-plx-latency", kBuiltIn);
  INFO((spec.ok() ? "" : spec.error()));
  REQUIRE(spec.ok());
  // fio --runtime=30s --numjobs=1 --iodepth=1 --bs=4k --rw=randwrite --time_based=1 --direct=1
  CHECK(spec->rw == RwMode::RandWrite);
  CHECK(spec->bs == 4096);
  CHECK(spec->iodepth == 1);
  CHECK(spec->numjobs == 1);
  CHECK(spec->runtime_s == 30);
  CHECK(spec->time_based);
  CHECK(spec->direct);
  // echo 2 > rq_affinity; --cpus_allowed=$EFFECTIVE_SMP of the completion interrupt; idle=poll
  REQUIRE(spec->host.rq_affinity.has_value());
  CHECK(*spec->host.rq_affinity == 2);
  CHECK(spec->host.pinning == PinPolicy::Irq);
  CHECK(spec->host.advise_idle_poll);
  CHECK(spec->source.find("\"Testing ESSD PL-X cloud disk performance\": test_plx_lat.sh") != std::string::npos);
}

TEST_CASE("essd-plx-iops is test_plx_iops.sh's workload", "[profiles]") {
  auto spec = profiles::load("essd-plx-iops", kBuiltIn);
  REQUIRE(spec.ok());
  CHECK(spec->rw == RwMode::RandWrite);
  CHECK(spec->bs == 4096);
  CHECK(spec->iodepth == 64);
  CHECK(spec->numjobs == 64);
  CHECK(*spec->host.rq_affinity == 0);
  CHECK(spec->host.pinning == PinPolicy::None);
}

TEST_CASE("every built-in profile loads and is listed with a description", "[profiles]") {
  auto all = profiles::list(kBuiltIn);
  REQUIRE(all.size() >= 2);
  for (const auto& p : all) {
    INFO(p.name);
    CHECK_FALSE(p.description.empty());
    auto spec = profiles::load(p.name, kBuiltIn);
    CHECK(spec.ok());
    if (spec) CHECK(spec->name == p.name);
  }
}

TEST_CASE("an unknown profile names the known ones", "[profiles]") {
  auto spec = profiles::load("essd-nope", kBuiltIn);
  REQUIRE_FALSE(spec.ok());
  CHECK(spec.error().find("unknown profile 'essd-nope'") != std::string::npos);
  CHECK(spec.error().find("essd-plx-latency") != std::string::npos);
}

TEST_CASE("an invalid profile reports every problem with file and field", "[profiles]") {
  auto spec = profiles::parse(R"({"name": "x", "workload": {"rw": "randomwrite", "iodepth": 0, "bs": "4q",
                                  "turbo": true}, "host": {"rq_affinity": 3}})",
                              "/tmp/x.json");
  REQUIRE_FALSE(spec.ok());
  const std::string& e = spec.error();
  CHECK(e.find("/tmp/x.json: 5 problems") != std::string::npos);
  CHECK(e.find("workload.rw: 'randomwrite' is not allowed") != std::string::npos);
  CHECK(e.find("workload.iodepth: 0") != std::string::npos);
  CHECK(e.find("workload.bs: '4q'") != std::string::npos);
  CHECK(e.find("workload.turbo: unknown field") != std::string::npos);
  CHECK(e.find("host.rq_affinity: 3 is not allowed; use 0, 1 or 2") != std::string::npos);

  auto not_json = profiles::parse("{", "/tmp/y.json");
  REQUIRE_FALSE(not_json.ok());
  CHECK(not_json.error().find("/tmp/y.json: not valid JSON") != std::string::npos);
}

TEST_CASE("command-line overrides change the spec; bad ones are all reported", "[profiles]") {
  auto spec = profiles::load("essd-plx-latency", kBuiltIn);
  REQUIRE(spec.ok());
  REQUIRE(profiles::apply_overrides(*spec, {{"runtime", "5"}, {"iodepth", "8"}, {"bs", "16k"}, {"rw", "randread"},
                                            {"pinning", "none"}, {"rq_affinity", "1"}})
              .ok());
  CHECK(spec->runtime_s == 5);
  CHECK(spec->iodepth == 8);
  CHECK(spec->bs == 16384);
  CHECK(spec->rw == RwMode::RandRead);
  CHECK(spec->host.pinning == PinPolicy::None);
  CHECK(*spec->host.rq_affinity == 1);

  auto st = profiles::apply_overrides(*spec, {{"iodepth", "abc"}, {"runtime", "soon"}, {"numjobs", "-1"}});
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().find("--iodepth abc") != std::string::npos);
  CHECK(st.error().find("--runtime soon") != std::string::npos);
  CHECK(st.error().find("--numjobs -1") != std::string::npos);
  CHECK(spec->iodepth == 8);  // a failed override changes nothing it could not parse
}
