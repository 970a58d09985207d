// Fidelity against the reference (issue 14): diskprobe and fio 3.33 side by side on devices the
// test makes, alternating. Rates on a kernel-throttled loop device (cgroup v1 blkio) against
// the limit; QD1 latency on loop and zram against fio's own figures, C-states free and held.
// Every case runs in rounds that alternate which tool goes first and is judged on the medians
// of those rounds against fio's own spread in the same run (side_by_side.h): a busy machine
// slows both tools down (a throttle never lets more through than its limit), so it fails
// nothing alone. Latency compares the total latency, with loop's worker placed on the tools'
// CPU and on the other one (unplaced, the scheduler picks one per run at random). Slow (about
// 5 minutes): not in the sanitizer build.
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "harness.h"
#include "side_by_side.h"

using nlohmann::json;

namespace {

constexpr double kRateBound = 0.005;  // the 0.5% of the limit
constexpr double kLatencyBound = 0.05;  // diskprobe's mean and p50 at most fio's + 5% (+ fio's spread)
// Rounds of a latency comparison; up to kLatencyMaxRounds while a checked row is outside its
// bound: at load 15-45 a run of either tool may stall, and five medians were a coin toss there.
constexpr int kLatencyRounds = 5, kLatencyMaxRounds = 9;

using side_by_side::have_throttle;
using side_by_side::median;
using side_by_side::need_fio;
using side_by_side::spread;

// One run's figures in one direction; latencies in microseconds.
struct Figures {
  double iops = 0, bw = 0;  // bytes/s
  uint64_t ios = 0;
  std::vector<uint64_t> samples;  // diskprobe's per-second I/O counts
  double clat_mean = 0, clat_p50 = 0, clat_p99 = 0;
  double lat_mean = 0, lat_p50 = 0, lat_p99 = 0;  // submission to completion
  bool async_kept = false;  // diskprobe's force_async=auto probe kept IOSQE_ASYNC (zram)
};

struct Workload {
  std::string rw, bs;
  int iodepth = 1, numjobs = 1;
  double runtime = 3, ramp = 0;
  const char* dir() const { return rw.find("write") != std::string::npos ? "write" : "read"; }
};

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

// The region keeps clear of the first and last 4 MiB, which a write run zeroes afterwards.
std::string fio_line(const Workload& w, const std::string& dev) {
  return "fio --name=fidelity --filename=" + dev + " --rw=" + w.rw + " --bs=" + w.bs +
         " --iodepth=" + std::to_string(w.iodepth) + " --numjobs=" + std::to_string(w.numjobs) +
         " --group_reporting --ioengine=io_uring --direct=1 --time_based --runtime=" + num(w.runtime) +
         " --ramp_time=" + num(w.ramp) + " --offset=8M --size=200M --randrepeat=0 --lat_percentiles=1" +
         " --output-format=json";
}

std::string diskprobe_line(const Workload& w, const std::string& dev, const char* profile) {
  return std::string(DISKPROBE_BIN) + " run --profile " + profile + " " + dev + " --no-tune --rw " + w.rw +
         " --bs " + w.bs + " --iodepth " + std::to_string(w.iodepth) + " --numjobs " +
         std::to_string(w.numjobs) + " --runtime " + num(w.runtime) + " --ramp_time " + num(w.ramp) +
         " --offset 8M --size 200M --output-format json";
}

Figures fio_figures(const std::string& out, const char* dir) {
  json d = json::parse(out)["jobs"][0][dir];
  Figures f;
  f.iops = d["iops"].get<double>();
  f.bw = d["bw_bytes"].get<double>();
  f.ios = d["total_ios"].get<uint64_t>();
  f.clat_mean = d["clat_ns"]["mean"].get<double>() / 1e3;
  f.clat_p50 = d["clat_ns"]["percentile"]["50.000000"].get<double>() / 1e3;
  f.clat_p99 = d["clat_ns"]["percentile"]["99.000000"].get<double>() / 1e3;
  f.lat_mean = d["lat_ns"]["mean"].get<double>() / 1e3;
  f.lat_p50 = d["lat_ns"]["percentile"]["50.000000"].get<double>() / 1e3;
  f.lat_p99 = d["lat_ns"]["percentile"]["99.000000"].get<double>() / 1e3;
  return f;
}

Figures diskprobe_figures(const std::string& out, const char* dir) {
  json all = json::parse(out);
  const json& d = all[dir];
  Figures f;
  for (const auto& n : all["notes"])
    f.async_kept = f.async_kept || n.get<std::string>().find("kept IOSQE_ASYNC") != std::string::npos;
  f.iops = d["iops"].get<double>();
  f.bw = d["bw_bytes_per_s"].get<double>();
  f.ios = d["ios"].get<uint64_t>();
  f.samples = d["iops_samples"].get<std::vector<uint64_t>>();
  f.clat_mean = d["clat_ns"]["mean"].get<double>() / 1e3;
  f.clat_p50 = d["clat_ns"]["percentiles"]["50.00"].get<double>() / 1e3;
  f.clat_p99 = d["clat_ns"]["percentiles"]["99.00"].get<double>() / 1e3;
  f.lat_mean = d["lat_ns"]["mean"].get<double>() / 1e3;
  f.lat_p50 = d["lat_ns"]["percentiles"]["50.00"].get<double>() / 1e3;
  f.lat_p99 = d["lat_ns"]["percentiles"]["99.00"].get<double>() / 1e3;
  return f;
}

Figures run_fio(const std::string& line, const char* dir) {
  auto r = testing::sh(line);
  INFO(line << "\n" << r.err);
  REQUIRE(r.exit_code == 0);
  return fio_figures(r.out, dir);
}

Figures run_diskprobe(const std::string& line, const char* dir) {
  auto r = testing::sh(line);
  INFO(line << "\n" << r.err);
  REQUIRE(r.exit_code == 0);
  return diskprobe_figures(r.out, dir);
}

struct RateCase {
  const char* what;
  const char* limit_file;  // blkio.throttle.<this>_device
  double limit;            // IOPS or bytes/s
  Workload w;
};

bool is_bps(const RateCase& c) { return std::string(c.limit_file).find("bps") != std::string::npos; }

double within(const Figures& f, const RateCase& c) { return (is_bps(c) ? f.bw : f.iops) / c.limit - 1.0; }

}  // namespace

