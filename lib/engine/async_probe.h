// force_async=auto on a bio-based device (zram): such a device has no nowait support, so
// io_uring hands every I/O to its io-wq workers anyway. Marked IOSQE_ASYNC, an I/O goes
// there directly and io-wq runs such work concurrently, a worker per CPU; unmarked, one
// worker takes the queue while it does not block. Which is faster depends on what an I/O
// costs the device: on this 2-vCPU VM, 128k reads of written zram ran 1.8x faster marked,
// 4k reads of never-written zram (a zero fill each) 1.5x slower. So each job measures both,
// kProbeNs each after a kProbeWarmNs warm-up, before the measured part (like ramp_time),
// and keeps IOSQE_ASYNC only where it completed kProbeMargin more I/Os. Marked I/O goes
// first: the extra workers it starts stay (io-wq keeps idle workers for seconds) and take
// unmarked I/O too, so the unmarked window measures what the run would get after it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace diskprobe::engine {

constexpr uint64_t kProbeWarmNs = 100'000'000;
constexpr uint64_t kProbeNs = 200'000'000;
constexpr uint64_t kProbeRampNs = kProbeWarmNs + 2 * kProbeNs;  // the least ramp a probing run has
constexpr double kProbeMargin = 1.05;

struct AsyncProbe {
  bool ran = false;
  uint64_t ios_plain = 0, ios_async = 0;  // completions in each kProbeNs window
  bool kept = false;                      // IOSQE_ASYNC on every I/O for the run
};

// One job's probe: warm-up and kProbeNs with IOSQE_ASYNC, kProbeNs without, then keep the
// faster. Completions count in the window they are reaped in. Asked once per reaped batch.
class AsyncProbeRun {
 public:
  // Starts at `t`; returns the async_every for the warm-up (every SQE marked).
  uint32_t start(uint64_t t) {
    result_.ran = true;
    phase_ = 0;
    end_ = t + kProbeWarmNs;
    return 1;
  }
  bool due(uint64_t t) const { return phase_ >= 0 && t >= end_; }
  // A window is over at `t` with `reaped` CQEs seen in all; returns the async_every from here.
  uint32_t step(uint64_t t, uint64_t reaped);
  const AsyncProbe& result() const { return result_; }

 private:
  AsyncProbe result_;
  int phase_ = -1;  // -1: not probing
  uint64_t end_ = 0, mark_ = 0;
};

// What force_async=auto found, from job 0's probe (every job probes its own ring at the
// same time and keeps its own choice); "" when nothing was probed.
std::string probe_note(const std::string& path, const std::vector<AsyncProbe>& probes);

}  // namespace diskprobe::engine
