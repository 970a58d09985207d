// The run sequence (cmd/run) driven with fakes: no root, no device, no host setting touched.
#include <catch2/catch.hpp>

#include <atomic>
#include <string>
#include <vector>

#include "diskprobe/run/run.h"

using namespace diskprobe;
using run::Outcome;

namespace {

constexpr uint64_t kMiB = 1ull << 20;

// Every fake writes what it was asked into one log, so a test sees the order of the steps.
struct Log {
  std::vector<std::string> calls;
  bool has(const std::string& c) const { return std::find(calls.begin(), calls.end(), c) != calls.end(); }
};

safety::Verdict verdict(bool safe) {
  safety::Verdict v;
  v.device = "/dev/fake0";
  if (!safe) v.reasons.push_back({"signature", "/dev/fake0 holds an ext4 filesystem"});
  return v;
}

struct FakePreflight : run::Preflight {
  Log& log;
  bool safe = true, safe_again = true;
  uint64_t size = 64 * kMiB;
  explicit FakePreflight(Log& l) : log(l) {}
  Status name(const std::string&) override { return Ok{}; }
  safety::Checked check(const std::string& arg, safety::Mode) override {
    log.calls.push_back("preflight " + arg);
    safety::Checked c;
    c.verdict = verdict(safe);
    c.device.name = c.device.disk = "fake0";
    c.device.path = "/dev/fake0";
    c.device.size_bytes = size;
    return c;
  }
  safety::Verdict recheck(const safety::Checked&) override {
    log.calls.push_back("recheck");
    return verdict(safe_again);
  }
};

struct FakeTuner : run::Tuner {
  Log& log;
  std::vector<AppliedSetting> changed;
  unsigned plan_numjobs = 0;  // what the plan sets (test100w: one job per queue); 0 = the spec's
  std::vector<int> plan_cpus;  // the plan's pins, job by job
  std::vector<JobSpec> planned;  // every spec a plan was made for
  explicit FakeTuner(Log& l) : log(l) {}
  Result<tuning::Plan> plan(const BlockDevice&, const JobSpec& spec) override {
    tuning::Plan p;
    p.numjobs = plan_numjobs ? plan_numjobs : spec.numjobs;
    p.cpus = plan_cpus;
    planned.push_back(spec);
    return p;
  }
  Status apply(const std::string& disk, const tuning::Plan&) override {
    log.calls.push_back("apply");
    changed.push_back({"/sys/block/" + disk + "/queue/rq_affinity", "1", "2"});
    return Ok{};
  }
  Status restore() override {
    if (!changed.empty()) log.calls.push_back("restore");
    changed.clear();
    return Ok{};
  }
  std::vector<AppliedSetting> applied() const override { return changed; }
};

struct FakeEngine : run::Engine {
  Log& log;
  std::atomic<bool>* interrupt = nullptr;  // set while "running": a signal during the run
  bool fail = false;
  int fail_on = 0;  // fails the Nth run (1-based); 0 = never
  double runtime_s = 0;  // the measured runtime each run reports
  int runs = 0;
  std::vector<std::optional<Region>> regions;  // the region of every run
  EngineOptions seen;
  JobSpec seen_spec;
  explicit FakeEngine(Log& l) : log(l) {}
  Result<Results> run(const JobSpec& spec, const Target&, const EngineOptions& opts, const BlockDevice*) override {
    log.calls.push_back("engine");
    seen = opts;
    seen_spec = spec;
    regions.push_back(opts.region);
    if (interrupt) interrupt->store(true);
    if (fail || ++runs == fail_on) return make_error("io_uring_queue_init: Cannot allocate memory");
    Results r;
    r.runtime_s = runtime_s;
    return r;
  }
  struct Member {
    std::string name;
    std::vector<int> cpus;
  };
  std::vector<std::vector<Member>> groups;  // every run_group's members
  int mismatch_in_member = -1;  // that member's results carry a verify mismatch
  Result<std::vector<Results>> run_group(const std::vector<GroupMember>& members, const EngineOptions& opts,
                                         const BlockDevice*) override {
    log.calls.push_back("engine x" + std::to_string(members.size()));
    seen = opts;
    groups.emplace_back();
    for (const auto& m : members) {
      groups.back().push_back({m.spec->name, m.cpus});
      regions.push_back(m.region);
    }
    if (fail || ++runs == fail_on) return make_error("io_uring_queue_init: Cannot allocate memory");
    std::vector<Results> all(members.size());
    for (auto& r : all) r.runtime_s = runtime_s;
    if (mismatch_in_member >= 0 && static_cast<size_t>(mismatch_in_member) < all.size()) {
      all[static_cast<size_t>(mismatch_in_member)].verify.add_mismatch(0, 4096, "no header");
    }
    return all;
  }
};

struct FakeZeroing : run::Zeroing {
  Log& log;
  std::optional<Region> region;
  std::vector<Region> zeroed;  // every region zeroed, in order
  explicit FakeZeroing(Log& l) : log(l) {}
  Result<std::vector<safety::ByteRange>> zero(const safety::Checked& c, const Region& r) override {
    log.calls.push_back("zero");
    region = r;
    zeroed.push_back(r);
    return safety::edge_ranges(c.device.size_bytes, r);
  }
};

struct FakeHost : run::Host {
  std::vector<DiskCounters> readings;  // handed out in turn; none: no counters, as a fake disk
  size_t read = 0;
  Log* log = nullptr;  // where "scratch SIZE" goes, when a test watches for it
  bool names_a_file(const std::string&) override { return false; }
  Result<std::string> scratch(uint64_t size) override {
    if (log) log->calls.push_back("scratch " + std::to_string(size));
    return std::string("/dev/scratch0");
  }
  void device_facts(const BlockDevice&, Target&) override {}
  Result<DiskCounters> counters(const BlockDevice&) override {
    if (read >= readings.size()) return make_error("no counters in a fake");
    return readings[read++];
  }
  RunEnvironment environment(const BlockDevice&) override { return {}; }
};

struct NoFiles : run::Files {
  Status usable(const std::string&, const JobSpec&) override { return Ok{}; }
  Status no_signature(const std::vector<std::string>&, const JobSpec&) override { return Ok{}; }
  Result<Target> open(const std::string&, const JobSpec&, bool) override { return make_error("no files here"); }
  bool created_any() const override { return false; }
  void remove() override {}
};

struct FakeOutputs : run::Outputs {
  Log& log;
  std::optional<RunReport> last;  // the last report out
  explicit FakeOutputs(Log& l) : log(l) {}
  Status report(const RunReport& r) override {
    log.calls.push_back("report");
    last = r;
    return Ok{};
  }
  void refusal(const RunReport& r) override { log.calls.push_back(r.preflight_safe ? "junit?" : "junit refused"); }
};

struct Fixture {
  Log log;
  FakePreflight preflight{log};
  FakeTuner tuner{log};
  FakeEngine engine{log};
  FakeZeroing zeroing{log};
  FakeHost host;
  NoFiles files;
  FakeOutputs outputs{log};
  std::atomic<bool> stop{false};
  run::Request req;
  Fixture() {
    req.devices = {"fake0"};
    req.spec.rw = RwMode::RandWrite;
    req.spec.bs = 4096;
    req.stop = &stop;
  }
  run::Ended go() { return run::run(req, {preflight, tuner, engine, zeroing, host, files, outputs}); }
};

}  // namespace

