#include "diskprobe/device/environment.h"

#include <sstream>

#include "diskprobe/device/block_device.h"
#include "diskprobe/base/sysroot.h"

namespace diskprobe {

RunEnvironment read_environment(const SysRoot& root, const BlockDevice& dev, std::string version) {
  RunEnvironment env;
  env.diskprobe_version = std::move(version);
  if (auto k = root.read_proc("sys/kernel/osrelease")) env.kernel = *k;
  if (auto dmi = root.read_sys("class/dmi/id/product_name")) env.dmi_product_name = *dmi;
  if (auto info = root.read_proc_raw("cpuinfo")) {
    std::istringstream in(*info);
    std::string line;
    while (std::getline(in, line)) {
      auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string key = trim(line.substr(0, colon));
      if (key == "processor") ++env.cpu_count;
      if (key == "model name" && env.cpu_model.empty()) env.cpu_model = trim(line.substr(colon + 1));
    }
  }
  env.device_model = dev.model;
  env.device_serial = dev.serial;
  env.device_size_bytes = dev.size_bytes;
  return env;
}

}  // namespace diskprobe
