// JobSpec: one workload, in fio's words, plus what it asks of the host.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace diskprobe {

enum class RwMode { Read, Write, RandRead, RandWrite, RandRW, ReadWrite };
enum class EngineKind { IoUring, Sync };
// none: run where the scheduler puts it; irq: on the CPU that takes the device's
// completion interrupt; hw-queues: jobs spread over the hardware queues' CPU lists.
enum class PinPolicy { None, Irq, HwQueues };

std::string_view to_string(RwMode m);
std::string_view to_string(EngineKind e);
std::string_view to_string(PinPolicy p);
std::optional<RwMode> parse_rw(std::string_view s);
std::optional<EngineKind> parse_engine(std::string_view s);
std::optional<PinPolicy> parse_pinning(std::string_view s);

inline bool is_random(RwMode m) {
  return m == RwMode::RandRead || m == RwMode::RandWrite || m == RwMode::RandRW;
}
inline bool does_writes(RwMode m) {
  return m != RwMode::Read && m != RwMode::RandRead;
}
inline bool does_reads(RwMode m) {
  return m != RwMode::Write && m != RwMode::RandWrite;
}

// What a profile wants of the host while it runs; tuning:: turns it into a plan.
struct HostWishes {
  std::optional<int> rq_affinity;  // 0, 1 or 2; unset = leave alone
  PinPolicy pinning = PinPolicy::None;
  bool hold_cstates = false;        // hold /dev/cpu_dma_latency at 0 for the run
  bool advise_idle_poll = false;    // latency profiles: advise idle=poll
};

struct JobSpec {
  std::string name = "diskprobe";   // profile name
  std::string description;
  std::string source;               // seed document the profile reproduces

  RwMode rw = RwMode::RandWrite;
  unsigned rwmixread = 50;          // percent reads for randrw / readwrite
  uint32_t bs = 4096;
  uint32_t iodepth = 1;
  uint32_t numjobs = 1;
  double runtime_s = 30;            // 0 = until size is done
  bool time_based = true;           // loop over the region until runtime ends
  double ramp_time_s = 0;           // excluded from statistics
  uint64_t offset = 0;              // start of the region, bytes
  uint64_t size = 0;                // length of the region, bytes; 0 = to the end
  bool direct = true;
  bool randrepeat = true;           // same offsets every run (seeded from randseed)
  uint64_t randseed = 0x6469736b;   // "disk"
  bool refill_buffers = false;      // fresh random data for each write
  EngineKind engine = EngineKind::IoUring;
  bool norandommap = false;         // fio's norandommap: random offsets may repeat within a pass
  std::string directory;            // fio's directory: one file per job in DIR instead of a device

  HostWishes host;

  // Acceptance checks the profile carries ("iops>=38000"); see diskprobe/core/expect.h.
  std::vector<std::string> expect;
  // Where the profile knowingly differs from its seed command (libaio -> io_uring, ...).
  std::vector<std::string> notes;
};

// The one JSON form of a JobSpec: `profile show --json` and the run report's "job" object.
// Every number carries its unit in its name.
nlohmann::json to_json(const JobSpec& s);

}  // namespace diskprobe
