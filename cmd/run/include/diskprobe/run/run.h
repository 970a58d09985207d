// One run, in order: target (device | file | directory | scratch) -> preflight -> plan ->
// apply -> recheck -> engine -> zero (the engine's Region) -> restore -> report; and why it
// ended. The steps come in (steps.h), so tests drive it with fakes.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "diskprobe/acceptance/expect.h"
#include "diskprobe/run/exit_codes.h"
#include "diskprobe/run/steps.h"

namespace diskprobe::run {

// Why a run ended; exit_code() turns it into the README's code.
enum class Outcome {
  Ok,
  BadInput,           // 2: nothing was touched
  Refused,            // 3: the preflight, or the recheck, refused the device
  SetupFailed,        // 1: before the engine (scratch, files, topology, apply)
  InterruptedBefore,  // 1: stopped before the engine started
  EngineFailed,       // 1
  ReportLost,         // 1
  EdgesNotZeroed,     // 1: the benchmark data is still at the device's edges
  Interrupted,        // 1: partial results are out
  VerifyFailed,       // 1
  IoStopped,          // 1: a job stopped on an I/O error
  ExpectationsUnmet,  // 4
};

int exit_code(Outcome why);

struct Ended {
  Outcome why = Outcome::Ok;
  std::string message;                    // empty for Ok
  std::optional<safety::Verdict> verdict;  // Refused: what the preflight found
};

// The command line, parsed: the spec with its profile, overrides and directory applied.
struct Request {
  JobSpec spec;
  std::vector<std::string> devices;  // DEVICE arguments (one is a run; a file is a file run)
  std::string scratch;               // --scratch SIZE, or empty
  bool no_tune = false, strict = false, keep_files = false;
  std::vector<std::string> notes;    // for the report
  std::vector<Expectation> expectations;
  const std::atomic<bool>* stop = nullptr;
  std::function<std::string()> stopped_by;  // "interrupted by Interrupt", once stop is set
};

Ended run(const Request& req, const Steps& steps);

// A multi-phase run (accept's phases, curve's steps) on one device: one preflight, in write
// mode when any phase writes, and one claim held across all phases; each phase on its own
// tuning plan, applied before it and restored after it; the edges of what the phases wrote
// zeroed once, when the sequence ends, on every way out (done, failed, refused, interrupted).
// req.spec is the first phase's spec (for the refusal report); req.expectations are ignored:
// each phase carries its own.
struct Phase {
  std::string name;                       // "random write IOPS", "QD 8"
  JobSpec spec;
  std::vector<Expectation> expectations;  // judged on this phase's results
  // Jobs run at the same time as `spec`, behind one start gate, on the same device (fio's jobs
  // with no stonewall between them): one tuning plan for all their jobs, pinned in order.
  std::vector<JobSpec> also;
};
struct PhaseReport {
  Phase phase;
  RunReport report;                       // expectations checked
  std::vector<RunReport> also;            // phase.also's, in order; the device's counters on `report` only
};
// Asked before each phase, with the reports so far: the next phase, or nullopt to stop.
using NextPhase = std::function<std::optional<Phase>(const std::vector<PhaseReport>& done)>;
struct PhasesEnded {
  Ended end;                              // Ok when every phase ran; the first failure otherwise
  std::vector<PhaseReport> phases;        // every phase that ran, in order
};
// Outputs::report is not called per phase: the caller writes the one report of the whole run.
PhasesEnded run_phases(const Request& req, const Steps& steps, const NextPhase& next);

// --strict (run and tune): a plan that falls short of the profile is refused before any
// change; the message, or nullopt for a plan that does not.
std::optional<std::string> strict_refusal(const tuning::Plan& plan);

// The refusal line's tail, after the device's name.
inline constexpr const char* kRefusedWhy = "refused by the preflight: nothing was written";

}  // namespace diskprobe::run
