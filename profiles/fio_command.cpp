// The fio command line equivalent to a profile, so a result can be checked against fio.
#include <cmath>
#include <cstdio>
#include <map>

#include "diskprobe/base/units.h"
#include "diskprobe/profiles/profiles.h"

namespace diskprobe::profiles {

namespace {

std::string fio_seconds(double s) {
  char buf[32];
  if (std::floor(s) == s) {
    std::snprintf(buf, sizeof buf, "%.0fs", s);
  } else {
    std::snprintf(buf, sizeof buf, "%.0fms", s * 1000);
  }
  return buf;
}

}  // namespace

// Taken and ignored with a note, so a pasted fio line (the vendors' say gtod_reduce=1) runs. The
// iodepth_batch_complete ones take a value. (iodepth_batch_submit, and fio's alias
// iodepth_batch, is a workload option.)
const char* fio_always_done(const std::string& key) {
  static const std::map<std::string, const char*> kReasons = {
      {"gtod_reduce", "diskprobe always measures every I/O's latency and reads the clock once per batch"},
      {"iodepth_batch_complete_min", "diskprobe reaps every completion there is in one batch"},
      {"iodepth_batch_complete_max", "diskprobe reaps every completion there is in one batch"},
      {"iodepth_batch_complete", "diskprobe reaps every completion there is in one batch"},
      {"fixedbufs", "diskprobe always registers its buffers"},
      {"registerfiles", "diskprobe always registers its file"},
      {"thread", "diskprobe always runs its jobs as threads of one process"},
      {"threads", "diskprobe always runs its jobs as threads of one process"},
  };
  auto it = kReasons.find(key);
  return it == kReasons.end() ? nullptr : it->second;
}

std::string fio_command_line(const JobSpec& s, const std::string& target) {
  std::string c = "fio --name=" + s.name;
  if (!s.directory.empty()) {
    c += " --directory=" + s.directory;
  } else {
    c += " --filename=" + target;
  }
  bool sync = s.engine == EngineKind::Sync;
  c += sync ? " --ioengine=psync" : " --ioengine=io_uring";
  if (!sync) c += " --iodepth=" + std::to_string(s.iodepth);
  if (!sync && s.force_async > 0) c += " --force_async=" + std::to_string(s.force_async);
  if (!sync && s.iodepth_batch_submit >= 0) c += " --iodepth_batch_submit=" + std::to_string(s.iodepth_batch_submit);
  c += " --direct=" + std::string(s.direct ? "1" : "0");
  if (s.sync) c += " --sync=1";
  c += " --rw=" + std::string(to_string(s.rw)) + rw_suffix(s.shape);
  if (s.rw == RwMode::RandRW || s.rw == RwMode::ReadWrite) c += " --rwmixread=" + std::to_string(s.rwmixread);
  c += " --bs=" + fio_size_text(s.bs);
  for (const auto& [name, value] : fio_options(s.shape, s.bs, s.write_bs())) c += " --" + name + "=" + value;
  if (s.size) c += " --size=" + fio_size_text(s.size);
  if (s.offset) c += " --offset=" + fio_size_text(s.offset);
  c += " --numjobs=" + std::to_string(s.numjobs);
  if (s.runtime_s > 0) c += " --runtime=" + fio_seconds(s.runtime_s);
  if (s.time_based) c += " --time_based=1";
  if (s.ramp_time_s > 0) c += " --ramp_time=" + fio_seconds(s.ramp_time_s);
  if (s.startdelay_s > 0) c += " --startdelay=" + fio_seconds(s.startdelay_s);
  if (s.loops > 1) c += " --loops=" + std::to_string(s.loops);
  if (s.number_ios) c += " --number_ios=" + std::to_string(s.number_ios);
  if (s.norandommap) c += " --norandommap";
  if (s.refill_buffers) c += " --refill_buffers";
  if (!s.randrepeat) c += " --randrepeat=0";
  if (s.group_reporting) c += " --group_reporting";
  // fio's R,W forms: a 0 is fio's "no cap" too.
  if (s.rate_iops[0] || s.rate_iops[1]) {
    c += " --rate_iops=" + std::to_string(s.rate_iops[0]) + "," + std::to_string(s.rate_iops[1]);
  }
  if (s.rate_bytes[0] || s.rate_bytes[1]) c += " --rate=" + fio_size_text(s.rate_bytes[0]) + "," + fio_size_text(s.rate_bytes[1]);
  if (s.rate_poisson) c += " --rate_process=poisson";
  if (s.steadystate.enabled()) {
    c += " --ss=" + steadystate_text(s.steadystate) + " --ss_dur=" + fio_seconds(s.steadystate.duration_s);
    if (s.steadystate.ramp_s > 0) c += " --ss_ramp=" + fio_seconds(s.steadystate.ramp_s);
  }
  switch (s.host.pinning) {
    case PinPolicy::None:
      break;
    case PinPolicy::Irq:
      c += " --cpus_allowed=$IRQ_EFFECTIVE_CPU --cpus_allowed_policy=split";
      break;
    case PinPolicy::HwQueues:
      c += " --cpus_allowed=$HW_QUEUE_CPUS --cpus_allowed_policy=split";
      break;
  }
  return c;
}

}  // namespace diskprobe::profiles
