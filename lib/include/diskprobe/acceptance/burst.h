// Burst credits: a rate that drops and stays down (a gp2/gp3 or ESSD burst ending), found in
// a run's per-second samples, so a volume is judged on what it sustains, not on its burst.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace diskprobe {

struct BurstFinding {
  bool burst = false;         // the rate fell and stayed down
  bool too_short = false;     // fewer samples than a burst and its end need: no finding either way
  double burst_rate = 0;      // mean of the burst's seconds (per second)
  double burst_s = 0;         // how long it lasted
  size_t sustained_from = 0;  // the first sample after the burst; 0 without one
  double sustained_rate = 0;  // mean of the samples from sustained_from on
  double spread = 0;          // their standard deviation
};

// Seconds a burst, and the level after it, must each last to be told from noise.
inline constexpr size_t kMinBurstSamples = 2;
inline constexpr size_t kMinSustainedSamples = 3;
// The sustained level is at most this share of the burst's (a 25% drop or more).
inline constexpr double kBurstDropRatio = 0.75;

// Pure: from per-second rates (IOPS or bytes/s) in order.
BurstFinding find_burst(const std::vector<double>& per_second);

// "burst of 3,000 IOPS for 5 s, then 1,237 IOPS"; `unit` follows each rate.
std::string burst_text(const BurstFinding& b, const std::string& unit, double scale = 1);

}  // namespace diskprobe
