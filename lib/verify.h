// Data verification (--verify crc32c): what a block must look like when read back, and the
// read-back pass after a write workload (fio's do_verify). Private to lib/.
#pragma once

#include <atomic>
#include <cstdint>
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

// Blocks one job (or several jobs sharing a file) wrote: bit i = block i of the region.
struct WrittenBlocks {
  std::string path;
  uint64_t region_start = 0;
  uint32_t bs = 0;
  std::vector<uint64_t> bits;
  bool test(uint64_t i) const { return (bits[i / 64] >> (i % 64)) & 1; }
};

// Reads back every written block of `w` in large sequential reads and checks it; mismatches
// go to `out` under job number `job`. Stops early when `stop` becomes true.
Status verify_written(const WrittenBlocks& w, bool direct, uint64_t run_id, unsigned job, VerifyStats& out,
                      const std::atomic<bool>* stop);

}  // namespace diskprobe
