// `diskprobe accept DEVICE --volume TYPE:ARG`: the volume's suite (lib/acceptance) run as
// phases behind one preflight and one claim (cmd/run's run_phases), judged and reported once.
#include <thread>

#include <spdlog/spdlog.h>

#include "commands.h"
#include "diskprobe/acceptance/suite.h"
#include "diskprobe/base/json_io.h"
#include "diskprobe/base/units.h"
#include "diskprobe/profiles/profiles.h"
#include "diskprobe/profiles/volumes.h"
#include "diskprobe/report/accept_report.h"
#include "diskprobe/spec/host_checks.h"
#include "diskprobe/tuning/topology.h"
#include "out.h"
#include "run_steps.h"

namespace diskprobe::cli {

namespace {

// The CPUs and the device's hardware queues; a name that reads as no device yet gets the
// host's CPUs and one queue (the preflight then says what is wrong with it).
SuiteHost host_of(const SysRoot& root, const std::string& arg) {
  SuiteHost h;
  h.cpus = std::max(1u, std::thread::hardware_concurrency());
  auto name = parse_device_name(root, arg);
  auto dev = name ? read_block_device(root, *name) : Result<BlockDevice>(make_error(name.error()));
  auto topo = dev ? tuning::read_topology(root, *dev) : Result<tuning::Topology>(make_error(dev.error()));
  if (!topo) return h;
  if (!topo->online_cpus.empty()) h.cpus = static_cast<unsigned>(topo->online_cpus.size());
  unsigned queues = 0;
  for (const auto& q : topo->hw_queues) queues += q.polled ? 0 : 1;
  h.hw_queues = std::max(1u, queues);
  return h;
}

// The suite from the command line; every problem is bad input, found before any change.
Result<std::vector<SuitePhase>> suite_from(const Args& a, const SysRoot& root, double& tolerance) {
  if (a.positional.size() != 1) return make_error("usage: diskprobe accept DEVICE --volume TYPE:ARG");
  if (a.volume.empty()) {
    return make_error("accept needs --volume TYPE:ARG (a catalog type, or " +
                      std::string(profiles::kCustomVolumeForm) + ")");
  }
  if (!a.profile.empty() || !a.overrides.empty() || !a.expect.empty() || !a.scratch.empty() ||
      !a.directory.empty()) {
    return make_error(
        "accept plans its own phases from --volume: drop --profile, --expect, --scratch, "
        "--directory and workload options (use 'run' for one workload)");
  }
  auto tol = profiles::parse_tolerance(a.tolerance);
  if (!tol) return make_error(tol.error());
  tolerance = *tol;
  auto max_time = a.max_time.empty() ? std::optional<double>(kDefaultMaxTimeS) : parse_seconds(a.max_time);
  if (!max_time) return make_error("--max-time '" + excerpt(a.max_time) + "': give seconds like 600 or 10m");
  auto catalog = profiles::load_volume_catalog(profiles::search_dirs());
  if (!catalog) return make_error(catalog.error());
  auto v = profiles::volume_performance(a.volume, *catalog);
  if (!v) return make_error(v.error());
  SuiteVolume volume{a.volume, v->iops, v->throughput_bytes_per_s, v->latency_ms};
  auto load = [](const std::string& name) { return profiles::load(name); };
  auto suite = plan_suite(volume, host_of(root, a.positional[0]), *max_time, load);
  if (!suite) return suite;
  for (const auto& p : *suite) {
    if (auto st = validate_on_host(p.spec, root); !st) return make_error(p.name + ": " + st.error());
  }
  return suite;
}

}  // namespace

int cmd_accept(const Args& a, const SysRoot& root) {
  // --json is JSON mode's word for the report too: stdout then carries one JSON document.
  auto format = a.json ? std::optional(OutputFormat::Json) : parse_output_format(a.output_format);
  if (!format) {
    return fail(kUsage, "--output-format " + a.output_format +
                            ": accept writes text, json, junit, fio-json, fio-json+ or openmetrics");
  }
  double tolerance = 0;
  auto suite = suite_from(a, root, tolerance);
  if (!suite) return fail(kUsage, suite.error());
  if (auto rc = bad_device_name(root, a.positional[0])) return *rc;
  auto outputs = CliOutputs::open(a, root, suite->front().spec, *format);
  if (!outputs) return fail(kUsage, outputs.error());

  // One progress line as each phase starts, and its verdict as it ends.
  auto next = [&](const std::vector<run::PhaseReport>& done) -> std::optional<run::Phase> {
    if (!done.empty())
      spdlog::info("  {}", judge_phase((*suite)[done.size() - 1], done.back().report, tolerance).line);
    if (done.size() == suite->size()) return std::nullopt;
    const SuitePhase& p = (*suite)[done.size()];
    spdlog::info("phase {}/{}: {} ({}; {}, at most {:.0f} s)", done.size() + 1, suite->size(), p.name,
                 p.profile, p.how, p.spec.runtime_s);
    return run::Phase{p.name, p.spec, {}};
  };
  DeferredOutputs deferred;
  SystemSteps system(root, preflight_options(a, /*hold=*/true), journal_dir());
  auto ended = run::run_phases(run_request(a, suite->front().spec, {}), system.with(deferred), next);

  const auto& end = ended.end;
  std::vector<RunReport> ran;
  for (auto& p : ended.phases) ran.push_back(std::move(p.report));
  const bool refused = end.verdict && !end.verdict->safe();  // first, or on a recheck
  AcceptEnding ending{
      end.verdict ? end.verdict->device : a.positional[0],
      refused ? std::optional(end.verdict->summary()) : std::nullopt,
      end.why == run::Outcome::Ok || end.why == run::Outcome::ExpectationsUnmet ? "" : end.message};
  const AcceptReport report = accept_report(a.volume, tolerance, *suite, ran, ending);
  if (end.why == run::Outcome::Refused || end.why == run::Outcome::BadInput) {
    if (outputs->format() == OutputFormat::Junit && outputs->has_output_file() && end.verdict) {
      (void)outputs->write(render_accept_junit(report), "", "");
    }
    return render_end(end);
  }
  if (auto st = outputs->write(render_accept(report, *format), render_accept_text(report),
                               render_accept_html(report));
      !st) {
    return fail(kRuntime, st.error());
  }
  if (!report.ended.empty()) return render_end(end);
  return report.passed()
             ? kOk
             : fail(kExpectations, "not accepted: a metric is outside the tolerance, see the report");
}

}  // namespace diskprobe::cli
