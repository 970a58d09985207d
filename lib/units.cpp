#include "diskprobe/core/units.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>

#include "diskprobe/core/json_io.h"

namespace diskprobe {

Result<uint64_t> parse_size(std::string_view text) {
  std::string t(text);
  if (t.empty()) return make_error("empty size: give a number with an optional unit, like 1G or 512M");
  size_t i = 0;
  uint64_t value = 0;
  while (i < t.size() && t[i] >= '0' && t[i] <= '9') {
    uint64_t d = static_cast<uint64_t>(t[i] - '0');
    if (value > (UINT64_MAX - d) / 10) return make_error("size '" + excerpt(t) + "' is too large");
    value = value * 10 + d;
    ++i;
  }
  if (i == 0)
    return make_error("bad size '" + excerpt(t) + "': give a number with an optional unit, like 1G or 512M");
  std::string unit = t.substr(i);
  // fio's default kb_base=1024: k, M, G are binary; "KiB", "MB" and "m" are accepted alike.
  int shift = -1;
  if (unit.empty() || unit == "b" || unit == "B") {
    shift = 0;
  } else {
    char u = static_cast<char>(std::tolower(static_cast<unsigned char>(unit[0])));
    std::string rest = unit.substr(1);
    bool suffix_ok = rest.empty() || rest == "i" || rest == "iB" || rest == "ib" || rest == "B" || rest == "b";
    if (suffix_ok) {
      switch (u) {
        case 'k': shift = 10; break;
        case 'm': shift = 20; break;
        case 'g': shift = 30; break;
        case 't': shift = 40; break;
        case 'p': shift = 50; break;
        default: break;
      }
    }
  }
  if (shift < 0) return make_error("bad size unit in '" + excerpt(t) + "': use k, M, G or T (binary, as fio)");
  if (shift > 0 && value > (UINT64_MAX >> shift)) return make_error("size '" + excerpt(t) + "' is too large");
  return value << shift;
}

std::optional<double> parse_decimal(std::string_view text) {
  size_t digits = 0, points = 0;
  for (char c : text) {
    if (c >= '0' && c <= '9') {
      ++digits;
    } else if (c == '.') {
      ++points;
    } else {
      return std::nullopt;
    }
  }
  if (digits == 0 || points > 1 || text.front() == '.' || text.back() == '.') return std::nullopt;
  std::string s(text);
  double v = std::strtod(s.c_str(), nullptr);
  if (!std::isfinite(v)) return std::nullopt;  // 400 digits overflow to inf
  return v;
}

std::optional<double> parse_seconds(std::string_view text) {
  size_t end = text.find_first_not_of("0123456789.");
  auto v = parse_decimal(text.substr(0, end));
  if (!v) return std::nullopt;
  std::string_view unit = end == std::string_view::npos ? std::string_view{} : text.substr(end);
  if (unit.empty() || unit == "s") return *v;
  if (unit == "ms") return *v / 1e3;
  if (unit == "us") return *v / 1e6;
  if (unit == "m") return *v * 60.0;
  if (unit == "h") return *v * 3600.0;
  return std::nullopt;
}

std::optional<double> parse_percent(std::string_view text, bool percent_sign) {
  bool has_sign = !text.empty() && text.back() == '%';
  if (percent_sign && !has_sign) return std::nullopt;
  return parse_decimal(has_sign ? text.substr(0, text.size() - 1) : text);
}

}  // namespace diskprobe
