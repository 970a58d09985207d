// Verify's lost-write check: a block that holds an older write of this run than the last one
// written to its offset is reported stale, without a sequence number kept per block (the
// write order is computed: in passes, in order or through the invertible random map).
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "diskprobe/engine/random_map.h"
#include "diskprobe/device/block_header.h"
#include "diskprobe/engine/engine.h"
#include "diskprobe/report/report.h"
#include "engine_fixtures.h"

using namespace diskprobe;
using File = engine_fixtures::TempFile;
using Catch::Matchers::Contains;

namespace {

constexpr uint32_t kBs = 4096;
constexpr uint64_t kRegion = 1 << 20;  // 256 blocks
constexpr uint64_t kBlocks = kRegion / kBs;

JobSpec verified_write(RwMode rw, uint64_t io_size) {
  JobSpec s;
  s.name = "stale-test";
  s.rw = rw;
  s.bs = kBs;
  s.iodepth = 8;
  s.time_based = false;
  s.runtime_s = 0;
  s.size = kRegion;
  s.io_size = io_size;
  s.direct = false;
  s.verify = VerifyKind::Crc32c;
  return s;
}

uint64_t seq_at(const File& f, uint64_t block) {
  auto data = f.read_all();
  auto h = decode_block_header(data.data() + block * kBs, kBs);
  REQUIRE(h);
  return h->seq;
}

// What a lost write leaves behind: the block at `block` as an earlier write of this run made
// it (same run, same offset, a valid checksum), carrying write seq `seq`.
void put_older_write(const File& f, uint64_t block, uint64_t seq) {
  auto data = f.read_all();
  uint8_t* b = data.data() + block * kBs;
  auto h = decode_block_header(b, kBs);
  REQUIRE(h);
  REQUIRE(h->seq > seq);
  h->seq = seq;
  h->crc32c = 0;
  std::memset(b + kBlockHeaderBytes, 0x5a, kBs - kBlockHeaderBytes);  // that write's own data
  encode_block_header(b, *h);
  store_block_checksum(b, kBs);
  f.poke(block * kBs, std::string(reinterpret_cast<const char*>(b), kBs));
}

Result<Results> run_with(const JobSpec& spec, const File& f, std::function<void()> before_verify) {
  EngineOptions opts;
  opts.run_id = 0x5eed;
  opts.before_verify = std::move(before_verify);
  return run_jobs(spec, f.target(), opts);
}

}  // namespace

TEST_CASE("random map: index_of inverts the walk, handed_out follows it, place_of counts the order") {
  for (uint64_t n : {uint64_t{1}, uint64_t{5}, uint64_t{256}, uint64_t{1000}}) {
    BlockPermutation p;
    p.reset(n, 99 + n);
    for (uint64_t pass = 0; pass < 2; ++pass) {
      for (uint64_t place = 0; place < n; ++place) {
        uint64_t b = p.next();
        INFO("n=" << n << " pass " << pass << " place " << place);
        REQUIRE(p.handed_out(b));
        REQUIRE(p.place_of(p.index_of(b, false), false, n) == place);
      }
    }
    // After a third pass starts, the second is `previous`: block 0's place there is still known.
    BlockPermutation before = p;
    uint64_t first = p.next();
    CHECK(p.place_of(p.index_of(first, false), false, n) == 0);
    CHECK(p.place_of(p.index_of(first, true), true, n) == before.place_of(before.index_of(first, false), false, n));
  }
}

TEST_CASE("verify: runs that write every block several times find no stale block") {
  SKIP_WITHOUT_URING();
  // Whole passes, a last pass cut short, sequential and through the random map, mixed.
  struct Case {
    RwMode rw;
    uint64_t io_size;
  } cases[] = {{RwMode::Write, 3 * kRegion},
               {RwMode::Write, 2 * kRegion + 40 * kBs},
               {RwMode::RandWrite, 2 * kRegion + kRegion / 2},
               {RwMode::RandWrite, 3 * kRegion},
               {RwMode::RandRW, 4 * kRegion},
               {RwMode::ReadWrite, 4 * kRegion}};
  for (const auto& c : cases) {
    for (EngineKind engine : {EngineKind::IoUring, EngineKind::Sync}) {
      INFO(to_string(c.rw) << " io_size " << c.io_size << " engine " << to_string(engine));
      File f(kRegion);
      auto spec = verified_write(c.rw, c.io_size);
      spec.engine = engine;
      auto r = run_with(spec, f, nullptr);
      REQUIRE(r.ok());
      CHECK(r->verify_pass.blocks_checked > 0);
      CHECK(r->verify.mismatches == 0);
      if (!r->verify.first.empty()) CHECK(mismatch_text(r->verify.first[0]) == "");
    }
  }
}

