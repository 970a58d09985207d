// The one validator of a JobSpec against its target (lib/spec/validate.h): what it refuses,
// what it says to do instead, and every problem in one message, in a fixed order.
#include <catch2/catch.hpp>
#include <string>

#include "diskprobe/spec/validate.h"

using namespace diskprobe;
using Catch::Matchers::Contains;

namespace {

// A spec with six problems, one of each kind validate() checks in turn.
JobSpec six_problems() {
  JobSpec s;
  s.bs = 1000;
  s.offset = 100;
  s.iodepth = 0;
  s.numjobs = 5000;
  s.runtime_s = 0;
  s.time_based = true;
  s.rwmixread = 101;
  return s;
}

}  // namespace

TEST_CASE("validate: a good spec passes") {
  JobSpec s;
  CHECK(validate(s, Target{"/dev/vdc", 1 << 30, 512}).ok());
  s.bs = 512;
  CHECK(validate(s, Target{"/dev/vdc", 1 << 30, 512}).ok());
  s.direct = false;
  s.bs = 1000;  // buffered I/O takes any size
  CHECK(validate(s, Target{"/dev/vdc", 1 << 30, 512}).ok());
}

TEST_CASE("validate: bs not a multiple of the logical block size under O_DIRECT") {
  JobSpec s;
  s.bs = 1000;
  auto st = validate(s, Target{"/dev/vdc", 1 << 30, 512});
  REQUIRE_FALSE(st.ok());
  CHECK_THAT(st.error(),
             Contains("bs 1000 is not a multiple of the device's logical block size 512: use bs=1024"));
  s.bs = 4000;
  CHECK_THAT(validate(s, Target{"/dev/vdc", 1 << 30, 512}).error(), Contains("use bs=4096"));
  s.bs = 512;
  CHECK_THAT(validate(s, Target{"/dev/vdc", 1 << 30, 4096}).error(),
             Contains("bs 512 is not a multiple of the device's logical block size 4096: use bs=4096"));
}

TEST_CASE("validate: a region outside the target") {
  JobSpec s;
  s.offset = 1 << 20;
  s.size = 1 << 20;
  auto st = validate(s, Target{"/dev/vdc", 1 << 20, 512});
  REQUIRE_FALSE(st.ok());
  CHECK_THAT(st.error(), Contains("offset 1048576 is at or past the end of /dev/vdc (1048576 bytes)"));

  s.offset = 0;
  s.size = 2 << 20;
  CHECK_THAT(validate(s, Target{"/dev/vdc", 1 << 20, 512}).error(),
             Contains("runs past the end of /dev/vdc (1048576 bytes): use size=1048576 or less"));

  s.size = 0;
  s.offset = (1 << 20) - 512;  // room for less than one 4k block
  CHECK_THAT(validate(s, Target{"/dev/vdc", 1 << 20, 512}).error(),
             Contains("holds no whole block of bs 4096"));
}

TEST_CASE("validate: the problems come in one order: blocks and region, engine options, durations, mix") {
  const JobSpec s = six_problems();
  const std::string e = validate(s, Target{"/dev/vdc", 1 << 30, 512}).error();
  size_t at = 0;
  for (const char* what : {"bs 1000", "offset 100", "iodepth 0", "numjobs 5000", "time_based needs", "rwmixread 101"}) {
    INFO(what << " in " << e);
    size_t pos = e.find(what);
    REQUIRE(pos != std::string::npos);
    CHECK(pos >= at);
    at = pos;
  }
}

TEST_CASE("validate: the limits are the header's constants") {
  JobSpec s;
  s.iodepth = static_cast<uint32_t>(kMaxIodepth);
  s.numjobs = static_cast<uint32_t>(kMaxNumjobs);
  s.runtime_s = kMaxSeconds;
  s.ramp_time_s = kMaxSeconds;
  CHECK(validate(s, Target{"/dev/vdc", 1 << 30, 512}).ok());
  s.iodepth += 1;
  s.numjobs += 1;
  s.runtime_s += 1;
  s.ramp_time_s += 1;
  const std::string e = validate(s, Target{"/dev/vdc", 1 << 30, 512}).error();
  CHECK_THAT(e, Contains("/dev/vdc: 4 problems: "));
  CHECK_THAT(e, Contains("iodepth 65537 is out of range: use 1 to 65536"));
  CHECK_THAT(e, Contains("numjobs 4097 is out of range: use 1 to 4096"));
  CHECK_THAT(e, Contains("runtime 86401 s is above the limit of 86400 s"));
  CHECK_THAT(e, Contains("ramp_time 86401 s is above the limit of 86400 s"));
}

