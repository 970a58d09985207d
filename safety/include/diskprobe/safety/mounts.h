// What the running system uses: /proc/self/mountinfo and /proc/swaps, parsed.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "diskprobe/base/status.h"
#include "diskprobe/base/sysroot.h"
#include "diskprobe/safety/probe.h"

namespace diskprobe::safety {

// One line of mountinfo (Documentation/filesystems/proc.rst, 3.5), octal escapes undone.
struct MountEntry {
  DevNum dev;               // field 3; an anonymous 0:N for btrfs, overlay, tmpfs
  std::string mount_point;  // "/", "/mnt/data"
  std::string fstype;       // "ext4"
  std::string source;       // "/dev/vda1", "tmpfs"
};

// One active swap area of /proc/swaps.
struct SwapEntry {
  std::string path;  // "/dev/zram0", "/swapfile"
  std::string type;  // "partition" or "file"
};

// A malformed line fails the whole parse (its number and text in the message): a preflight
// that skipped it could miss a mount.
Result<std::vector<MountEntry>> parse_mountinfo(std::string_view text, std::string_view where);
Result<std::vector<SwapEntry>> parse_swaps(std::string_view text, std::string_view where);

// root.procfs()/self/mountinfo and root.procfs()/swaps. A kernel without swap support has no
// /proc/swaps: that is no swap, not an error.
Result<std::vector<MountEntry>> read_mounts(const SysRoot& root);
Result<std::vector<SwapEntry>> read_swaps(const SysRoot& root);

}  // namespace diskprobe::safety
