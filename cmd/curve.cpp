// `diskprobe curve`: parse the sweep's limits, run its steps as phases of one run (one
// preflight, one claim), a progress line per step, then the curve as text or JSON and HTML.
#include <algorithm>
#include <cmath>

#include <spdlog/spdlog.h>

#include "commands.h"
#include "diskprobe/base/units.h"
#include "diskprobe/curve/curve_report.h"
#include "diskprobe/spec/host_checks.h"
#include "out.h"
#include "run_steps.h"

namespace diskprobe::cli {

namespace {

// A step that has not held still by then is reported "not steady" (the profile's own
// steadystate wins): every second's IOPS within 5% of the mean of the last 5.
constexpr SteadyState kStepSteady{SteadyStateKind::Iops, 5, true, 5, 2};
constexpr double kDefaultStepTime = 20;
constexpr double kMaxStepRamp = 2;

// "10,25,50%" or "10%,25%" -> {0.1, 0.25, 0.5}: each a share in (0, 100], rising.
Result<std::vector<double>> rate_fractions(const std::string& text) {
  std::vector<double> v;
  const std::string bad =
      "--rate-steps " + text + ": give rising percentages of the maximum, like 10,25,50,90%";
  size_t at = 0;
  while (at <= text.size()) {
    size_t comma = text.find(',', at);
    std::string word = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    auto pct = parse_percent(word);
    if (!pct && !word.empty() && word.back() != '%') pct = parse_percent(word + "%");
    if (!pct || *pct <= 0 || *pct > 100 || (!v.empty() && *pct / 100 <= v.back())) return make_error(bad);
    v.push_back(*pct / 100);
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return v;
}

// The sweep's options from the command line; step_time gets --step-time.
Result<curve::Options> sweep_options(const Args& a, const JobSpec& profile, double& step_time) {
  curve::Options o;
  o.rate_iodepth = profile.iodepth;
  if (!a.max_iodepth.empty()) {
    auto n = parse_decimal(a.max_iodepth);
    if (!n || *n < 1 || *n > 65536 || std::floor(*n) != *n) {
      return make_error("--max-iodepth " + a.max_iodepth + ": give a whole number from 1 to 65536");
    }
    o.max_iodepth = static_cast<uint32_t>(*n);
  }
  if (!a.past_knee.empty()) {
    auto n = parse_decimal(a.past_knee);
    if (!n || *n > 64 || std::floor(*n) != *n) {
      return make_error("--past-knee " + a.past_knee +
                        ": give how many steps to run after the knee, 0 to 64");
    }
    o.steps_past_knee = static_cast<unsigned>(*n);
  }
  step_time = kDefaultStepTime;
  if (!a.step_time.empty()) {
    auto s = parse_seconds(a.step_time);
    if (!s || *s < 1 || *s > 86400)
      return make_error("--step-time " + a.step_time + ": give 1s to 86400s, like 20s");
    step_time = *s;
  }
  if (!a.rate_steps.empty()) {
    auto f = rate_fractions(a.rate_steps);
    if (!f) return make_error(f.error());
    o.rate_fractions = *f;
  }
  if (!a.max_iops.empty()) {
    auto n = parse_decimal(a.max_iops);
    if (!n || *n < 1)
      return make_error("--max-iops " + a.max_iops + ": give the IOPS the rate steps are shares of");
    if (a.rate_steps.empty())
      return make_error("--max-iops goes with --rate-steps: --rate-steps 10,50,90% --max-iops N");
    o.max_iops = *n;
  }
  return o;
}

// A curve has no one run report: phases are reported together when the sweep is over.
class CurveOutputs : public run::Outputs {
 public:
  Status report(const RunReport&) override { return Ok{}; }
  void refusal(const RunReport&) override {}
};

curve::CurveReport curve_of(const JobSpec& profile, const curve::Options& o, const run::PhasesEnded& ended,
                            const std::vector<curve::Load>& loads) {
  curve::CurveReport c;
  c.spec = profile;
  c.options = o;
  for (size_t i = 0; i < ended.phases.size() && i < loads.size(); ++i) {
    c.points.push_back(curve::point_of(ended.phases[i].report.results, loads[i]));
  }
  if (!ended.phases.empty()) {
    const RunReport& first = ended.phases.front().report;
    c.device = first.device;
    c.preflight = first.preflight;
    c.notes = first.notes;
  }
  return c;
}

}  // namespace

int cmd_curve(const Args& args, const SysRoot& root) {
  Args a = args;
  if (a.profile.empty()) return fail(kUsage, "curve needs --profile NAME: see 'diskprobe profiles'");
  if (a.positional.size() != 1 || !a.scratch.empty() || !a.directory.empty()) {
    return fail(kUsage, "curve needs one DEVICE: diskprobe curve DEVICE --profile NAME");
  }
  if (a.output_format != "text" && a.output_format != "json") {
    return fail(kUsage, "--output-format " + a.output_format + ": curve writes text or json");
  }
  if (!a.output_file.empty() || !a.expect.empty() || !a.volume.empty()) {
    return fail(kUsage,
                "curve takes no --output, --expect or --volume: it prints the curve (--output-format "
                "json for tools) and draws it with --report FILE.html");
  }
  if (auto bad = bad_device_name(root, a.positional[0])) return *bad;
  auto profile = spec_from(a, a.profile);
  if (!profile) return fail(kUsage, profile.error());
  double step_time = 0;
  auto options = sweep_options(a, *profile, step_time);
  if (!options) return fail(kUsage, options.error());
  profile->directory.clear();
  profile->runtime_s = step_time;
  profile->time_based = true;  // a step runs for its time, whatever size the profile moves
  // A new queue depth's first moments (the queue filling, a neighbour's burst) are no point.
  if (profile->ramp_time_s == 0) profile->ramp_time_s = std::min(kMaxStepRamp, step_time / 4);
  // A step too short for the window just runs its time.
  if (!profile->steadystate.enabled() && step_time > kStepSteady.duration_s + kStepSteady.ramp_s) {
    profile->steadystate = kStepSteady;
  }
  // The deepest step is checked too: its queue may be what the host cannot take.
  for (uint32_t depth : {1u, options->max_iodepth, options->rate_iodepth}) {
    if (auto st = validate_on_host(curve::step_spec(*profile, curve::Load{depth, 0, 0}), root); !st) {
      return fail(kUsage, st.error());
    }
  }
  std::optional<OutputFile> html;
  if (!a.report_file.empty()) {
    auto f = OutputFile::open("--report", a.report_file, root, a.positional);
    if (!f) return fail(kUsage, f.error());
    html.emplace(std::move(*f));
  }
  for (const auto& n : a.notes) spdlog::info("{}", n);

  SystemHost host(root);
  SystemPreflight preflight(root, preflight_options(a, /*hold=*/true));
  SystemTuner tuner(root, journal_dir());
  SystemEngine engine(root);
  SystemZeroing zeroing;
  SystemFiles files;
  CurveOutputs outputs;
  const run::Steps steps{preflight, tuner, engine, zeroing, host, files, outputs};

  std::vector<curve::Load> loads;
  std::vector<curve::Point> points;
  std::string why;
  auto next = [&](const std::vector<run::PhaseReport>& done) -> std::optional<run::Phase> {
    if (!done.empty()) {
      points.push_back(curve::point_of(done.back().report.results, loads[done.size() - 1]));
      spdlog::info("curve step {}: {}", done.size(), curve::step_line(points.back()));
    }
    auto load = curve::next_load(*options, points);
    if (!load) {
      why = curve::why_ended(*options, points);
      return std::nullopt;
    }
    loads.push_back(*load);
    spdlog::info("curve step {}: {} for up to {:g} s", loads.size(), curve::step_name(*load), step_time);
    return run::Phase{curve::step_name(*load), curve::step_spec(*profile, *load), {}};
  };
  auto request = run_request(a, curve::step_spec(*profile, curve::Load{1, 0, 0}), {});
  auto ended = run::run_phases(request, steps, next);
  if (ended.phases.empty()) return render_end(ended.end);

  auto c = curve_of(*profile, *options, ended, loads);
  c.ended = ended.end.why == run::Outcome::Ok ? why : "early: " + ended.end.message;
  if (a.output_format == "json") {
    print_json(curve::to_json(c));
  } else {
    print(curve::render_text(c));
  }
  if (html) {
    if (auto st = html->write(curve::render_html(c)); !st)
      return fail(kRuntime, "the HTML report is lost: " + st.error());
  }
  return render_end(ended.end);
}

}  // namespace diskprobe::cli
