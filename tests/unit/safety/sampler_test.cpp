// The --paranoid zero sampler on in-memory disks: blank, diskprobe's own blocks of every bs,
// foreign bytes, another device's blocks, and reads that fail.
#include <catch2/catch.hpp>
#include <cerrno>
#include <string>
#include <vector>

#include "diskprobe/safety/sampler.h"
#include "diskprobe/safety/wipe.h"
#include "fake_disk.h"

namespace {

using namespace diskprobe::safety;

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kGiB = 1ull << 30;
constexpr uint64_t kId = 0x1234abcd5678ef01ull;
constexpr uint64_t kOtherId = 0x0badcafe0badcafeull;

// What a write run over [start, size) leaves: every block written, then the edges zeroed.
void written_by_run(fake::Disk& d, uint64_t size, uint64_t start, uint64_t bs, uint64_t id = kId) {
  d.blocks(start, bs, (size - start) / bs, id);
  for (const auto& r : edge_ranges(size, start, bs)) d.zero(r.offset, r.length);
}

std::string offsets(const SampleReport& r) {
  std::string s;
  for (const auto& f : r.foreign) s += std::to_string(f.offset) + " (" + f.what + ") ";
  return s;
}

}  // namespace

TEST_CASE("sampler: a blank device is all zero windows", "[sampler]") {
  fake::Disk d(8 * kGiB);
  auto r = sample_for_data(d, 8 * kGiB, kId, 42);
  INFO(r.error);
  REQUIRE(r.ok);
  CHECK(r.windows == 2 + kRandomSamples);
  CHECK(r.zero_windows == r.windows);
  CHECK(r.foreign.empty());
  // First and last MiB, then 64 blocks of 4 KiB: nothing more is read from a blank disk.
  CHECK(r.bytes_read == 2 * kEdgeSampleBytes + kRandomSamples * kRandomSampleBytes);
  REQUIRE(d.reads.size() >= 2);
  CHECK(d.reads[0] == std::make_pair(uint64_t{0}, size_t{kEdgeSampleBytes}));
  CHECK(d.reads[1] == std::make_pair(8 * kGiB - kEdgeSampleBytes, size_t{kEdgeSampleBytes}));
}

TEST_CASE("sampler: null_blk without memory_backed (reads that fill nothing) is no data, not foreign data",
          "[sampler]") {
  for (uint64_t size : {8 * kGiB, 256 * kMiB, kMiB + 4096}) {
    fake::Disk d(size);
    d.random(0, size);  // what the device would hold, if it returned it
    d.fills_buffer = false;
    for (uint64_t seed : {1, 2, 3}) {
      auto r = sample_for_data(d, size, kId, seed);
      INFO("size " << size << " seed " << seed << ": " << r.error << offsets(r));
      REQUIRE(r.ok);
      CHECK(r.foreign.empty());
      CHECK(r.no_data_windows == r.windows);
      CHECK(r.unfilled_bytes == r.bytes_read);
      CHECK(r.zero_windows == 0);
    }
  }
  SECTION("a device that fills its reads has no unfilled bytes, zero or not") {
    fake::Disk d(kGiB);
    d.random(0, 4096);
    auto r = sample_for_data(d, kGiB, kId, 1);
    CHECK(r.unfilled_bytes == 0);
    CHECK(r.no_data_windows == 0);
    CHECK(r.foreign.size() == 1);
  }
}

TEST_CASE("sampler: the same seed samples the same blocks", "[sampler]") {
  fake::Disk a(kGiB), b(kGiB), c(kGiB);
  sample_for_data(a, kGiB, kId, 7);
  sample_for_data(b, kGiB, kId, 7);
  sample_for_data(c, kGiB, kId, 8);
  CHECK(a.reads == b.reads);
  CHECK(a.reads != c.reads);
}

