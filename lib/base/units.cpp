#include "diskprobe/base/units.h"

#include <algorithm>
#include <bitset>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>

#include "diskprobe/base/json_io.h"

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

namespace {

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::optional<int> cpu_number(std::string_view s) {
  if (s.empty() || s.size() > 5 || s.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  int n = std::stoi(std::string(s));
  if (n >= kMaxCpus) return std::nullopt;
  return n;
}

}  // namespace

Result<std::vector<int>> parse_cpu_list(std::string_view text) {
  std::string_view s = trimmed(text);
  std::vector<int> cpus;
  if (s.empty()) return cpus;
  auto bad = [&](const std::string& why) {
    return make_error("malformed CPU list '" + excerpt(s) + "': " + why);
  };
  std::bitset<kMaxCpus> set;
  size_t entries = 0;
  for (;;) {
    if (++entries > static_cast<size_t>(kMaxCpus)) {
      return bad("more than " + std::to_string(kMaxCpus) + " entries, more than there can be CPUs");
    }
    size_t comma = s.find(',');
    std::string_view entry = trimmed(s.substr(0, comma));
    if (entry.empty()) return bad("an empty entry");
    size_t dash = entry.find('-');
    auto lo = cpu_number(trimmed(entry.substr(0, dash)));
    auto hi = dash == std::string_view::npos ? lo : cpu_number(trimmed(entry.substr(dash + 1)));
    if (!lo || !hi) {
      return bad("'" + excerpt(entry) + "' is not a CPU number or range from 0 to " + std::to_string(kMaxCpus - 1));
    }
    if (*lo > *hi) return bad("the range '" + excerpt(entry) + "' runs backwards");
    for (int c = *lo; c <= *hi; ++c) set.set(static_cast<size_t>(c));
    if (comma == std::string_view::npos) break;
    s = s.substr(comma + 1);
  }
  for (int c = 0; c < kMaxCpus; ++c) {
    if (set.test(static_cast<size_t>(c))) cpus.push_back(c);
  }
  return cpus;
}

std::string fio_size_text(uint64_t bytes) {
  const char* units[] = {"", "k", "m", "g", "t"};
  int u = 0;
  while (u < 4 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++u;
  }
  return std::to_string(bytes) + units[u];
}

std::string format_cpu_list(const std::vector<int>& cpus_in) {
  std::vector<int> cpus = cpus_in;
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  std::string out;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(cpus[i]);
    if (j > i) out += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace diskprobe
