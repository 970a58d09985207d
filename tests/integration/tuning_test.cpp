// RestoreGuard on a real loop device: settings applied and restored, the journal written
// before the change, and a SIGKILLed run undone by restore_from_journal.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <sstream>
#include <thread>

#include "diskprobe/tuning/restore.h"
#include "harness.h"

namespace fs = std::filesystem;
using namespace diskprobe;
using namespace diskprobe::tuning;

namespace {

// The journals' directory (`path`) lives in a temp dir, two levels down so the guard must
// create them.
struct TempJournal {
  fs::path dir;
  std::string path;
  TempJournal() {
    char t[] = "/tmp/diskprobe-tuning-it-XXXXXX";
    REQUIRE(::mkdtemp(t) != nullptr);
    dir = t;
    path = (dir / "run/diskprobe").string();
  }
  std::string of(const LoopDevice& loop) const { return device_journal(path, loop.name()); }
  // No journal of any device, nor host.json: every run put everything back.
  bool none() const {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(path, ec)) {
      if (e.path().extension() == ".json") return false;
    }
    return true;
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
    REQUIRE(fs::exists(j.of(loop)));
    auto doc = nlohmann::json::parse(slurp(j.of(loop)));
    CHECK(doc.at("holders")[0].at("pid").get<int>() == ::getpid());
    REQUIRE(doc.at("settings").size() == 1);
    CHECK(doc["settings"][0]["path"] == attr);
    CHECK(doc["settings"][0]["old_value"] == old);
    REQUIRE(guard.applied().size() == 1);
    CHECK(guard.applied()[0].what == attr);
    CHECK(guard.applied()[0].old_value == old);
    CHECK(guard.applied()[0].new_value == want);
  }
  CHECK(testing::read_sysfs(attr) == old);
  CHECK_FALSE(fs::exists(j.of(loop)));
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
  auto early = restore_from_journal(root, j.of(loop));
  REQUIRE_FALSE(early.ok());
  CHECK(early.error().find("is alive: left alone") != std::string::npos);
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
  REQUIRE(fs::exists(j.of(loop)));

  {
    RestoreGuard next(root, j.path);
    auto st = next.apply(loop.name(), rq_plan(old));  // a real change: a no-op never journals
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().find("run `diskprobe tune --restore` first") != std::string::npos);
  }
  auto restored = restore_from_journal(root, j.of(loop));
  INFO((restored.ok() ? std::string() : restored.error()));
  REQUIRE(restored.ok());
  REQUIRE(restored->size() == 1);
  CHECK((*restored)[0].what == attr);
  CHECK((*restored)[0].old_value == old);
  CHECK(testing::read_sysfs(attr) == old);
  CHECK_FALSE(fs::exists(j.of(loop)));
  // Nothing left: a second restore is a no-op.
  auto again = restore_from_journal(root, j.of(loop));
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
  CHECK_FALSE(fs::exists(j.of(loop)));
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
  CHECK_FALSE(fs::exists(j.of(loop)));
  REQUIRE(guard.restore().ok());
  CHECK_FALSE(holds());
}

// ---- Through the CLI: `diskprobe run` and `diskprobe tune --apply` on a loop device ----
//
// Every diskprobe started here journals to its own file (DISKPROBE_JOURNAL), so a test never
// meets the journal of a run another user started on this host at the same time.

namespace {

struct Cli {
  TempJournal j;
  std::string out() const { return j.dir.string() + "/out"; }
  std::string err() const { return j.dir.string() + "/err"; }

  // Starts diskprobe with its streams in files; returns its pid.
  pid_t spawn(const std::vector<std::string>& args) const {
    return testing::spawn_diskprobe(args, out(), err(), {{"DISKPROBE_JOURNAL", j.path}});
  }
  // Starts any command (argv[0] looked up in PATH) the same way.
  pid_t spawn_cmd(const std::vector<std::string>& cmd) const {
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::setenv("DISKPROBE_JOURNAL", j.path.c_str(), 1);
      if (!std::freopen(out().c_str(), "w", stdout) || !std::freopen(err().c_str(), "w", stderr))
        ::_exit(126);
      std::vector<char*> argv;
      for (const auto& a : cmd) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execvp(argv[0], argv.data());
      ::_exit(127);
    }
    return pid;
  }
  // Runs diskprobe to the end with this journal.
  testing::CommandResult run(const std::vector<std::string>& args) const {
    std::vector<std::string> argv{"env", "DISKPROBE_JOURNAL=" + j.path, DISKPROBE_BIN};
    argv.insert(argv.end(), args.begin(), args.end());
    return testing::run(argv);
  }
};

