// accept's suite: from a volume's provisioned figures and the host, the phases that reach
// them: random write and read IOPS (4k), sequential read and write (1 MiB), QD1 read and write
// latency (4k), each on its built-in profile's host wishes, each ending when steady or at its
// share of the time budget.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "diskprobe/acceptance/expect.h"
#include "diskprobe/base/status.h"
#include "diskprobe/spec/job_spec.h"

namespace diskprobe {

// What the suite is planned from. Latency 0: the volume promises none.
struct SuiteVolume {
  std::string name;  // "custom:iops=1237,mbps=23", "essd-pl1:500GiB"
  double iops = 0, bytes_per_s = 0, latency_ms = 0;
};
struct SuiteHost {
  unsigned cpus = 1;       // online CPUs
  unsigned hw_queues = 1;  // the device's hardware queues (1 when sysfs shows none)
};

struct SuitePhase {
  std::string name;     // "random write IOPS": the metric's name in every report
  std::string profile;  // the built-in profile whose workload and host wishes it starts from
  JobSpec spec;
  Quantity judged = Quantity::Iops;  // Iops, Bandwidth or Latency (mean, ns)
  double provisioned = 0;            // IOPS, bytes/s or ns; 0: reported, not judged
  std::string how;                   // "QD 4 x 1 job: Little's law, 1,237 IOPS x 1 ms x 2"
};

// Little's law: in flight = rate x latency. Without lat_ms the latency assumed is 1 ms (a
// cloud volume's 4k latency is 0.1-1 ms: at 1 ms the queue is deep enough for any of them),
// and twice that many I/Os are kept in flight, for the latency's spread.
inline constexpr double kAssumedLatencyMs = 1.0;
inline constexpr double kInFlightHeadroom = 2.0;
inline constexpr unsigned kSuiteMaxIodepth = 256;   // per job; a queue's tags are 64-1024
inline constexpr double kIopsPerJob = 100000;  // one io_uring job on one CPU, with room
// The budget's shares: the IOPS phases, where bursts show, get the most.
inline constexpr double kShareIops = 3, kShareBw = 2, kShareLatency = 1;
inline constexpr double kMinPhaseS = 2;  // the shortest phase: a latency phase
inline constexpr double kDefaultMaxTimeS = 600;

// The built-in profile of that name (its host wishes, its block size); errors pass through.
using ProfileLoader = std::function<Result<JobSpec>(const std::string& name)>;

// The six phases; an error names what is wrong (a --max-time too short for them).
Result<std::vector<SuitePhase>> plan_suite(const SuiteVolume& v, const SuiteHost& host, double max_time_s,
                                           const ProfileLoader& load);

}  // namespace diskprobe
