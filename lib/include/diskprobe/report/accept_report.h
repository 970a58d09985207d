// accept's one report: a verdict per metric (the phase's sustained rate, or its QD1 latency,
// against the volume's figure), with every phase's own report beside it; text, JSON, JUnit
// (one testcase per metric) and HTML.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "diskprobe/acceptance/burst.h"
#include "diskprobe/acceptance/suite.h"
#include "diskprobe/report/report.h"
#include "diskprobe/report/run_report.h"

namespace diskprobe {

struct MetricVerdict {
  std::string name;  // the phase's: "random write IOPS"
  Quantity quantity = Quantity::Iops;
  double provisioned = 0;  // IOPS, bytes/s or ns; 0: not judged
  double measured = 0;     // the sustained rate, or the mean latency (ns)
  double spread = 0;       // the standard deviation of the per-second samples judged
  double delivered = 0;    // a share: measured / provisioned (latency: provisioned / measured)
  bool judged = false, passed = true;
  BurstFinding burst;
  bool steady = false;  // ended on its steady-state criterion
  bool steady_asked = false;
  std::string line;  // "random write IOPS: delivered 98.7% of provisioned 50,000 IOPS ..."
};

// The sustained rate (after a burst, if one ended) or the mean latency, against the volume.
MetricVerdict judge_phase(const SuitePhase& phase, const RunReport& rep, double tolerance);

struct AcceptPhase {
  SuitePhase phase;
  RunReport report;
  MetricVerdict verdict;
};

struct AcceptReport {
  std::string device, volume;
  double tolerance = 0.95;
  std::string preflight;
  bool preflight_safe = true;
  std::vector<AcceptPhase> phases;   // those that ran
  std::vector<std::string> planned;  // every phase's name, in the suite's order
  std::string ended;                 // why the suite stopped early; empty when every phase ran
  bool passed() const;               // every phase ran and every judged metric is within tolerance
};

// How the suite's one claim of the device ended, in the report's words.
struct AcceptEnding {
  std::string device;                  // a refusal's device, else the DEVICE as given
  std::optional<std::string> refusal;  // the preflight's (or a recheck's) summary when it refused
  std::string ended;                   // why the suite stopped early; empty when it ran to its end
};

// accept's report from the phases that ran (ran[i] is suite[i]'s report), each judged
// (judge_phase) against the volume at `tolerance`.
AcceptReport accept_report(const std::string& volume, double tolerance, const std::vector<SuitePhase>& suite,
                           const std::vector<RunReport>& ran, const AcceptEnding& ending);

// The report in one of accept's formats (text for any other).
std::string render_accept(const AcceptReport& r, OutputFormat format);

std::string render_accept_text(const AcceptReport& r);
nlohmann::json accept_json(const AcceptReport& r);
// A testcase per metric of the suite: a failure when out of tolerance, skipped when the
// volume gives no figure for it or the phase did not run. A refused device: one failed
// preflight testcase.
std::string render_accept_junit(const AcceptReport& r);
std::string render_accept_html(const AcceptReport& r);
// Every phase's figures (a "phase" label apart) and the verdicts as gauges, for
// node_exporter's textfile collector.
std::string render_accept_openmetrics(const AcceptReport& r);
// fio's JSON: each phase a group of jobs (to_fio_json of the runs), the verdicts under
// "diskprobe"."accept".
nlohmann::json accept_fio_json(const AcceptReport& r, bool plus);

}  // namespace diskprobe
