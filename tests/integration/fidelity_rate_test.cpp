// rate_iops, rate and steadystate (issue 17) on real loop devices, fio 3.33 beside as the
// reference: caps held within 0.5% on a device faster than them, steady state attained early
// on a steady throttle (cgroup v1 blkio) as fio's is, and not attained when the test moves the
// throttle while the run runs; bad values refused before anything is touched. Each case runs
// in rounds that alternate which tool goes first, judged on their medians against fio's own
// spread in the same run (side_by_side.h): a cap is an upper bound whatever the machine does,
// and a busy machine makes both tools low (a 2-core machine at load 45 stalled one job for a
// second: -41% once, within the next round). About two minutes: not in the sanitizer build.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"
#include "side_by_side.h"

using nlohmann::json;

namespace {

constexpr double kBound = 0.005;  // the 0.5% of the cap
// Rounds a case may take while its medians are outside: the 2-job QD1 write case reads 0.4-6.6%
// low for fio itself from one round to the next here (loop writes stall on the backing file's
// writeback).
constexpr int kRounds = 6;
constexpr uint64_t kMiB = 1ull << 20;

using side_by_side::have_throttle;
using side_by_side::need_fio;

json run_json(const std::string& line) {
  auto r = testing::sh(line);
  INFO(line << "\n" << r.err);
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out.substr(r.out.find('{')));
}

// The region keeps clear of the first and last 4 MiB, which a write run zeroes afterwards.
std::string diskprobe_line(const std::string& dev, const std::string& workload) {
  return std::string(DISKPROBE_BIN) + " run --profile essd-plx-iops " + dev + " --no-tune --offset 8M --size 200M " +
         workload + " --output-format json";
}
std::string fio_line(const std::string& dev, const std::string& workload) {
  return "fio --name=rate --filename=" + dev + " --ioengine=io_uring --direct=1 --time_based --group_reporting" +
         " --offset=8M --size=200M --randrepeat=0 --output-format=json " + workload;
}

struct CapCase {
  const char* what;
  const char* dir;      // read or write
  double cap;           // the whole group's: per job times numjobs; IOPS or bytes/s
  bool bytes;
  std::string workload;  // the same words for both tools
};

uint64_t sum(const std::vector<uint64_t>& v) { return std::accumulate(v.begin(), v.end(), uint64_t{0}); }

}  // namespace

TEST_CASE("rate_iops and rate hold each job to its cap within 0.5%, as fio's do", "[fidelity][rate]") {
  need_fio();
  const CapCase cases[] = {
      {"1,237 read IOPS, QD1, 1 job", "read", 1237, false,
       "--rw=randread --bs=4k --iodepth=1 --numjobs=1 --runtime=3 --rate_iops=1237"},
      {"1,237 write IOPS a job, QD16, 2 jobs", "write", 2 * 1237, false,
       "--rw=randwrite --bs=4k --iodepth=16 --numjobs=2 --runtime=3 --rate_iops=,1237"},
      {"7 MiB/s read, 16k, QD16, 1 job", "read", 7.0 * kMiB, true,
       "--rw=randread --bs=16k --iodepth=16 --numjobs=1 --runtime=3 --rate=7m"},
      {"7 MiB/s write a job, 4k, QD1, 2 jobs", "write", 2 * 7.0 * kMiB, true,
       "--rw=write --bs=4k --iodepth=1 --numjobs=2 --runtime=3 --rate=7m"},
  };
  auto loop = testing::make_loop(256 * kMiB);
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.what) {
      side_by_side::RateRounds rates{kBound, 2, kRounds};
      for (int round = 0; rates.more(); ++round) {
        json f, all;
        side_by_side::in_turn(
            round, [&] { f = run_json(fio_line(loop.path(), c.workload))["jobs"][0][c.dir]; },
            [&] { all = run_json(diskprobe_line(loop.path(), c.workload)); });
        const json& d = all[c.dir];
        double fio = f[c.bytes ? "bw_bytes" : "iops"].get<double>() / c.cap - 1;
        // Each job over its own window: the group's figure divides by the longest window, so a
        // job whose first completion came late on a busy machine (its window opens there)
        // drags it down (measured: -17% with fio's -0.02%). Above the cap: no job may be.
        // Below it: the jobs' rates summed, as fio's group figure sums them; judged on the
        // slowest job instead, a 2-job QD1 write case failed CI at -0.885% where fio's group
        // read -0.349% (and -2.0%, -3.0% in the rounds before: that case runs at the edge of
        // what the machine's loop writes keep up with).
        const auto jobs = all["jobs"].size();
        double dp = 0, dp_high = -1;
        for (const auto& j : all["jobs"]) {
          double e = j[c.dir][c.bytes ? "bw_bytes_per_s" : "iops"].get<double>() * jobs / c.cap - 1;
          dp += e / static_cast<double>(jobs);
          dp_high = std::max(dp_high, e);
        }
        std::printf("rate: %-40s round %d: diskprobe %+.3f%%  fio %+.3f%% of the cap\n", c.what, round + 1, dp * 100,
                    fio * 100);
        rates.add(dp, fio, dp_high);
        // Whole seconds of the 3 s window, adding up to the total, however late it opened.
        INFO(c.what << ", round " << round + 1);
        auto samples = d["iops_samples"].get<std::vector<uint64_t>>();
        CHECK(sum(samples) == d["ios"].get<uint64_t>());
        CHECK(samples.size() == 3);
      }
      rates.judge(c.what);
    }
  }
}

