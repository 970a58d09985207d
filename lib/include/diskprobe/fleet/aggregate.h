// Many hosts' run reports merged: one row per volume, fleet percentiles of IOPS and p99
// latency per profile (different workloads are never mixed), and the volumes that failed
// their expectations.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "diskprobe/report/run_summary.h"

namespace diskprobe {

struct VolumeRow {
  RunSummary run;
  double iops = kUnset;  // read + write
  double bw_bytes_per_s = kUnset;
  double p99_ns = kUnset;  // the worse of the directions that did I/O
};

// Nearest-rank percentiles of one metric across a profile's volumes.
struct FleetStat {
  std::string profile;
  std::string metric;  // "IOPS", "p99 latency"
  std::string unit;    // "IOPS", "ns"
  size_t volumes = 0;
  double p50 = kUnset, p90 = kUnset, p99 = kUnset;
  double worst = kUnset;  // lowest IOPS, highest latency
  double best = kUnset;
};

struct Fleet {
  std::vector<VolumeRow> volumes;   // in the order given
  std::vector<FleetStat> stats;     // per profile: IOPS, then p99 latency
  std::vector<size_t> failed;       // indexes into volumes that failed an expectation
  size_t without_expectations = 0;  // reports that carried none
};

Fleet aggregate_runs(const std::vector<RunSummary>& runs);
// Nearest rank: the smallest value with at least p% of the values at or below it.
double nearest_rank(std::vector<double> values, double p);

std::string fleet_text(const Fleet& f);
nlohmann::json fleet_json(const Fleet& f);

}  // namespace diskprobe
