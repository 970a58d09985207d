// The region of a target a job works on: resolved once from the spec and the target's size
// and handed to everything that touches the target (the engine, the zeroing after a write
// run), so none of them can rebuild a different one.
#pragma once

#include <cstdint>

#include "diskprobe/spec/job_spec.h"

namespace diskprobe {

struct Target;

struct Region {
  uint64_t offset = 0;  // first byte the run may touch
  uint64_t size = 0;    // bytes from offset
  // The block grids: reads at offset + k * read_bs, writes at offset + k * write_bs.
  uint32_t read_bs = 0, write_bs = 0;
  uint64_t end() const { return offset + size; }
  // One past the last byte a write can reach: whole write blocks only.
  uint64_t write_end() const { return write_bs ? offset + size / write_bs * write_bs : end(); }
};

// offset=N% and size=N% resolved against the target's size as fio does: a percentage offset
// aligned down to the smaller block size, a size cut at the end of the target. The spec's
// jobs all share this one region (there is no offset_increment).
Region resolve_region(const JobSpec& spec, const Target& target);

}  // namespace diskprobe
