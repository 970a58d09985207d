// The --paranoid zero sampler: a freshly provisioned cloud disk reads zeroes, a reused one
// may hold data that no signature announces. Reads the first and last MiB and 64 random
// 4 KiB blocks; anything that is neither zero nor diskprobe's own earlier writes to THIS
// device (block_header.h) is foreign.
//
// Own data, for any bs the engine takes: a block diskprobe wrote starts with a header whose
// `offset` is where it sits and whose `device_id` is this device's identity; the rest of the
// block is random. Every block of one run (run_id) starts at region_start + k * bs, so the
// gcd of the distances between the headers of a run, over everything sampled, is its write
// size (or a multiple, when it wrote sparsely). Every nonzero byte of a sampled window must
// then lie in [header, header + that size) of a header of this device: a window mixing own
// blocks and bytes without a header is foreign (a run of 4 KiB blocks with 64 KiB of other
// data over it). While only one header of a run was seen, its block reaches to the next
// header. A byte outside every block whose header survives is still own when the slot of a
// known run holding it starts with a header of this device (a later run overwrote the start
// of an earlier, larger block). Bytes before a window's first header belong to a block that
// started earlier: the sampler looks back for the nearest valid header, first through the
// kLookbackBytes before the window (every bs up to 1 MiB, any alignment), then at the
// power-of-two aligned starts up to 1 GiB. A header of another device -> foreign. A header
// whose offset field is not where it sits (a copy) is data, not a header.
// What this cannot tell: foreign bytes written later inside one of diskprobe's own blocks
// that leave every header in place (without verify the blocks carry no checksum).
//
// Each read goes into a buffer poisoned first: sectors the device left poisoned returned no
// data (null_blk without memory_backed), they are no data on the disk, not foreign data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "diskprobe/base/fd.h"
#include "diskprobe/base/status.h"

namespace diskprobe::safety {

inline constexpr uint64_t kEdgeSampleBytes = 1ull << 20;  // first and last MiB
inline constexpr uint32_t kRandomSamples = 64;
inline constexpr uint32_t kRandomSampleBytes = 4096;
inline constexpr uint64_t kLookbackBytes = 1ull << 20;       // linear search for a header
inline constexpr uint64_t kMaxAlignedLookback = 1ull << 30;  // power-of-two block starts
inline constexpr uint64_t kParanoidMinBytes = 1ull << 30;    // default on from 1 GiB
inline constexpr size_t kMaxForeignListed = 8;

// Reads exactly `len` bytes at `offset` into `buf` (4096-aligned). An error, a short read
// or end of device is an error: the sampler refuses what it could not read.
class BlockReader {
 public:
  virtual ~BlockReader() = default;
  virtual Status read(uint64_t offset, uint8_t* buf, size_t len) const = 0;
};

// A reader over an open descriptor of a block device: O_DIRECT (switched on with F_SETFL for
// each read and off again, so the page cache is not filled with the sample) where offset
// and length are multiples of `logical_block_size`, buffered otherwise.
std::unique_ptr<BlockReader> fd_reader(const Fd& fd, std::string path, uint32_t logical_block_size);

struct Foreign {
  uint64_t offset = 0;  // first byte the sampler could not account for
  std::string what;     // "data without a diskprobe header", "diskprobe data written to another device"
};

struct SampleReport {
  bool ok = false;  // false: a read failed, `error` says which; refuse
  std::string error;
  uint32_t windows = 0;  // places sampled
  uint32_t zero_windows = 0, own_windows = 0;
  // Windows whose read succeeded but left the buffer as it was (null_blk without
  // memory_backed returns no data): no data was read there, so none was found.
  uint32_t no_data_windows = 0;
  uint64_t bytes_read = 0;
  uint64_t unfilled_bytes = 0;  // bytes, in any read, that the device did not fill
  std::vector<Foreign> foreign;  // one per window that is neither zero nor own data
};

// Samples a device of `size` bytes; `device_id` is device_identity() of it; `seed` picks the
// random blocks (the same seed, the same blocks).
SampleReport sample_for_data(const BlockReader& reader, uint64_t size, uint64_t device_id, uint64_t seed);

// The same judgement over every byte of the device, in windows of kEdgeSampleBytes (the deep
// probe's read of small devices).
SampleReport scan_whole_device(const BlockReader& reader, uint64_t size, uint64_t device_id, uint64_t seed);

}  // namespace diskprobe::safety
