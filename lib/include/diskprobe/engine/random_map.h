// BlockPermutation: fio's random map without the map. Random I/O without norandommap must
// touch every block of the region once per pass before it touches any block twice; fio keeps
// a bitmap per job for that (32 MiB per TiB of 4k blocks, per job). Here each pass walks a
// keyed bijection of [0, 2^k), 2^k the smallest power of two >= the block count, and skips
// the values past the end (cycle walking: under two tries per block on average). That is a
// permutation of the blocks in O(1) memory and a few multiplies per I/O; a new key per pass
// gives a new order, as fio's map reset does. Private to lib/.
#pragma once

#include <algorithm>
#include <cstdint>

namespace diskprobe {

class BlockPermutation {
 public:
  void reset(uint64_t nblocks, uint64_t key) {
    n_ = nblocks;
    bits_ = nblocks <= 1 ? 0 : 64 - __builtin_clzll(nblocks - 1);
    mask_ = (uint64_t{1} << bits_) - 1;  // bits_ <= 55: blocks are at least 512 bytes
    shift_ = bits_ / 2 + 1;
    i_ = 0;
    rekey(key);
  }

  // The next block of this pass; a new pass (new order) starts after the last block.
  uint64_t next() {
    for (;;) {
      if (i_ > mask_) [[unlikely]] new_pass();
      uint64_t x = scramble(k_, i_++);
      if (x < n_) [[likely]] return x;
    }
  }

  // The next n blocks at once, the same sequence as n next() calls. The walk works on locals:
  // the stores to `out` may alias the members (all uint64_t), which otherwise were reloaded
  // for every block. For a job whose writes verify does not track (it asks handed_out()).
  void next_n(uint64_t* out, unsigned n) {
    uint64_t i = i_;
    for (unsigned j = 0; j < n;) {
      if (i > mask_) [[unlikely]] {
        new_pass();
        i = 0;
      }
      const uint64_t k0 = k_[0], k1 = k_[1], k2 = k_[2], k3 = k_[3], mask = mask_, nb = n_;
      const int sh = shift_;
      // The rest of this pass, or of n, whichever ends first, with everything in registers.
      for (; j < n && i <= mask; ++i) {
        uint64_t x = ((i ^ k0) & mask) * k1 & mask;
        x ^= x >> sh;
        x = (x * k2) & mask;
        x ^= x >> sh;
        x = (x + k3) & mask;
        if (x < nb) [[likely]] out[j++] = x;
      }
      i_ = i;
    }
  }

  // The permutation is invertible, which lets verify tell when a block was last written
  // without remembering anything per block. `previous`: the pass before the current one.
  // Where block b comes in a pass's walk over [0, 2^k).
  uint64_t index_of(uint64_t b, bool previous) const { return unscramble(previous ? prev_k_ : k_, b); }
  // True when the current pass has handed out block b.
  bool handed_out(uint64_t b) const { return index_of(b, false) < i_; }
  // How many blocks a pass hands out before the one at `index` (its 0-based place in the pass),
  // counting no further than `limit`: a walk over up to 2^k values, for the few blocks a
  // verify reports.
  uint64_t place_of(uint64_t index, bool previous, uint64_t limit) const {
    const uint64_t* k = previous ? prev_k_ : k_;
    uint64_t n = 0;
    for (uint64_t j = 0; j < index && n < limit; ++j) n += scramble(k, j) < n_ ? 1 : 0;
    return n;
  }

 private:
  // Out of line: inlined, its loads and stores were hoisted into every next() (~15
  // instructions an I/O) though it runs once a pass.
  [[gnu::noinline]] void new_pass() {
    i_ = 0;
    std::copy(k_, k_ + 4, prev_k_);
    rekey(k_[0] ^ k_[3]);
  }

  void rekey(uint64_t seed) {
    for (auto& k : k_) {
      uint64_t z = (seed += 0x9e3779b97f4a7c15ull);
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      k = z ^ (z >> 31);
    }
    k_[1] |= 1;  // odd multipliers are invertible modulo 2^k
    k_[2] |= 1;
  }

  // Each step is a bijection on k-bit values: xor with a constant, multiply by an odd number,
  // xor with itself shifted right, add a constant (all modulo 2^k).
  uint64_t scramble(const uint64_t* k, uint64_t x) const {
    x = (x ^ k[0]) & mask_;
    x = (x * k[1]) & mask_;
    x ^= x >> shift_;
    x = (x * k[2]) & mask_;
    x ^= x >> shift_;
    return (x + k[3]) & mask_;
  }

  // scramble's steps undone in reverse. x ^= x >> shift is its own inverse: 2 * shift > k.
  uint64_t unscramble(const uint64_t* k, uint64_t x) const {
    x = (x - k[3]) & mask_;
    x ^= x >> shift_;
    x = (x * odd_inverse(k[2])) & mask_;
    x ^= x >> shift_;
    x = (x * odd_inverse(k[1])) & mask_;
    return (x ^ k[0]) & mask_;
  }

  // a * inverse = 1 modulo 2^64 (Newton's iteration: each step doubles the correct bits).
  static uint64_t odd_inverse(uint64_t a) {
    uint64_t inv = a;  // right in the low 3 bits for any odd a
    for (int i = 0; i < 5; ++i) inv *= 2 - a * inv;
    return inv;
  }

  uint64_t n_ = 1, mask_ = 0, i_ = 0;
  int bits_ = 0, shift_ = 1;
  uint64_t k_[4] = {0, 1, 1, 0};
  uint64_t prev_k_[4] = {0, 1, 1, 0};  // the pass before (verify asks about it)
};

}  // namespace diskprobe
