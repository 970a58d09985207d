#include "diskprobe/spec/file_targets.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>

#include "diskprobe/base/aligned_buffer.h"
#include "diskprobe/device/block_header.h"
#include "diskprobe/base/fd.h"
#include "diskprobe/spec/host_checks.h"

namespace diskprobe {
namespace {

std::string gib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", static_cast<double>(bytes) / (1ull << 30));
  return buf;
}

// Writes `size` bytes of random data to a new file (direct where asked, so the layout does
// not fill the page cache), the first block stamped with diskprobe's header so a later run
// knows the file as its own.
Status lay_out(const std::string& path, uint64_t size, bool direct) {
  constexpr size_t kChunk = 1 << 20;
  // O_DIRECT needs whole sectors; an odd size is laid out through the page cache.
  auto fd = Fd::open(path, O_WRONLY | (direct && size % 4096 == 0 ? O_DIRECT : 0));
  if (!fd) return make_error(fd.error());
  if (int err = ::posix_fallocate(fd->get(), 0, static_cast<off_t>(size)); err != 0 && err != EOPNOTSUPP) {
    return make_error(errno_message("fallocate", path, err) +
                      (err == ENOSPC ? ": the filesystem is full: lower size or numjobs" : ""));
  }
  AlignedBuffer buf = aligned_buffer(kChunk);
  if (!buf) return make_error("cannot allocate the layout buffer");
  std::mt19937_64 rng(std::random_device{}());
  for (size_t i = 0; i < kChunk; i += 8) {
    uint64_t v = rng();
    std::memcpy(buf.get() + i, &v, 8);
  }
  BlockHeader h;  // offset 0, no checksum: only "this file is diskprobe's"
  encode_block_header(buf.get(), h);
  for (uint64_t off = 0; off < size;) {
    size_t len = static_cast<size_t>(std::min<uint64_t>(kChunk, size - off));
    ssize_t w = ::pwrite(fd->get(), buf.get(), len, static_cast<off_t>(off));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      int err = w < 0 ? errno : ENOSPC;
      return make_error(errno_message("laying out", path, err) +
                        (err == ENOSPC ? ": the filesystem is full: lower size or numjobs" : ""));
    }
    off += static_cast<uint64_t>(w);
    if (off == static_cast<uint64_t>(w)) std::memset(buf.get(), 0x5a, kBlockHeaderBytes);  // header only once
  }
  if (::fsync(fd->get()) != 0) return make_error(errno_message("fsync", path, errno));
  return Ok{};
}

bool starts_with_header(const std::string& path) {
  auto fd = Fd::open(path, O_RDONLY);
  if (!fd) return false;
  uint8_t head[kBlockHeaderBytes];
  return ::pread(fd->get(), head, sizeof head, 0) == static_cast<ssize_t>(sizeof head) &&
         std::memcmp(head, kBlockMagic, sizeof kBlockMagic) == 0;
}

}  // namespace

JobFiles::JobFiles(JobFiles&& o) noexcept
    : target_(std::move(o.target_)), created_(std::move(o.created_)), keep_(o.keep_) {
  o.created_.clear();
}

JobFiles& JobFiles::operator=(JobFiles&& o) noexcept {
  if (this != &o) {
    remove();
    target_ = std::move(o.target_);
    created_ = std::move(o.created_);
    keep_ = o.keep_;
    o.created_.clear();
  }
  return *this;
}

JobFiles::~JobFiles() { remove(); }

void JobFiles::remove() {
  if (!keep_) {
    for (const auto& p : created_) ::unlink(p.c_str());
  }
  created_.clear();
}

Status check_directory(const std::string& dir, uint64_t need_bytes, bool direct) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    return make_error(errno_message("stat", dir, errno) + ": create the directory or mount the volume there");
  }
  if (!S_ISDIR(st.st_mode)) return make_error(dir + " is not a directory: give --directory a directory");
  struct statvfs vfs {};
  if (::statvfs(dir.c_str(), &vfs) != 0) return make_error(errno_message("statvfs", dir, errno));
  if (vfs.f_flag & ST_RDONLY) {
    return make_error(dir + " is on a read-only filesystem: diskprobe cannot create its files there; remount it "
                            "read-write or choose another --directory");
  }
  // A probe file: permissions, quotas and filesystems without regular files (proc, sysfs)
  // all show up here, before anything is laid out.
  std::string probe = dir + "/.diskprobe-probe-XXXXXX";
  int fd = ::mkstemp(probe.data());
  if (fd < 0) {
    int err = errno;
    return make_error("cannot create a file in " + dir + " (" + std::strerror(err) +
                      "): choose a directory on a writable filesystem");
  }
  ::close(fd);
  std::string direct_problem;
  if (direct) {
    auto dfd = Fd::open(probe, O_RDWR | O_DIRECT);
    if (!dfd) {
      direct_problem = dfd.error() + ": this filesystem does not take direct I/O (tmpfs?): use direct=0 or another directory";
    }
  }
  ::unlink(probe.c_str());
  if (!direct_problem.empty()) return make_error(direct_problem);
  uint64_t avail = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
  if (need_bytes > avail) {
    return make_error(dir + " has " + gib(avail) + " free but the jobs' files need " + gib(need_bytes) +
                      ": lower size or numjobs, or free space");
  }
  return Ok{};
}

