// The measured window over synthetic times, driven as the engines drive it (JobRun::check,
// Workload::over): per reaped batch the second it counts in, per I/O whether it is measured,
// then the opening at the first reap after the ramp and the stop at the deadline. An N s window
// holds N per-second samples adding up to the total however late its first completion came.
#include <catch2/catch.hpp>
#include <cstdint>
#include <numeric>
#include <vector>

#include "diskprobe/stats/measured_window.h"
#include "diskprobe/stats/results.h"

using namespace diskprobe;

namespace {

constexpr uint64_t kMs = 1'000'000, kSec = 1000 * kMs;

struct Io {
  uint64_t t_prep, t_reaped;  // first submission, reap
};

struct JobSeen {
  MeasuredWindow window;
  std::vector<uint64_t> per_second;
  uint64_t ios = 0;
  bool reached = false;
};

// One job: completions in reap order, one batch each; the ramp ends at ramp_ns.
JobSeen run(uint64_t ramp_ns, uint64_t runtime_ns, const std::vector<Io>& ios, bool open_at_start = false) {
  JobSeen j{MeasuredWindow(runtime_ns), std::vector<uint64_t>(64, 0)};
  if (open_at_start) j.window.open(0);
  for (const Io& io : ios) {
    ptrdiff_t second = j.window.second_of(io.t_reaped);
    if (second >= 0 && j.window.counts(io.t_prep)) {
      j.window.completed_at(io.t_reaped);
      j.per_second[static_cast<size_t>(second)]++;
      j.ios++;
    }
    if (!j.window.is_open() && io.t_reaped >= ramp_ns) j.window.open(io.t_reaped);
    if (j.window.deadline() && io.t_reaped >= j.window.deadline()) j.reached = true;  // the drain follows
  }
  j.per_second.resize(j.window.seconds(j.reached));
  return j;
}

// A device completing one I/O every `gap` from `first` to `last`, each issued `latency`
// before it completed (QD / rate for a throttle with a full queue).
std::vector<Io> stream(uint64_t first, uint64_t last, uint64_t gap, uint64_t latency) {
  std::vector<Io> v;
  for (uint64_t t = first; t <= last; t += gap) v.push_back({t >= latency ? t - latency : 0, t});
  return v;
}

uint64_t sum(const std::vector<uint64_t>& v) { return std::accumulate(v.begin(), v.end(), uint64_t{0}); }

}  // namespace

TEST_CASE("window: a first completion 1.3 s after the ramp still gives 8 samples of an 8 s window",
          "[window][regression]") {
  // 2,111 IOPS at QD32 after a 1 s ramp, but nothing completes from 0.9 s to 2.3 s (a thread
  // starved on a loaded machine, a throttle holding the ramp's I/Os): measured from the planned
  // ramp end, the window was 6.7 s, 7 samples, the last one partial.
  const uint64_t gap = kSec / 2111, qd_latency = 32 * gap;
  auto ios = stream(qd_latency, 900 * kMs, gap, qd_latency);
  auto after = stream(2300 * kMs, 10300 * kMs + qd_latency, gap, qd_latency);  // to the drain's end
  ios.insert(ios.end(), after.begin(), after.end());
  auto j = run(1 * kSec, 8 * kSec, ios);
  CHECK(j.window.start() == 2300 * kMs);
  CHECK(j.window.deadline() == 10300 * kMs);  // 8 s from the opening, not from the ramp's end
  REQUIRE(j.per_second.size() == 8);
  CHECK(sum(j.per_second) == j.ios);
  // Whole seconds of the device's pace; the first lacks the I/Os in flight at the opening,
  // the last holds the drain after the deadline.
  for (size_t s = 1; s < 7; ++s) CHECK(j.per_second[s] >= 2110);
  CHECK(j.per_second[7] > 2111);
}

TEST_CASE("window: ramp 0 opens at the first completion and runs its runtime from there", "[window]") {
  const uint64_t gap = kSec / 1000;
  auto j = run(0, 3 * kSec, stream(40 * kMs, 3041 * kMs, gap, gap));
  CHECK(j.window.start() == 40 * kMs);
  CHECK(j.window.deadline() == 3040 * kMs);
  CHECK(j.per_second.size() == 3);
  CHECK(sum(j.per_second) == j.ios);
  CHECK(j.window.runtime_s() == Approx(3.001));  // to the last completion, the drain's
}

