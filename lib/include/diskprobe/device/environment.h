// What makes two runs comparable: the software, the machine and the device.
#pragma once

#include <cstdint>
#include <string>

namespace diskprobe {

struct BlockDevice;
class SysRoot;

struct RunEnvironment {
  std::string diskprobe_version;
  std::string kernel;            // /proc/sys/kernel/osrelease
  std::string cpu_model;         // first "model name" of /proc/cpuinfo
  unsigned cpu_count = 0;        // "processor" entries of /proc/cpuinfo
  std::string dmi_product_name;  // /sys/class/dmi/id/product_name: the cloud instance family
  std::string device_model, device_serial;
  uint64_t device_size_bytes = 0;
};

// Reads through `root` so a fixture tree can stand in; a missing file leaves its field empty.
RunEnvironment read_environment(const SysRoot& root, const BlockDevice& dev, std::string version);

}  // namespace diskprobe
