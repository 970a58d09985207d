// What every outcome of the command line leaves on stdout and in the exit code (issue 13):
// JSON mode's one document, output errors as errors, the README's exit codes, limits, and a
// hangup at start-up.
#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "diskprobe/tuning/restore.h"
#include "harness.h"

namespace fs = std::filesystem;
using diskprobe::LoopDevice;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

enum class Stdout { File, DevFull, Closed, BrokenPipe };

// A scratch directory with this test's own journals; diskprobe started with its stdout as
// asked, optionally with a SIGHUP already pending (blocked across exec, as a parent can leave it).
struct Bench {
  fs::path dir;
  Bench() {
    char t[] = "/tmp/diskprobe-outcome-XXXXXX";
    REQUIRE(::mkdtemp(t) != nullptr);
    dir = t;
  }
  ~Bench() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string journals() const { return (dir / "journals").string(); }

  pid_t spawn(const std::vector<std::string>& args, Stdout out = Stdout::File,
              bool pending_hup = false) const {
    std::string out_path = (dir / "out").string(), err_path = (dir / "err").string();
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::setenv("DISKPROBE_JOURNAL", journals().c_str(), 1);
      if (!std::freopen(err_path.c_str(), "w", stderr)) ::_exit(126);
      int fd = -1, p[2];
      switch (out) {
        case Stdout::File:
          fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
          break;
        case Stdout::DevFull:
          fd = ::open("/dev/full", O_WRONLY);
          break;
        case Stdout::BrokenPipe:
          if (::pipe(p) != 0) ::_exit(126);
          ::close(p[0]);  // nobody reads: a write gets EPIPE (and SIGPIPE)
          fd = p[1];
          break;
        case Stdout::Closed:
          break;
      }
      if (fd >= 0) {
        ::dup2(fd, 1);
        ::close(fd);
      } else {
        ::close(1);
      }
      if (pending_hup) {
        sigset_t s;
        sigemptyset(&s);
        sigaddset(&s, SIGHUP);
        ::sigprocmask(SIG_BLOCK, &s, nullptr);
        ::raise(SIGHUP);
      }
      testing::exec_diskprobe(args);
    }
    return pid;
  }
  // A run that has not ended after a minute is stopped (SIGINT: it restores and exits), so a
  // regression that never ends (--runtime 1e30) fails instead of hanging the suite.
  testing::CommandResult run(const std::vector<std::string>& args, Stdout out = Stdout::File,
                             bool pending_hup = false) const {
    return collect(spawn(args, out, pending_hup), out);
  }
  testing::CommandResult collect(pid_t pid, Stdout out = Stdout::File) const {
    testing::CommandResult r;
    for (int i = 0; i < 6000; ++i) {
      siginfo_t info{};  // WNOWAIT: wait_exit() still reaps it
      if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
          info.si_pid == pid)
        break;
      ::usleep(10000);
    }
    ::kill(pid, SIGINT);  // harmless when it has ended: a zombie ignores it
    r.exit_code = testing::wait_exit(pid);
    r.out = out == Stdout::File ? slurp((dir / "out").string()) : "";
    r.err = slurp((dir / "err").string());
    return r;
  }
};

// stdout holds exactly one JSON document (parse() refuses anything after the first).
nlohmann::json one_document(const testing::CommandResult& r) {
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  nlohmann::json j;
  REQUIRE_NOTHROW(j = nlohmann::json::parse(r.out));
  return j;
}

// A short run; `more` may give --runtime or --ramp_time itself (an option given twice is
// refused, so the default one is left out then).
std::vector<std::string> quick_run(const LoopDevice& loop, std::vector<std::string> more = {}) {
  std::vector<std::string> a{"run", "--profile", "essd-plx-latency", loop.name()};
  for (const auto& [opt, value] : {std::pair{"--runtime", "1"}, {"--ramp_time", "0"}}) {
    if (std::find(more.begin(), more.end(), opt) == more.end()) a.insert(a.end(), {opt, value});
  }
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

void check_error_document(const testing::CommandResult& r, int code, const std::string& says) {
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == code);
  auto j = one_document(r);
  CHECK(j.at("exit_code") == code);
  CHECK(j.at("error").get<std::string>().find(says) != std::string::npos);
  CHECK(j.contains("verdict") == (code == 3));
}

// A killed run's journal on `loop`: a run refuses to start on top of it (exit 1).
void plant_killed_run_journal(Bench& b, const LoopDevice& loop) {
  nlohmann::json killed = {{"device", loop.name()},
                           {"holders", {{{"pid", 2147483647}, {"start_time", 1}, {"started", "x"}}}},
                           {"settings", nlohmann::json::array()}};
  fs::create_directories(b.journals());
  std::ofstream(diskprobe::tuning::device_journal(b.journals(), loop.name())) << killed.dump();
}

}  // namespace