TEST_CASE("sampler: diskprobe's own blocks pass for every bs the engine takes", "[sampler]") {
  const uint64_t size = kGiB;
  struct Case {
    uint64_t bs, start;
  };
  // Up to 1 MiB at any sector alignment (the linear look-back), larger power-of-two blocks
  // from offset 0 (the aligned look-back).
  const std::vector<Case> cases = {
      {512, 0},      {4096, 0},       {12288, 0},     {65536, 0},      {131072, 0},
      {kMiB, 0},     {3 * 512, 3584}, {65536, 512},   {kMiB, 7 * 512}, {kMiB - 512, 0},
      {4 * kMiB, 0}, {16 * kMiB, 0},  {64 * kMiB, 0}, {128 * kMiB, 0},
  };
  for (const auto& c : cases) {
    for (uint64_t seed : {1, 2}) {
      fake::Disk d(size);
      written_by_run(d, size, c.start, c.bs);
      auto r = sample_for_data(d, size, kId, seed);
      INFO("bs " << c.bs << " from " << c.start << " seed " << seed << ": " << r.error << offsets(r));
      REQUIRE(r.ok);
      CHECK(r.foreign.empty());
      CHECK(r.own_windows > 0);
      CHECK(r.own_windows + r.zero_windows == r.windows);
    }
  }
}

TEST_CASE("sampler: runs of different bs on top of each other are still own data", "[sampler]") {
  const uint64_t size = 512 * kMiB;
  fake::Disk d(size);
  written_by_run(d, size, 0, kMiB);
  // A 4 KiB random-write run over it that wrote every third block.
  d.blocks(0, 4096, size / 4096, kId, [](uint64_t k) { return k % 3 == 0; });
  for (const auto& r : edge_ranges(size, 0, 4096)) d.zero(r.offset, r.length);
  // Then a 128 KiB run over the first half only.
  d.blocks(0, 128 * 1024, size / 2 / (128 * 1024), kId, [](uint64_t k) { return k % 2 == 1; });
  for (const auto& r : edge_ranges(size, 0, 128 * 1024)) d.zero(r.offset, r.length);
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    auto r = sample_for_data(d, size, kId, seed);
    INFO(r.error << offsets(r));
    REQUIRE(r.ok);
    CHECK(r.foreign.empty());
  }
}

TEST_CASE("sampler: foreign data is found, with its offsets", "[sampler]") {
  const uint64_t size = 256 * kMiB;
  SECTION("random bytes with no header in the middle of a blank disk") {
    fake::Disk d(size);
    d.random(64 * kMiB, 128 * kMiB);
    auto r = sample_for_data(d, size, kId, 9);
    REQUIRE(r.ok);
    REQUIRE_FALSE(r.foreign.empty());
    for (const auto& f : r.foreign) {
      CHECK(f.offset >= 64 * kMiB);
      CHECK(f.offset < 192 * kMiB);
      CHECK(f.what == "data without a diskprobe header");
    }
  }
  SECTION("random bytes over diskprobe's own data, more than the look-back from any header") {
    fake::Disk d(size);
    written_by_run(d, size, 0, 4096);
    d.random(64 * kMiB, 128 * kMiB);
    auto r = sample_for_data(d, size, kId, 9);
    REQUIRE(r.ok);
    CHECK_FALSE(r.foreign.empty());
  }
  SECTION("the first MiB holds something") {
    fake::Disk d(size);
    d.random(4096, 512);
    auto r = sample_for_data(d, size, kId, 9);
    REQUIRE(r.ok);
    REQUIRE(r.foreign.size() == 1);
    CHECK(r.foreign[0].offset == 4096);
  }
  SECTION("the last bytes of the device hold something") {
    fake::Disk d(size);
    d.random(size - 512, 512);
    auto r = sample_for_data(d, size, kId, 9);
    REQUIRE(r.ok);
    REQUIRE(r.foreign.size() == 1);
    CHECK(r.foreign[0].offset == size - 512);
  }
  SECTION("diskprobe's blocks written to another device (copied with dd)") {
    fake::Disk d(size);
    written_by_run(d, size, 0, 4096, kOtherId);
    auto r = sample_for_data(d, size, kId, 9);
    REQUIRE(r.ok);
    REQUIRE_FALSE(r.foreign.empty());
    CHECK(r.foreign[0].what == "diskprobe data written to another device");
    CHECK(r.own_windows == 0);
  }
  SECTION("another device's blocks of 1 MiB: the look-back finds its header") {
    fake::Disk d(size);
    written_by_run(d, size, 0, kMiB, kOtherId);
    auto r = sample_for_data(d, size, kId, 9);
    REQUIRE(r.ok);
    REQUIRE_FALSE(r.foreign.empty());
    CHECK(r.foreign[0].what == "diskprobe data written to another device");
  }
  SECTION("headers copied to other offsets are data, not headers") {
    fake::Disk d(size);
    d.blocks(0, 4096, size / 4096, kId, nullptr, /*header_offset_skew=*/4096);
    auto r = sample_for_data(d, size, kId, 9);
    REQUIRE(r.ok);
    CHECK(r.foreign.size() == r.windows);
    CHECK(r.own_windows == 0);
  }
  SECTION("large blocks at an offset the aligned look-back cannot see pass once two headers teach the size") {
    // Seed 9 samples two windows within a MiB after a block start: the run's 4 MiB size is
    // learnt, and the block slots of the others start with this device's headers.
    fake::Disk d(size);
    written_by_run(d, size, 512, 4 * kMiB);
    auto r = sample_for_data(d, size, kId, 9);
    REQUIRE(r.ok);
    CHECK(r.foreign.empty());
  }
}

