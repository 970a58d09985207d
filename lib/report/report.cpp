#include "diskprobe/report/report.h"

#include "diskprobe/base/json_io.h"
#include "diskprobe/report/fio_json.h"
#include "diskprobe/report/openmetrics.h"
#include "diskprobe/report/report_keys.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <ctime>

namespace diskprobe {

namespace {

using nlohmann::json;

// fio's default percentile list.
constexpr double kPercentiles[] = {1,  5,  10, 20, 30,   40,   50,    60,   70,
                                   80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99};
// fio's latency distribution edges; each group is scaled by 1 (nsec), 10^3 (usec), 10^6 (msec).
constexpr uint64_t kLatEdges[] = {2, 4, 10, 20, 50, 100, 250, 500, 750, 1000};

__attribute__((format(printf, 2, 3))) void appendf(std::string& out, const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if (static_cast<size_t>(n) < sizeof buf) {
    out.append(buf, static_cast<size_t>(n));
    return;
  }
  std::string big(static_cast<size_t>(n) + 1, '\0');
  va_start(ap, fmt);
  std::vsnprintf(big.data(), big.size(), fmt, ap);
  va_end(ap);
  big.resize(static_cast<size_t>(n));
  out += big;
}

size_t digits(uint64_t v) {
  size_t d = 1;
  while (v >= 10) {
    v /= 10;
    ++d;
  }
  return d;
}

// fio's num2str: at most `maxlen` digits, then a k/M/G (or Ki/Mi/Gi) prefix; the digits left
// over after the integer part become decimals ("36.9k", "144MiB/s", "4325MiB").
std::string human(uint64_t num, size_t maxlen, bool pow2, const char* unit) {
  static const char* const si[] = {"", "k", "M", "G", "T", "P"};
  static const char* const iec[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi"};
  const uint64_t thousand = pow2 ? 1024 : 1000;
  size_t idx = 0;
  uint64_t modulo = 0;
  bool divided = false;
  while (digits(num) > maxlen && idx + 1 < std::size(si)) {
    modulo = num % thousand;
    num /= thousand;
    ++idx;
    divided = true;
  }
  const char* prefix = pow2 ? iec[idx] : si[idx];
  char buf[64];
  if (!divided) {
    std::snprintf(buf, sizeof buf, "%llu%s%s", static_cast<unsigned long long>(num), prefix, unit);
    return buf;
  }
  size_t room = maxlen > digits(num) ? maxlen - digits(num) : 0;
  if (room <= 1) {
    if (modulo >= thousand / 2) ++num;
    std::snprintf(buf, sizeof buf, "%llu%s%s", static_cast<unsigned long long>(num), prefix, unit);
    return buf;
  }
  int decimals = static_cast<int>(room - 1);
  double frac = static_cast<double>(modulo) / static_cast<double>(thousand);
  double scale = std::pow(10.0, decimals);
  auto f = static_cast<uint64_t>(std::llround(frac * scale));
  if (f >= static_cast<uint64_t>(scale)) {  // 0.96 to one decimal is 1.0: carry
    ++num;
    f = 0;
  }
  std::snprintf(buf, sizeof buf, "%llu.%0*llu%s%s", static_cast<unsigned long long>(num), decimals,
                static_cast<unsigned long long>(f), prefix, unit);
  return buf;
}

// fio's automatic unit for one slat/clat/lat line.
struct LatLine {
  const char* unit;
  double div;
};
LatLine lat_unit(uint64_t min, uint64_t max, double stdev) {
  if (min > 2000000 && max > 99999999ULL && stdev > 1000000.0) return {"msec", 1e6};
  if (min > 2000 && max > 99999 && stdev > 1000.0) return {"usec", 1e3};
  return {"nsec", 1};
}

void lat_line(std::string& out, const char* name, const Histogram& h) {
  if (h.count() == 0) return;
  LatLine u = lat_unit(h.min(), h.max(), h.stdev());
  auto scale = static_cast<uint64_t>(u.div);
  appendf(out, "    %s (%s): min=%s, max=%s, avg=%5.02f, stdev=%5.02f\n", name, u.unit,
          human(h.min() / scale, 6, false, "").c_str(), human(h.max() / scale, 6, false, "").c_str(),
          h.mean() / u.div, h.stdev() / u.div);
}

int percent_decimals(double p);

// The percentiles a report lists: the job's percentile_list, or fio's default.
std::vector<double> percentile_list(const JobSpec& s) {
  if (!s.percentiles.empty()) return s.percentiles;
  return {std::begin(kPercentiles), std::end(kPercentiles)};
}

void percentile_block(std::string& out, const char* name, const Histogram& h, const std::vector<double>& pcts) {
  if (h.count() == 0 || pcts.empty()) return;
  std::vector<uint64_t> vals(pcts.size());
  uint64_t lo = UINT64_MAX, hi = 0;
  for (size_t i = 0; i < pcts.size(); ++i) {
    vals[i] = h.percentile(pcts[i]);
    lo = std::min(lo, vals[i]);
    hi = std::max(hi, vals[i]);
  }
  const char* unit = "nsec";
  int scale_down = 0;
  if (lo > 2000000 && hi > 99999999ULL) {
    unit = "msec";
    scale_down = 2;
  } else if (lo > 2000 && hi > 99999) {
    unit = "usec";
    scale_down = 1;
  }
  uint64_t divisor = scale_down == 2 ? 1000000 : scale_down == 1 ? 1000 : 1;
  int width =
      std::max(5, static_cast<int>(std::log10(static_cast<double>(std::max<uint64_t>(hi / divisor, 1))) + 1));
  const size_t per_line = static_cast<size_t>((80 - 7) / (2 + 10 + width));
  appendf(out, "    %s percentiles (%s):\n     |", name, unit);
  for (size_t j = 0; j < pcts.size(); ++j) {
    if (j != 0 && j % per_line == 0) out += "     |";
    uint64_t v = vals[j];
    for (int s = 0; s < scale_down; ++s) v = (v + 999) / 1000;  // fio rounds up
    bool last = j + 1 == pcts.size();
    appendf(out, " %5.*fth=[%*llu]%c", percent_decimals(pcts[j]), pcts[j], width, static_cast<unsigned long long>(v),
            last ? '\n' : ',');
    if (!last && j % per_line == per_line - 1) out += "\n";
  }
}

// Complete seconds only: the last, partial second would drag min and avg down. The measured
// window runs from a completion to a completion (engine), so a 4 s run measures 3.9999 s or
// 4.0001 s: within kWholeSecondSlack of a whole second counts as that second, so its samples
// still add up to the total.
constexpr double kWholeSecondSlack = 0.01;
std::vector<uint64_t> full_seconds(const DirectionStats& d, double runtime_s) {
  auto n = static_cast<size_t>(std::floor(runtime_s + kWholeSecondSlack));
  n = std::min(n, d.ios_per_second.size());
  return {d.ios_per_second.begin(), d.ios_per_second.begin() + static_cast<ptrdiff_t>(n)};
}

struct SampleStats {
  double min = 0, max = 0, mean = 0, stdev = 0;
  size_t n = 0;
};
SampleStats sample_stats(const std::vector<double>& v) {
  SampleStats s;
  s.n = v.size();
  if (v.empty()) return s;
  s.min = *std::min_element(v.begin(), v.end());
  s.max = *std::max_element(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  if (v.size() > 1) {
    double sq = 0;
    for (double x : v) sq += (x - s.mean) * (x - s.mean);
    s.stdev = std::sqrt(sq / static_cast<double>(v.size() - 1));
  }
  return s;
}

uint64_t runtime_ms(double s) { return static_cast<uint64_t>(std::llround(s * 1000.0)); }

double per_second(uint64_t v, double runtime_s) {
  return runtime_s > 0 ? static_cast<double>(v) / runtime_s : 0.0;
}

// Bytes per second over whole milliseconds, as fio's BW= and group lines.
uint64_t bw_bytes(const DirectionStats& d, double runtime_s) {
  return d.bytes * 1000 / std::max<uint64_t>(runtime_ms(runtime_s), 1);
}

// group_bw: the group's bandwidth in this direction (bytes/s); per= is the share of it the
// mean of the samples makes, as fio's (its rs->agg), so a job listed alone shows its part.
void direction_text(std::string& out, const char* name, const DirectionStats& d, const JobSpec& spec,
                    double runtime_s, uint64_t group_bw) {
  if (d.ios == 0) return;
  runtime_s = runtime_of(d, runtime_s);
  uint64_t ms = std::max<uint64_t>(runtime_ms(runtime_s), 1);
  uint64_t bw = bw_bytes(d, runtime_s);
  uint64_t iops = d.ios * 1000 / ms;
  appendf(out, "  %s: IOPS=%s, BW=%s (%s)(%s/%llumsec)\n", name, human(iops, 4, false, "").c_str(),
          human(bw, 4, true, "B/s").c_str(), human(bw, 4, false, "B/s").c_str(),
          human(d.bytes, 4, true, "B").c_str(), static_cast<unsigned long long>(ms));
  lat_line(out, "slat", d.slat);
  lat_line(out, "clat", d.clat);
  lat_line(out, " lat", d.lat);
  percentile_block(out, "clat", d.clat, percentile_list(spec));

  auto secs = full_seconds(d, runtime_s);
  if (secs.empty()) return;
  std::vector<double> kib, ios;
  for (uint64_t n : secs) {
    ios.push_back(static_cast<double>(n));
    kib.push_back(static_cast<double>(n) * (d.bs ? d.bs : spec.bs) / 1024.0);
  }
  SampleStats b = sample_stats(kib);
  const char* bw_unit = "KiB";
  if (b.mean > 1024.0 * 1024.0) {
    b.min /= 1024;
    b.max /= 1024;
    b.mean /= 1024;
    b.stdev /= 1024;
    bw_unit = "MiB";
  }
  double agg_kib = static_cast<double>(group_bw) / 1024.0;
  double mean_kib = bw_unit[0] == 'M' ? b.mean * 1024 : b.mean;
  double per = agg_kib > 1 ? std::min(100.0, mean_kib * 100.0 / agg_kib) : 100.0;
  appendf(out, "   bw (%5s/s): min=%5llu, max=%5llu, per=%3.2f%%, avg=%5.02f, stdev=%5.02f, samples=%zu\n",
          bw_unit, static_cast<unsigned long long>(b.min), static_cast<unsigned long long>(b.max), per,
          b.mean, b.stdev, b.n);
  SampleStats i = sample_stats(ios);
  appendf(out, "   iops        : min=%5llu, max=%5llu, avg=%5.02f, stdev=%5.02f, samples=%zu\n",
          static_cast<unsigned long long>(i.min), static_cast<unsigned long long>(i.max), i.mean, i.stdev,
          i.n);
}

// One of fio's latency ranges: [previous edge, edge) in its nsec, usec or msec group (0, 1, 2),
// ">=2000" msec the rest; n is how many completions fell in it.
struct LatRange {
  size_t group;
  std::string label;
  uint64_t n;
};

// fio bins completion latency (io_u_mark_latency, with the time from issue): clat, not lat.
std::vector<LatRange> latency_ranges(const Histogram& clat) {
  const uint64_t total = clat.count();
  auto below = [&](uint64_t ns) { return ns == 0 || total == 0 ? 0 : clat.count_at_or_below(ns - 1); };
  std::vector<LatRange> out;
  const uint64_t scales[] = {1, 1000, 1000000};
  for (size_t g = 0; g < std::size(scales); ++g) {
    const uint64_t scale = scales[g];
    uint64_t lo = scale == 1 ? 0 : scale;
    auto add = [&](std::string label, uint64_t from, uint64_t to) {
      out.push_back({g, std::move(label), (to == UINT64_MAX ? total : below(to)) - below(from)});
    };
    for (uint64_t e : kLatEdges) {
      add(std::to_string(e), lo, e * scale);
      lo = e * scale;
    }
    if (scale == 1000000) {
      add("2000", lo, 2000 * scale);
      add(">=2000", 2000 * scale, UINT64_MAX);
    }
  }
  return out;
}

// A range's percent of all completions; with fio_floor, a nonzero share below 0.01% is 0.01,
// as fio's stat_calc_lat writes it in its text and JSON alike.
double range_percent(uint64_t n, uint64_t total, bool fio_floor) {
  if (total == 0) return 0.0;
  double pct = 100.0 * static_cast<double>(n) / static_cast<double>(total);
  return fio_floor && n && pct < 0.01 ? 0.01 : pct;
}

// fio's "lat (usec)   : 20=0.02%, 50=99.86%" lines: five to a line, empty ranges left out.
void distribution_text(std::string& out, const Histogram& clat) {
  const char* const units[] = {"nsec", "usec", "msec"};
  std::vector<std::vector<const LatRange*>> shown(std::size(units));
  const auto ranges = latency_ranges(clat);
  for (const LatRange& r : ranges) {
    if (r.n) shown[r.group].push_back(&r);
  }
  for (size_t g = 0; g < shown.size(); ++g) {
    for (size_t i = 0; i < shown[g].size(); ++i) {
      if (i % 5 == 0) appendf(out, "%s  lat (%s)   : ", i ? "\n" : "", units[g]);
      appendf(out, "%s%s=%3.2f%%", i % 5 ? ", " : "", shown[g][i]->label.c_str(),
              range_percent(shown[g][i]->n, clat.count(), true));
    }
    if (!shown[g].empty()) out += "\n";
  }
}

void group_line(std::string& out, const char* name, bool write, const Results& r) {
  const DirectionStats& d = write ? r.write : r.read;
  if (d.ios == 0) return;
  uint64_t ms = std::max<uint64_t>(runtime_ms(r.runtime_s), 1);
  uint64_t min_bw = UINT64_MAX, max_bw = 0, min_run = UINT64_MAX, max_run = 0;
  // fio's group line: over the jobs that did this direction (a writer beside a reader is not a
  // reader of 0 B/s), the bandwidth over the longest of their runtimes.
  for (const auto& j : r.jobs) {
    const DirectionStats& jd = write ? j.write : j.read;
    if (jd.ios == 0) continue;
    uint64_t jms = std::max<uint64_t>(runtime_ms(j.runtime_s), 1);
    uint64_t bw = jd.bytes * 1000 / jms;
    min_bw = std::min(min_bw, bw);
    max_bw = std::max(max_bw, bw);
    min_run = std::min(min_run, jms);
    max_run = std::max(max_run, jms);
  }
  if (max_run == 0) min_bw = max_bw = d.bytes * 1000 / ms, min_run = max_run = ms;
  const uint64_t agg = d.bytes * 1000 / max_run;
  appendf(out, "%s: bw=%s (%s), %s-%s (%s-%s), io=%s (%s), run=%llu-%llumsec\n", name,
          human(agg, 4, true, "B/s").c_str(), human(agg, 4, false, "B/s").c_str(),
          human(min_bw, 4, true, "B/s").c_str(), human(max_bw, 4, true, "B/s").c_str(),
          human(min_bw, 4, false, "B/s").c_str(), human(max_bw, 4, false, "B/s").c_str(),
          human(d.bytes, 4, true, "B").c_str(), human(d.bytes, 4, false, "B").c_str(),
          static_cast<unsigned long long>(min_run), static_cast<unsigned long long>(max_run));
}

std::string basename_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

double job_seconds(const Results& r) {
  double s = 0;
  for (const auto& j : r.jobs) s += j.runtime_s;
  return s > 0 ? s : r.runtime_s;
}

// Two decimals as fio prints them ("99.99"), more only where a listed percentile needs them
// ("99.9999", not "100.00": fio's issue #1984 is also about that rounding).
int percent_decimals(double p) {
  int d = 2;
  while (d < 6 && std::fabs(std::round(p * std::pow(10.0, d)) / std::pow(10.0, d) - p) > 1e-9) ++d;
  return d;
}

std::string percent_key(double p) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%.*f", percent_decimals(p), p);
  return buf;
}

json histogram_json(const Histogram& h, const std::vector<double>& pcts) {
  json pct = json::object();
  for (double p : pcts) pct[percent_key(p)] = h.percentile(p);
  return {{"min", h.min()},     {"max", h.max()},       {report_key::kMean, h.mean()},
          {"stdev", h.stdev()}, {"samples", h.count()}, {report_key::kPercentiles, pct}};
}

json sample_json(const std::vector<double>& v) {
  SampleStats st = sample_stats(v);
  return {{"min", st.min}, {"max", st.max}, {"mean", st.mean}, {"stdev", st.stdev}, {"samples", st.n}};
}

// fio's latency_ns / latency_us / latency_ms maps of a clat histogram: every range, empty ones 0.
json distribution_json(const Histogram& clat, bool fio_floor) {
  const char* const keys[] = {"latency_ns", "latency_us", "latency_ms"};
  json out = json::object();
  for (const char* k : keys) out[k] = json::object();
  for (const LatRange& r : latency_ranges(clat)) {
    out[keys[r.group]][r.label] = range_percent(r.n, clat.count(), fio_floor);
  }
  return out;
}

json direction_json(const DirectionStats& d, double runtime_s, const std::vector<double>& pcts) {
  auto secs = full_seconds(d, runtime_s);
  std::vector<double> ios, bw;
  for (uint64_t n : secs) {
    ios.push_back(static_cast<double>(n));
    bw.push_back(static_cast<double>(n) * d.bs);
  }
  return {{report_key::kIos, d.ios},
          {"bytes", d.bytes},
          {"bs_bytes", d.bs},
          {report_key::kIops, per_second(d.ios, runtime_s)},
          {report_key::kBw, per_second(d.bytes, runtime_s)},
          {"slat_ns", histogram_json(d.slat, pcts)},
          {report_key::kClat, histogram_json(d.clat, pcts)},
          {"lat_ns", histogram_json(d.lat, pcts)},
          {"iops_samples", secs},
          {"iops_per_s_stats", sample_json(ios)},
          {"bw_bytes_per_s_samples", bw},
          {"bw_bytes_per_s_stats", sample_json(bw)}};
}

json error_count_json(const ErrorCount& c) {
  json j = {{"count", c.count}};
  j["first_offset_bytes"] = c.count ? json(c.first_offset) : json(nullptr);
  return j;
}

json errors_json(const ErrorStats& e) {
  return {{"count", e.count},
          {"short_ios", e.short_ios},
          {"first_errno", e.first_errno},
          {"first_error", e.first_errno ? std::strerror(e.first_errno) : ""},
          {"first_offset_bytes", e.first_offset},
          {"eio", error_count_json(e.eio)},
          {"enospc", error_count_json(e.enospc)},
          {"other", error_count_json(e.other)},
          {"short_read", error_count_json(e.short_read)},
          {"short_write", error_count_json(e.short_write)},
          {"eagain_resent", error_count_json(e.eagain)},
          {"stopped", e.stopped},
          {"stop_reason", e.stop_reason}};
}

json verify_json(const Results& r, const JobSpec& spec) {
  if (!r.verified && spec.verify == VerifyKind::None) return nullptr;
  json first = json::array();
  for (const auto& m : r.verify.first) {
    json one = {{"job", m.job}, {"offset_bytes", m.offset}, {"reason", m.reason}};
    if (m.seq) {  // stale: the write found and the last one written there
      one["seq"] = m.seq;
      one["expected_seq"] = m.expected_seq;
      one["expected_seq_is_lower_bound"] = m.expected_at_least;
    }
    first.push_back(one);
  }
  return {{"kind", std::string(to_string(spec.verify))},
          {"blocks_checked", r.verify.blocks_checked},
          {"mismatches", r.verify.mismatches},
          {"first_mismatches", first}};
}

// "  errors       : ..." lines: each kind that happened, with its first offset.
void errors_text(std::string& out, const ErrorStats& e) {
  if (!e.count && !e.short_ios && !e.eagain.count) return;
  appendf(out, "  errors       : count=%llu, short=%llu", static_cast<unsigned long long>(e.count),
          static_cast<unsigned long long>(e.short_ios));
  if (e.first_errno) {
    appendf(out, ", first=%s at offset %llu", std::strerror(e.first_errno),
            static_cast<unsigned long long>(e.first_offset));
  }
  out += "\n";
  const std::pair<const char*, const ErrorCount*> kinds[] = {
      {"EIO", &e.eio},           {"ENOSPC", &e.enospc},           {"other", &e.other},
      {"short read", &e.short_read}, {"short write", &e.short_write}, {"EAGAIN (resent)", &e.eagain}};
  for (const auto& [name, c] : kinds) {
    if (c->count == 0) continue;
    appendf(out, "    %-15s: %llu, first at offset %llu\n", name, static_cast<unsigned long long>(c->count),
            static_cast<unsigned long long>(c->first_offset));
  }
  if (e.stopped) appendf(out, "  stopped      : %s\n", e.stop_reason.c_str());
}

void verify_text(std::string& out, const Results& r, const JobSpec& spec) {
  if (!r.verified) return;
  const VerifyStats& v = r.verify;
  appendf(out, "  verify       : %s, blocks=%llu, mismatches=%llu\n", std::string(to_string(spec.verify)).c_str(),
          static_cast<unsigned long long>(v.blocks_checked), static_cast<unsigned long long>(v.mismatches));
  for (const auto& m : v.first) {
    appendf(out, "    mismatch: job %u, offset %llu: %s\n", m.job, static_cast<unsigned long long>(m.offset),
            mismatch_text(m).c_str());
  }
  if (v.mismatches > v.first.size()) {
    appendf(out, "    ... and %llu more\n", static_cast<unsigned long long>(v.mismatches - v.first.size()));
  }
  for (const auto& f : v.dumped) appendf(out, "    dumped: %s (the block as read)\n", f.c_str());
}

json job_direction_json(const DirectionStats& d, double runtime_s) {
  return {{"ios", d.ios},
          {"bytes", d.bytes},
          {"iops", per_second(d.ios, runtime_s)},
          {"bw_bytes_per_s", per_second(d.bytes, runtime_s)},
          {"lat_ns_mean", d.lat.mean()},
          {"lat_ns_max", d.lat.max()},
          {"clat_ns_mean", d.clat.mean()},
          {"clat_ns_p99", d.clat.percentile(99)}};
}


// The unit each quantity carries in the JSON document's names.
const char* json_unit(Quantity q) {
  switch (q) {
    case Quantity::Iops: return "iops";
    case Quantity::Bandwidth: return "bytes_per_s";
    case Quantity::Latency: return "ns";
    case Quantity::Errors: return "count";
  }
  return "";
}

json expectation_json(const ExpectationResult& e) {
  const Expectation& x = e.expectation;
  std::string unit = json_unit(x.quantity);
  json j = {{report_key::kExpression, x.text},
            {"metric", x.metric},
            {"op", std::string(to_string(x.op))},
            {"unit", unit},
            {"threshold_" + unit, x.threshold},
            {"measured_" + unit, std::isnan(e.measured) ? json(nullptr) : json(e.measured)},
            {report_key::kMet, e.met},
            {"origin", x.origin}};
  if (x.provisioned > 0) {
    j["provisioned_" + unit] = x.provisioned;
    j["delivered_percent"] = std::isnan(e.measured) ? json(nullptr) : json(100.0 * e.measured / x.provisioned);
  }
  return j;
}

bool judges_bw(const SteadyState& ss) { return ss.kind == SteadyStateKind::Bw || ss.kind == SteadyStateKind::BwSlope; }
bool judges_slope(const SteadyState& ss) {
  return ss.kind == SteadyStateKind::IopsSlope || ss.kind == SteadyStateKind::BwSlope;
}

// A criterion's figure in the limit's unit: "0.08%", "12.5 IOPS", "1.50MiB/s", "3 IOPS/s".
std::string criterion_text(const SteadyState& ss, double v) {
  char buf[64];
  v = std::fabs(v);
  if (std::isinf(v)) return "inf";
  if (ss.percent) {
    std::snprintf(buf, sizeof buf, "%.3g%%", v);
    return buf;
  }
  const char* per = judges_slope(ss) ? "/s" : "";
  if (judges_bw(ss)) return human(static_cast<uint64_t>(std::llround(v)), 4, true, "B/s") + per;
  std::snprintf(buf, sizeof buf, "%.4g IOPS%s", v, per);
  return buf;
}

}  // namespace

std::string steadystate_line(const RunReport& rep) {
  const SteadyStateResult& r = rep.results.steadystate;
  const SteadyState& ss = rep.spec.steadystate;
  if (!r.checked) return "";
  const std::string kind(to_string(ss.kind));
  char buf[256];
  const size_t have = r.iops.size();
  if (have < static_cast<size_t>(r.duration_s)) {
    std::snprintf(buf, sizeof buf, "not steady: the %g s window never filled (%zu samples in %.0f s, after ss_ramp %g s)",
                  r.duration_s, have, rep.results.runtime_s, ss.ramp_s);
  } else if (r.attained) {
    std::snprintf(buf, sizeof buf, "steady state: attained after %.0f s (%s %s < %s over %g s)",
                  rep.results.runtime_s, kind.c_str(), criterion_text(ss, r.criterion).c_str(),
                  criterion_text(ss, ss.limit).c_str(), r.duration_s);
  } else {
    std::snprintf(buf, sizeof buf, "not steady: %s %s >= %s over the last %g s, ran %.0f s", kind.c_str(),
                  criterion_text(ss, r.criterion).c_str(), criterion_text(ss, ss.limit).c_str(), r.duration_s,
                  rep.results.runtime_s);
  }
  return buf;
}

json steadystate_json(const RunReport& rep) {
  const SteadyStateResult& r = rep.results.steadystate;
  const SteadyState& ss = rep.spec.steadystate;
  if (!r.checked) return nullptr;
  auto mean = [](const std::vector<uint64_t>& v) {
    double sum = 0;
    for (uint64_t x : v) sum += static_cast<double>(x);
    return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
  };
  const char* unit = judges_bw(ss) ? "bytes_per_s" : "iops";
  return {{"criterion", steadystate_text(ss)},
          {"attained", r.attained},
          {"window_filled", r.iops.size() >= static_cast<size_t>(r.duration_s)},
          // NaN and inf (a percent of a mean of 0) are no JSON number: null.
          {"value", std::isfinite(r.criterion) ? json(r.criterion) : json(nullptr)},
          {"limit", ss.limit},
          {"limit_unit", ss.percent ? "percent_of_mean" : unit},
          {"duration_s", r.duration_s},
          {"ramp_s", ss.ramp_s},
          {"samples_unit", unit},
          {"max_deviation", r.max_deviation},
          {"slope_per_s", r.slope},
          {"iops_samples", r.iops},
          {"iops_mean", mean(r.iops)},
          {"bw_bytes_per_s_samples", r.bw},
          {"bw_bytes_per_s_mean", mean(r.bw)}};
}

std::vector<double> report_percentiles(const JobSpec& s) { return percentile_list(s); }
json fio_latency_distribution_json(const Histogram& clat) { return distribution_json(clat, true); }
Histogram completion_latency(const DirectionStats& read, const DirectionStats& write) {
  Histogram all = read.clat;
  all.merge(write.clat);
  return all;
}
std::vector<uint64_t> whole_second_ios(const DirectionStats& d, double runtime_s) {
  return full_seconds(d, runtime_s);
}
json sample_stats_json(const std::vector<double>& v) { return sample_json(v); }
std::optional<int64_t> started_unix_seconds(const Results& r) {
  std::tm tm{};
  const char* end = strptime(r.started_at.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  if (!end || *end) return std::nullopt;
  return static_cast<int64_t>(timegm(&tm));
}

std::string expectation_line(const ExpectationResult& e) {
  const Expectation& x = e.expectation;
  std::string line = std::string(e.met ? "PASS" : "FAIL") + "  " + x.text + ": measured " +
                     format_quantity(x.quantity, e.measured);
  if (x.provisioned > 0 && !std::isnan(e.measured)) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "; delivered %.1f%% of provisioned %s (%s, %s)",
                  100.0 * e.measured / x.provisioned, x.quantity == Quantity::Iops ? "IOPS" : "throughput",
                  format_quantity(x.quantity, x.provisioned).c_str(), x.origin.c_str());
    line += buf;
  } else if (x.origin != "--expect") {
    line += " (" + x.origin + ")";
  }
  return line;
}

std::optional<OutputFormat> parse_output_format(std::string_view s) {
  if (s == "text") return OutputFormat::Text;
  if (s == "json") return OutputFormat::Json;
  if (s == "junit") return OutputFormat::Junit;
  if (s == "fio-json") return OutputFormat::FioJson;
  if (s == "fio-json+") return OutputFormat::FioJsonPlus;
  if (s == "openmetrics") return OutputFormat::OpenMetrics;
  return std::nullopt;
}

// Without group_reporting (fio's default), each job's own numbers, as fio prints them.
void per_job_text(std::string& out, const Results& r, const JobSpec& spec, int groupid) {
  if (spec.group_reporting || r.jobs.size() < 2) return;
  for (const auto& j : r.jobs) {
    appendf(out, "%s: (groupid=%d, job=%u): err=%2d: cpu=%d\n", spec.name.c_str(), groupid, j.job,
            j.errors.first_errno, j.cpu);
    direction_text(out, "read", j.read, spec, j.runtime_s, bw_bytes(r.read, r.runtime_s));
    direction_text(out, "write", j.write, spec, j.runtime_s, bw_bytes(r.write, r.runtime_s));
  }
  out += "all jobs:\n";
}

namespace {

// fio's "IO depths", "submit", "complete" and "issued rwts" lines (DepthStats).
void depths_text(std::string& out, const Results& r) {
  const DepthStats& d = r.depths;
  auto line = [&](const char* head, const char* const (&keys)[7], const std::array<uint64_t, 7>& map, uint64_t total) {
    out += head;
    for (size_t i = 0; i < 7; ++i) appendf(out, "%s%s=%3.1f%%", i ? ", " : "", keys[i], DepthStats::percent(map[i], total));
    out += "\n";
  };
  line("  IO depths    : ", report_key::kIodepthLevels, d.level, d.ios);
  line("     submit    : ", report_key::kIodepthBatches, d.submit, d.submits);
  line("     complete  : ", report_key::kIodepthBatches, d.complete, d.completes);
  appendf(out, "     issued rwts: total=%llu,%llu,0,0 short=%llu,%llu,0,0 dropped=0,0,0,0\n",
          static_cast<unsigned long long>(r.read.ios), static_cast<unsigned long long>(r.write.ios),
          static_cast<unsigned long long>(r.errors.short_read.count),
          static_cast<unsigned long long>(r.errors.short_write.count));
}

// A job's part of fio's text: its option line, figures, latency distribution, cpu, errors.
void job_text(std::string& out, const RunReport& rep) {
  const Results& r = rep.results;
  const JobSpec& s = rep.spec;
  uint32_t depth = s.engine == EngineKind::Sync ? 1 : s.iodepth;
  appendf(out, "%s: (g=%d): rw=%s, bs=(R) %uB-%uB, (W) %uB-%uB, (T) %uB-%uB, ioengine=%s, iodepth=%u\n",
          s.name.c_str(), rep.groupid, std::string(to_string(s.rw)).c_str(), s.bs, s.bs, s.write_bs(), s.write_bs(), s.bs, s.bs,
          std::string(to_string(s.engine)).c_str(), depth);
  appendf(out, "%s: (groupid=%d, jobs=%zu): err=%2d: %s: started %s\n", s.name.c_str(), rep.groupid,
          r.jobs.size(), r.errors.first_errno, rep.device.c_str(), r.started_at.c_str());
  per_job_text(out, r, s, rep.groupid);
  direction_text(out, "read", r.read, s, r.runtime_s, bw_bytes(r.read, r.runtime_s));
  direction_text(out, "write", r.write, s, r.runtime_s, bw_bytes(r.write, r.runtime_s));

  distribution_text(out, completion_latency(r.read, r.write));

  double cpu_s = job_seconds(r);
  appendf(out, "  cpu          : usr=%.2f%%, sys=%.2f%%, ctx=%llu\n",
          cpu_s > 0 ? 100.0 * r.cpu.user_s / cpu_s : 0.0, cpu_s > 0 ? 100.0 * r.cpu.sys_s / cpu_s : 0.0,
          static_cast<unsigned long long>(r.cpu.voluntary_ctx + r.cpu.involuntary_ctx));
  if (s.io_depths) depths_text(out, r);
  if (s.latency.target_ns) {
    // fio's line: target in ns, window in us, the depth the search ended at.
    const uint32_t d = r.jobs.empty() ? 0 : r.jobs.front().latency_depth;
    appendf(out, "     latency   : target=%llu, window=%llu, percentile=%.2f%%, depth=%u\n",
            static_cast<unsigned long long>(s.latency.target_ns), static_cast<unsigned long long>(s.latency.window_ns / 1000),
            s.latency.percentile, d);
  }
  errors_text(out, r.errors);
  verify_text(out, r, s);
}

// fio's "Run status group" of the jobs in `r` (every job of the group).
void group_text(std::string& out, int groupid, const Results& r) {
  appendf(out, "\nRun status group %d (all jobs):\n", groupid);
  group_line(out, "   READ", false, r);
  group_line(out, "  WRITE", true, r);
}

void disk_text(std::string& out, const std::string& device, const DiskStats& d) {
  if (!d.valid) return;
  appendf(out,
          "\nDisk stats (read/write):\n  %s: ios=%llu/%llu, merge=%llu/%llu, ticks=%llu/%llu, "
          "in_queue=%llu, util=%3.2f%%\n",
          basename_of(device).c_str(), static_cast<unsigned long long>(d.read_ios),
          static_cast<unsigned long long>(d.write_ios), static_cast<unsigned long long>(d.read_merges),
          static_cast<unsigned long long>(d.write_merges), static_cast<unsigned long long>(d.read_ticks_ms),
          static_cast<unsigned long long>(d.write_ticks_ms),
          static_cast<unsigned long long>(d.time_in_queue_ms), d.util_percent);
}

// diskprobe's own lines after fio's: preflight, tuning, notes, steadystate, expectations.
void footer_text(std::string& out, const RunReport& rep) {
  const Results& r = rep.results;
  const std::string steady = steadystate_line(rep);
  bool footer = !rep.preflight.empty() || !rep.tuning.empty() || !rep.notes.empty() || r.interrupted || !steady.empty();
  if (footer) out += "\n";
  if (!rep.preflight.empty()) appendf(out, "preflight: %s\n", rep.preflight.c_str());
  for (const auto& t : rep.tuning) {
    appendf(out, "tuning: %s %s -> %s\n", t.what.c_str(), t.old_value.c_str(), t.new_value.c_str());
  }
  for (const auto& n : rep.notes) appendf(out, "note: %s\n", n.c_str());
  if (!steady.empty()) appendf(out, "%s\n", steady.c_str());
  if (!rep.expectations.empty()) {
    size_t met = 0;
    for (const auto& e : rep.expectations) met += e.met ? 1 : 0;
    appendf(out, "%sexpectations: %zu of %zu met\n", footer ? "" : "\n", met, rep.expectations.size());
    for (const auto& e : rep.expectations) appendf(out, "  %s\n", expectation_line(e).c_str());
  }
  if (r.interrupted) {
    appendf(out,
            "interrupted: stopped early by a signal; the numbers above cover %.1f s of the planned %.1f s\n",
            r.runtime_s, rep.spec.runtime_s);
  }
}

}  // namespace

std::string render_text(const RunReport& rep) {
  std::string out;
  job_text(out, rep);
  group_text(out, rep.groupid, rep.results);
  disk_text(out, rep.device, rep.results.disk);
  footer_text(out, rep);
  return out;
}

DiskStats merged_disk_stats(const std::vector<const RunReport*>& runs) {
  DiskStats sum;
  double util_time = 0;
  for (const RunReport* rep : runs) {
    const DiskStats& d = rep->results.disk;
    if (!d.valid) continue;
    sum.valid = true;
    sum.read_ios += d.read_ios;
    sum.read_merges += d.read_merges;
    sum.read_ticks_ms += d.read_ticks_ms;
    sum.write_ios += d.write_ios;
    sum.write_merges += d.write_merges;
    sum.write_ticks_ms += d.write_ticks_ms;
    sum.io_ticks_ms += d.io_ticks_ms;
    sum.time_in_queue_ms += d.time_in_queue_ms;
    // Each run's util is over the time its counters span; hand-made reports have runtime only.
    const double t = d.span_s > 0 ? d.span_s : rep->results.runtime_s;
    sum.span_s += t;
    util_time += d.util_percent * t;
  }
  sum.util_percent = sum.span_s > 0 ? util_time / sum.span_s : 0.0;
  return sum;
}

void fold_readback(RunReport& w, const RunReport& r) {
  const DiskStats disk = merged_disk_stats({&w, &r});
  for (size_t k = 0; k < w.results.jobs.size() && k < r.results.jobs.size(); ++k) {
    // Each direction over its own time, as fio's: the writes', then the read-back's.
    w.results.jobs[k].write.runtime_s = w.results.jobs[k].runtime_s;
    w.results.jobs[k].read.merge(r.results.jobs[k].read);
    w.results.jobs[k].read.runtime_s = r.results.jobs[k].runtime_s;
    w.results.jobs[k].errors.count += r.results.jobs[k].errors.count;
    w.results.jobs[k].verify.merge(r.results.jobs[k].verify);
    w.results.jobs[k].runtime_s += r.results.jobs[k].runtime_s;
  }
  w.results.aggregate();
  w.results.verify_pass.merge(r.results.verify);
  w.results.verified = true;
  w.results.runtime_s += r.results.runtime_s;
  w.results.disk = disk;
}

void fold_group(RunReport& first, const RunReport& other) {
  auto& jobs = first.results.jobs;
  const auto base = static_cast<unsigned>(jobs.size());
  for (JobResult j : other.results.jobs) {
    j.job += base;
    jobs.push_back(std::move(j));
  }
  first.spec.numjobs += other.spec.numjobs;
  first.results.aggregate();
  first.results.runtime_s = std::max(first.results.runtime_s, other.results.runtime_s);
  first.results.cpu.user_s += other.results.cpu.user_s;
  first.results.cpu.sys_s += other.results.cpu.sys_s;
  first.results.cpu.voluntary_ctx += other.results.cpu.voluntary_ctx;
  first.results.cpu.involuntary_ctx += other.results.cpu.involuntary_ctx;
  first.results.interrupted = first.results.interrupted || other.results.interrupted;
  for (const auto& n : other.notes) {
    if (std::find(first.notes.begin(), first.notes.end(), n) == first.notes.end()) first.notes.push_back(n);
  }
}

std::vector<const RunReport*> fio_entries(const std::vector<RunReport*>& reports) {
  std::vector<RunReport*> entries;
  for (RunReport* r : reports) {
    auto same = std::find_if(entries.begin(), entries.end(), [&](const RunReport* e) {
      return e->groupid == r->groupid && e->spec.group_reporting && r->spec.group_reporting;
    });
    if (same == entries.end()) {
      entries.push_back(r);
    } else {
      fold_group(**same, *r);
    }
  }
  return {entries.begin(), entries.end()};
}

std::string render_fio_text(const std::vector<const RunReport*>& runs) {
  std::string out;
  if (runs.empty()) return out;
  for (const RunReport* rep : runs) job_text(out, *rep);
  // Each group's status over all its jobs, in the order fio numbers the groups.
  std::vector<int> groups;
  for (const RunReport* rep : runs) {
    if (std::find(groups.begin(), groups.end(), rep->groupid) == groups.end()) groups.push_back(rep->groupid);
  }
  for (int g : groups) {
    Results all;
    for (const RunReport* rep : runs) {
      if (rep->groupid != g) continue;
      all.jobs.insert(all.jobs.end(), rep->results.jobs.begin(), rep->results.jobs.end());
      all.runtime_s = std::max(all.runtime_s, rep->results.runtime_s);
    }
    all.aggregate();
    group_text(out, g, all);
  }
  disk_text(out, runs.front()->device, merged_disk_stats(runs));
  // diskprobe's lines once: the first report's, with what the others add (their tuning and notes).
  RunReport foot = *runs.front();
  for (size_t i = 1; i < runs.size(); ++i) {
    for (const auto& t : runs[i]->tuning) {
      bool seen = std::any_of(foot.tuning.begin(), foot.tuning.end(), [&](const AppliedSetting& a) {
        return a.what == t.what && a.new_value == t.new_value;
      });
      if (!seen) foot.tuning.push_back(t);
    }
    for (const auto& n : runs[i]->notes) {
      if (std::find(foot.notes.begin(), foot.notes.end(), n) == foot.notes.end()) foot.notes.push_back(n);
    }
    foot.results.interrupted = foot.results.interrupted || runs[i]->results.interrupted;
  }
  footer_text(out, foot);
  return out;
}

json to_json(const RunReport& rep) {
  const Results& r = rep.results;
  json j;
  j[report_key::kSchema] = 1;
  j[report_key::kJob] = diskprobe::to_json(rep.spec);
  j[report_key::kDevice] = rep.device;
  j[report_key::kStartedAt] = r.started_at;
  j[report_key::kRuntime] = r.runtime_s;
  j[report_key::kInterrupted] = r.interrupted;
  j["steadystate"] = steadystate_json(rep);
  const auto pcts = percentile_list(rep.spec);
  j[report_key::kRead] = direction_json(r.read, r.runtime_s, pcts);
  j[report_key::kWrite] = direction_json(r.write, r.runtime_s, pcts);
  // Each range's exact share: a JSON number holds 0.001 as it is, and fio's 0.01 floor, there
  // for its "%3.2f" text, would make the shares add up past 100.
  j["latency_distribution"] = distribution_json(completion_latency(r.read, r.write), false);
  j["errors"] = errors_json(r.errors);
  j["verify"] = verify_json(r, rep.spec);
  double cpu_s = job_seconds(r);
  j["cpu"] = {{"user_s", r.cpu.user_s},
              {"sys_s", r.cpu.sys_s},
              {"usr_percent", cpu_s > 0 ? 100.0 * r.cpu.user_s / cpu_s : 0.0},
              {"sys_percent", cpu_s > 0 ? 100.0 * r.cpu.sys_s / cpu_s : 0.0},
              {"voluntary_ctx", r.cpu.voluntary_ctx},
              {"involuntary_ctx", r.cpu.involuntary_ctx}};
  if (r.disk.valid) {
    const DiskStats& d = r.disk;
    j["disk"] = {{"name", basename_of(rep.device)},
                 {"read_ios", d.read_ios},
                 {"read_merges", d.read_merges},
                 {"read_ticks_ms", d.read_ticks_ms},
                 {"write_ios", d.write_ios},
                 {"write_merges", d.write_merges},
                 {"write_ticks_ms", d.write_ticks_ms},
                 {"io_ticks_ms", d.io_ticks_ms},
                 {"time_in_queue_ms", d.time_in_queue_ms},
                 {"util_percent", d.util_percent},
                 // What the counts and util cover: from before the engine starts to after it
                 // ends, more than runtime_s (the settle, ramp, drain and verify pass).
                 {"span_s", d.span_s}};
  } else {
    j["disk"] = nullptr;
  }
  j[report_key::kPreflight] = rep.preflight;
  json tuning = json::array();
  for (const auto& t : rep.tuning)
    tuning.push_back({{"what", t.what}, {"old_value", t.old_value}, {"new_value", t.new_value}});
  j["tuning"] = tuning;
  j["notes"] = rep.notes;
  json jobs = json::array();
  for (const auto& job : r.jobs) {
    jobs.push_back({{"job", job.job},
                    {"cpu", job.cpu},
                    {"runtime_s", job.runtime_s},
                    {"read", job_direction_json(job.read, job.runtime_s)},
                    {"write", job_direction_json(job.write, job.runtime_s)},
                    {"errors", errors_json(job.errors)}});
  }
  j["jobs"] = jobs;
  j["preflight_safe"] = rep.preflight_safe;
  const RunEnvironment& env = rep.environment;
  j["environment"] = {{"diskprobe_version", env.diskprobe_version},
                      {"kernel", env.kernel},
                      {"cpu_model", env.cpu_model},
                      {"cpu_count", env.cpu_count},
                      {"dmi_product_name", env.dmi_product_name},
                      {"device_model", env.device_model},
                      {"device_serial", env.device_serial},
                      {"device_size_bytes", env.device_size_bytes}};
  json expectations = json::array();
  for (const auto& e : rep.expectations) expectations.push_back(expectation_json(e));
  j[report_key::kExpectations] = expectations;
  j["expectations_met"] = std::all_of(rep.expectations.begin(), rep.expectations.end(),
                                      [](const ExpectationResult& e) { return e.met; });
  return j;
}

std::string render(const RunReport& r, OutputFormat f) {
  if (f == OutputFormat::Json) return dump_json(to_json(r)) + "\n";
  if (f == OutputFormat::Junit) return render_junit(r);
  if (f == OutputFormat::OpenMetrics) return render_openmetrics(r);
  if (f == OutputFormat::FioJson || f == OutputFormat::FioJsonPlus) {
    return dump_json(to_fio_json(r, f == OutputFormat::FioJsonPlus)) + "\n";
  }
  return render_text(r);
}

}  // namespace diskprobe
