#include "diskprobe/acceptance/suite.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace diskprobe {

namespace {

constexpr double kMiB = 1048576.0;
// fio's iops_slope / bw_slope at 1% of the mean per second over the window.
constexpr double kSteadySlopePercent = 1.0;

struct Shape {
  const char* name;
  const char* profile;
  Quantity judged;
  double share;
};
constexpr Shape kPhases[] = {
    {"random write IOPS", "cloud-randwrite-iops", Quantity::Iops, kShareIops},
    {"random read IOPS", "cloud-randread-iops", Quantity::Iops, kShareIops},
    {"sequential read throughput", "cloud-seqread-bw", Quantity::Bandwidth, kShareBw},
    {"sequential write throughput", "cloud-seqwrite-bw", Quantity::Bandwidth, kShareBw},
    {"QD1 read latency", "cloud-randread-lat", Quantity::Latency, kShareLatency},
    {"QD1 write latency", "cloud-randwrite-lat", Quantity::Latency, kShareLatency},
};

std::string num(double v, const char* format = "%.0f") {
  char buf[48];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// The queue that reaches `rate` I/Os per second of `bs` at the latency assumed: jobs up to
// the hardware queues and CPUs there are, each at most kSuiteMaxIodepth deep.
void size_queue(JobSpec& s, double rate, double latency_ms, const SuiteHost& host, std::string& how) {
  const double in_flight = std::ceil(kInFlightHeadroom * rate * latency_ms / 1000.0);
  double jobs = std::max({1.0, std::ceil(in_flight / kSuiteMaxIodepth), std::ceil(rate / kIopsPerJob)});
  jobs = std::min({jobs, static_cast<double>(std::max(1u, host.cpus)),
                   static_cast<double>(std::max(1u, host.hw_queues))});
  s.numjobs = static_cast<uint32_t>(jobs);
  s.iodepth =
      static_cast<uint32_t>(std::clamp(std::ceil(in_flight / jobs), 1.0, static_cast<double>(kSuiteMaxIodepth)));
  how = "QD " + num(s.iodepth) + " x " + num(jobs) + (jobs == 1 ? " job" : " jobs") + ": Little's law, " +
        num(rate) + " IOPS x " + num(latency_ms, "%.3g") + " ms x " + num(kInFlightHeadroom, "%g") +
        " in flight";
}

// Ends when steady, after a quarter of its time (a burst shorter than that is seen), or at
// its limit, flagged not steady.
SteadyState steady_for(Quantity q, double limit_s) {
  SteadyState ss;
  const double window = std::clamp(std::floor(limit_s / 4), 3.0, 30.0), ramp = std::floor(limit_s / 4);
  if (ramp + window >= limit_s) return ss;  // would run to the limit anyway
  ss.kind = q == Quantity::Bandwidth ? SteadyStateKind::BwSlope : SteadyStateKind::IopsSlope;
  ss.limit = kSteadySlopePercent;
  ss.percent = true;
  ss.duration_s = window;
  ss.ramp_s = ramp;
  return ss;
}

}  // namespace

Result<std::vector<SuitePhase>> plan_suite(const SuiteVolume& v, const SuiteHost& host, double max_time_s,
                                           const ProfileLoader& load) {
  double shares = 0, least = INFINITY;
  for (const auto& p : kPhases) shares += p.share, least = std::min(least, p.share);
  const double least_total = std::ceil(kMinPhaseS * shares / least);
  if (!(max_time_s >= least_total)) {
    return make_error("--max-time " + num(max_time_s, "%g") + ": the suite's " + num(std::size(kPhases)) +
                      " phases need at least " + num(least_total) + " s; give --max-time " +
                      num(least_total) + " or more");
  }
  const double latency_ms = v.latency_ms > 0 ? v.latency_ms : kAssumedLatencyMs;
  std::vector<SuitePhase> out;
  for (const auto& shape : kPhases) {
    auto base = load(shape.profile);
    if (!base) return make_error(base.error());
    SuitePhase p;
    p.name = shape.name;
    p.profile = shape.profile;
    p.judged = shape.judged;
    p.spec = *base;
    JobSpec& s = p.spec;
    s.name = shape.profile;
    // The whole device, for the phase's time: a volume's rate, not its first GiB's.
    s.size = 0;
    s.size_percent = 0;
    s.offset = 0;
    s.offset_percent = 0;
    s.io_size = 0;
    s.time_based = true;
    s.ramp_time_s = 0;
    s.runtime_s = std::floor(max_time_s * shape.share / shares);
    s.steadystate = steady_for(shape.judged, s.runtime_s);
    s.expect.clear();
    if (shape.judged == Quantity::Latency) {
      s.iodepth = 1;
      s.numjobs = 1;
      p.provisioned = v.latency_ms > 0 ? v.latency_ms * 1e6 : 0;
      p.how =
          "QD 1 x 1 job" + (v.latency_ms > 0 ? ", judged against lat_ms " + num(v.latency_ms, "%g") + " ms"
                                             : std::string(": reported; the volume promises no latency"));
    } else {
      // What limits the phase: IOPS, or the throughput at this block size.
      const double by_bw = v.bytes_per_s / s.bs;
      const bool iops_bound = v.iops <= by_bw;
      // An I/O's latency is the volume's plus its transfer at the provisioned throughput.
      size_queue(s, iops_bound ? v.iops : by_bw, latency_ms + 1000.0 * s.bs / v.bytes_per_s, host, p.how);
      p.judged = iops_bound ? Quantity::Iops : Quantity::Bandwidth;
      p.provisioned = iops_bound ? v.iops : v.bytes_per_s;
      p.how += iops_bound
                   ? ""
                   : " (" + num(v.bytes_per_s / kMiB, "%g") + " MiB/s at " + num(s.bs / 1024.0) + " KiB)";
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace diskprobe
