#include "diskprobe/base/fd.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace diskprobe {

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) {
    reset();
    fd_ = o.release();
  }
  return *this;
}

Fd::~Fd() { reset(); }

void Fd::reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Result<Fd> Fd::open(const std::string& path, int flags, unsigned mode) {
  int fd;
  do {
    fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0 && errno == EPERM && (flags & O_NOATIME)) return open(path, flags & ~O_NOATIME, mode);
  if (fd < 0) return make_error(errno_message("open", path, errno));
  return Fd(fd);
}

}  // namespace diskprobe
