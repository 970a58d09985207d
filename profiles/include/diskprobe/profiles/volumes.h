// The volume catalog: a provider's published IOPS and throughput for one volume
// ("essd-pl3:1000GiB", "ebs-io1:40000", "ebs-gp3:6000,500"), turned into expectations.
#pragma once

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
};

// catalog/volumes.json from the first profile directory that has one.
Result<nlohmann::json> load_volume_catalog(const std::vector<std::string>& dirs);

// Errors name the type or argument that is wrong and what the catalog allows.
Result<VolumePerformance> volume_performance(std::string_view volume, const nlohmann::json& catalog);

// "95%", "95" or "0.95" -> 0.95; (0, 1] only.
Result<double> parse_tolerance(std::string_view text);

// One expectation at `tolerance` of what limits this workload on that volume: IOPS when
// IOPS x bs stays under the throughput limit, throughput otherwise.
Expectation volume_expectation(const VolumePerformance& v, const JobSpec& spec, double tolerance);

}  // namespace diskprobe::profiles
