#include "diskprobe/report/html_report.h"
#include "diskprobe/report/report.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <vector>

#include "diskprobe/report/html_parts.h"

namespace diskprobe {

using namespace html;

namespace {

constexpr double kPercentiles[] = {1,  5,  10, 20, 30,   40,   50,    60,   70,
                                   80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99};
constexpr const char* kReadColor = "#1f77b4";
constexpr const char* kWriteColor = "#d62728";

// 1, 2, 5 x 10^k steps so that about five ticks span [0, max].
double nice_step(double max) {
  if (max <= 0) return 1;
  double raw = max / 5;
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * mag >= raw) return m * mag;
  }
  return 10 * mag;
}

struct Series {
  const char* name;
  const char* color;
  std::vector<double> values;  // one per second
};

// A line chart of per-second values; every point is a <circle> with its value in a <title>
// (the browser shows it on hover) and in data-* attributes.
void timeline_svg(std::string& o, const char* id, const char* title, const char* unit_label,
                  const std::vector<Series>& series, std::string (*label)(double)) {
  size_t n = 0;
  double vmax = 0;
  for (const auto& s : series) {
    n = std::max(n, s.values.size());
    for (double v : s.values) vmax = std::max(vmax, v);
  }
  appendf(o, "<figure><figcaption>%s</figcaption>\n", title);
  appendf(o,
          "<svg id=\"%s\" class=\"chart timeline\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f "
          "%.0f\" "
          "width=\"%.0f\" height=\"%.0f\" role=\"img\" aria-label=\"%s\">\n",
          id, kWidth, kHeight, kWidth, kHeight, title);
  if (n == 0) {
    appendf(o, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">no complete second was measured</text>\n",
            kWidth / 2, kHeight / 2);
    o += "</svg></figure>\n";
    return;
  }
  double step = nice_step(vmax);
  double ymax = std::max(step, std::ceil(vmax / step) * step);
  double pw = kWidth - kLeft - kRight, ph = kHeight - kTop - kBottom;
  // Seconds 1..n across the width; one second alone sits in the middle.
  auto x = [&](size_t i) {
    return n == 1 ? kLeft + pw / 2 : kLeft + pw * static_cast<double>(i) / static_cast<double>(n - 1);
  };
  auto y = [&](double v) { return kTop + ph * (1 - v / ymax); };
  for (double t = 0; t <= ymax + step / 2; t += step) {
    appendf(o, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", kLeft, y(t),
            kWidth - kRight, y(t));
    appendf(o, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", kLeft - 6,
            y(t) + 4, esc(label(t)).c_str());
  }
  size_t every = std::max<size_t>(1, n / 10);
  for (size_t i = 0; i < n; i += every) {
    appendf(o, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%zu</text>", x(i),
            kHeight - kBottom + 16, i + 1);
  }
  appendf(o, "\n<text class=\"axis\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">second of the run</text>",
          kLeft + pw / 2, kHeight - 6);
  appendf(o,
          "<text class=\"axis\" x=\"14\" y=\"%.1f\" transform=\"rotate(-90 14 %.1f)\" "
          "text-anchor=\"middle\">%s</text>\n",
          kTop + ph / 2, kTop + ph / 2, unit_label);
  appendf(o, "<line class=\"frame\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", kLeft, kTop + ph,
          kWidth - kRight, kTop + ph);
  double legend_x = kLeft + 10;
  for (const auto& s : series) {
    if (s.values.empty()) continue;
    std::string d;
    for (size_t i = 0; i < s.values.size(); ++i)
      appendf(d, "%s%.1f,%.1f", i ? " L" : "M", x(i), y(s.values[i]));
    appendf(o, "<path class=\"series\" data-series=\"%s\" d=\"%s\" stroke=\"%s\"/>\n", s.name, d.c_str(),
            s.color);
    for (size_t i = 0; i < s.values.size(); ++i) {
      appendf(
          o,
          "<circle class=\"point\" data-series=\"%s\" data-second=\"%zu\" data-value=\"%.3f\" cx=\"%.1f\" "
          "cy=\"%.1f\" r=\"3\" fill=\"%s\"><title>%s, second %zu: %s</title></circle>\n",
          s.name, i + 1, s.values[i], x(i), y(s.values[i]), s.color, s.name, i + 1,
          esc(label(s.values[i])).c_str());
    }
    legend_entry(o, legend_x, s.color, s.name);
    legend_x += 90;
  }
  o += "</svg></figure>\n";
}

