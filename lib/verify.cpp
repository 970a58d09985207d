#include "verify.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <memory>

#include "diskprobe/core/block_header.h"
#include "diskprobe/core/fd.h"

namespace diskprobe {

const char* check_block(const uint8_t* block, uint32_t bs, uint64_t offset, uint64_t run_id) {
  auto h = decode_block_header(block, bs);
  if (!h) return "no diskprobe header (magic or version wrong)";
  if (h->offset != offset) return "header names another offset (misplaced write)";
  if (run_id != 0 && h->run_id != run_id) return "block from another run (write lost)";
  if (h->crc32c == 0) return "written without a checksum (no --verify on the write run)";
  if (block_checksum(block, bs) != h->crc32c) return "bad checksum (data changed)";
  return nullptr;
}

namespace {

struct FreeDeleter {
  void operator()(uint8_t* p) const { std::free(p); }
};

}  // namespace

Status verify_written(const WrittenBlocks& w, bool direct, uint64_t run_id, VerifyStats& out,
                      const std::atomic<bool>* stop) {
  const unsigned job = w.first_job;
  auto fd = Fd::open(w.path, O_RDONLY | (direct ? O_DIRECT : 0));
  if (!fd) return make_error("verify: " + fd.error());
  const uint64_t nblocks = w.words * 64;
  // 1 MiB reads (at least one block): sequential and large, so the pass runs at the device's
  // bandwidth rather than its IOPS.
  const uint64_t per_read = std::max<uint64_t>(1, (1u << 20) / w.bs);
  void* mem = nullptr;
  if (posix_memalign(&mem, 4096, per_read * w.bs) != 0) return make_error("verify: cannot allocate a buffer");
  std::unique_ptr<uint8_t, FreeDeleter> buf(static_cast<uint8_t*>(mem));
  for (uint64_t first = 0; first < nblocks; first += per_read) {
    if (stop && stop->load(std::memory_order_relaxed)) break;
    uint64_t n = std::min(per_read, nblocks - first);
    // Skip a stretch nobody wrote; read only up to its last written block.
    uint64_t last = first + n;
    while (last > first && !w.test(last - 1)) --last;
    if (last == first) continue;
    n = last - first;
    uint64_t off = w.region_start + first * w.bs;
    size_t len = static_cast<size_t>(n * w.bs);
    size_t done = 0;
    while (done < len) {
      ssize_t r = ::pread(fd->get(), buf.get() + done, len - done, static_cast<off_t>(off + done));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      done += static_cast<size_t>(r);
    }
    for (uint64_t i = 0; i < n; ++i) {
      if (!w.test(first + i)) continue;
      uint64_t block_off = off + i * w.bs;
      ++out.blocks_checked;
      if ((i + 1) * w.bs > done) {
        out.add_mismatch(job, block_off, "read back failed or came back short");
        continue;
      }
      if (const char* why = check_block(buf.get() + i * w.bs, w.bs, block_off, run_id)) {
        out.add_mismatch(job, block_off, why);
      }
    }
  }
  return Ok{};
}

}  // namespace diskprobe
