#include "diskprobe/safety/sampler.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <numeric>
#include <random>

#include "diskprobe/base/aligned_buffer.h"
#include "diskprobe/device/block_header.h"

namespace diskprobe::safety {
namespace {

constexpr size_t kAlign = kDirectAlign;
constexpr uint64_t kFirstLookbackChunk = 64 * 1024;  // most blocks are at most this large

using Buffer = AlignedBuffer;

class FdReader final : public BlockReader {
 public:
  FdReader(int fd, std::string path, uint32_t lbs) : fd_(fd), path_(std::move(path)), lbs_(lbs ? lbs : 512) {}

  Status read(uint64_t offset, uint8_t* buf, size_t len) const override {
    bool direct = offset % lbs_ == 0 && len % lbs_ == 0 && reinterpret_cast<uintptr_t>(buf) % kAlign == 0;
    int flags = ::fcntl(fd_, F_GETFL);
    bool switched =
        direct && flags >= 0 && !(flags & O_DIRECT) && ::fcntl(fd_, F_SETFL, flags | O_DIRECT) == 0;
    Status st = Ok{};
    size_t done = 0;
    while (done < len) {
      ssize_t r = ::pread(fd_, buf + done, len - done, static_cast<off_t>(offset + done));
      if (r < 0 && errno == EINTR) continue;
      std::string where = path_ + " at offset " + std::to_string(offset + done);
      if (r < 0) {
        st = make_error(errno_message("pread", where, errno));
        break;
      }
      if (r == 0) {
        st = make_error("pread(" + where + "): short read, " + std::to_string(done) + " of " +
                        std::to_string(len) + " bytes");
        break;
      }
      done += static_cast<size_t>(r);
    }
    if (switched) ::fcntl(fd_, F_SETFL, flags);
    return st;
  }

 private:
  int fd_;
  std::string path_;
  uint32_t lbs_;
};

// The buffer is filled with this before each read: a device that completes a read without
// filling the buffer (null_blk without memory_backed) leaves it there. Derived from the seed
// and the offset, so no data on a disk can be written to match it in advance.
uint64_t poison_word(uint64_t seed, uint64_t offset) {
  uint64_t h = (seed ^ 0x504f49534f4e2121ull) + offset * 0x9e3779b97f4a7c15ull;
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 29);
}

void poison(uint8_t* buf, size_t len, uint64_t seed, uint64_t offset) {
  for (size_t i = 0; i + 8 <= len; i += 8) {
    uint64_t w = poison_word(seed, offset + i);
    std::memcpy(buf + i, &w, 8);
  }
}

// Zeroes every 512-byte sector the read left poisoned (it returned no data there, which is
// not data on the disk); returns how many bytes that was.
size_t unpoison(uint8_t* buf, size_t len, uint64_t seed, uint64_t offset) {
  size_t left = 0;
  for (size_t s = 0; s < len; s += 512) {
    size_t n = std::min<size_t>(512, len - s);
    bool poisoned = n % 8 == 0;
    for (size_t i = s; poisoned && i < s + n; i += 8) {
      uint64_t w;
      std::memcpy(&w, buf + i, 8);
      poisoned = w == poison_word(seed, offset + i);
    }
    if (!poisoned) continue;
    std::memset(buf + s, 0, n);
    left += n;
  }
  return left;
}

enum class Owner { None, Own, Other };

// A valid header: the magic, a known version, and an offset field that says it sits where it
// was written (absolute position `at`), or a content block's on a sector boundary.
struct Header {
  Owner owner = Owner::None;
  uint64_t at = 0;
  uint64_t run = 0;
};

// A content block's header (fio's dedupe and compress buffers) keys its content, not its place:
// it counts where it stands on a sector boundary.
Header header_at(const uint8_t* p, size_t avail, uint64_t abs, uint64_t device_id) {
  auto h = decode_block_header(p, avail);
  if (!h) return Header{};
  if (h->version == kContentHeaderVersion ? abs % 512 != 0 : h->offset != abs) return Header{};
  return Header{h->device_id == device_id ? Owner::Own : Owner::Other, abs, h->run_id};
}

// Every valid header in buf[0, len) (buf sits at absolute `base`), in order.
std::vector<Header> headers_in(const uint8_t* buf, size_t len, uint64_t base, uint64_t device_id) {
  std::vector<Header> found;
  size_t from = 0;
  while (from + kBlockHeaderBytes <= len) {
    const void* m = ::memmem(buf + from, len - from, kBlockMagic, sizeof kBlockMagic);
    if (!m) break;
    size_t at = static_cast<size_t>(static_cast<const uint8_t*>(m) - buf);
    Header h = header_at(buf + at, len - at, base + at, device_id);
    if (h.owner != Owner::None) found.push_back(h);
    from = at + 1;
  }
  return found;
}

const char* describe(Owner o) {
  return o == Owner::Other ? "diskprobe data written to another device" : "data without a diskprobe header";
}

// One sampled place, read in the first pass and judged in the second, once the block size of
// every run seen anywhere in the sample is known.
struct Window {
  uint64_t offset = 0;
  Buffer buf;
  size_t len = 0;
  std::vector<Header> headers;
  Header before;  // the nearest valid header before the window, when its start is not a header
};

class Sampler {
 public:
  Sampler(const BlockReader& r, uint64_t size, uint64_t device_id, uint64_t seed, SampleReport& out)
      : r_(r), size_(size), id_(device_id), seed_(seed), out_(out) {}

