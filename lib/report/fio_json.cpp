#include "diskprobe/report/fio_json.h"

#include "diskprobe/report/report.h"
#include "diskprobe/report/report_keys.h"
#include "diskprobe/base/units.h"

#include <cmath>
#include <cstdio>
#include <ctime>
#include <string>

namespace diskprobe {

namespace {

using nlohmann::json;

// The fio release whose json/json+ schema this writes (Debian 12's fio, read from its own
// output: tests/integration/fio_json_test.cpp compares the two key by key).
constexpr const char* kFioSchemaVersion = "fio-3.33";

// Keys fio writes that diskprobe does not measure; they hold what fio writes when it has no
// figure (0), never an estimate (README "fio's JSON"):
//   per direction: drop_ios; the whole "trim" and "sync" objects;
//   per job: majf, minf; iodepth_level, iodepth_submit and iodepth_complete where the spec did
//   not count them (JobSpec::io_depths: diskprobe fio's jobs do); latency_target,
//   latency_window without a target; usr_cpu, sys_cpu and ctx of a job listed on its own (numjobs > 1 without
//   group_reporting: CPU time is measured for the whole process only).

uint64_t ms_of(double s) { return static_cast<uint64_t>(std::llround(s * 1000.0)); }

// fio's percentile keys: "%f" of the percentile, "99.000000".
std::string fio_percent_key(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%f", p);
  return buf;
}

// fio's bins are keyed by plat_idx_to_val(): the middle of a bucket of 64 per power of two,
// values below 128 ns exact. Histogram has the very same layout (kSubBits = 6 = fio's
// FIO_IO_U_PLAT_BITS), so each key is one of fio's own: the resolution is fio's (a bucket is
// at most 1/64 of its value wide), and only above 2^34 ns (~17 s), where fio's last group
// ends, does diskprobe keep buckets fio would have folded into its last one.
json bins_json(const Histogram& h) {
  json bins = json::object();
  for (size_t i = 0; i < Histogram::kBuckets; ++i) {
    if (uint64_t n = h.bucket(i)) bins[std::to_string(Histogram::midpoint_of(i))] = n;
  }
  return bins;
}

// fio's slat_ns / clat_ns / lat_ns: percentiles (and bins for json+) only where fio lists
// them by default (clat) and only when there are samples.
json lat_json(const Histogram& h, const std::vector<double>* pcts, bool plus) {
  json j = {{"min", h.min()},
            {"max", h.max()},
            {"mean", h.mean()},
            {"stddev", h.count() > 1 ? h.stdev() : 0.0},
            {"N", h.count()}};
  if (pcts && h.count() > 0) {
    json p = json::object();
    for (double x : *pcts) p[fio_percent_key(x)] = h.percentile(x);
    j["percentile"] = p;
    if (plus) j["bins"] = bins_json(h);
  }
  return j;
}

// min/max as integers, mean/dev as floats: the JSON types fio writes.
void add_sample_stats(json& j, const char* prefix, const char* dev_key, const std::vector<double>& v) {
  json s = sample_stats_json(v);
  std::string p = prefix;
  j[p + "_min"] = std::llround(s["min"].get<double>());
  j[p + "_max"] = std::llround(s["max"].get<double>());
  if (p == "bw") j["bw_agg"] = 0.0;  // filled in by direction_json, which knows the group's total
  j[p + "_mean"] = s["mean"].get<double>();
  j[p + dev_key] = s["stdev"].get<double>();
  j[p + "_samples"] = s["samples"];
}

// One direction as fio writes it. runtime_s is the job's (or the group's); group_bw_bytes is
// the whole group's bandwidth, for bw_agg (a job's share of it, in percent, at most 100).
json direction_json(const DirectionStats& d, double runtime_s, uint64_t short_ios, uint64_t group_bw_bytes,
                    const std::vector<double>& pcts, bool plus) {
  runtime_s = runtime_of(d, runtime_s);
  uint64_t runtime = d.ios ? ms_of(runtime_s) : 0;
  uint64_t bw_bytes = runtime ? d.bytes * 1000 / runtime : 0;
  json j = {{"io_bytes", d.bytes},
            {"io_kbytes", d.bytes >> 10},
            {"bw_bytes", bw_bytes},
            {"bw", bw_bytes >> 10},
            {"iops", runtime ? 1000.0 * static_cast<double>(d.ios) / static_cast<double>(runtime) : 0.0},
            {"runtime", runtime},
            {"total_ios", d.ios},
            {"short_ios", short_ios},
            {"drop_ios", 0},
            {"slat_ns", lat_json(d.slat, nullptr, plus)},
            {"clat_ns", lat_json(d.clat, &pcts, plus)},
            {"lat_ns", lat_json(d.lat, nullptr, plus)}};
  // fio samples bandwidth and IOPS every 500 ms; diskprobe counts whole seconds.
  std::vector<double> iops, bw_kib;
  for (uint64_t n : whole_second_ios(d, runtime_s)) {
    iops.push_back(static_cast<double>(n));
    bw_kib.push_back(static_cast<double>(n) * d.bs / 1024.0);
  }
  add_sample_stats(j, "bw", "_dev", bw_kib);
  if (group_bw_bytes > 0) {
    j["bw_agg"] =
        std::min(100.0, j["bw_mean"].get<double>() * 100.0 / (static_cast<double>(group_bw_bytes) / 1024.0));
  }
  add_sample_stats(j, "iops", "_stddev", iops);
  return j;
}

json empty_direction(const std::vector<double>& pcts) {
  return direction_json(DirectionStats{}, 0, 0, 0, pcts, false);
}

// Each bucket's share of `total` as fio's JSON has it; all 0 where nothing was counted.
json depth_map(const char* const (&keys)[7], const std::array<uint64_t, 7>& map, uint64_t total) {
  json m = json::object();
  for (size_t i = 0; i < 7; ++i) m[keys[i]] = DepthStats::percent(map[i], total);
  return m;
}

// "bs": "4k" as fio echoes its options: a multiple of 1 KiB in k, else bytes.
std::string size_option(uint64_t bytes) {
  if (bytes && bytes % (1u << 20) == 0) return std::to_string(bytes >> 20) + "m";
  if (bytes && bytes % 1024 == 0) return std::to_string(bytes >> 10) + "k";
  return std::to_string(bytes);
}

std::string seconds_option(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

// fio echoes options as strings, under the names of its own job file.
json options_json(const RunReport& rep) {
  const JobSpec& s = rep.spec;
  json o = {{"name", s.name},
            {"filename", rep.device},
            {"rw", std::string(to_string(s.rw)) + rw_suffix(s.shape)},
            {"bs", s.bs_write ? size_option(s.bs) + "," + size_option(s.bs_write) : size_option(s.bs)},
            {"iodepth", std::to_string(s.iodepth)},
            {"numjobs", std::to_string(s.numjobs)},
            {"ioengine", std::string(to_string(s.engine))},
            {"direct", s.direct ? "1" : "0"},
            {"runtime", seconds_option(s.runtime_s)}};
  for (const auto& [name, value] : fio_options(s.shape, s.bs, s.write_bs())) o[name] = value;
  if (s.time_based) o["time_based"] = "1";
  if (s.ramp_time_s > 0) o["ramp_time"] = seconds_option(s.ramp_time_s);
  if (s.startdelay_s > 0) o["startdelay"] = seconds_option(s.startdelay_s);
  if (s.loops > 1) o["loops"] = std::to_string(s.loops);
  if (s.number_ios) o["number_ios"] = std::to_string(s.number_ios);
  if (s.offset) o["offset"] = size_option(s.offset);
  if (s.size) o["size"] = size_option(s.size);
  if (s.rw == RwMode::RandRW || s.rw == RwMode::ReadWrite) o["rwmixread"] = std::to_string(s.rwmixread);
  if (s.group_reporting) o["group_reporting"] = "1";
  // fio echoes these under their long names, however they were given.
  for (const auto& [name, caps] : {std::pair{"rate_iops", s.rate_iops}, std::pair{"rate", s.rate_bytes}}) {
    if (caps[0] == caps[1] && caps[0]) {
      o[name] = std::to_string(caps[0]);
    } else if (caps[0] || caps[1]) {
      o[name] = (caps[0] ? std::to_string(caps[0]) : "") + "," + (caps[1] ? std::to_string(caps[1]) : "");
    }
  }
  if (s.rate_poisson) o["rate_process"] = "poisson";
  if (s.iodepth_low && s.iodepth_low < s.iodepth) o["iodepth_low"] = std::to_string(s.iodepth_low);
  for (const auto& [name, floor] : {std::pair{"ratemin", s.rate_min_bytes}, std::pair{"rate_iops_min", s.rate_min_iops}}) {
    if (floor[0] == floor[1] && floor[0]) {
      o[name] = std::to_string(floor[0]);
    } else if (floor[0] || floor[1]) {
      o[name] = (floor[0] ? std::to_string(floor[0]) : "") + "," + (floor[1] ? std::to_string(floor[1]) : "");
    }
  }
  if (s.content.compress_percentage) o["buffer_compress_percentage"] = std::to_string(s.content.compress_percentage);
  if (s.content.dedupe_percentage) {
    o["dedupe_percentage"] = std::to_string(s.content.dedupe_percentage);
    o["dedupe_mode"] = s.content.working_set ? "working_set" : "repeat";
    if (s.content.dedupe_global) o["dedupe_global"] = "1";
  }
  if (!s.numa.cpu_nodes.empty()) o["numa_cpu_nodes"] = format_cpu_list(s.numa.cpu_nodes);
  if (s.numa.mem != NumaPolicy::Mem::Unset) {
    std::string m = to_string(s.numa.mem);
    if (!s.numa.mem_nodes.empty()) m += ":" + format_cpu_list(s.numa.mem_nodes);
    o["numa_mem_policy"] = m;
  }
  if (s.latency.target_ns) {
    o["latency_target"] = std::to_string(s.latency.target_ns / 1000);
    if (s.latency.window_ns) o["latency_window"] = std::to_string(s.latency.window_ns / 1000);
    if (s.latency.percentile != 100.0) o["latency_percentile"] = seconds_option(s.latency.percentile);  // "%g", as fio echoes it
  }
  if (s.flow) o["flow"] = std::to_string(s.flow);
  if (s.flow_id) o["flow_id"] = std::to_string(s.flow_id);
  if (s.flow_sleep_us) o["flow_sleep"] = std::to_string(s.flow_sleep_us);
  if (s.steadystate.enabled()) {
    o["steadystate"] = steadystate_text(s.steadystate);
    o["steadystate_duration"] = seconds_option(s.steadystate.duration_s);
    if (s.steadystate.ramp_s > 0) o["steadystate_ramp_time"] = seconds_option(s.steadystate.ramp_s);
  }
  return o;
}

// fio's per-job "steadystate" object (stat.c): the criterion and its figure as "%f" strings
// with a % when relative, the last window's samples (IOPS, bytes/s) and their integer means.
json fio_steadystate_json(const RunReport& rep) {
  const SteadyStateResult& r = rep.results.steadystate;
  const SteadyState& ss = rep.spec.steadystate;
  auto f = [&](double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%f%s", v, ss.percent ? "%" : "");
    return std::string(buf);
  };
  auto mean = [](const std::vector<uint64_t>& v) {
    uint64_t sum = 0;
    for (uint64_t x : v) sum += x;
    return v.empty() ? uint64_t{0} : sum / v.size();
  };
  return {{"ss", std::string(to_string(ss.kind)) + ":" + f(ss.limit)},
          {"duration", static_cast<uint64_t>(r.duration_s)},
          {"attained", r.attained ? 1 : 0},
          {"criterion", f(r.criterion)},
          {"max_deviation", r.max_deviation},
          {"slope", r.slope},
          {"data", {{"bw_mean", mean(r.bw)}, {"iops_mean", mean(r.iops)}, {"iops", r.iops}, {"bw", r.bw}}}};
}

struct JobFigures {
  const char* name;
  const DirectionStats &read, &write;
  const ErrorStats& errors;
  double runtime_s;      // each direction's runtime and elapsed: with group_reporting the longest job's
  double job_runtime_s;  // fio's job_runtime: with group_reporting its jobs' runtimes summed (3 jobs of 1 s: 3000)
  const CpuUsage* cpu;  // null: not measured for this job alone
  uint32_t latency_depth;  // latency_target's search: the depth it ended at; 0: none
  const DepthStats& depths;
};

json job_json(const RunReport& rep, const JobFigures& f, bool plus) {
  const Results& r = rep.results;
  const auto pcts = report_percentiles(rep.spec);
  auto bw_of = [&](const DirectionStats& d) {
    uint64_t ms = ms_of(r.runtime_s);
    return ms ? d.bytes * 1000 / ms : 0;
  };
  json j = {
      {"jobname", f.name},
      {"groupid", rep.groupid},
      {"error", f.errors.first_errno},
      {"eta", 0},
      {"elapsed", static_cast<uint64_t>(std::ceil(rep.spec.ramp_time_s + f.runtime_s))},
      {"job options", options_json(rep)},
      {"read", direction_json(f.read, f.runtime_s, f.errors.short_read.count, bw_of(r.read), pcts, plus)},
      {"write", direction_json(f.write, f.runtime_s, f.errors.short_write.count, bw_of(r.write), pcts, plus)},
      {"trim", empty_direction(pcts)},
      {"sync", {{"total_ios", 0}, {"lat_ns", lat_json(Histogram{}, nullptr, false)}}},
      {"job_runtime", ms_of(f.job_runtime_s)}};
  double cpu_s = 0;
  for (const auto& job : r.jobs) cpu_s += job.runtime_s;
  if (cpu_s <= 0) cpu_s = r.runtime_s;
  bool cpu = f.cpu && cpu_s > 0;
  j["usr_cpu"] = cpu ? 100.0 * f.cpu->user_s / cpu_s : 0.0;
  j["sys_cpu"] = cpu ? 100.0 * f.cpu->sys_s / cpu_s : 0.0;
  j["ctx"] = f.cpu ? f.cpu->voluntary_ctx + f.cpu->involuntary_ctx : 0;
  j["majf"] = 0;
  j["minf"] = 0;
  j["iodepth_level"] = depth_map(report_key::kIodepthLevels, f.depths.level, f.depths.ios);
  j["iodepth_submit"] = depth_map(report_key::kIodepthBatches, f.depths.submit, f.depths.submits);
  j["iodepth_complete"] = depth_map(report_key::kIodepthBatches, f.depths.complete, f.depths.completes);
  j.update(fio_latency_distribution_json(completion_latency(f.read, f.write)));
  const LatencyTarget& lt = rep.spec.latency;
  j["latency_depth"] = f.latency_depth ? f.latency_depth : rep.spec.engine == EngineKind::Sync ? 1 : rep.spec.iodepth;
  j["latency_target"] = lt.target_ns;
  j["latency_percentile"] = lt.target_ns ? lt.percentile : 100.0;
  j["latency_window"] = lt.target_ns ? lt.window_ns / 1000 : 0;
  // The group's, on each job listed: diskprobe judges the jobs together (fio's group_reporting).
  if (r.steadystate.checked) j["steadystate"] = fio_steadystate_json(rep);
  return j;
}

// fio's per-disk figures: /sys/block/X/stat after the run minus before.
json disk_util_json(const RunReport& rep) {
  const Results& r = rep.results;
  json a = json::array();
  if (!r.disk.valid) return a;
  const DiskStats& d = r.disk;
  auto slash = rep.device.rfind('/');
  a.push_back({{"name", slash == std::string::npos ? rep.device : rep.device.substr(slash + 1)},
               {"read_ios", d.read_ios},
               {"write_ios", d.write_ios},
               {"read_merges", d.read_merges},
               {"write_merges", d.write_merges},
               {"read_ticks", d.read_ticks_ms},
               {"write_ticks", d.write_ticks_ms},
               {"in_queue", d.time_in_queue_ms},
               {"util", d.util_percent}});
  return a;
}

// diskprobe's own facts, from its own JSON document: what fio has no key for.
json diskprobe_json(const RunReport& rep) {
  json own = to_json(rep);
  json out = json::object();
  for (const char* k : {report_key::kSchema, report_key::kDevice, report_key::kStartedAt,
                        report_key::kInterrupted, report_key::kPreflight, "preflight_safe", "tuning", "notes",
                        "errors", "verify", "environment", report_key::kExpectations, "expectations_met"}) {
    if (own.contains(k)) out[k] = own[k];
  }
  return out;
}

// started_at has whole seconds; fio's timestamp is when the run ended, so the measured
// runtime is added (timestamp_ms is therefore as exact as the runtime, not the clock).
int64_t end_ms(const RunReport& rep) {
  auto start = started_unix_seconds(rep.results);
  if (!start) return 0;
  return *start * 1000 + static_cast<int64_t>(ms_of(rep.results.runtime_s));
}

std::string ctime_of(int64_t ms) {
  std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a %b %e %H:%M:%S %Y", &tm);
  return buf;
}

}  // namespace

json to_fio_json(const RunReport& rep, bool plus) {
  const Results& r = rep.results;
  int64_t ms = end_ms(rep);
  json j = {{"fio version", kFioSchemaVersion},
            {"timestamp", ms / 1000},
            {"timestamp_ms", ms},
            {"time", ctime_of(ms)},
            {"global options", options_json(rep)}};
  json jobs = json::array();
  // fio lists each job, or with group_reporting one entry for all of them.
  if (rep.spec.group_reporting || r.jobs.size() < 2) {
    const uint32_t depth = r.jobs.empty() ? 0 : r.jobs.front().latency_depth;
    double summed = 0;
    for (const auto& job : r.jobs) summed += job.runtime_s;
    if (r.jobs.size() < 2) summed = r.runtime_s;
    jobs.push_back(
        job_json(rep, {rep.spec.name.c_str(), r.read, r.write, r.errors, r.runtime_s, summed, &r.cpu, depth, r.depths}, plus));
  } else {
    for (const auto& job : r.jobs) {
      jobs.push_back(
          job_json(rep, {rep.spec.name.c_str(), job.read, job.write, job.errors, job.runtime_s, job.runtime_s, nullptr,
                         job.latency_depth, job.depths},
                   plus));
    }
  }
  j["jobs"] = jobs;
  j["disk_util"] = disk_util_json(rep);
  j["diskprobe"] = diskprobe_json(rep);
  return j;
}

json to_fio_json(const std::vector<const RunReport*>& runs, bool plus, FioGroups groups) {
  json j;
  json jobs = json::array(), facts = json::array();
  for (size_t i = 0; i < runs.size(); ++i) {
    json one = to_fio_json(*runs[i], plus);
    if (i == 0) j = one;
    for (auto job : one["jobs"]) {
      if (groups == FioGroups::ByRun) job["groupid"] = i;
      jobs.push_back(std::move(job));
    }
    facts.push_back(one["diskprobe"]);
    if (i + 1 == runs.size()) {
      for (const char* k : {"timestamp", "timestamp_ms", "time"}) j[k] = one[k];
    }
  }
  j["jobs"] = std::move(jobs);
  // The runs are on one device: its counters summed, util over the time they span (the text
  // report's Disk stats are the same figures).
  RunReport all = *runs.front();
  all.results.disk = merged_disk_stats(runs);
  j["disk_util"] = disk_util_json(all);
  j["diskprobe"] = {{"runs", std::move(facts)}};
  return j;
}

}  // namespace diskprobe
