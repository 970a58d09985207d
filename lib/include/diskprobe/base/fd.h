// Fd: an owned file descriptor; the only place that calls open/close.
#pragma once

#include <string>

#include "diskprobe/base/status.h"

namespace diskprobe {

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept;
  ~Fd();

  // open(2); the error names the path and strerror. O_NOATIME, which only the file's owner
  // (or CAP_FOWNER) may ask for, is dropped where the kernel refuses it (EPERM), as fio does.
  static Result<Fd> open(const std::string& path, int flags, unsigned mode = 0);

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }
  void reset();

 private:
  int fd_ = -1;
};

}  // namespace diskprobe
