// Where a job runs: its CPUs (one, or cpus_allowed shared by jobs) and its thread's stack.
#pragma once

#include <pthread.h>

#include <cstddef>
#include <vector>

#include "diskprobe/base/status.h"

namespace diskprobe::engine {

// Pins the calling thread to `cpus`; empty = unpinned.
Status pin_to(const std::vector<int>& cpus);

// Job threads get an explicit, small stack: the hot loop keeps its state on the heap, and
// glibc's default (RLIMIT_STACK, usually 8 MiB) reserves 32 GiB of address space for 4096
// jobs. 512 KiB leaves room for sanitizer builds. Set as the process default only while the
// jobs are spawned (std::thread takes no attributes), then put back.
constexpr size_t kJobStackBytes = 512 << 10;

class JobStackSize {
 public:
  JobStackSize();
  ~JobStackSize();
  JobStackSize(const JobStackSize&) = delete;
  JobStackSize& operator=(const JobStackSize&) = delete;

 private:
  pthread_attr_t old_{};
  bool set_ = false;
};

}  // namespace diskprobe::engine