TEST_CASE("a refused device never reaches apply or the engine, and exits 3", "[run]") {
  Fixture f;
  f.preflight.safe = false;
  auto end = f.go();
  CHECK(end.why == Outcome::Refused);
  CHECK(run::exit_code(end.why) == 3);
  REQUIRE(end.verdict);
  CHECK(end.message == "/dev/fake0 " + std::string(run::kRefusedWhy));
  CHECK(f.log.calls == std::vector<std::string>{"preflight fake0", "junit refused"});
}

TEST_CASE("a safe write run goes preflight, apply, recheck, engine, zero, restore, report", "[run]") {
  Fixture f;
  auto end = f.go();
  CHECK(end.why == Outcome::Ok);
  CHECK(run::exit_code(end.why) == 0);
  CHECK(f.log.calls ==
        std::vector<std::string>{"preflight fake0", "apply", "recheck", "engine", "zero", "restore", "report"});
}

TEST_CASE("settings applied are restored when the engine fails", "[run]") {
  Fixture f;
  f.engine.fail = true;
  auto end = f.go();
  CHECK(end.why == Outcome::EngineFailed);
  CHECK(run::exit_code(end.why) == 1);
  CHECK(f.log.has("zero"));  // a failed write run's edges are zeroed too
  CHECK(f.log.calls.back() == "restore");
  CHECK(f.tuner.changed.empty());
}

TEST_CASE("settings applied are restored when the recheck refuses, and the engine never runs", "[run]") {
  Fixture f;
  f.preflight.safe_again = false;
  auto end = f.go();
  CHECK(end.why == Outcome::Refused);
  CHECK(end.message == "/dev/fake0 changed since the preflight: nothing was written");
  CHECK_FALSE(f.log.has("engine"));
  CHECK(f.log.calls.back() == "restore");
  CHECK(f.tuner.changed.empty());
}

TEST_CASE("settings applied are restored when interrupted, during the run or before it", "[run]") {
  SECTION("during the run: the partial report is out, exit 1") {
    Fixture f;
    f.req.stopped_by = [] { return std::string("interrupted by Interrupt"); };
    f.engine.interrupt = &f.stop;
    auto end = f.go();
    CHECK(end.why == Outcome::Interrupted);
    CHECK(end.message == "interrupted by Interrupt: partial results above; every setting was restored");
    CHECK(f.log.calls == std::vector<std::string>{"preflight fake0", "apply", "recheck", "engine", "zero",
                                                  "restore", "report"});
  }
  SECTION("after apply, before the engine: nothing written") {
    struct StopOnApply : FakeTuner {
      std::atomic<bool>& stop;
      StopOnApply(Log& l, std::atomic<bool>& s) : FakeTuner(l), stop(s) {}
      Status apply(const std::string& disk, const tuning::Plan& p) override {
        stop = true;
        return FakeTuner::apply(disk, p);
      }
    };
    Fixture f;
    StopOnApply tuner(f.log, f.stop);
    auto end = run::run(f.req, {f.preflight, tuner, f.engine, f.zeroing, f.host, f.files, f.outputs});
    CHECK(end.why == Outcome::InterruptedBefore);
    CHECK(run::exit_code(end.why) == 1);
    CHECK_FALSE(f.log.has("engine"));
    CHECK(f.log.calls.back() == "restore");
  }
}

TEST_CASE("--no-tune applies nothing and restores nothing", "[run]") {
  Fixture f;
  f.req.no_tune = true;
  CHECK(f.go().why == Outcome::Ok);
  CHECK_FALSE(f.log.has("apply"));
  CHECK_FALSE(f.log.has("restore"));
}