TEST_CASE("window: a throttled backlog across the ramp boundary is not measured, the rest is", "[window]") {
  // QD32 held by a throttle at 100 IOPS: each I/O completes 320 ms after it was issued, so for
  // 320 ms after the opening only the ramp's I/Os complete.
  const uint64_t gap = 10 * kMs, latency = 32 * gap;
  const auto ios = stream(latency, 2500 * kMs + latency, gap, latency);  // the stop at 2.5 s, then its drain
  auto j = run(500 * kMs, 2 * kSec, ios);
  REQUIRE(j.window.is_open());
  CHECK(j.window.start() == 500 * kMs);
  CHECK(j.per_second.size() == 2);
  CHECK(sum(j.per_second) == j.ios);
  CHECK(j.ios == 201);                 // issued from the opening to the stop, every 10 ms
  CHECK(j.per_second[0] == 100 - 32);  // its first 320 ms completed the backlog
}

TEST_CASE("window: a run that went on to its deadline keeps every second, a stalled last one as 0",
          "[window]") {
  const uint64_t gap = kSec / 100;
  auto ios = stream(gap, 3500 * kMs, gap, gap);  // nothing from 3.5 s; the next reap at 6.2 s
  ios.push_back({3500 * kMs, 6200 * kMs});
  auto j = run(0, 5 * kSec, ios);
  REQUIRE(j.reached);
  REQUIRE(j.per_second.size() == 5);
  CHECK(sum(j.per_second) == j.ios);
  CHECK(j.per_second[3] > 0);
  CHECK(j.per_second[4] == 1);                  // the drain, reaped after the deadline: in its last second
  CHECK(j.window.runtime_s() == Approx(6.19));  // to the drain's completion
  // A capped job: its last I/O completed 20 ms before the deadline; its paced wait ended at the
  // deadline, a reap without completions. The window's series still holds every second.
  auto capped = run(0, 5 * kSec, stream(gap, 4995 * kMs, gap, gap));
  CHECK(capped.window.seconds(true) == 5);
  CHECK(capped.window.runtime_s() == Approx(4.98));
  // Stopped before it (a signal): the seconds it reached.
  auto stopped = run(0, 5 * kSec, stream(gap, 2500 * kMs, gap, gap));
  CHECK_FALSE(stopped.reached);
  CHECK(stopped.per_second.size() == 3);
  CHECK(sum(stopped.per_second) == stopped.ios);
}

TEST_CASE("window: a size-bounded run counts to its last completion, without a deadline", "[window]") {
  const uint64_t gap = kSec / 1000;
  auto j = run(0, 0, stream(gap, 2400 * kMs, gap, gap), /*open_at_start=*/true);
  CHECK(j.window.deadline() == 0);
  CHECK(j.ios == 2400);  // every I/O: the window opened at the start
  CHECK(j.per_second.size() == 3);
  CHECK(sum(j.per_second) == j.ios);
  // io_size with a ramp: opens at the first completion after it, still no deadline.
  auto ramped = run(500 * kMs, 0, stream(gap, 2400 * kMs, gap, gap));
  CHECK(ramped.window.deadline() == 0);
  CHECK(ramped.per_second.size() == 2);
  CHECK(sum(ramped.per_second) == ramped.ios);
}

TEST_CASE("window: steadystate's stop after k seconds moves what was counted past it into its last",
          "[window]") {
  const uint64_t gap = kSec / 100;
  auto j = run(0, 30 * kSec, stream(gap, 7200 * kMs, gap, gap));
  REQUIRE(j.window.is_open());
  std::vector<uint64_t> series = j.per_second;
  const uint64_t total = sum(series);
  CHECK_FALSE(j.window.end_after_seconds(31));  // after the deadline: it stays
  REQUIRE(j.window.end_after_seconds(6));
  CHECK(j.window.deadline() == j.window.start() + 6 * kSec);
  j.window.fold(series);
  CHECK(sum(series) == total);
  series.resize(j.window.seconds(true));
  CHECK(series.size() == 6);
  CHECK(sum(series) == total);
}

TEST_CASE("window: jobs whose windows opened apart add up second by second, as the group reports",
          "[window]") {
  const uint64_t gap = kSec / 500;
  auto early = run(1 * kSec, 4 * kSec, stream(gap, 5008 * kMs, gap, 4 * gap));
  auto late = run(1 * kSec, 4 * kSec, stream(2600 * kMs, 6608 * kMs, gap, 4 * gap));  // 1.6 s late
  DirectionStats group, a, b;
  a.ios = early.ios, a.ios_per_second = early.per_second;
  b.ios = late.ios, b.ios_per_second = late.per_second;
  group.merge(a);
  group.merge(b);
  CHECK(early.per_second.size() == 4);
  CHECK(late.per_second.size() == 4);
  CHECK(group.ios_per_second.size() == 4);
  CHECK(sum(group.ios_per_second) == early.ios + late.ios);
}
