// The real DeviceProber: read-only opens, fstat, BLKROGET and libblkid in process.
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cerrno>

#include "blkid_probe.h"
#include "diskprobe/safety/probe.h"
#include "diskprobe/safety/sampler.h"

namespace diskprobe::safety {
namespace {

DevNum devnum(dev_t d) { return DevNum{major(d), minor(d)}; }

// Fd::open keeps only the message; these are the errnos the preflight tells apart.
int errno_of(const std::string& message, const std::string& path) {
  for (int e : {EBUSY, EACCES, EPERM, ENOENT, ENXIO, ENODEV, ENOMEDIUM, EIO, EROFS}) {
    if (message == errno_message("open", path, e)) return e;
  }
  return EIO;
}

class SystemProber final : public DeviceProber {
 public:
  Opened open(const std::string& path, bool exclusive) const override {
    Opened o;
    // Never O_WRONLY or O_RDWR: the preflight only looks.
    auto fd = Fd::open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | (exclusive ? O_EXCL : 0));
    if (!fd) {
      o.error = fd.error();
      o.err = errno_of(o.error, path);
      return o;
    }
    struct stat st {};
    if (::fstat(fd->get(), &st) != 0) {
      o.err = errno;
      o.error = errno_message("fstat", path, o.err);
      return o;
    }
    o.is_block = S_ISBLK(st.st_mode);
    o.rdev = devnum(st.st_rdev);
    o.fd = std::move(*fd);
    return o;
  }

  Probed probe(const Fd& fd, const std::string& path) const override { return probe_range(fd, path, 0, 0); }

  Probed probe_range(const Fd& fd, const std::string& path, uint64_t offset, uint64_t size) const override {
    Probed p;
    auto pr = BlkidProbe::over(fd.get(), path, offset, size);
    if (!pr) {
      p.error = pr.error();
      return p;
    }
    auto sigs = pr->all_signatures(path);
    if (!sigs) {
      p.error = sigs.error();
      return p;
    }
    p.ok = true;
    p.signatures = std::move(*sigs);
    return p;
  }

  std::optional<bool> read_only(const Fd& fd) const override {
    int ro = 0;
    if (::ioctl(fd.get(), BLKROGET, &ro) != 0) return std::nullopt;
    return ro != 0;
  }

  std::optional<PathDevice> stat_path(const std::string& path) const override {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return std::nullopt;
    PathDevice d;
    d.is_block = S_ISBLK(st.st_mode);
    d.rdev = devnum(st.st_rdev);
    d.dev = devnum(st.st_dev);
    d.ino = st.st_ino;
    return d;
  }
};

}  // namespace

std::unique_ptr<BlockReader> DeviceProber::reader(const Fd& fd, const std::string& path,
                                                  uint32_t logical_block_size) const {
  return fd_reader(fd, path, logical_block_size);
}

const DeviceProber& system_prober() {
  static const SystemProber prober;
  return prober;
}

}  // namespace diskprobe::safety