// A child that did not get where the test expected: killed, reaped, and whatever it
// changed put back from its journal, so a failing test leaves the host as it found it.
void abandon(pid_t pid, const Cli& cli) {
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  cli.run({"tune", "--restore"});
}

using testing::wait_exit;

// Polls `ready` for up to 30 s (a loaded 2-CPU machine starts processes slowly); false if the
// process ended first or the time ran out.
template <class F>
bool wait_until(pid_t pid, F ready) {
  for (int i = 0; i < 3000; ++i) {
    if (ready()) return true;
    siginfo_t info{};  // WNOWAIT: wait_exit() still reaps it and reads its status
    if (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
        info.si_pid == pid) {
      return ready();
    }
    ::usleep(10000);
  }
  return false;
}

std::string queue_attr(const LoopDevice& loop, const std::string& attr) {
  return "/sys/block/" + loop.name() + "/queue/" + attr;
}

// The active choice of "none [mq-deadline] kyber".
std::string active_scheduler(const LoopDevice& loop) {
  std::string s = testing::read_sysfs(queue_attr(loop, "scheduler"));
  auto b = s.find('['), e = s.find(']');
  return b != std::string::npos && e != std::string::npos ? s.substr(b + 1, e - b - 1) : s;
}

// What the loop device has now, and a different value of each for the run to set.
struct QueueState {
  std::string rq_affinity, scheduler, nomerges;
  bool operator==(const QueueState& o) const {
    return rq_affinity == o.rq_affinity && scheduler == o.scheduler && nomerges == o.nomerges;
  }
};
std::ostream& operator<<(std::ostream& os, const QueueState& q) {
  return os << "rq_affinity=" << q.rq_affinity << " scheduler=" << q.scheduler << " nomerges=" << q.nomerges;
}

QueueState read_state(const LoopDevice& loop) {
  return {testing::read_sysfs(queue_attr(loop, "rq_affinity")), active_scheduler(loop),
          testing::read_sysfs(queue_attr(loop, "nomerges"))};
}

// The same by name: a detached LoopDevice no longer knows its own.
QueueState read_state(const std::string& name) {
  const std::string q = "/sys/block/" + name + "/queue/";
  std::string s = testing::read_sysfs(q + "scheduler");
  auto b = s.find('['), e = s.find(']');
  if (b != std::string::npos && e != std::string::npos) s = s.substr(b + 1, e - b - 1);
  return {testing::read_sysfs(q + "rq_affinity"), s, testing::read_sysfs(q + "nomerges")};
}

QueueState wanted(const LoopDevice& loop) {
  QueueState now = read_state(loop);
  std::string offered = testing::read_sysfs(queue_attr(loop, "scheduler"));
  std::string sched = now.scheduler == "none" ? "mq-deadline" : "none";
  if (offered.find(sched) == std::string::npos) sched = now.scheduler;  // only one offered
  return {now.rq_affinity == "2" ? "1" : "2", sched, now.nomerges == "2" ? "1" : "2"};
}

std::vector<std::string> run_args(const LoopDevice& loop, const QueueState& w, const std::string& runtime) {
  return {"run",           "--profile",   "essd-plx-latency", loop.name(), "--runtime",  runtime,
          "--rq_affinity", w.rq_affinity, "--scheduler",      w.scheduler, "--nomerges", w.nomerges};
}

bool holds_cpu_dma_latency(pid_t pid) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
    std::error_code lec;
    if (fs::read_symlink(e.path(), lec) == kCpuDmaLatency) return true;
  }
  return false;
}

// The kernel's current CPU latency limit (PM QoS): 0 while someone holds C-states off.
int32_t cpu_latency_limit() {
  std::ifstream f(kCpuDmaLatency, std::ios::binary);
  int32_t v = -1;
  f.read(reinterpret_cast<char*>(&v), sizeof v);
  return f ? v : -1;
}

