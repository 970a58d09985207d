#include "diskprobe/base/write_out.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "diskprobe/base/fd.h"

namespace diskprobe {

Status write_fd(int fd, std::string_view text, const std::string& what) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return make_error(errno_message("write", what, errno));
    if (n == 0) return make_error(errno_message("write", what, EIO));
    done += static_cast<size_t>(n);
  }
  return Ok{};
}

Status write_file(const std::string& path, std::string_view text, unsigned mode) {
  auto fd = Fd::open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
  if (!fd) return make_error(fd.error());
  if (auto st = write_fd(fd->get(), text, path); !st) return st;
  // A pipe or a character device (--output /dev/stdout) cannot be synced, and need not be.
  if (::fsync(fd->get()) != 0 && errno != EINVAL && errno != EROFS) {
    return make_error(errno_message("fsync", path, errno));
  }
  if (::close(fd->release()) != 0) return make_error(errno_message("close", path, errno));
  return Ok{};
}

Status write_stdout(std::string_view text) { return write_fd(STDOUT_FILENO, text, "stdout"); }

void guard_std_fds() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) >= 0 || errno != EBADF) continue;
    auto null = Fd::open("/dev/null", O_RDONLY);
    if (!null) continue;
    // open() returns the lowest free descriptor: this one, unless a lower one was also closed.
    if (null->get() == fd) {
      null->release();
    } else {
      ::dup2(null->get(), fd);
    }
  }
}

}  // namespace diskprobe
