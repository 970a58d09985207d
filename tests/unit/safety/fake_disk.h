// A block device in memory for the sampler's tests: layers painted bottom to top (what the
// engine wrote, foreign bytes, zeroes), read through BlockReader with injectable failures.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "diskprobe/device/block_header.h"
#include "diskprobe/base/status.h"
#include "diskprobe/safety/sampler.h"

namespace fake {

// Deterministic noise that never contains the header magic by accident.
inline uint8_t noise(uint64_t x, uint64_t salt) {
  uint64_t h = (x + salt) * 0x9e3779b97f4a7c15ull;
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 32;
  return static_cast<uint8_t>(h | 1);  // never zero, so a painted byte is never blank
}

class Disk final : public diskprobe::safety::BlockReader {
 public:
  explicit Disk(uint64_t size) : size_(size) {}

  // The engine's writes: blocks of `bs` at start + k*bs, k < nblocks, where `written(k)`;
  // each call is one run, with its own run_id.
  void blocks(uint64_t start, uint64_t bs, uint64_t nblocks, uint64_t device_id,
              std::function<bool(uint64_t)> written = nullptr, uint64_t header_offset_skew = 0,
              bool content = false) {
    const uint64_t run_id = ++runs_;
    layers_.push_back([=](uint8_t* buf, uint64_t off, uint64_t len) {
      if (off + len <= start) return;
      uint64_t first = off > start ? (off - start) / bs : 0;
      for (uint64_t k = first; k < nblocks; ++k) {
        uint64_t b = start + k * bs;
        if (b >= off + len) break;
        if (written && !written(k)) continue;
        uint8_t head[diskprobe::kBlockHeaderBytes];
        diskprobe::BlockHeader h;
        h.device_id = device_id;
        h.run_id = run_id;
        h.offset = b + header_offset_skew;
        h.seq = k + 1;
        if (content) {  // fio's dedupe/compress buffers: the header keys the content, 7 contents over and over
          h.version = diskprobe::kContentHeaderVersion;
          h.offset = 0x5eed0000 + k % 7;
          h.seq = 0;
        }
        diskprobe::encode_block_header(head, h);
        uint64_t lo = std::max(b, off), hi = std::min(b + bs, off + len);
        for (uint64_t x = lo; x < hi; ++x) {
          uint64_t in = x - b;
          buf[x - off] = in < sizeof head ? head[in] : noise(x, device_id);
        }
      }
    });
  }
  void random(uint64_t offset, uint64_t len) { fill(offset, len, true); }
  // These bytes at `offset` (a superblock, a label).
  void put(uint64_t offset, std::vector<uint8_t> bytes) {
    layers_.push_back([=](uint8_t* buf, uint64_t off, uint64_t n) {
      for (uint64_t i = 0; i < bytes.size(); ++i) {
        if (offset + i >= off && offset + i < off + n) buf[offset + i - off] = bytes[i];
      }
    });
  }
  void zero(uint64_t offset, uint64_t len) { fill(offset, len, false); }

  // Reads touching [fail_from, fail_to) fail with `fail_errno` (0: a short read instead).
  uint64_t fail_from = 0, fail_to = 0;
  int fail_errno = EIO;
  // false: reads succeed and leave the buffer as it was (null_blk without memory_backed).
  bool fills_buffer = true;
  mutable std::vector<std::pair<uint64_t, size_t>> reads;

  diskprobe::Status read(uint64_t offset, uint8_t* buf, size_t len) const override {
    reads.emplace_back(offset, len);
    if (offset + len > size_) return diskprobe::make_error("read past the end");
    if (offset < fail_to && offset + len > fail_from) {
      if (fail_errno) return diskprobe::make_error(diskprobe::errno_message("pread", "fake", fail_errno));
      return diskprobe::make_error("pread(fake): short read, 512 of " + std::to_string(len) + " bytes");
    }
    if (!fills_buffer) return diskprobe::Ok{};
    std::memset(buf, 0, len);
    for (const auto& paint : layers_) paint(buf, offset, len);
    return diskprobe::Ok{};
  }

 private:
  void fill(uint64_t offset, uint64_t len, bool rnd) {
    layers_.push_back([=](uint8_t* buf, uint64_t off, uint64_t n) {
      uint64_t lo = std::max(offset, off), hi = std::min(offset + len, off + n);
      if (lo >= hi) return;
      if (!rnd) return static_cast<void>(std::memset(buf + (lo - off), 0, hi - lo));
      for (uint64_t x = lo; x < hi; ++x) buf[x - off] = noise(x, 0x5eed);
    });
  }

  uint64_t size_;
  uint64_t runs_ = 0;
  std::vector<std::function<void(uint8_t*, uint64_t, uint64_t)>> layers_;
};

}  // namespace fake
