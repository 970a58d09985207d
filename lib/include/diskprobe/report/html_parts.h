// What every HTML page diskprobe writes shares: escaping, number and unit formats, the style
// sheet and the chart frame (run reports, curve reports).
#pragma once

#include <string>

namespace diskprobe::html {

__attribute__((format(printf, 2, 3))) void appendf(std::string& out, const char* fmt, ...);
std::string esc(const std::string& raw);  // for text and attribute values; non-UTF-8 becomes U+FFFD
std::string num(double v, const char* f = "%.1f");
std::string latency(double ns);             // "1.25 ms"
std::string iops_text(double v);            // "12.5k"
std::string bandwidth(double bytes_per_s);  // "98.4 MiB/s"
// <!DOCTYPE ...> to <body>: the charset, a policy that loads nothing, the title, the style.
std::string page_head(const std::string& title);
// A chart's legend entry at x: a colour swatch and the series' name.
void legend_entry(std::string& out, double x, const char* color, const char* name);

// Chart geometry, in SVG user units.
constexpr double kWidth = 960, kHeight = 280;
constexpr double kLeft = 70, kRight = 30, kTop = 30, kBottom = 45;

}  // namespace diskprobe::html