TEST_CASE("throttled IOPS and bandwidth are the limit within 0.5%, as fio reports them", "[fidelity][fio]") {
  need_fio();
  if (!have_throttle()) return;
  const double MiB = 1024.0 * 1024.0;
  // The four rows first (4 s, no ramp), then odd limits: QD1 and QD32, short and long,
  // one and several jobs, reads and writes, IOPS and bandwidth, with and without ramp.
  const RateCase cases[] = {
      {"5,000 write IOPS, 4 s, QD16", "write_iops", 5000, {"randwrite", "4k", 16, 1, 4}},
      {"5,000 write IOPS, 4 s, QD1", "write_iops", 5000, {"randwrite", "4k", 1, 1, 4}},
      {"3,000 read IOPS, 4 s, QD4", "read_iops", 3000, {"randread", "4k", 4, 1, 4}},
      {"50 MiB/s read, 64k, QD8, 4 s", "read_bps", 50 * MiB, {"randread", "64k", 8, 1, 4}},
      {"3,217 write IOPS, 3 s, QD32, 2 jobs", "write_iops", 3217, {"randwrite", "4k", 32, 2, 3}},
      {"3,217 read IOPS, 3 s, QD1", "read_iops", 3217, {"randread", "4k", 1, 1, 3}},
      {"37 MiB/s write, 64k, QD32, 3 s", "write_bps", 37 * MiB, {"write", "64k", 32, 1, 3}},
      {"37 MiB/s read, 128k, QD1, 2 jobs, 3 s", "read_bps", 37 * MiB, {"read", "128k", 1, 2, 3}},
      // The ramp cases 4 s and 3 s (were 8 and 5: 48 s of the test command's time in two rounds).
      {"2,111 read IOPS, 4 s after a 1 s ramp, QD32", "read_iops", 2111, {"randread", "4k", 32, 1, 4, 1}},
      {"5,000 write IOPS, 3 s after a 1 s ramp, QD16, 2 jobs",
       "write_iops",
       5000,
       {"randwrite", "4k", 16, 2, 3, 1}},
  };
  // Backed by memory (tmpfs), so the throttle is all that limits a rate. Over a file in $TMPDIR
  // a QD1 4k write went to the system disk: 170 us into a hole, 200-450 us over a written
  // block, against the 200 us the 5,000 IOPS row allows; a CI run had both tools 8-56% under
  // that throttle for two rounds, each round as fast as the disk was then. On tmpfs: 29 us.
  auto loop = testing::make_loop_in_memory(256ull << 20);
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.what) {
      testing::BlkioCgroup cg("diskprobe-fidelity-fio-" + std::to_string(::getpid()));
      cg.set(std::string("blkio.throttle.") + c.limit_file + "_device",
             testing::dev_numbers(loop.path()) + " " + std::to_string(static_cast<uint64_t>(c.limit)));
      const char* dir = c.w.dir();
      side_by_side::RateRounds rates{kRateBound};
      for (int round = 0; rates.more(); ++round) {
        Figures fio, dp;
        side_by_side::in_turn(
            round, [&] { fio = run_fio(cg.run_inside(fio_line(c.w, loop.path())), dir); },
            [&] {
              dp = run_diskprobe(cg.run_inside(diskprobe_line(c.w, loop.path(), "essd-plx-iops")), dir);
            });
        rates.add(within(dp, c), within(fio, c));
        std::printf("fidelity: %-44s round %d: diskprobe %+.3f%%  fio %+.3f%% of the limit\n", c.what,
                    round + 1, rates.dp.back() * 100, rates.fio.back() * 100);
        // Per-second samples add up to the total, one per second of the window; the ramp is in
        // neither. Exact whatever the machine does (a first completion late after the ramp once
        // cost a sample: the window now runs its runtime from its opening).
        INFO(c.what << ", round " << round + 1);
        CHECK(std::accumulate(dp.samples.begin(), dp.samples.end(), uint64_t{0}) == dp.ios);
        CHECK(dp.samples.size() == static_cast<size_t>(c.w.runtime));
      }
      rates.judge(c.what);
    }
  }
}

