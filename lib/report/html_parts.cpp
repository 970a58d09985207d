#include "diskprobe/report/html_parts.h"

#include <cstdarg>
#include <cstdio>

#include "diskprobe/base/json_io.h"

namespace diskprobe::html {

namespace {

constexpr const char* kStyle = R"(
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:1000px;color:#222}
h1{font-size:1.5em;margin-bottom:4px}h2{font-size:1.15em;margin-top:28px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 10px;text-align:right}
th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}caption{text-align:left;font-weight:600;padding:4px 0}
figure{margin:12px 0}figcaption{font-weight:600;margin-bottom:4px}
svg.chart{background:#fcfcfc;border:1px solid #e4e4e4}
.grid{stroke:#e6e6e6;stroke-width:1}.frame{stroke:#888}.tick{font-size:11px;fill:#555}
.axis{font-size:12px;fill:#333}.legend{font-size:12px;fill:#222}
.series,.cdf-line{fill:none;stroke-width:2}
.safe{color:#1a7f37;font-weight:600}.refused{color:#c62828;font-weight:600}
.tables{display:flex;gap:24px;flex-wrap:wrap}#summary td{text-align:left}
)";

}  // namespace

void appendf(std::string& out, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  va_list again;
  va_copy(again, ap);
  int n = std::vsnprintf(nullptr, 0, fmt, ap);
  va_end(ap);
  if (n > 0) {
    size_t at = out.size();
    out.resize(at + static_cast<size_t>(n) + 1);
    std::vsnprintf(out.data() + at, static_cast<size_t>(n) + 1, fmt, again);
    out.resize(at + static_cast<size_t>(n));
  }
  va_end(again);
}

std::string esc(const std::string& raw) {
  std::string s = valid_utf8(raw);
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      case '\'':
        o += "&#39;";
        break;
      default:
        o += c;
    }
  }
  return o;
}

std::string num(double v, const char* f) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string latency(double ns) {
  if (ns >= 1e9) return num(ns / 1e9, "%.2f") + " s";
  if (ns >= 1e6) return num(ns / 1e6, "%.2f") + " ms";
  if (ns >= 1e3) return num(ns / 1e3, "%.1f") + " µs";
  return num(ns, "%.0f") + " ns";
}

std::string iops_text(double v) {
  if (v >= 1e6) return num(v / 1e6, "%.2f") + "M";
  if (v >= 1e4) return num(v / 1e3, "%.1f") + "k";
  return num(v, "%.0f");
}

std::string bandwidth(double bytes_per_s) {
  double mib = bytes_per_s / (1024.0 * 1024.0);
  if (mib >= 1024) return num(mib / 1024.0, "%.2f") + " GiB/s";
  if (mib >= 1) return num(mib, "%.1f") + " MiB/s";
  return num(bytes_per_s / 1024.0, "%.1f") + " KiB/s";
}

std::string page_head(const std::string& title) {
  std::string o = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  // No network: the page may load nothing, whatever a string in it says.
  o += "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
       "'unsafe-inline'; img-src data:\">\n";
  appendf(o, "<title>%s</title>\n<style>%s</style></head><body>\n", esc(title).c_str(), kStyle);
  return o;
}

void legend_entry(std::string& out, double x, const char* color, const char* name) {
  appendf(out,
          "<rect x=\"%.1f\" y=\"8\" width=\"12\" height=\"12\" fill=\"%s\"/><text class=\"legend\" x=\"%.1f\" "
          "y=\"18\">%s</text>\n",
          x, color, x + 16, name);
}

}  // namespace diskprobe::html
