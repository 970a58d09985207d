#include <nlohmann/json.hpp>

#include "diskprobe/spec/job_spec.h"

namespace diskprobe {

using nlohmann::json;

json to_json(const JobSpec& s) {
  json host = {{"pinning", std::string(to_string(s.host.pinning))},
               {"hold_cstates", s.host.hold_cstates},
               {"advise_idle_poll", s.host.advise_idle_poll}};
  host["rq_affinity"] = s.host.rq_affinity ? json(*s.host.rq_affinity) : json(nullptr);
  host["scheduler"] = s.host.scheduler.empty() ? json(nullptr) : json(s.host.scheduler);
  host["nomerges"] = s.host.nomerges ? json(*s.host.nomerges) : json(nullptr);
  host["cstate_latency_limit_us"] =
      s.host.cstate_latency_limit_us ? json(*s.host.cstate_latency_limit_us) : json(nullptr);
  const SteadyState& ss = s.steadystate;
  json steady = nullptr;
  if (ss.enabled()) {
    steady = {{"criterion", steadystate_text(ss)},
              {"kind", std::string(to_string(ss.kind))},
              {"limit", ss.limit},
              {"limit_unit", ss.percent                                          ? "percent_of_mean"
                             : ss.kind == SteadyStateKind::Iops ||
                                     ss.kind == SteadyStateKind::IopsSlope ? "iops"
                                                                           : "bytes_per_s"},
              {"duration_s", ss.duration_s},
              {"ramp_s", ss.ramp_s}};
  }
  json priority = json::object();  // kernel ioprio values (class << 13 | level)
  if (s.priority.job_set) priority["job_ioprio"] = s.priority.job;
  for (int d = 0; d < 2; ++d) {
    json shares = json::array();
    for (const PrioShare& p : s.priority.cmd[d]) shares.push_back({{"bs", p.bs}, {"percent", p.percent}, {"ioprio", p.ioprio}});
    if (!shares.empty()) priority[d ? "write_shares" : "read_shares"] = shares;
  }
  json shape = json::object();  // fio's options, as a job file holds them (io_shape.h)
  for (const auto& [name, value] : fio_options(s.shape, s.bs, s.write_bs())) shape[name] = value;
  if (!rw_suffix(s.shape).empty()) shape["rw_suffix"] = rw_suffix(s.shape);
  return {{"name", s.name},
          {"description", s.description},
          {"source", s.source},
          {"rw", std::string(to_string(s.rw))},
          {"rwmixread_percent", s.rwmixread},
          {"bs_bytes", s.bs},
          {"iodepth", s.iodepth},
          {"numjobs", s.numjobs},
          {"runtime_s", s.runtime_s},
          {"time_based", s.time_based},
          {"ramp_time_s", s.ramp_time_s},
          {"startdelay_s", s.startdelay_s},
          {"loops", s.loops},
          {"number_ios", s.number_ios},
          {"wait_for", s.wait_for},
          {"offset_bytes", s.offset},
          {"size_bytes", s.size},
          {"direct", s.direct},
          {"sync", s.sync},
          {"randrepeat", s.randrepeat},
          {"randseed", s.randseed},
          {"norandommap", s.norandommap},
          {"refill_buffers", s.refill_buffers},
          {"engine", std::string(to_string(s.engine))},
          {"directory", s.directory},
          {"bs_write_bytes", s.write_bs()},
          {"offset_percent", s.offset_percent},
          {"size_percent", s.size_percent},
          {"io_size_bytes", s.io_size},
          {"cpus_allowed", s.cpus_allowed},
          {"cpus_allowed_policy", s.cpus_allowed_split ? "split" : "shared"},
          {"sqpoll", s.sqpoll},
          {"hipri", s.hipri},
          {"force_async", s.force_async == JobSpec::kForceAsyncAuto ? json("auto") : json(s.force_async)},
          {"iodepth_batch_submit",
           s.iodepth_batch_submit == JobSpec::kBatchSubmitAuto ? json("auto") : json(s.iodepth_batch_submit)},
          {"continue_on_error", std::string(to_string(s.continue_on_error))},
          {"verify", std::string(to_string(s.verify))},
          {"do_verify", s.do_verify},
          {"percentiles", s.percentiles},
          {"iodepth_low", s.iodepth_low},
          {"rate_iops", json::array({s.rate_iops[0], s.rate_iops[1]})},
          {"rate_bytes_per_s", json::array({s.rate_bytes[0], s.rate_bytes[1]})},
          {"rate_process", s.rate_poisson ? "poisson" : "linear"},
          {"rate_min_bytes_per_s", json::array({s.rate_min_bytes[0], s.rate_min_bytes[1]})},
          {"rate_min_iops", json::array({s.rate_min_iops[0], s.rate_min_iops[1]})},
          {"ratecycle_ms", s.ratecycle_ms},
          {"steadystate", steady},
          {"shape", shape},
          {"priority", priority},
          {"content", {{"compress_percentage", s.content.compress_percentage}, {"compress_chunk", s.content.compress_chunk},
                       {"dedupe_percentage", s.content.dedupe_percentage},
                       {"dedupe_mode", s.content.working_set ? "working_set" : "repeat"},
                       {"dedupe_working_set_percentage", s.content.working_set_percentage},
                       {"dedupe_global", s.content.dedupe_global}}},
          {"numa", {{"cpu_nodes", s.numa.cpu_nodes}, {"mem_policy", to_string(s.numa.mem)},
                    {"mem_nodes", s.numa.mem_nodes}}},
          {"latency_target", {{"target_ns", s.latency.target_ns}, {"window_ns", s.latency.window_ns},
                              {"percentile", s.latency.percentile}}},
          {"flow", {{"weight", s.flow}, {"flow_id", s.flow_id}, {"flow_sleep_us", s.flow_sleep_us}}},
          {"logs", {{"bw", s.logs.bw}, {"lat", s.logs.lat}, {"iops", s.logs.iops}, {"log_avg_msec", s.logs.avg_msec},
                    {"log_offset", s.logs.offset}, {"log_prio", s.logs.prio}}},
          {"host", host},
          {"expect", s.expect},
          {"notes", s.notes}};
}

}  // namespace diskprobe
