// After a write run diskprobe zeroes the first and last 4 MiB of the device: random
// benchmark data can look like a partition table or a signature to the kernel and to
// libblkid (fio issue #1942: the kernel found an "AHDI" partition table in it), and the
// next preflight would refuse the device for it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "diskprobe/base/fd.h"
#include "diskprobe/spec/region.h"
#include "diskprobe/base/status.h"

namespace diskprobe::safety {

inline constexpr uint64_t kZeroEdgeBytes = 4ull << 20;
// A block the run wrote across a 4 MiB boundary is zeroed whole, so no block is left
// without its header (the sampler would call the rest foreign); not beyond this much more
// (the sampler's aligned look-back reaches 1 GiB blocks, too).
inline constexpr uint64_t kMaxRoundOutBytes = 1ull << 30;

struct ByteRange {
  uint64_t offset = 0, length = 0;
  bool operator==(const ByteRange&) const = default;
};

// The ranges to zero on a device of `size` bytes after a run that wrote blocks of `bs` bytes
// at region_start + k * bs, below region_end: the first and last kZeroEdgeBytes, rounded out
// to the run's block boundaries, and only where the run could have written (bytes outside
// its region are not the run's to zero); one range when they meet.
std::vector<ByteRange> edge_ranges(uint64_t size, uint64_t region_start, uint64_t bs,
                                   uint64_t region_end = UINT64_MAX);

// The same for the run's Region (resolve_region): its write blocks, below its write_end().
std::vector<ByteRange> edge_ranges(uint64_t size, const Region& region);

// Writes zeroes over edge_ranges(size, region) through a writable reopening of `held`
// (/proc/self/fd/N: the very device the preflight checked and still holds O_EXCL, never
// whatever a path names now), then fdatasync. Returns the ranges zeroed.
Result<std::vector<ByteRange>> zero_edges(const Fd& held, const std::string& path, uint64_t size,
                                          const Region& region);

}  // namespace diskprobe::safety
