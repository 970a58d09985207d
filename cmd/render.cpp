#include "diskprobe/cli/render.h"

#include <cstdio>
#include <sstream>

#include "diskprobe/base/units.h"

namespace diskprobe::cli {
using nlohmann::json;

std::string human_bytes(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 5) {
    v /= 1024.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f%s" : "%.1f%s", v, units[u]);
  return buf;
}

namespace {

json sampled_json(const safety::Sampled& s) {
  if (!s.ran) return {{"ran", false}, {"skipped", s.skipped}};
  return {{"ran", true},
          {"windows", s.windows},
          {"zero_windows", s.zero_windows},
          {"own_data_windows", s.own_windows},
          {"no_data_windows", s.no_data_windows},
          {"unfilled_bytes", s.unfilled_bytes},
          {"bytes_read", s.bytes_read},
          {"foreign_offsets_bytes", s.foreign_offsets}};
}

std::string sampled_text(const safety::Sampled& s) {
  if (!s.ran) return "not run (" + s.skipped + ")";
  std::string t = std::to_string(s.windows) + " places, " + human_bytes(s.bytes_read) +
                  " read: " + std::to_string(s.zero_windows) + " zero, " + std::to_string(s.own_windows) +
                  " diskprobe's own data, " + std::to_string(s.foreign_offsets.size()) + " other data";
  if (s.unfilled_bytes) {
    t += "; " + std::to_string(s.no_data_windows) + " places (" + human_bytes(s.unfilled_bytes) +
         ") returned no data: the device completed the reads without filling the buffer (null_blk "
         "without memory_backed does), so nothing was there to find";
  }
  return t;
}

std::string list_or_none(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s.empty() ? "none" : s;
}

std::string signatures_text(const safety::Verdict& v) {
  if (!v.probed) return "unknown: the device could not be probed (see the reasons)";
  std::vector<std::string> sigs;
  for (const auto& s : v.signatures)
    sigs.push_back(s.type + " (" + s.usage + ") at offset " + std::to_string(s.offset));
  return list_or_none(sigs);
}

}  // namespace

json verdict_json(const safety::Verdict& v) {
  json reasons = json::array();
  for (const auto& r : v.reasons) reasons.push_back({{"code", r.code}, {"message", r.message}});
  json sigs = json::array();
  for (const auto& s : v.signatures) {
    sigs.push_back({{"type", s.type}, {"usage", s.usage}, {"offset_bytes", s.offset}});
  }
  return {{"device", v.device},
          {"mode", std::string(safety::to_string(v.mode))},
          {"safe", v.safe()},
          {"reasons", reasons},
          {"signatures", v.probed ? sigs : json(nullptr)},
          {"probed", v.probed},
          {"mounts", v.mounts},
          {"swaps", v.swaps},
          {"holders", v.holders},
          {"layers", v.layers},
          {"sampler", sampled_json(v.sampled)}};
}

json error_json(int exit_code, const std::string& message, const safety::Verdict* refused) {
  json doc = {{"exit_code", exit_code}, {"error", message}};
  if (refused) doc["verdict"] = verdict_json(*refused);
  return doc;
}

std::string verdict_text(const safety::Verdict& v) {
  std::ostringstream o;
  if (v.safe()) {
    o << v.device << ": safe to " << safety::to_string(v.mode) << "\n";
  } else {
    o << v.device << ": refused for " << safety::to_string(v.mode) << " (" << v.reasons.size() << " reason"
      << (v.reasons.size() == 1 ? "" : "s") << ")\n";
    for (const auto& r : v.reasons) o << "  " << r.code << ": " << r.message << "\n";
  }
  for (const auto& s : v.signatures) {
    o << "  found " << s.usage << " signature " << s.type << " at offset " << s.offset << "\n";
  }
  if (!v.probed) o << "  signatures: unknown, the device could not be probed\n";
  for (const auto& m : v.mounts) o << "  mounted at " << m << "\n";
  for (const auto& s : v.swaps) o << "  active swap " << s << "\n";
  for (const auto& h : v.holders) o << "  held by " << h << "\n";
  for (const auto& l : v.layers) o << "  in use through " << l << "\n";
  if (v.mode == safety::Mode::Write) o << "  zero sampler: " << sampled_text(v.sampled) << "\n";
  return o.str();
}

json device_json(const BlockDevice& d, const safety::Verdict& v) {
  return {{"name", d.name},
          {"path", d.path},
          {"size_bytes", d.size_bytes},
          {"logical_block_size_bytes", d.logical_block_size},
          {"physical_block_size_bytes", d.physical_block_size},
          {"rotational", d.rotational},
          {"read_only", d.read_only},
          {"model", d.model},
          {"serial", d.serial},
          {"partitions", d.partitions},
          {"holders", d.holders},
          {"signatures", verdict_json(v)["signatures"]},
          {"mounts", v.mounts},
          {"swaps", v.swaps},
          {"verdict", verdict_json(v)}};
}

std::string devices_text(const std::vector<BlockDevice>& devs, const std::vector<safety::Verdict>& verdicts) {
  std::ostringstream o;
  for (size_t i = 0; i < devs.size(); ++i) {
    const auto& d = devs[i];
    const auto& v = verdicts[i];
    if (i) o << "\n";
    o << d.path << "  " << human_bytes(d.size_bytes) << " (" << d.size_bytes << " bytes), sectors "
      << d.logical_block_size << "/" << d.physical_block_size << " logical/physical, "
      << (d.rotational ? "rotational" : "non-rotational") << (d.read_only ? ", read-only" : "") << "\n";
    o << "  model:      " << (d.model.empty() ? "-" : d.model)
      << "   serial: " << (d.serial.empty() ? "-" : d.serial) << "\n";
    std::vector<std::string> parts;
    for (const auto& p : d.partitions) parts.push_back("/dev/" + p);
    o << "  partitions: " << list_or_none(parts) << "\n";
    o << "  signatures: " << signatures_text(v) << "\n";
    o << "  mounts:     " << list_or_none(v.mounts) << "\n";
    if (!v.swaps.empty()) o << "  swap:       " << list_or_none(v.swaps) << "\n";
    o << "  holders:    " << list_or_none(v.holders.empty() ? d.holders : v.holders) << "\n";
    if (v.safe()) {
      o << "  verdict:    safe to write\n";
    } else {
      std::string codes;
      for (const auto& r : v.reasons) codes += (codes.empty() ? "" : ", ") + r.code;
      o << "  verdict:    refused (" << codes << ")\n";
      for (const auto& r : v.reasons) o << "    " << r.code << ": " << r.message << "\n";
    }
    o << "  sampler:    " << sampled_text(v.sampled) << "\n";
  }
  if (devs.empty()) o << "no block devices found\n";
  return o.str();
}

// The engine options a profile sets beyond the defaults, one line ("" when none).
static std::string engine_options_text(const JobSpec& s) {
  std::ostringstream o;
  if (s.bs_write) o << " bs=" << s.bs << "," << s.bs_write;
  if (s.size_percent > 0) o << " size=" << s.size_percent << "%";
  if (s.offset_percent > 0) o << " offset=" << s.offset_percent << "%";
  if (s.io_size) o << " io_size=" << s.io_size;
  if (!s.cpus_allowed.empty()) {
    o << " cpus_allowed=" << format_cpu_list(s.cpus_allowed)
      << " cpus_allowed_policy=" << (s.cpus_allowed_split ? "split" : "shared");
  }
  if (s.sqpoll) o << " sqpoll=1";
  if (s.hipri) o << " hipri=1";
  if (s.force_async >= 0) o << " force_async=" << s.force_async;
  if (s.iodepth_batch_submit >= 0) o << " iodepth_batch_submit=" << s.iodepth_batch_submit;
  if (s.continue_on_error != ContinueOnError::None) o << " continue_on_error=" << to_string(s.continue_on_error);
  if (s.verify != VerifyKind::None) o << " verify=" << to_string(s.verify) << " do_verify=" << s.do_verify;
  for (const auto& [name, caps] : {std::pair{"rate_iops", s.rate_iops}, std::pair{"rate", s.rate_bytes}}) {
    if (caps[0] || caps[1]) o << " " << name << "=" << caps[0] << "," << caps[1];
  }
  if (s.steadystate.enabled()) {
    o << " ss=" << steadystate_text(s.steadystate) << " ss_dur=" << s.steadystate.duration_s
      << "s ss_ramp=" << s.steadystate.ramp_s << "s";
  }
  if (!s.percentiles.empty()) {
    o << " percentiles=";
    for (size_t i = 0; i < s.percentiles.size(); ++i) o << (i ? "," : "") << s.percentiles[i];
  }
  std::string line = o.str();
  return line.empty() ? line : " " + line + "\n";
}

std::string spec_text(const JobSpec& s) {
  std::ostringstream o;
  o << s.name << ": " << s.description << "\n";
  if (!s.source.empty()) o << "  source:         " << s.source << "\n";
  o << "  rw=" << to_string(s.rw);
  if (s.rw == RwMode::RandRW || s.rw == RwMode::ReadWrite) o << " rwmixread=" << s.rwmixread;
  o << " bs=" << s.bs << " iodepth=" << s.iodepth << " numjobs=" << s.numjobs << " engine=" << to_string(s.engine)
    << "\n";
  o << "  runtime=" << s.runtime_s << "s time_based=" << s.time_based << " ramp_time=" << s.ramp_time_s
    << "s size=" << (s.size ? human_bytes(s.size) : std::string("whole device")) << " offset=" << s.offset << "\n";
  o << "  direct=" << s.direct << " randrepeat=" << s.randrepeat << " randseed=" << s.randseed
    << " norandommap=" << s.norandommap << " refill_buffers=" << s.refill_buffers << "\n";
  o << engine_options_text(s);
  if (!s.directory.empty()) o << "  directory=" << s.directory << " (one file per job)\n";
  o << "  host: rq_affinity=" << (s.host.rq_affinity ? std::to_string(*s.host.rq_affinity) : "unchanged")
    << " pinning=" << to_string(s.host.pinning) << " hold_cstates=" << s.host.hold_cstates
    << " advise_idle_poll=" << s.host.advise_idle_poll;
  if (!s.host.scheduler.empty()) o << " scheduler=" << s.host.scheduler;
  if (s.host.nomerges) o << " nomerges=" << *s.host.nomerges;
  if (s.host.cstate_latency_limit_us) o << " cstate_latency_limit_us=" << *s.host.cstate_latency_limit_us;
  o << "\n";
  for (const auto& e : s.expect) o << "  expect: " << e << "\n";
  for (const auto& n : s.notes) o << "  note: " << n << "\n";
  o << "  fio equivalent:\n    " << profiles::fio_command_line(s) << "\n";
  return o.str();
}

namespace {

const char* kind_name(tuning::IrqKind k) {
  switch (k) {
    case tuning::IrqKind::Queue: return "queue";
    case tuning::IrqKind::Config: return "config";
    case tuning::IrqKind::Admin: return "admin";
    case tuning::IrqKind::Other: return "other";
  }
  return "other";
}

}  // namespace

json topology_json(const tuning::Topology& t) {
  json queues = json::array();
  for (const auto& q : t.hw_queues) queues.push_back({{"index", q.index}, {"cpus", q.cpus}, {"polled", q.polled}});
  json cstates = json::array();
  for (const auto& c : t.host.cstates) {
    cstates.push_back({{"cpu", c.cpu},
                       {"state", c.index},
                       {"name", c.name},
                       {"exit_latency_us", c.latency_us},
                       {"disabled", c.disabled}});
  }
  json irqs = json::array();
  for (const auto& i : t.irqs) {
    irqs.push_back({{"irq", i.number},
                    {"name", i.name},
                    {"kind", kind_name(i.kind)},
                    {"hw_queue", i.hw_queue},
                    {"effective_affinity", i.effective_cpus},
                    {"smp_affinity", i.affinity_cpus}});
  }
  return {{"device", t.device},      {"driver", t.driver},
          {"driver_device", t.driver_device}, {"hw_queues", queues},
          {"interrupts", irqs},      {"online_cpus", t.online_cpus},
          {"scheduler", t.scheduler}, {"nr_requests", t.nr_requests},
          {"write_cache", t.write_cache}, {"cpuidle_driver", t.host.cpuidle_driver},
          {"cstates", cstates}};
}

json plan_json(const tuning::Plan& p) {
  json queue = json::array();
  for (const auto& q : p.queue) queue.push_back({{"attribute", q.attribute}, {"value", q.value}});
  json pins = json::array();
  for (const auto& pin : p.pins) {
    json j = {{"job", pin.job}, {"cpu", pin.cpu}, {"hw_queue", pin.hw_queue}};
    if (pin.irq >= 0) j["completion_irq"] = {{"irq", pin.irq}, {"name", pin.irq_name}, {"effective_cpu", pin.cpu}};
    pins.push_back(j);
  }
  json cstates = json::array();
  for (const auto& c : p.disable_cstates) {
    cstates.push_back({{"cpu", c.cpu}, {"state", c.state}, {"name", c.name}, {"exit_latency_us", c.latency_us}});
  }
  return {{"numjobs", p.numjobs},         {"job_cpus", p.cpus},   {"pins", pins},
          {"queue", queue},               {"disable_cstates", cstates}, {"hold_cstates", p.hold_cstates},
          {"deviations", p.deviations},   {"notes", p.notes},    {"advice", p.advice}};
}

std::string restore_text(const tuning::RestoreReport& r, const std::string& dir) {
  if (!r.any_journal) return "nothing to restore: no journal in " + dir + "\n";
  std::string out;
  for (const auto& s : r.restored) out += "restored " + s.what + " to " + s.old_value + "\n";
  for (const auto& s : r.gone)
    out += "not restored " + s.what + ": its device is gone, and its settings with it\n";
  for (const auto& s : r.already) out += "not restored " + s.what + ": it is " + s.old_value + " already\n";
  return out;
}

json restore_json(const tuning::RestoreReport& r) {
  auto settings = [](const std::vector<AppliedSetting>& list) {
    json out = json::array();
    for (const auto& s : list) out.push_back({{"what", s.what}, {"old_value", s.old_value}});
    return out;
  };
  return {{"restored", settings(r.restored)},
          {"gone", settings(r.gone)},
          {"already", settings(r.already)},
          {"left", r.left},
          {"failed", r.failed}};
}

std::string tune_text(const tuning::Topology& t, const tuning::Plan& p) {
  std::ostringstream o;
  o << "device " << t.device << ": driver " << (t.driver.empty() ? "unknown" : t.driver);
  if (!t.driver_device.empty()) o << " (" << t.driver_device << ")";
  o << ", online CPUs " << format_cpu_list(t.online_cpus) << "\n";
  o << "hardware queues: " << t.hw_queues.size() << "\n";
  for (const auto& q : t.hw_queues) {
    o << "  queue " << q.index << ": CPUs " << format_cpu_list(q.cpus)
      << (q.polled ? " (poll queue: no interrupt, polled I/O only)" : "") << "\n";
  }
  o << "queue: scheduler " << (t.scheduler.empty() ? "unknown" : t.scheduler) << ", nr_requests "
    << (t.nr_requests < 0 ? std::string("unknown") : std::to_string(t.nr_requests)) << ", write cache "
    << (t.write_cache.empty() ? "unknown" : t.write_cache) << "\n";
  o << "interrupts:" << (t.irqs.empty() ? " none" : "") << "\n";
  for (const auto& i : t.irqs) {
    o << "  IRQ " << i.number << " " << i.name << " (" << kind_name(i.kind);
    if (i.hw_queue >= 0) o << ", hardware queue " << i.hw_queue;
    o << "): effective CPUs " << format_cpu_list(i.effective_cpus) << ", affinity "
      << format_cpu_list(i.affinity_cpus) << "\n";
  }
  if (!t.host.cstates.empty()) {
    o << "C-states (cpuidle driver " << (t.host.cpuidle_driver.empty() ? "unknown" : t.host.cpuidle_driver)
      << "), CPU " << t.host.cstates.front().cpu << ":";
    for (const auto& c : t.host.cstates) {
      if (c.cpu != t.host.cstates.front().cpu) break;
      o << " state" << c.index << " " << c.name << " (" << c.latency_us << " us" << (c.disabled ? ", disabled" : "")
        << ")";
    }
    o << "\n";
  } else {
    o << "C-states: no cpuidle driver\n";
  }
  o << "plan:\n";
  for (size_t j = 0; j < p.cpus.size(); ++j) {
    o << "  job " << j << ": " << (p.cpus[j] < 0 ? std::string("unpinned") : "CPU " + std::to_string(p.cpus[j]));
    for (const auto& pin : p.pins) {
      if (pin.job != static_cast<int>(j)) continue;
      if (pin.irq >= 0) o << " (takes IRQ " << pin.irq << " " << pin.irq_name << ")";
      else if (pin.hw_queue >= 0) o << " (hardware queue " << pin.hw_queue << ")";
    }
    o << "\n";
  }
  for (const auto& q : p.queue) o << "  set queue/" << q.attribute << " = " << q.value << "\n";
  for (const auto& c : p.disable_cstates) {
    o << "  disable cpu" << c.cpu << " cpuidle state" << c.state << " (" << c.name << ", " << c.latency_us
      << " us)\n";
  }
  if (p.hold_cstates) o << "  hold /dev/cpu_dma_latency at 0 (no deep C-states) for the run\n";
  for (const auto& n : p.notes) o << "  note: " << n << "\n";
  if (!p.advice.empty()) o << "advice:\n";
  for (const auto& a : p.advice) o << "  - " << a << "\n";
  return o.str();
}

}  // namespace diskprobe::cli
