#include "diskprobe/device/block_device.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace diskprobe {
namespace fs = std::filesystem;

namespace {

bool valid_kernel_name(std::string_view s) {
  if (s.empty() || s == "." || s == ".." || s.size() > 64) return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.' || c == ':' || c == '!';
    if (!ok) return false;
  }
  return true;
}

bool has_dotdot(std::string_view path) {
  for (const auto& part : fs::path(path)) {
    if (part == "..") return true;
  }
  return false;
}

uint64_t to_u64(const Result<std::string>& r, uint64_t fallback) {
  if (!r) return fallback;
  char* end = nullptr;
  unsigned long long v = std::strtoull(r->c_str(), &end, 10);
  if (end == r->c_str()) return fallback;
  return v;
}

Error name_error(NameError* why, NameError kind, std::string msg) {
  if (why) *why = kind;
  return make_error(std::move(msg));
}

}  // namespace

Result<std::string> parse_device_name(const SysRoot& root, std::string_view arg, NameError* why) {
  if (why) *why = NameError::None;
  std::string a(arg);
  if (a.empty()) return name_error(why, NameError::BadName, "empty device name: give a name like vdc or /dev/vdc");
  if (a.front() != '/') {
    if (!valid_kernel_name(a)) {
      return name_error(why, NameError::BadName,
                        "bad device name '" + a + "': give a kernel name like vdc or an absolute path like /dev/vdc");
    }
    return a;
  }
  if (has_dotdot(a)) {
    return name_error(why, NameError::BadName,
                      "bad device path '" + a + "': '..' is not allowed, give the path without it");
  }
  struct stat st {};
  if (::stat(a.c_str(), &st) != 0) {
    int err = errno;
    return name_error(why, err == ENOENT ? NameError::NotFound : NameError::BadName,
                      errno_message("stat", a, err) + ": check the device name with 'diskprobe devices'");
  }
  if (!S_ISBLK(st.st_mode)) {
    return name_error(why, NameError::NotBlockDevice,
                      a + " is not a block device: give a disk such as /dev/vdc");
  }
  // The kernel name comes from sysfs, so /dev/disk/by-id links and renamed nodes work too.
  std::string target =
      root.sys_realpath("dev/block/" + std::to_string(major(st.st_rdev)) + ":" + std::to_string(minor(st.st_rdev)));
  if (!target.empty()) return fs::path(target).filename().string();
  std::error_code ec;
  auto canon = fs::canonical(a, ec);
  if (!ec && canon.parent_path() == "/dev") return canon.filename().string();
  return name_error(why, NameError::NotFound, a + " is a block device that sysfs does not list");
}

std::string disk_of(const SysRoot& root, std::string_view name) {
  std::string rel = "class/block/" + std::string(name);
  if (!root.sys_exists(rel + "/partition")) return std::string(name);
  // A partition's sysfs directory sits inside its disk's.
  std::string real = root.sys_realpath(rel);
  if (real.empty()) return std::string(name);
  return fs::path(real).parent_path().filename().string();
}

