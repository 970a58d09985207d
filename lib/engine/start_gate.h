// Holds every job at the start line until all have opened their target and set up their
// ring, so the measured part starts together and a job that cannot start stops the others.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace diskprobe::engine {

class StartGate {
 public:
  explicit StartGate(unsigned jobs) : jobs_(jobs) {}
  // A job is ready (or failed); waits for the start. Returns the start time, 0 = abort.
  uint64_t arrive(bool failed);
  // Waits for all jobs (or `expected` of them); starts them unless one failed.
  bool release(unsigned expected);
  uint64_t start_ns() const { return start_ns_; }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  unsigned jobs_;
  unsigned arrived_ = 0;
  bool failed_ = false;
  bool abort_ = false;
  uint64_t start_ns_ = 0;
};

}  // namespace diskprobe::engine