// cpuN/cpuidle/stateK/disable for every state but state0, "" where there is no cpuidle.
std::map<std::string, std::string> deep_cstates() {
  std::map<std::string, std::string> out;
  std::error_code ec;
  for (const auto& cpu : fs::directory_iterator("/sys/devices/system/cpu", ec)) {
    std::string n = cpu.path().filename();
    if (n.rfind("cpu", 0) != 0 || n.size() < 4 || !std::isdigit(static_cast<unsigned char>(n[3]))) continue;
    std::error_code ec2;
    for (const auto& st : fs::directory_iterator(cpu.path() / "cpuidle", ec2)) {
      std::string s = st.path().filename();
      if (s.rfind("state", 0) != 0 || s == "state0") continue;
      out[(st.path() / "disable").string()] = testing::read_sysfs((st.path() / "disable").string());
    }
  }
  return out;
}

}  // namespace

TEST_CASE("CLI run sets rq_affinity, scheduler and nomerges and restores them after a normal run",
          "[tuning][cli]") {
  LoopDevice loop = testing::make_loop(128ull << 20);
  Cli cli;
  const QueueState before = read_state(loop);
  const QueueState want = wanted(loop);
  INFO("before: " << before << "; want: " << want);
  std::vector<std::string> args = run_args(loop, want, "3");
  args.insert(args.end(), {"--output-format", "json"});
  pid_t pid = cli.spawn(args);
  bool seen = wait_until(pid, [&] { return read_state(loop) == want; });
  int rc = wait_exit(pid);
  INFO("stderr: " << slurp(cli.err()));
  REQUIRE(rc == 0);
  CHECK(seen);  // the run held all three while it measured
  auto j = nlohmann::json::parse(slurp(cli.out()));
  std::map<std::string, std::pair<std::string, std::string>> recorded;
  for (const auto& s : j.at("tuning")) recorded[s["what"]] = {s["old_value"], s["new_value"]};
  CHECK(recorded[queue_attr(loop, "rq_affinity")] == std::make_pair(before.rq_affinity, want.rq_affinity));
  CHECK(recorded[queue_attr(loop, "nomerges")] == std::make_pair(before.nomerges, want.nomerges));
  if (want.scheduler != before.scheduler) {
    CHECK(recorded[queue_attr(loop, "scheduler")] == std::make_pair(before.scheduler, want.scheduler));
  }
  CHECK(read_state(loop) == before);
  CHECK(cli.j.none());
}

// A 120 s run started on a new loop device, REQUIREd to have applied its settings and written
// its journal; `before` is the queue as it was, `want` what the run set.
struct AppliedRun {
  LoopDevice loop = testing::make_loop(128ull << 20);
  Cli cli;
  QueueState before = read_state(loop);
  QueueState want = wanted(loop);
  pid_t pid = -1;
  AppliedRun() {
    pid = cli.spawn(run_args(loop, want, "120"));
    bool applied = wait_until(pid, [&] { return read_state(loop) == want && fs::exists(cli.j.of(loop)); });
    if (!applied) abandon(pid, cli);
    REQUIRE(applied);
  }
};

TEST_CASE("CLI run interrupted by SIGINT restores rq_affinity, scheduler and nomerges", "[tuning][cli]") {
  AppliedRun run;
  LoopDevice& loop = run.loop;
  Cli& cli = run.cli;
  const QueueState& before = run.before;
  const pid_t pid = run.pid;
  CHECK(holds_cpu_dma_latency(pid));  // essd-plx-latency holds C-states off
  REQUIRE(::kill(pid, SIGINT) == 0);
  int rc = wait_exit(pid);
  std::string err = slurp(cli.err());
  INFO("stderr: " << err);
  CHECK(rc == 1);
  CHECK(err.find("interrupted by Interrupt: partial results above; every setting was restored") !=
        std::string::npos);
  CHECK(read_state(loop) == before);
  CHECK(cli.j.none());
}

TEST_CASE("CLI run killed with SIGKILL is undone by `diskprobe tune --restore`", "[tuning][cli]") {
  AppliedRun run;
  LoopDevice& loop = run.loop;
  Cli& cli = run.cli;
  const QueueState& before = run.before;
  const QueueState& want = run.want;
  const pid_t pid = run.pid;
  REQUIRE(::kill(pid, SIGKILL) == 0);
  CHECK(wait_exit(pid) == 128 + SIGKILL);
  CHECK(read_state(loop) == want);  // nobody put it back
  REQUIRE(fs::exists(cli.j.of(loop)));
  CHECK(nlohmann::json::parse(slurp(cli.j.of(loop))).at("holders")[0].at("pid").get<int>() == pid);

  // A new run refuses to start on top of the killed one's changes.
  auto refused = cli.run(run_args(loop, want, "1"));
  CHECK(refused.exit_code == 1);
  CHECK(refused.err.find("run `diskprobe tune --restore` first") != std::string::npos);

  auto r = cli.run({"tune", "--restore"});
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("restored " + queue_attr(loop, "rq_affinity") + " to " + before.rq_affinity) !=
        std::string::npos);
  CHECK(r.out.find("restored " + queue_attr(loop, "nomerges") + " to " + before.nomerges) !=
        std::string::npos);
  if (want.scheduler != before.scheduler) {
    CHECK(r.out.find("restored " + queue_attr(loop, "scheduler") + " to " + before.scheduler) !=
          std::string::npos);
  }
  CHECK(read_state(loop) == before);
  CHECK(cli.j.none());
  auto again = cli.run({"tune", "--restore"});
  CHECK(again.exit_code == 0);
  CHECK(again.out == "nothing to restore: no journal in " + cli.j.path + "\n");
}

