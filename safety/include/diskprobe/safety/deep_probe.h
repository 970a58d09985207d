// The deep probe: data that libblkid's probe of the whole device does not see. Fail-closed:
// a read that fails is an error, and the preflight refuses.
//  - libblkid again at the offsets where a filesystem sits when its partition table is gone:
//    the usual first-partition starts (34 and 2048 sectors of GPT, 63 of old MBR, 1 MiB) and
//    every start a leftover GPT entry array (primary at LBA 2, backup before the last LBA,
//    or where a damaged backup header points) or MBR entry names;
//  - from 0 and each of those starts, the backup superblocks libblkid never reads: btrfs
//    copies at 64 MiB and 256 GiB, ext2/3/4 backups in the sparse_super groups (1 and the
//    powers of 3, 5, 7) for 1, 2 and 4 KiB blocks, xfs secondary superblocks at the start of
//    allocation groups 1-3 of mkfs.xfs's default geometry;
//  - a device of kWholeReadMaxBytes or less is read whole: anything not zero and not
//    diskprobe's own (sampler.h) is data. libblkid skips its RAID probers on devices under
//    about 1.4 MiB (an LVM label, md 0.90/1.2 superblocks), and a completed diskprobe run
//    zeroes the first and last 4 MiB (wipe.h), so such a device holds nothing else after one.
// A few hundred reads of at most 16 KiB, whatever the size (README, "Safety").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "diskprobe/base/fd.h"
#include "diskprobe/safety/probe.h"

namespace diskprobe::safety {

inline constexpr uint64_t kWholeReadMaxBytes = 8ull << 20;

struct Finding {
  uint64_t offset = 0;      // where it was found, in bytes from the device start
  std::string what;         // "an ext4 filesystem starting at byte 1048576 (signature at byte 1049656)"
  std::string why;          // "a filesystem without a partition table: was the table wiped?"
  bool nonzero = false;     // from the whole-device read, not a signature
  // What libblkid found over a range from `start` (what is empty then: the preflight names it).
  std::optional<Signature> signature;
  uint64_t start = 0;
};

struct DeepProbed {
  bool ok = false;
  std::string error;
  std::vector<Finding> findings;
  uint32_t reads = 0, blkid_probes = 0;
  uint64_t bytes_read = 0;
};

// Everything above, through `fd` (read-only) of a device of `size` bytes. `whole`: what
// libblkid found over the whole device; a base where a filesystem was found already (at 0,
// or from a start) is not searched for its backups, which would only say it again.
DeepProbed deep_probe(const DeviceProber& prober, const Fd& fd, const std::string& path, uint64_t size,
                      uint32_t logical_block_size, uint64_t device_id, const std::vector<Signature>& whole = {});

// The partition starts (bytes) a leftover GPT entry array or MBR names, from the first
// `head` bytes (sector 0 onwards) and the `tail` bytes that end the device; exposed for tests.
std::vector<uint64_t> leftover_partition_starts(const std::vector<uint8_t>& head, const std::vector<uint8_t>& tail,
                                                uint64_t size, uint32_t lbs);

}  // namespace diskprobe::safety
