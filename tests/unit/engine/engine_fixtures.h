// Helpers shared by the engine unit tests: a sparse temporary file to run on, and the io_uring
// check that turns a test into a warning where containers forbid io_uring.
#pragma once

#include <fcntl.h>
#include <liburing.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <string>
#include <vector>

#include "diskprobe/engine/engine.h"

namespace engine_fixtures {

// A size-bounded job of 4k I/Os at QD4 over `size` bytes, direct.
inline diskprobe::JobSpec sized_spec(diskprobe::RwMode rw, uint64_t size, const char* name = "engine-test") {
  diskprobe::JobSpec s;
  s.name = name;
  s.rw = rw;
  s.bs = 4096;
  s.iodepth = 4;
  s.time_based = false;
  s.runtime_s = 0;
  s.size = size;
  s.direct = true;
  return s;
}

// The longest a time-based window may last: its runtime, then the drain of the I/Os in flight
// at the deadline. Each of those was issued by it (give or take the loop's own turn, 20 ms)
// and took at most the slowest latency measured. A fixed bound fails on a slow disk: a file
// on this machine's disk once held one write 107 ms (0.607 s for 0.5), and no bug.
inline double window_bound_s(double runtime_s, const diskprobe::Histogram& lat) {
  return runtime_s + static_cast<double>(lat.max()) / 1e9 + 0.02;
}

// run_jobs with its stop flag set `after_ms` into the run, as a signal would: the result, and
// how long the call took in seconds.
struct StoppedRun {
  diskprobe::Result<diskprobe::Results> result;
  double took_s;
};
inline StoppedRun run_stopped_after(const diskprobe::JobSpec& spec, const diskprobe::Target& target, int after_ms) {
  std::atomic<bool> stop{false};
  diskprobe::EngineOptions opts;
  opts.stop = &stop;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(after_ms));
    stop = true;
  });
  auto t0 = std::chrono::steady_clock::now();
  auto r = diskprobe::run_jobs(spec, target, opts);
  stopper.join();
  return {std::move(r), std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()};
}

// A sparse file of `size` bytes, removed when the test ends.
class TempFile {
 public:
  explicit TempFile(uint64_t size, const char* dir = "/var/tmp") : size_(size) {
    path_ = std::string(dir) + "/diskprobe-engine-test-XXXXXX";
    int fd = ::mkstemp(path_.data());
    REQUIRE(fd >= 0);
    REQUIRE(::ftruncate(fd, static_cast<off_t>(size)) == 0);
    ::close(fd);
  }
  ~TempFile() { ::unlink(path_.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  // Writes every block, so I/O to the file takes no allocation path in the filesystem (a
  // block device has none), as for a test of ring modes rather than of ext4's holes.
  void allocate() const {
    int fd = ::open(path_.c_str(), O_WRONLY);
    REQUIRE(fd >= 0);
    std::vector<uint8_t> zeros(1 << 20);
    for (uint64_t at = 0; at < size_; at += zeros.size()) {
      size_t n = static_cast<size_t>(std::min<uint64_t>(zeros.size(), size_ - at));
      REQUIRE(::pwrite(fd, zeros.data(), n, static_cast<off_t>(at)) == static_cast<ssize_t>(n));
    }
    REQUIRE(::fsync(fd) == 0);
    ::close(fd);
  }

  diskprobe::Target target(uint32_t lbs = 512) const { return diskprobe::Target{path_, size_, lbs}; }
  const std::string& path() const { return path_; }

  std::vector<uint8_t> read_all() const {
    std::vector<uint8_t> data(size_);
    int fd = ::open(path_.c_str(), O_RDONLY);
    REQUIRE(fd >= 0);
    REQUIRE(::pread(fd, data.data(), data.size(), 0) == static_cast<ssize_t>(data.size()));
    ::close(fd);
    return data;
  }

  // Changes bytes behind the engine's back.
  void poke(uint64_t offset, const std::string& bytes) const {
    int fd = ::open(path_.c_str(), O_WRONLY);
    REQUIRE(fd >= 0);
    REQUIRE(::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset)) ==
            static_cast<ssize_t>(bytes.size()));
    ::fsync(fd);
    ::close(fd);
  }

 private:
  std::string path_;
  uint64_t size_ = 0;
};

// Containers often forbid io_uring (seccomp, kernel.io_uring_disabled); the engine tests then
// only say so, as a skipped test would.
inline bool uring_available() {
  io_uring ring;
  if (io_uring_queue_init(4, &ring, 0) < 0) return false;
  io_uring_queue_exit(&ring);
  return true;
}

}  // namespace engine_fixtures

// Catch2 v2 has no SKIP(): say so and pass.
#define SKIP_WITHOUT_URING()                                                                      \
  do {                                                                                            \
    if (!engine_fixtures::uring_available()) {                                                    \
      WARN("io_uring is not available here (seccomp or kernel.io_uring_disabled): test skipped"); \
      return;                                                                                     \
    }                                                                                             \
  } while (0)
