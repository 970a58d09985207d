// The engine options in profiles and command-line overrides, in fio's spelling.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "diskprobe/profiles/profiles.h"

using namespace diskprobe;
using Catch::Matchers::Contains;

namespace {

Result<JobSpec> parse_workload(const std::string& workload) {
  return profiles::parse(R"({"name": "t", "workload": {"time_based": true, "runtime": 5, )" + workload + "}}",
                         "t.json");
}

}  // namespace

TEST_CASE("profile: every engine option is read from the workload object", "[profiles]") {
  auto s = parse_workload(R"("bs": "4k,16k", "size": "50%", "offset": "25%", "io_size": "1G",
      "norandommap": true, "cpus_allowed": "0-2,5", "cpus_allowed_policy": "split", "sqpoll": true,
      "hipri": 1, "continue_on_error": "io", "verify": "crc32c", "do_verify": false,
      "percentile_list": "50:99:99.9")");
  INFO((s.ok() ? std::string() : s.error()));
  REQUIRE(s.ok());
  CHECK(s->bs == 4096);
  CHECK(s->bs_write == 16384);
  CHECK(s->write_bs() == 16384);
  CHECK(s->size_percent == 50);
  CHECK(s->size == 0);
  CHECK(s->offset_percent == 25);
  CHECK(s->io_size == 1ull << 30);
  CHECK(s->norandommap);
  CHECK(s->cpus_allowed == std::vector<int>{0, 1, 2, 5});
  CHECK(s->cpus_allowed_split);
  CHECK(s->sqpoll);
  CHECK(s->hipri);
  CHECK(s->continue_on_error == ContinueOnError::Io);
  CHECK(s->verify == VerifyKind::Crc32c);
  CHECK_FALSE(s->do_verify);
  CHECK(s->percentiles == std::vector<double>{50, 99, 99.9});
}

TEST_CASE("profile: bs forms and percent forms", "[profiles]") {
  CHECK(parse_workload(R"("bs": "16k")")->bs_write == 0);
  CHECK(parse_workload(R"("bs": "8k,8k")")->bs_write == 0);
  auto w = parse_workload(R"("bs": ",64k")");
  REQUIRE(w.ok());
  CHECK(w->bs == 4096);
  CHECK(w->bs_write == 65536);
  CHECK(parse_workload(R"("percentiles": [1, 50, 99.99])")->percentiles == std::vector<double>{1, 50, 99.99});
  CHECK(parse_workload(R"("continue_on_error": 1)")->continue_on_error == ContinueOnError::All);
  CHECK(parse_workload(R"("size": "1G")")->size == 1ull << 30);
}

TEST_CASE("profile: bad engine options are all reported with what is allowed", "[profiles]") {
  auto s = parse_workload(R"("bs": "4k,", "size": "150%", "cpus_allowed": "3-1", "cpus_allowed_policy": "spread",
      "continue_on_error": "sometimes", "verify": "md5", "percentile_list": "0:50")");
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.error(), Contains("7 problems"));
  CHECK_THAT(s.error(), Contains("workload.bs") && Contains("reads,writes like 4k,16k"));
  CHECK_THAT(s.error(), Contains("workload.size") && Contains("50%"));
  CHECK_THAT(s.error(), Contains("workload.cpus_allowed") && Contains("0-3,6"));
  CHECK_THAT(s.error(), Contains("shared or split"));
  CHECK_THAT(s.error(), Contains("none, read, write, io, verify or all"));
  CHECK_THAT(s.error(), Contains("crc32c or none"));
  CHECK_THAT(s.error(), Contains("workload.percentile_list"));
}

TEST_CASE("overrides: engine options from the command line", "[profiles]") {
  auto s = parse_workload(R"("bs": "4k")");
  REQUIRE(s.ok());
  auto st = profiles::apply_overrides(*s, {{"norandommap", "1"},
                                           {"verify", "crc32c"},
                                           {"bs", "4k,16k"},
                                           {"size", "10%"},
                                           {"percentiles", "50,99.9"},
                                           {"continue_on_error", "all"},
                                           {"cpus_allowed", "1"},
                                           {"cpus_allowed_policy", "split"}});
  INFO((st.ok() ? std::string() : st.error()));
  REQUIRE(st.ok());
  CHECK(s->norandommap);
  CHECK(s->verify == VerifyKind::Crc32c);
  CHECK(s->bs_write == 16384);
  CHECK(s->size_percent == 10);
  CHECK(s->percentiles == std::vector<double>{50, 99.9});
  CHECK(s->continue_on_error == ContinueOnError::All);
  CHECK(s->cpus_allowed == std::vector<int>{1});
  // A later size in bytes replaces the percentage.
  REQUIRE(profiles::apply_overrides(*s, {{"size", "1M"}}).ok());
  CHECK(s->size_percent == 0);
  CHECK(s->size == 1 << 20);
  auto keys = profiles::override_keys();
  for (const char* k : {"norandommap", "verify", "io_size", "sqpoll", "hipri", "continue_on_error", "percentiles"}) {
    CHECK(std::find(keys.begin(), keys.end(), k) != keys.end());
  }
}