// What a write run killed before its zeroing leaves: every block, edges included.
void written_by_killed_run(fake::Disk& d, uint64_t size, uint64_t start, uint64_t bs) {
  d.blocks(start, bs, (size - start) / bs, kId);
}

TEST_CASE("sampler: 64 KiB of random data written into a region written by a bs=4k run is refused",
          "[sampler]") {
  // Regression: one header in a window made the sampler trust the whole window.
  const uint64_t size = 256 * kMiB;
  struct Case {
    const char* what;
    uint64_t bs, at, len;
  };
  const std::vector<Case> cases = {
      {"bs 4k, 64 KiB at a block start", 4096, 256 * 1024, 64 * 1024},
      {"bs 4k, 64 KiB off the block grid", 4096, 256 * 1024 + 100, 64 * 1024},
      {"bs 4k, 4 KiB: one whole block", 4096, 512 * 1024, 4096},
      {"bs 512, 1 KiB", 512, 300 * 1024, 1024},
      {"bs 16k, 64 KiB", 16384, 128 * 1024, 64 * 1024},
      {"bs 64k, 64 KiB over one block", 65536, 128 * 1024, 64 * 1024},
      {"bs 128k, 64 KiB over a block start", 131072, 256 * 1024, 64 * 1024},
      {"bs 4k, across the end of the first MiB", 4096, kMiB - 32 * 1024, 64 * 1024},
      {"bs 4k, across the start of the last MiB", 4096, size - kMiB - 32 * 1024, 64 * 1024},
      {"bs 4k, at the very end", 4096, size - 64 * 1024, 64 * 1024},
      {"bs 1m, over the header of the first block", kMiB, 0, 64 * 1024},
      {"bs 1m, over the header of the last block", kMiB, size - kMiB, 64 * 1024},
  };
  for (const auto& c : cases) {
    for (uint64_t seed : {1, 2, 3}) {
      fake::Disk d(size);
      written_by_killed_run(d, size, 0, c.bs);
      d.random(c.at, c.len);
      auto r = sample_for_data(d, size, kId, seed);
      INFO(c.what << " seed " << seed << ": " << r.error << offsets(r));
      REQUIRE(r.ok);
      REQUIRE_FALSE(r.foreign.empty());
      bool inside = false;
      for (const auto& f : r.foreign) inside = inside || (f.offset >= c.at && f.offset < c.at + c.len);
      CHECK(inside);
    }
  }
  SECTION("the same runs without the foreign bytes pass") {
    for (uint64_t bs : {uint64_t{512}, uint64_t{4096}, uint64_t{16384}, uint64_t{65536}, uint64_t{131072}, kMiB}) {
      fake::Disk d(size);
      written_by_killed_run(d, size, 0, bs);
      auto r = sample_for_data(d, size, kId, 1);
      INFO("bs " << bs << ": " << offsets(r));
      CHECK(r.foreign.empty());
      CHECK(r.own_windows == r.windows);
    }
  }
  SECTION("a sparse 4 KiB run (zero between its blocks) passes") {
    fake::Disk d(size);
    d.blocks(0, 4096, size / 4096, kId, [](uint64_t k) { return k % 5 == 0 || k % 7 == 0; });
    for (uint64_t seed : {1, 2, 3}) CHECK(sample_for_data(d, size, kId, seed).foreign.empty());
  }
  SECTION("foreign bytes in the zero gap of a sparse run are refused") {
    fake::Disk d(size);
    // Blocks 0, 2, 3, 5, 6, ...: neighbours 4 KiB apart teach the size.
    d.blocks(0, 4096, size / 4096, kId, [](uint64_t k) { return k % 3 != 1; });
    d.random(4096 + 512, 512);  // inside the unwritten block 1
    auto r = sample_for_data(d, size, kId, 1);
    REQUIRE(r.foreign.size() == 1);
    CHECK(r.foreign[0].offset == 4096 + 512);
  }
}