// Before: with --output-format json, stdout was empty for every outcome but a report.
TEST_CASE("JSON mode: every outcome prints exactly one JSON document", "[outcome][json]") {
  Bench b;
  LoopDevice loop = testing::make_loop(64ull << 20);
  const std::vector<std::string> json{"--output-format", "json"};

  SECTION("usage error, exit 2") {
    auto args = quick_run(loop, json);
    args.push_back("--bogus");
    check_error_document(b.run(args), 2, "unknown option --bogus");
    check_error_document(b.run({"check", "--json"}), 2, "usage: diskprobe check DEVICE");
    // Not UTF-8: the document still comes out (U+FFFD for the byte), no abort.
    check_error_document(b.run({"run", "--profile", "essd-plx-latency", "\xff", "--output-format", "json"}), 2,
                         "bad device name '\xef\xbf\xbd'");
    check_error_document(b.run({"compare", "/nonexistent/a.json", "/nonexistent/b.json", "--json"}), 2,
                         "/nonexistent/a.json");
  }
  SECTION("refused by the preflight, exit 3, with the verdict") {
    REQUIRE(testing::sh("mkfs.ext4 -q -F " + loop.path()).exit_code == 0);
    auto r = b.run(quick_run(loop, json));
    check_error_document(r, 3, "refused by the preflight");
    auto v = one_document(r).at("verdict");
    CHECK(v.at("safe") == false);
    CHECK(v.at("reasons").dump().find("\"signature\"") != std::string::npos);
  }
  SECTION("runtime error before the run, exit 1") {
    plant_killed_run_journal(b, loop);
    check_error_document(b.run(quick_run(loop, json)), 1, "run `diskprobe tune --restore` first");
  }
  SECTION("interrupted before the run started, exit 1") {
    check_error_document(b.run(quick_run(loop, json), Stdout::File, /*pending_hup=*/true), 1,
                         "interrupted before the run started");
  }
  SECTION("success, exit 0: the report") {
    auto r = b.run(quick_run(loop, json));
    CHECK(r.exit_code == 0);
    auto j = one_document(r);
    CHECK(j.contains("jobs"));
    CHECK_FALSE(j.contains("error"));
  }
  SECTION("expectations not met, exit 4: the report, and only the report") {
    auto args = quick_run(loop, json);
    args.insert(args.end(), {"--expect", "iops>=1000000000"});
    auto r = b.run(args);
    CHECK(r.exit_code == 4);
    auto j = one_document(r);
    CHECK(j.contains("jobs"));
    CHECK_FALSE(j.contains("error"));
  }
}