TEST_CASE("a read run is neither rechecked nor zeroed", "[run]") {
  Fixture f;
  f.req.spec.rw = RwMode::RandRead;
  CHECK(f.go().why == Outcome::Ok);
  CHECK_FALSE(f.log.has("recheck"));
  CHECK_FALSE(f.log.has("zero"));
}

// The bug issue 16 removes the reason for: the zeroing rebuilt the region from the spec and
// zeroed the whole device's first and last 4 MiB, outside a run's --offset 25% --size 50%.
TEST_CASE("zeroing gets exactly the engine's resolved region", "[run][region]") {
  struct Case {
    const char* what;
    double offset_percent, size_percent;
    uint64_t offset, size;
    uint32_t bs, bs_write;
    Region want;
  };
  const uint64_t dev = 64 * kMiB;
  const std::vector<Case> cases = {
      {"--offset 25% --size 50%", 25, 50, 0, 0, 4096, 0, {16 * kMiB, 32 * kMiB, 4096, 4096}},
      {"split block sizes bs=4k,64k", 25, 50, 0, 0, 4096, 65536, {16 * kMiB, 32 * kMiB, 4096, 65536}},
      {"a byte offset and size", 0, 0, 1 * kMiB, 8 * kMiB, 4096, 0, {1 * kMiB, 8 * kMiB, 4096, 4096}},
      {"the whole device", 0, 0, 0, 0, 4096, 0, {0, dev, 4096, 4096}},
  };
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.what) {
      Fixture f;
      f.preflight.size = dev;
      f.req.spec.offset_percent = c.offset_percent;
      f.req.spec.size_percent = c.size_percent;
      f.req.spec.offset = c.offset;
      f.req.spec.size = c.size;
      f.req.spec.bs = c.bs;
      f.req.spec.bs_write = c.bs_write;
      REQUIRE(f.go().why == Outcome::Ok);
      REQUIRE(f.zeroing.region);
      REQUIRE(f.engine.seen.region);
      const Region& z = *f.zeroing.region;
      CHECK(z.offset == c.want.offset);
      CHECK(z.size == c.want.size);
      CHECK(z.read_bs == c.want.read_bs);
      CHECK(z.write_bs == c.want.write_bs);
      const Region& e = *f.engine.seen.region;
      CHECK((e.offset == z.offset && e.size == z.size && e.write_bs == z.write_bs));
      // What is zeroed stays inside the region.
      for (const auto& r : safety::edge_ranges(dev, z)) {
        CHECK(r.offset >= z.offset);
        CHECK(r.offset + r.length <= z.write_end());
      }
    }
  }
}

TEST_CASE("the engine is told the spec was validated: validate() runs once per run", "[run]") {
  Fixture f;
  REQUIRE(f.go().why == Outcome::Ok);
  CHECK(f.engine.seen.spec_validated);
}

// The engine skips its own check when told, so the one check must be of what it runs: the
// spec after the plan set numjobs, not the spec as the user gave it.
TEST_CASE("the one validation is of the spec the plan made, the one the engine gets", "[run]") {
  Fixture f;
  f.tuner.plan_numjobs = 4;
  REQUIRE(f.go().why == Outcome::Ok);
  CHECK(f.engine.seen_spec.numjobs == 4);
  CHECK(f.engine.seen.spec_validated);

  Fixture g;
  g.tuner.plan_numjobs = static_cast<unsigned>(kMaxNumjobs) + 1;  // valid as given, not as planned
  auto end = g.go();
  CHECK(end.why == Outcome::BadInput);
  CHECK_THAT(end.message, Catch::Matchers::Contains("numjobs"));
  CHECK_FALSE(g.log.has("apply"));
  CHECK_FALSE(g.log.has("engine"));
}

TEST_CASE("a spec the target cannot take is bad input before any change", "[run]") {
  Fixture f;
  f.req.spec.bs = 1000;  // not a multiple of the logical block size
  auto end = f.go();
  CHECK(end.why == Outcome::BadInput);
  CHECK(run::exit_code(end.why) == 2);
  CHECK_FALSE(f.log.has("apply"));
  CHECK_FALSE(f.log.has("engine"));
}

TEST_CASE("--strict refuses a plan that falls short, before any change", "[run]") {
  struct ShortPlan : FakeTuner {
    using FakeTuner::FakeTuner;
    Result<tuning::Plan> plan(const BlockDevice& d, const JobSpec& s) override {
      auto p = FakeTuner::plan(d, s);
      p->deviations.push_back("rq_affinity cannot be set");
      return p;
    }
  };
  Fixture f;
  ShortPlan tuner(f.log);
  f.req.strict = true;
  auto end = run::run(f.req, {f.preflight, tuner, f.engine, f.zeroing, f.host, f.files, f.outputs});
  CHECK(end.why == Outcome::BadInput);
  CHECK(end.message == "--strict: rq_affinity cannot be set; nothing was changed (change the overrides, or drop --strict)");
  CHECK_FALSE(f.log.has("apply"));
}

TEST_CASE("exit codes: the README's table", "[run]") {
  CHECK(run::exit_code(Outcome::Ok) == 0);
  CHECK(run::exit_code(Outcome::BadInput) == 2);
  CHECK(run::exit_code(Outcome::Refused) == 3);
  CHECK(run::exit_code(Outcome::ExpectationsUnmet) == 4);
  for (auto why : {Outcome::SetupFailed, Outcome::InterruptedBefore, Outcome::EngineFailed, Outcome::ReportLost,
                   Outcome::EdgesNotZeroed, Outcome::Interrupted, Outcome::VerifyFailed, Outcome::IoStopped}) {
    CHECK(run::exit_code(why) == 1);
  }
}

