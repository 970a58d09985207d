// Data verification (--verify crc32c): what a block must look like when read back, and the
// read-back pass after a write workload (fio's do_verify). Private to lib/.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "diskprobe/core/result.h"
#include "diskprobe/core/results.h"

namespace diskprobe {

// nullptr when `block` (read from `offset`) carries a diskprobe header for that offset and a
// checksum that matches; otherwise what is wrong, as static text. run_id 0 accepts any run
// (a read workload checks data an earlier run wrote); otherwise it must match (a lost write
// leaves the previous run's block behind, intact but stale).
const char* check_block(const uint8_t* block, uint32_t bs, uint64_t offset, uint64_t run_id);

// Blocks the jobs that share one file wrote: bit i = block i of the region. One map per file
// (not per job), set with a relaxed atomic OR at each completed write, so 64 jobs verifying a
// 1 TiB device hold 32 MiB of map, not 2 GiB.
struct WrittenBlocks {
  std::string path;
  uint64_t region_start = 0;
  uint32_t bs = 0;
  unsigned first_job = 0;  // named in mismatches
  size_t words = 0;
  std::unique_ptr<std::atomic<uint64_t>[]> bits;

  WrittenBlocks(std::string p, uint64_t start, uint32_t block, unsigned job, uint64_t nblocks)
      : path(std::move(p)), region_start(start), bs(block), first_job(job), words((nblocks + 63) / 64),
        bits(new std::atomic<uint64_t>[words]) {
    for (size_t i = 0; i < words; ++i) bits[i].store(0, std::memory_order_relaxed);
  }
  void set(uint64_t i) { bits[i / 64].fetch_or(uint64_t{1} << (i % 64), std::memory_order_relaxed); }
  bool test(uint64_t i) const { return (bits[i / 64].load(std::memory_order_relaxed) >> (i % 64)) & 1; }
};

// Reads back every written block of `w` in large sequential reads and checks it; mismatches
// go to `out` under w.first_job. Stops early when `stop` becomes true.
Status verify_written(const WrittenBlocks& w, bool direct, uint64_t run_id, VerifyStats& out,
                      const std::atomic<bool>* stop);

}  // namespace diskprobe
