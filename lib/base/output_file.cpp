#include "diskprobe/base/output_file.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace diskprobe {
namespace {

bool same_file(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

// stdout/stderr of this process: --output /dev/stdout writes where the report goes anyway.
bool is_own_stdio(const struct stat& st) {
  for (int fd : {1, 2}) {
    struct stat s {};
    if (::fstat(fd, &s) == 0 && same_file(s, st)) return true;
  }
  return false;
}

// Kernel filesystems: a "file" there is a setting (/proc/sys/vm/drop_caches, sysfs attributes).
bool kernel_fs(long type) {
  switch (type) {
    case PROC_SUPER_MAGIC:
    case SYSFS_MAGIC:
    case DEBUGFS_MAGIC:
    case TRACEFS_MAGIC:
    case SECURITYFS_MAGIC:
    case CGROUP_SUPER_MAGIC:
    case CGROUP2_SUPER_MAGIC:
    case BPF_FS_MAGIC:
    case EFIVARFS_MAGIC:
    case 0x62656570:  // configfs
      return true;
    default:
      return false;
  }
}

// The loop device `st` backs, or "".
std::string loop_backed_by(const SysRoot& root, const struct stat& st) {
  for (const auto& name : root.list_sys("block")) {
    if (name.rfind("loop", 0) != 0) continue;
    auto backing = root.read_sys("block/" + name + "/loop/backing_file");
    struct stat b {};
    if (backing && ::stat(backing->c_str(), &b) == 0 && same_file(b, st)) return "/dev/" + name;
  }
  return "";
}

// Why the opened `st` must not receive a report, or "".
std::string refusal(const std::string& path, int fd, const struct stat& st, const SysRoot& root,
                    const std::vector<std::string>& targets) {
  if (S_ISBLK(st.st_mode)) return path + " is a block device: a report never goes onto a device; give a file path";
  if (S_ISDIR(st.st_mode)) return path + " is a directory: give a file path";
  if (S_ISCHR(st.st_mode) && st.st_rdev != makedev(1, 3) && !is_own_stdio(st)) {
    return path + " is a character device: give a file path (or /dev/stdout, /dev/null)";
  }
  if (!S_ISREG(st.st_mode)) return "";  // a pipe, /dev/null, our own terminal
  struct statfs fs {};
  if (::fstatfs(fd, &fs) == 0 && kernel_fs(static_cast<long>(fs.f_type))) {
    return path + " is on a kernel filesystem (procfs, sysfs...): writing it would change a setting; give a file path";
  }
  for (const auto& t : targets) {
    struct stat ts {};
    if (::stat(t.c_str(), &ts) == 0 && same_file(ts, st)) return path + " is the run's own target " + t;
  }
  if (auto loop = loop_backed_by(root, st); !loop.empty()) {
    return path + " is the backing file of " + loop + ": writing it would write that device; give another path";
  }
  struct statvfs vfs {};
  if (::fstatvfs(fd, &vfs) == 0 && (geteuid() == 0 ? vfs.f_bfree : vfs.f_bavail) == 0) {
    return path + " is on a full filesystem: free space or give a path elsewhere";
  }
  return "";
}

}  // namespace

OutputFile::OutputFile(OutputFile&& o) noexcept
    : fd_(std::move(o.fd_)), path_(std::move(o.path_)), dev_(o.dev_), ino_(o.ino_), created_(o.created_),
      written_(o.written_) {
  o.created_ = false;
}

OutputFile::~OutputFile() {
  if (!created_ || written_ || !fd_.valid()) return;
  // Only the file this run made: the path may name another one by now.
  struct stat st {};
  if (::stat(path_.c_str(), &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_) ::unlink(path_.c_str());
}

Result<OutputFile> OutputFile::open(std::string_view option, const std::string& path, const SysRoot& root,
                                    const std::vector<std::string>& targets) {
  const std::string what = std::string(option) + " " + path;
  struct stat st {};
  // Decided before open(2) too: opening a device can have effects of its own (a tape rewinds).
  if (::stat(path.c_str(), &st) == 0) {
    if (auto why = refusal(path, -1, st, root, targets); !why.empty()) return make_error(std::string(option) + ": " + why);
  }
  OutputFile f;
  f.path_ = path;
  // O_NONBLOCK: a FIFO nobody reads fails at once (ENXIO) instead of hanging the run.
  const int flags = O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK;
  auto fd = Fd::open(path, flags | O_CREAT | O_EXCL, 0644);
  if (fd) {
    f.created_ = true;
  } else {
    fd = Fd::open(path, flags);
  }
  if (!fd) return make_error(what + ": " + fd.error() + ": give a path diskprobe can write");
  f.fd_ = std::move(*fd);
  if (::fstat(f.fd_.get(), &st) != 0) return make_error(errno_message("fstat", path, errno));
  f.dev_ = st.st_dev;
  f.ino_ = st.st_ino;
  if (auto why = refusal(path, f.fd_.get(), st, root, targets); !why.empty()) {
    return make_error(std::string(option) + ": " + why);
  }
  ::fcntl(f.fd_.get(), F_SETFL, ::fcntl(f.fd_.get(), F_GETFL) & ~O_NONBLOCK);
  return f;
}

Status OutputFile::write(std::string_view data) {
  written_ = true;
  struct stat st {};
  bool regular = ::fstat(fd_.get(), &st) == 0 && S_ISREG(st.st_mode);
  if (regular && ::ftruncate(fd_.get(), 0) != 0) return make_error(errno_message("ftruncate", path_, errno));
  size_t done = 0;
  while (done < data.size()) {
    ssize_t w = regular ? ::pwrite(fd_.get(), data.data() + done, data.size() - done, static_cast<off_t>(done))
                        : ::write(fd_.get(), data.data() + done, data.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return make_error(errno_message("write", path_, w < 0 ? errno : EIO));
    done += static_cast<size_t>(w);
  }
  if (regular && ::fsync(fd_.get()) != 0) return make_error(errno_message("fsync", path_, errno));
  return Ok{};
}

}  // namespace diskprobe
