// One self-contained HTML page for a run: summary, per-second IOPS and bandwidth, latency
// CDF and percentiles per direction, the preflight verdict and the tuning applied. Charts are
// inline SVG drawn here; the page loads nothing and runs no script.
#pragma once

#include <string>

#include "diskprobe/report/run_report.h"

namespace diskprobe {

std::string render_html(const RunReport& r);

}  // namespace diskprobe