TEST_CASE("steadystate is attained early on a steady throttle, as fio's is", "[fidelity][steadystate]") {
  need_fio();
  if (!have_throttle()) return;
  auto loop = testing::make_loop(256 * kMiB);
  testing::BlkioCgroup cg("diskprobe-steady-" + std::to_string(::getpid()));
  cg.set("blkio.throttle.read_iops_device", testing::dev_numbers(loop.path()) + " 3000");
  // fio's own words for both: 2% of the mean over 5 s, from 2 s in; 30 s at most.
  const std::string workload = "--rw=randread --bs=4k --iodepth=4 --numjobs=1 --runtime=30 --ss=iops:2% "
                               "--ss_dur=5 --ss_ramp=2";
  // Rounds alternating which tool goes first; each tool's time to its stop per round, the
  // limit where it did not attain (a stall on a busy machine breaks either tool's window).
  constexpr int kSteadyRounds = 3;
  std::vector<double> f_stop, d_stop;
  side_by_side::RateRounds rates{kBound};
  for (int round = 0; round < kSteadyRounds; ++round) {
    json f, d;
    side_by_side::in_turn(
        round, [&] { f = run_json(cg.run_inside(fio_line(loop.path(), workload)))["jobs"][0]; },
        [&] { d = run_json(cg.run_inside(diskprobe_line(loop.path(), workload))); });
    const json& ss = d["steadystate"];
    const bool f_attained = f["steadystate"]["attained"] == 1, d_attained = ss["attained"] == true;
    f_stop.push_back(f_attained ? f["job_runtime"].get<double>() / 1000 : 30);
    d_stop.push_back(d_attained ? d["runtime_s"].get<double>() : 30);
    const json& r = d["read"];
    rates.add(r["iops"].get<double>() / 3000 - 1, f["read"]["iops"].get<double>() / 3000 - 1);
    std::printf(
        "steadystate: round %d: fio attained=%d after %.1f s; diskprobe attained=%d after %.1f s, window "
        "%s\n",
        round + 1, f_attained, f["job_runtime"].get<double>() / 1000, d_attained,
        d["runtime_s"].get<double>(), ss["iops_samples"].dump().c_str());
    // Exact whatever the machine does: not before ss_ramp + ss_dur, samples adding up, and an
    // attained window of ss_dur samples each within 2% of their mean (the criterion itself).
    INFO("round " << round + 1 << ": " << d.dump());
    CHECK(d["runtime_s"].get<double>() >= 7 - 0.05);
    CHECK(sum(r["iops_samples"].get<std::vector<uint64_t>>()) == r["ios"].get<uint64_t>());
    if (!d_attained) continue;
    const auto window = ss["iops_samples"].get<std::vector<double>>();
    CHECK(window.size() == 5);
    const double mean =
        std::accumulate(window.begin(), window.end(), 0.0) / static_cast<double>(window.size());
    for (double x : window) CHECK(std::abs(x / mean - 1) < 0.02);
  }
  // 2 + 5 s when steady from the start, for both: diskprobe's median no later than fio's by
  // more than a sample and fio's own spread.
  const double allowed = side_by_side::median(f_stop) + 1 + side_by_side::spread(f_stop);
  std::printf("steadystate: median stop diskprobe %.1f s, fio %.1f s (allowed %.1f s)\n",
              side_by_side::median(d_stop), side_by_side::median(f_stop), allowed);
  if (side_by_side::median(f_stop) >= 30)
    WARN("fio did not attain steady state in most rounds: the machine is busy");
  CHECK(side_by_side::median(d_stop) <= allowed);
  rates.judge("steadystate, 3,000 read IOPS, QD4");
}

