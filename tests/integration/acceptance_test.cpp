// Acceptance end to end: a loop device throttled to 5,000 write IOPS by cgroup v1's
// blkio.throttle.write_iops_device stands in for a provisioned volume; CI gates on the exit
// code and the JUnit file.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "harness.h"

using testing::run_diskprobe;

namespace {

constexpr const char* kBlkio = "/sys/fs/cgroup/blkio";

// A blkio cgroup this test made, throttling the loop's writes; removed when the test ends
// (diskprobe has exited by then, so the group is empty and rmdir works).
struct ThrottledGroup : testing::BlkioCgroup {
  ThrottledGroup(const diskprobe::LoopDevice& loop, unsigned write_iops)
      : BlkioCgroup("diskprobe-acceptance-" + std::to_string(::getpid())) {
    std::string devno = testing::read_sysfs("/sys/block/" + loop.name() + "/dev");
    set("blkio.throttle.write_iops_device", devno + " " + std::to_string(write_iops));
    REQUIRE(testing::read_sysfs(path + "/blkio.throttle.write_iops_device") ==
            devno + " " + std::to_string(write_iops));
  }
};

// diskprobe run inside the group: the shell joins it, then becomes diskprobe.
testing::CommandResult run_in(const ThrottledGroup& g, const std::vector<std::string>& args) {
  std::string line = std::string(DISKPROBE_BIN);
  for (const auto& a : args) line += " '" + a + "'";
  return testing::sh(g.run_inside(line));
}

struct JunitCount {
  int tests = -1, failures = -1, failure_elements = -1;
};

// Parsed by python3's xml.etree, as a CI system would read it.
JunitCount parse_junit(const std::string& file) {
  auto r = testing::run({"python3", "-c",
                         "import sys, xml.etree.ElementTree as E\n"
                         "t = E.parse(sys.argv[1]).getroot()\n"
                         "s = t.find('testsuite')\n"
                         "print(s.get('tests'), s.get('failures'), len(t.findall('.//failure')))\n",
                         file});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  JunitCount c;
  REQUIRE(std::sscanf(r.out.c_str(), "%d %d %d", &c.tests, &c.failures, &c.failure_elements) == 3);
  return c;
}

struct TempDir : testing::TempDir {
  TempDir() : testing::TempDir("diskprobe-acceptance") {}
};

bool blkio_v1_available() {
  return ::access((std::string(kBlkio) + "/blkio.throttle.write_iops_device").c_str(), W_OK) == 0;
}

void skip_without_blkio() {
  if (blkio_v1_available()) return;
  std::fprintf(stderr, "SKIP: no cgroup v1 blkio controller at %s (blkio.throttle.write_iops_device)\n",
               kBlkio);
  std::exit(77);
}

const std::vector<std::string> kWorkload = {
    "run", "--profile", "essd-plx-iops", "--numjobs", "2", "--iodepth", "16", "--runtime", "4", "--no-tune"};

}  // namespace

TEST_CASE("a 5,000 write-IOPS volume passes iops>=4800, fails iops>=6000 with exit 4 and a JUnit failure",
          "[acceptance]") {
  skip_without_blkio();
  auto loop = testing::make_loop(256ull << 20);
  ThrottledGroup group(loop, 5000);
  TempDir tmp;

  std::vector<std::string> pass = kWorkload;
  pass.insert(pass.end(), {loop.name(), "--expect", "iops>=4800", "--volume", "ebs-io1:5000",
                           "--output-format", "junit", "--output", tmp.path + "/pass.xml"});
  auto ok = run_in(group, pass);
  INFO(ok.out << ok.err);
  CHECK(ok.exit_code == 0);
  CHECK(ok.out.find("PASS  iops>=4800: measured ") != std::string::npos);
  CHECK(ok.out.find("of provisioned IOPS (5000 IOPS, --volume ebs-io1:5000)") != std::string::npos);
  CHECK(ok.err.find("elapsed") == std::string::npos);  // stderr is a pipe: no progress line
  auto pass_xml = parse_junit(tmp.path + "/pass.xml");
  CHECK(pass_xml.tests == 4);  // preflight, the profile's errors==0, --expect, --volume
  CHECK(pass_xml.failures == 0);
  CHECK(pass_xml.failure_elements == 0);

  std::vector<std::string> fail = kWorkload;
  fail.insert(fail.end(), {loop.name(), "--expect", "iops>=6000", "--expect", "errors==0", "--output-format",
                           "junit", "--output", tmp.path + "/fail.xml"});
  auto bad = run_in(group, fail);
  INFO(bad.out << bad.err);
  CHECK(bad.exit_code == 4);
  CHECK(bad.out.find("FAIL  iops>=6000: measured ") != std::string::npos);
  CHECK(bad.err.find("1 of 3 expectations not met") != std::string::npos);
  auto fail_xml = parse_junit(tmp.path + "/fail.xml");
  CHECK(fail_xml.tests == 4);
  CHECK(fail_xml.failures == 1);
  CHECK(fail_xml.failure_elements == 1);
}

