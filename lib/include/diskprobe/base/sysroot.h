// SysRoot: every read of /sys and /proc goes through here, so a test can point it at a
// fixture tree (--sysfs, --procfs) exactly as node_exporter's --path.sysfs does.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "diskprobe/base/status.h"

namespace diskprobe {

class SysRoot {
 public:
  SysRoot() : SysRoot("/sys", "/proc") {}
  SysRoot(std::string sysfs, std::string procfs);

  // Absolute path of a sysfs / procfs entry; `rel` is relative ("block/vda/queue/rq_affinity").
  std::string sys_path(std::string_view rel) const;
  std::string proc_path(std::string_view rel) const;

  // Whole file, trailing newline and spaces trimmed.
  Result<std::string> read_sys(std::string_view rel) const;
  Result<std::string> read_proc(std::string_view rel) const;
  // Whole file untrimmed (for multi-line files like /proc/interrupts, mountinfo).
  Result<std::string> read_proc_raw(std::string_view rel) const;

  bool sys_exists(std::string_view rel) const;
  // Sorted entry names of a sysfs directory; empty when it does not exist.
  std::vector<std::string> list_sys(std::string_view rel) const;
  // The same, with an error where the directory exists and cannot be read (for a check that
  // must fail closed); empty where it does not exist.
  Result<std::vector<std::string>> read_sys_dir(std::string_view rel) const;
  // Target of a sysfs symlink, resolved to a canonical path; empty on failure.
  std::string sys_realpath(std::string_view rel) const;

  // Writes `value` to a sysfs attribute (tuning setters only).
  Status write_sys(std::string_view rel, std::string_view value) const;

  const std::string& sysfs() const { return sysfs_; }
  const std::string& procfs() const { return procfs_; }

 private:
  std::string sysfs_;
  std::string procfs_;
};

// Limit on any file read whole: far above the largest /proc/interrupts or run report seen.
constexpr size_t kMaxFileBytes = 64u << 20;
// Reads a whole regular file of at most `max_bytes`; used by SysRoot and for the few files
// outside it (profiles, reports, /etc/os-release). A device, pipe or directory is refused
// before anything is read.
Result<std::string> read_file(const std::string& path, size_t max_bytes = kMaxFileBytes);
std::string trim(std::string_view s);

}  // namespace diskprobe