// Before: with --output-format json --output FILE, an error left FILE as it was (an earlier
// run's report, taken for this one's) or made nothing; stdout had no document either.
TEST_CASE("JSON mode with --output FILE: every outcome leaves exactly one document in FILE", "[outcome][json]") {
  Bench b;
  LoopDevice loop = testing::make_loop(64ull << 20);
  const std::string file = (b.dir / "r.json").string();
  const std::vector<std::string> to_file{"--output-format", "json", "--output", file};
  // FILE holds an earlier run's report, or does not exist yet: the error document either way.
  auto in_file = [&](const std::vector<std::string>& args, int code, const std::string& says) {
    for (bool stale : {true, false}) {
      if (stale) {
        std::ofstream(file) << R"({"jobs": [], "stale": true})";
      } else {
        fs::remove(file);
      }
      auto r = b.run(args);
      INFO((stale ? "stale FILE" : "no FILE") << "; stderr: " << r.err);
      CHECK(r.out.empty());  // stdout is the text report's, and there is none
      check_error_document({r.exit_code, slurp(file), r.err}, code, says);
    }
  };
  SECTION("usage errors, before and after FILE is opened") {
    auto args = quick_run(loop, to_file);
    args.push_back("--bogus");
    in_file(args, 2, "unknown option --bogus");
    in_file({"run", "--profile", "no-such-profile", loop.name(), "--output-format=json", "--output=" + file}, 2,
            "unknown profile");
    in_file(quick_run(loop, {"--output-format", "json", "--output", file, "--cpus_allowed", "4095"}), 2,
            "is not online");
    in_file({"run", "--profile", "essd-plx-latency", "/dev/null", "--output-format", "json", "--output", file}, 2,
            "not a block device");
  }
  SECTION("refused, exit 3: the verdict in FILE") {
    in_file({"run", "--profile", "essd-plx-latency", "nosuchdev", "--output-format", "json", "--output", file}, 3,
            "refused by the preflight");
    CHECK(nlohmann::json::parse(slurp(file))["verdict"]["reasons"][0]["code"] == "not-found");
    REQUIRE(testing::sh("mkfs.ext4 -q -F " + loop.path()).exit_code == 0);
    in_file(quick_run(loop, to_file), 3, "refused by the preflight");
    CHECK(nlohmann::json::parse(slurp(file))["verdict"]["reasons"].dump().find("\"signature\"") !=
          std::string::npos);
  }
  SECTION("runtime error before the run, exit 1") {
    plant_killed_run_journal(b, loop);
    in_file(quick_run(loop, to_file), 1, "run `diskprobe tune --restore` first");
  }
  SECTION("a report, exit 0 and 4: the report alone, the text report on stdout") {
    for (bool unmet : {false, true}) {
      std::ofstream(file) << R"({"stale": true})";
      auto args = quick_run(loop, to_file);
      if (unmet) args.insert(args.end(), {"--expect", "iops>=1000000000"});
      auto r = b.run(args);
      INFO(r.err);
      CHECK(r.exit_code == (unmet ? 4 : 0));
      CHECK(r.out.find("expectations:") != std::string::npos);
      auto j = nlohmann::json::parse(slurp(file));
      CHECK(j.contains("jobs"));
      CHECK_FALSE(j.contains("error"));
      CHECK_FALSE(j.contains("stale"));
    }
  }
  SECTION("FILE that may not be written is left alone, the exit code kept") {
    // The run's own target, named on a command line that fails before FILE is checked.
    const std::string target = (b.dir / "target.img").string();
    std::ofstream(target) << "user data";
    auto r = b.run({"run", "--profile", "essd-plx-latency", target, "--bogus", "--output-format", "json",
                    "--output", target});
    CHECK(r.exit_code == 2);
    CHECK(slurp(target) == "user data");
    CHECK(r.err.find("no error document written: --output: " + target + " is the run's own target") !=
          std::string::npos);
    // A device: refused when opened for the report, and not tried again for the error.
    LoopDevice other = testing::make_loop(64ull << 20);
    r = b.run(quick_run(loop, {"--output-format", "json", "--output", other.path()}));
    CHECK(r.exit_code == 2);
    CHECK(testing::read_bytes(other.path(), 0, 16) == std::string(16, '\0'));
    CHECK(r.err.find("no error document") == std::string::npos);
  }
}

// Before: `run … nosuchdev` exited 1, where the README says a missing device is refused.
TEST_CASE("run on a device that does not exist is refused like check: exit 3, not-found", "[outcome]") {
  Bench b;
  for (const char* dev : {"nosuchdev", "/dev/nosuchdev"}) {
    auto r = b.run({"run", "--profile", "essd-plx-latency", dev, "--output-format", "json"});
    check_error_document(r, 3, "refused by the preflight");
    CHECK(one_document(r)["verdict"]["reasons"][0]["code"] == "not-found");
    auto c = b.run({"check", dev, "--json"});  // the two answered 3 and 1 after the first merge
    CHECK(c.exit_code == 3);
    CHECK(one_document(c)["reasons"][0]["code"] == "not-found");
  }
}

