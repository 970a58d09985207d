// The run's Region, computed once (resolve_region), and the zeroing after a write run that
// stays inside it, on the write block grid.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "diskprobe/engine/engine.h"
#include "diskprobe/spec/region.h"
#include "diskprobe/safety/wipe.h"

namespace {

using namespace diskprobe;
using safety::ByteRange;
constexpr uint64_t kKiB = 1ull << 10;
constexpr uint64_t kMiB = 1ull << 20;

struct Case {
  const char* what;
  uint64_t device;
  uint32_t bs, bs_write;
  uint64_t offset, size;
  double offset_percent, size_percent;
  uint64_t want_offset, want_size;
  std::vector<ByteRange> want_zeroed;
};

JobSpec spec_of(const Case& c) {
  JobSpec s;
  s.bs = c.bs;
  s.bs_write = c.bs_write;
  s.offset = c.offset;
  s.size = c.size;
  s.offset_percent = c.offset_percent;
  s.size_percent = c.size_percent;
  return s;
}

// Every zeroed range is inside the region's whole write blocks and starts and ends on the
// write grid (a cut block would lose its header); together they cover the device's first
// and last 4 MiB wherever the run could have written there.
void check_zeroing(uint64_t device, const Region& reg, const std::vector<ByteRange>& ranges) {
  for (const auto& r : ranges) {
    INFO("range " << r.offset << " +" << r.length);
    CHECK(r.offset >= reg.offset);
    CHECK(r.offset + r.length <= reg.write_end());
    CHECK((r.offset - reg.offset) % reg.write_bs == 0);
    CHECK((r.offset + r.length - reg.offset) % reg.write_bs == 0);
  }
  auto covered = [&](uint64_t byte) {
    for (const auto& r : ranges) {
      if (byte >= r.offset && byte < r.offset + r.length) return true;
    }
    return false;
  };
  const uint64_t edge = std::min(safety::kZeroEdgeBytes, device);
  for (uint64_t b = 0; b < device; b += 4 * kKiB) {
    bool at_edge = b < edge || b >= device - edge;
    bool written = b >= reg.offset && b < reg.write_end();
    if (at_edge && written) CHECK(covered(b));
  }
}

}  // namespace

TEST_CASE("Region: bytes, percentages, split bs and the edges, and what is zeroed inside it", "[region]") {
  const uint64_t d = 256 * kMiB;
  const Case cases[] = {
      {"the whole device", d, 4096, 0, 0, 0, 0, 0, 0, d, {{0, 4 * kMiB}, {d - 4 * kMiB, 4 * kMiB}}},
      // The reported case: the first and last 4 MiB of the device were zeroed, outside the region.
      {"run --offset 25% --size 50% zeroed the device's first and last 4 MiB", d, 4096, 0, 0, 0, 25, 50,
       64 * kMiB, 128 * kMiB, {}},
      {"percent region touching the end", d, 4096, 0, 0, 0, 50, 50, 128 * kMiB, 128 * kMiB,
       {{d - 4 * kMiB, 4 * kMiB}}},
      {"percent region touching the start", d, 4096, 0, 0, 0, 0, 10, 0, 25 * kMiB + 614 * kKiB + 409,
       {{0, 4 * kMiB}}},
      {"size 100% is cut at the end of the device", d, 4096, 0, 0, 0, 75, 100, 192 * kMiB, 64 * kMiB,
       {{d - 4 * kMiB, 4 * kMiB}}},
      {"bytes in the middle", d, 65536, 0, 16 * kMiB, 32 * kMiB, 0, 0, 16 * kMiB, 32 * kMiB, {}},
      {"bytes reaching into the first 4 MiB", d, 4096, 0, 2 * kMiB, 8 * kMiB, 0, 0, 2 * kMiB, 8 * kMiB,
       {{2 * kMiB, 2 * kMiB}}},
      {"bytes to the end, an odd offset", d, 4096, 0, 4096 * 3 + 512, 0, 0, 0, 12800, d - 12800,
       // head to the end of the block across 4 MiB; tail from the block start below d - 4 MiB
       // to the end of the last whole block (d - 12800 is not a multiple of 4096)
       {{12800, 1021 * 4096}, {12800 + 64508 * 4096, 4 * kMiB}}},
      // Split bs: zeroing rounded to the read size cut a write block at 4 MiB.
      {"--bs 4k,1020k zeroing rounded to the read size", d, 4096, 1020 * kKiB, 0, 0, 0, 0, 0, d,
       {{0, 5 * 1020 * kKiB}, {252 * 1020 * kKiB, 5 * 1020 * kKiB}}},
      {"--bs 4k,16k --offset 4096 zeroing rounded to the read size", d, 4096, 16 * kKiB, 4096, 0, 0, 0, 4096,
       d - 4096, {{4096, 256 * 16 * kKiB}, {4096 + 16127 * 16 * kKiB, 256 * 16 * kKiB}}},
      {"split bs the other way (writes smaller)", d, 1020 * kKiB, 4096, 0, 0, 0, 0, 0, d,
       {{0, 4 * kMiB}, {d - 4 * kMiB, 4 * kMiB}}},
      // 33% of 256 MiB aligned down to 12k: 7208 blocks; the last 4 MiB start on the grid.
      {"split bs, percent offset aligned to the smaller size", d, 16 * kKiB, 12 * kKiB, 0, 0, 33, 0,
       7208 * 12 * kKiB, d - 7208 * 12 * kKiB, {{d - 4 * kMiB, 341 * 12 * kKiB}}},
      {"an odd device size", d + 512, 4096, 0, 0, 0, 0, 0, 0, d + 512, {{0, 4 * kMiB}, {d - 4 * kMiB, 4 * kMiB}}},
      {"a device smaller than both edges", 6 * kMiB, 4096, 0, 0, 0, 0, 0, 0, 6 * kMiB, {{0, 6 * kMiB}}},
      {"a device smaller than both edges, split bs", 6 * kMiB + 4096, 4096, 1 * kMiB, 0, 0, 0, 0, 0,
       6 * kMiB + 4096, {{0, 6 * kMiB}}},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    JobSpec spec = spec_of(c);
    for (uint32_t depth : {1u, 7u, 128u}) {  // neither iodepth nor numjobs moves the region
      spec.iodepth = depth;
      spec.numjobs = depth % 5;
      Target t{"/dev/x", c.device, 512};
      const Region reg = resolve_region(spec, t);
      CHECK(reg.offset == c.want_offset);
      CHECK(reg.size == c.want_size);
      CHECK(reg.read_bs == c.bs);
      CHECK(reg.write_bs == (c.bs_write ? c.bs_write : c.bs));
      const auto zeroed = safety::edge_ranges(c.device, reg);
      for (const auto& r : zeroed) UNSCOPED_INFO("zeroed " << r.offset << " +" << r.length);
      CHECK(zeroed == c.want_zeroed);
      check_zeroing(c.device, reg, zeroed);
    }
  }
}
