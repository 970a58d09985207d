// The tuning journals (issue 13): one per device, liveness by pid and start time, shared
// host settings restored by the last run holding them, gone devices not blocking restore.
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "diskprobe/tuning/restore.h"
#include "tuning_fixtures.h"

using namespace tuning_fixtures;

namespace {

// Two devices and two cpuidle states in a scratch tree.
struct Host {
  TempDir tmp;
  fs::path sys;
  std::string dir;
  explicit Host(const fs::path& sys_at = {}) {
    sys = sys_at.empty() ? tmp.path / "sys" : sys_at;
    for (const char* d : {"vdx", "vdy"}) put(sys / "block" / d / "queue/rq_affinity", "1\n");
    for (int cpu = 0; cpu < 2; ++cpu) put(sys / cpuidle(cpu), "0\n");
    dir = (tmp.path / "run/diskprobe").string();
  }
  static std::string cpuidle(int cpu) {
    return "devices/system/cpu/cpu" + std::to_string(cpu) + "/cpuidle/state1/disable";
  }
  SysRoot root() const { return SysRoot(sys.string(), (tmp.path / "proc").string()); }
  std::string value(const std::string& rel) const { return trim(slurp((sys / rel).string())); }
};

Plan rq(const std::string& v) {
  Plan p;
  p.queue = {{"rq_affinity", v}};
  return p;
}

Plan cstates_off() {
  Plan p;
  p.disable_cstates = {{0, 1, "C1", 2}, {1, 1, "C1", 2}};
  return p;
}

// A forked "other run" (another pid and start time): applies `plan` to `disk`, tells the
// parent whether that worked, and on go() restores and exits, as a run does at its end.
struct OtherRun {
  pid_t pid = -1;
  int ready = -1, go_fd = -1;
  OtherRun(const SysRoot& root, const std::string& dir, const std::string& disk, const Plan& plan,
           const char* comm = nullptr) {
    int r[2], g[2];
    REQUIRE(::pipe(r) == 0);
    REQUIRE(::pipe(g) == 0);
    pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::close(r[0]);
      ::close(g[1]);
      if (comm) ::prctl(PR_SET_NAME, comm);
      {
        RestoreGuard guard(root, dir);
        char c = guard.apply(disk, plan) ? 'y' : 'n';
        if (::write(r[1], &c, 1) != 1) ::_exit(1);
        while (::read(g[0], &c, 1) < 0) {
        }
        if (!guard.restore()) ::_exit(2);
      }
      ::_exit(0);
    }
    ::close(r[1]);
    ::close(g[0]);
    ready = r[0];
    go_fd = g[1];
  }
  bool started() const {
    char c = 0;
    return ::read(ready, &c, 1) == 1 && c == 'y';
  }
  int go() {
    ::close(go_fd);
    go_fd = -1;
    int status = 0;
    ::waitpid(pid, &status, 0);
    pid = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  ~OtherRun() {
    if (pid > 0) go();
    ::close(ready);
  }
};

}  // namespace

TEST_CASE("runs on two devices do not refuse each other; two on one device still do", "[tuning][journal]") {
  Host h;
  SysRoot root = h.root();
  OtherRun a(root, h.dir, "vdx", rq("2"));
  REQUIRE(a.started());
  CHECK(h.value("block/vdx/queue/rq_affinity") == "2");
  CHECK(fs::exists(device_journal(h.dir, "vdx")));
  {
    RestoreGuard other_device(root, h.dir);
    auto st = other_device.apply("vdy", rq("2"));
    INFO((st.ok() ? std::string() : st.error()));
    CHECK(st.ok());
    CHECK(h.value("block/vdy/queue/rq_affinity") == "2");
    RestoreGuard same_device(root, h.dir);
    auto refused = same_device.apply("vdx", rq("0"));
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.error().find("another diskprobe run (pid " + std::to_string(a.pid)) != std::string::npos);
    CHECK(h.value("block/vdx/queue/rq_affinity") == "2");
  }
  CHECK(h.value("block/vdy/queue/rq_affinity") == "1");
  CHECK_FALSE(fs::exists(device_journal(h.dir, "vdy")));
}

