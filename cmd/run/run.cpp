// The run sequence. Every step's failure says what happened and what to do; everything applied
// is restored on every way out (the Restoring guard below), and the zeroing gets the engine's
// own Region, never one rebuilt from the spec.
#include "diskprobe/run/run.h"

#include <sys/sysmacros.h>

#include <algorithm>
#include <variant>

#include <spdlog/spdlog.h>

#include "diskprobe/base/json_io.h"
#include "diskprobe/base/units.h"
#include "diskprobe/device/block_header.h"
#include "diskprobe/spec/file_targets.h"
#include "diskprobe/spec/region.h"
#include "diskprobe/spec/validate.h"

namespace diskprobe::run {

int exit_code(Outcome why) {
  switch (why) {
    case Outcome::Ok: return kOk;
    case Outcome::BadInput: return kUsage;
    case Outcome::Refused: return kRefused;
    case Outcome::ExpectationsUnmet: return kExpectations;
    default: return kRuntime;
  }
}

namespace {

Ended stop(Outcome why, std::string message) { return Ended{why, std::move(message), std::nullopt}; }

Ended refused(const safety::Verdict& v, const std::string& why) {
  return Ended{Outcome::Refused, v.device + " " + why, v};
}

bool stopped(const Request& req) { return req.stop && req.stop->load(); }

std::string stopped_by(const Request& req) { return req.stopped_by ? req.stopped_by() : "interrupted"; }

// Restores the tuner on every way out of the device run; restore() is safe twice.
struct Restoring {
  Tuner& tuner;
  ~Restoring() {
    if (auto st = tuner.restore(); !st) spdlog::error("error: {}", st.error());
  }
};

// A failed verify or a job stopped by an I/O error fails the run after the report is out;
// then unmet expectations.
Ended measured_outcome(const RunReport& rep) {
  const Results& r = rep.results;
  if (r.verify.mismatches) {
    const auto& m = r.verify.first.front();
    return stop(Outcome::VerifyFailed, "verify: " + std::to_string(r.verify.mismatches) + " of " +
                                           std::to_string(r.verify.blocks_checked) +
                                           " blocks did not match; first at offset " + std::to_string(m.offset) +
                                           ": " + mismatch_text(m));
  }
  if (r.errors.stopped) return stop(Outcome::IoStopped, r.errors.stop_reason);
  size_t unmet = 0;
  for (const auto& e : rep.expectations) unmet += e.met ? 0 : 1;
  if (unmet) {
    return stop(Outcome::ExpectationsUnmet, std::to_string(unmet) + " of " + std::to_string(rep.expectations.size()) +
                                                " expectations not met: see the report");
  }
  return {};
}

// Random benchmark data can look like a partition table (fio issue #1942): the edges are
// zeroed after every write run, interrupted or failed ones too, through the held claim, only
// inside the region the engine was given. A run zeroes right after its engine; a sequence of
// phases once, when it ends however it ends (one zeroing per curve, not one per step).
class Unzeroed {
 public:
  // The engine was given `region` for a spec that writes. Regions whose edges are the same
  // bytes (accept's 4 KiB and 1 MiB phases on the whole device) are zeroed once.
  void wrote(const Region& region, uint64_t device_size) {
    auto edges = safety::edge_ranges(device_size, region);
    for (const auto& p : pending_) {
      if (safety::edge_ranges(device_size, p) == edges) return;
    }
    pending_.push_back(region);
  }
  // Zeroes every region written since the last call; false when one could not be.
  bool zero(Zeroing& zeroing, const safety::Checked& c) {
    bool all = true;
    for (const auto& r : pending_) {
      auto zeroed = zeroing.zero(c, r);
      if (!zeroed) spdlog::error("error: {}", zeroed.error());
      all = all && zeroed.ok();
    }
    pending_.clear();
    return all;
  }