TEST_CASE("sampler: a read that fails refuses, whatever was read before", "[sampler]") {
  const uint64_t size = kGiB;
  struct Case {
    const char* what;
    uint64_t from, to;
    int err;
    const char* expect;
  };
  const std::vector<Case> cases = {
      {"EIO on the first MiB", 0, 4096, EIO, "Input/output error"},
      {"EPERM on the first MiB", 0, 4096, EPERM, "Operation not permitted"},
      {"EIO on the last MiB", size - 4096, size, EIO, "Input/output error"},
      {"EIO anywhere", 0, size, EIO, "Input/output error"},
      {"a short read", 0, size, 0, "short read"},
  };
  for (const auto& c : cases) {
    SECTION(c.what) {
      fake::Disk d(size);
      d.fail_from = c.from;
      d.fail_to = c.to;
      d.fail_errno = c.err;
      auto r = sample_for_data(d, size, kId, 3);
      CHECK_FALSE(r.ok);
      CHECK(r.error.find(c.expect) != std::string::npos);
    }
  }
  SECTION("a failure in the look-back refuses too") {
    fake::Disk d(size);
    written_by_run(d, size, 0, kMiB);
    d.fail_from = 4 * kMiB;  // everything past the zeroed head fails ...
    d.fail_to = size - 4 * kMiB;
    d.fail_errno = EIO;
    auto r = sample_for_data(d, size, kId, 3);
    CHECK_FALSE(r.ok);
    CHECK(r.error.find("Input/output error") != std::string::npos);
  }
}

