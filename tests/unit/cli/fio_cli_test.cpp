// fio's spellings on `diskprobe run`'s command line: --name, --filename, --ioengine,
// --group_reporting, one-dash options, dashes in names, and fio options that mean nothing
// to diskprobe refused with a reason. The seed lines themselves: seed_profiles_test.cpp.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "diskprobe/cli/args.h"
#include "diskprobe/report/report.h"
#include "diskprobe/stats/results.h"
#include "diskprobe/profiles/profiles.h"

using namespace diskprobe;
using Catch::Matchers::Contains;

namespace {

std::optional<cli::Args> parse(std::vector<std::string> words, std::string& error) {
  words.insert(words.begin(), "diskprobe");
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  return cli::parse(static_cast<int>(argv.size()), argv.data(), error);
}

JobSpec spec_of(const cli::Args& a) {
  JobSpec s;
  auto st = profiles::apply_overrides(s, a.overrides);
  INFO((st.ok() ? std::string() : st.error()));
  REQUIRE(st.ok());
  return s;
}

}  // namespace

TEST_CASE("fio spellings: --name, --filename, --ioengine psync, one dash, dashes for underscores", "[cli]") {
  std::string error;
  auto a = parse({"run", "--profile", "x", "--name", "mine", "-filename=/dev/vdc", "--ioengine=psync",
                  "-iodepth=8", "--time-based", "--ramp-time", "2", "--rwmixread=70", "--rw", "randrw",
                  "--cpus_allowed=0-1", "--cpus-allowed-policy=split", "--offset=1g", "--size", "50%",
                  "--randrepeat=0", "--refill_buffers", "--norandommap", "--numjobs", "2", "--bs", "4k,16k"},
                 error);
  INFO(error);
  REQUIRE(a.has_value());
  CHECK(a->name == "mine");
  CHECK(a->filename == "/dev/vdc");
  CHECK(a->positional.empty());
  JobSpec s = spec_of(*a);
  CHECK(s.engine == EngineKind::Sync);
  CHECK(s.iodepth == 8);
  CHECK(s.time_based);
  CHECK(s.ramp_time_s == 2);
  CHECK(s.rwmixread == 70);
  CHECK(s.rw == RwMode::RandRW);
  CHECK(s.cpus_allowed == std::vector<int>{0, 1});
  CHECK(s.cpus_allowed_split);
  CHECK(s.offset == 1ull << 30);
  CHECK(s.size_percent == 50);
  CHECK_FALSE(s.randrepeat);
  CHECK(s.refill_buffers);
  CHECK(s.norandommap);
  CHECK(s.numjobs == 2);
  CHECK(s.write_bs() == 16384);

  // fio takes the last of two; one diskprobe run is one job, so two are refused (issue 32).
  a = parse({"run", "--ioengine", "io_uring", "--ioengine=sync"}, error);
  CHECK_FALSE(a.has_value());
  CHECK(error.find("--ioengine is given twice (io_uring, then sync)") != std::string::npos);
  // diskprobe's own options keep their dashes.
  a = parse({"run", "--no-tune", "--output-format", "json"}, error);
  REQUIRE(a.has_value());
  CHECK(a->no_tune);
}

TEST_CASE("fio spellings: other engines and a second target are one-line usage errors", "[cli]") {
  struct Case {
    std::vector<std::string> words;
    const char* says;
  } cases[] = {
      {{"run", "--ioengine", "posixaio"}, "--ioengine posixaio: diskprobe runs io_uring"},
      {{"run", "--ioengine=mmap"}, "or sync/psync"},
      {{"run", "--filename=/dev/vdc", "/dev/vdd"}, "--filename /dev/vdc and DEVICE /dev/vdd name two targets"},
      {{"run", "--iodepth_batch_complete_max"}, "--iodepth_batch_complete_max needs a value"},
  };
  for (const auto& c : cases) {
    std::string error;
    INFO(c.words.back());
    CHECK_FALSE(parse(c.words, error).has_value());
    CHECK_THAT(error, Contains(c.says));
    CHECK(error.find('\n') == std::string::npos);
  }
  std::string error;
  auto same = parse({"run", "--filename", "/dev/vdc", "/dev/vdc"}, error);  // the same target twice is fine
  CHECK(same.has_value());
}

