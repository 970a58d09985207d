#include "diskprobe/safety/wipe.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "diskprobe/base/aligned_buffer.h"

namespace diskprobe::safety {

std::vector<ByteRange> edge_ranges(uint64_t size, uint64_t region_start, uint64_t bs, uint64_t region_end) {
  uint64_t head_end = std::min(kZeroEdgeBytes, size);
  uint64_t tail_start = size > kZeroEdgeBytes ? size - kZeroEdgeBytes : 0;
  if (bs > 0 && region_start < head_end) {
    uint64_t rounded = region_start + (head_end - region_start + bs - 1) / bs * bs;
    if (rounded - head_end <= kMaxRoundOutBytes) head_end = std::min(rounded, size);
  }
  if (bs > 0 && tail_start > region_start) {
    uint64_t rounded = region_start + (tail_start - region_start) / bs * bs;
    if (tail_start - rounded <= kMaxRoundOutBytes) tail_start = rounded;
  }
  std::vector<ByteRange> raw;
  if (tail_start <= head_end) {
    raw = {ByteRange{0, size}};
  } else {
    raw = {ByteRange{0, head_end}, ByteRange{tail_start, size - tail_start}};
  }
  const uint64_t lo = region_start, hi = std::min(region_end, size);
  std::vector<ByteRange> out;
  for (const auto& r : raw) {
    uint64_t a = std::max(r.offset, lo), b = std::min(r.offset + r.length, hi);
    if (a < b) out.push_back(ByteRange{a, b - a});
  }
  return out;
}

// Writes hold headers at the start of each write block: rounding to the read size (bs=4k,1020k)
// would cut a write block and leave its rest without one.
std::vector<ByteRange> edge_ranges(uint64_t size, const Region& region) {
  return edge_ranges(size, region.offset, region.write_bs, region.write_end());
}

// Zeroes go out as 1 MiB direct writes: one bio each, where buffered writes left the page
// cache to write back a bio per 4 KiB page. A device throttled per I/O (a provisioned cloud
// volume, blkio.throttle) counts bios, so at 50 write IOPS zeroing 4 MiB took 20 s buffered
// and now takes a fifth of a second. A chunk the device will not take direct (EINVAL: not
// aligned to its logical block size) is written through the page cache instead; fdatasync
// then flushes both, and the device's write cache.
Result<std::vector<ByteRange>> zero_edges(const Fd& held, const std::string& path, uint64_t size,
                                          const Region& region) {
  if (!held.valid()) return make_error("cannot zero the edges of " + path + ": no held descriptor");
  const std::string self = "/proc/self/fd/" + std::to_string(held.get());
  auto fd = Fd::open(self, O_WRONLY | O_DIRECT);
  if (!fd) fd = Fd::open(self, O_WRONLY);
  if (!fd) return make_error("cannot zero the edges of " + path + ": " + fd.error());
  struct stat a {
  }, b{};
  if (::fstat(held.get(), &a) != 0 || ::fstat(fd->get(), &b) != 0 || !S_ISBLK(b.st_mode) ||
      a.st_rdev != b.st_rdev) {
    return make_error("cannot zero the edges of " + path +
                      ": the reopened descriptor is not the device held");
  }
  Result<Fd> buffered = make_error("not opened");  // the page-cache path, opened on first need
  auto ranges = edge_ranges(size, region);
  constexpr size_t kChunk = 1 << 20;
  const AlignedBuffer zeros = aligned_buffer(kChunk);
  if (!zeros) return make_error("cannot zero the edges of " + path + ": out of memory");
  std::memset(zeros.get(), 0, kChunk);
  for (const auto& r : ranges) {
    uint64_t done = 0;
    while (done < r.length) {
      size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, r.length - done));
      const auto at = static_cast<off_t>(r.offset + done);
      ssize_t w = ::pwrite(fd->get(), zeros.get(), n, at);
      if (w < 0 && errno == EINVAL) {
        if (!buffered) buffered = Fd::open(self, O_WRONLY);
        if (!buffered) return make_error("cannot zero the edges of " + path + ": " + buffered.error());
        w = ::pwrite(buffered->get(), zeros.get(), n, at);
      }
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        return make_error(errno_message("pwrite", path + " at offset " + std::to_string(r.offset + done),
                                        w < 0 ? errno : EIO));
      }
      done += static_cast<uint64_t>(w);
    }
  }
  while (::fdatasync(fd->get()) != 0) {  // the device's inode: the page-cache chunks too
    if (errno != EINTR) return make_error(errno_message("fdatasync", path, errno));
  }
  return ranges;
}

}  // namespace diskprobe::safety
