// BlockDevice: what sysfs says about a block device named by the user.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "diskprobe/base/status.h"
#include "diskprobe/base/sysroot.h"

namespace diskprobe {

struct BlockDevice {
  std::string name;        // kernel name: "vdc", "nvme0n1", "loop3", "vdc1"
  std::string path;        // "/dev/vdc"
  std::string sysfs_rel;   // "class/block/vdc" relative to the sysfs root
  std::string disk;        // whole-disk name; equals name unless this is a partition
  bool is_partition = false;
  unsigned major = 0, minor = 0;
  uint64_t size_bytes = 0;
  uint32_t logical_block_size = 512;
  uint32_t physical_block_size = 512;
  bool rotational = false;
  bool read_only = false;
  std::string model, serial;       // where sysfs has them
  std::string wwid;                // device/wwid (NVMe, SCSI) where sysfs has it
  std::vector<std::string> partitions;  // "vdc1", ...
  std::vector<std::string> holders;     // "dm-0", "md0", ...
};

// Checks a user's DEVICE argument: a bare kernel name ("vdc": letters, digits, '-', '_',
// '.', ':', never "..") or an absolute path with no ".." ("/dev/vdc", "/dev/disk/by-id/...").
// A path is resolved with stat(2) (never opened) to the kernel name of the block device
// it is, read from `root`'s dev/block/MAJ:MIN; an error says whether it is missing or not a
// block device.
enum class NameError { None, BadName, NotFound, NotBlockDevice };
Result<std::string> parse_device_name(const SysRoot& root, std::string_view arg, NameError* why = nullptr);

// Reads the device's model from sysfs. Fails when sysfs has no such block device.
Result<BlockDevice> read_block_device(const SysRoot& root, std::string_view name);

// The disk a partition is on; the name itself for a whole disk or when sysfs cannot tell.
std::string disk_of(const SysRoot& root, std::string_view name);

// Every block device sysfs lists under class/block that is a whole disk.
std::vector<std::string> list_disks(const SysRoot& root);

// The device's own counters from /sys/block/X/stat, before/after (fio's "Disk stats"): every
// I/O between the two readings (the settle, ramp, drain and verify pass too), and util as busy
// time over the wall time between them, as fio's diskutil does.
struct DiskStats {
  bool valid = false;
  uint64_t read_ios = 0, read_merges = 0, read_ticks_ms = 0;
  uint64_t write_ios = 0, write_merges = 0, write_ticks_ms = 0;
  uint64_t io_ticks_ms = 0, time_in_queue_ms = 0;
  double util_percent = 0;
  double span_s = 0;  // wall time between the two readings the counts and util cover
};

// The counters of /sys/block/X/stat (Documentation/block/stat.rst), in file order.
struct DiskCounters {
  uint64_t read_ios = 0, read_merges = 0, read_sectors = 0, read_ticks_ms = 0;
  uint64_t write_ios = 0, write_merges = 0, write_sectors = 0, write_ticks_ms = 0;
  uint64_t in_flight = 0, io_ticks_ms = 0, time_in_queue_ms = 0;
  uint64_t read_at_ns = 0;  // CLOCK_MONOTONIC (steady_clock) when the line was read
};
Result<DiskCounters> read_disk_counters(const SysRoot& root, const BlockDevice& dev);
// fio's "Disk stats" line from two readings, over the time between them (their read_at_ns).
DiskStats disk_stats_delta(const DiskCounters& before, const DiskCounters& after);

}  // namespace diskprobe