namespace {

// A file run's files: fio's filename=FILE, opened as asked.
struct FakeFiles : run::Files {
  Log& log;
  bool foreign = false;  // an existing file with someone's signature
  explicit FakeFiles(Log& l) : log(l) {}
  Status usable(const std::string&, const JobSpec&) override { return Ok{}; }
  Status no_signature(const std::vector<std::string>& paths, const JobSpec&) override {
    if (foreign) return make_error(paths[0] + " holds an ext4 filesystem");
    return Ok{};
  }
  Result<Target> open(const std::string& file, const JobSpec&, bool) override {
    log.calls.push_back("open " + file);
    Target t;
    t.path = file;
    t.size_bytes = 64 * kMiB;
    return t;
  }
  bool created_any() const override { return true; }
  void remove() override { log.calls.push_back("remove files"); }
};

struct FileHost : FakeHost {
  bool names_a_file(const std::string&) override { return true; }
};

}  // namespace

TEST_CASE("a file run has no device preflight, no tuning and no zeroing", "[run][files]") {
  Fixture f;
  FakeFiles files(f.log);
  FileHost host;
  f.req.devices = {"/var/tmp/job.dat"};
  auto end = run::run(f.req, {f.preflight, f.tuner, f.engine, f.zeroing, host, files, f.outputs});
  CHECK(end.why == Outcome::Ok);
  CHECK(f.log.calls == std::vector<std::string>{"open /var/tmp/job.dat", "engine", "remove files", "report"});
  CHECK(f.engine.seen.spec_validated);
}

TEST_CASE("a file holding someone's data is refused before it is opened", "[run][files]") {
  Fixture f;
  FakeFiles files(f.log);
  files.foreign = true;
  FileHost host;
  f.req.devices = {"/var/tmp/job.dat"};
  auto end = run::run(f.req, {f.preflight, f.tuner, f.engine, f.zeroing, host, files, f.outputs});
  CHECK(end.why == Outcome::Refused);
  CHECK(run::exit_code(end.why) == 3);
  CHECK(f.log.calls.empty());
}

TEST_CASE("no DEVICE, --scratch or --directory is bad input", "[run]") {
  Fixture f;
  f.req.devices.clear();
  auto end = f.go();
  CHECK(end.why == Outcome::BadInput);
  CHECK(end.message == "run needs a DEVICE (like vdc or /dev/vdc), --scratch SIZE or --directory DIR");
  CHECK(f.log.calls.empty());
}

TEST_CASE("a --scratch size that is no size is bad input, and no scratch device is made", "[run]") {
  Fixture f;
  f.req.devices.clear();
  f.req.scratch = "lots";
  auto end = f.go();
  CHECK(end.why == Outcome::BadInput);
  CHECK_THAT(end.message, Catch::Matchers::StartsWith("--scratch: "));
  CHECK(f.log.calls.empty());
}

// Before: "cannot create the scratch device: scratch size must be larger than 0", exit 1.
TEST_CASE("--scratch 0 is bad input (exit 2), and no scratch device is made", "[run]") {
  Fixture f;
  f.host.log = &f.log;
  f.req.devices.clear();
  for (const char* zero : {"0", "0M", "0k"}) {
    f.req.scratch = zero;
    auto end = f.go();
    CHECK(end.why == Outcome::BadInput);
    CHECK(run::exit_code(end.why) == 2);
    CHECK(end.message == "--scratch " + std::string(zero) + ": give a size above 0, like 1G");
  }
  CHECK(f.log.calls.empty());
  f.req.scratch = "4k";  // the smallest that is a size still goes to the host
  CHECK(f.go().why == Outcome::Ok);
  CHECK(f.log.calls.front() == "scratch 4096");
}

// Before: "run needs a DEVICE (like vdc or /dev/vdc), --scratch SIZE or --directory DIR" for
// `run --profile X nosuchdev extra`, which was given a DEVICE.
TEST_CASE("an argument after the DEVICE is named as unexpected", "[run]") {
  Fixture f;
  f.req.devices = {"nosuchdev", "extra"};
  auto end = f.go();
  CHECK(end.why == Outcome::BadInput);
  CHECK(run::exit_code(end.why) == 2);
  CHECK(end.message ==
        "unexpected argument 'extra': give one DEVICE (like vdc or /dev/vdc), FILE, --scratch SIZE or "
        "--directory DIR");
  CHECK(f.log.calls.empty());
  f.req.devices = {"a", "b", "c"};  // the first extra one
  CHECK_THAT(f.go().message, Catch::Matchers::StartsWith("unexpected argument 'b'"));
  auto phases = run::run_phases(f.req, {f.preflight, f.tuner, f.engine, f.zeroing, f.host, f.files, f.outputs},
                                [](const std::vector<run::PhaseReport>&) { return std::optional<run::Phase>(); });
  CHECK_THAT(phases.end.message, Catch::Matchers::StartsWith("unexpected argument 'b'"));
}

