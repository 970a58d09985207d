// BlkidProbe: one libblkid probe over an open descriptor; the only place that calls blkid_*.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "diskprobe/base/status.h"
#include "diskprobe/safety/probe.h"

struct blkid_struct_probe;

namespace diskprobe::safety {

class BlkidProbe {
 public:
  BlkidProbe(const BlkidProbe&) = delete;
  BlkidProbe& operator=(const BlkidProbe&) = delete;
  BlkidProbe(BlkidProbe&& o) noexcept : pr_(o.pr_) { o.pr_ = nullptr; }
  BlkidProbe& operator=(BlkidProbe&& o) noexcept;
  ~BlkidProbe();

  // A probe over `fd` (not taken over) with the superblock chain (type, usage, magic offset,
  // bad checksums too) and the partition chain (magic offset, GPT even without its
  // protective MBR) enabled, as wipefs sets it up.
  // `offset`/`size` (0: to the end) probe a range as if it were the device: a partition
  // whose table is gone.
  static Result<BlkidProbe> over(int fd, const std::string& path, uint64_t offset = 0, uint64_t size = 0);

  // Every signature, found as wipefs finds them: blkid_do_probe until it says done, so an
  // ambivalent device (ext4 over an old swap) shows all it holds.
  Result<std::vector<Signature>> all_signatures(const std::string& path);

 private:
  explicit BlkidProbe(blkid_struct_probe* pr) : pr_(pr) {}
  std::optional<std::string> value(const char* name) const;

  blkid_struct_probe* pr_ = nullptr;
};

}  // namespace diskprobe::safety
