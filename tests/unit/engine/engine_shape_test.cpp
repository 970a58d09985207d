// The shaped path (IoShape: bssplit, bsrange, blockalign, rw=<op>:<n>, random_distribution,
// thinktime) on a file: where each write landed is read back from the block headers it left.
#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <map>

#include "diskprobe/device/block_header.h"
#include "diskprobe/engine/engine.h"
#include "engine_fixtures.h"

using namespace diskprobe;
using engine_fixtures::sized_spec;
using engine_fixtures::TempFile;

namespace {

// offset -> seq of every block header in the file's first `len` bytes, 4k apart.
std::map<uint64_t, uint64_t> headers(const std::vector<uint8_t>& data, uint64_t len) {
  std::map<uint64_t, uint64_t> at;
  for (uint64_t o = 0; o < len; o += 4096) {
    if (auto h = decode_block_header(data.data() + o, 4096)) at[o] = h->seq;
  }
  return at;
}

bool all_zero(const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (p[i]) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("engine: rw=write:4k skips 4k after each write and ends at the region's end, as fio's") {
  SKIP_WITHOUT_URING();
  TempFile file(1 << 20);
  JobSpec s = sized_spec(RwMode::Write, 64 << 10);
  s.shape.seq_add = 4096;
  auto r = run_jobs(s, file.target(), EngineOptions{});
  REQUIRE(r.ok());
  CHECK(r->write.ios == 8);  // 0, 8k, ... 56k: ceil(64k / (4k + 4k))
  auto at = headers(file.read_all(), 1 << 20);
  REQUIRE(at.size() == 8);
  uint64_t expect = 0;
  for (const auto& [offset, seq] : at) {
    CHECK(offset == expect);
    expect += 8192;
  }
}

TEST_CASE("engine: rw=write:-8k walks backwards from the region's end, wrapping as fio's") {
  SKIP_WITHOUT_URING();
  TempFile file(1 << 20);
  JobSpec s = sized_spec(RwMode::Write, 64 << 10);
  s.shape.seq_add = -8192;
  s.iodepth = 1;  // one at a time: the seq order is the walk's
  auto r = run_jobs(s, file.target(), EngineOptions{});
  REQUIRE(r.ok());
  CHECK(r->write.ios == 16);  // size's bytes, 64k of 4k writes
  auto at = headers(file.read_all(), 1 << 20);
  // 0, then 56k, 52k, ... 4k, then 0 again (from 4k's end, 8k back); 60k never.
  CHECK(at.count(60 << 10) == 0);
  CHECK(at.at(0) == 16);
  for (uint64_t k = 1; k <= 14; ++k) CHECK(at.at((56 - 4 * (k - 1)) << 10) == k + 1);
  CHECK(at.size() == 15);
}

TEST_CASE("engine: bssplit sizes in their shares; with the random map a pass writes every block once") {
  SKIP_WITHOUT_URING();
  TempFile file(4 << 20);
  JobSpec s = sized_spec(RwMode::RandWrite, 2 << 20);
  s.shape.bssplit[0] = s.shape.bssplit[1] = {{4096, 50}, {65536, 50}};
  auto r = run_jobs(s, file.target(), EngineOptions{});
  REQUIRE(r.ok());
  CHECK(r->write.bytes == 2u << 20);
  const auto data = file.read_all();
  for (uint64_t o = 0; o < (2u << 20); o += 4096) {
    INFO("block at " << o);
    CHECK_FALSE(all_zero(data.data() + o, 4096));  // every block of the region, once
  }
  CHECK(all_zero(data.data() + (2u << 20), 2u << 20));  // nothing past it
  // Without the map (norandommap): the sizes in their shares, 34k a write on average.
  TempFile file2(64 << 20);
  s.norandommap = true;
  s.size = 64 << 20;
  auto n = run_jobs(s, file2.target(), EngineOptions{});
  REQUIRE(n.ok());
  const double mean = static_cast<double>(n->write.bytes) / static_cast<double>(n->write.ios);
  CHECK(mean == Approx((4096 + 65536) / 2.0).epsilon(0.15));
}

TEST_CASE("engine: bsrange sizes are multiples of MIN from MIN to MAX, as fio draws them") {
  SKIP_WITHOUT_URING();
  TempFile file(16 << 20);
  JobSpec s = sized_spec(RwMode::RandRead, 16 << 20);
  s.norandommap = true;
  s.bs = 4096;
  s.shape.bs_max = {16384, 16384};
  auto r = run_jobs(s, file.target(), EngineOptions{});
  REQUIRE(r.ok());
  CHECK(r->read.bytes >= 16u << 20);
  CHECK(r->read.bytes % 4096 == 0);
  // fio's MIN + MAX * U, down to a multiple of MIN, at most MAX: 4k 1/4, 8k 1/4, 12k 1/4, 16k 1/4
  // (MIN + [0, MAX) is 4k..20k; past 16k clamps): a mean of 10k.
  const double mean = static_cast<double>(r->read.bytes) / static_cast<double>(r->read.ios);
  CHECK(mean == Approx(10240).epsilon(0.1));
}

TEST_CASE("engine: random_distribution=zoned puts each zone's share of the writes in it") {
  SKIP_WITHOUT_URING();
  TempFile file(8 << 20);
  JobSpec s = sized_spec(RwMode::RandWrite, 8 << 20);
  s.norandommap = true;
  s.io_size = 2 << 20;  // 512 writes
  s.shape.distribution = Distribution::Zoned;
  s.shape.zones[0] = s.shape.zones[1] = {{100, 25, 0}, {0, 75, 0}};  // every write in the first quarter
  auto r = run_jobs(s, file.target(), EngineOptions{});
  REQUIRE(r.ok());
  CHECK(r->write.ios == 512);
  const auto data = file.read_all();
  CHECK(all_zero(data.data() + (2u << 20), 6u << 20));
  CHECK_FALSE(all_zero(data.data(), 2u << 20));
  // 80/20 over two halves: 8 writes in 10 to the first.
  TempFile file2(8 << 20);
  s.shape.zones[0] = s.shape.zones[1] = {{80, 50, 0}, {20, 50, 0}};
  s.io_size = 4 << 20;
  auto z = run_jobs(s, file2.target(), EngineOptions{});
  REQUIRE(z.ok());
  auto at = headers(file2.read_all(), 8 << 20);
  size_t first = 0, second = 0;
  for (const auto& [offset, seq] : at) (offset < (4u << 20) ? first : second)++;
  const double share = static_cast<double>(first) / static_cast<double>(first + second);
  // Distinct blocks hit: 80% of 1024 writes over 1024 blocks leaves fewer distinct than 20% over 1024.
  CHECK(share > 0.6);
  CHECK(second > 0);
}

TEST_CASE("engine: thinktime waits after every thinktime_blocks I/Os (sync engine)") {
  TempFile file(1 << 20);
  JobSpec s = sized_spec(RwMode::Read, 64 << 10);
  s.engine = EngineKind::Sync;
  s.iodepth = 1;
  s.shape.thinktime_us = 20000;
  s.shape.thinktime_blocks = 2;  // 16 reads: 8 waits of 20 ms
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_jobs(s, file.target(), EngineOptions{});
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  REQUIRE(r.ok());
  CHECK(r->read.ios == 16);
  CHECK(took >= 0.16);
}