// The cumulative share of I/Os completed within each latency, on a log latency axis: one step
// per histogram bucket that holds samples (bucket width <= 1/64 of its value).
void cdf_svg(std::string& o, const char* id, const char* name, const char* color, const Histogram& h) {
  appendf(o, "<figure><figcaption>%s: completion latency CDF (%llu I/Os)</figcaption>\n", name,
          static_cast<unsigned long long>(h.count()));
  appendf(o,
          "<svg id=\"%s\" class=\"chart cdf\" data-direction=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" "
          "viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" role=\"img\" aria-label=\"%s latency "
          "CDF\">\n",
          id, name, kWidth, kHeight, kWidth, kHeight, name);
  double lo = std::max<double>(1, static_cast<double>(h.min())),
         hi = std::max<double>(lo * 10, static_cast<double>(h.max()));
  double dlo = std::floor(std::log10(lo)), dhi = std::ceil(std::log10(hi));
  if (dhi <= dlo) dhi = dlo + 1;
  double pw = kWidth - kLeft - kRight, ph = kHeight - kTop - kBottom;
  auto x = [&](double ns) { return kLeft + pw * (std::log10(std::max(ns, 1.0)) - dlo) / (dhi - dlo); };
  auto y = [&](double frac) { return kTop + ph * (1 - frac); };
  for (double f = 0; f <= 1.0001; f += 0.25) {
    appendf(o, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", kLeft, y(f),
            kWidth - kRight, y(f));
    appendf(o, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.0f%%</text>\n", kLeft - 6,
            y(f) + 4, f * 100);
  }
  for (double d = dlo; d <= dhi; d += 1) {
    double ns = std::pow(10.0, d);
    appendf(o, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x(ns), kTop, x(ns),
            kTop + ph);
    appendf(o, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", x(ns),
            kHeight - kBottom + 16, esc(latency(ns)).c_str());
  }
  appendf(o,
          "<text class=\"axis\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">completion latency (log "
          "scale)</text>",
          kLeft + pw / 2, kHeight - 6);
  appendf(o,
          "<text class=\"axis\" x=\"14\" y=\"%.1f\" transform=\"rotate(-90 14 %.1f)\" "
          "text-anchor=\"middle\">I/Os "
          "completed within</text>\n",
          kTop + ph / 2, kTop + ph / 2);
  std::string d;
  uint64_t cum = 0;
  const double total = static_cast<double>(h.count());
  size_t points = 0;
  appendf(d, "M%.1f,%.1f", x(lo), y(0));
  for (size_t i = 0; i < Histogram::kBuckets; ++i) {
    uint64_t c = h.bucket(i);
    if (c == 0) continue;
    double edge = static_cast<double>(std::clamp<uint64_t>(Histogram::midpoint_of(i), h.min(), h.max()));
    appendf(d, " L%.1f,%.1f", x(edge), y(static_cast<double>(cum) / total));
    cum += c;
    appendf(d, " L%.1f,%.1f", x(edge), y(static_cast<double>(cum) / total));
    ++points;
  }
  appendf(o, "<path class=\"cdf-line\" data-buckets=\"%zu\" d=\"%s\" stroke=\"%s\"/>\n", points, d.c_str(),
          color);
  for (double p : {50.0, 99.0, 99.9}) {
    double v = static_cast<double>(h.percentile(p));
    appendf(o,
            "<circle class=\"percentile\" data-percentile=\"%g\" data-ns=\"%.0f\" cx=\"%.1f\" cy=\"%.1f\" "
            "r=\"4\" "
            "fill=\"%s\"><title>p%g: %s</title></circle>",
            p, v, x(v), y(p / 100), color, p, esc(latency(v)).c_str());
    // p99.9 sits just above p99 on the curve: its label goes above the point, the others below.
    double dy = p > 99.5 ? -8 : 14;
    appendf(o, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\">p%g %s</text>\n", x(v) + 6, y(p / 100) + dy, p,
            esc(latency(v)).c_str());
  }
  o += "</svg></figure>\n";
}

void percentile_table(std::string& o, const char* name, const DirectionStats& d) {
  appendf(o, "<table class=\"percentiles\" data-direction=\"%s\"><caption>%s latency percentiles</caption>\n",
          name, name);
  o += "<tr><th>percentile</th><th>completion (clat)</th><th>total (lat)</th></tr>\n";
  for (double p : kPercentiles) {
    appendf(o, "<tr><td>%g%%</td><td>%s</td><td>%s</td></tr>\n", p,
            esc(latency(static_cast<double>(d.clat.percentile(p)))).c_str(),
            esc(latency(static_cast<double>(d.lat.percentile(p)))).c_str());
  }
  appendf(o, "<tr><td>mean</td><td>%s</td><td>%s</td></tr>\n", esc(latency(d.clat.mean())).c_str(),
          esc(latency(d.lat.mean())).c_str());
  appendf(o, "<tr><td>max</td><td>%s</td><td>%s</td></tr>\n</table>\n",
          esc(latency(static_cast<double>(d.clat.max()))).c_str(),
          esc(latency(static_cast<double>(d.lat.max()))).c_str());
}

// Whole seconds only, as the text report (its kWholeSecondSlack: the window runs from a
// completion to a completion): a partial last second would look like a drop.
std::vector<double> per_second(const DirectionStats& d, double runtime_s, double scale) {
  auto n = std::min(d.ios_per_second.size(), static_cast<size_t>(std::floor(runtime_s + 0.01)));
  std::vector<double> v;
  for (size_t i = 0; i < n; ++i) v.push_back(static_cast<double>(d.ios_per_second[i]) * scale);
  return v;
}

struct Direction {
  const char* name;
  const char* color;
  const DirectionStats* d;
};
std::array<Direction, 2> directions(const Results& r) {
  return {Direction{"read", kReadColor, &r.read}, Direction{"write", kWriteColor, &r.write}};
}

std::string iops_label(double v) { return iops_text(v); }
std::string mib_label(double v) { return num(v, v == 0 || v >= 10 ? "%.0f" : "%.1f") + " MiB/s"; }


// The page around a body (html_parts' head: no network, the style inline).
std::string page(const std::string& title, const std::string& body) {
  std::string o = page_head(title);
  o += body;
  o += "<p style=\"color:#888;font-size:.85em\">written by diskprobe</p>\n</body></html>\n";
  return o;
}

// One run's sections, from its heading to its notes.
std::string run_sections(const RunReport& rep) {
  const Results& r = rep.results;
  const JobSpec& s = rep.spec;
  std::string o;
  appendf(o, "<h1>diskprobe: %s on %s</h1>\n", esc(s.name).c_str(), esc(rep.device).c_str());
  appendf(o, "<p>started %s, measured for %.2f s%s</p>\n", esc(r.started_at).c_str(), r.runtime_s,
          r.interrupted ? " &mdash; <b>interrupted</b>: stopped early by a signal" : "");

  o += "<h2>Summary</h2>\n<table id=\"summary\">\n";
  appendf(o, "<tr><th>workload</th><td>rw=%s bs=%u iodepth=%u numjobs=%u engine=%s direct=%d</td></tr>\n",
          std::string(to_string(s.rw)).c_str(), s.bs, s.iodepth, s.numjobs,
          std::string(to_string(s.engine)).c_str(), s.direct ? 1 : 0);
  if (!s.description.empty())
    appendf(o, "<tr><th>profile</th><td>%s</td></tr>\n", esc(s.description).c_str());
  if (std::string steady = steadystate_line(rep); !steady.empty()) {
    appendf(o, "<tr id=\"steadystate\" data-attained=\"%d\"><th>steady state</th><td>%s</td></tr>\n",
            r.steadystate.attained ? 1 : 0, esc(steady).c_str());
  }
  o += "</table>\n<table id=\"results\"><tr><th>direction</th><th>IOPS</th><th>bandwidth</th><th>mean</th>"
       "<th>p50</th><th>p99</th><th>p99.9</th><th>max</th><th>I/Os</th></tr>\n";
  for (const auto& [name, d] :
       {std::pair<const char*, const DirectionStats*>{"read", &r.read}, {"write", &r.write}}) {
    if (d->ios == 0) continue;
    double secs = r.runtime_s > 0 ? r.runtime_s : 1;
    appendf(
        o,
        "<tr "
        "data-direction=\"%s\"><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td>"
        "<td>%s</td><td>%llu</td></tr>\n",
        name, name, iops_text(static_cast<double>(d->ios) / secs).c_str(),
        esc(bandwidth(static_cast<double>(d->bytes) / secs)).c_str(), esc(latency(d->clat.mean())).c_str(),
        esc(latency(static_cast<double>(d->clat.percentile(50)))).c_str(),
        esc(latency(static_cast<double>(d->clat.percentile(99)))).c_str(),
        esc(latency(static_cast<double>(d->clat.percentile(99.9)))).c_str(),
        esc(latency(static_cast<double>(d->clat.max()))).c_str(), static_cast<unsigned long long>(d->ios));
  }
  o += "</table>\n";
  if (r.errors.count || r.errors.short_ios) {
    appendf(o, "<p class=\"refused\">%llu I/O errors, %llu short I/Os</p>\n",
            static_cast<unsigned long long>(r.errors.count),
            static_cast<unsigned long long>(r.errors.short_ios));
  }

  o += "<h2>Per second</h2>\n";
  std::vector<Series> iops, bw;
  for (const auto& [name, color, d] : directions(r)) {
    if (d->ios == 0) continue;
    // Each direction's own block size (bs=4k,16k writes 16 KiB), as the text and JSON reports.
    const uint32_t spec_bs = d == &r.write ? s.write_bs() : s.bs;
    const double mib_per_io = static_cast<double>(d->bs ? d->bs : spec_bs) / (1024.0 * 1024.0);
    iops.push_back({name, color, per_second(*d, r.runtime_s, 1.0)});
    bw.push_back({name, color, per_second(*d, r.runtime_s, mib_per_io)});
  }
  timeline_svg(o, "iops-timeline", "IOPS per second", "IOPS", iops, iops_label);
  timeline_svg(o, "bw-timeline", "Bandwidth per second", "MiB/s", bw, mib_label);

  o += "<h2>Latency</h2>\n";
  for (const auto& [name, color, d] : directions(r)) {
    if (d->ios == 0) continue;
    cdf_svg(o, name[0] == 'r' ? "cdf-read" : "cdf-write", name, color, d->clat);
  }
  o += "<div class=\"tables\">\n";
  if (r.read.ios) percentile_table(o, "read", r.read);
  if (r.write.ios) percentile_table(o, "write", r.write);
  o += "</div>\n";

  o += "<h2>Preflight</h2>\n";
  bool safe = rep.preflight == "safe" || rep.preflight.rfind("safe", 0) == 0;
  appendf(o, "<p id=\"preflight\" class=\"%s\">%s</p>\n", safe ? "safe" : "refused",
          esc(rep.preflight.empty() ? "not recorded" : rep.preflight).c_str());

  o += "<h2>Tuning applied</h2>\n";
  if (rep.tuning.empty()) {
    o += "<p id=\"tuning\">none: the host was left as it was</p>\n";
  } else {
    o += "<table id=\"tuning\"><tr><th>setting</th><th>before</th><th>during the run</th></tr>\n";
    for (const auto& t : rep.tuning) {
      appendf(o, "<tr><td>%s</td><td>%s</td><td>%s</td></tr>\n", esc(t.what).c_str(),
              esc(t.old_value).c_str(), esc(t.new_value).c_str());
    }
    o += "</table>\n<p>every setting was restored when the run ended</p>\n";
  }
  if (!rep.notes.empty()) {
    o += "<h2>Notes</h2>\n<ul>\n";
    for (const auto& n : rep.notes) o += "<li>" + esc(n) + "</li>\n";
    o += "</ul>\n";
  }
  return o;
}

}  // namespace

std::string render_html(const RunReport& rep) {
  return page("diskprobe: " + rep.spec.name + " on " + rep.device, run_sections(rep));
}

std::string render_html_runs(const std::string& title, const std::vector<std::string>& header,
                             const std::vector<HtmlRow>& rows, const std::vector<const RunReport*>& runs) {
  std::string o;
  appendf(o, "<h1>%s</h1>\n<table id=\"verdicts\"><tr>", esc(title).c_str());
  for (const auto& h : header) o += "<th>" + esc(h) + "</th>";
  o += "</tr>\n";
  for (const auto& row : rows) {
    o += row.failed ? "<tr class=\"refused\">" : "<tr>";
    for (const auto& c : row.cells) o += "<td>" + esc(c) + "</td>";
    o += "</tr>\n";
  }
  o += "</table>\n";
  for (size_t i = 0; i < runs.size(); ++i) {
    appendf(o, "<section id=\"phase-%zu\">\n", i + 1);
    o += run_sections(*runs[i]);
    o += "</section>\n";
  }
  return page(title, o);
}

}  // namespace diskprobe