  // Pass 1: reads a window, its headers, and what precedes it when it starts inside a block.
  bool read_window(uint64_t offset, size_t len) {
    Window w;
    w.offset = offset;
    w.len = len;
    w.buf = aligned_buffer(len);
    if (!w.buf) return fail("cannot allocate " + std::to_string(len) + " bytes for the sample");
    size_t unfilled = 0;
    if (!read(offset, w.buf.get(), len, &unfilled)) return false;
    out_.windows++;
    if (unfilled == len) {
      out_.no_data_windows++;
      return true;
    }
    const uint8_t* b = w.buf.get();
    const uint8_t* nz = std::find_if(b, b + len, [](uint8_t c) { return c != 0; });
    if (nz == b + len) {
      out_.zero_windows++;
      return true;
    }
    w.headers = headers_in(b, len, offset, id_);
    learn(w.headers);
    size_t first = static_cast<size_t>(nz - b);
    if (w.headers.empty() || w.headers.front().at != offset + first) {
      if (!lookback(offset, &w.before) || !learn_aligned(offset)) return false;
    }
    windows_.push_back(std::move(w));
    return true;
  }

  // Pass 2: every nonzero byte of every nonzero window must lie in a block of this device's
  // runs: [header, header + that run's write size).
  bool judge() {
    for (const auto& w : windows_) {
      auto other = std::find_if(w.headers.begin(), w.headers.end(),
                                [](const Header& h) { return h.owner == Owner::Other; });
      if (other != w.headers.end()) {
        foreign(other->at, Owner::Other);
        continue;
      }
      uint64_t at = 0;
      if (!unaccounted(w, &at)) return false;
      if (at == kNone) {
        out_.own_windows++;
      } else {
        foreign(at, w.headers.empty() && w.before.owner == Owner::Other ? Owner::Other : Owner::None);
      }
    }
    return true;
  }

  bool failed() const { return !out_.error.empty(); }

 private:
  static constexpr uint64_t kNone = UINT64_MAX;

  bool fail(std::string e) {
    out_.error = std::move(e);
    return false;
  }

  // Poisons `buf`, reads, and zeroes what the read did not fill (`unfilled` bytes).
  bool read(uint64_t offset, uint8_t* buf, size_t len, size_t* unfilled = nullptr) {
    poison(buf, len, seed_, offset);
    auto st = r_.read(offset, buf, len);
    if (!st) return fail(st.error());
    out_.bytes_read += len;
    size_t left = unpoison(buf, len, seed_, offset);
    out_.unfilled_bytes += left;
    if (unfilled) *unfilled = left;
    return true;
  }

  void foreign(uint64_t at, Owner o) { out_.foreign.push_back(Foreign{at, describe(o)}); }

  // Every block of one run starts at region_start + k * bs, so the distance between two of its
  // headers is a multiple of its write size: the gcd of those distances is that size, or a
  // multiple of it when the run wrote sparsely (then the check is looser, never stricter).
  void learn(const std::vector<Header>& hs) {
    for (const auto& h : hs) {
      if (h.owner != Owner::Own) continue;
      auto [it, added] = runs_.try_emplace(h.run, Run{h.at, 0});
      if (added) continue;
      uint64_t d = h.at > it->second.origin ? h.at - it->second.origin : it->second.origin - h.at;
      it->second.bs = std::gcd(it->second.bs, d);
    }
  }

  // The write size of `run`; 0 when the sample saw only one of its blocks.
  uint64_t bs_of(uint64_t run) const {
    auto it = runs_.find(run);
    return it == runs_.end() ? 0 : it->second.bs;
  }

  // Where the block of `h` ends: its run's write size on, or (size unknown) at `next`.
  uint64_t block_end(const Header& h, uint64_t next) const {
    uint64_t bs = bs_of(h.run);
    return bs ? std::min(h.at + bs, next) : next;
  }