TEST_CASE("JSON on stdout is only JSON and records what makes runs comparable", "[acceptance][json]") {
  auto loop = testing::make_loop(128ull << 20);
  auto r = run_diskprobe({"run", "--profile", "essd-plx-latency", loop.name(), "--runtime", "1", "--no-tune",
                          "--output-format", "json", "--expect", "write.lat.p99<=10s"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);  // throws, and fails the test, on anything but JSON
  CHECK(j["schema_version"] == 1);
  CHECK(j["environment"]["diskprobe_version"].get<std::string>().size() > 0);
  CHECK(j["environment"]["kernel"].get<std::string>().size() > 0);
  CHECK(j["environment"]["cpu_count"].get<unsigned>() > 0);
  CHECK(j["environment"].contains("dmi_product_name"));
  CHECK(j["environment"]["device_size_bytes"] == 128ull << 20);
  CHECK(j["preflight"] == "safe");
  CHECK(j["preflight_safe"] == true);
  CHECK(j["job"]["name"] == "essd-plx-latency");
  CHECK(j["expectations"][1]["expression"] == "write.lat.p99<=10s");
  CHECK(j["expectations"][1]["met"] == true);
  CHECK(j["expectations"][1]["measured_ns"].get<double>() > 0);
  CHECK(j["write"].contains("bw_bytes_per_s"));
}

TEST_CASE("--output FILE gets the format, the terminal still gets the text report", "[acceptance]") {
  auto loop = testing::make_loop(128ull << 20);
  TempDir tmp;
  std::string file = tmp.path + "/run.json";
  auto r = run_diskprobe({"run", "--profile", "essd-plx-latency", loop.name(), "--runtime", "1", "--no-tune",
                          "--output-format", "json", "--output", file});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("write: IOPS=") != std::string::npos);
  std::ifstream f(file);
  auto j = nlohmann::json::parse(f);
  CHECK(j["job"]["name"] == "essd-plx-latency");
}

TEST_CASE("bad expectation syntax: exit 2, the bad part marked, the device untouched",
          "[acceptance][usage]") {
  auto loop = testing::make_loop(64ull << 20);
  std::string before = testing::edges(loop.path(), 64ull << 20);
  for (const char* expr : {"iops>=38q", "write.lat.p99<=2", "bw>=350MX/s", "iops=>5"}) {
    auto r = run_diskprobe({"run", "--profile", "essd-plx-latency", loop.name(), "--expect", expr});
    INFO(expr << ": " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(std::string("--expect '") + expr + "'") != std::string::npos);
    CHECK(r.err.find(">>") != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.out.empty());
  }
  auto v =
      run_diskprobe({"run", "--profile", "essd-plx-latency", loop.name(), "--volume", "essd-pl3:100GiB"});
  CHECK(v.exit_code == 2);
  CHECK(v.err.find("outside the type's range 1261 to 65536 GiB") != std::string::npos);
  CHECK(testing::edges(loop.path(), 64ull << 20) == before);
}

TEST_CASE("every built-in profile runs for 1 s on a scratch loop device", "[acceptance][profiles]") {
  auto list = run_diskprobe({"profiles", "--json"});
  REQUIRE(list.exit_code == 0);
  auto profiles = nlohmann::json::parse(list.out);
  REQUIRE(profiles.size() >= 23);
  for (const auto& p : profiles) {
    std::string name = p["name"];
    // A region of at least one block: seed 003's dd bs=1G needs 1 GiB (a sparse scratch file).
    auto shown = run_diskprobe({"profile", "show", name, "--json"});
    REQUIRE(shown.exit_code == 0);
    auto bs = nlohmann::json::parse(shown.out)["bs_bytes"].get<uint64_t>();
    std::string size = bs > (64ull << 20) ? std::to_string(bs) : "64M";
    std::string scratch = bs > (64ull << 20) ? std::to_string(2 * bs) : "256M";
    auto r = run_diskprobe({"run", "--profile", name, "--scratch", scratch, "--runtime", "1", "--time_based",
                            "1", "--size", size, "--no-tune"});
    INFO(name << ": " << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("expectations: 1 of 1 met") != std::string::npos);
  }
}

