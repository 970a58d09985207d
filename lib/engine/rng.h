// The engine's random numbers: offsets, read/write mix and write data. Inline: per I/O.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace diskprobe::engine {

__extension__ typedef unsigned __int128 U128;  // -Wpedantic: __int128 is a GNU extension

inline uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// xoshiro256**: a few ns per 64 bits, good enough for offsets and incompressible data.
class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (auto& w : s_) w = splitmix64(seed);
  }
  uint64_t next() {
    const uint64_t result = std::rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = std::rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, n) by Lemire's multiply-shift; the bias is below n / 2^64.
  uint64_t below(uint64_t n) { return static_cast<uint64_t>((static_cast<U128>(next()) * n) >> 64); }
  void fill(uint8_t* p, size_t len) {
    size_t words = len / 8;
    for (size_t i = 0; i < words; ++i) {
      uint64_t v = next();
      std::memcpy(p + i * 8, &v, 8);
    }
    if (len % 8) {
      uint64_t v = next();
      std::memcpy(p + words * 8, &v, len % 8);
    }
  }

 private:
  uint64_t s_[4];
};

}  // namespace diskprobe::engine