// Before: a runtime over the limit (or any value that needs no target) was found only after
// the preflight had claimed the device, a scratch device had been made or the job files laid
// out: `run --profile essd-plx-latency nosuchdev --runtime 99999` exited 3, not 2.
TEST_CASE("bad values that need no target are refused before the preflight, scratch or job files", "[run]") {
  struct Case {
    const char* what;
    void (*set)(JobSpec&);
    const char* says;
  };
  const Case cases[] = {
      {"runtime", [](JobSpec& s) { s.runtime_s = 99999; }, "runtime 99999 s is above the limit"},
      {"runtime under 1 us", [](JobSpec& s) { s.time_based = true, s.runtime_s = 1e-10; }, "below 1 us"},
      {"ramp_time", [](JobSpec& s) { s.ramp_time_s = 1e6; }, "ramp_time 1e+06 s is above the limit"},
      {"rate", [](JobSpec& s) { s.rate_iops[0] = 10, s.rate_bytes[0] = 4096; }, "rate_iops and rate both cap"},
      {"steadystate",
       [](JobSpec& s) {
         s.steadystate = {SteadyStateKind::Iops, 1, true, 10, 0};
         s.time_based = false;
       },
       "ends a time-based run early"},
      {"rwmixread", [](JobSpec& s) { s.rwmixread = 101; }, "rwmixread 101 is above 100 percent"},
      {"iodepth", [](JobSpec& s) { s.iodepth = 0; }, "iodepth 0 is out of range"},
      {"engine", [](JobSpec& s) { s.engine = EngineKind::Sync, s.sqpoll = true; }, "io_uring options"},
      {"bs", [](JobSpec& s) { s.bs = 100; }, "bs 100 is below 512 bytes"},
  };
  for (const auto& c : cases) {
    SECTION(c.what) {
      for (int target = 0; target < 3; ++target) {
        Fixture f;
        f.host.log = &f.log;
        FakeFiles files(f.log);
        FileHost file_host;
        file_host.log = &f.log;
        c.set(f.req.spec);
        run::Host* host = &f.host;
        if (target == 1) f.req.devices.clear(), f.req.scratch = "64M";
        if (target == 2) f.req.devices = {"/var/tmp/job.dat"}, host = &file_host;
        INFO("target " << target);
        auto end = run::run(f.req, {f.preflight, f.tuner, f.engine, f.zeroing, *host, files, f.outputs});
        CHECK(end.why == Outcome::BadInput);
        CHECK(run::exit_code(end.why) == 2);
        CHECK_THAT(end.message, Catch::Matchers::Contains(c.says));
        CHECK(f.log.calls.empty());  // no preflight, no scratch device, no file laid out
      }
    }
  }
}

TEST_CASE("a --scratch run goes to the scratch device the host made", "[run]") {
  Fixture f;
  f.req.devices.clear();
  f.req.scratch = "64M";
  CHECK(f.go().why == Outcome::Ok);
  CHECK(f.log.calls.front() == "preflight /dev/scratch0");
}

namespace {

run::Phase phase(const char* name, RwMode rw, std::vector<std::string> expect = {}) {
  run::Phase p;
  p.name = name;
  p.spec.rw = rw;
  p.spec.bs = 4096;
  for (const auto& text : expect) p.expectations.push_back(*parse_expectation(text));
  return p;
}

// Hands out `phases` in order, and logs each ask with how many phases were done.
struct Phases {
  Log& log;
  std::vector<run::Phase> phases;
  run::NextPhase next() {
    return [this](const std::vector<run::PhaseReport>& done) -> std::optional<run::Phase> {
      log.calls.push_back("next " + std::to_string(done.size()));
      if (done.size() >= phases.size()) return std::nullopt;
      return phases[done.size()];
    };
  }
};

struct PhaseFixture : Fixture {
  Phases phases{log, {phase("random write IOPS", RwMode::RandWrite), phase("random read IOPS", RwMode::RandRead),
                      phase("sequential write", RwMode::Write)}};
  run::PhasesEnded go_phases() {
    return run::run_phases(req, {preflight, tuner, engine, zeroing, host, files, outputs}, phases.next());
  }
};

}  // namespace

TEST_CASE(
    "run_phases: one preflight, then each phase applied, rechecked, run, restored; one zeroing at the end",
    "[run][phases]") {
  PhaseFixture f;
  auto end = f.go_phases();
  CHECK(end.end.why == Outcome::Ok);
  REQUIRE(end.phases.size() == 3);
  CHECK(end.phases[1].phase.name == "random read IOPS");
  CHECK(f.log.calls == std::vector<std::string>{"preflight fake0", "next 0", "apply", "recheck", "engine",
                                                "restore", "next 1", "apply", "recheck", "engine", "restore",
                                                "next 2", "apply", "recheck", "engine", "restore", "next 3",
                                                "zero"});
  CHECK_FALSE(f.log.has("report"));  // the caller writes the one report of the whole run
  CHECK(f.tuner.changed.empty());
}

TEST_CASE("run_phases zeroes each region a phase wrote once, at the end, only inside it", "[run][phases]") {
  PhaseFixture f;
  f.phases.phases[0].spec.offset_percent = 25;
  f.phases.phases[0].spec.size_percent = 50;
  f.phases.phases[2].spec.offset = 1 * kMiB;
  f.phases.phases[2].spec.size = 8 * kMiB;
  REQUIRE(f.go_phases().end.why == Outcome::Ok);
  REQUIRE(f.zeroing.zeroed.size() == 2);
  REQUIRE(f.engine.regions.size() == 3);
  const std::vector<Region> want = {*f.engine.regions[0], *f.engine.regions[2]};
  for (size_t i = 0; i < want.size(); ++i) {
    const Region& z = f.zeroing.zeroed[i];
    CHECK((z.offset == want[i].offset && z.size == want[i].size && z.write_bs == want[i].write_bs));
    for (const auto& r : safety::edge_ranges(f.preflight.size, z)) {
      CHECK(r.offset >= z.offset);
      CHECK(r.offset + r.length <= z.write_end());
    }
  }
  CHECK(f.zeroing.zeroed[0].offset == 16 * kMiB);
  CHECK(f.zeroing.zeroed[1].offset == 1 * kMiB);
  CHECK(f.log.calls.back() == "zero");
}