TEST_CASE("CLI tune --apply holds /dev/cpu_dma_latency and cpuidle states until Ctrl-C, then releases them",
          "[tuning][cli]") {
  if (!fs::exists(kCpuDmaLatency)) {
    WARN("no /dev/cpu_dma_latency on this kernel: not tested");
    return;
  }
  LoopDevice loop = testing::make_loop(64ull << 20);
  Cli cli;
  const QueueState before = read_state(loop);
  const auto cstates_before = deep_cstates();
  const int32_t limit_before = cpu_latency_limit();
  pid_t pid =
      cli.spawn({"tune", loop.name(), "--apply", "--nomerges", "2", "--cstate_latency_limit_us", "0"});
  bool applied =
      wait_until(pid, [&] { return slurp(cli.err()).find("settings applied") != std::string::npos; });
  if (!applied) abandon(pid, cli);
  INFO("stderr: " << slurp(cli.err()));
  REQUIRE(applied);
  CHECK(holds_cpu_dma_latency(pid));
  CHECK(cpu_latency_limit() == 0);
  CHECK(testing::read_sysfs(queue_attr(loop, "nomerges")) == "2");
  if (cstates_before.empty()) {
    WARN("this kernel has no cpuidle states: only /dev/cpu_dma_latency is tested");
    CHECK(slurp(cli.out()).find("no cpuidle states to disable") != std::string::npos);
  }
  for (const auto& [path, old] : cstates_before) {
    INFO(path);
    CHECK(testing::read_sysfs(path) == "1");
  }
  REQUIRE(::kill(pid, SIGINT) == 0);
  CHECK(wait_exit(pid) == 0);
  CHECK(slurp(cli.err()).find("diskprobe: settings restored") != std::string::npos);
  CHECK_FALSE(holds_cpu_dma_latency(pid));
  // Someone else may hold it too; if nobody did before, nobody does now.
  if (limit_before != 0) CHECK(cpu_latency_limit() == limit_before);
  CHECK(deep_cstates() == cstates_before);
  CHECK(read_state(loop) == before);
  CHECK(cli.j.none());
}

TEST_CASE("CLI tune --apply killed with SIGKILL: tune --restore puts cpuidle states back", "[tuning][cli]") {
  const auto cstates_before = deep_cstates();
  if (cstates_before.empty()) {
    WARN("this kernel has no cpuidle states: not tested");
    return;
  }
  LoopDevice loop = testing::make_loop(64ull << 20);
  Cli cli;
  pid_t pid = cli.spawn({"tune", loop.name(), "--apply", "--cstate_latency_limit_us", "0"});
  bool applied =
      wait_until(pid, [&] { return slurp(cli.err()).find("settings applied") != std::string::npos; });
  if (!applied) abandon(pid, cli);
  REQUIRE(applied);
  REQUIRE(::kill(pid, SIGKILL) == 0);
  CHECK(wait_exit(pid) == 128 + SIGKILL);
  for (const auto& [path, old] : cstates_before) CHECK(testing::read_sysfs(path) == "1");
  // The kernel dropped the PM QoS request with the process: nothing to restore there.
  auto r = cli.run({"tune", "--restore"});
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  for (const auto& [path, old] : cstates_before) {
    CHECK(r.out.find("restored " + path + " to " + old) != std::string::npos);
  }
  CHECK(deep_cstates() == cstates_before);
  CHECK(cli.j.none());
}

