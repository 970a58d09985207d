#include "verify.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <memory>

#include "diskprobe/base/aligned_buffer.h"
#include "diskprobe/device/block_header.h"
#include "diskprobe/base/fd.h"

namespace diskprobe {

const char* check_block(const uint8_t* block, uint32_t bs, uint64_t offset, uint64_t run_id, uint64_t* seq,
                        uint32_t interval, uint32_t* bad_at) {
  if (bad_at) *bad_at = 0;
  if (interval && interval < bs) {
    uint64_t first = 0;
    for (uint32_t c = 0; c < bs; c += interval) {
      uint64_t s = 0;
      const char* why = check_block(block + c, interval, offset + c, run_id, &s);
      if (!why && c > 0 && s != first) why = "chunks of two writes in one block (torn write)";
      if (why) {
        if (bad_at) *bad_at = c;
        return why;
      }
      if (c == 0) first = s;
    }
    if (seq) *seq = first;
    return nullptr;
  }
  auto h = decode_block_header(block, bs);
  if (!h) return "no diskprobe header (magic or version wrong)";
  if (h->version == kContentHeaderVersion) return "a content block (dedupe or compress buffers): nothing to check it by";
  if (h->offset != offset) return "header names another offset (misplaced write)";
  if (run_id != 0 && h->run_id != run_id) return "block from another run (write lost)";
  if (h->crc32c == 0) return "written without a checksum (no --verify on the write run)";
  if (block_checksum(block, bs) != h->crc32c) return "bad checksum (data changed)";
  if (seq) *seq = h->seq;
  return nullptr;
}

namespace {

constexpr const char* kStale = "stale";  // an older write of this run: the last one was lost
constexpr const char* kNeverHere = "seq not written to this offset";
// Counting a block's place in a pass walks the permutation up to it: done for the few listed
// mismatches, and only up to this many steps (~50 ms); past it the report gives a lower bound.
constexpr uint64_t kMaxPlaceWalk = uint64_t{1} << 24;

}  // namespace

const char* WriteOrder::check(uint64_t block, uint64_t seq, bool exact, uint64_t* expected, bool* at_least) const {
  *at_least = false;
  if (kind == Kind::Unknown || nblocks == 0 || writes == 0 || seq == 0) return nullptr;
  const uint64_t n = nblocks;
  if (seq > writes) {
    *expected = 0;
    return kNeverHere;
  }
  if (kind == Kind::Sequential) {
    // Write s went to block (s - 1) % n: the last one to `block` is the largest such s.
    if (writes < block + 1) return nullptr;  // never written (the map would not list it)
    *expected = block + 1 + n * ((writes - block - 1) / n);
    if (seq == *expected) return nullptr;
    if ((seq - 1) % n != block) return kNeverHere;
    return seq < *expected && *expected - seq < in_flight ? nullptr : kStale;
  }
  // Permutation: pass p holds seqs p*n+1 .. p*n+n, each block once. The last pass is the
  // permutation's current one; a block it has not handed out yet was last written a pass before.
  const uint64_t last_pass = (writes - 1) / n;
  const bool in_last = perm.handed_out(block);
  if (!in_last && last_pass == 0) return nullptr;
  const uint64_t pass = in_last ? last_pass : last_pass - 1;
  const uint64_t found_pass = (seq - 1) / n;
  if (found_pass == pass) return nullptr;  // each pass writes a block once: this is that write
  const uint64_t index = perm.index_of(block, !in_last);
  const uint64_t found_place = (seq - 1) % n;
  // Both writes may have been in flight together (seqs closer than in_flight): either may
  // have landed last. last - seq < in_flight <=> the block's place in its pass < room.
  if (found_pass < pass && found_place + in_flight > (pass - found_pass) * n) {
    uint64_t room = found_place + in_flight - (pass - found_pass) * n;
    if (perm.place_of(index, !in_last, room) < room) return nullptr;
  }
  const bool walk = exact && index <= kMaxPlaceWalk;
  *expected = pass * n + 1 + (walk ? perm.place_of(index, !in_last, n) : 0);
  *at_least = !walk;
  return found_pass < pass ? kStale : kNeverHere;
}

// A valid block of this run: is it the last write to its offset? The exact expected seq is
// counted only for a mismatch that will be listed.
static void stale_check(const WrittenBlocks& w, uint64_t index, uint64_t seq, uint64_t offset, VerifyStats& out) {
  uint64_t expected = 0;
  bool at_least = false;
  const bool listed = out.first.size() < VerifyStats::kMaxListed;
  const char* why = w.order.check(index, seq, listed, &expected, &at_least);
  if (!why) return;
  out.add_mismatch(VerifyMismatch{w.first_job, offset, why, seq, expected, at_least});
}

Status verify_written(const WrittenBlocks& w, bool direct, uint64_t run_id, VerifyStats& out,
                      const std::atomic<bool>* stop) {
  const unsigned job = w.first_job;
  auto fd = Fd::open(w.path, O_RDONLY | (direct ? O_DIRECT : 0));
  if (!fd) return make_error("verify: " + fd.error());
  const uint64_t nblocks = w.words * 64;
  // 1 MiB reads (at least one block): sequential and large, so the pass runs at the device's
  // bandwidth rather than its IOPS.
  const uint64_t per_read = std::max<uint64_t>(1, (1u << 20) / w.bs);
  AlignedBuffer buf = aligned_buffer(per_read * w.bs);
  if (!buf) return make_error("verify: cannot allocate a buffer");
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
      uint64_t seq = 0;
      uint32_t at = 0;
      if (const char* why = check_block(buf.get() + i * w.bs, w.bs, block_off, run_id, &seq, w.interval, &at)) {
        out.add_mismatch(job, block_off + at, why);
      } else if (w.order.kind != WriteOrder::Kind::Unknown) {
        stale_check(w, first + i, seq, block_off, out);
      }
    }
  }
  return Ok{};
}

}  // namespace diskprobe