TEST_CASE("verify: an older write of this run left at an offset (the last write lost) is reported stale") {
  SKIP_WITHOUT_URING();
  SECTION("sequential: three passes; block 10 holds pass 1's write, not pass 3's") {
    File f(kRegion);
    auto spec = verified_write(RwMode::Write, 3 * kRegion);
    auto r = run_with(spec, f, [&] {
      REQUIRE(seq_at(f, 10) == 2 * kBlocks + 11);
      put_older_write(f, 10, 11);
    });
    REQUIRE(r.ok());
    CHECK(r->verify.mismatches == 1);
    REQUIRE(r->verify.first.size() == 1);
    CHECK(r->verify.first[0].offset == 10 * kBs);
    CHECK(mismatch_text(r->verify.first[0]) == "stale: seq 11, expected 523");
    auto j = to_json(report_of(*r, spec, f.path()));
    CHECK(j["verify"]["first_mismatches"][0]["reason"] == "stale");
    CHECK(j["verify"]["first_mismatches"][0]["seq"] == 11);
    CHECK(j["verify"]["first_mismatches"][0]["expected_seq"] == 523);
    CHECK_THAT(render_text(report_of(*r, spec, f.path())), Contains("mismatch: job 0, offset 40960: stale: seq 11, expected 523"));
  }
  SECTION("random map: a last pass cut short; one block it rewrote and one it had not reached yet") {
    File f(kRegion);
    auto spec = verified_write(RwMode::RandWrite, 2 * kRegion + kRegion / 2);  // writes 1..640
    uint64_t rewritten = 0, not_reached = 0, seq_rewritten = 0, seq_not_reached = 0;
    auto r = run_with(spec, f, [&] {
      auto data = f.read_all();
      for (uint64_t b = 0; b < kBlocks; ++b) {
        uint64_t s = decode_block_header(data.data() + b * kBs, kBs)->seq;
        if (s > 2 * kBlocks && !seq_rewritten) rewritten = b, seq_rewritten = s;  // pass 3
        if (s <= 2 * kBlocks && !seq_not_reached) not_reached = b, seq_not_reached = s;  // pass 2
      }
      REQUIRE(seq_rewritten);
      REQUIRE(seq_not_reached > kBlocks);
      put_older_write(f, rewritten, seq_rewritten - kBlocks);
      put_older_write(f, not_reached, seq_not_reached - kBlocks);
    });
    REQUIRE(r.ok());
    CHECK(r->verify.mismatches == 2);
    for (const auto& m : r->verify.first) {
      INFO(mismatch_text(m));
      CHECK(std::string(m.reason) == "stale");
      uint64_t b = m.offset / kBs;
      CHECK((b == rewritten || b == not_reached));
      CHECK(m.expected_seq == (b == rewritten ? seq_rewritten : seq_not_reached));
      CHECK(m.seq == m.expected_seq - kBlocks);
      CHECK_FALSE(m.expected_at_least);
    }
  }
  SECTION("a seq this run never wrote at that offset") {
    File f(kRegion);
    auto spec = verified_write(RwMode::Write, 2 * kRegion);
    auto r = run_with(spec, f, [&] { put_older_write(f, 3, 5); });  // seq 5 went to block 4
    REQUIRE(r.ok());
    REQUIRE(r->verify.mismatches == 1);
    CHECK_THAT(mismatch_text(r->verify.first[0]), Contains("seq not written to this offset: seq 5"));
  }
}

TEST_CASE("verify: a region smaller than iodepth (writes to one block in flight together) finds no stale block") {
  SKIP_WITHOUT_URING();
  for (RwMode rw : {RwMode::Write, RwMode::RandWrite}) {
    INFO(to_string(rw));
    File f(4 * kBs);
    auto spec = verified_write(rw, 200 * kBs);
    spec.size = 4 * kBs;
    spec.iodepth = 32;
    for (int i = 0; i < 5; ++i) {
      auto r = run_with(spec, f, nullptr);
      REQUIRE(r.ok());
      CHECK(r->verify_pass.blocks_checked == 4);
      CHECK(r->verify.mismatches == 0);
    }
  }
}