TEST_CASE("steadystate is not attained while the throttle moves: the run goes to its limit, flagged",
          "[fidelity][steadystate]") {
  if (!have_throttle()) return;
  auto loop = testing::make_loop(256 * kMiB);
  testing::BlkioCgroup cg("diskprobe-unsteady-" + std::to_string(::getpid()));
  const std::string limit_file = "blkio.throttle.read_iops_device";
  const std::string dev = testing::dev_numbers(loop.path());
  cg.set(limit_file, dev + " 3000");
  const std::string workload = "--rw=randread --bs=4k --iodepth=4 --numjobs=1 --runtime=8 --ss=iops:2% "
                               "--ss_dur=3 --ss_ramp=1";
  auto run = std::async(std::launch::async, [&] {
    return testing::sh(cg.run_inside(diskprobe_line(loop.path(), workload) + " 2>&1"));
  });
  // 3,000 and 1,500 IOPS in turn, a second each, until the run ends: every window of 3 s holds both.
  for (int i = 0; run.wait_for(std::chrono::seconds(1)) != std::future_status::ready; ++i) {
    std::ofstream(cg.path + "/" + limit_file) << dev << (i % 2 ? " 3000" : " 1500") << "\n";
  }
  auto r = run.get();
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  json d = json::parse(r.out.substr(r.out.find('{')));
  const json& ss = d["steadystate"];
  std::printf("steadystate: moving throttle: attained=%d after %.1f s, window %s\n", ss["attained"].get<bool>(),
              d["runtime_s"].get<double>(), ss["iops_samples"].dump().c_str());
  CHECK(ss["attained"] == false);
  CHECK(ss["window_filled"] == true);
  CHECK(ss["value"].get<double>() >= 2);
  CHECK(d["runtime_s"].get<double>() >= 8 - 0.05);  // to its time limit
  CHECK(sum(d["read"]["iops_samples"].get<std::vector<uint64_t>>()) == d["read"]["ios"].get<uint64_t>());
}

TEST_CASE("bad rate and steadystate values: exit 2, one line, nothing touched", "[steadystate][inputs]") {
  auto loop = testing::make_loop(64 * kMiB);
  testing::must("dd if=/dev/urandom of=" + loop.path() + " bs=1M count=1 oflag=direct status=none");
  const std::string before = testing::edges(loop.path(), 64 * kMiB);
  const std::string rq = "/sys/block/" + loop.name() + "/queue/rq_affinity";
  const std::string rq_before = testing::read_sysfs(rq);
  struct Case {
    std::vector<std::string> args;
    const char* says;
  };
  const Case cases[] = {
      {{"--ss", "iops"}, "--ss iops: use KIND:LIMIT"},
      {{"--ss=iops_slope:"}, "--ss iops_slope:: use KIND:LIMIT"},
      {{"--rate_iops=0x"}, "--rate_iops 0x: use I/Os per second per job"},
      {{"--ss", "iops:1%", "--ss_dur", "5", "--time_based", "0", "--size", "8M"}, "add time_based=1 with a runtime"},
      {{"--ss", "iops:1%", "--ss_dur", "60", "--runtime", "30"}, "ss_dur 60 s is longer than runtime 30 s"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args{"run", "--profile", "cloud-randwrite-iops", loop.path()};
    args.insert(args.end(), c.args.begin(), c.args.end());
    auto r = testing::run_diskprobe(args);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(c.says) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);  // one line
    CHECK(r.out.empty());
  }
  CHECK(testing::edges(loop.path(), 64 * kMiB) == before);
  CHECK(testing::read_sysfs(rq) == rq_before);
}