  // The first nonzero byte of window `w` that lies in no block of this device's runs, or kNone.
  bool unaccounted(const Window& w, uint64_t* at) {
    const uint64_t end = w.offset + w.len;
    // Blocks in order: the one begun before the window, then one per header in it.
    uint64_t covered = w.offset;
    auto next_header = [&](size_t i) { return i < w.headers.size() ? w.headers[i].at : end; };
    if (w.before.owner == Owner::Own) covered = std::max(covered, block_end(w.before, next_header(0)));
    uint64_t pos = w.offset;
    for (size_t i = 0; i <= w.headers.size(); ++i) {
      uint64_t gap_end = next_header(i);
      // [max(pos, covered), gap_end) lies in no block seen so far: zero, or a block whose
      // header a later run of this device overwrote, or foreign.
      uint64_t x = std::max(pos, covered);
      while (x < gap_end) {
        const uint8_t* b = w.buf.get();
        const uint8_t* nz = std::find_if(b + (x - w.offset), b + (gap_end - w.offset),
                                         [](uint8_t c) { return c != 0; });
        if (nz == b + (gap_end - w.offset)) break;
        x = w.offset + static_cast<uint64_t>(nz - b);
        uint64_t slot_end = 0;
        if (!overwritten_block(w, x, &slot_end)) return false;
        if (slot_end <= x) {
          *at = x;
          return true;
        }
        x = slot_end;
      }
      if (i == w.headers.size()) break;
      pos = gap_end;
      covered = block_end(w.headers[i], next_header(i + 1));
    }
    *at = kNone;
    return true;
  }

  // Byte `x` lies in no block whose header is still there. It is still this device's when, for
  // a run seen with a known write size, the start of the block slot holding `x` carries a
  // header of this device: a later run overwrote the start of that run's block (4 KiB
  // random writes over a 1 MiB run). `slot_end`: the end of that slot, or 0.
  bool overwritten_block(const Window& w, uint64_t x, uint64_t* slot_end) {
    *slot_end = 0;
    for (const auto& [run, r] : runs_) {
      if (!r.bs || r.bs > kMaxAlignedLookback) continue;
      uint64_t rel = x >= r.origin ? (x - r.origin) % r.bs : r.bs - (r.origin - x) % r.bs;
      if (rel == r.bs) rel = 0;
      uint64_t start = x - rel;
      if (start == x) continue;  // x itself is a slot start with no header
      Header h;
      if (!header_starting_at(w, start, &h)) return false;
      if (h.owner == Owner::Own) {
        *slot_end = start + r.bs;
        return true;
      }
    }
    return aligned_block(w, x, slot_end);
  }

  // The power-of-two aligned block starts before `x` (a run of large blocks from offset 0
  // under a later run of small ones, whose header the linear look-back found first): a header
  // of this device there whose block reaches `x` (to the window end while its size is unknown).
  bool aligned_block(const Window& w, uint64_t x, uint64_t* slot_end) {
    for (uint64_t b = 2 * kAlign; b <= kMaxAlignedLookback; b *= 2) {
      uint64_t p = x & ~(b - 1);
      if (p == x) continue;
      Header h;
      if (!header_starting_at(w, p, &h)) return false;
      if (h.owner == Owner::Own) {
        learn({h});
        uint64_t bs = bs_of(h.run);
        uint64_t end = bs ? p + bs : w.offset + w.len;
        if (end > x) {
          *slot_end = end;
          return true;
        }  // a smaller block of a later run: the larger one may start further back
      }
      if (p == 0) break;
    }
    return true;
  }

  // The headers at the power-of-two aligned starts before window start `s`, learnt before any
  // window is judged: a run of large blocks is then known by its write size even where a later
  // run's small block replaced the header of the block a window sits in (4 KiB random writes
  // over a 4 MiB sequential run: that window is judged by the 4 MiB slot, not refused). Costs
  // up to one 4 KiB read per power of two per such window; the large starts are shared.
  bool learn_aligned(uint64_t s) {
    for (uint64_t b = 2 * kAlign; b <= kMaxAlignedLookback; b *= 2) {
      uint64_t p = s & ~(b - 1);
      if (p == s) continue;
      Header h;
      if (!header_on_disk(p, &h)) return false;
      learn({h});
      if (p == 0) break;
    }
    return true;
  }

  // The header at `p` before `x` in window `w`: among the window's own headers when `p` is in
  // it, else read from the disk.
  bool header_starting_at(const Window& w, uint64_t p, Header* h) {
    if (p < w.offset) return header_on_disk(p, h);
    auto it = std::find_if(w.headers.begin(), w.headers.end(), [&](const Header& k) { return k.at == p; });
    *h = it != w.headers.end() ? *it : Header{};
    return true;
  }