TEST_CASE("CLI tune --strict refuses a clamped plan with exit 2 and changes nothing", "[tuning][cli]") {
  LoopDevice loop = testing::make_loop(64ull << 20);
  Cli cli;
  const QueueState before = read_state(loop);
  unsigned cpus = std::thread::hardware_concurrency();
  std::string jobs = std::to_string(cpus + 4);
  auto r = cli.run({"tune", loop.name(), "--apply", "--strict", "--pinning", "hw-queues", "--numjobs", jobs,
                    "--nomerges", "2"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("diskprobe: error: --strict: numjobs " + jobs + " exceeds the") != std::string::npos);
  CHECK(r.err.find("nothing was changed") != std::string::npos);
  CHECK(r.out.empty());
  CHECK(read_state(loop) == before);
  CHECK(cli.j.none());
  // Without --strict the same plan runs with one job per CPU.
  auto shown = cli.run({"tune", loop.name(), "--pinning", "hw-queues", "--numjobs", jobs, "--json"});
  REQUIRE(shown.exit_code == 0);
  auto j = nlohmann::json::parse(shown.out);
  CHECK(j["plan"]["numjobs"].get<unsigned>() <= cpus);
  CHECK(j["plan"]["deviations"].size() == 1);
}

TEST_CASE("CLI tune --json on the captured vda fixture names the request-queue interrupt", "[tuning][cli]") {
  const std::string f = std::string(DISKPROBE_FIXTURES) + "/tuning/virtio-vda";
  auto r = testing::run_diskprobe({"--sysfs", f + "/sys", "--procfs", f + "/proc", "tune", "vda", "--json"});
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["plan"]["pins"].size() == 1);
  auto irq = j["plan"]["pins"][0]["completion_irq"];
  CHECK(irq["name"] == "virtio1-req.0");
  CHECK(irq["irq"] == 36);
  CHECK(irq["effective_cpu"] == 1);
  CHECK(j["plan"]["job_cpus"] == nlohmann::json::array({1}));
  CHECK(j["topology"]["interrupts"][0]["name"] == "virtio1-req.0");
  CHECK(j["topology"]["interrupts"][0]["kind"] == "queue");
  CHECK(j["topology"]["interrupts"][1]["name"] == "virtio1-config");
  CHECK(j["topology"]["interrupts"][1]["kind"] == "config");
  CHECK(j["topology"]["cpuidle_driver"] == "haltpoll");
}

TEST_CASE("CLI tune reads sysfs and procfs only: it never opens the device", "[tuning][cli]") {
  LoopDevice loop = testing::make_loop(64ull << 20);
  if (testing::sh("command -v strace >/dev/null").exit_code != 0) {
    WARN("strace is not installed: not tested");
    return;
  }
  TempJournal j;
  std::string trace = j.dir.string() + "/trace";
  auto r = testing::run(testing::diskprobe_traced(trace, "open,openat,openat2", {"tune", loop.name(), "--json"}));
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  std::string calls = slurp(trace);
  CHECK(calls.find("/sys/block/" + loop.name()) != std::string::npos);  // it did read the topology
  CHECK(calls.find("\"" + loop.path() + "\"") == std::string::npos);
  CHECK(calls.find("\"/dev/block/") == std::string::npos);
}

TEST_CASE("CLI tune --json on this machine's vda pins to its request-queue interrupt", "[tuning][cli]") {
  if (!fs::exists("/sys/block/vda/mq")) {
    WARN("no virtio-blk vda on this machine: not tested (the virtio-vda fixture test covers it)");
    return;
  }
  auto r = testing::run_diskprobe({"tune", "vda", "--json"});
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  if (j["topology"]["driver"] != "virtio-blk") {
    WARN("vda is not virtio-blk here: not tested");
    return;
  }
  REQUIRE(j["plan"]["pins"].size() == 1);
  auto irq = j["plan"]["pins"][0]["completion_irq"];
  std::string dev = j["topology"]["driver_device"];
  CHECK(irq["name"].get<std::string>().rfind(dev + "-req.", 0) == 0);
  // The same interrupt in the topology is a queue interrupt delivered to the pinned CPU.
  bool found = false;
  for (const auto& i : j["topology"]["interrupts"]) {
    if (i["irq"] != irq["irq"]) continue;
    found = true;
    CHECK(i["kind"] == "queue");
    CHECK(i["effective_affinity"] == nlohmann::json::array({irq["effective_cpu"]}));
  }
  CHECK(found);
  CHECK(testing::read_sysfs("/proc/irq/" + std::to_string(irq["irq"].get<int>()) +
                            "/effective_affinity_list") == std::to_string(irq["effective_cpu"].get<int>()));
}