TEST_CASE("fio spellings: libaio runs on io_uring and what diskprobe always does is ignored, each with a note",
          "[cli]") {
  std::string error;
  auto a = parse({"run", "-ioengine=libaio", "-gtod_reduce=1", "--iodepth_batch_complete_min=8",
                  "--iodepth-batch-complete-max", "32", "--fixedbufs", "--registerfiles", "1", "vdc"},
                 error);
  INFO(error);
  REQUIRE(a.has_value());
  CHECK(spec_of(*a).engine == EngineKind::IoUring);
  CHECK(a->positional == std::vector<std::string>{"vdc"});  // "1" went to --registerfiles, vdc stays
  CHECK(a->overrides.count("gtod_reduce") == 0);
  REQUIRE(a->notes.size() == 6);
  CHECK_THAT(a->notes[0], Contains("--ioengine libaio: ran on diskprobe's io_uring engine"));
  CHECK_THAT(a->notes[1], Contains("--gtod_reduce=1 ignored: diskprobe always measures every I/O's latency"));
  CHECK_THAT(a->notes[2], Contains("--iodepth_batch_complete_min=8 ignored: diskprobe reaps every completion"));
  CHECK_THAT(a->notes[3], Contains("--iodepth_batch_complete_max=32 ignored"));
  CHECK_THAT(a->notes[4], Contains("--fixedbufs ignored: diskprobe always registers its buffers"));
  CHECK_THAT(a->notes[5], Contains("--registerfiles=1 ignored"));
}

// iodepth_batch_submit was once taken and ignored with a note like gtod_reduce; it is a workload
// option now (loop runs faster fed one I/O per call), so a pasted fio line's value is used.
TEST_CASE("fio spellings: iodepth_batch_submit and its alias iodepth_batch set the submission batch", "[cli]") {
  struct Case {
    std::vector<std::string> words;
    int want;
  } cases[] = {
      {{"run", "--iodepth_batch_submit=1", "vdc"}, 1},
      {{"run", "-iodepth_batch_submit=8", "vdc"}, 8},
      {{"run", "--iodepth-batch-submit", "0", "vdc"}, 0},
      {{"run", "--iodepth_batch", "4", "vdc"}, 4},
      {{"run", "-iodepth_batch=auto", "vdc"}, JobSpec::kBatchSubmitAuto},
      {{"run", "vdc"}, JobSpec::kBatchSubmitAuto},
  };
  for (const auto& c : cases) {
    std::string error;
    INFO(c.words[1]);
    auto a = parse(c.words, error);
    INFO(error);
    REQUIRE(a.has_value());
    CHECK(spec_of(*a).iodepth_batch_submit == c.want);
    CHECK(a->notes.empty());
    CHECK(a->positional == std::vector<std::string>{"vdc"});
  }
  std::string error;
  auto bad = parse({"run", "--iodepth_batch", "many", "vdc"}, error);
  REQUIRE(bad.has_value());
  JobSpec s;
  auto st = profiles::apply_overrides(s, bad->overrides);
  REQUIRE_FALSE(st.ok());
  CHECK_THAT(st.error(), Contains("iodepth_batch_submit") && Contains("auto or a count N >= 0"));
}

TEST_CASE("group_reporting: on, the text report sums the jobs; off, each job gets its own block too", "[cli][report]") {
  std::string error;
  auto a = parse({"run", "--group_reporting=0"}, error);
  REQUIRE(a.has_value());
  JobSpec s = spec_of(*a);
  CHECK_FALSE(s.group_reporting);
  CHECK_THAT(profiles::fio_command_line(s), !Contains("group_reporting"));
  CHECK(spec_of(*parse({"run", "--group_reporting"}, error)).group_reporting);

  Results r;
  s.name = "two";
  r.runtime_s = 1;
  r.jobs.resize(2);
  for (unsigned j = 0; j < 2; ++j) {
    r.jobs[j].job = j;
    r.jobs[j].runtime_s = 1;
    r.jobs[j].write.ios = 1000 * (j + 1);
    r.jobs[j].write.bytes = 4096 * 1000 * (j + 1);
    r.jobs[j].write.lat.record(10000);
  }
  r.aggregate();
  std::string text = render_text(report_of(r, s, "/dev/vdc"));
  CHECK_THAT(text, Contains("two: (groupid=0, job=0)"));
  CHECK_THAT(text, Contains("two: (groupid=0, job=1)"));
  CHECK_THAT(text, Contains("write: IOPS=1000,") && Contains("write: IOPS=2000,") && Contains("write: IOPS=3000,"));
  s.group_reporting = true;
  text = render_text(report_of(r, s, "/dev/vdc"));
  CHECK_THAT(text, !Contains("job=0"));
  CHECK_THAT(text, Contains("write: IOPS=3000,"));
}

