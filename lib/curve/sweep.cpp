#include "diskprobe/curve/sweep.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>

namespace diskprobe::curve {

namespace {

bool is_rate(const Point& p) { return p.load.rate_iops > 0; }

// Did the move from a to b bend the curve (KneeRule)?
bool bends(const Point& a, const Point& b, const KneeRule& rule) {
  if (a.iops <= 0 || a.mean_ns <= 0 || b.iops <= 0 || b.mean_ns <= 0) return false;
  double latency_growth = b.mean_ns / a.mean_ns - 1;
  if (latency_growth <= rule.min_latency_growth) return false;
  double gain = b.iops / a.iops - 1;
  if (gain < rule.min_iops_gain) return true;
  return std::log(b.mean_ns / a.mean_ns) / std::log(b.iops / a.iops) > rule.max_elasticity;
}

std::vector<Point> of_kind(const std::vector<Point>& points, bool rate) {
  std::vector<Point> v;
  std::copy_if(points.begin(), points.end(), std::back_inserter(v),
               [&](const Point& p) { return is_rate(p) == rate; });
  return v;
}

// Past the knee by steps_past_knee steps: the series has shown its wall.
bool done_past_knee(const Options& o, const std::vector<Point>& series) {
  auto knee = find_knee(series, o.knee);
  return knee && series.size() - 1 >= *knee + o.steps_past_knee;
}

std::optional<Load> next_depth(const Options& o, const std::vector<Point>& qd) {
  if (qd.empty()) return Load{1, 0, 0};
  if (done_past_knee(o, qd)) return std::nullopt;
  uint32_t last = qd.back().load.iodepth;
  if (last >= o.max_iodepth) return std::nullopt;
  return Load{std::min(last * 2, o.max_iodepth), 0, 0};
}

}  // namespace

std::optional<size_t> find_knee(const std::vector<Point>& points, const KneeRule& rule) {
  double best = points.empty() ? 0 : points[0].iops;  // before the candidate
  for (size_t i = 1; i < points.size(); ++i) {
    if (bends(points[i - 1], points[i], rule)) {
      double wall = std::max(best, points[i].iops) * (1 + rule.recovery);
      bool wall_like = points[i].iops < points[i - 1].iops * (1 + rule.min_iops_gain);
      bool recovered = wall_like && std::any_of(points.begin() + static_cast<std::ptrdiff_t>(i) + 1,
                                                points.end(), [&](const Point& p) { return p.iops > wall; });
      if (!recovered) return i;
    }
    best = std::max(best, points[i].iops);
  }
  return std::nullopt;
}

std::vector<Point> main_series(const std::vector<Point>& points) {
  auto rate = of_kind(points, true);
  return rate.empty() ? of_kind(points, false) : rate;
}

std::optional<Load> next_load(const Options& o, const std::vector<Point>& done) {
  auto qd = of_kind(done, false);
  if (o.rate_fractions.empty()) return next_depth(o, qd);
  double max_iops = o.max_iops;
  uint32_t depth = o.rate_iodepth;
  if (max_iops <= 0) {
    // The queue-depth sweep first, to its end; its best step is the rate steps' 100%.
    if (auto step = next_depth(o, qd); step && of_kind(done, true).empty()) return step;
    auto best = std::max_element(qd.begin(), qd.end(),
                                 [](const Point& a, const Point& b) { return a.iops < b.iops; });
    if (best == qd.end() || best->iops < 1) return std::nullopt;
    max_iops = best->iops;
    depth = best->load.iodepth;
  }
  auto rate = of_kind(done, true);
  if (rate.size() >= o.rate_fractions.size() || done_past_knee(o, rate)) return std::nullopt;
  double f = o.rate_fractions[rate.size()];
  return Load{depth, std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(max_iops * f))), f};
}

std::string why_ended(const Options& o, const std::vector<Point>& done) {
  auto series = main_series(done);
  if (auto knee = find_knee(series, o.knee)) {
    size_t past = series.size() - 1 - *knee;
    return past == 0 ? "at the knee"
                     : std::to_string(past) + (past == 1 ? " step" : " steps") + " past the knee";
  }
  if (!o.rate_fractions.empty() && !of_kind(done, true).empty()) return "after the last rate step";
  if (!o.rate_fractions.empty() && o.max_iops <= 0)
    return "with no IOPS measured to take the rate steps from";
  return "at --max-iodepth " + std::to_string(o.max_iodepth) + " without a knee";
}

JobSpec step_spec(const JobSpec& profile, const Load& load) {
  JobSpec s = profile;
  s.iodepth = load.iodepth;
  s.rate_iops[0] = s.rate_iops[1] = 0;
  if (load.rate_iops == 0) return s;
  // fio's rate_iops caps each job and each direction: the group's cap split over both.
  double reads = does_reads(s.rw) ? (does_writes(s.rw) ? s.rwmixread / 100.0 : 1.0) : 0.0;
  auto per_job = [&](double share) {
    double v = static_cast<double>(load.rate_iops) * share / std::max(1u, s.numjobs);
    return share > 0 ? std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(v))) : uint64_t{0};
  };
  s.rate_iops[0] = per_job(reads);
  s.rate_iops[1] = per_job(1 - reads);
  return s;
}

Point point_of(const Results& r, const Load& load) {
  Point p;
  p.load = load;
  double secs = r.runtime_s > 0 ? r.runtime_s : 1;
  p.iops = static_cast<double>(r.read.ios + r.write.ios) / secs;
  p.bw_bytes = static_cast<double>(r.read.bytes + r.write.bytes) / secs;
  Histogram clat = r.read.clat;
  clat.merge(r.write.clat);
  p.mean_ns = clat.mean();
  p.p50_ns = static_cast<double>(clat.percentile(50));
  p.p99_ns = static_cast<double>(clat.percentile(99));
  p.p999_ns = static_cast<double>(clat.percentile(99.9));
  p.steady = r.steadystate.attained;
  return p;
}

std::string step_name(const Load& load) {
  if (load.rate_iops == 0) return "QD " + std::to_string(load.iodepth);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%g%% (%llu IOPS, QD %u)", load.fraction * 100,
                static_cast<unsigned long long>(load.rate_iops), load.iodepth);
  return buf;
}

}  // namespace diskprobe::curve
