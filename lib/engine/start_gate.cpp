#include "start_gate.h"

#include "clock.h"

namespace diskprobe::engine {

uint64_t StartGate::arrive(bool failed) {
  std::unique_lock lock(m_);
  ++arrived_;
  if (failed) failed_ = true;
  cv_.notify_all();
  cv_.wait(lock, [&] { return start_ns_ != 0 || abort_; });
  return abort_ ? 0 : start_ns_;
}

bool StartGate::release(unsigned expected) {
  std::unique_lock lock(m_);
  cv_.wait(lock, [&] { return arrived_ >= expected; });
  if (failed_ || expected < jobs_) {
    abort_ = true;
  } else {
    start_ns_ = now_ns();
  }
  cv_.notify_all();
  return !abort_;
}

}  // namespace diskprobe::engine
