// The latency-versus-load sweep of `diskprobe curve`: which load each step runs, where the
// curve bends (the knee) and when to stop. Pure: the steps' measurements come in as Points.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "diskprobe/spec/job_spec.h"
#include "diskprobe/stats/results.h"

namespace diskprobe::curve {

// One step's load: a queue depth, or a cap on the group's IOPS at a queue depth.
struct Load {
  uint32_t iodepth = 1;
  uint64_t rate_iops = 0;  // the whole group's cap; 0 = none (a queue-depth step)
  double fraction = 0;     // rate steps: the share of the known maximum the cap is
};

// What one step measured, both directions summed.
struct Point {
  Load load;
  double iops = 0, bw_bytes = 0;
  double p50_ns = 0, p99_ns = 0, p999_ns = 0;  // completion latency
  bool steady = false;                         // ended steady, not at --step-time
  double mean_ns = 0;                          // completion latency: what the knee is judged on
};

// The knee: the first step i whose move from step i-1 made the mean completion latency grow by
// more than min_latency_growth while IOPS grew by less than min_iops_gain, or grew at all but
// latency grew more than max_elasticity times as fast (d ln latency / d ln IOPS). The mean, not
// p99: by Little's law it is queue depth / IOPS whatever the device does, where p99 can sit at
// a throttle's slice length from the first step on (cgroup blkio releases I/O every 100 ms). In
// a queue-depth sweep, elasticity 2 is a doubling of the queue that bought under 26% more
// IOPS. Below the knee a step buys
// IOPS at a flat latency; from it on, a step buys mostly latency. When the knee is a wall (IOPS
// gained under min_iops_gain), a later step that beats the best IOPS up to it by more than
// recovery shows it was a dip (a noisy neighbour), not the device's wall: the search goes on.
struct KneeRule {
  double max_elasticity = 2.0;
  double min_iops_gain = 0.05;       // 5%
  double min_latency_growth = 0.25;  // 25%: noise stays under it
  double recovery = 0.10;            // 10%
};

struct Options {
  uint32_t max_iodepth = 256;          // queue-depth steps 1, 2, 4 ... up to this
  std::vector<double> rate_fractions;  // rate steps as shares of max_iops (0.5 = 50%); empty: QD only
  double max_iops = 0;                 // the rate steps' 100%; 0: a queue-depth sweep finds it first
  uint32_t rate_iodepth = 1;           // the rate steps' queue depth when max_iops is given
  unsigned steps_past_knee = 1;        // steps run after the knee, to show the wall
  KneeRule knee;
};

// The index of the knee in `points` (one series, in the order run), or nullopt.
std::optional<size_t> find_knee(const std::vector<Point>& points, const KneeRule& rule);

// The series a curve is judged and drawn on: the rate steps when there are any, else the
// queue-depth steps (a rate sweep without --max-iops runs a queue-depth sweep first).
std::vector<Point> main_series(const std::vector<Point>& points);

// The next step's load after `done` (every step run so far, in order), or nullopt: the sweep
// is over (past the knee, at max_iodepth, or out of rate steps).
std::optional<Load> next_load(const Options& o, const std::vector<Point>& done);

// Why next_load said the sweep is over: "one step past the knee", "at --max-iodepth 64", ...
std::string why_ended(const Options& o, const std::vector<Point>& done);

// The spec of one step: the profile's, at the step's queue depth, its rate cap split over the
// jobs (fio's rate_iops is per job) and the directions (by rwmixread).
JobSpec step_spec(const JobSpec& profile, const Load& load);

// What a step measured, from the engine's Results.
Point point_of(const Results& r, const Load& load);

// "QD 8", "50% (12500 IOPS)"
std::string step_name(const Load& load);

}  // namespace diskprobe::curve
