#include "render.h"

#include <cstdio>
#include <sstream>

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

json verdict_json(const safety::Verdict& v) {
  json reasons = json::array();
  for (const auto& r : v.reasons) reasons.push_back({{"code", r.code}, {"message", r.message}});
  json sigs = json::array();
  for (const auto& s : v.signatures) {
    sigs.push_back({{"type", s.type}, {"usage", s.usage}, {"offset_bytes", s.offset}});
  }
  return {{"device", v.device}, {"mode", std::string(safety::to_string(v.mode))},
          {"safe", v.safe()},   {"reasons", reasons},
          {"signatures", sigs}};
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
          {"verdict", verdict_json(v)}};
}

std::string devices_text(const std::vector<BlockDevice>& devs, const std::vector<safety::Verdict>& verdicts) {
  std::ostringstream o;
  char line[256];
  std::snprintf(line, sizeof line, "%-12s %10s %9s %4s  %-10s %s\n", "DEVICE", "SIZE", "LBS/PBS", "RO", "VERDICT",
                "REASONS");
  o << line;
  for (size_t i = 0; i < devs.size(); ++i) {
    const auto& d = devs[i];
    const auto& v = verdicts[i];
    std::string reasons;
    for (const auto& r : v.reasons) reasons += (reasons.empty() ? "" : ",") + r.code;
    for (const auto& s : v.signatures) reasons += " [" + s.type + "]";
    std::string bs = std::to_string(d.logical_block_size) + "/" + std::to_string(d.physical_block_size);
    std::snprintf(line, sizeof line, "%-12s %10s %9s %4s  %-10s %s\n", d.path.c_str(),
                  human_bytes(d.size_bytes).c_str(), bs.c_str(), d.read_only ? "yes" : "no",
                  v.safe() ? "safe" : "refused", reasons.c_str());
    o << line;
  }
  return o.str();
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
  if (!s.directory.empty()) o << "  directory=" << s.directory << " (one file per job)\n";
  o << "  host: rq_affinity=" << (s.host.rq_affinity ? std::to_string(*s.host.rq_affinity) : "unchanged")
    << " pinning=" << to_string(s.host.pinning) << " hold_cstates=" << s.host.hold_cstates
    << " advise_idle_poll=" << s.host.advise_idle_poll << "\n";
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
  for (const auto& q : t.hw_queues) queues.push_back({{"index", q.index}, {"cpus", q.cpus}});
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
          {"interrupts", irqs},      {"online_cpus", t.online_cpus}};
}

json plan_json(const tuning::Plan& p) {
  json queue = json::array();
  for (const auto& q : p.queue) queue.push_back({{"attribute", q.attribute}, {"value", q.value}});
  return {{"job_cpus", p.cpus}, {"queue", queue}, {"hold_cstates", p.hold_cstates},
          {"notes", p.notes},   {"advice", p.advice}};
}

std::string tune_text(const tuning::Topology& t, const tuning::Plan& p) {
  std::ostringstream o;
  o << "device " << t.device << ": driver " << (t.driver.empty() ? "unknown" : t.driver);
  if (!t.driver_device.empty()) o << " (" << t.driver_device << ")";
  o << ", online CPUs " << tuning::format_cpu_list(t.online_cpus) << "\n";
  o << "hardware queues: " << t.hw_queues.size() << "\n";
  for (const auto& q : t.hw_queues) o << "  queue " << q.index << ": CPUs " << tuning::format_cpu_list(q.cpus) << "\n";
  o << "interrupts: " << (t.irqs.empty() ? "none" : "") << "\n";
  for (const auto& i : t.irqs) {
    o << "  IRQ " << i.number << " " << i.name << " (" << kind_name(i.kind);
    if (i.hw_queue >= 0) o << ", hardware queue " << i.hw_queue;
    o << "): effective CPUs " << tuning::format_cpu_list(i.effective_cpus) << ", affinity "
      << tuning::format_cpu_list(i.affinity_cpus) << "\n";
  }
  o << "plan:\n";
  for (size_t j = 0; j < p.cpus.size(); ++j) {
    o << "  job " << j << ": " << (p.cpus[j] < 0 ? std::string("unpinned") : "CPU " + std::to_string(p.cpus[j]))
      << "\n";
  }
  for (const auto& q : p.queue) o << "  set queue/" << q.attribute << " = " << q.value << "\n";
  if (p.hold_cstates) o << "  hold /dev/cpu_dma_latency at 0 (no deep C-states) for the run\n";
  for (const auto& n : p.notes) o << "  note: " << n << "\n";
  if (!p.advice.empty()) o << "advice:\n";
  for (const auto& a : p.advice) o << "  - " << a << "\n";
  return o.str();
}

}  // namespace diskprobe::cli
