// One self-contained HTML page for a run: summary, per-second IOPS and bandwidth, latency
// CDF and percentiles per direction, the preflight verdict and the tuning applied. Charts are
// inline SVG drawn here; the page loads nothing and runs no script.
#pragma once

#include <string>
#include <vector>

#include "diskprobe/report/run_report.h"

namespace diskprobe {

std::string render_html(const RunReport& r);

// Several runs on one page (accept's phases): a table of verdicts, then each run as
// render_html shows it, in a <section id="phase-N">.
struct HtmlRow {
  std::vector<std::string> cells;  // plain text: escaped here
  bool failed = false;
};
std::string render_html_runs(const std::string& title, const std::vector<std::string>& header,
                             const std::vector<HtmlRow>& rows, const std::vector<const RunReport*>& runs);

}  // namespace diskprobe