// Before: --runtime 1e30 never ended and --ramp_time 1e30 was ignored; --time_based 2 said
// "give either a DEVICE or --scratch SIZE, not both".
TEST_CASE("runtime and ramp_time have a limit with its unit; a switch given a number says so", "[outcome]") {
  Bench b;
  LoopDevice loop = testing::make_loop(64ull << 20);
  // An exponent is no duration (lib/units reads plain decimals); a plain number past the
  // limit is refused with the limit and its unit, in seconds and in a suffix's unit alike.
  auto r = b.run(quick_run(loop, {"--runtime", "1e30"}));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--runtime 1e30: use a duration like 30s") != std::string::npos);
  r = b.run(quick_run(loop, {"--ramp_time", "1e30"}));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--ramp_time 1e30: use a duration like 5s") != std::string::npos);
  r = b.run(quick_run(loop, {"--runtime", "1000000000000000000000000000000"}));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("runtime 1e+30 s is above the limit of 86400 s (24 h)") != std::string::npos);
  r = b.run(quick_run(loop, {"--ramp_time", "25h"}));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("ramp_time 90000 s is above the limit of 86400 s (24 h)") != std::string::npos);
  r = b.run({"run", "--profile", "essd-plx-latency", "--scratch", "64M", "--time_based", "2"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--time_based 2: --time_based is a switch") != std::string::npos);
  CHECK(r.err.find("--scratch") == std::string::npos);
}

// Before: a report that could not be written exited 0.
TEST_CASE("a report that cannot be written is an error: full disk, /dev/full, broken pipe, closed stdout",
          "[outcome][output]") {
  Bench b;
  LoopDevice loop = testing::make_loop(64ull << 20);
  SECTION("--output-format junit --output on a full tmpfs") {
    fs::path full = b.dir / "full";
    fs::create_directories(full);
    if (::mount("tmpfs", full.c_str(), "tmpfs", 0, "size=64k") != 0) {
      WARN("cannot mount a tmpfs here: not tested");
      return;
    }
    // A filesystem full before the run is refused up front (exit 2, run_inputs_test); this one
    // fills once the output is open, so the report meets ENOSPC when it is written.
    fs::path xml = full / "r.xml";
    pid_t pid = b.spawn(quick_run(loop, {"--output-format", "junit", "--output", xml.string()}));
    for (int i = 0; i < 3000 && !fs::exists(xml); ++i) ::usleep(1000);
    testing::sh("dd if=/dev/zero of=" + (full / "filler").string() + " bs=4k 2>/dev/null");
    auto r = b.collect(pid);
    ::umount2(full.c_str(), MNT_DETACH);
    INFO("stderr: " << r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("the report is lost: write(" + (full / "r.xml").string() +
                     "): No space left on device") != std::string::npos);
  }
  SECTION("stdout to /dev/full") {
    auto r = b.run(quick_run(loop, {"--output-format", "json"}), Stdout::DevFull);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("the output is lost: write(stdout): No space left on device") != std::string::npos);
    r = b.run({"profiles"}, Stdout::DevFull);
    CHECK(r.exit_code == 1);
  }
  SECTION("stdout a pipe nobody reads") {
    auto r = b.run(quick_run(loop), Stdout::BrokenPipe);
    CHECK(r.exit_code == 1);  // not 141: SIGPIPE is ignored, EPIPE reported
    CHECK(r.err.find("write(stdout): Broken pipe") != std::string::npos);
  }
  SECTION("stdout closed") {
    auto r = b.run(quick_run(loop), Stdout::Closed);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("write(stdout): Bad file descriptor") != std::string::npos);
  }
  CHECK(testing::read_bytes(loop.path(), 0, 16) == std::string(16, '\0'));  // edges zeroed as always
}

// Before: a SIGHUP in the first milliseconds killed the process before its handler was in.
TEST_CASE("a SIGHUP right after exec never kills a run with its settings changed", "[outcome][signal]") {
  Bench b;
  LoopDevice loop = testing::make_loop(64ull << 20);
  const std::string rq = "/sys/block/" + loop.name() + "/queue/rq_affinity";
  const std::string before = testing::read_sysfs(rq);
  const std::string want = before == "2" ? "1" : "2";
  // Left pending across exec: delivered to the handler as soon as it is in.
  auto pending = b.run(quick_run(loop, {"--rq_affinity", want}), Stdout::File, true);
  CHECK(pending.exit_code == 1);
  CHECK(pending.err.find("interrupted before the run started") != std::string::npos);
  int died_before_exec = 0, died_after_exec = 0, interrupted = 0;
  const std::string bin = fs::canonical(DISKPROBE_BIN).string();
  for (int i = 0; i < 40; ++i) {
    pid_t pid = b.spawn(quick_run(loop, {"--rq_affinity", want}));
    ::usleep(static_cast<useconds_t>(i * 125));  // 0 to 5 ms after fork
    // /proc/PID/exe turns to diskprobe at execve's point of no return.
    std::error_code ec;
    bool execed = fs::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec).string() == bin;
    ::kill(pid, SIGHUP);
    int code = testing::wait_exit(pid);
    INFO("attempt " << i << ", exit " << code << ": " << slurp((b.dir / "err").string()));
    CHECK((code == 1 || code == 128 + SIGHUP));
    if (code == 128 + SIGHUP) ++(execed ? died_after_exec : died_before_exec);
    interrupted += code == 1;
    CHECK(testing::read_sysfs(rq) == before);
    CHECK_FALSE(fs::exists(diskprobe::tuning::device_journal(b.journals(), loop.name())));
  }
  // Only a signal that lands before exec (the test's own child) or during the launcher's
  // execve can still kill, and nothing has been changed then; how often, for the record.
  WARN(interrupted << " of 40 interrupted cleanly; died of SIGHUP: " << died_before_exec << " before exec, "
                   << died_after_exec << " after it");
}