Result<BlockDevice> read_block_device(const SysRoot& root, std::string_view name) {
  if (!valid_kernel_name(name)) return make_error("bad device name '" + std::string(name) + "'");
  BlockDevice d;
  d.name = std::string(name);
  d.path = "/dev/" + d.name;
  d.sysfs_rel = "class/block/" + d.name;
  if (!root.sys_exists(d.sysfs_rel)) {
    return make_error("no block device named " + d.name + " (" + root.sys_path(d.sysfs_rel) +
                      " does not exist): list devices with 'diskprobe devices'");
  }
  auto dev = root.read_sys(d.sysfs_rel + "/dev");
  if (!dev) return make_error(dev.error());
  if (std::sscanf(dev->c_str(), "%u:%u", &d.major, &d.minor) != 2) {
    return make_error(root.sys_path(d.sysfs_rel + "/dev") + ": expected MAJOR:MINOR, read '" + *dev + "'");
  }
  d.is_partition = root.sys_exists(d.sysfs_rel + "/partition");
  d.disk = disk_of(root, d.name);
  std::string queue = "class/block/" + d.disk + "/queue/";
  d.size_bytes = to_u64(root.read_sys(d.sysfs_rel + "/size"), 0) * 512;
  d.logical_block_size = static_cast<uint32_t>(to_u64(root.read_sys(queue + "logical_block_size"), 512));
  d.physical_block_size = static_cast<uint32_t>(to_u64(root.read_sys(queue + "physical_block_size"), 512));
  d.rotational = to_u64(root.read_sys(queue + "rotational"), 0) == 1;
  d.read_only = to_u64(root.read_sys(d.sysfs_rel + "/ro"), 0) == 1;
  std::string devdir = "class/block/" + d.disk + "/device/";
  if (auto m = root.read_sys(devdir + "model")) d.model = *m;
  if (auto s = root.read_sys(devdir + "serial")) {
    d.serial = *s;
  } else if (auto s2 = root.read_sys("class/block/" + d.disk + "/serial")) {
    d.serial = *s2;
  }
  if (auto w = root.read_sys(devdir + "wwid")) {
    d.wwid = *w;
  } else if (auto w2 = root.read_sys("class/block/" + d.disk + "/wwid")) {
    d.wwid = *w2;
  }
  for (const auto& e : root.list_sys(d.sysfs_rel)) {
    if (e.rfind(d.name, 0) == 0 && root.sys_exists(d.sysfs_rel + "/" + e + "/partition")) {
      d.partitions.push_back(e);
    }
  }
  d.holders = root.list_sys(d.sysfs_rel + "/holders");
  return d;
}

std::vector<std::string> list_disks(const SysRoot& root) {
  std::vector<std::string> disks;
  for (const auto& e : root.list_sys("class/block")) {
    if (!root.sys_exists("class/block/" + e + "/partition")) disks.push_back(e);
  }
  return disks;
}

Result<DiskCounters> read_disk_counters(const SysRoot& root, const BlockDevice& dev) {
  std::string rel = dev.sysfs_rel + "/stat";
  auto text = root.read_sys(rel);
  if (!text) return make_error(text.error());
  DiskCounters c;
  // Right at the read: util is busy time over the time between two readings.
  c.read_at_ns = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
  std::istringstream in(*text);
  uint64_t* fields[] = {&c.read_ios,      &c.read_merges,    &c.read_sectors,   &c.read_ticks_ms,
                        &c.write_ios,     &c.write_merges,   &c.write_sectors,  &c.write_ticks_ms,
                        &c.in_flight,     &c.io_ticks_ms,    &c.time_in_queue_ms};
  for (uint64_t* f : fields) {
    if (!(in >> *f)) {
      // As fio's diskutil.c does: a line without the expected fields is not trusted.
      return make_error(root.sys_path(rel) + ": expected at least 11 fields, read '" + *text + "'");
    }
  }
  return c;
}

DiskStats disk_stats_delta(const DiskCounters& b, const DiskCounters& a) {
  DiskStats s;
  s.valid = true;
  s.read_ios = a.read_ios - b.read_ios;
  s.read_merges = a.read_merges - b.read_merges;
  s.read_ticks_ms = a.read_ticks_ms - b.read_ticks_ms;
  s.write_ios = a.write_ios - b.write_ios;
  s.write_merges = a.write_merges - b.write_merges;
  s.write_ticks_ms = a.write_ticks_ms - b.write_ticks_ms;
  s.io_ticks_ms = a.io_ticks_ms - b.io_ticks_ms;
  s.time_in_queue_ms = a.time_in_queue_ms - b.time_in_queue_ms;
  // Over the wall time the counters span, not the measured runtime: they also count the
  // settle, ramp, drain and verify pass around it (fio's diskutil divides the same way).
  if (a.read_at_ns > b.read_at_ns) {
    s.span_s = static_cast<double>(a.read_at_ns - b.read_at_ns) / 1e9;
    s.util_percent = std::min(100.0, 100.0 * static_cast<double>(s.io_ticks_ms) / (s.span_s * 1000.0));
  }
  return s;
}

}  // namespace diskprobe
