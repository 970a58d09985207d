// `diskprobe accept` end to end on loop devices throttled by cgroup v1 blkio to odd limits,
// standing in for provisioned volumes: within the limits it accepts, at half one it does not
// and names the metric, a burst is named and the sustained rate judged, a device holding a
// filesystem is refused untouched. Under two minutes in all. The cases tagged [slow] spend
// their time waiting on throttled or steady-state phases and check figures and documents, not
// memory: the sanitizer build leaves them out (tests/CMakeLists.txt); the first case runs
// accept end to end there.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "harness.h"

namespace fs = std::filesystem;

namespace {

constexpr double kMiB = 1048576.0;
constexpr const char* kVolume = "custom:iops=1237,mbps=23";
constexpr unsigned kIops = 1237, kMbps = 23;
// The shortest budget the suite takes: 6 s per IOPS phase, 4 s per throughput phase.
constexpr const char* kMaxTime = "24";

bool have_throttle() {
  if (::access("/sys/fs/cgroup/blkio/blkio.throttle.write_iops_device", W_OK) == 0) return true;
  std::fprintf(stderr, "SKIP: no cgroup v1 blkio throttling at /sys/fs/cgroup/blkio\n");
  return false;
}

// A 1 MiB I/O on pages that are not contiguous is split in two bios when the queue takes
// fewer than 256 4 KiB segments, and the blkio bps throttle charges each (fio 3.33 reads half
// the limit too). The limit set is the bandwidth wanted times that, so the device delivers
// mbps at 1 MiB; a kernel that charges once just delivers more, which passes as well.
unsigned bps_charges(const diskprobe::LoopDevice& loop) {
  auto segments = std::stoul(testing::read_sysfs("/sys/block/" + loop.name() + "/queue/max_segments"));
  return static_cast<unsigned>(std::ceil(256.0 / static_cast<double>(std::max(1ul, segments))));
}

// The volume: a cgroup whose throttle is `iops` both ways and `mbps` MiB/s at 1 MiB.
void throttle(const testing::BlkioCgroup& cg, const diskprobe::LoopDevice& loop, unsigned write_iops,
              unsigned read_iops, unsigned mbps) {
  const std::string dev = testing::dev_numbers(loop.path()) + " ";
  const auto bps = static_cast<uint64_t>(mbps * kMiB) * bps_charges(loop);
  cg.set("blkio.throttle.write_iops_device", dev + std::to_string(write_iops));
  cg.set("blkio.throttle.read_iops_device", dev + std::to_string(read_iops));
  cg.set("blkio.throttle.write_bps_device", dev + std::to_string(bps));
  cg.set("blkio.throttle.read_bps_device", dev + std::to_string(bps));
}

std::string accept_line(const testing::BlkioCgroup& cg, const std::vector<std::string>& args) {
  std::string line = std::string(DISKPROBE_BIN) + " accept";
  for (const auto& a : args) line += " '" + a + "'";
  return cg.run_inside(line);
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The JUnit file as a CI system reads it (python3's xml.etree): each testcase's name and
// whether it failed or was skipped.
std::vector<std::string> junit_cases(const std::string& file) {
  auto r = testing::run({"python3", "-c",
                         "import sys, xml.etree.ElementTree as E\n"
                         "s = E.parse(sys.argv[1]).getroot().find('testsuite')\n"
                         "for c in s.findall('testcase'):\n"
                         "  k = 'failure' if c.find('failure') is not None else "
                         "'skipped' if c.find('skipped') is not None else 'ok'\n"
                         "  print(k + ':' + c.get('name'))\n",
                         file});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::vector<std::string> out;
  std::istringstream in(r.out);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

}  // namespace

TEST_CASE(
    "accept on a loop throttled to the volume's odd limits: exit 0, each metric quoted, JUnit per metric",
    "[accept]") {
  if (!have_throttle()) std::exit(77);
  auto loop = testing::make_loop(256ull << 20);
  testing::BlkioCgroup cg("diskprobe-accept-" + std::to_string(::getpid()));
  throttle(cg, loop, kIops, kIops, kMbps);
  testing::TempDir tmp("diskprobe-accept");
  const std::string xml = tmp.path + "/accept.xml", html = tmp.path + "/accept.html";
  auto r = testing::sh(
      accept_line(cg, {loop.path(), "--volume", kVolume, "--max-time", kMaxTime, "--output-format", "junit",
                       "--output", xml, "--report", html, "--no-tune"}));
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  for (const char* metric : {"random write IOPS", "random read IOPS"}) {
    CHECK_THAT(r.out, Catch::Matchers::Contains(std::string("PASS  ") + metric + ": delivered "));
    CHECK_THAT(r.out, Catch::Matchers::Contains("of provisioned 1,237 IOPS ("));
  }
  for (const char* metric : {"sequential read throughput", "sequential write throughput"}) {
    CHECK_THAT(r.out, Catch::Matchers::Contains(std::string("PASS  ") + metric + ": delivered "));
  }
  CHECK_THAT(r.out, Catch::Matchers::Contains("of provisioned 23.0 MiB/s ("));
  CHECK_THAT(r.out, Catch::Matchers::Contains("INFO  QD1 read latency: mean "));
  CHECK_THAT(r.out, Catch::Matchers::Contains("accepted: every metric within tolerance"));
  for (int phase = 1; phase <= 6; ++phase) {  // a progress line per phase
    CHECK_THAT(r.err, Catch::Matchers::Contains("phase " + std::to_string(phase) + "/6: "));
  }
  const std::vector<std::string> want = {"ok:random write IOPS",          "ok:random read IOPS",
                                         "ok:sequential read throughput", "ok:sequential write throughput",
                                         "skipped:QD1 read latency",      "skipped:QD1 write latency"};
  CHECK(junit_cases(xml) == want);
  // Three phases write; the edges are zeroed once, after the suite (issue 17).
  CHECK(testing::count_of(r.err, "zeroed the first and last 4 MiB of " + loop.path()) == 1);
  auto page = slurp(html);
  for (int phase = 1; phase <= 6; ++phase) {
    CHECK_THAT(page, Catch::Matchers::Contains("<section id=\"phase-" + std::to_string(phase) + "\">"));
  }
}

TEST_CASE("accept on a loop throttled to half the volume's write IOPS: exit 4, naming the metric",
          "[accept][slow]") {
  if (!have_throttle()) std::exit(77);
  auto loop = testing::make_loop(256ull << 20);
  testing::BlkioCgroup cg("diskprobe-accept-half-" + std::to_string(::getpid()));
  throttle(cg, loop, kIops / 2, kIops, kMbps);
  auto r = testing::sh(accept_line(cg, {loop.path(), "--volume", kVolume, "--max-time", kMaxTime,
                                        "--output-format", "json", "--no-tune"}));
  INFO(r.out << r.err);
  CHECK(r.exit_code == 4);
  CHECK_THAT(r.err, Catch::Matchers::Contains("FAIL") || Catch::Matchers::Contains("not accepted"));
  auto j = nlohmann::json::parse(r.out);
  CHECK_FALSE(j["passed"].get<bool>());
  REQUIRE(j["metrics"].size() == 6);
  const auto& write = j["metrics"][0];
  CHECK(write["name"] == "random write IOPS");
  CHECK_FALSE(write["passed"].get<bool>());
  CHECK(write["delivered_percent"].get<double>() == Approx(50).margin(2));
  CHECK_THAT(write["line"].get<std::string>(),
             Catch::Matchers::StartsWith("random write IOPS: delivered 4") &&
                 Catch::Matchers::Contains("of provisioned 1,237 IOPS"));
  CHECK(j["metrics"][1]["passed"].get<bool>());  // reads still have their 1,237
}

TEST_CASE("a burst, then the throttle lowered: the report names the burst and judges the sustained rate",
          "[accept][burst][slow]") {
  if (!have_throttle()) std::exit(77);
  auto loop = testing::make_loop(256ull << 20);
  testing::BlkioCgroup cg("diskprobe-accept-burst-" + std::to_string(::getpid()));
  throttle(cg, loop, 3 * kIops, kIops, kMbps);  // burst credits: three times the rate
  testing::TempDir tmp("diskprobe-accept-burst");
  const std::string out = tmp.path + "/out.json", err = tmp.path + "/err.txt";
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // 72 s: an IOPS phase of 18 s that may end steady only after 4 s, longer than the burst.
    std::string line = accept_line(cg, {loop.path(), "--volume", kVolume, "--max-time", "72",
                                        "--output-format", "json", "--no-tune"}) +
                       " > " + out + " 2> " + err;
    ::execl("/bin/sh", "sh", "-c", line.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Lowered 2.5 s after the first phase starts, however long the start took.
  for (int i = 0; i < 600 && slurp(err).find("phase 1/6") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  cg.set("blkio.throttle.write_iops_device", testing::dev_numbers(loop.path()) + " " + std::to_string(kIops));
  int rc = testing::wait_exit(pid);
  INFO(slurp(err));
  auto j = nlohmann::json::parse(slurp(out));
  const auto& write = j["metrics"][0];
  INFO(write["line"].get<std::string>());
  REQUIRE(write["burst"]["found"].get<bool>());
  CHECK_THAT(write["line"].get<std::string>(), Catch::Matchers::Contains("; burst of "));
  CHECK_THAT(write["line"].get<std::string>(), Catch::Matchers::Contains(" IOPS for "));
  // A throttle lets no more through than its limit, whatever the machine's load.
  CHECK(write["burst"]["burst_rate"].get<double>() <= 3 * kIops * 1.01);
  // The reads have the same limit and queue: when the machine could not give them their
  // 1,237 IOPS, it cannot tell the sustained writes' either.
  if (!j["metrics"][1]["passed"].get<bool>()) {
    WARN("the machine is too busy to deliver 1,237 read IOPS: the sustained rate is not checked");
    return;
  }
  CHECK(rc == 0);
  CHECK(write["measured"].get<double>() == Approx(kIops).epsilon(0.03));  // the sustained rate, not the mean
  CHECK(write["passed"].get<bool>());
}

TEST_CASE("accept refuses a device holding a filesystem: exit 3, nothing written", "[accept][refused]") {
  auto loop = testing::make_loop(64ull << 20);
  testing::must("mkfs.ext4 -q -F " + loop.path());
  const auto before = testing::edges(loop.path(), 64ull << 20);
  testing::TempDir tmp("diskprobe-accept-refused");
  const std::string xml = tmp.path + "/refused.xml";
  auto r = testing::run_diskprobe({"accept", loop.path(), "--volume", kVolume, "--max-time", kMaxTime,
                                   "--output-format", "junit", "--output", xml});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 3);
  CHECK_THAT(r.err, Catch::Matchers::Contains("refused by the preflight: nothing was written"));
  CHECK(testing::edges(loop.path(), 64ull << 20) == before);
  CHECK(junit_cases(xml) == std::vector<std::string>{"failure:preflight"});  // CI still gets its file
  // JSON mode: one document, the refusal's.
  auto j = testing::run_diskprobe({"accept", loop.path(), "--volume", kVolume, "--json"});
  CHECK(j.exit_code == 3);
  CHECK(nlohmann::json::parse(j.out)["exit_code"] == 3);
  CHECK(testing::edges(loop.path(), 64ull << 20) == before);
}

TEST_CASE("accept's bad input: one line naming what is wrong, exit 2, the device untouched",
          "[accept][input]") {
  auto loop = testing::make_loop(64ull << 20);
  const auto before = testing::edges(loop.path(), 64ull << 20);
  struct Case {
    std::vector<std::string> args;
    const char* says;
  };
  const std::vector<Case> cases = {
      {{"accept", loop.path()}, "accept needs --volume TYPE:ARG"},
      {{"accept", loop.path(), "--volume", "custom:iops=1237"}, "mbps= is missing"},
      {{"accept", loop.path(), "--volume", "custom:iops=12x7,mbps=23"}, "iops needs a whole number above 0"},
      {{"accept", loop.path(), "--volume", kVolume, "--max-time", "10"}, "need at least 24 s"},
      {{"accept", loop.path(), "--volume", kVolume, "--max-time", "soon"}, "--max-time 'soon'"},
      {{"accept", loop.path(), "--volume", kVolume, "--tolerance", "120%"}, "--tolerance '120%'"},
      {{"accept", loop.path(), "--volume", kVolume, "--iodepth", "8"}, "accept plans its own phases"},
      {{"accept", loop.path(), "--volume", kVolume, "--output-format", "xml"},
       "accept writes text, json, junit, fio-json, fio-json+ or openmetrics"},
      {{"accept", "--volume", kVolume}, "usage: diskprobe accept DEVICE"},
      {{"run", "--profile", "essd-plx-iops", loop.path(), "--max-time", "60"},
       "--max-time goes with 'accept'"},
  };
  for (const auto& c : cases) {
    auto r = testing::run_diskprobe(c.args);
    INFO(c.says << "\n" << r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Matchers::Contains(c.says));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  CHECK(testing::edges(loop.path(), 64ull << 20) == before);
}

// Issue 18: accept's outputs for the tools people already run, read by those tools. No
// throttle: the figures are not what is tested, the documents are.
TEST_CASE("accept's openmetrics passes promtool and its fio-json+ is read by fio_jsonplus_clat2csv",
          "[accept][openmetrics][fio-json][slow]") {
  auto loop = testing::make_loop(64ull << 20);
  testing::TempDir tmp("diskprobe-accept-out");
  auto accept_to = [&](const char* format, const std::string& file) {
    auto r = testing::run_diskprobe({"accept", loop.path(), "--volume", kVolume, "--max-time", kMaxTime,
                                     "--output-format", format, "--output", file, "--no-tune"});
    INFO(format << ": " << r.err);
    REQUIRE(r.exit_code == 0);
  };
  const std::string prom = tmp.path + "/accept.prom", js = tmp.path + "/accept.json";
  accept_to("openmetrics", prom);
  auto m = slurp(prom);
  for (const char* phase : {"random write IOPS", "random read IOPS", "sequential read throughput",
                            "sequential write throughput", "QD1 read latency", "QD1 write latency"}) {
    CHECK_THAT(m, Catch::Matchers::Contains(std::string("phase=\"") + phase + "\""));
  }
  CHECK_THAT(m, Catch::Matchers::Contains("diskprobe_accept_passed{device=\"" + loop.name() + "\",volume=\"" +
                                          kVolume + "\"} 1\n"));
  if (testing::sh("command -v promtool").exit_code == 0) {
    auto check = testing::sh("promtool check metrics < " + prom);
    INFO("promtool: " << check.out << check.err);
    CHECK(check.exit_code == 0);
  } else {
    WARN("SKIP (promtool part): promtool is not installed (Debian package prometheus)");
  }

  accept_to("fio-json+", js);
  auto j = nlohmann::json::parse(slurp(js));
  REQUIRE(j["jobs"].size() == 6);
  for (size_t g = 0; g < 6; ++g) CHECK(j["jobs"][g]["groupid"] == g);
  CHECK(j["jobs"][0]["write"]["total_ios"].get<uint64_t>() > 0);
  CHECK(j["jobs"][1]["read"]["total_ios"].get<uint64_t>() > 0);
  REQUIRE(j["disk_util"].size() == 1);
  CHECK(j["disk_util"][0]["name"] == loop.name());
  CHECK(j["diskprobe"]["runs"].size() == 6);
  CHECK(j["diskprobe"]["accept"]["passed"] == true);
  if (testing::sh("command -v fio_jsonplus_clat2csv").exit_code == 0) {
    auto csv = testing::sh("cd " + tmp.path + " && fio_jsonplus_clat2csv accept.json accept.csv");
    INFO(csv.out << csv.err);
    REQUIRE(csv.exit_code == 0);
    for (int job = 0; job < 6; ++job) CHECK(fs::exists(tmp.path + "/accept_job" + std::to_string(job) + ".csv"));
  } else {
    WARN("SKIP (fio_jsonplus_clat2csv part): fio is not installed");
  }
}

// Issue 17: the edges are zeroed once, when the suite ends; a suite interrupted after its
// first (writing) phase still zeroes what that phase wrote, before it exits.
TEST_CASE("accept interrupted after a writing phase still leaves the edges zeroed", "[accept][zero]") {
  constexpr uint64_t size = 64ull << 20;
  auto loop = testing::make_loop(size);
  testing::TempDir tmp("diskprobe-accept-int");
  const std::string out = tmp.path + "/out", err = tmp.path + "/err";
  pid_t pid = testing::spawn_diskprobe({"accept", loop.path(), "--volume", kVolume, "--max-time", kMaxTime,
                                        "--no-tune", "--output-format", "json"},
                                       out, err);
  REQUIRE(pid > 0);
  // The second phase (random reads) has started: the first has written and been restored.
  bool second = false;
  for (int i = 0; i < 600 && !second; ++i) {
    second = slurp(err).find("phase 2/6") != std::string::npos;
    if (!second) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(pid, SIGINT);  // harmless if it has ended
  int rc = testing::wait_exit(pid);
  const std::string log = slurp(err);
  INFO(log);
  REQUIRE(second);
  CHECK(rc == 1);
  CHECK_THAT(log, Catch::Matchers::Contains("interrupted"));
  CHECK(testing::count_of(log, "zeroed the first and last 4 MiB of " + loop.path()) == 1);
  CHECK(testing::edges_zeroed(loop.path(), size));
  auto j = nlohmann::json::parse(slurp(out));
  CHECK_FALSE(j["passed"].get<bool>());
  CHECK(j["metrics"].size() >= 1);
}