TEST_CASE("edge_ranges: 4 MiB at each end, rounded out to whole blocks of the run", "[sampler]") {
  const uint64_t size = kGiB;
  using R = std::vector<ByteRange>;
  CHECK(edge_ranges(size, 0, 4096) == R{{0, 4 * kMiB}, {size - 4 * kMiB, 4 * kMiB}});
  CHECK(edge_ranges(size, 0, kMiB) == R{{0, 4 * kMiB}, {size - 4 * kMiB, 4 * kMiB}});
  // 3 MiB blocks from 0: the block at 3 MiB crosses 4 MiB and goes whole.
  CHECK(edge_ranges(size, 0, 3 * kMiB) == R{{0, 6 * kMiB}, {size - 4 * kMiB, 4 * kMiB}});  // 1020 = 340 * 3
  CHECK(edge_ranges(size + kMiB, 0, 3 * kMiB) == R{{0, 6 * kMiB}, {size - 4 * kMiB, 5 * kMiB}});
  // Blocks from 512: the head rounds to 512 + k*bs, the tail down to a block start; the
  // first 512 bytes are not the run's.
  CHECK(edge_ranges(size, 512, kMiB) == R{{512, 4 * kMiB}, {size - 5 * kMiB + 512, 5 * kMiB - 512}});
  // A run over the middle only zeroes nothing outside its region.
  CHECK(edge_ranges(size, 2 * kMiB, 4096, size - 2 * kMiB) ==
        R{{2 * kMiB, 2 * kMiB}, {size - 4 * kMiB, 2 * kMiB}});
  CHECK(edge_ranges(size, 100 * kMiB, 4096, 200 * kMiB).empty());
  CHECK(edge_ranges(8 * kGiB, 0, kGiB) == R{{0, kGiB}, {7 * kGiB, kGiB}});
  // No more than kMaxRoundOutBytes extra: a 4 GiB block is not zeroed whole.
  CHECK(edge_ranges(16 * kGiB, 0, 4 * kGiB) == R{{0, 4 * kMiB}, {16 * kGiB - 4 * kMiB, 4 * kMiB}});
  // A small device is zeroed whole, in one range.
  CHECK(edge_ranges(6 * kMiB, 0, 4096) == R{{0, 6 * kMiB}});
  CHECK(edge_ranges(0, 0, 4096).empty());
}

TEST_CASE("sampler: a 4 KiB random run over a sequential run of large blocks is still own data", "[sampler]") {
  // The linear look-back finds a 4 KiB block's header first; the 4 MiB block's header sits at
  // its aligned start (the back-to-back integration test's second run).
  const uint64_t size = kGiB;
  for (uint64_t bs : std::vector<uint64_t>{4 * kMiB, kMiB, 128 * 1024}) {
    for (uint64_t every : {97, 7}) {
      fake::Disk d(size);
      written_by_run(d, size, 0, bs);
      d.blocks(0, 4096, size / 4096, kId, [every](uint64_t k) { return (k * 2654435761u) % every == 0; });
      for (const auto& r : edge_ranges(size, 0, 4096)) d.zero(r.offset, r.length);
      for (uint64_t seed = 1; seed <= 20; ++seed) {
        auto r = sample_for_data(d, size, kId, seed);
        INFO("bs " << bs << " every " << every << " seed " << seed << ": " << offsets(r));
        REQUIRE(r.ok);
        CHECK(r.foreign.empty());
      }
    }
  }
}

// fio's dedupe and compress buffers: each block's header keys its content (version 2), so it
// cannot say where it was written; on a sector boundary it is the device's own all the same,
// and another device's content blocks are foreign as any of its blocks are.
TEST_CASE("sampler: content blocks (dedupe, compress) of this device are own data, of another foreign", "[sampler]") {
  const uint64_t size = kGiB;
  for (uint64_t bs : {4096ull, 65536ull}) {
    fake::Disk own(size);
    own.blocks(0, bs, size / bs, kId, nullptr, 0, true);
    for (const auto& r : edge_ranges(size, 0, bs)) own.zero(r.offset, r.length);
    auto r = sample_for_data(own, size, kId, 1);
    INFO("bs " << bs << ": " << r.error << offsets(r));
    REQUIRE(r.ok);
    CHECK(r.foreign.empty());
    CHECK(r.own_windows > 0);
    fake::Disk other(size);
    other.blocks(0, bs, size / bs, kOtherId, nullptr, 0, true);
    auto o = sample_for_data(other, size, kId, 1);
    REQUIRE(o.ok);
    CHECK_FALSE(o.foreign.empty());
  }
}
