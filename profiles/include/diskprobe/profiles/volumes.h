// The volume catalog: a provider's published IOPS and throughput for one volume
// ("essd-pl3:1000GiB", "ebs-io1:40000", "ebs-gp3:6000,500"), turned into expectations; and a
// volume outside it, "custom:iops=N,mbps=M[,lat_ms=L]" (a private cloud, a throttled device).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "diskprobe/acceptance/expect.h"
#include "diskprobe/spec/job_spec.h"
#include "diskprobe/base/status.h"

namespace diskprobe::profiles {

struct VolumePerformance {
  std::string volume;  // as given: "essd-pl3:1000GiB"
  std::string provider, formula, source;
  double iops = 0;
  double throughput_bytes_per_s = 0;
  double latency_ms = 0;  // custom's lat_ms: the latency it promises; 0 = none given
};

// The type that is no catalog entry.
inline constexpr const char* kCustomVolume = "custom";
inline constexpr const char* kCustomVolumeForm = "custom:iops=N,mbps=M[,lat_ms=L]";

// catalog/volumes.json from the first profile directory that has one.
Result<nlohmann::json> load_volume_catalog(const std::vector<std::string>& dirs);

// Errors name the type or argument that is wrong and what the catalog allows. custom's mbps
// is MiB/s (1,048,576 bytes), as the catalog's figures are.
Result<VolumePerformance> volume_performance(std::string_view volume, const nlohmann::json& catalog);

// "95%", "95" or "0.95" -> 0.95; (0, 1] only.
Result<double> parse_tolerance(std::string_view text);

// One expectation at `tolerance` of what limits this workload on that volume: IOPS when
// IOPS x bs stays under the throughput limit, throughput otherwise.
Expectation volume_expectation(const VolumePerformance& v, const JobSpec& spec, double tolerance);

// lat_ms on a QD 1 workload (one job, one I/O in flight: a latency profile; deeper, latency
// is the queue's): the mean total latency (fio's lat, slat + clat: what the application
// waits) at most lat_ms / tolerance, as accept judges its QD1 phases. nullopt when the volume
// gives no lat_ms or the workload queues.
std::optional<Expectation> volume_latency_expectation(const VolumePerformance& v, const JobSpec& spec,
                                                      double tolerance);

// What `run --volume` expects: the latency on a QD 1 workload of a volume with lat_ms (one
// I/O in flight cannot reach the provisioned IOPS), else volume_expectation.
std::vector<Expectation> volume_expectations(const VolumePerformance& v, const JobSpec& spec,
                                             double tolerance);

}  // namespace diskprobe::profiles
