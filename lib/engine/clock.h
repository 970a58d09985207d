// The engine's clock: CLOCK_MONOTONIC in nanoseconds. Inline: it is read per batch.
#pragma once

#include <ctime>

#include <cstdint>

namespace diskprobe::engine {

inline constexpr uint64_t kNsPerSec = 1'000'000'000;

inline uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * kNsPerSec + static_cast<uint64_t>(ts.tv_nsec);
}

inline uint64_t round_up(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }

}  // namespace diskprobe::engine