TEST_CASE("a live run under another name keeps its journal: liveness is pid and start time, not comm",
          "[tuning][journal]") {
  Host h;
  SysRoot root = h.root();
  OtherRun a(root, h.dir, "vdx", rq("2"), "renamed-probe");  // a copy installed under another name
  REQUIRE(a.started());
  auto early = restore_from_journal(root, device_journal(h.dir, "vdx"));
  REQUIRE_FALSE(early.ok());
  CHECK(early.error().find("is alive: left alone") != std::string::npos);
  auto all = restore_all(root, h.dir);
  CHECK(all.restored.empty());
  CHECK(all.failed.empty());
  CHECK(all.left.size() == 1);
  CHECK(h.value("block/vdx/queue/rq_affinity") == "2");
  CHECK(fs::exists(device_journal(h.dir, "vdx")));
  CHECK(a.go() == 0);
  CHECK(h.value("block/vdx/queue/rq_affinity") == "1");  // its own restore, at its end
  CHECK_FALSE(fs::exists(device_journal(h.dir, "vdx")));
}

TEST_CASE("shared cpuidle settings stay off until the last run holding them ends", "[tuning][journal]") {
  Host h;
  SysRoot root = h.root();
  OtherRun a(root, h.dir, "vdx", cstates_off());
  REQUIRE(a.started());
  CHECK(h.value(Host::cpuidle(0)) == "1");
  {
    RestoreGuard b(root, h.dir);
    auto st = b.apply("vdy", cstates_off());
    INFO((st.ok() ? std::string() : st.error()));
    REQUIRE(st.ok());
    CHECK(b.applied().empty());               // already off, held by the first run
    CHECK(a.go() == 0);                       // the first run ends first...
    CHECK(h.value(Host::cpuidle(0)) == "1");  // ...and leaves them to this one
    CHECK(h.value(Host::cpuidle(1)) == "1");
    auto j = nlohmann::json::parse(slurp(host_journal(h.dir)));
    CHECK(j.at("holders").size() == 1);
    CHECK(j.at("settings").size() == 2);
  }
  CHECK(h.value(Host::cpuidle(0)) == "0");  // the last one out put them back
  CHECK(h.value(Host::cpuidle(1)) == "0");
  CHECK_FALSE(fs::exists(host_journal(h.dir)));
}

TEST_CASE("tune --restore after a killed run whose device is gone: the rest restored, the journal removed",
          "[tuning][journal]") {
  Host h;
  SysRoot root = h.root();
  put(h.sys / "block/vdx/queue/rq_affinity", "2\n");
  put(h.sys / Host::cpuidle(0), "1\n");
  auto dead = nlohmann::json::array({{{"pid", 2147483647}, {"start_time", 1}, {"started", "x"}}});
  auto setting = [&](const std::string& rel, const char* old_value, const char* new_value) {
    return nlohmann::json{{"path", root.sys_path(rel)}, {"old_value", old_value}, {"new_value", new_value}};
  };
  put(device_journal(h.dir, "vdz"),  // vdz: a loop device removed after the kill
      nlohmann::json({{"device", "vdz"},
                      {"holders", dead},
                      {"settings", {setting("block/vdz/queue/rq_affinity", "1", "2")}}})
          .dump());
  put(device_journal(h.dir, "vdx"),  // vdx: the name is back, another device (diskseq) with its default
      nlohmann::json({{"device", "vdx"},
                      {"diskseq", "7"},
                      {"holders", dead},
                      {"settings", {setting("block/vdx/queue/rq_affinity", "1", "2")}}})
          .dump());
  put(h.sys / "block/vdx/diskseq", "8\n");
  put(h.sys / "block/vdx/queue/rq_affinity", "1\n");
  put(host_journal(h.dir),
      nlohmann::json({{"holders", dead}, {"settings", {setting(Host::cpuidle(0), "0", "1")}}}).dump());

  auto r = restore_all(root, h.dir);
  INFO((r.failed.empty() ? std::string() : r.failed.front()));
  CHECK(r.failed.empty());
  REQUIRE(r.restored.size() == 1);
  CHECK(r.restored[0].what == root.sys_path(Host::cpuidle(0)));
  CHECK(h.value(Host::cpuidle(0)) == "0");
  CHECK(r.gone.size() == 1);
  REQUIRE(r.already.size() == 1);  // nothing left changed there
  CHECK(r.already[0].what == root.sys_path("block/vdx/queue/rq_affinity"));
  CHECK_FALSE(fs::exists(device_journal(h.dir, "vdz")));
  CHECK_FALSE(fs::exists(device_journal(h.dir, "vdx")));
  CHECK_FALSE(fs::exists(host_journal(h.dir)));
  // Nothing blocks the next run.
  RestoreGuard next(root, h.dir);
  CHECK(next.apply("vdy", rq("2")).ok());
}

