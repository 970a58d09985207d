#include "diskprobe/device/loop_device.h"

#include <fcntl.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "diskprobe/base/fd.h"
#include "diskprobe/base/json_io.h"

namespace diskprobe {

namespace {

std::string temp_dir(const std::string& preferred) {
  if (!preferred.empty()) return preferred;
  const char* t = std::getenv("TMPDIR");
  return (t && *t) ? t : "/tmp";
}

// LOOP_CONFIGURE (Linux 5.8) sets fd, flags and block size atomically; older kernels need
// LOOP_SET_FD then LOOP_SET_STATUS64.
Status attach(int loop_fd, int file_fd, const LoopDevice::Options& o, const std::string& path) {
  loop_config cfg{};
  cfg.fd = static_cast<uint32_t>(file_fd);
  cfg.block_size = o.logical_block_size;
  cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR;
  if (o.direct_io) cfg.info.lo_flags |= LO_FLAGS_DIRECT_IO;
  if (o.read_only) cfg.info.lo_flags |= LO_FLAGS_READ_ONLY;
  if (o.partscan) cfg.info.lo_flags |= LO_FLAGS_PARTSCAN;
  if (::ioctl(loop_fd, LOOP_CONFIGURE, &cfg) == 0) return Ok{};
  if (errno != EINVAL && errno != ENOTTY) return make_error(errno_message("ioctl LOOP_CONFIGURE", path, errno));
  if (::ioctl(loop_fd, LOOP_SET_FD, file_fd) != 0) return make_error(errno_message("ioctl LOOP_SET_FD", path, errno));
  loop_info64 info{};
  info.lo_flags = cfg.info.lo_flags & ~static_cast<uint32_t>(LO_FLAGS_READ_ONLY);
  if (::ioctl(loop_fd, LOOP_SET_STATUS64, &info) != 0) {
    int err = errno;
    ::ioctl(loop_fd, LOOP_CLR_FD, 0);
    return make_error(errno_message("ioctl LOOP_SET_STATUS64", path, err));
  }
  return Ok{};
}

}  // namespace

LoopDevice::LoopDevice(LoopDevice&& o) noexcept
    : path_(std::move(o.path_)), backing_(std::move(o.backing_)), fd_(o.fd_) {
  o.path_.clear();
  o.fd_ = -1;
}

LoopDevice& LoopDevice::operator=(LoopDevice&& o) noexcept {
  if (this != &o) {
    remove();
    path_ = std::move(o.path_);
    backing_ = std::move(o.backing_);
    fd_ = o.fd_;
    o.path_.clear();
    o.fd_ = -1;
  }
  return *this;
}

LoopDevice::~LoopDevice() { remove(); }

std::string LoopDevice::name() const {
  auto slash = path_.rfind('/');
  return slash == std::string::npos ? path_ : path_.substr(slash + 1);
}

Result<LoopDevice> LoopDevice::create(const Options& o) {
  if (o.size_bytes == 0) return make_error("scratch size must be larger than 0");
  std::string tmpl = temp_dir(o.dir) + "/diskprobe-scratch-XXXXXX";
  int raw = ::mkostemp(tmpl.data(), O_CLOEXEC);
  if (raw < 0) return make_error(errno_message("mkstemp", tmpl, errno));
  Fd file(raw);
  // Unlinked now: from here on no exit path, not even SIGKILL, can leave the file behind.
  ::unlink(tmpl.c_str());
  if (::ftruncate(file.get(), static_cast<off_t>(o.size_bytes)) != 0) {
    return make_error(errno_message("ftruncate", tmpl, errno));
  }

  auto ctl = Fd::open("/dev/loop-control", O_RDWR);
  if (!ctl) return make_error(ctl.error() + ": loop devices need root and the loop module");
  // Another process can take the free device between GET_FREE and attach: retry.
  for (int attempt = 0; attempt < 16; ++attempt) {
    int n = ::ioctl(ctl->get(), LOOP_CTL_GET_FREE);
    if (n < 0) return make_error(errno_message("ioctl LOOP_CTL_GET_FREE", "/dev/loop-control", errno));
    std::string path = "/dev/loop" + std::to_string(n);
    Result<Fd> dev = Fd::open(path, o.read_only ? O_RDONLY : O_RDWR);
    for (int wait = 0; !dev && wait < 50; ++wait) {  // devtmpfs may add the node a moment later
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      dev = Fd::open(path, o.read_only ? O_RDONLY : O_RDWR);
    }
    if (!dev) return make_error(dev.error());
    auto st = attach(dev->get(), file.get(), o, path);
    if (!st) {
      if (st.error().find("Device or resource busy") != std::string::npos) continue;
      return make_error(st.error());
    }
    LoopDevice loop;
    loop.path_ = path;
    loop.backing_ = tmpl;
    loop.fd_ = dev->release();
    return loop;
  }
  return make_error("could not find a free loop device after 16 attempts: other programs are taking them");
}

Status LoopDevice::remove() {
  if (path_.empty()) return Ok{};
  Status result = Ok{};
  // Autoclear would detach on the last close anyway; LOOP_CLR_FD makes it happen now when
  // nobody else holds the device.
  if (fd_ >= 0) {
    if (::ioctl(fd_, LOOP_CLR_FD, 0) != 0 && errno != ENXIO) {
      result = make_error(errno_message("ioctl LOOP_CLR_FD", path_, errno));
    }
    ::close(fd_);
    fd_ = -1;
  }
  // Since Linux 6.x the detach after the last close runs in a workqueue; wait for it (up to
  // 5 s) so that a caller who checks `losetup -a` right after we return sees no device.
  std::string bound = "/sys/block/" + name() + "/loop/backing_file";
  for (int i = 0; i < 500 && ::access(bound.c_str(), F_OK) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (::access(bound.c_str(), F_OK) == 0 && result.ok()) {
    result = make_error(path_ + " is still attached 5 s after detaching it: another process holds it open");
  }
  path_.clear();
  return result;
}

bool loop_devices_available(std::string* why_not) {
  auto say = [&](const char* msg) {
    if (why_not) *why_not = msg;
    return false;
  };
  if (::geteuid() != 0) return say("not root: integration tests need root to create loop devices");
  if (::access("/dev/loop-control", R_OK | W_OK) != 0) {
    return say("/dev/loop-control is missing: load the loop module (modprobe loop)");
  }
  return true;
}

}  // namespace diskprobe
