// fio's latency_target: the depth search of DepthSearch against modelled devices.
#include <catch2/catch.hpp>

#include <functional>
#include <vector>

#include "diskprobe/engine/depth_search.h"

using diskprobe::LatencyTarget;
using diskprobe::engine::DepthSearch;
using Step = DepthSearch::Step;

namespace {

constexpr uint64_t kMs = 1'000'000;

struct Trace {
  std::vector<uint32_t> depths;  // the depth of each window run
  Step last = Step::None;
  bool restarted = false;  // a FinalRun came
};

// Windows of 1,000 completions 100 ms long; `slow(depth, i)` says whether completion i of a
// window at that depth is over the target. A Quiesce or FinalRun drains at once (next window).
Trace search(const LatencyTarget& t, uint32_t iodepth, const std::function<bool(uint32_t, int)>& slow, int windows = 40) {
  DepthSearch s(t, iodepth);
  Trace tr;
  uint64_t now = 0;
  s.start(now);
  for (int w = 0; w < windows; ++w) {
    tr.depths.push_back(s.depth());
    Step st = Step::None;
    for (int i = 0; i < 1000 && st == Step::None; ++i) {
      st = s.completed(slow(s.depth(), i) ? t.target_ns + 1 : t.target_ns, true);
      if (st == Step::Fatal) {
        tr.last = st;
        return tr;
      }
    }
    now += 100 * kMs;
    if (st == Step::None) st = s.check(now);
    if (st == Step::FinalRun) tr.restarted = true;
    if (st == Step::Done) {
      tr.last = st;
      return tr;
    }
    if (s.quiescing()) s.begin_cycle(now);
  }
  return tr;
}

}  // namespace

TEST_CASE("latency_target: doubles while a window holds, bisects once one fails, ends a window after", "[depth]") {
  // 0.3% of the I/Os over the target per unit of depth; 99% must hold: depth 3 (0.9%) holds, 4 does not.
  LatencyTarget t{5 * kMs, 100 * kMs, 99.0};
  auto tr = search(t, 128, [](uint32_t d, int i) { return i < static_cast<int>(3 * d); });
  CHECK(tr.last == Step::Done);
  CHECK(tr.restarted);
  // fio's walk: 1, 2, 4 (fails: high 4), (2+4)/2 = 3 holds, (3+4)/2 = 3 again: the final window, then done.
  CHECK(tr.depths == std::vector<uint32_t>{1, 2, 4, 3, 3});
}

TEST_CASE("latency_target: a device that keeps the target at every depth ends at iodepth", "[depth]") {
  LatencyTarget t{5 * kMs, 100 * kMs, 99.9};
  auto tr = search(t, 32, [](uint32_t, int) { return false; });
  CHECK(tr.last == Step::Done);
  CHECK(tr.depths == std::vector<uint32_t>{1, 2, 4, 8, 16, 32, 32});
}

TEST_CASE("latency_target: percentile 100 ramps down at the first slow I/O; at depth 1 the job fails", "[depth]") {
  LatencyTarget t{5 * kMs, 100 * kMs, 100.0};
  // Slow from depth 5 on: 1, 2, 4, 8 (down at once to 6), 5, then 4 holds; (4+5)/2 = 4: final, done.
  auto tr = search(t, 64, [](uint32_t d, int i) { return d >= 5 && i == 500; });
  CHECK(tr.last == Step::Done);
  CHECK(tr.depths == std::vector<uint32_t>{1, 2, 4, 8, 6, 5, 4, 4});
  auto never = search(t, 64, [](uint32_t, int i) { return i == 10; });
  CHECK(never.last == Step::Fatal);
  CHECK(never.depths == std::vector<uint32_t>{1});
}

TEST_CASE("latency_target: below the percentile at depth 1 the job stays there and runs on (fio's)", "[depth]") {
  LatencyTarget t{5 * kMs, 100 * kMs, 99.0};
  auto tr = search(t, 16, [](uint32_t, int i) { return i < 20; }, 10);
  CHECK(tr.last == Step::None);
  CHECK(tr.depths == std::vector<uint32_t>(10, 1));
}

TEST_CASE("latency_target: a window is judged only once its time has passed; none while draining", "[depth]") {
  LatencyTarget t{5 * kMs, 100 * kMs, 99.0};
  DepthSearch s(t, 8);
  s.start(0);
  for (int i = 0; i < 100; ++i) s.completed(kMs, true);
  CHECK(s.check(99 * kMs) == Step::None);
  CHECK(s.depth() == 1);
  CHECK(s.check(100 * kMs) == Step::None);  // held: doubled, a new window
  CHECK(s.depth() == 2);
  CHECK(s.check(150 * kMs) == Step::None);
  CHECK(s.depth() == 2);
  // A failing window: down, and no judging until the drain is over.
  for (int i = 0; i < 100; ++i) s.completed(10 * kMs, true);
  CHECK(s.check(200 * kMs) == Step::Quiesce);
  CHECK(s.quiescing());
  CHECK(s.completed(10 * kMs, true) == Step::None);
  CHECK(s.check(400 * kMs) == Step::None);
  s.begin_cycle(400 * kMs);
  CHECK_FALSE(s.quiescing());
  // Slow I/Os outside the measured part (the ramp) do not count against a window.
  for (int i = 0; i < 100; ++i) s.completed(10 * kMs, false);
  CHECK(s.check(500 * kMs) == Step::FinalRun);  // depth 1 held, (1+2)/2 = 1 again
}

TEST_CASE("latency_target off: the depth is the iodepth", "[depth]") {
  DepthSearch s(LatencyTarget{}, 16);
  CHECK_FALSE(s.on());
  CHECK(s.depth() == 16);
}
