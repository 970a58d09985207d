#include "diskprobe/acceptance/expect.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "diskprobe/base/json_io.h"
#include "diskprobe/stats/results.h"
#include "diskprobe/base/units.h"

namespace diskprobe {

namespace {

struct Unit {
  std::string_view name;
  double factor;
};

// Bandwidth: IEC (1024) and SI (1000) prefixes, fio's own spelling; "/s" may be left out.
constexpr Unit kBandwidthUnits[] = {
    {"B/s", 1},       {"KiB/s", 1024.0}, {"MiB/s", 1048576.0}, {"GiB/s", 1073741824.0},
    {"KB/s", 1000.0}, {"kB/s", 1000.0},  {"MB/s", 1e6},        {"GB/s", 1e9},
    {"B", 1},         {"KiB", 1024.0},   {"MiB", 1048576.0},   {"GiB", 1073741824.0},
    {"KB", 1000.0},   {"kB", 1000.0},    {"MB", 1e6},          {"GB", 1e9},
};
constexpr Unit kLatencyUnits[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
constexpr Unit kIopsUnits[] = {{"", 1}, {"k", 1e3}, {"M", 1e6}};

constexpr std::string_view kBandwidthHelp = "B/s, KiB/s, MiB/s, GiB/s, KB/s, MB/s or GB/s";
constexpr std::string_view kLatencyHelp = "ns, us, ms or s";
// Far longer than any real one ("read.clat.p99.9999<=1.5ms"); keeps its error one short line.
constexpr size_t kMaxExpressionBytes = 128;

std::string bad(std::string_view text, size_t column, const std::string& why) {
  // One line: the expression with the bad part marked, then what to write instead.
  std::string marked(text.substr(0, column));
  marked += ">>";
  marked += text.substr(column);
  return "--expect '" + std::string(text) + "': " + why + " (at column " + std::to_string(column + 1) + ": " +
         marked + ")";
}

bool parse_percentile(std::string_view s, double* out) {
  auto v = parse_decimal(s);
  if (!v || !(*v > 0) || *v > 100) return false;
  *out = *v;
  return true;
}

std::vector<std::string_view> split_dots(std::string_view s) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == '.') {
      parts.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

// metric := [read.|write.](iops | bw | (lat|clat|slat).(mean|min|max|pNN[.N])) | errors
std::string parse_metric(std::string_view text, std::string_view m, Expectation& e) {
  auto parts = split_dots(m);
  // Percentiles like p99.9 were split at their dot: join them back.
  if (parts.size() >= 2) {
    std::string_view prev = parts[parts.size() - 2];
    std::string_view last = parts.back();
    if (prev.size() > 1 && prev[0] == 'p' && !last.empty() &&
        last.find_first_not_of("0123456789") == std::string_view::npos) {
      parts.pop_back();
      parts.back() = std::string_view(prev.data(), prev.size() + 1 + last.size());
    }
  }
  size_t i = 0;
  size_t column = 0;
  auto col_of = [&](size_t idx) { return static_cast<size_t>(parts[idx].data() - text.data()); };
  if (parts.size() > 1 && (parts[0] == "read" || parts[0] == "write")) {
    e.direction = parts[0] == "read" ? 0 : 1;
    ++i;
  }
  if (i >= parts.size())
    return bad(text, m.size(), "a metric needs a name after the direction: iops, bw, lat.p99");
  column = col_of(i);
  std::string_view name = parts[i];
  size_t rest = parts.size() - i - 1;
  if (name == "iops" || name == "bw") {
    if (rest) return bad(text, col_of(i + 1), std::string(name) + " takes no further part");
    e.quantity = name == "iops" ? Quantity::Iops : Quantity::Bandwidth;
  } else if (name == "errors") {
    if (e.direction >= 0)
      return bad(text, 0, "errors are counted for the whole run: write errors, not read.errors");
    if (rest) return bad(text, col_of(i + 1), "errors takes no further part");
    e.quantity = Quantity::Errors;
  } else if (name == "lat" || name == "clat" || name == "slat") {
    if (rest != 1) {
      return bad(
          text, column + name.size(),
          std::string(name) + " needs one statistic: " + std::string(name) + ".mean, .min, .max or .p99");
    }
    e.quantity = Quantity::Latency;
    e.latency = std::string(name);
    std::string_view stat = parts[i + 1];
    if (stat == "mean" || stat == "min" || stat == "max") {
      e.stat = std::string(stat);
    } else if (stat.size() > 1 && stat[0] == 'p' && parse_percentile(stat.substr(1), &e.percentile)) {
      e.stat = std::string(stat);
    } else {
      return bad(text, col_of(i + 1),
                 "unknown latency statistic '" + std::string(stat) +
                     "': use mean, min, max or pNN like p99 or p99.9");
    }
  } else {
    return bad(
        text, column,
        "unknown metric '" + std::string(name) +
            "': use iops, bw, lat.p99 (or clat/slat, .mean/.min/.max/.pNN), errors; prefix read. or write.");
  }
  e.metric = std::string(m);
  return {};
}

template <size_t N>
const Unit* find_unit(const Unit (&units)[N], std::string_view s) {
  for (const auto& u : units) {
    if (u.name == s) return &u;
  }
  return nullptr;
}

}  // namespace

std::string_view to_string(Compare c) {
  switch (c) {
    case Compare::Ge:
      return ">=";
    case Compare::Le:
      return "<=";
    case Compare::Gt:
      return ">";
    case Compare::Lt:
      return "<";
    case Compare::Eq:
      return "==";
  }
  return "?";
}

Result<Expectation> parse_expectation(std::string_view text) {
  Expectation e;
  e.text = std::string(text);
  e.origin = "--expect";
  size_t op_at = text.find_first_of("<>=!");
  if (text.empty()) return make_error("--expect '': empty; write it like iops>=38000 or write.lat.p99<=2ms");
  if (text.size() > kMaxExpressionBytes) {
    return make_error("--expect '" + excerpt(text, 32) + "': longer than " +
                      std::to_string(kMaxExpressionBytes) +
                      " bytes; write it like iops>=38000 or write.lat.p99<=2ms");
  }
  if (op_at == std::string_view::npos) {
    return make_error(bad(text, text.size(), "no comparison: use >=, <=, >, < or =="));
  }
  if (op_at == 0)
    return make_error(
        bad(text, 0, "no metric before the comparison: start with iops, bw, lat.p99 or errors"));
  std::string_view metric = text.substr(0, op_at);
  if (auto why = parse_metric(text, metric, e); !why.empty()) return make_error(why);
  std::string_view rest = text.substr(op_at);
  size_t op_len = 0;
  if (rest.substr(0, 2) == ">=")
    e.op = Compare::Ge, op_len = 2;
  else if (rest.substr(0, 2) == "<=")
    e.op = Compare::Le, op_len = 2;
  else if (rest.substr(0, 2) == "==")
    e.op = Compare::Eq, op_len = 2;
  else if (rest[0] == '>' && (rest.size() < 2 || rest[1] != '='))
    e.op = Compare::Gt, op_len = 1;
  else if (rest[0] == '<' && (rest.size() < 2 || rest[1] != '='))
    e.op = Compare::Lt, op_len = 1;
  else
    return make_error(bad(text, op_at, "unknown comparison: use >=, <=, >, < or =="));
  size_t num_at = op_at + op_len;
  std::string_view value = text.substr(num_at);
  // The number: digits with at most one decimal point; no sign, no exponent, no spaces.
  size_t n = 0;
  bool dot = false;
  while (n < value.size() &&
         (std::isdigit(static_cast<unsigned char>(value[n])) || (value[n] == '.' && !dot))) {
    dot = dot || value[n] == '.';
    ++n;
  }
  if (n == 0 || value[0] == '.' || value[n - 1] == '.') {
    return make_error(bad(text, num_at, "expected a number after " + std::string(to_string(e.op))));
  }
  double number = std::strtod(std::string(value.substr(0, n)).c_str(), nullptr);
  std::string_view unit = value.substr(n);
  size_t unit_at = num_at + n;
  const Unit* u = nullptr;
  switch (e.quantity) {
    case Quantity::Iops:
      u = find_unit(kIopsUnits, unit);
      if (!u)
        return make_error(bad(
            text, unit_at, "unknown unit '" + std::string(unit) + "' for IOPS: use a plain number, k or M"));
      break;
    case Quantity::Bandwidth:
      if (unit.empty())
        return make_error(bad(text, unit_at, "bandwidth needs a unit: " + std::string(kBandwidthHelp)));
      u = find_unit(kBandwidthUnits, unit);
      if (!u)
        return make_error(bad(
            text, unit_at,
            "unknown unit '" + std::string(unit) + "' for bandwidth: use " + std::string(kBandwidthHelp)));
      break;
    case Quantity::Latency:
      if (unit.empty())
        return make_error(bad(text, unit_at, "latency needs a unit: " + std::string(kLatencyHelp)));
      u = find_unit(kLatencyUnits, unit);
      if (!u)
        return make_error(
            bad(text, unit_at,
                "unknown unit '" + std::string(unit) + "' for latency: use " + std::string(kLatencyHelp)));
      break;
    case Quantity::Errors:
      if (!unit.empty() || dot)
        return make_error(bad(text, unit_at - (dot ? n : 0), "errors is a whole number, with no unit"));
      break;
  }
  e.threshold = number * (u ? u->factor : 1.0);
  if (!std::isfinite(e.threshold)) return make_error(bad(text, num_at, "the number is out of range"));
  return e;
}

double measure(const Expectation& e, const Results& r) {
  auto dir_sum = [&](auto field) {
    double v = 0;
    if (e.direction != 1) v += static_cast<double>(field(r.read));
    if (e.direction != 0) v += static_cast<double>(field(r.write));
    return v;
  };
  double secs = r.runtime_s > 0 ? r.runtime_s : 0;
  switch (e.quantity) {
    case Quantity::Iops:
      return secs > 0 ? dir_sum([](const DirectionStats& d) { return d.ios; }) / secs : 0;
    case Quantity::Bandwidth:
      return secs > 0 ? dir_sum([](const DirectionStats& d) { return d.bytes; }) / secs : 0;
    case Quantity::Errors:
      return static_cast<double>(r.errors.count + r.errors.short_ios);
    case Quantity::Latency:
      break;
  }
  auto pick = [&](const DirectionStats& d) -> const Histogram& {
    return e.latency == "clat" ? d.clat : e.latency == "slat" ? d.slat : d.lat;
  };
  Histogram h;
  if (e.direction != 1) h.merge(pick(r.read));
  if (e.direction != 0) h.merge(pick(r.write));
  if (h.count() == 0) return NAN;  // nothing measured in that direction: never met
  if (e.stat == "mean") return h.mean();
  if (e.stat == "min") return static_cast<double>(h.min());
  if (e.stat == "max") return static_cast<double>(h.max());
  return static_cast<double>(h.percentile(e.percentile));
}

std::vector<ExpectationResult> check_expectations(const std::vector<Expectation>& expectations,
                                                  const Results& r) {
  std::vector<ExpectationResult> out;
  for (const auto& e : expectations) {
    ExpectationResult res{e, measure(e, r), false};
    double v = res.measured, t = e.threshold;
    if (!std::isnan(v)) {
      switch (e.op) {
        case Compare::Ge:
          res.met = v >= t;
          break;
        case Compare::Le:
          res.met = v <= t;
          break;
        case Compare::Gt:
          res.met = v > t;
          break;
        case Compare::Lt:
          res.met = v < t;
          break;
        case Compare::Eq:
          res.met = v == t;
          break;
      }
    }
    out.push_back(std::move(res));
  }
  return out;
}

std::string format_quantity(Quantity q, double v) {
  char buf[64];
  if (std::isnan(v)) return "nothing measured";
  switch (q) {
    case Quantity::Iops:
      if (v >= 1e6)
        std::snprintf(buf, sizeof buf, "%.2fM IOPS", v / 1e6);
      else if (v >= 1e4)
        std::snprintf(buf, sizeof buf, "%.1fk IOPS", v / 1e3);
      else
        std::snprintf(buf, sizeof buf, "%.0f IOPS", v);
      return buf;
    case Quantity::Bandwidth:
      if (v >= 1073741824.0)
        std::snprintf(buf, sizeof buf, "%.2f GiB/s", v / 1073741824.0);
      else if (v >= 1048576.0)
        std::snprintf(buf, sizeof buf, "%.1f MiB/s", v / 1048576.0);
      else
        std::snprintf(buf, sizeof buf, "%.1f KiB/s", v / 1024.0);
      return buf;
    case Quantity::Latency:
      if (v >= 1e9)
        std::snprintf(buf, sizeof buf, "%.2f s", v / 1e9);
      else if (v >= 1e6)
        std::snprintf(buf, sizeof buf, "%.2f ms", v / 1e6);
      else if (v >= 1e3)
        std::snprintf(buf, sizeof buf, "%.1f us", v / 1e3);
      else
        std::snprintf(buf, sizeof buf, "%.0f ns", v);
      return buf;
    case Quantity::Errors:
      std::snprintf(buf, sizeof buf, "%.0f", v);
      return buf;
  }
  return "?";
}

}  // namespace diskprobe
