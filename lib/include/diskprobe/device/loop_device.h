// LoopDevice: a loop device over a sparse backing file, detached and deleted on destruction.
// Used for --scratch and by the integration tests to get real block devices.
#pragma once

#include <cstdint>
#include <string>

#include "diskprobe/base/status.h"

namespace diskprobe {

class LoopDevice {
 public:
  LoopDevice() = default;
  LoopDevice(const LoopDevice&) = delete;
  LoopDevice& operator=(const LoopDevice&) = delete;
  LoopDevice(LoopDevice&& o) noexcept;
  LoopDevice& operator=(LoopDevice&& o) noexcept;
  ~LoopDevice();

  struct Options {
    uint64_t size_bytes = 64ull << 20;
    std::string dir;             // backing file directory; empty = $TMPDIR or /tmp
    bool direct_io = true;       // LO_FLAGS_DIRECT_IO: I/O reaches the backing file uncached
    bool read_only = false;
    uint32_t logical_block_size = 0;  // 0 = kernel default (512)
    bool partscan = false;       // LO_FLAGS_PARTSCAN: partitions get their own nodes
  };
  // Creates the sparse file, attaches it (LOOP_CONFIGURE, or LOOP_SET_FD on old kernels)
  // with autoclear, and unlinks the file at once: the device holds the only reference, and
  // the device goes away when its last opener closes. So even SIGKILL leaves nothing behind.
  static Result<LoopDevice> create(const Options& opts);

  const std::string& path() const { return path_; }          // "/dev/loop3"
  std::string name() const;                                   // "loop3"
  const std::string& backing_file() const { return backing_; }  // already unlinked

  // Detaches the device and removes the backing file. Safe to call twice.
  Status remove();

 private:
  std::string path_;
  std::string backing_;
  int fd_ = -1;  // keeps the autoclear device alive until remove()
};

// True when this process can create loop devices (root and /dev/loop-control).
bool loop_devices_available(std::string* why_not);

}  // namespace diskprobe