namespace {

// /dev/cpu_dma_latency held at 0 while this lives: idle CPUs poll instead of entering C-states.
class CstatesHeld {
 public:
  CstatesHeld() {
    fd_ = ::open("/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC);
    int32_t zero = 0;
    if (fd_ >= 0 && ::write(fd_, &zero, sizeof zero) != sizeof zero) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~CstatesHeld() {
    if (fd_ >= 0) ::close(fd_);
  }
  CstatesHeld(const CstatesHeld&) = delete;
  CstatesHeld& operator=(const CstatesHeld&) = delete;
  bool held() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// The loop driver runs each request in an unbound kworker, and where the scheduler puts that
// worker decides the latency of a whole run: on the submitter's CPU it runs while the submitter
// waits (~10 us), on the other CPU the completion is an interprocessor wake-up (~100 us, C-states
// free). Left to the scheduler, each run of either tool lands in one or the other at random
// (measured: p50 0.5, 10 or 80 us from one run to the next, for both tools), so a median of five
// rounds compared coin tosses: a CI run failed on fio's 0.6 us against diskprobe's 6.5 us. So the
// test places both: the unbound workqueues on CPU 0 while this lives (the mask is restored when
// the test ends, also on a failed REQUIRE), each tool on CPU 0 or on CPU 1. The host's mask is
// also kept in kSaved while the test runs: a run killed by SIGKILL left "1" behind, and the
// next run took that for the host's value and restored it; now the next run restores the saved one.
class UnboundWorkqueuesOnCpu0 {
 public:
  UnboundWorkqueuesOnCpu0() {
    if (::sysconf(_SC_NPROCESSORS_ONLN) < 2) return;
    std::string old = testing::read_sysfs(kSaved);
    if (old.empty()) old = testing::read_sysfs(kMask);
    if (old.empty() || !save(old) || !write_mask("1")) return;
    old_ = old;
  }
  ~UnboundWorkqueuesOnCpu0() {
    if (old_.empty()) return;
    if (write_mask(old_)) ::unlink(kSaved);
  }
  UnboundWorkqueuesOnCpu0(const UnboundWorkqueuesOnCpu0&) = delete;
  UnboundWorkqueuesOnCpu0& operator=(const UnboundWorkqueuesOnCpu0&) = delete;
  bool placed() const { return !old_.empty(); }

 private:
  static constexpr const char* kMask = "/sys/devices/virtual/workqueue/cpumask";
  static constexpr const char* kSaved = "/run/diskprobe-fidelity-workqueue-cpumask";
  static bool write_to(const char* path, const std::string& text, int flags) {
    int fd = ::open(path, O_WRONLY | O_CLOEXEC | flags, 0600);
    if (fd < 0) return false;
    bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::close(fd);
    return ok;
  }
  static bool write_mask(const std::string& mask) { return write_to(kMask, mask, 0); }
  static bool save(const std::string& mask) { return write_to(kSaved, mask, O_CREAT | O_TRUNC); }
  std::string old_;
};

// fio's parent process wakes every 10 ms on the CPU it shares with its job (its reap loop:
// about 100 clock_nanosleep and 100 wait4 calls a second under strace), and on this VM a CPU
// woken that often answers an I/O's wake-up sooner when C-states are free: a forty-line C loop
// that waits exactly as fio's job does (tests/perf/qd1_wait.c, fio 3.33's ring, calls, plain
// file and buffer) read 69.7 us alone and 63.8 us beside a 10 ms sleeper, fio 65.4 and 64.9.
// diskprobe's process makes no periodic wake-ups, so without it the row compared fio's side
// effect on the idle CPU, not the tools' waits. This process gives both tools that same 10 ms
// sleeper on their CPU for the row, killed and reaped when it ends.
class TenMsSleeper {
 public:
  explicit TenMsSleeper(int cpu) {
    pid_ = ::fork();
    if (pid_ != 0) return;
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlives the test
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (::sched_setaffinity(0, sizeof set, &set) != 0) ::_exit(1);
    const timespec ten_ms{0, 10'000'000};
    for (;;) ::nanosleep(&ten_ms, nullptr);
  }
  ~TenMsSleeper() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  TenMsSleeper(const TenMsSleeper&) = delete;
  TenMsSleeper& operator=(const TenMsSleeper&) = delete;
  bool running() {
    if (pid_ > 0 && ::waitpid(pid_, nullptr, WNOHANG) != 0) pid_ = -1;  // exited: reaped, not killed later
    return pid_ > 0;
  }

 private:
  pid_t pid_ = -1;
};

// QD1 4k random reads, alternating which tool goes first; diskprobe as a user runs it
// (--no-tune: unpinned by diskprobe, C-states as the test set them). `pin` is a taskset prefix
// for both tools, or empty.
//
// The figure compared is the total latency (lat: from preparing the I/O to seeing it complete),
// what the I/O cost the user and everything either tool adds. clat alone is not comparable: fio
// starts it when io_uring_enter returns, so when the kernel completes the read inside the submit
// call (zram always, loop when its worker runs on the submitter's CPU) the whole I/O is in slat
// and clat is only the time to notice it (0.6 us); where the kernel does the work is its choice,
// not the tool's. clat is printed beside it.
void compare_qd1_latency(const std::string& dev, const char* where, const std::string& pin = "") {
  Workload w{"randread", "4k", 1, 1, 1.5};
  std::vector<double> f_mean, f_p50, f_p99, d_mean, d_p50, d_p99, f_clat, d_clat;
  int async_kept = 0;
  struct Row {
    const char* name;
    const std::vector<double>& dp;
    const std::vector<double>& fio;
    double bound;
    // p99: within the noise fio itself shows here (its whole range over the rounds).
    double allowed() const {
      return median(fio) * (1 + bound) + (bound > 0 ? spread(fio) : side_by_side::range(fio));
    }
    bool within() const { return median(dp) <= allowed(); }
  };
  const Row rows[] = {{"mean", d_mean, f_mean, kLatencyBound}, {"p50", d_p50, f_p50, kLatencyBound},
                      {"p99", d_p99, f_p99, 0.0}};
  auto all_within = [&] {
    return std::all_of(std::begin(rows), std::end(rows), [](const Row& r) { return r.within(); });
  };
  for (int round = 0; round < kLatencyRounds || (round < kLatencyMaxRounds && !all_within()); ++round) {
    Figures f, d;
    side_by_side::in_turn(
        round, [&] { f = run_fio(pin + fio_line(w, dev), "read"); },
        [&] { d = run_diskprobe(pin + diskprobe_line(w, dev, "essd-plx-latency"), "read"); });
    f_mean.push_back(f.lat_mean), f_p50.push_back(f.lat_p50), f_p99.push_back(f.lat_p99);
    d_mean.push_back(d.lat_mean), d_p50.push_back(d.lat_p50), d_p99.push_back(d.lat_p99);
    f_clat.push_back(f.clat_p50), d_clat.push_back(d.clat_p50);
    async_kept += d.async_kept ? 1 : 0;
  }
  if (async_kept)
    std::printf("fidelity: %-44s diskprobe's probe kept IOSQE_ASYNC in %d rounds\n", where, async_kept);
  std::printf(
      "fidelity: %-44s clat p50  median diskprobe %8.1f us  fio %8.1f us  (not compared, %zu rounds)\n",
      where, median(d_clat), median(f_clat), d_clat.size());
  for (const auto& r : rows) {
    double dp = median(r.dp), fio = median(r.fio), allowed = r.allowed();
    std::printf("fidelity: %-44s lat %-4s  median diskprobe %8.1f us  fio %8.1f us  (allowed %8.1f)\n", where,
                r.name, dp, fio, allowed);
    INFO(where << ": lat " << r.name << " median diskprobe " << dp << " us, fio " << fio << " us, allowed "
               << allowed << " us");
    CHECK(dp <= allowed);
  }
}

// Loop in both placements of its worker, zram as a user runs it (it completes in the submit
// call, so no worker to place).
void compare_devices(const std::string& loop, const std::string& zram, const char* state, bool held) {
  UnboundWorkqueuesOnCpu0 wq;
  if (wq.placed()) {
    compare_qd1_latency(loop, (std::string("loop, worker on its CPU, ") + state).c_str(), "taskset -c 0 ");
    // With C-states free, the tools' CPU is halted when the completion comes, and how soon the
    // hypervisor runs it again depends on how often that CPU wakes: fio's own process wakes it
    // every 10 ms, diskprobe's does not. So both tools run beside the same 10 ms sleeper there
    // (TenMsSleeper); held, the CPU polls and the sleeper would change nothing.
    {
      std::unique_ptr<TenMsSleeper> sleeper;
      if (!held) sleeper = std::make_unique<TenMsSleeper>(1);
      if (sleeper && !sleeper->running()) FAIL("the 10 ms sleeper on CPU 1 did not start");
      const std::string where = std::string("loop, worker on another CPU, ") + state + (held ? "" : ", 10 ms sleeper");
      compare_qd1_latency(loop, where.c_str(), "taskset -c 1 ");
    }
  } else {
    WARN("SKIP (loop part): the unbound workqueues cannot be placed (one CPU, or "
         "/sys/devices/virtual/workqueue/cpumask not writable), and unplaced each run's latency is a coin toss");
  }
  if (!zram.empty()) compare_qd1_latency(zram, (std::string("zram, ") + state).c_str());
}

}  // namespace

TEST_CASE("QD1 latency is no higher than fio's on loop and zram, C-states free and held", "[fidelity][fio]") {
  need_fio();
  auto loop = testing::make_loop(256ull << 20);
  testing::ScratchZram zram(256ull << 20);
  if (zram.path.empty()) WARN("SKIP (zram part): this kernel has no /sys/class/zram-control");
  SECTION("C-states free") { compare_devices(loop.path(), zram.path, "C-states free", false); }
  SECTION("C-states held at 0 by the test") {
    CstatesHeld held;
    if (!held.held()) {
      WARN("SKIP (held part): /dev/cpu_dma_latency cannot be opened for writing");
      return;
    }
    compare_devices(loop.path(), zram.path, "C-states held", true);
  }
}

namespace {

// Jobs run at once (issue 32): one fio command line of several jobs, run by fio and by
// `diskprobe fio` alike; each job's IOPS in its direction from the fio JSON both write.
std::vector<double> jobs_iops(const std::string& out, const std::vector<const char*>& dirs) {
  const json doc = json::parse(out.substr(out.find("{\n")));
  std::vector<double> v;
  REQUIRE(doc["jobs"].size() == dirs.size());
  for (size_t i = 0; i < dirs.size(); ++i) v.push_back(doc["jobs"][i][dirs[i]]["iops"].get<double>());
  return v;
}

}  // namespace

// A throttle per direction (cgroup v1 blkio) and several different jobs at once: each direction
// gets its limit, whichever jobs share it, as fio's jobs get it, over alternating rounds.
TEST_CASE("jobs run at once on a throttled device share each direction's limit within 0.5%, as fio's",
          "[fidelity][fio]") {
  need_fio();
  if (!have_throttle()) return;
  struct Case {
    const char* what;
    double read_limit, write_limit;
    std::string jobs;                // the jobs' options after the global ones
    std::vector<const char*> dirs;   // each job's direction in the JSON
  } cases[] = {
      {"a reader (QD8) and a writer (QD4) at once: 2,000 and 1,000 IOPS", 2000, 1000,
       " --name=r --rw=randread --iodepth=8 --name=w --rw=randwrite --iodepth=4 --offset=120M",
       {"read", "write"}},
      {"two readers (QD1, QD16) and a psync writer: 3,000 and 700 IOPS", 3000, 700,
       " --name=r1 --rw=randread --iodepth=1 --name=r2 --rw=randread --iodepth=16 --offset=60M --name=w"
       " --rw=write --ioengine=psync --offset=120M",
       {"read", "read", "write"}},
  };
  auto loop = testing::make_loop_in_memory(256ull << 20);
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.what) {
      testing::BlkioCgroup cg("diskprobe-fidelity-jobs-" + std::to_string(::getpid()));
      const std::string devno = testing::dev_numbers(loop.path());
      cg.set("blkio.throttle.read_iops_device", devno + " " + std::to_string(static_cast<uint64_t>(c.read_limit)));
      cg.set("blkio.throttle.write_iops_device", devno + " " + std::to_string(static_cast<uint64_t>(c.write_limit)));
      const std::string args = " --filename=" + loop.path() +
                               " --bs=4k --direct=1 --ioengine=io_uring --time_based --runtime=3 --offset=8M"
                               " --size=48M --randrepeat=0 --output-format=json" + c.jobs;
      side_by_side::RateRounds reads{kRateBound}, writes{kRateBound};
      auto share = [&](const std::vector<double>& iops, const char* dir, double limit) {
        double sum = 0;
        for (size_t i = 0; i < iops.size(); ++i) sum += std::string(c.dirs[i]) == dir ? iops[i] : 0;
        return sum / limit - 1.0;
      };
      for (int round = 0; reads.more() || writes.more(); ++round) {
        std::vector<double> fio, dp;
        side_by_side::in_turn(
            round,
            [&] {
              auto r = testing::sh(cg.run_inside("fio" + args));
              INFO(r.err);
              REQUIRE(r.exit_code == 0);
              fio = jobs_iops(r.out, c.dirs);
            },
            [&] {
              auto r = testing::sh(cg.run_inside(std::string(DISKPROBE_BIN) + " fio" + args));
              INFO(r.err);
              REQUIRE(r.exit_code == 0);
              dp = jobs_iops(r.out, c.dirs);
            });
        reads.add(share(dp, "read", c.read_limit), share(fio, "read", c.read_limit));
        writes.add(share(dp, "write", c.write_limit), share(fio, "write", c.write_limit));
        std::printf("fidelity: %-44s round %d: reads diskprobe %+.3f%% fio %+.3f%%; writes diskprobe %+.3f%% "
                    "fio %+.3f%% of the limit\n",
                    c.what, round + 1, reads.dp.back() * 100, reads.fio.back() * 100, writes.dp.back() * 100,
                    writes.fio.back() * 100);
      }
      reads.judge((std::string(c.what) + ", reads").c_str());
      writes.judge((std::string(c.what) + ", writes").c_str());
    }
  }
}