  // Read once per offset: the look-backs of many windows meet at the same aligned starts.
  bool header_on_disk(uint64_t p, Header* h) {
    if (auto it = seen_.find(p); it != seen_.end()) {
      *h = it->second;
      return true;
    }
    if (!small_) small_ = aligned_buffer(kAlign);
    if (!small_) return fail("cannot allocate the sample buffer");
    size_t len = static_cast<size_t>(std::min<uint64_t>(kAlign, size_ - p));
    if (!read(p, small_.get(), len)) return false;
    *h = header_at(small_.get(), len, p, id_);
    seen_.emplace(p, *h);
    return true;
  }

  // The nearest valid header before `s`: through the kLookbackBytes before it, nearest chunk
  // first, then at power-of-two aligned block starts. Headers found teach their runs' sizes.
  bool lookback(uint64_t s, Header* found) {
    const uint64_t lo = s > kLookbackBytes ? s - kLookbackBytes : 0;
    uint64_t hi = s;
    while (hi > lo) {
      uint64_t chunk_lo = hi - std::min(hi - lo, hi == s ? kFirstLookbackChunk : hi - lo);
      size_t len = static_cast<size_t>(hi - chunk_lo);
      Buffer buf = aligned_buffer(len);
      if (!buf) return fail("cannot allocate " + std::to_string(len) + " bytes for the sample");
      if (!read(chunk_lo, buf.get(), len)) return false;
      auto hs = headers_in(buf.get(), len, chunk_lo, id_);
      learn(hs);
      if (!hs.empty()) {
        *found = hs.back();
        return true;
      }
      hi = chunk_lo;
    }
    for (uint64_t b = 2 * kLookbackBytes; b <= kMaxAlignedLookback; b *= 2) {
      uint64_t p = s & ~(b - 1);
      if (p >= lo) continue;  // searched above
      Header h;
      if (!header_on_disk(p, &h)) return false;
      if (h.owner != Owner::None) {
        learn({h});
        *found = h;
        return true;
      }
      if (p == 0) break;
    }
    *found = Header{};
    return true;
  }

  struct Run {
    uint64_t origin = 0;  // the first header seen of it
    uint64_t bs = 0;      // gcd of the distances to it; 0 while only one was seen
  };

  const BlockReader& r_;
  uint64_t size_;
  uint64_t id_;
  uint64_t seed_;
  SampleReport& out_;
  std::vector<Window> windows_;
  std::map<uint64_t, Run> runs_;
  std::map<uint64_t, Header> seen_;  // header_on_disk's reads, by offset
  Buffer small_;
};

}  // namespace

std::unique_ptr<BlockReader> fd_reader(const Fd& fd, std::string path, uint32_t logical_block_size) {
  return std::make_unique<FdReader>(fd.get(), std::move(path), logical_block_size);
}

namespace {

SampleReport sample_windows(const BlockReader& reader, uint64_t size, uint64_t device_id, uint64_t seed,
                            const std::vector<std::pair<uint64_t, size_t>>& windows) {
  SampleReport out;
  Sampler s(reader, size, device_id, seed, out);
  bool read_all = true;
  for (const auto& [offset, len] : windows) {
    if (!(read_all = s.read_window(offset, len))) break;
  }
  if (read_all) s.judge();
  out.ok = !s.failed();
  return out;
}

}  // namespace

SampleReport sample_for_data(const BlockReader& reader, uint64_t size, uint64_t device_id, uint64_t seed) {
  const uint64_t edge = std::min(kEdgeSampleBytes, size);
  std::vector<std::pair<uint64_t, size_t>> windows;
  if (edge) windows.emplace_back(0, static_cast<size_t>(edge));
  if (size > edge) windows.emplace_back(size - edge, static_cast<size_t>(edge));
  std::mt19937_64 rng(seed);
  const uint64_t blocks = size / kRandomSampleBytes;
  for (uint32_t i = 0; blocks && i < kRandomSamples; ++i) {
    windows.emplace_back(rng() % blocks * kRandomSampleBytes, kRandomSampleBytes);
  }
  return sample_windows(reader, size, device_id, seed, windows);
}

SampleReport scan_whole_device(const BlockReader& reader, uint64_t size, uint64_t device_id, uint64_t seed) {
  std::vector<std::pair<uint64_t, size_t>> windows;
  for (uint64_t o = 0; o < size; o += kEdgeSampleBytes) {
    windows.emplace_back(o, static_cast<size_t>(std::min(kEdgeSampleBytes, size - o)));
  }
  return sample_windows(reader, size, device_id, seed, windows);
}

}  // namespace diskprobe::safety