TEST_CASE("a --sysfs root under /dev is journalled like any other", "[tuning][journal]") {
  char t[] = "/dev/shm/diskprobe-journal-XXXXXX";
  if (::mkdtemp(t) == nullptr) {
    WARN("no writable /dev/shm: not tested");
    return;
  }
  fs::path shm = t;
  {
    Host h(shm / "sys");
    SysRoot root = h.root();
    RestoreGuard g(root, h.dir);
    REQUIRE(g.apply("vdx", rq("2")).ok());
    auto j = nlohmann::json::parse(slurp(device_journal(h.dir, "vdx")));
    REQUIRE(j.at("settings").size() == 1);
    CHECK(j["settings"][0]["path"] == (shm / "sys/block/vdx/queue/rq_affinity").string());
  }
  std::error_code ec;
  fs::remove_all(shm, ec);
}

namespace {

// A killed run's journal for vdx (diskseq 7, since detached: diskseq 8) with the three queue
// settings a profile sets, and the values the queue holds now.
struct DetachedLoop {
  Host h;
  SysRoot root = h.root();
  DetachedLoop(const char* nomerges, const char* rq_affinity, const char* scheduler) {
    auto setting = [&](const std::string& rel, const char* old_value, const char* new_value) {
      return nlohmann::json{{"path", root.sys_path(rel)}, {"old_value", old_value}, {"new_value", new_value}};
    };
    auto dead = nlohmann::json::array({{{"pid", 2147483647}, {"start_time", 1}, {"started", "x"}}});
    put(device_journal(h.dir, "vdx"),
        nlohmann::json({{"device", "vdx"},
                        {"diskseq", "7"},
                        {"holders", dead},
                        {"settings",
                         {setting("block/vdx/queue/rq_affinity", "1", "2"),
                          setting("block/vdx/queue/nomerges", "0", "2"),
                          setting("block/vdx/queue/scheduler", "none", "mq-deadline")}}})
            .dump());
    put(h.sys / "block/vdx/diskseq", "8\n");
    put(h.sys / "block/vdx/queue/nomerges", std::string(nomerges) + "\n");
    put(h.sys / "block/vdx/queue/rq_affinity", std::string(rq_affinity) + "\n");
    put(h.sys / "block/vdx/queue/scheduler", std::string(scheduler) + "\n");
  }
  std::string value(const char* attribute) const {
    return h.value(std::string("block/vdx/queue/") + attribute);
  }
};

}  // namespace

