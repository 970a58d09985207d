// Data verification (--verify crc32c): what a block must look like when read back, and the
// read-back pass after a write workload (fio's do_verify). Private to lib/.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "diskprobe/base/status.h"
#include "diskprobe/stats/results.h"
#include "diskprobe/engine/random_map.h"

namespace diskprobe {

// nullptr when `block` (read from `offset`) carries a diskprobe header for that offset and a
// checksum that matches; otherwise what is wrong, as static text. run_id 0 accepts any run
// (a read workload checks data an earlier run wrote); otherwise it must match (a lost write
// leaves the previous run's block behind, intact but stale).
// With interval (verify_interval, dividing bs), each chunk of that many bytes carries its own
// header and checksum, all of one write (the same seq); *bad_at is then where in the block the
// first wrong chunk starts.
const char* check_block(const uint8_t* block, uint32_t bs, uint64_t offset, uint64_t run_id,
                        uint64_t* seq = nullptr, uint32_t interval = 0, uint32_t* bad_at = nullptr);

// The order one job laid its writes over the region, kept instead of a sequence number per
// block: write seq s (1-based) was the s-th the job issued, and writes walk the region's n
// blocks in passes (in order, or in the random map's permutation, which can be inverted), so
// the seq of the last write to any block follows from the number of writes. Unknown when two
// jobs write one file (which of them wrote last is timing) or with norandommap.
struct WriteOrder {
  enum class Kind { Unknown, Sequential, Permutation };
  Kind kind = Kind::Unknown;
  uint64_t nblocks = 0;       // blocks per pass
  uint64_t writes = 0;        // seqs 1..writes were issued
  uint32_t in_flight = 1;     // I/Os at once: two writes to one block closer than this may land either way
  BlockPermutation perm;      // Permutation: the writes' permutation as the job left it

  // nullptr when `seq` can be the last write to block `block`; otherwise why not, with the
  // seq the last write carried in *expected (*at_least: only a lower bound, when `exact` is
  // false or the region is too large to count the block's place in its pass).
  const char* check(uint64_t block, uint64_t seq, bool exact, uint64_t* expected, bool* at_least) const;
};

// Blocks the jobs that share one file wrote: bit i = block i of the region. One map per file
// (not per job), set with a relaxed atomic OR at each completed write, so 64 jobs verifying a
// 1 TiB device hold 32 MiB of map, not 2 GiB.
struct WrittenBlocks {
  std::string path;
  uint64_t region_start = 0;
  uint32_t bs = 0;
  unsigned first_job = 0;  // named in mismatches
  unsigned writers = 0;    // jobs writing this file; with one, `order` says which write was last
  uint32_t interval = 0;   // verify_interval: each chunk of a block checked on its own (0: the block)
  WriteOrder order;
  size_t words = 0;
  std::unique_ptr<std::atomic<uint64_t>[]> bits;

  WrittenBlocks(std::string p, uint64_t start, uint32_t block, unsigned job, uint64_t nblocks)
      : path(std::move(p)), region_start(start), bs(block), first_job(job), words((nblocks + 63) / 64),
        bits(new std::atomic<uint64_t>[words]) {
    for (size_t i = 0; i < words; ++i) bits[i].store(0, std::memory_order_relaxed);
  }
  void set(uint64_t i) { bits[i / 64].fetch_or(uint64_t{1} << (i % 64), std::memory_order_relaxed); }
  // A write that failed, came back short or was dropped at the stop: what the block holds is
  // unknown, so the verify pass leaves it out (fio unlogs such writes too).
  void clear(uint64_t i) { bits[i / 64].fetch_and(~(uint64_t{1} << (i % 64)), std::memory_order_relaxed); }
  bool test(uint64_t i) const { return (bits[i / 64].load(std::memory_order_relaxed) >> (i % 64)) & 1; }
};

// Reads back every written block of `w` in large sequential reads and checks it; mismatches
// go to `out` under w.first_job. Stops early when `stop` becomes true.
Status verify_written(const WrittenBlocks& w, bool direct, uint64_t run_id, VerifyStats& out,
                      const std::atomic<bool>* stop);

}  // namespace diskprobe