// Issue 17: a curve paid one zeroing per step (~1 s each on a throttled device).
TEST_CASE("run_phases zeroes once after the last writing phase, not after every phase", "[run][phases]") {
  PhaseFixture f;
  f.phases.phases.clear();
  for (int qd = 1; qd <= 16; qd *= 2) {
    f.phases.phases.push_back(phase("QD", RwMode::RandWrite));
    f.phases.phases.back().spec.iodepth = static_cast<uint32_t>(qd);
  }
  REQUIRE(f.go_phases().end.why == Outcome::Ok);
  CHECK(f.engine.regions.size() == 5);
  REQUIRE(f.zeroing.zeroed.size() == 1);
  CHECK(std::count(f.log.calls.begin(), f.log.calls.end(), "zero") == 1);
  CHECK(f.log.calls.back() == "zero");  // after the last phase's engine and restore
  CHECK(f.zeroing.zeroed[0].offset == f.engine.regions.back()->offset);
  CHECK(f.zeroing.zeroed[0].size == f.engine.regions.back()->size);
}

TEST_CASE("run_phases: regions whose edges are the same bytes are zeroed once", "[run][phases]") {
  PhaseFixture f;  // 64 MiB: the 4 KiB and the 1 MiB grids end at the same byte
  f.phases.phases[2].spec.bs = 1 << 20;
  REQUIRE(f.go_phases().end.why == Outcome::Ok);
  CHECK(f.zeroing.zeroed.size() == 1);
  PhaseFixture odd;  // 1 MiB writes stop short of an odd size's end: two sets of edges
  odd.preflight.size = 64 * kMiB + 4096;
  odd.phases.phases[2].spec.bs = 1 << 20;
  REQUIRE(odd.go_phases().end.why == Outcome::Ok);
  CHECK(odd.zeroing.zeroed.size() == 2);
}

TEST_CASE("run_phases zeroes what was written on every way out", "[run][phases]") {
  auto zeroed_once_last = [](const PhaseFixture& f) {
    CHECK(std::count(f.log.calls.begin(), f.log.calls.end(), "zero") == 1);
    CHECK(f.log.calls.back() == "zero");
  };
  SECTION("the engine fails in the second phase") {
    PhaseFixture f;
    f.engine.fail_on = 2;
    CHECK(f.go_phases().end.why == Outcome::EngineFailed);
    zeroed_once_last(f);
  }
  SECTION("the recheck refuses before the second phase: the first phase's data is zeroed") {
    struct RefuseSecond : FakePreflight {
      int rechecks = 0;
      using FakePreflight::FakePreflight;
      safety::Verdict recheck(const safety::Checked& c) override {
        safe_again = ++rechecks < 2;
        return FakePreflight::recheck(c);
      }
    };
    PhaseFixture f;
    RefuseSecond preflight(f.log);
    auto end = run::run_phases(f.req, {preflight, f.tuner, f.engine, f.zeroing, f.host, f.files, f.outputs},
                               f.phases.next());
    CHECK(end.end.why == Outcome::Refused);
    CHECK(end.phases.size() == 1);
    zeroed_once_last(f);
  }
  SECTION("a later phase is bad input") {
    PhaseFixture f;
    f.phases.phases[1].spec.bs = 1000;
    CHECK(f.go_phases().end.why == Outcome::BadInput);
    zeroed_once_last(f);
  }
  SECTION("the stop flag inside the first phase") {
    PhaseFixture f;
    f.engine.interrupt = &f.stop;
    CHECK(f.go_phases().end.why == Outcome::Interrupted);
    zeroed_once_last(f);
  }
  SECTION("nothing written: a refusal, or read phases only, zeroes nothing") {
    PhaseFixture f;
    f.preflight.safe_again = false;
    CHECK(f.go_phases().end.why == Outcome::Refused);
    CHECK_FALSE(f.log.has("zero"));
    PhaseFixture reads;
    reads.phases.phases = {phase("random read IOPS", RwMode::RandRead)};
    CHECK(reads.go_phases().end.why == Outcome::Ok);
    CHECK_FALSE(reads.log.has("zero"));
  }
}

TEST_CASE("run_phases: edges the zeroing could not clear end the sequence, or join its failure",
          "[run][phases]") {
  struct FailingZeroing : FakeZeroing {
    using FakeZeroing::FakeZeroing;
    Result<std::vector<safety::ByteRange>> zero(const safety::Checked& c, const Region& r) override {
      (void)FakeZeroing::zero(c, r);
      return make_error("cannot zero the edges of /dev/fake0: Input/output error");
    }
  };
  PhaseFixture f;
  FailingZeroing zeroing(f.log);
  auto go = [&] {
    return run::run_phases(f.req, {f.preflight, f.tuner, f.engine, zeroing, f.host, f.files, f.outputs},
                           f.phases.next());
  };
  auto end = go();
  CHECK(end.end.why == Outcome::EdgesNotZeroed);
  CHECK(run::exit_code(end.end.why) == 1);
  CHECK_THAT(end.end.message,
             Catch::Matchers::StartsWith("the benchmark data is still at the edges of /dev/fake0"));
  CHECK(end.phases.size() == 3);
  f.log.calls.clear();
  f.engine.runs = 0;
  f.engine.fail_on = 2;
  end = go();
  CHECK(end.end.why == Outcome::EngineFailed);
  CHECK_THAT(end.end.message, Catch::Matchers::Contains("; and the benchmark data is still at the edges"));
}