TEST_CASE("fio spellings: rate_iops, rate, ss, ss_dur and ss_ramp from a pasted fio line", "[cli][rate]") {
  std::string error;
  auto a = parse({"run", "--profile", "x", "vdc", "--rate_iops=1237,", "-rate=,7m", "--ss=iops_slope:0.1%",
                  "--ss_dur=30s", "--ss-ramp", "10s", "--time_based"},
                 error);
  INFO(error);
  REQUIRE(a.has_value());
  JobSpec s = spec_of(*a);
  CHECK(s.rate_iops[0] == 1237);
  CHECK(s.rate_iops[1] == 0);
  CHECK(s.rate_bytes[0] == 0);
  CHECK(s.rate_bytes[1] == 7u << 20);
  CHECK(s.steadystate.kind == SteadyStateKind::IopsSlope);
  CHECK(s.steadystate.limit == Approx(0.1));
  CHECK(s.steadystate.percent);
  CHECK(s.steadystate.duration_s == 30);
  CHECK(s.steadystate.ramp_s == 10);
  // fio's long names say the same.
  auto b = parse({"run", "--profile", "x", "vdc", "--steadystate", "bw:10m", "--steadystate_duration", "5",
                  "--steadystate_ramp_time=2"},
                 error);
  REQUIRE(b.has_value());
  JobSpec t = spec_of(*b);
  CHECK(t.steadystate.kind == SteadyStateKind::Bw);
  CHECK(t.steadystate.limit == 10.0 * (1 << 20));
  CHECK(t.steadystate.duration_s == 5);
  CHECK(t.steadystate.ramp_s == 2);
}

TEST_CASE("fio spellings: ss_dur alone is fio's default criterion, ss_dur 0 turns it off", "[cli][rate]") {
  std::string error;
  auto a = parse({"run", "--profile", "x", "vdc", "--ss_dur", "10"}, error);
  REQUIRE(a.has_value());
  JobSpec s = spec_of(*a);
  CHECK(s.steadystate.kind == SteadyStateKind::IopsSlope);
  CHECK(s.steadystate.limit == Approx(0.01));
  CHECK(s.steadystate.percent);
  auto off = parse({"run", "--profile", "x", "vdc", "--ss=iops:1%", "--ss_dur", "0"}, error);
  REQUIRE(off.has_value());
  CHECK_FALSE(spec_of(*off).steadystate.enabled());
}

TEST_CASE("fio spellings: a malformed rate or ss is one line naming the option and what it takes", "[cli][rate]") {
  std::string error;
  struct Case {
    std::vector<std::string> words;
    const char* says;
  };
  const Case cases[] = {
      {{"--rate_iops=0x"}, "--rate_iops 0x: use I/Os per second per job"},
      {{"--rate", "fast"}, "--rate fast: use bytes per second per job"},
      {{"--ss=iops"}, "--ss iops: use KIND:LIMIT with KIND iops, iops_slope, bw or bw_slope"},
      {{"--ss=lat:2%"}, "--ss lat:2%: use KIND:LIMIT"},
      {{"--ss_dur=soon"}, "--ss_dur soon: use a duration like 30s"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> words{"run", "--profile", "x", "vdc"};
    words.insert(words.end(), c.words.begin(), c.words.end());
    auto a = parse(words, error);
    REQUIRE(a.has_value());
    JobSpec s;
    auto st = profiles::apply_overrides(s, a->overrides);
    INFO(c.says);
    REQUIRE_FALSE(st.ok());
    CHECK_THAT(st.error(), Contains(c.says));
    CHECK(st.error().find('\n') == std::string::npos);
  }
}
