// What the running kernel's io_uring offers of what the engine uses, for `--version`.
#pragma once

#include <string>
#include <vector>

namespace diskprobe {

struct UringFeature {
  std::string name;  // "registered files", "opcode WRITE_FIXED"
  bool supported = false;
  std::string detail;  // why not, in the kernel's words ("io_uring_setup: Operation not permitted")
};

struct UringFeatures {
  std::string kernel_release;          // uname -r
  bool ring = false;                   // a ring could be set up at all
  std::string ring_error;              // why not
  std::vector<UringFeature> features;  // every feature the engine uses, in a fixed order
  // Every feature the engine needs for its fast path is there.
  bool all_supported() const;
};

// Sets up a small test ring, registers a file and a buffer, and asks the kernel which
// opcodes it knows. Touches no device: the file registered is /dev/null.
UringFeatures probe_uring_features();

}  // namespace diskprobe
