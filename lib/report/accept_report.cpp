#include "diskprobe/report/accept_report.h"

#include <cmath>
#include <cstdio>

#include "diskprobe/base/json_io.h"
#include "diskprobe/report/fio_json.h"
#include "diskprobe/report/html_report.h"
#include "diskprobe/report/openmetrics.h"
#include "diskprobe/report/report.h"

namespace diskprobe {

namespace {

std::string num(double v, const char* f) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// 50000 -> "50,000": the issue's own spelling of a provisioned figure.
std::string thousands(double v) {
  std::string digits = num(v, "%.0f"), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string figure(Quantity q, double v) {
  return q == Quantity::Iops ? thousands(v) + " IOPS" : format_quantity(q, v);
}

const DirectionStats& judged_direction(const SuitePhase& p, const Results& r) {
  return does_writes(p.spec.rw) ? r.write : r.read;
}

// The phase's rate per whole second, in the judged quantity.
std::vector<double> per_second(const SuitePhase& p, const Results& r, const DirectionStats& d) {
  std::vector<double> v;
  const double unit = p.judged == Quantity::Bandwidth ? (d.bs ? d.bs : p.spec.bs) : 1.0;
  for (uint64_t n : whole_second_ios(d, r.runtime_s)) v.push_back(static_cast<double>(n) * unit);
  return v;
}

void judge_rate(MetricVerdict& v, const SuitePhase& p, const Results& r, double tolerance) {
  const DirectionStats& d = judged_direction(p, r);
  v.burst = find_burst(per_second(p, r, d));
  // Without a burst the whole run's count over its measured time: exact, as the fidelity
  // issue requires; the per-second mean would drop the last partial second.
  const double total =
      p.judged == Quantity::Bandwidth ? static_cast<double>(d.bytes) : static_cast<double>(d.ios);
  v.measured = v.burst.burst ? v.burst.sustained_rate : (r.runtime_s > 0 ? total / r.runtime_s : 0);
  v.spread = v.burst.spread;
  v.judged = v.provisioned > 0;
  v.delivered = v.judged ? v.measured / v.provisioned : 0;
  v.passed = !v.judged || v.measured >= tolerance * v.provisioned;
  const std::string spread = v.measured > 0 ? num(100.0 * v.spread / v.measured, "%.1f") + "%" : "-";
  v.line = p.name + ": delivered " + num(100.0 * v.delivered, "%.1f") + "% of provisioned " +
           figure(v.quantity, v.provisioned) + " (" + (v.burst.burst ? "sustained " : "") +
           figure(v.quantity, v.measured) + " ± " + spread + ")";
  if (v.burst.burst) {
    v.line += "; " + burst_text(v.burst, p.judged == Quantity::Iops ? "IOPS" : "MiB/s",
                                p.judged == Quantity::Iops ? 1 : 1048576.0);
  }
  if (v.burst.too_short) v.line += "; too short to tell a burst";
}

void judge_latency(MetricVerdict& v, const SuitePhase& p, const Results& r, double tolerance) {
  const Histogram& h = judged_direction(p, r).lat;
  v.measured = h.count() ? h.mean() : NAN;
  v.spread = h.count() ? h.stdev() : 0;
  v.judged = v.provisioned > 0;
  v.delivered = v.judged && v.measured > 0 ? v.provisioned / v.measured : 0;
  // Within tolerance: no more than lat_ms / tolerance (95%: up to 5.3% over).
  v.passed = !v.judged || (!std::isnan(v.measured) && v.measured <= v.provisioned / tolerance);
  v.line = p.name + ": mean " + format_quantity(Quantity::Latency, v.measured) + ", p99 " +
           format_quantity(Quantity::Latency, h.count() ? static_cast<double>(h.percentile(99)) : NAN);
  v.line += v.judged ? " against lat_ms " + format_quantity(Quantity::Latency, v.provisioned)
                     : " (not judged: the volume gives no lat_ms)";
}

}  // namespace

MetricVerdict judge_phase(const SuitePhase& phase, const RunReport& rep, double tolerance) {
  MetricVerdict v;
  v.name = phase.name;
  v.quantity = phase.judged;
  v.provisioned = phase.provisioned;
  const Results& r = rep.results;
  if (phase.judged == Quantity::Latency) {
    judge_latency(v, phase, r, tolerance);
  } else {
    judge_rate(v, phase, r, tolerance);
  }
  v.steady_asked = phase.spec.steadystate.enabled();
  v.steady = r.steadystate.attained;
  if (v.steady || v.steady_asked) v.line += v.steady ? "; steady" : "; not steady: ran to its time limit";
  return v;
}

AcceptReport accept_report(const std::string& volume, double tolerance, const std::vector<SuitePhase>& suite,
                           const std::vector<RunReport>& ran, const AcceptEnding& ending) {
  AcceptReport r;
  r.volume = volume;
  r.tolerance = tolerance;
  for (const auto& p : suite) r.planned.push_back(p.name);
  for (size_t i = 0; i < ran.size() && i < suite.size(); ++i) {
    r.phases.push_back({suite[i], ran[i], judge_phase(suite[i], ran[i], tolerance)});
  }
  r.device = ran.empty() ? ending.device : ran.front().device;
  r.preflight_safe = !ending.refusal;
  r.preflight = ending.refusal ? *ending.refusal : ran.empty() ? "not run" : ran.front().preflight;
  r.ended = ending.ended;
  return r;
}

std::string render_accept(const AcceptReport& r, OutputFormat format) {
  switch (format) {
    case OutputFormat::Json:
      return accept_json(r).dump(2) + "\n";
    case OutputFormat::Junit:
      return render_accept_junit(r);
    case OutputFormat::OpenMetrics:
      return render_accept_openmetrics(r);
    case OutputFormat::FioJson:
    case OutputFormat::FioJsonPlus:
      return dump_json(accept_fio_json(r, format == OutputFormat::FioJsonPlus)) + "\n";
    case OutputFormat::Text:
      break;
  }
  return render_accept_text(r);
}

bool AcceptReport::passed() const {
  if (!preflight_safe || !ended.empty() || phases.size() != planned.size()) return false;
  for (const auto& p : phases) {
    if (!p.verdict.passed) return false;
  }
  return true;
}

namespace {

const char* mark(const MetricVerdict& v) { return !v.judged ? "INFO" : v.passed ? "PASS" : "FAIL"; }

}  // namespace

std::string render_accept_text(const AcceptReport& r) {
  std::string o =
      "accept " + r.device + " as " + r.volume + " (tolerance " + num(100 * r.tolerance, "%g") + "%)\n";
  o += "preflight: " + r.preflight + "\n";
  for (const auto& p : r.phases) o += std::string(mark(p.verdict)) + "  " + p.verdict.line + "\n";
  for (size_t i = r.phases.size(); i < r.planned.size(); ++i) o += "NOT RUN  " + r.planned[i] + "\n";
  if (!r.ended.empty()) o += "stopped: " + r.ended + "\n";
  o += r.passed() ? "accepted: every metric within tolerance\n" : "not accepted\n";
  for (const auto& p : r.phases) {
    o += "\n== " + p.phase.name + " (" + p.phase.profile + ": " + p.phase.how + ")\n";
    o += render_text(p.report);
  }
  return o;
}

nlohmann::json accept_json(const AcceptReport& r) {
  using nlohmann::json;
  json j;
  j["schema"] = 1;
  j["command"] = "accept";
  j["device"] = r.device;
  j["volume"] = r.volume;
  j["tolerance"] = r.tolerance;
  j["preflight"] = r.preflight;
  j["passed"] = r.passed();
  if (!r.ended.empty()) j["ended"] = r.ended;
  j["metrics"] = json::array();
  for (const auto& p : r.phases) {
    const MetricVerdict& v = p.verdict;
    const char* unit = v.quantity == Quantity::Iops        ? "iops"
                       : v.quantity == Quantity::Bandwidth ? "bytes_per_s"
                                                           : "ns";
    json m = {{"name", v.name},
              {"profile", p.phase.profile},
              {"how", p.phase.how},
              {"unit", unit},
              {"judged", v.judged},
              {"passed", v.passed},
              {"provisioned", v.provisioned},
              {"measured", std::isnan(v.measured) ? json() : json(v.measured)},
              {"spread", v.spread},
              {"delivered_percent", 100.0 * v.delivered},
              {"steady", v.steady},
              {"line", v.line}};
    if (v.quantity != Quantity::Latency) {
      m["burst"] = {{"found", v.burst.burst},
                    {"too_short", v.burst.too_short},
                    {"burst_rate", v.burst.burst_rate},
                    {"burst_s", v.burst.burst_s},
                    {"sustained_rate", v.burst.sustained_rate}};
    }
    m["run"] = to_json(p.report);
    j["metrics"].push_back(std::move(m));
  }
  j["not_run"] = json::array();
  for (size_t i = r.phases.size(); i < r.planned.size(); ++i) j["not_run"].push_back(r.planned[i]);
  return j;
}

std::string render_accept_html(const AcceptReport& r) {
  std::vector<HtmlRow> rows;
  std::vector<const RunReport*> runs;
  for (const auto& p : r.phases) {
    rows.push_back({{p.verdict.name, mark(p.verdict), p.verdict.line, p.phase.how},
                    p.verdict.judged && !p.verdict.passed});
    runs.push_back(&p.report);
  }
  for (size_t i = r.phases.size(); i < r.planned.size(); ++i)
    rows.push_back({{r.planned[i], "NOT RUN", r.ended, ""}, true});
  return render_html_runs("diskprobe accept " + r.device + " as " + r.volume,
                          {"metric", "verdict", "figures", "how"}, rows, runs);
}

std::string render_accept_openmetrics(const AcceptReport& r) {
  std::vector<LabelledRun> runs;
  for (const auto& p : r.phases) runs.push_back({&p.report, {{"phase", p.verdict.name}}});
  std::string out = runs.empty() ? "" : render_openmetrics(runs);
  auto slash = r.device.rfind('/');
  const MetricLabels base = {{"device", slash == std::string::npos ? r.device : r.device.substr(slash + 1)},
                             {"volume", r.volume}};
  std::vector<GaugeSample> delivered, passed;
  for (const auto& p : r.phases) {
    if (!p.verdict.judged) continue;
    MetricLabels l = base;
    l.emplace_back("metric", p.verdict.name);
    delivered.push_back({l, p.verdict.delivered});
    passed.push_back({l, p.verdict.passed ? 1.0 : 0.0});
  }
  if (!delivered.empty()) {
    out += render_gauge("diskprobe_accept_delivered_ratio",
                        "The share of the volume's provisioned figure the metric delivered (latency: provisioned / measured).",
                        delivered);
    out += render_gauge("diskprobe_accept_metric_passed", "1 when the metric was within the tolerance, 0 when not.",
                        passed);
  }
  out += render_gauge("diskprobe_accept_passed", "1 when every phase ran and every judged metric passed.",
                      {{base, r.passed() ? 1.0 : 0.0}});
  return out;
}

nlohmann::json accept_fio_json(const AcceptReport& r, bool plus) {
  std::vector<const RunReport*> runs;
  for (const auto& p : r.phases) runs.push_back(&p.report);
  nlohmann::json verdicts = accept_json(r);
  for (auto& m : verdicts["metrics"]) m.erase("run");  // each phase's facts are under "runs"
  nlohmann::json j = runs.empty() ? nlohmann::json{{"jobs", nlohmann::json::array()}, {"diskprobe", nlohmann::json::object()}}
                                  : to_fio_json(runs, plus);
  j["diskprobe"]["accept"] = std::move(verdicts);
  return j;
}

}  // namespace diskprobe