// Before: another diskseq was taken for another device, so after a killed --scratch run (its
// loop device detached, the queue and the run's settings still there) `tune --restore` said
// "its device is gone", exited 0 and left nomerges, rq_affinity and the scheduler changed.
TEST_CASE("tune --restore after a killed run whose loop device was detached puts its settings back",
          "[tuning][journal]") {
  DetachedLoop d("2", "2", "none [mq-deadline] kyber");
  auto r = restore_all(d.root, d.h.dir);
  INFO((r.failed.empty() ? std::string() : r.failed.front()));
  CHECK(r.failed.empty());
  CHECK(r.gone.empty());
  CHECK(r.restored.size() == 3);
  CHECK(d.value("nomerges") == "0");
  CHECK(d.value("rq_affinity") == "1");
  // A fixture file is written over in place, not switched as the kernel does: what was written
  // is in the report.
  bool scheduler = false;
  for (const auto& s : r.restored) {
    scheduler = scheduler || (s.what == d.root.sys_path("block/vdx/queue/scheduler") && s.old_value == "none");
  }
  CHECK(scheduler);
  CHECK_FALSE(fs::exists(device_journal(d.h.dir, "vdx")));
}

TEST_CASE("tune --restore under another diskseq: the old values back already are left, nothing fails",
          "[tuning][journal]") {
  DetachedLoop d("0", "1", "[none] mq-deadline kyber");  // a new device with the kernel's defaults
  auto r = restore_all(d.root, d.h.dir);
  CHECK(r.failed.empty());
  CHECK(r.restored.empty());
  CHECK(r.already.size() == 3);
  CHECK(d.value("scheduler") == "[none] mq-deadline kyber");
  CHECK_FALSE(fs::exists(device_journal(d.h.dir, "vdx")));
}

TEST_CASE("tune --restore under another diskseq: a value someone else set since is left and reported",
          "[tuning][journal]") {
  DetachedLoop d("1", "2", "none mq-deadline [kyber]");  // nomerges and scheduler set by someone else
  auto r = restore_all(d.root, d.h.dir);
  REQUIRE(r.failed.size() == 1);  // tune --restore exits 1: they are not what they were before the run
  CHECK(r.failed[0].find("not restored " + d.root.sys_path("block/vdx/queue/nomerges") +
                         ": it is now 1, not the 2 the run set") != std::string::npos);
  CHECK(r.failed[0].find("scheduler: it is now kyber, not the mq-deadline the run set") != std::string::npos);
  REQUIRE(r.restored.size() == 1);  // rq_affinity was still the run's
  CHECK(d.value("rq_affinity") == "1");
  CHECK(d.value("nomerges") == "1");
  CHECK(d.value("scheduler") == "none mq-deadline [kyber]");
  // Not kept: a journal nothing can settle would refuse every later run on the device.
  CHECK_FALSE(fs::exists(device_journal(d.h.dir, "vdx")));
}

// Issue 37: a pid and start time that match a live process but were written under another
// boot id are an earlier boot's run; the process now holding that pid is not its owner.
TEST_CASE("a journal written under another boot id is a dead run's, even when its pid and start time match",
          "[tuning][journal]") {
  Host h;
  SysRoot root = h.root();
  OtherRun a(root, h.dir, "vdx", rq("2"), "earlier-boot");
  REQUIRE(a.started());
  const std::string path = device_journal(h.dir, "vdx");
  auto doc = nlohmann::json::parse(slurp(path));
  REQUIRE(doc.at("holders").size() == 1);
  CHECK_FALSE(doc["holders"][0].value("boot_id", "").empty());  // every new journal records it
  doc["holders"][0]["boot_id"] = "00000000-0000-0000-0000-000000000000";
  put(path, doc.dump());
  auto all = restore_all(root, h.dir);
  CHECK(all.left.empty());
  CHECK(all.failed.empty());
  CHECK(all.restored.size() == 1);
  CHECK(h.value("block/vdx/queue/rq_affinity") == "1");
  CHECK_FALSE(fs::exists(path));
  CHECK(a.go() == 0);  // its own restore finds its settings back and no journal left
}