TEST_CASE("run_phases: a refused device runs no phase", "[run][phases]") {
  PhaseFixture f;
  f.preflight.safe = false;
  auto end = f.go_phases();
  CHECK(end.end.why == Outcome::Refused);
  CHECK(run::exit_code(end.end.why) == 3);
  REQUIRE(end.end.verdict);
  CHECK(end.phases.empty());
  CHECK(f.log.calls == std::vector<std::string>{"preflight fake0", "junit refused"});
}

TEST_CASE("run_phases: the first failure ends the sequence, settings restored", "[run][phases]") {
  SECTION("the engine fails in the second phase") {
    PhaseFixture f;
    f.engine.fail_on = 2;
    auto end = f.go_phases();
    CHECK(end.end.why == Outcome::EngineFailed);
    CHECK(end.phases.size() == 1);
    CHECK(f.log.calls.back() == "zero");  // the first phase wrote
    CHECK(std::count(f.log.calls.begin(), f.log.calls.end(), "engine") == 2);
    CHECK(f.tuner.changed.empty());
  }
  SECTION("the recheck refuses before the first phase's engine") {
    PhaseFixture f;
    f.preflight.safe_again = false;
    auto end = f.go_phases();
    CHECK(end.end.why == Outcome::Refused);
    CHECK(end.phases.empty());
    CHECK_FALSE(f.log.has("engine"));
    CHECK(f.log.calls.back() == "restore");
  }
  SECTION("a phase's spec the target cannot take: bad input, before that phase changes anything") {
    PhaseFixture f;
    f.phases.phases[1].spec.bs = 1000;
    auto end = f.go_phases();
    CHECK(end.end.why == Outcome::BadInput);
    CHECK(end.phases.size() == 1);
    CHECK(std::count(f.log.calls.begin(), f.log.calls.end(), "apply") == 1);
    CHECK(f.tuner.changed.empty());
  }
}

TEST_CASE("run_phases honours the stop flag inside a phase and between phases", "[run][phases]") {
  SECTION("inside the first phase: its partial results are kept, no further phase") {
    PhaseFixture f;
    f.req.stopped_by = [] { return std::string("interrupted by Interrupt"); };
    f.engine.interrupt = &f.stop;
    auto end = f.go_phases();
    CHECK(end.end.why == Outcome::Interrupted);
    REQUIRE(end.phases.size() == 1);
    CHECK(end.phases[0].report.results.interrupted);
    CHECK(std::count(f.log.calls.begin(), f.log.calls.end(), "engine") == 1);
    CHECK(f.log.calls.back() == "zero");
  }
  SECTION("between phases: after the first phase's restore, the next phase is not asked for") {
    struct StopOnRestore : FakeTuner {
      std::atomic<bool>& stop;
      StopOnRestore(Log& l, std::atomic<bool>& s) : FakeTuner(l), stop(s) {}
      Status restore() override {
        if (!changed.empty()) stop = true;
        return FakeTuner::restore();
      }
    };
    PhaseFixture f;
    StopOnRestore tuner(f.log, f.stop);
    f.req.stopped_by = [] { return std::string("interrupted by Terminated"); };
    auto end = run::run_phases(f.req, {f.preflight, tuner, f.engine, f.zeroing, f.host, f.files, f.outputs},
                               f.phases.next());
    CHECK(end.end.why == Outcome::Interrupted);
    CHECK(end.end.message ==
          "interrupted by Terminated after 1 phase: their results are out; every setting was restored");
    CHECK(end.phases.size() == 1);
    CHECK_FALSE(end.phases[0].report.results.interrupted);
    CHECK_FALSE(f.log.has("next 1"));
    CHECK(f.log.calls.back() == "zero");
  }
  SECTION("before the first phase: no preflight, nothing changed") {
    PhaseFixture f;
    f.stop = true;
    auto end = f.go_phases();
    CHECK(end.end.why == Outcome::InterruptedBefore);
    CHECK(f.log.calls.empty());
  }
}

TEST_CASE("run_phases: unmet expectations judge a phase but do not end the sequence", "[run][phases]") {
  PhaseFixture f;
  f.phases.phases[0].expectations.push_back(*parse_expectation("iops>=1000"));
  f.phases.phases[1].expectations.push_back(*parse_expectation("errors==0"));
  auto end = f.go_phases();
  CHECK(end.end.why == Outcome::ExpectationsUnmet);
  CHECK(run::exit_code(end.end.why) == 4);
  CHECK(end.end.message == "1 of 2 expectations not met: see the report");
  REQUIRE(end.phases.size() == 3);
  REQUIRE(end.phases[0].report.expectations.size() == 1);
  CHECK_FALSE(end.phases[0].report.expectations[0].met);
  CHECK(end.phases[1].report.expectations[0].met);
}

TEST_CASE("run_phases: a read-only preflight runs no writing phase", "[run][phases]") {
  PhaseFixture f;
  f.req.spec.rw = RwMode::RandRead;  // the request's spec decides the preflight's mode
  auto end = f.go_phases();
  CHECK(end.end.why == Outcome::BadInput);
  CHECK(end.phases.empty());
  CHECK_FALSE(f.log.has("engine"));
  CHECK_FALSE(f.log.has("apply"));
}