TEST_CASE("CLI tune --apply closes /dev/cpu_dma_latency itself on Ctrl-C, before it exits", "[tuning][cli]") {
  if (!fs::exists(kCpuDmaLatency) || testing::sh("command -v strace >/dev/null").exit_code != 0) {
    WARN("no /dev/cpu_dma_latency or no strace: not tested");
    return;
  }
  LoopDevice loop = testing::make_loop(64ull << 20);
  Cli cli;
  std::string trace = cli.j.dir.string() + "/trace";
  pid_t tracer =
      cli.spawn_cmd(testing::diskprobe_traced(trace, "open,openat,close,exit_group", {"tune", loop.name(), "--apply"}));
  // diskprobe is the child of strace that runs diskprobe (strace forks short-lived probes
  // of the kernel's ptrace features first).
  pid_t pid = -1;
  bool applied = wait_until(tracer, [&] {
    if (pid < 0) {
      std::istringstream kids(testing::read_sysfs("/proc/" + std::to_string(tracer) + "/task/" +
                                                  std::to_string(tracer) + "/children"));
      for (pid_t k; kids >> k;) {
        if (testing::read_sysfs("/proc/" + std::to_string(k) + "/comm") == "diskprobe") pid = k;
      }
    }
    return pid > 0 && slurp(cli.err()).find("settings applied") != std::string::npos;
  });
  // However the test ends, no traced diskprobe is left holding settings (killing strace
  // alone would detach it and leave it running).
  struct Reaper {
    const Cli& cli;
    pid_t tracer;
    pid_t& pid;
    bool done = false;
    ~Reaper() {
      if (done) return;
      if (pid > 0) ::kill(pid, SIGKILL);
      abandon(tracer, cli);
    }
  } reaper{cli, tracer, pid};
  INFO("stderr: " << slurp(cli.err()));
  REQUIRE(applied);
  CHECK(holds_cpu_dma_latency(pid));  // before Ctrl-C
  REQUIRE(::kill(pid, SIGINT) == 0);
  int code = wait_exit(tracer);
  reaper.done = true;
  CHECK(code == 0);  // strace exits with its tracee's status
  CHECK(slurp(cli.err()).find("diskprobe: settings restored") != std::string::npos);
  // After Ctrl-C: the process closed the descriptor itself (RestoreGuard::restore), not the
  // kernel at exit.
  std::string calls = slurp(trace);
  std::smatch opening;
  REQUIRE(std::regex_search(calls, opening,
                            std::regex("openat\\(AT_FDCWD, \"/dev/cpu_dma_latency\", [^)]*\\) = ([0-9]+)")));
  std::string fd = opening[1];
  size_t opened = static_cast<size_t>(opening.position(0));
  // fd stays taken while held, so the first close(fd) after the open is this one.
  std::smatch closing;
  std::string after = calls.substr(opened);
  size_t closed = std::regex_search(after, closing, std::regex("close\\(" + fd + "\\)\\s+= 0"))
                      ? opened + static_cast<size_t>(closing.position(0))
                      : std::string::npos;
  size_t exited = calls.find("exit_group(", opened);
  INFO(calls.substr(opened));
  CHECK(closed != std::string::npos);
  CHECK(exited != std::string::npos);
  CHECK(closed < exited);
  CHECK(cli.j.none());
}

TEST_CASE("CLI run of the latency profile on a zram device pins its job and leaves rq_affinity alone",
          "[tuning][cli]") {
  testing::ScratchZram z(64ull << 20);
  if (z.path.empty()) {
    WARN("no zram-control on this kernel: not tested (the zram-bio fixture test covers the plan)");
    return;
  }
  Cli cli;
  // Before the plan knew bio-based devices, this run ended with "open(.../queue/rq_affinity):
  // No such file or directory": zram has no such file.
  auto r = cli.run({"run", "--profile", "essd-plx-latency", z.path, "--rw", "randread", "--runtime", "1",
                    "--ramp_time", "0", "--output-format", "json"});
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["jobs"].size() == 1);
  int cpu = j["jobs"][0]["cpu"];
  CHECK(cpu >= 0);  // pinned: the io-wq workers and the completions share its CPU
  bool rq_note = false;
  for (const auto& n : j["notes"]) {
    rq_note = rq_note || n.get<std::string>().find("has no queue/rq_affinity") != std::string::npos;
  }
  CHECK(rq_note);
  for (const auto& t : j["tuning"]) CHECK(t["what"].get<std::string>().find("rq_affinity") == std::string::npos);
  CHECK(j["read"]["ios"].get<uint64_t>() > 0);
  CHECK(cli.j.none());
}

