// BlockMap: which blocks of the region random I/O of several sizes has done this pass, as
// fio's axmap: an I/O starts at the first free block at or after its draw and is cut short at
// the first done block it would run into, so a pass does every block once. Levels of 64-bit
// words, each bit above saying its word below is full, so the next free block is found in a
// few words however full the map is. Only on the shaped path (bssplit or bsrange with fio's
// random map): one call per I/O.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

namespace diskprobe::engine {

class BlockMap {
 public:
  static constexpr uint64_t kNone = UINT64_MAX;

  void reset(uint64_t nblocks) {
    n_ = nblocks;
    levels_.clear();
    counts_.clear();
    uint64_t bits = nblocks;
    do {
      counts_.push_back(bits);
      levels_.emplace_back((bits + 63) / 64, 0);
      bits = (bits + 63) / 64;
    } while (bits > 1);
    free_ = nblocks;
  }
  void clear() { reset(n_); }
  uint64_t blocks() const { return n_; }
  uint64_t free_blocks() const { return free_; }
  bool is_set(uint64_t b) const { return (levels_[0][b / 64] >> (b % 64)) & 1; }

  // The first free block at or after b, wrapping to the start; kNone when every block is done.
  uint64_t next_free(uint64_t b) const {
    if (free_ == 0) return kNone;
    uint64_t f = clear_at_or_after(0, b);
    if (f == kNone) f = clear_at_or_after(0, 0);
    return f;
  }

  // Marks up to `count` free blocks from b on, stopping at the first done one; how many.
  uint64_t set_run(uint64_t b, uint64_t count) {
    uint64_t k = 0;
    for (; k < count && b + k < n_ && !is_set(b + k); ++k) set(b + k);
    return k;
  }

 private:
  // Word i of level l holds every real bit it has (the last word's bits past the level's count are none).
  bool full(size_t l, uint64_t i) const {
    const uint64_t w = levels_[l][i], real = counts_[l] - i * 64;
    return real >= 64 ? w == ~uint64_t{0} : (w & ((uint64_t{1} << real) - 1)) == (uint64_t{1} << real) - 1;
  }
  void set(uint64_t b) {
    --free_;
    for (size_t l = 0; l < levels_.size(); ++l) {
      levels_[l][b / 64] |= uint64_t{1} << (b % 64);
      if (!full(l, b / 64)) return;
      b /= 64;  // that word is full: its bit one level up
    }
  }
  // Level l's first clear real bit at or after p, kNone when none.
  uint64_t clear_at_or_after(size_t l, uint64_t p) const {
    if (p >= counts_[l]) return kNone;
    const auto& words = levels_[l];
    uint64_t w = p / 64;
    uint64_t bits = ~words[w] & (~uint64_t{0} << (p % 64));
    if (bits == 0) {
      // The next word of this level not full: a clear bit one level up.
      if (l + 1 < levels_.size()) {
        w = clear_at_or_after(l + 1, w + 1);
        if (w == kNone) return kNone;
      } else {
        do {
          if (++w >= words.size()) return kNone;
        } while (words[w] == ~uint64_t{0});
      }
      bits = ~words[w];
    }
    const uint64_t at = w * 64 + static_cast<uint64_t>(std::countr_zero(bits));
    return at < counts_[l] ? at : kNone;
  }

  uint64_t n_ = 0, free_ = 0;
  std::vector<std::vector<uint64_t>> levels_;
  std::vector<uint64_t> counts_;  // real bits per level
};

}  // namespace diskprobe::engine