TEST_CASE("profile show prints every parameter and the fio equivalent", "[acceptance][profiles]") {
  auto r = run_diskprobe({"profile", "show", "ebs-io1-randwrite"});
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("source:         AWS samples on GitHub, \"m5.12xlarge-io1-ebs-benchmark.md\"") != std::string::npos);
  CHECK(r.out.find("norandommap=1 refill_buffers=1") != std::string::npos);
  CHECK(r.out.find("fio --name=ebs-io1-randwrite --filename=/dev/DEVICE --ioengine=io_uring --iodepth=32") !=
        std::string::npos);
  auto j = run_diskprobe({"profile", "show", "ebs-io1-randwrite", "--json"});
  REQUIRE(j.exit_code == 0);
  CHECK(nlohmann::json::parse(j.out)["bs_bytes"] == 16384);
}

TEST_CASE("a terminal gets a live progress line on stderr; a pipe does not", "[acceptance][progress]") {
  auto loop = testing::make_loop(128ull << 20);
  auto piped =
      run_diskprobe({"run", "--profile", "essd-plx-latency", loop.name(), "--runtime", "2", "--no-tune"});
  CHECK(piped.exit_code == 0);
  CHECK(piped.err.find("elapsed") == std::string::npos);
  CHECK(piped.err.find('\r') == std::string::npos);

  if (testing::sh("command -v script").exit_code != 0) {
    WARN("script(1) from util-linux is missing: the terminal half is not checked");
    return;
  }
  // script(1) gives diskprobe a pseudo-terminal and copies what it writes to our pipe.
  auto tty = testing::run({"script", "-qec",
                           std::string(DISKPROBE_BIN) + " run --profile essd-plx-latency " + loop.name() +
                               " --runtime 3 --no-tune",
                           "/dev/null"});
  INFO(tty.out << tty.err);
  CHECK(tty.exit_code == 0);
  CHECK(tty.out.find(" elapsed, eta ") != std::string::npos);
  CHECK(tty.out.find("write ") != std::string::npos);
}

// Issue 17: run took custom's lat_ms and judged nothing with it. A QD 1 profile on a loop
// throttled to 50 write IOPS waits ~20 ms an I/O: over lat_ms=1 (exit 4, a failed JUnit
// testcase), within lat_ms=1000.
TEST_CASE("run --volume custom:...,lat_ms=L judges a QD 1 profile's mean latency: exit 4 over L",
          "[acceptance][latency]") {
  skip_without_blkio();
  auto loop = testing::make_loop(256ull << 20);
  ThrottledGroup group(loop, 50);
  TempDir tmp;
  auto qd1 = [&](const std::string& volume, const std::string& xml) {
    return run_in(group, {"run", "--profile", "cloud-randwrite-lat", loop.name(), "--size", "64M",
                          "--time_based", "1", "--runtime", "2", "--no-tune", "--volume", volume,
                          "--output-format", "junit", "--output", xml});
  };
  auto slow = qd1("custom:iops=5000,mbps=200,lat_ms=1", tmp.path + "/slow.xml");
  INFO(slow.out << slow.err);
  CHECK(slow.exit_code == 4);
  CHECK(slow.out.find("FAIL  lat.mean<=1.053ms: measured ") != std::string::npos);
  CHECK(slow.out.find("iops>=") == std::string::npos);  // one I/O in flight is not judged on IOPS
  auto slow_xml = parse_junit(tmp.path + "/slow.xml");
  CHECK(slow_xml.tests == 3);  // preflight, the profile's errors==0, --volume's latency
  CHECK(slow_xml.failures == 1);

  auto fast = qd1("custom:iops=5000,mbps=200,lat_ms=1000", tmp.path + "/fast.xml");
  INFO(fast.out << fast.err);
  CHECK(fast.exit_code == 0);
  CHECK(fast.out.find("PASS  lat.mean<=1053ms: measured ") != std::string::npos);
  CHECK(parse_junit(tmp.path + "/fast.xml").failures == 0);

  // A profile that queues is judged on IOPS; lat_ms is said not to apply.
  auto deep =
      run_in(group, {"run", "--profile", "essd-plx-iops", loop.name(), "--numjobs", "1", "--iodepth", "4",
                     "--runtime", "2", "--no-tune", "--volume", "custom:iops=50,mbps=200,lat_ms=1"});
  INFO(deep.out << deep.err);
  CHECK(deep.out.find("lat.mean") == std::string::npos);
  CHECK(deep.err.find("lat_ms is judged on QD 1 workloads only") != std::string::npos);
}