// Before: liveness compared /proc/PID/comm, so a run from a binary installed under another
// name looked dead: `tune --restore` put rq_affinity back mid-run and deleted its journal.
TEST_CASE("CLI run from a copy of the binary under another name: tune --restore leaves it alone",
          "[tuning][cli][journal]") {
  LoopDevice loop = testing::make_loop(128ull << 20);
  Cli cli;
  const std::string copy = cli.j.dir.string() + "/probe-renamed";
  fs::copy_file(DISKPROBE_REAL_BIN, copy);  // not the launcher: it finds the real one beside itself
  const QueueState before = read_state(loop);
  const QueueState want = wanted(loop);
  std::vector<std::string> cmd{copy};
  for (const auto& a : run_args(loop, want, "120")) cmd.push_back(a);
  pid_t pid = cli.spawn_cmd(cmd);
  bool applied = wait_until(pid, [&] { return read_state(loop) == want && fs::exists(cli.j.of(loop)); });
  if (!applied) abandon(pid, cli);
  REQUIRE(applied);
  auto r = cli.run({"tune", "--restore"});
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 0);  // nothing of a dead run is left changed
  CHECK(r.err.find("is alive: left alone") != std::string::npos);
  CHECK(read_state(loop) == want);  // still the run's
  CHECK(fs::exists(cli.j.of(loop)));
  REQUIRE(::kill(pid, SIGINT) == 0);
  CHECK(wait_exit(pid) == 1);
  CHECK(read_state(loop) == before);
  CHECK(cli.j.none());
}

// Before: the restore of a removed loop device failed, the journal stayed, and every later
// run was refused until someone deleted it by hand. Then: a detached loop device (another
// diskseq) was taken for a gone one, its journal dropped with exit 0 while the settings the
// run made stayed in its queue, which a detach does not reset.
TEST_CASE(
    "CLI run killed with SIGKILL, its loop device then detached: tune --restore puts the settings back",
    "[tuning][cli][journal]") {
  std::optional<LoopDevice> loop(testing::make_loop(128ull << 20));
  Cli cli;
  const std::string name = loop->name(), journal = cli.j.of(*loop);
  const QueueState before = read_state(*loop);
  const QueueState want = wanted(*loop);
  pid_t pid = cli.spawn(run_args(*loop, want, "120"));
  bool applied = wait_until(pid, [&] { return read_state(*loop) == want && fs::exists(journal); });
  if (!applied) abandon(pid, cli);
  REQUIRE(applied);
  REQUIRE(::kill(pid, SIGKILL) == 0);
  CHECK(wait_exit(pid) == 128 + SIGKILL);
  const std::string seq = testing::read_sysfs("/sys/block/" + name + "/diskseq");
  REQUIRE(loop->remove().ok());  // LOOP_CLR_FD: the node and its queue stay
  CHECK(testing::read_sysfs("/sys/block/" + name + "/diskseq") != seq);
  CHECK(read_state(name) == want);  // the detach left the run's settings in the queue
  auto r = cli.run({"tune", "--restore"});
  INFO("stdout: " << r.out << "stderr: " << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("restored /sys/block/" + name + "/queue/rq_affinity to " + before.rq_affinity) !=
        std::string::npos);
  CHECK(r.out.find("its device is gone") == std::string::npos);
  CHECK(read_state(name) == before);
  CHECK(cli.j.none());
  loop.reset();
  LoopDevice next = testing::make_loop(128ull << 20);
  auto again = cli.run(run_args(next, wanted(next), "1"));
  INFO("next run: " << again.err);
  CHECK(again.exit_code == 0);
}