// util was io_ticks over the engine's measured runtime, while the counters are read before
// the engine (its settle and ramp) and after it (its drain and verify pass).
TEST_CASE("disk util is over the time between the counter readings, not the measured runtime", "[run]") {
  Fixture f;
  f.engine.runtime_s = 10;
  DiskCounters before, after;
  before.read_at_ns = 100'000'000'000;
  after.read_at_ns = 116'000'000'000;  // 16 s: 10 measured, the rest around them
  before.io_ticks_ms = 500;
  after.io_ticks_ms = 8500;  // busy 8 s
  after.write_ios = 4000;
  f.host.readings = {before, after};
  auto end = f.go();
  CHECK(end.why == Outcome::Ok);
  REQUIRE(f.outputs.last);
  const DiskStats& d = f.outputs.last->results.disk;
  REQUIRE(d.valid);
  CHECK(d.span_s == Approx(16.0));
  CHECK(d.util_percent == Approx(50.0));  // 8 of 16 s, not 8 of the 10 measured (80%)
  CHECK(d.write_ios == 4000);
  CHECK(f.outputs.last->results.runtime_s == 10);
}

TEST_CASE("without both counter readings the report has no disk stats", "[run]") {
  Fixture f;
  f.engine.runtime_s = 10;
  DiskCounters one;
  one.read_at_ns = 1;
  f.host.readings = {one};  // the reading after the engine fails
  CHECK(f.go().why == Outcome::Ok);
  REQUIRE(f.outputs.last);
  CHECK_FALSE(f.outputs.last->results.disk.valid);
}

// fio's jobs without stonewall between them: a phase's `also` run with its spec, one plan for
// all their jobs, each job pinned where the plan put it, each region zeroed, one report each.
TEST_CASE("run_phases: jobs run at once share one plan, one engine call, their pins in order", "[run][phases]") {
  PhaseFixture f;
  f.phases.phases.clear();
  run::Phase p = phase("writer", RwMode::Write);
  p.spec.name = "writer";
  p.spec.numjobs = 1;
  p.spec.offset = 0;
  p.spec.size = 8 * kMiB;
  JobSpec reader;
  reader.name = "reader";
  reader.rw = RwMode::RandRead;
  reader.numjobs = 2;
  JobSpec writer2;
  writer2.name = "writer2";
  writer2.rw = RwMode::RandWrite;
  writer2.offset = 32 * kMiB;
  writer2.size = 16 * kMiB;
  p.also = {reader, writer2};
  f.phases.phases.push_back(p);
  f.tuner.plan_cpus = {1, 0, 1, 0};
  auto end = f.go_phases();
  INFO(end.end.message);
  REQUIRE(end.end.why == Outcome::Ok);
  REQUIRE(f.tuner.planned.size() == 1);
  CHECK(f.tuner.planned[0].numjobs == 4);  // 1 + 2 + 1 jobs, pinned together
  REQUIRE(f.engine.groups.size() == 1);
  const auto& g = f.engine.groups[0];
  REQUIRE(g.size() == 3);
  CHECK(g[0].name == "writer");
  CHECK(g[1].name == "reader");
  CHECK(g[0].cpus == std::vector<int>{1});
  CHECK(g[1].cpus == std::vector<int>{0, 1});
  CHECK(g[2].cpus == std::vector<int>{0});
  CHECK(f.log.calls == std::vector<std::string>{"preflight fake0", "next 0", "apply", "recheck", "engine x3",
                                                "restore", "next 1", "zero", "zero"});
  // Both writers' regions, each inside its own; the reader's none.
  REQUIRE(f.zeroing.zeroed.size() == 2);
  CHECK(f.zeroing.zeroed[0].offset == 0);
  CHECK(f.zeroing.zeroed[0].size == 8 * kMiB);
  CHECK(f.zeroing.zeroed[1].offset == 32 * kMiB);
  CHECK(f.zeroing.zeroed[1].size == 16 * kMiB);
  REQUIRE(end.phases.size() == 1);
  REQUIRE(end.phases[0].also.size() == 2);
  CHECK(end.phases[0].report.spec.name == "writer");
  CHECK(end.phases[0].also[0].spec.name == "reader");
  CHECK(end.phases[0].also[1].spec.name == "writer2");
}

TEST_CASE("run_phases: jobs at once that outnumber the plan's CPUs are bad input, nothing applied", "[run][phases]") {
  PhaseFixture f;
  f.phases.phases.resize(1);
  JobSpec more;
  more.numjobs = 3;
  f.phases.phases[0].also = {more};
  f.tuner.plan_numjobs = 2;
  auto end = f.go_phases();
  CHECK(end.end.why == Outcome::BadInput);
  CHECK(end.end.message.find("the 4 jobs run at once need one CPU each, and 2 are there") != std::string::npos);
  CHECK_FALSE(f.log.has("apply"));
  CHECK(f.engine.groups.empty());
}

TEST_CASE("run_phases: a read-only preflight runs no phase whose job at once writes", "[run][phases]") {
  PhaseFixture f;
  f.req.spec.rw = RwMode::RandRead;
  f.phases.phases = {phase("reader", RwMode::RandRead)};
  JobSpec w;
  w.rw = RwMode::Write;
  f.phases.phases[0].also = {w};
  auto end = f.go_phases();
  CHECK(end.end.why == Outcome::BadInput);
  CHECK_FALSE(f.log.has("apply"));
  CHECK(f.engine.groups.empty());
}

TEST_CASE("run_phases: a job at once that fails its verify fails the phase", "[run][phases]") {
  PhaseFixture f;
  f.phases.phases.resize(1);
  f.phases.phases[0].also = {JobSpec{}};
  f.engine.mismatch_in_member = 1;
  auto end = f.go_phases();
  CHECK(end.end.why == Outcome::VerifyFailed);
}