TEST_CASE("profile: force_async is auto by default, a count, or an error naming what is allowed", "[profiles]") {
  auto d = parse_workload(R"("bs": "4k")");
  REQUIRE(d.ok());
  CHECK(d->force_async == JobSpec::kForceAsyncAuto);
  CHECK(to_json(*d)["force_async"] == "auto");
  CHECK(parse_workload(R"("force_async": 0)")->force_async == 0);
  CHECK(parse_workload(R"("force_async": "4")")->force_async == 4);
  CHECK(parse_workload(R"("force_async": "auto")")->force_async == JobSpec::kForceAsyncAuto);
  auto one = parse_workload(R"("force_async": 1)");
  REQUIRE(one.ok());
  CHECK(to_json(*one)["force_async"] == 1);
  CHECK_THAT(profiles::fio_command_line(*one), Contains("--force_async=1"));
  CHECK_THAT(profiles::fio_command_line(*d), !Contains("force_async"));
  auto bad = parse_workload(R"("force_async": "always")");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.error(), Contains("workload.force_async") && Contains("auto or a count N >= 0"));
  CHECK_FALSE(parse_workload(R"("force_async": -1)").ok());
}

TEST_CASE("profile: iodepth_batch_submit is auto by default, a count (0: all at once), or an error", "[profiles]") {
  auto d = parse_workload(R"("bs": "4k")");
  REQUIRE(d.ok());
  CHECK(d->iodepth_batch_submit == JobSpec::kBatchSubmitAuto);
  CHECK(to_json(*d)["iodepth_batch_submit"] == "auto");
  CHECK_THAT(profiles::fio_command_line(*d), !Contains("iodepth_batch_submit"));
  CHECK(parse_workload(R"("iodepth_batch_submit": "auto")")->iodepth_batch_submit == JobSpec::kBatchSubmitAuto);
  CHECK(parse_workload(R"("iodepth_batch_submit": "8")")->iodepth_batch_submit == 8);
  for (int n : {0, 1, 3}) {
    auto s = parse_workload(R"("iodepth_batch_submit": )" + std::to_string(n));
    REQUIRE(s.ok());
    CHECK(s->iodepth_batch_submit == n);
    CHECK(to_json(*s)["iodepth_batch_submit"] == n);
    CHECK_THAT(profiles::fio_command_line(*s), Contains("--iodepth_batch_submit=" + std::to_string(n)));
  }
  for (const char* bad : {R"("iodepth_batch_submit": "all")", R"("iodepth_batch_submit": -1)",
                          R"("iodepth_batch_submit": 1.5)"}) {
    auto b = parse_workload(bad);
    INFO(bad);
    REQUIRE_FALSE(b.ok());
    CHECK_THAT(b.error(), Contains("workload.iodepth_batch_submit") && Contains("auto or a count N >= 0"));
  }
}

TEST_CASE("profile: rate caps and steadystate in the workload object, numbers or fio's text", "[profiles][rate]") {
  auto s = parse_workload(R"("rate_iops": 1237, "rate": ",7m", "ss": "bw_slope:2%", "ss_dur": "10s", "ss_ramp": 3)");
  INFO((s.ok() ? std::string() : s.error()));
  REQUIRE(s.ok());
  CHECK(s->rate_iops[0] == 1237);
  CHECK(s->rate_iops[1] == 1237);
  CHECK(s->rate_bytes[1] == 7u << 20);
  CHECK(s->steadystate.kind == SteadyStateKind::BwSlope);
  CHECK(s->steadystate.limit == 2);
  CHECK(s->steadystate.duration_s == 10);
  CHECK(s->steadystate.ramp_s == 3);
  CHECK_THAT(profiles::fio_command_line(*s),
             Contains("--rate_iops=1237,1237 --rate=0,7m --ss=bw_slope:2% --ss_dur=10s --ss_ramp=3s"));
  auto bad = parse_workload(R"("rate_iops": "0x", "steadystate": "iops:", "rate": -5)");
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.error(), Contains("3 problems"));
  CHECK_THAT(bad.error(), Contains("workload.rate_iops: '0x' is not allowed"));
  CHECK_THAT(bad.error(), Contains("workload.steadystate: 'iops:' is not allowed; use KIND:LIMIT"));
  CHECK_THAT(bad.error(), Contains("workload.rate: -5 is not allowed"));
}
