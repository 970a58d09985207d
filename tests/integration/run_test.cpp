// End to end: `diskprobe run` on real loop devices, as a user runs it.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "harness.h"

namespace fs = std::filesystem;
using testing::run_diskprobe;

namespace {

std::string rq_affinity_path(const diskprobe::LoopDevice& loop) {
  return "/sys/block/" + loop.name() + "/queue/rq_affinity";
}

struct TempDir {
  std::string path;
  TempDir() {
    std::string t = (fs::temp_directory_path() / "diskprobe-test-XXXXXX").string();
    REQUIRE(::mkdtemp(t.data()) != nullptr);
    path = t;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  bool empty() const { return fs::is_empty(path); }
};

// Starts diskprobe with TMPDIR set, returns its pid; stdout/stderr go to files in `dir`.
pid_t spawn(const std::vector<std::string>& args, const std::string& tmpdir, const std::string& logdir) {
  return testing::spawn_diskprobe(args, logdir + "/out", logdir + "/err", {{"TMPDIR", tmpdir}});
}

using testing::wait_exit;

// Waits until the running diskprobe has made its scratch device and started measuring.
std::string wait_for_scratch(const std::string& tmpdir) {
  for (int i = 0; i < 200; ++i) {
    auto loops = testing::loops_backed_by(tmpdir);
    if (!loops.empty()) return loops.front();
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return {};
}

}  // namespace

TEST_CASE("a blank loop device passes the preflight and runs the latency profile", "[run]") {
  auto loop = testing::make_loop(256ull << 20);
  auto r = run_diskprobe({"run", "--profile", "essd-plx-latency", loop.name(), "--runtime", "1"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("rw=randwrite, bs=(R) 4096B-4096B, (W) 4096B-4096B") != std::string::npos);
  CHECK(r.out.find("write: IOPS=") != std::string::npos);
  CHECK(r.out.find("clat percentiles") != std::string::npos);
  CHECK(r.out.find("99.99th=[") != std::string::npos);
  // A loop device has no completion interrupt: the run says so and runs unpinned.
  CHECK(r.err.find("no completion interrupt") != std::string::npos);
}

TEST_CASE("json output is one JSON document with the measured numbers", "[run]") {
  auto loop = testing::make_loop(256ull << 20);
  auto r = run_diskprobe({"run", "--profile", "essd-plx-latency", loop.path(), "--runtime", "1", "--output-format",
                      "json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);  // throws (fails the test) on anything but JSON
  CHECK(j["schema_version"] == 1);
  CHECK(j["device"] == loop.path());
  uint64_t ios = j["write"]["ios"].get<uint64_t>();
  CHECK(ios > 0);
  CHECK(j["write"]["bytes"].get<uint64_t>() == ios * 4096);
  CHECK(j["write"]["lat_ns"]["min"].get<uint64_t>() > 0);
  CHECK(j["write"]["clat_ns"]["percentiles"].contains("99.99"));
  CHECK(j["read"]["ios"].get<uint64_t>() == 0);
}

TEST_CASE("rq_affinity is set for the run and back to its old value afterwards", "[run][tuning]") {
  auto loop = testing::make_loop(128ull << 20);
  std::string path = rq_affinity_path(loop);
  REQUIRE(testing::sh("echo 1 > " + path).exit_code == 0);
  REQUIRE(testing::read_sysfs(path) == "1");
  auto r = run_diskprobe({"run", "--profile", "essd-plx-latency", loop.name(), "--runtime", "1", "--output-format",
                      "json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  bool recorded = false;
  for (const auto& s : j["tuning"]) {
    if (s["what"].get<std::string>().find("rq_affinity") != std::string::npos) {
      recorded = s["old_value"] == "1" && s["new_value"] == "2";
    }
  }
  CHECK(recorded);
  CHECK(testing::read_sysfs(path) == "1");
}

TEST_CASE("a device with a filesystem or a partition table is refused and left byte-identical", "[run][safety]") {
  struct Case {
    const char* what;
    const char* make;  // %s = device path
    const char* named;
  };
  const Case cases[] = {
      {"ext4", "mkfs.ext4 -q -F %s", "ext4"},
      {"gpt", "sgdisk -o %s >/dev/null", "gpt"},
  };
  for (const auto& c : cases) {
    SECTION(c.what) {
      auto loop = testing::make_loop(64ull << 20);
      char cmd[256];
      std::snprintf(cmd, sizeof cmd, c.make, loop.path().c_str());
      REQUIRE(testing::sh(cmd).exit_code == 0);
      std::string before = testing::edges(loop.path(), 64ull << 20);
      std::string rq_before = testing::read_sysfs(rq_affinity_path(loop));
      auto r = run_diskprobe({"run", "--profile", "essd-plx-latency", loop.path(), "--runtime", "1"});
      CHECK(r.exit_code == 3);
      CHECK(r.err.find(c.named) != std::string::npos);
      CHECK(r.out.empty());
      CHECK(testing::edges(loop.path(), 64ull << 20) == before);
      CHECK(testing::read_sysfs(rq_affinity_path(loop)) == rq_before);
    }
  }
}

TEST_CASE("--scratch runs on a temporary loop device and leaves nothing behind", "[run][scratch]") {
  TempDir tmp, logs;
  pid_t pid = spawn({"run", "--profile", "essd-plx-latency", "--scratch", "256M", "--runtime", "1"}, tmp.path,
                    logs.path);
  std::string loop = wait_for_scratch(tmp.path);
  CHECK_FALSE(loop.empty());
  CHECK(wait_exit(pid) == 0);
  CHECK(testing::loops_backed_by(tmp.path).empty());
  CHECK(tmp.empty());
  CHECK(testing::read_sysfs(logs.path + "/out").find("write: IOPS=") != std::string::npos);
}

TEST_CASE("SIGINT and SIGTERM end a run cleanly: report, settings restored, scratch removed", "[run][signals]") {
  for (int sig : {SIGINT, SIGTERM}) {
    DYNAMIC_SECTION("signal " << sig) {
      TempDir tmp, logs;
      pid_t pid = spawn({"run", "--profile", "essd-plx-latency", "--scratch", "256M", "--runtime", "60"}, tmp.path,
                        logs.path);
      std::string loop = wait_for_scratch(tmp.path);
      REQUIRE_FALSE(loop.empty());
      std::this_thread::sleep_for(std::chrono::milliseconds(700));
      REQUIRE(::kill(pid, sig) == 0);
      int code = wait_exit(pid);
      CHECK(code == 1);
      std::string err = testing::read_sysfs(logs.path + "/err");
      CHECK(err.find("interrupted") != std::string::npos);
      CHECK(testing::read_sysfs(logs.path + "/out").find("write: IOPS=") != std::string::npos);
      CHECK(testing::loops_backed_by(tmp.path).empty());
      CHECK(tmp.empty());
    }
  }
}

TEST_CASE("SIGINT during a run on a real device restores rq_affinity", "[run][signals][tuning]") {
  auto loop = testing::make_loop(128ull << 20);
  std::string path = rq_affinity_path(loop);
  REQUIRE(testing::sh("echo 1 > " + path).exit_code == 0);
  TempDir logs;
  pid_t pid = spawn({"run", "--profile", "essd-plx-latency", loop.name(), "--runtime", "60"}, logs.path, logs.path);
  // Wait until the profile's value is in place, then interrupt.
  bool changed = false;
  for (int i = 0; i < 200 && !changed; ++i) {
    changed = testing::read_sysfs(path) == "2";
    if (!changed) std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  CHECK(changed);
  REQUIRE(::kill(pid, SIGINT) == 0);
  CHECK(wait_exit(pid) == 1);
  CHECK(testing::read_sysfs(path) == "1");
}

TEST_CASE("bad input: a one-line error, the right exit code, nothing touched", "[run][usage]") {
  auto loop = testing::make_loop(64ull << 20);
  std::string path = rq_affinity_path(loop);
  REQUIRE(testing::sh("echo 1 > " + path).exit_code == 0);
  struct Case {
    std::vector<std::string> args;
    int code;
    const char* says;
  };
  const Case cases[] = {
      {{"run", "--profile", "no-such-profile", loop.name()}, 2, "known profiles: "},
      {{"run", "--profile", "essd-plx-latency"}, 2, "needs a DEVICE"},
      {{"run", "--profile", "essd-plx-latency", "/etc/passwd"}, 2, "not a block device"},
      {{"run", "--profile", "essd-plx-latency", "../" + loop.name()}, 2, "bad device name"},
      {{"run", "--profile", "essd-plx-latency", "/dev/../dev/" + loop.name()}, 2, "'..' is not allowed"},
      // A device that does not exist is refused by the preflight (exit 3): outcome_test.cpp.
      {{"run", "--profile", "essd-plx-latency", loop.name(), "--iodepth", "abc"}, 2, "--iodepth abc"},
      {{"run", "--profile", "essd-plx-latency", loop.name(), "--runtime", "soon"}, 2, "--runtime soon"},
      {{"run", "--profile", "essd-plx-latency", loop.name(), "--bs", "1000"}, 2, "bs"},
      {{"run", "--profile", "essd-plx-latency", loop.name(), "--frobnicate"}, 2, "unknown option --frobnicate"},
      {{"frobnicate"}, 2, "unknown command"},
  };
  for (const auto& c : cases) {
    auto r = run_diskprobe(c.args);
    INFO(c.args.back() << " -> " << r.err);
    CHECK(r.exit_code == c.code);
    CHECK(r.err.find(c.says) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.out.empty());
    CHECK(testing::read_sysfs(path) == "1");
  }
}

TEST_CASE("check, devices, tune, profiles and --version answer", "[cli]") {
  auto loop = testing::make_loop(64ull << 20);
  auto check = run_diskprobe({"check", loop.name(), "--json"});
  INFO(check.err);
  CHECK(check.exit_code == 0);
  CHECK(nlohmann::json::parse(check.out)["safe"] == true);

  auto devices = run_diskprobe({"devices", "--json"});
  REQUIRE(devices.exit_code == 0);
  bool listed = false;
  for (const auto& d : nlohmann::json::parse(devices.out)) listed |= d["name"] == loop.name();
  CHECK(listed);

  auto tune = run_diskprobe({"tune", loop.name(), "--json"});
  INFO(tune.err);
  CHECK(tune.exit_code == 0);
  auto t = nlohmann::json::parse(tune.out);
  CHECK(t["plan"]["job_cpus"] == nlohmann::json::array({-1}));

  auto profiles = run_diskprobe({"profiles"});
  CHECK(profiles.exit_code == 0);
  CHECK(profiles.out.find("essd-plx-latency") != std::string::npos);

  auto version = run_diskprobe({"--version"});
  CHECK(version.exit_code == 0);
  CHECK(version.out.find("liburing") != std::string::npos);
}