 private:
  std::vector<Region> pending_;
};

// The report is out first; then what the run found decides the ending.
Ended report_and_end(const Request& req, const Steps& steps, RunReport& rep, const std::string& interrupted) {
  rep.expectations = check_expectations(req.expectations, rep.results);
  if (auto st = steps.outputs.report(rep); !st) return stop(Outcome::ReportLost, st.error());
  if (!interrupted.empty() && rep.results.interrupted) return stop(Outcome::Interrupted, interrupted);
  return measured_outcome(rep);
}

// --directory DIR or a file: no device preflight and no tuning; the filesystem is checked
// instead (writable, room for the files, O_DIRECT), and the files this run made are removed
// afterwards unless --keep-files.
Ended run_files(const Request& req, const Steps& steps) {
  const JobSpec& spec = req.spec;
  const std::string file = spec.directory.empty() ? req.devices[0] : "";
  if (!file.empty()) {
    if (auto ok = steps.files.usable(file, spec); !ok) return stop(Outcome::BadInput, ok.error());
  }
  auto paths = file.empty() ? job_file_paths(spec.directory, spec) : req.devices;
  if (auto ok = steps.files.no_signature(paths, spec); !ok) return stop(Outcome::Refused, ok.error());
  auto target = steps.files.open(file, spec, req.keep_files);
  if (!target) return stop(Outcome::SetupFailed, target.error());
  if (stopped(req)) return stop(Outcome::InterruptedBefore, "interrupted before the run started");
  if (auto st = validate(spec, *target); !st) return stop(Outcome::BadInput, st.error());
  EngineOptions opts;
  opts.stop = req.stop;
  opts.settle_ns = kSettleAfterOwnIoNs;  // the preflight has just read the device
  opts.spec_validated = true;
  auto results = steps.engine.run(spec, *target, opts, nullptr);
  if (!results) return stop(Outcome::EngineFailed, results.error());
  RunReport rep = report_of(std::move(*results), spec, target->path);
  rep.preflight = "files: no device preflight (a filesystem holds them)";
  rep.notes.insert(rep.notes.end(), req.notes.begin(), req.notes.end());
  if (req.keep_files && steps.files.created_any()) rep.notes.push_back("--keep-files: the job files were kept");
  steps.files.remove();
  return report_and_end(req, steps, rep, "interrupted: partial results above");
}

// The device the run goes to: the DEVICE argument, or a scratch loop device made for it.
std::variant<std::string, Ended> device_for(const Request& req, const Steps& steps) {
  if (req.scratch.empty()) return req.devices[0];
  auto size = parse_size(req.scratch);
  if (!size) return stop(Outcome::BadInput, "--scratch: " + size.error());
  if (*size == 0) return stop(Outcome::BadInput, "--scratch " + req.scratch + ": give a size above 0, like 1G");
  auto path = steps.host.scratch(*size);
  if (!path) return stop(Outcome::SetupFailed, "cannot create the scratch device: " + path.error());
  return *path;
}

// The refused run's JUnit report carries the verdict.
void report_refusal(const Request& req, const Steps& steps, const safety::Verdict& v) {
  RunReport refused;
  refused.spec = req.spec;
  refused.device = v.device;
  refused.preflight = v.summary();
  refused.preflight_safe = false;
  steps.outputs.refusal(refused);
}

Target target_of(const Steps& steps, const BlockDevice& dev) {
  Target target{dev.path, dev.size_bytes, dev.logical_block_size, device_identity(dev)};
  target.rdev = makedev(dev.major, dev.minor);
  steps.host.device_facts(dev, target);
  return target;
}

// The spec the engine runs: fewer jobs when the plan clamped them to the CPUs there are.
JobSpec plan_spec(const JobSpec& asked, const tuning::Plan& plan) {
  JobSpec spec = asked;
  spec.numjobs = plan.numjobs;
  return spec;
}

// What the run measured, with what the report says around it.
RunReport report_for(const Request& req, const Steps& steps, const safety::Checked& checked, const tuning::Plan& plan,
                     const JobSpec& run_spec, Results results) {
  results.interrupted = stopped(req);
  RunReport rep = report_of(std::move(results), run_spec, checked.device.path);
  rep.preflight = checked.verdict.summary();
  rep.tuning = steps.tuner.applied();
  rep.notes.insert(rep.notes.end(), req.notes.begin(), req.notes.end());
  rep.notes.insert(rep.notes.end(), plan.notes.begin(), plan.notes.end());
  rep.preflight_safe = true;
  rep.environment = steps.host.environment(checked.device);
  return rep;
}

// One pass of the engine on the held device, its settings restored: the report (expectations
// not yet checked), or why it ended before the engine gave one.
struct Measured {
  RunReport report;
  std::vector<RunReport> also;  // the jobs run at the same time, in order
  bool zeroed = true;
};

// What the tuner plans for jobs run at once: the first spec's settings, a pin for every job.
JobSpec planned_together(const JobSpec& spec, const std::vector<JobSpec>& also) {
  JobSpec all = spec;
  for (const auto& s : also) all.numjobs += s.numjobs;
  return all;
}

// The engine on `specs` (one, or several at once: run_group), job k of the plan on cpus[k].
Result<std::vector<Results>> run_engine(const Steps& steps, const std::vector<JobSpec>& specs,
                                        const std::vector<Region>& regions, const Target& target,
                                        EngineOptions opts, const BlockDevice& dev) {
  if (specs.size() == 1) {
    opts.region = regions[0];
    auto one = steps.engine.run(specs[0], target, opts, &dev);
    if (!one) return make_error(one.error());
    std::vector<Results> all;
    all.push_back(std::move(*one));
    return all;
  }
  std::vector<GroupMember> members;
  size_t first = 0;
  for (size_t k = 0; k < specs.size(); ++k) {
    const size_t n = specs[k].numjobs;
    std::vector<int> cpus(n, -1);
    for (size_t j = 0; j < n && first + j < opts.cpus.size(); ++j) cpus[j] = opts.cpus[first + j];
    first += n;
    // wait_for names a job run at once before this one; one of an earlier group has ended.
    int wait_for = -1;
    for (size_t w = 0; w < k && !specs[k].wait_for.empty(); ++w) {
      if (specs[w].name == specs[k].wait_for) {
        wait_for = static_cast<int>(w);
        break;
      }
    }
    members.push_back({&specs[k], &target, regions[k], std::move(cpus), wait_for});
  }
  return steps.engine.run_group(members, opts, &dev);
}

// Plan, validate, apply, recheck, engine, zero (when a spec writes; with `zero_now` false the
// regions join `unzeroed` for the caller to zero), restore. `also` run at the same time as
// `spec`. `mode` is the preflight's: only a write-mode preflight holds a claim to recheck through.
std::variant<Measured, Ended> measure(const Request& req, const Steps& steps, const safety::Checked& checked,
                                      safety::Mode mode, const JobSpec& spec, const std::vector<JobSpec>& also,
                                      Unzeroed& unzeroed, bool zero_now) {
  const BlockDevice& dev = checked.device;
  const Target target = target_of(steps, dev);
  const JobSpec asked = also.empty() ? spec : planned_together(spec, also);
  auto plan = steps.tuner.plan(dev, asked);
  if (!plan) return stop(Outcome::SetupFailed, plan.error());
  // The one validation of the run: of the specs the engine gets (the plan sets numjobs), on
  // the target it gets, before any setting changes; the engine is told, and does not repeat it.
  std::vector<JobSpec> run_specs;
  if (also.empty()) {
    run_specs.push_back(plan_spec(spec, *plan));
  } else {
    if (plan->numjobs < asked.numjobs) {
      return stop(Outcome::BadInput, "the " + std::to_string(asked.numjobs) + " jobs run at once need one CPU each, " +
                                         "and " + std::to_string(plan->numjobs) + " are there: lower numjobs");
    }
    run_specs.push_back(spec);
    run_specs.insert(run_specs.end(), also.begin(), also.end());
  }
  std::vector<Region> regions;
  for (const auto& s : run_specs) {
    if (auto st = validate(s, target); !st) {
      return stop(Outcome::BadInput, also.empty() ? st.error() : "job '" + excerpt(s.name) + "': " + st.error());
    }
    regions.push_back(resolve_region(s, target));
  }
  if (auto refusal = req.strict ? strict_refusal(*plan) : std::nullopt) return stop(Outcome::BadInput, *refusal);
  for (const auto& n : plan->notes) spdlog::info("{}", n);
  for (const auto& adv : plan->advice) spdlog::info("advice: {}", adv);

  Restoring restoring{steps.tuner};
  if (!req.no_tune) {
    if (auto st = steps.tuner.apply(dev.disk, *plan); !st) return stop(Outcome::SetupFailed, st.error());
  }
  if (stopped(req)) return stop(Outcome::InterruptedBefore, "interrupted before the run started; settings restored");
  // Through the held O_EXCL descriptor right before the engine opens the device. Read mode
  // holds no descriptor (it needs no claim): a read run has nothing to recheck.
  if (auto again = mode == safety::Mode::Write ? steps.preflight.recheck(checked) : checked.verdict; !again.safe()) {
    return refused(again, "changed since the preflight: nothing was written");
  }
  auto before = steps.host.counters(dev);
  EngineOptions opts;
  opts.cpus = plan->cpus;
  opts.stop = req.stop;
  opts.settle_ns = kSettleAfterOwnIoNs;  // the preflight has just read the device
  opts.spec_validated = true;
  auto results = run_engine(steps, run_specs, regions, target, opts, dev);
  auto after = steps.host.counters(dev);
  for (size_t k = 0; k < run_specs.size(); ++k) {
    if (does_writes(run_specs[k].rw)) unzeroed.wrote(regions[k], dev.size_bytes);
  }
  bool zeroed = !zero_now || unzeroed.zero(steps.zeroing, checked);
  if (!results) return stop(Outcome::EngineFailed, results.error());
  if (before && after) results->front().disk = disk_stats_delta(*before, *after);
  Measured m{report_for(req, steps, checked, *plan, run_specs[0], std::move(results->front())), {}, zeroed};
  for (size_t k = 1; k < run_specs.size(); ++k) {
    m.also.push_back(report_for(req, steps, checked, *plan, run_specs[k], std::move((*results)[k])));
  }
  if (auto st = steps.tuner.restore(); !st) spdlog::error("error: {}", st.error());
  return m;
}

std::string edges_left(const BlockDevice& dev) {
  return "the benchmark data is still at the edges of " + dev.path +
         ": zero its first and last 4 MiB yourself (dd if=/dev/zero of=" + dev.path +
         " bs=1M count=4 oflag=direct, and again with seek= for the last 4 MiB)";
}

// After the report is out: edges left unzeroed, then an interruption, end a run whatever it found.
std::optional<Ended> unfinished(const Request& req, const BlockDevice& dev, const Measured& m) {
  if (!m.zeroed) return stop(Outcome::EdgesNotZeroed, edges_left(dev));
  if (m.report.results.interrupted) {
    return stop(Outcome::Interrupted, stopped_by(req) + ": partial results above; every setting was restored");
  }
  return std::nullopt;
}

// From the held, safe device to the report.
Ended run_checked(const Request& req, const Steps& steps, const safety::Checked& checked, safety::Mode mode) {
  Unzeroed unzeroed;
  auto measured = measure(req, steps, checked, mode, req.spec, {}, unzeroed, /*zero_now=*/true);
  if (auto* end = std::get_if<Ended>(&measured)) return *end;
  auto& m = std::get<Measured>(measured);
  Ended end = report_and_end(req, steps, m.report, "");
  if (end.why == Outcome::ReportLost) return end;
  if (auto cut = unfinished(req, checked.device, m)) return *cut;
  return end;
}

// The phases on the held device, one after the other, the regions they wrote left in
// `unzeroed`. Unmet expectations are a judgement, not a failure: the next phase still runs,
// and the sequence ends ExpectationsUnmet.
PhasesEnded each_phase(const Request& req, const Steps& steps, const safety::Checked& checked,
                       safety::Mode mode, const NextPhase& next, Unzeroed& unzeroed) {
  PhasesEnded out;
  size_t unmet = 0, judged = 0;
  for (;;) {
    if (stopped(req)) {
      out.end = out.phases.empty()
                    ? stop(Outcome::InterruptedBefore, "interrupted before the first phase; nothing was changed")
                    : stop(Outcome::Interrupted, stopped_by(req) + " after " + std::to_string(out.phases.size()) +
                                                     (out.phases.size() == 1 ? " phase" : " phases") +
                                                     ": their results are out; every setting was restored");
      return out;
    }
    auto phase = next(out.phases);
    if (!phase) break;
    const bool writes = does_writes(phase->spec.rw) ||
                        std::any_of(phase->also.begin(), phase->also.end(), [](const JobSpec& s) { return does_writes(s.rw); });
    if (mode == safety::Mode::Read && writes) {
      out.end = stop(Outcome::BadInput, "phase \"" + phase->name +
                                            "\" writes, but the device was checked for reading only: nothing was "
                                            "written (the request's spec decides the preflight's mode)");
      return out;
    }
    auto measured = measure(req, steps, checked, mode, phase->spec, phase->also, unzeroed, /*zero_now=*/false);
    if (auto* end = std::get_if<Ended>(&measured)) {
      out.end = *end;
      return out;
    }
    auto& m = std::get<Measured>(measured);
    m.report.expectations = check_expectations(phase->expectations, m.report.results);
    out.phases.push_back({std::move(*phase), m.report, m.also});
    if (auto cut = unfinished(req, checked.device, m)) {
      out.end = *cut;
      return out;
    }
    Ended end = measured_outcome(m.report);
    for (size_t k = 0; k < m.also.size() && end.why == Outcome::Ok; ++k) end = measured_outcome(m.also[k]);
    if (end.why != Outcome::Ok && end.why != Outcome::ExpectationsUnmet) {
      out.end = end;
      return out;
    }
    for (const auto& e : m.report.expectations) unmet += e.met ? 0 : 1;
    judged += m.report.expectations.size();
  }
  if (unmet) {
    out.end = stop(Outcome::ExpectationsUnmet, std::to_string(unmet) + " of " + std::to_string(judged) +
                                                   " expectations not met: see the report");
  }
  return out;
}

// Every way out of the phases (done, a phase failed, refused on a recheck, interrupted)
// zeroes once what they wrote. Edges left with data end the sequence unless it had already
// failed; then both are said.
PhasesEnded phases_checked(const Request& req, const Steps& steps, const safety::Checked& checked,
                           safety::Mode mode, const NextPhase& next) {
  Unzeroed unzeroed;
  PhasesEnded out = each_phase(req, steps, checked, mode, next, unzeroed);
  if (unzeroed.zero(steps.zeroing, checked)) return out;
  const Outcome why = out.end.why;
  if (why == Outcome::Ok || why == Outcome::ExpectationsUnmet || why == Outcome::Interrupted) {
    out.end = stop(Outcome::EdgesNotZeroed, edges_left(checked.device));
  } else {
    out.end.message += "; and " + edges_left(checked.device);
  }
  return out;
}

// The device preflight, in write mode when req.spec writes: the safe device and its held claim,
// or why nothing runs.
struct Claimed {
  safety::Checked checked;
  safety::Mode mode;
};
std::variant<Claimed, Ended> claim(const Request& req, const Steps& steps, const std::string& device) {
  if (stopped(req)) return stop(Outcome::InterruptedBefore, "interrupted before the run started; nothing was changed");
  if (auto st = steps.preflight.name(device); !st) return stop(Outcome::BadInput, st.error());
  auto mode = does_writes(req.spec.rw) ? safety::Mode::Write : safety::Mode::Read;
  auto checked = steps.preflight.check(device, mode);
  if (!checked.verdict.safe()) {
    report_refusal(req, steps, checked.verdict);
    return refused(checked.verdict, kRefusedWhy);
  }
  return Claimed{std::move(checked), mode};
}

// The scratch device and the held preflight claim live until the report is written.
Ended run_device(const Request& req, const Steps& steps) {
  auto chosen = device_for(req, steps);
  if (auto* end = std::get_if<Ended>(&chosen)) return *end;
  auto claimed = claim(req, steps, std::get<std::string>(chosen));
  if (auto* end = std::get_if<Ended>(&claimed)) return *end;
  const auto& c = std::get<Claimed>(claimed);
  return run_checked(req, steps, c.checked, c.mode);
}

}  // namespace

std::optional<std::string> strict_refusal(const tuning::Plan& plan) {
  if (plan.deviations.empty()) return std::nullopt;
  std::string msg = "--strict: ";
  for (size_t i = 0; i < plan.deviations.size(); ++i) msg += (i ? "; " : "") + plan.deviations[i];
  return msg + "; nothing was changed (change the overrides, or drop --strict)";
}

// A target the run was not given: more than one DEVICE or FILE.
std::optional<Ended> extra_target(const Request& req) {
  if (req.devices.size() < 2) return std::nullopt;
  return stop(Outcome::BadInput, "unexpected argument '" + excerpt(req.devices[1]) +
                                     "': give one DEVICE (like vdc or /dev/vdc), FILE, --scratch SIZE or "
                                     "--directory DIR");
}

Ended run(const Request& req, const Steps& steps) {
  if (auto extra = extra_target(req)) return *extra;
  // What needs no target is judged before the preflight, a scratch device or job files.
  if (auto st = validate_spec(req.spec); !st) return stop(Outcome::BadInput, st.error());
  const bool one_target = req.scratch.empty() && req.devices.size() == 1;
  if (!req.spec.directory.empty() || (one_target && steps.host.names_a_file(req.devices[0]))) {
    return run_files(req, steps);
  }
  if (req.scratch.empty() && req.devices.size() != 1) {
    return stop(Outcome::BadInput, "run needs a DEVICE (like vdc or /dev/vdc), --scratch SIZE or --directory DIR");
  }
  return run_device(req, steps);
}

PhasesEnded run_phases(const Request& req, const Steps& steps, const NextPhase& next) {
  if (auto extra = extra_target(req)) return {*extra, {}};
  if (req.scratch.empty() && req.devices.size() != 1) {
    return {stop(Outcome::BadInput, "a DEVICE is needed (like vdc or /dev/vdc), or --scratch SIZE"), {}};
  }
  auto chosen = device_for(req, steps);
  if (auto* end = std::get_if<Ended>(&chosen)) return {*end, {}};
  auto claimed = claim(req, steps, std::get<std::string>(chosen));
  if (auto* end = std::get_if<Ended>(&claimed)) return {*end, {}};
  const auto& c = std::get<Claimed>(claimed);
  return phases_checked(req, steps, c.checked, c.mode, next);
}

}  // namespace diskprobe::run