TEST_CASE("validate: every problem is reported in one message") {
  const JobSpec s = six_problems();
  auto st = validate(s, Target{"/dev/vdc", 1 << 30, 512});
  REQUIRE_FALSE(st.ok());
  const auto& e = st.error();
  CHECK_THAT(e, Contains("/dev/vdc: 6 problems: "));
  CHECK_THAT(e, Contains("bs 1000 is not a multiple"));
  CHECK_THAT(e, Contains("offset 100 is not aligned to the device's logical block size 512"));
  CHECK_THAT(e, Contains("iodepth 0 is out of range: use 1 to 65536"));
  CHECK_THAT(e, Contains("numjobs 5000 is out of range: use 1 to 4096"));
  CHECK_THAT(e, Contains("time_based needs a runtime above 0 s"));
  CHECK_THAT(e, Contains("rwmixread 101 is above 100 percent"));
}

// Before: only runtime <= 0 was refused, and the engine truncated runtime * 1e9 to 0 ns, which
// means no limit: a time-based run with runtime=1e-10 never ended.
TEST_CASE("validate: a runtime above 0 but under 1 us is refused, not run forever") {
  JobSpec s;
  s.time_based = true;
  for (double tiny : {1e-10, 5e-10, 9.99e-7}) {
    s.runtime_s = tiny;
    auto st = validate(s, Target{"/dev/vdc", 1 << 30, 512});
    REQUIRE_FALSE(st.ok());
    CHECK_THAT(st.error(), Contains(" s is above 0 but below 1 us, which the engine would take as no limit at all"));
    CHECK_FALSE(validate_spec(s).ok());  // and before anything needs the target
  }
  s.time_based = false;  // a size-bound run capped by runtime: the same
  s.runtime_s = 1e-10;
  CHECK_THAT(validate(s, Target{"/dev/vdc", 1 << 30, 512}).error(), Contains("runtime 1e-10 s is above 0 but below 1 us"));
  for (double fine : {1e-6, 0.5, 30.0}) {  // 1us, the parser's smallest unit, and up
    s.time_based = true;
    s.runtime_s = fine;
    CHECK(validate(s, Target{"/dev/vdc", 1 << 30, 512}).ok());
  }
}

TEST_CASE("validate: a ramp_time or ss_ramp above 0 but under 1 us is refused") {
  JobSpec s;
  s.time_based = true;
  s.runtime_s = 30;
  s.ramp_time_s = 1e-10;
  CHECK_THAT(validate(s, Target{"/dev/vdc", 1 << 30, 512}).error(),
             Contains("ramp_time 1e-10 s is above 0 but below 1 us, which the engine would take as no ramp"));
  s.ramp_time_s = 0;  // none at all is fine
  CHECK(validate(s, Target{"/dev/vdc", 1 << 30, 512}).ok());
  s.steadystate = {SteadyStateKind::Iops, 1, true, 10, 1e-10};
  CHECK_THAT(validate(s, Target{"/dev/vdc", 1 << 30, 512}).error(),
             Contains("ss_ramp 1e-10 s is above 0 but below 1 us"));
  s.steadystate.ramp_s = 0;
  CHECK(validate(s, Target{"/dev/vdc", 1 << 30, 512}).ok());
}

TEST_CASE("validate_spec: what needs no target, and nothing that does") {
  JobSpec s;
  s.runtime_s = 99999;
  auto st = validate_spec(s);
  REQUIRE_FALSE(st.ok());
  CHECK_THAT(st.error(), Contains("workload diskprobe: 1 problem: runtime 99999 s is above the limit of 86400 s"));
  s.runtime_s = 30;
  s.offset = 1ull << 40;  // past the end of any target here: a target's question
  s.bs = 1000;            // not a multiple of 512: the same
  s.hipri = true;         // poll queues: the same
  s.numjobs = 5000;       // the tuning plan may clamp it: judged with the target
  auto st2 = validate_spec(s);
  INFO((st2.ok() ? std::string() : st2.error()));
  CHECK(st2.ok());
  s.bs = 100;
  CHECK_THAT(validate_spec(s).error(), Contains("bs 100 is below 512 bytes"));
}
