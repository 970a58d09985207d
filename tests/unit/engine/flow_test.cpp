// fio's flow: jobs of one flow_id issue I/Os in the proportion of their weights.
#include <catch2/catch.hpp>

#include "diskprobe/engine/flow.h"

using diskprobe::engine::FlowGroup;
using diskprobe::engine::FlowShare;

TEST_CASE("flow: each job's I/Os in the proportion of its weight, however often it asks", "[flow]") {
  for (auto [wa, wb] : {std::pair{1u, 8u}, std::pair{2u, 2u}, std::pair{3u, 5u}}) {
    FlowGroup g;
    g.total_weight = wa + wb;
    FlowShare a(&g, wa), b(&g, wb);
    uint64_t na = 0, nb = 0;
    // a asks five times as often as b: the flow holds a back to its share.
    for (int i = 0; i < 90'000; ++i) {
      if (a.may_issue()) ++na;
      if (i % 5 == 0 && b.may_issue()) ++nb;
    }
    INFO(wa << ":" << wb << " gave " << na << ":" << nb);
    REQUIRE(nb > 1000);
    const double want = static_cast<double>(wa) / wb, got = static_cast<double>(na) / static_cast<double>(nb);
    CHECK(std::abs(got - want) <= 0.01 * want);
  }
}

TEST_CASE("flow: a job that leaves takes its weight and I/Os out; the other goes on alone", "[flow]") {
  FlowGroup g;
  g.total_weight = 9;
  FlowShare a(&g, 1);
  {
    FlowShare b(&g, 8);
    for (int i = 0; i < 100; ++i) {
      (void)a.may_issue();
      (void)b.may_issue();
    }
  }  // b ended
  CHECK(g.total_weight.load() == 1);
  int went = 0;
  for (int i = 0; i < 100; ++i) went += a.may_issue() ? 1 : 0;
  CHECK(went == 100);  // alone in the flow, never held
}
