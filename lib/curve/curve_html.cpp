// The curve as a page: IOPS across, completion latency up (log scale), one line per
// percentile, the knee marked; the steps' table under it. Inline SVG, no script.
#include <algorithm>
#include <cmath>

#include "diskprobe/curve/curve_report.h"
#include "diskprobe/report/html_parts.h"

namespace diskprobe::curve {

using namespace html;

namespace {

constexpr double kChartHeight = 440;  // taller than a run's timelines: the curve is the page

constexpr double kCurveLeft = 90;  // room for the latency ticks beside the axis label

// One line per percentile, and the mean dashed: the knee is judged on it.
struct Series {
  const char* name;
  const char* color;
  double Point::*ns;
  const char* dash;
};
constexpr Series kSeries[] = {{"p50", "#1f77b4", &Point::p50_ns, "none"},
                              {"p99", "#ff7f0e", &Point::p99_ns, "none"},
                              {"p99.9", "#d62728", &Point::p999_ns, "none"},
                              {"mean", "#555555", &Point::mean_ns, "5 4"}};

// A latency tick: "200 µs", "5 ms", "1 s" (decades and their 2x, 5x are whole).
std::string tick(double ns) {
  if (ns >= 1e9) return num(ns / 1e9, "%g") + " s";
  if (ns >= 1e6) return num(ns / 1e6, "%g") + " ms";
  if (ns >= 1e3) return num(ns / 1e3, "%g") + " µs";
  return num(ns, "%g") + " ns";
}

void curve_svg(std::string& o, const std::vector<Point>& pts, std::optional<size_t> knee) {
  const double w = kWidth, h = kChartHeight, pw = w - kCurveLeft - kRight, ph = h - kTop - kBottom;
  appendf(o,
          "<svg id=\"curve\" class=\"chart curve\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f "
          "%.0f\" "
          "width=\"%.0f\" height=\"%.0f\" role=\"img\" aria-label=\"latency against IOPS\">\n",
          w, h, w, h);
  double xmax = 0, lo = 1e18, hi = 0;
  for (const auto& p : pts) {
    xmax = std::max(xmax, p.iops);
    for (const auto& s : kSeries) {
      if (p.*s.ns > 0) lo = std::min(lo, p.*s.ns), hi = std::max(hi, p.*s.ns);
    }
  }
  if (pts.empty() || hi <= 0) {
    appendf(o, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">no step was measured</text>\n</svg>\n",
            w / 2, h / 2);
    return;
  }
  xmax *= 1.08;
  double dlo = std::floor(std::log10(lo)), dhi = std::ceil(std::log10(hi));
  if (dhi <= dlo) dhi = dlo + 1;
  auto x = [&](double iops) { return kCurveLeft + pw * iops / xmax; };
  auto y = [&](double ns) { return kTop + ph * (1 - (std::log10(std::max(ns, 1.0)) - dlo) / (dhi - dlo)); };
  // Decades, with 2x and 5x between them: the log scale reads as one.
  for (double d = dlo; d <= dhi; d += 1) {
    for (double m : {1.0, 2.0, 5.0}) {
      double ns = m * std::pow(10.0, d);
      if (std::log10(ns) > dhi + 1e-9) break;
      appendf(o, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", kCurveLeft, y(ns),
              w - kRight, y(ns));
      appendf(o, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", kCurveLeft - 6,
              y(ns) + 4, esc(tick(ns)).c_str());
    }
  }
  double step = std::pow(10.0, std::floor(std::log10(xmax / 5)));
  for (double m : {1.0, 2.0, 5.0}) {
    if (xmax / (step * m) <= 8) {
      step *= m;
      break;
    }
  }
  for (double t = 0; t <= xmax; t += step) {
    appendf(o, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x(t), kTop, x(t),
            kTop + ph);
    appendf(o, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", x(t),
            h - kBottom + 16, esc(iops_text(t)).c_str());
  }
  appendf(o, "<text class=\"axis\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">IOPS delivered</text>",
          kCurveLeft + pw / 2, h - 6);
  appendf(o,
          "<text class=\"axis\" x=\"14\" y=\"%.1f\" transform=\"rotate(-90 14 %.1f)\" "
          "text-anchor=\"middle\">completion latency (log scale)</text>\n",
          kTop + ph / 2, kTop + ph / 2);
  appendf(o, "<line class=\"frame\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", kCurveLeft,
          kTop + ph, w - kRight, kTop + ph);
  if (knee) {
    const Point& k = pts[*knee];
    appendf(o,
            "<g class=\"knee\" data-step=\"%zu\" data-iops=\"%.1f\" data-mean-ns=\"%.0f\"><line x1=\"%.1f\" "
            "y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\" stroke-dasharray=\"6 4\"/>"
            "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"9\" fill=\"none\" stroke=\"#222\" stroke-width=\"2\"/>"
            "<text class=\"legend\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">knee: %s, %s IOPS</text></g>\n",
            *knee, k.iops, k.mean_ns, x(k.iops), kTop, x(k.iops), kTop + ph, x(k.iops), y(k.mean_ns),
            x(k.iops) - 8, kTop + 14, esc(step_name(k.load)).c_str(), esc(iops_text(k.iops)).c_str());
  }
  double legend_x = kCurveLeft + 10;
  for (const auto& s : kSeries) {
    std::string d;
    for (size_t i = 0; i < pts.size(); ++i)
      appendf(d, "%s%.1f,%.1f", i ? " L" : "M", x(pts[i].iops), y(pts[i].*s.ns));
    appendf(o, "<path class=\"series\" data-series=\"%s\" d=\"%s\" stroke=\"%s\" stroke-dasharray=\"%s\"/>\n",
            s.name, d.c_str(), s.color, s.dash);
    for (size_t i = 0; i < pts.size(); ++i) {
      const Point& p = pts[i];
      appendf(
          o,
          "<circle class=\"point\" data-series=\"%s\" data-step=\"%zu\" data-iops=\"%.1f\" data-ns=\"%.0f\" "
          "cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"><title>%s: %s at %s IOPS</title></circle>\n",
          s.name, i, p.iops, p.*s.ns, x(p.iops), y(p.*s.ns), s.color, esc(step_name(p.load)).c_str(), s.name,
          esc(iops_text(p.iops)).c_str());
    }
    legend_entry(o, legend_x, s.color, s.name);
    legend_x += 80;
  }
  o += "</svg>\n";
}

}  // namespace

std::string render_html(const CurveReport& r) {
  const JobSpec& s = r.spec;
  std::string o = page_head("diskprobe curve: " + s.name + " on " + r.device);
  appendf(o, "<h1>diskprobe curve: %s on %s</h1>\n", esc(s.name).c_str(), esc(r.device).c_str());
  appendf(o, "<p>rw=%s bs=%u numjobs=%u engine=%s; preflight: %s</p>\n", std::string(to_string(s.rw)).c_str(),
          s.bs, s.numjobs, std::string(to_string(s.engine)).c_str(),
          esc(r.preflight.empty() ? "not recorded" : r.preflight).c_str());
  auto series = main_series(r.points);
  auto knee = find_knee(series, r.options.knee);
  o += "<h2>Latency against load</h2>\n<figure><figcaption>completion latency percentiles against IOPS, one "
       "point per step</figcaption>\n";
  curve_svg(o, series, knee);
  o += "</figure>\n";
  if (knee) {
    const Point& k = series[*knee];
    appendf(o,
            "<p id=\"knee\">knee at %s: %s IOPS, mean %s, p99 %s: the first step whose mean latency grew by "
            "more than %.0f%% for under %.0f%% more IOPS, or more than %g times as fast as IOPS</p>\n",
            esc(step_name(k.load)).c_str(), esc(iops_text(k.iops)).c_str(), esc(latency(k.mean_ns)).c_str(),
            esc(latency(k.p99_ns)).c_str(), r.options.knee.min_latency_growth * 100,
            r.options.knee.min_iops_gain * 100, r.options.knee.max_elasticity);
  } else {
    o += "<p id=\"knee\">no knee: latency grew no faster than IOPS over the steps run</p>\n";
  }
  if (!r.ended.empty()) appendf(o, "<p id=\"ended\">the sweep ended %s</p>\n", esc(r.ended).c_str());
  o += "<h2>Steps</h2>\n<table "
       "id=\"steps\"><tr><th>step</th><th>IOPS</th><th>bandwidth</th><th>mean</th><th>p50</th>"
       "<th>p99</th><th>p99.9</th><th>steady</th></tr>\n";
  for (const auto& p : r.points) {
    appendf(
        o,
        "<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
        esc(step_name(p.load)).c_str(), esc(iops_text(p.iops)).c_str(), esc(bandwidth(p.bw_bytes)).c_str(),
        esc(latency(p.mean_ns)).c_str(), esc(latency(p.p50_ns)).c_str(), esc(latency(p.p99_ns)).c_str(),
        esc(latency(p.p999_ns)).c_str(), p.steady ? "yes" : "no");
  }
  o += "</table>\n";
  if (!r.notes.empty()) {
    o += "<h2>Notes</h2>\n<ul>\n";
    for (const auto& n : r.notes) o += "<li>" + esc(n) + "</li>\n";
    o += "</ul>\n";
  }
  o += "<p style=\"color:#888;font-size:.85em\">written by diskprobe</p>\n</body></html>\n";
  return o;
}

}  // namespace diskprobe::curve
