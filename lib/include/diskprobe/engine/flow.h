// fio's flow (JobSpec::flow): the I/O counts of the jobs of one flow_id kept in the proportion
// of their weights, shared by their threads.
#pragma once

#include <atomic>
#include <cstdint>

namespace diskprobe::engine {

struct FlowGroup {
  std::atomic<int64_t> issued{1};        // every job's I/Os of the flow, from 1 (fio's, so never 0)
  std::atomic<int64_t> total_weight{0};  // the weights of the jobs still running
};

// One job's part in a flow.
class FlowShare {
 public:
  FlowShare() = default;
  FlowShare(FlowGroup* g, uint32_t weight) : group_(g), weight_(weight) {}
  FlowShare(const FlowShare&) = delete;
  FlowShare& operator=(const FlowShare&) = delete;
  // fio's leaving job takes its weight and its I/Os out, so the others' shares stand.
  ~FlowShare() { leave(); }

  // fio's flow_threshold_exceeded: true (and the I/O counted) when the job's share of the flow's
  // I/Os so far is within its share of the weights; false: the job waits.
  bool may_issue() {
    const auto all = static_cast<double>(group_->issued.load(std::memory_order_relaxed));
    const auto weights = static_cast<double>(group_->total_weight.load(std::memory_order_relaxed));
    if (static_cast<double>(mine_) / all > static_cast<double>(weight_) / weights) return false;
    group_->issued.fetch_add(1, std::memory_order_relaxed);
    ++mine_;
    return true;
  }
  void leave() {
    if (!group_) return;
    group_->total_weight.fetch_sub(weight_, std::memory_order_relaxed);
    group_->issued.fetch_sub(mine_, std::memory_order_relaxed);
    group_ = nullptr;
  }

 private:
  FlowGroup* group_ = nullptr;
  uint32_t weight_ = 0;
  int64_t mine_ = 0;
};

}  // namespace diskprobe::engine
