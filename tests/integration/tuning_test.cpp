// RestoreGuard on a real loop device: settings applied and restored, the journal written
// before the change, and a SIGKILLed run undone by restore_from_journal.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "diskprobe/tuning/restore.h"
#include "harness.h"

namespace fs = std::filesystem;
using namespace diskprobe;
using namespace diskprobe::tuning;

namespace {

// The journal lives in a temp dir, two levels down so the guard must create them.
struct TempJournal {
  fs::path dir;
  std::string path;
  TempJournal() {
    char t[] = "/tmp/diskprobe-tuning-it-XXXXXX";
    REQUIRE(::mkdtemp(t) != nullptr);
    dir = t;
    path = (dir / "run/diskprobe/restore.json").string();
  }
  ~TempJournal() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string rq_affinity_path(const LoopDevice& loop) {
  return "/sys/block/" + loop.name() + "/queue/rq_affinity";
}

// A value the device does not have now.
std::string other_value(const std::string& current) { return current == "2" ? "1" : "2"; }

Plan rq_plan(const std::string& value) {
  Plan p;
  p.queue = {{"rq_affinity", value}};
  return p;
}

}  // namespace

TEST_CASE("RestoreGuard sets rq_affinity on a loop device and restores it", "[tuning]") {
  LoopDevice loop = testing::make_loop();
  TempJournal j;
  SysRoot root;
  const std::string attr = rq_affinity_path(loop);
  const std::string old = testing::read_sysfs(attr);
  const std::string want = other_value(old);
  {
    RestoreGuard guard(root, j.path);
    auto st = guard.apply(loop.name(), rq_plan(want));
    INFO((st.ok() ? std::string() : st.error()));
    REQUIRE(st.ok());
    CHECK(testing::read_sysfs(attr) == want);
    REQUIRE(fs::exists(j.path));
    auto doc = nlohmann::json::parse(slurp(j.path));
    CHECK(doc.at("pid").get<int>() == ::getpid());
    REQUIRE(doc.at("settings").size() == 1);
    CHECK(doc["settings"][0]["path"] == attr);
    CHECK(doc["settings"][0]["old_value"] == old);
    REQUIRE(guard.applied().size() == 1);
    CHECK(guard.applied()[0].what == attr);
    CHECK(guard.applied()[0].old_value == old);
    CHECK(guard.applied()[0].new_value == want);
  }
  CHECK(testing::read_sysfs(attr) == old);
  CHECK_FALSE(fs::exists(j.path));
}

TEST_CASE("a SIGKILLed run leaves the journal; restore_from_journal undoes it", "[tuning]") {
  LoopDevice loop = testing::make_loop();
  TempJournal j;
  SysRoot root;
  const std::string attr = rq_affinity_path(loop);
  const std::string old = testing::read_sysfs(attr);
  const std::string want = other_value(old);

  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::close(ready[0]);
    RestoreGuard guard(root, j.path);
    if (!guard.apply(loop.name(), rq_plan(want))) ::_exit(1);
    char c = 'y';
    if (::write(ready[1], &c, 1) != 1) ::_exit(1);
    for (;;) ::pause();  // killed here: the guard never runs its destructor
  }
  ::close(ready[1]);
  char c = 0;
  ssize_t n = ::read(ready[0], &c, 1);
  ::close(ready[0]);
  if (n != 1) {
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    FAIL("the child could not apply the setting");
  }
  CHECK(testing::read_sysfs(attr) == want);

  // While the run lives, its journal is its own.
  auto early = restore_from_journal(root, j.path);
  REQUIRE_FALSE(early.ok());
  CHECK(early.error().find("is still running") != std::string::npos);
  {
    RestoreGuard second(root, j.path);
    auto st = second.apply(loop.name(), rq_plan(old));
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().find("another diskprobe run (pid " + std::to_string(child)) != std::string::npos);
  }
  CHECK(testing::read_sysfs(attr) == want);

  REQUIRE(::kill(child, SIGKILL) == 0);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFSIGNALED(status));
  CHECK(testing::read_sysfs(attr) == want);  // nobody restored it
  REQUIRE(fs::exists(j.path));

  {
    RestoreGuard next(root, j.path);
    auto st = next.apply(loop.name(), rq_plan(old));  // a real change: a no-op never journals
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().find("run `diskprobe tune --restore` first") != std::string::npos);
  }
  auto restored = restore_from_journal(root, j.path);
  INFO((restored.ok() ? std::string() : restored.error()));
  REQUIRE(restored.ok());
  REQUIRE(restored->size() == 1);
  CHECK((*restored)[0].what == attr);
  CHECK((*restored)[0].old_value == old);
  CHECK(testing::read_sysfs(attr) == old);
  CHECK_FALSE(fs::exists(j.path));
  // Nothing left: a second restore is a no-op.
  auto again = restore_from_journal(root, j.path);
  REQUIRE(again.ok());
  CHECK(again->empty());
}

TEST_CASE("a setting the kernel rejects undoes the earlier ones and names the file", "[tuning]") {
  LoopDevice loop = testing::make_loop();
  TempJournal j;
  SysRoot root;
  const std::string attr = rq_affinity_path(loop);
  const std::string old = testing::read_sysfs(attr);
  RestoreGuard guard(root, j.path);
  Plan p = rq_plan(other_value(old));
  p.queue.push_back({"nomerges", "abc"});  // not a number: the kernel says EINVAL
  auto st = guard.apply(loop.name(), p);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error() == "write(/sys/block/" + loop.name() + "/queue/nomerges, abc): Invalid argument");
  CHECK(testing::read_sysfs(attr) == old);
  CHECK(guard.applied().empty());
  CHECK_FALSE(fs::exists(j.path));
}

TEST_CASE("hold_cstates keeps /dev/cpu_dma_latency open until restore", "[tuning]") {
  if (!fs::exists(kCpuDmaLatency)) {
    WARN("no /dev/cpu_dma_latency on this kernel: not tested");
    return;
  }
  LoopDevice loop = testing::make_loop();
  TempJournal j;
  SysRoot root;
  RestoreGuard guard(root, j.path);
  Plan p;
  p.hold_cstates = true;
  auto st = guard.apply(loop.name(), p);
  INFO((st.ok() ? std::string() : st.error()));
  REQUIRE(st.ok());
  REQUIRE(guard.applied().size() == 1);
  CHECK(guard.applied()[0].what == kCpuDmaLatency);
  CHECK(guard.applied()[0].new_value == "0");
  // Our fd is the request: this process holds /dev/cpu_dma_latency open.
  auto holds = [] {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/proc/self/fd", ec)) {
      if (fs::read_symlink(e.path(), ec) == kCpuDmaLatency) return true;
    }
    return false;
  };
  CHECK(holds());
  CHECK_FALSE(fs::exists(j.path));
  REQUIRE(guard.restore().ok());
  CHECK_FALSE(holds());
}
