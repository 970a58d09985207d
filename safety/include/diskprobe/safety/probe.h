// DeviceProber: the system calls and libblkid behind the preflight, as an interface so unit
// tests can put a fake in front of it (EPERM, EIO, a libblkid error) and see the preflight
// refuse. The real one opens read-only, never for writing.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "diskprobe/base/fd.h"

namespace diskprobe::safety {

class BlockReader;  // sampler.h

// One signature libblkid found ("ext4" filesystem at offset 1080, "gpt" partition table).
struct Signature {
  std::string type;   // "ext4", "gpt", "swap", "crypto_LUKS", "LVM2_member"
  std::string usage;  // "filesystem", "partition table", "raid", "crypto", "other"
  uint64_t offset = 0;
  bool partition_table = false;  // PTTYPE (gpt, dos, ...) rather than TYPE
};

// A device number as the kernel prints it in sysfs "dev" and mountinfo: "major:minor".
struct DevNum {
  unsigned major = 0, minor = 0;
  bool operator==(const DevNum&) const = default;
};

struct Opened {
  Fd fd;                  // valid on success
  int err = 0;            // positive errno on failure (EBUSY: someone holds it exclusively)
  std::string error;      // "open(/dev/loop3): Permission denied"
  bool is_block = false;  // fstat of the open descriptor
  DevNum rdev;
};

struct Probed {
  bool ok = false;
  std::string error;  // "blkid_do_probe(/dev/loop3): Input/output error"
  std::vector<Signature> signatures;
};

// What stat(2) says about a path: the device it is (block special) or the one it lives on.
struct PathDevice {
  bool is_block = false;
  DevNum rdev;  // the device itself, when is_block
  DevNum dev;   // the filesystem holding the path
  uint64_t ino = 0;
};

class DeviceProber {
 public:
  virtual ~DeviceProber() = default;
  // open(2) O_RDONLY, plus O_EXCL when `exclusive`; never for writing.
  virtual Opened open(const std::string& path, bool exclusive) const = 0;
  // Every signature libblkid finds through `fd` (filesystems, partition tables, RAID, ...).
  virtual Probed probe(const Fd& fd, const std::string& path) const = 0;
  // The same over the `size` bytes from `offset`, as if they were the device (deep_probe.h).
  virtual Probed probe_range(const Fd& fd, const std::string& path, uint64_t offset, uint64_t size) const = 0;
  // BLKROGET; nullopt when the ioctl fails.
  virtual std::optional<bool> read_only(const Fd& fd) const = 0;
  // stat(2) of a mount source or swap entry; nullopt when it does not exist.
  virtual std::optional<PathDevice> stat_path(const std::string& path) const = 0;
  // What the --paranoid sampler reads through: `fd`, read-only. The default is fd_reader().
  virtual std::unique_ptr<BlockReader> reader(const Fd& fd, const std::string& path,
                                              uint32_t logical_block_size) const;
};

// The real prober: Fd::open, fstat, libblkid (in process, never the blkid program), ioctl.
const DeviceProber& system_prober();

// The libblkid this process runs ("2.38.1"), or "unknown": `version` prints it beside the one
// built against, since a signature libblkid does not know is one the preflight cannot see.
std::string blkid_running_version();

}  // namespace diskprobe::safety