// Issue 17: with rate_iops=R,W on a mixed job the I/O rwmixread drew waited for its own
// direction's time; fio's rate_ddir issues whichever direction is due, so each direction runs
// at its own cap (or, uncapped, at the device's pace) whatever the mix. Next to fio 3.33 on
// the same loop device, both caps below what it does.
TEST_CASE(
    "mixed rate caps: each direction at its own cap, the other direction issued while one waits, as fio",
    "[fidelity][rate][mixed]") {
  need_fio();
  auto loop = testing::make_loop(256 * kMiB);
  const std::string common = "--rw=randrw --rwmixread=70 --bs=4k --iodepth=4 --numjobs=1 --runtime=3 ";
  SECTION("rate_iops=1237,617: reads at 1,237 and writes at 617, not 3/7 of the reads") {
    const std::string workload = common + "--rate_iops=1237,617";
    bool passed = false, fio_within = false;
    for (int round = 0; round < kRounds && !passed; ++round) {
      json f = run_json(fio_line(loop.path(), workload))["jobs"][0];
      json d = run_json(diskprobe_line(loop.path(), workload));
      const double fr = f["read"]["iops"].get<double>() / 1237 - 1,
                   fw = f["write"]["iops"].get<double>() / 617 - 1;
      const double dr = d["read"]["iops"].get<double>() / 1237 - 1,
                   dw = d["write"]["iops"].get<double>() / 617 - 1;
      std::printf(
          "rate: mixed 1237,617 round %d: diskprobe read %+.3f%% write %+.3f%%  fio read %+.3f%% write "
          "%+.3f%%\n",
          round + 1, dr * 100, dw * 100, fr * 100, fw * 100);
      INFO("diskprobe read " << dr * 100 << "% write " << dw * 100 << "%; fio read " << fr * 100 << "% write "
                             << fw * 100 << "%");
      REQUIRE(dr <= kBound);  // above a cap is diskprobe's error, never noise
      REQUIRE(dw <= kBound);
      if (dr >= -kBound && dw >= -kBound) {
        passed = true;
      } else if (fr >= -kBound && fw >= -kBound) {
        fio_within = true;
      }
    }
    if (!passed && fio_within)
      FAIL_CHECK("diskprobe ran below a cap in every round where fio was within both");
    if (!passed && !fio_within) WARN("both tools below the caps in every round: the machine is too busy");
  }
  SECTION(
      "rate_iops=,617: writes at 617, reads uncapped at the device's pace as fio's, not 7/3 of the writes") {
    const std::string workload = common + "--rate_iops=,617";
    json f = run_json(fio_line(loop.path(), workload))["jobs"][0];
    json d = run_json(diskprobe_line(loop.path(), workload));
    const double fio_reads = f["read"]["iops"].get<double>(), reads = d["read"]["iops"].get<double>();
    std::printf("rate: mixed ,617: diskprobe %.0f reads/s %.0f writes/s  fio %.0f reads/s %.0f writes/s\n",
                reads, d["write"]["iops"].get<double>(), fio_reads, f["write"]["iops"].get<double>());
    INFO("reads: diskprobe " << reads << "/s, fio " << fio_reads << "/s");
    CHECK(d["write"]["iops"].get<double>() <= 617 * (1 + kBound));
    // Held to the writes' pace the reads would be 617 x 7/3 = 1,440 a second.
    if (fio_reads < 4 * 1440) {
      WARN("fio read only " << fio_reads
                            << "/s: the machine is too busy to tell the reads from 7/3 of the writes");
      return;
    }
    CHECK(reads >= 2 * 1440);
  }
}