// The same through --scratch: its loop device is attached with autoclear, so the kill itself
// detaches it, and nothing else would ever put its queue settings back.
TEST_CASE("CLI --scratch run killed with SIGKILL: tune --restore puts its loop device's settings back",
          "[tuning][cli][journal]") {
  Cli cli;
  pid_t pid = cli.spawn({"run", "--profile", "essd-plx-latency", "--scratch", "64M", "--runtime", "120",
                         "--rq_affinity", "2", "--nomerges", "2", "--scheduler", "mq-deadline"});
  std::string journal;
  bool applied = wait_until(pid, [&] {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(cli.j.path, ec)) {
      if (e.path().extension() == ".json" && e.path().stem() != "host") journal = e.path().string();
    }
    return !journal.empty();
  });
  if (!applied) abandon(pid, cli);
  REQUIRE(applied);
  ::usleep(200000);  // let it finish applying all three
  REQUIRE(::kill(pid, SIGKILL) == 0);
  CHECK(wait_exit(pid) == 128 + SIGKILL);
  auto doc = nlohmann::json::parse(slurp(journal));
  const std::string name = doc.at("device");
  REQUIRE(name.rfind("loop", 0) == 0);
  // autoclear detaches it once the last opener is gone; the kernel does that in a workqueue
  for (int i = 0; i < 500 && fs::exists("/sys/block/" + name + "/loop/backing_file"); ++i) ::usleep(10000);
  CHECK_FALSE(fs::exists("/sys/block/" + name + "/loop/backing_file"));
  auto r = cli.run({"tune", "--restore"});
  INFO("stdout: " << r.out << "stderr: " << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("its device is gone") == std::string::npos);
  for (const auto& s : doc.at("settings")) {
    std::string now = testing::read_sysfs(s.at("path").get<std::string>());
    auto b = now.find('['), e = now.find(']');
    if (b != std::string::npos && e != std::string::npos) now = now.substr(b + 1, e - b - 1);
    CHECK(now == s.at("old_value").get<std::string>());
    CHECK(r.out.find("restored " + s.at("path").get<std::string>()) != std::string::npos);
  }
  CHECK(cli.j.none());
}

// Before: one journal for the host, so a run on one device refused a run on another.
TEST_CASE("CLI runs on two devices at once do not refuse each other", "[tuning][cli][journal]") {
  LoopDevice a = testing::make_loop(128ull << 20);
  LoopDevice b = testing::make_loop(128ull << 20);
  Cli cli;
  const QueueState want_a = wanted(a);
  pid_t pid = cli.spawn(run_args(a, want_a, "120"));
  bool applied = wait_until(pid, [&] { return read_state(a) == want_a && fs::exists(cli.j.of(a)); });
  if (!applied) abandon(pid, cli);
  REQUIRE(applied);
  const QueueState before_b = read_state(b);
  auto second = cli.run(run_args(b, wanted(b), "1"));
  INFO("second run: " << second.err);
  CHECK(second.exit_code == 0);
  CHECK(read_state(b) == before_b);
  CHECK(read_state(a) == want_a);  // the first run's settings untouched by the second's restore
  // ...and the same device is still refused while its run lives.
  auto same = cli.run(run_args(a, want_a, "1"));
  CHECK(same.exit_code != 0);
  REQUIRE(::kill(pid, SIGINT) == 0);
  CHECK(wait_exit(pid) == 1);
  CHECK(cli.j.none());
}

// Issue 37: `tune --restore` while a run is alive must leave that run's journal byte for byte,
// whichever path to the binary it is started through (the launcher, the real binary, a copy
// under another name); after the run is SIGKILLed, a second restore puts everything back.
TEST_CASE("tune --restore during a live run leaves its journal, then restores it after SIGKILL",
          "[tuning][cli]") {
  AppliedRun run;
  Cli& cli = run.cli;
  const std::string journal = cli.j.of(run.loop);
  const std::string recorded = slurp(journal);
  fs::path copy = cli.j.dir / "renamed-probe";
  fs::copy_file(DISKPROBE_REAL_BIN, copy, fs::copy_options::overwrite_existing);
  const std::vector<std::string> binaries{DISKPROBE_BIN, DISKPROBE_REAL_BIN, copy.string()};
  for (const auto& bin : binaries) {
    auto r = testing::run({"env", "DISKPROBE_JOURNAL=" + cli.j.path, bin, "tune", "--restore"});
    INFO(bin << " stderr: " << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.err.find("run pid " + std::to_string(run.pid) + " is alive: left alone") != std::string::npos);
    CHECK(fs::exists(journal));
    CHECK(slurp(journal) == recorded);
    CHECK(read_state(run.loop) == run.want);
  }
  REQUIRE(::kill(run.pid, SIGKILL) == 0);
  CHECK(wait_exit(run.pid) == 128 + SIGKILL);
  CHECK(read_state(run.loop) == run.want);
  auto r = testing::run({"env", "DISKPROBE_JOURNAL=" + cli.j.path, copy.string(), "tune", "--restore"});
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 0);
  CHECK(read_state(run.loop) == run.before);
  CHECK(cli.j.none());
}
