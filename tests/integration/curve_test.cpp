// `diskprobe curve` on a loop device throttled by cgroup v1 blkio to an odd write IOPS limit
// below what the device does at QD 1: the curve's IOPS is flat at the limit, latency rises
// past it (the queue waits: mean ~ QD / limit), and the knee is found at the limit. A throttle
// lets no more through than its limit, so a busy machine cannot make the flat part pass; blkio
// releases I/O in 100 ms slices of limit/10 I/Os, so p50 rises only once the queue outgrows a
// slice's share (QD 128 here; deeper, the loop device's own queue of 128 shows).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "harness.h"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

bool have_throttle() {
  if (fs::exists("/sys/fs/cgroup/blkio/blkio.throttle.write_iops_device")) return true;
  WARN("SKIP: cgroup v1 blkio with throttling is not mounted at /sys/fs/cgroup/blkio");
  return false;
}

}  // namespace

// Issue 17: every step zeroed the device's edges (~1 s a step at 1,777 IOPS); the sweep
// zeroes once, after its last step, and the edges are zero at the end.
TEST_CASE("curve zeroes the device's edges once, after the last step", "[curve][zero]") {
  constexpr uint64_t size = 64ull << 20;
  auto loop = testing::make_loop(size);
  auto r = testing::run_diskprobe({"curve", loop.path(), "--profile", "essd-plx-iops", "--numjobs", "1",
                                   "--no-tune", "--step-time", "1", "--max-iodepth", "4", "--output-format",
                                   "json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  REQUIRE(nlohmann::json::parse(r.out)["steps"].size() >= 2);  // QD 1, 2 (4): each wrote
  CHECK(testing::count_of(r.err, "zeroed the first and last 4 MiB of " + loop.path()) == 1);
  CHECK(testing::edges_zeroed(loop.path(), size));
}

// [slow]: a figure against a throttle, under the sanitizers it only measures the machine
// (one such run, beside a build: QD 128 at 96.7% of the limit); "[zero]" runs curve there.
TEST_CASE("curve on a throttled loop device: IOPS flattens at the limit, latency rises after, the knee at it",
          "[curve][slow]") {
  if (!have_throttle()) return;
  auto loop = testing::make_loop(256ull << 20);
  constexpr double limit = 1777;
  testing::BlkioCgroup cg("diskprobe-curve-" + std::to_string(::getpid()));
  cg.set("blkio.throttle.write_iops_device", testing::dev_numbers(loop.path()) + " 1777");
  testing::TempDir dir("diskprobe-curve");
  std::string html = dir.path + "/curve.html";
  auto r =
      testing::sh(cg.run_inside(std::string(DISKPROBE_BIN) + " curve " + loop.path() +
                                " --profile essd-plx-iops --numjobs 1 --no-tune --step-time 2" +
                                " --max-iodepth 128 --past-knee 6 --output-format json --report " + html));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto j = json::parse(r.out);
  auto steps = j["steps"];
  INFO(steps.dump(1));
  REQUIRE(steps.size() >= 4);
  CHECK(steps[0]["iodepth"] == 1);
  CHECK(steps[1]["iodepth"] == 2);
  // Flat at the limit: the last two steps within 3% of it.
  for (size_t i = steps.size() - 2; i < steps.size(); ++i) {
    double iops = steps[i]["iops"].get<double>();
    CHECK(iops >= 0.97 * limit);
    CHECK(iops <= 1.03 * limit);
  }
  // Latency rises past the limit: the queue waits.
  CHECK(steps.back()["clat_p50_ns"].get<double>() >= 10 * steps[0]["clat_p50_ns"].get<double>());
  CHECK(steps.back()["clat_mean_ns"].get<double>() >= 10 * steps[0]["clat_mean_ns"].get<double>());
  // The knee: at the limit (its IOPS within 3%), the first step that bought latency only.
  REQUIRE(j["knee"].is_object());
  double knee_iops = j["knee"]["iops"].get<double>();
  CHECK(knee_iops >= 0.97 * limit);
  CHECK(knee_iops <= 1.03 * limit);
  size_t k = j["knee"]["step"].get<size_t>();
  REQUIRE(k >= 1);
  CHECK(steps.size() <= k + 7);  // --past-knee 6, or --max-iodepth first
  CHECK(j["ended"].get<std::string>().find("past the knee") != std::string::npos);
  // The knee's step paid for its queue in latency, by the rule.
  CHECK(steps[k]["clat_mean_ns"].get<double>() > 1.25 * steps[k - 1]["clat_mean_ns"].get<double>());
  CHECK(fs::file_size(html) > 2000);
}

TEST_CASE("curve refuses a device with a filesystem: exit 3, nothing written", "[curve]") {
  auto loop = testing::make_loop(64ull << 20);
  testing::must("mkfs.ext4 -q -F " + loop.path());
  auto before = testing::edges(loop.path(), 64ull << 20);
  auto r = testing::run_diskprobe({"curve", loop.path(), "--profile", "essd-plx-iops", "--no-tune",
                                   "--step-time", "1", "--max-iodepth", "2"});
  INFO(r.err);
  CHECK(r.exit_code == 3);
  CHECK(r.out.empty());
  CHECK(testing::edges(loop.path(), 64ull << 20) == before);
}

TEST_CASE("curve's bad input is exit 2 before anything is touched", "[curve]") {
  auto loop = testing::make_loop(64ull << 20);
  auto before = testing::edges(loop.path(), 64ull << 20);
  struct Case {
    std::vector<std::string> args;
    const char* says;
  };
  const Case cases[] = {
      {{"curve", loop.path()}, "curve needs --profile NAME"},
      {{"curve", "--profile", "essd-plx-iops"}, "curve needs one DEVICE"},
      {{"curve", loop.path(), "--profile", "essd-plx-iops", "--max-iodepth", "0"}, "--max-iodepth 0"},
      {{"curve", loop.path(), "--profile", "essd-plx-iops", "--step-time", "soon"}, "--step-time soon"},
      {{"curve", loop.path(), "--profile", "essd-plx-iops", "--rate-steps", "50,10%"}, "--rate-steps 50,10%"},
      {{"curve", loop.path(), "--profile", "essd-plx-iops", "--rate-steps", "10,150%"},
       "--rate-steps 10,150%"},
      {{"curve", loop.path(), "--profile", "essd-plx-iops", "--max-iops", "5000"},
       "--max-iops goes with --rate-steps"},
      {{"curve", loop.path(), "--profile", "essd-plx-iops", "--output-format", "junit"},
       "curve writes text or json"},
      {{"curve", loop.path(), "--profile", "no-such-profile"}, "no-such-profile"},
      {{"run", "--profile", "essd-plx-iops", loop.path(), "--step-time", "2"},
       "--step-time goes with 'curve'"},
  };
  for (const auto& c : cases) {
    auto r = testing::run_diskprobe(c.args);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(c.says) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  CHECK(testing::edges(loop.path(), 64ull << 20) == before);
}