std::vector<std::string> job_file_paths(const std::string& dir, const JobSpec& spec) {
  std::vector<std::string> paths;
  for (unsigned j = 0; j < spec.numjobs; ++j) paths.push_back(dir + "/" + spec.name + "." + std::to_string(j) + ".0");
  return paths;
}

Result<JobFiles> JobFiles::create_in_directory(const std::string& dir, const JobSpec& spec, bool keep) {
  if (spec.size == 0 || spec.size_percent > 0) {
    return make_error("--directory needs size in bytes (each job's file is that big), like --size 1G");
  }
  if (auto why = file_name_problem(spec.name); !why.empty()) return make_error(why + ": give --name a plain name");
  // Each job's region is offset + size bytes into its file, so that is the file's length (as
  // fio lays directory files out); laid out at size, an offset left no room for the region.
  if (spec.offset > UINT64_MAX - spec.size) {
    return make_error("--directory: offset " + std::to_string(spec.offset) + " + size " + std::to_string(spec.size) +
                      " is past any file's end: lower offset or size");
  }
  const uint64_t length = spec.offset + spec.size;
  JobFiles files;
  files.keep_ = keep;
  std::vector<std::string> reuse;
  uint64_t need = 0;
  for (const auto& path : job_file_paths(dir, spec)) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) {
      if (!S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_size) < length || !starts_with_header(path)) {
        return make_error(path + " exists and is not a diskprobe file of at least " + std::to_string(length) +
                          " bytes (offset + size): remove it or choose another --directory");
      }
      reuse.push_back(path);
    } else {
      need += length;
    }
    files.target_.job_paths.push_back(path);
  }
  if (auto st = check_directory(dir, need, spec.direct); !st) return make_error(st.error());
  for (const auto& path : files.target_.job_paths) {
    if (std::find(reuse.begin(), reuse.end(), path) != reuse.end()) continue;
    auto fd = Fd::open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (!fd) return make_error(fd.error());
    files.created_.push_back(path);
    if (auto st = lay_out(path, length, spec.direct); !st) return make_error(st.error());
  }
  files.target_.path = dir;
  files.target_.size_bytes = length;
  files.target_.logical_block_size = 512;  // O_DIRECT on XFS/ext4: the device's sector; bs >= 512
  files.target_.device_id = device_identity_from("", "", "", dir, spec.size);
  return files;
}

Status may_use_file(const std::string& path, const JobSpec& spec) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return Ok{};  // missing: created by the run
  if (!S_ISREG(st.st_mode)) return make_error(path + " is not a block device nor a regular file");
  if (!does_writes(spec.rw) || starts_with_header(path)) return Ok{};
  return make_error(path + " is not a block device but a regular file diskprobe did not create: a " +
                    std::string(to_string(spec.rw)) +
                    " run would overwrite it; give a new file path (diskprobe creates it) or a block device");
}

Result<JobFiles> JobFiles::open_file(const std::string& path, const JobSpec& spec, bool keep) {
  if (auto ok = may_use_file(path, spec); !ok) return make_error(ok.error());
  JobFiles files;
  files.keep_ = keep;
  struct stat st {};
  uint64_t size = 0;
  if (::stat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) return make_error(path + " is neither a block device nor a regular file");
    size = static_cast<uint64_t>(st.st_size);
    uint64_t want = spec.offset + spec.size;
    if (spec.size_percent == 0 && spec.size > 0 && want > size) {
      return make_error(path + " holds " + std::to_string(size) + " bytes, less than offset + size = " +
                        std::to_string(want) + ": lower size or remove the file so diskprobe lays it out");
    }
    if (size == 0) return make_error(path + " is empty: give a size so diskprobe lays it out, after removing it");
  } else {
    if (errno != ENOENT) return make_error(errno_message("stat", path, errno));
    if (spec.size == 0 || spec.size_percent > 0) {
      return make_error(path + " does not exist: give size in bytes (like --size 1G) so diskprobe creates it");
    }
    size = spec.offset + spec.size;
    std::string dir = path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/'));
    if (dir.empty()) dir = "/";
    if (auto ok = check_directory(dir, size, spec.direct); !ok) return make_error(ok.error());
    auto fd = Fd::open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (!fd) return make_error(fd.error());
    files.created_.push_back(path);
    if (auto ok = lay_out(path, size, spec.direct); !ok) return make_error(ok.error());
  }
  files.target_.path = path;
  files.target_.size_bytes = size;
  files.target_.logical_block_size = 512;
  files.target_.device_id = device_identity_from("", "", "", path, size);
  return files;
}

}  // namespace diskprobe
