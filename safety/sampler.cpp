#include "diskprobe/safety/sampler.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <random>

#include "diskprobe/core/block_header.h"

namespace diskprobe::safety {
namespace {

constexpr size_t kAlign = 4096;
constexpr uint64_t kFirstLookbackChunk = 64 * 1024;  // most blocks are at most this large

struct FreeDeleter {
  void operator()(uint8_t* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<uint8_t[], FreeDeleter>;

Buffer aligned_buffer(size_t len) {
  void* mem = nullptr;
  if (posix_memalign(&mem, kAlign, std::max(len, kAlign)) != 0) return Buffer();
  return Buffer(static_cast<uint8_t*>(mem));
}

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

// A valid header at `p` (absolute position `abs`): the magic, a known version, and an offset
// field that says it sits where it was written.
Owner header_owner(const uint8_t* p, size_t avail, uint64_t abs, uint64_t device_id) {
  auto h = decode_block_header(p, avail);
  if (!h || h->offset != abs) return Owner::None;
  return h->device_id == device_id ? Owner::Own : Owner::Other;
}

struct Found {
  Owner owner = Owner::None;
  size_t at = 0;
};

// Every valid header in buf[from, len), in order, handed to `f`.
template <class F>
void for_each_header(const uint8_t* buf, size_t len, size_t from, uint64_t base, uint64_t device_id, F f) {
  while (from + kBlockHeaderBytes <= len) {
    const void* m = ::memmem(buf + from, len - from, kBlockMagic, sizeof kBlockMagic);
    if (!m) return;
    size_t at = static_cast<size_t>(static_cast<const uint8_t*>(m) - buf);
    Owner o = header_owner(buf + at, len - at, base + at, device_id);
    if (o != Owner::None) f(Found{o, at});
    from = at + 1;
  }
}

const char* describe(Owner o) {
  return o == Owner::Other ? "diskprobe data written to another device" : "data without a diskprobe header";
}

class Sampler {
 public:
  Sampler(const BlockReader& r, uint64_t size, uint64_t device_id, uint64_t seed, SampleReport& out)
      : r_(r), size_(size), id_(device_id), seed_(seed), out_(out) {}

  bool window(uint64_t offset, size_t len) {
    Buffer buf = aligned_buffer(len);
    if (!buf) return fail("cannot allocate " + std::to_string(len) + " bytes for the sample");
    size_t unfilled = 0;
    if (!read(offset, buf.get(), len, &unfilled)) return false;
    out_.windows++;
    if (unfilled == len) {
      out_.no_data_windows++;
      return true;
    }
    const uint8_t* b = buf.get();
    const uint8_t* nz = std::find_if(b, b + len, [](uint8_t c) { return c != 0; });
    if (nz == b + len) {
      out_.zero_windows++;
      return true;
    }
    size_t first = static_cast<size_t>(nz - b);
    Found first_header{Owner::None, len};
    bool other = false;
    size_t other_at = 0;
    for_each_header(b, len, first, offset, id_, [&](const Found& f) {
      if (first_header.owner == Owner::None) first_header = f;
      if (f.owner == Owner::Other && !other) other = true, other_at = f.at;
    });
    if (other) return foreign(offset + other_at, Owner::Other);
    if (first_header.owner != Owner::None && first_header.at == first) {
      out_.own_windows++;
      return true;
    }
    // Bytes before the first header here belong to a block that started earlier.
    Owner before = Owner::None;
    if (!lookback(offset, &before)) return false;
    if (before != Owner::Own) return foreign(offset + first, before);
    out_.own_windows++;
    return true;
  }

  bool failed() const { return !out_.error.empty(); }

 private:
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

  bool foreign(uint64_t at, Owner o) {
    out_.foreign.push_back(Foreign{at, describe(o)});
    return true;
  }

  // The owner of the nearest valid header before `s`: through the kLookbackBytes before it,
  // nearest chunk first, then at power-of-two aligned block starts.
  bool lookback(uint64_t s, Owner* owner) {
    const uint64_t lo = s > kLookbackBytes ? s - kLookbackBytes : 0;
    uint64_t hi = s;
    while (hi > lo) {
      uint64_t chunk_lo = hi - std::min(hi - lo, hi == s ? kFirstLookbackChunk : hi - lo);
      size_t len = static_cast<size_t>(hi - chunk_lo);
      Buffer buf = aligned_buffer(len);
      if (!buf) return fail("cannot allocate " + std::to_string(len) + " bytes for the sample");
      if (!read(chunk_lo, buf.get(), len)) return false;
      Found last;
      for_each_header(buf.get(), len, 0, chunk_lo, id_, [&](const Found& f) { last = f; });
      if (last.owner != Owner::None) {
        *owner = last.owner;
        return true;
      }
      hi = chunk_lo;
    }
    Buffer buf = aligned_buffer(kAlign);
    if (!buf) return fail("cannot allocate the sample buffer");
    for (uint64_t b = 2 * kLookbackBytes; b <= kMaxAlignedLookback; b *= 2) {
      uint64_t p = s & ~(b - 1);
      if (p >= lo) continue;  // searched above
      size_t len = static_cast<size_t>(std::min<uint64_t>(kAlign, size_ - p));
      if (!read(p, buf.get(), len)) return false;
      Owner o = header_owner(buf.get(), len, p, id_);
      if (o != Owner::None) {
        *owner = o;
        return true;
      }
      if (p == 0) break;
    }
    *owner = Owner::None;
    return true;
  }

  const BlockReader& r_;
  uint64_t size_;
  uint64_t id_;
  uint64_t seed_;
  SampleReport& out_;
};

}  // namespace

std::unique_ptr<BlockReader> fd_reader(const Fd& fd, std::string path, uint32_t logical_block_size) {
  return std::make_unique<FdReader>(fd.get(), std::move(path), logical_block_size);
}

SampleReport sample_for_data(const BlockReader& reader, uint64_t size, uint64_t device_id, uint64_t seed) {
  SampleReport out;
  Sampler s(reader, size, device_id, seed, out);
  const uint64_t edge = std::min(kEdgeSampleBytes, size);
  std::vector<std::pair<uint64_t, size_t>> windows;
  if (edge) windows.emplace_back(0, static_cast<size_t>(edge));
  if (size > edge) windows.emplace_back(size - edge, static_cast<size_t>(edge));
  std::mt19937_64 rng(seed);
  const uint64_t blocks = size / kRandomSampleBytes;
  for (uint32_t i = 0; blocks && i < kRandomSamples; ++i) {
    windows.emplace_back(rng() % blocks * kRandomSampleBytes, kRandomSampleBytes);
  }
  for (const auto& [offset, len] : windows) {
    if (!s.window(offset, len)) break;
  }
  out.ok = !s.failed();
  return out;
}

}  // namespace diskprobe::safety
