#include "diskprobe/base/sysroot.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diskprobe/base/fd.h"

#include <algorithm>
#include <cerrno>
#include <filesystem>

namespace diskprobe {
namespace fs = std::filesystem;

namespace {

std::string join(const std::string& root, std::string_view rel) {
  std::string p = root;
  if (!rel.empty() && rel.front() != '/') p += '/';
  p += rel;
  return p;
}

}  // namespace

std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\n' || s[b] == '\t' || s[b] == '\r')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\n' || s[e - 1] == '\t' || s[e - 1] == '\r')) --e;
  return std::string(s.substr(b, e - b));
}

Result<std::string> read_file(const std::string& path, size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below anyway.
  auto fd = Fd::open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (!fd) return make_error(fd.error());
  struct stat st {};
  if (::fstat(fd->get(), &st) != 0) return make_error(errno_message("fstat", path, errno));
  // Checked before reading: /dev/zero or a pipe would be read until memory runs out.
  if (!S_ISREG(st.st_mode)) {
    const char* kind = S_ISDIR(st.st_mode)    ? "a directory"
                       : S_ISCHR(st.st_mode)  ? "a character device"
                       : S_ISBLK(st.st_mode)  ? "a block device"
                       : S_ISFIFO(st.st_mode) ? "a pipe"
                                              : "not a regular file";
    return make_error(path + " is " + kind + ": give a regular file");
  }
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd->get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return make_error(errno_message("read", path, errno));
    if (n == 0) break;
    // procfs and sysfs files say size 0 or 4096, so the limit is on what is read.
    if (out.size() + static_cast<size_t>(n) > max_bytes) {
      return make_error(path + " is larger than " + std::to_string(max_bytes >> 10) + " KiB: not read");
    }
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

SysRoot::SysRoot(std::string sysfs, std::string procfs)
    : sysfs_(std::move(sysfs)), procfs_(std::move(procfs)) {
  while (sysfs_.size() > 1 && sysfs_.back() == '/') sysfs_.pop_back();
  while (procfs_.size() > 1 && procfs_.back() == '/') procfs_.pop_back();
}

std::string SysRoot::sys_path(std::string_view rel) const { return join(sysfs_, rel); }
std::string SysRoot::proc_path(std::string_view rel) const { return join(procfs_, rel); }

Result<std::string> SysRoot::read_sys(std::string_view rel) const {
  auto r = read_file(sys_path(rel));
  if (!r) return r;
  return trim(*r);
}

Result<std::string> SysRoot::read_proc(std::string_view rel) const {
  auto r = read_file(proc_path(rel));
  if (!r) return r;
  return trim(*r);
}

Result<std::string> SysRoot::read_proc_raw(std::string_view rel) const {
  return read_file(proc_path(rel));
}

bool SysRoot::sys_exists(std::string_view rel) const {
  std::error_code ec;
  return fs::exists(sys_path(rel), ec);
}

std::vector<std::string> SysRoot::list_sys(std::string_view rel) const {
  auto names = read_sys_dir(rel);
  return names ? std::move(*names) : std::vector<std::string>{};
}

Result<std::vector<std::string>> SysRoot::read_sys_dir(std::string_view rel) const {
  std::vector<std::string> names;
  const std::string path = sys_path(rel);
  std::error_code ec;
  fs::directory_iterator it(path, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) names.push_back(it->path().filename().string());
  if (ec == std::errc::no_such_file_or_directory) return std::vector<std::string>{};
  if (ec) return make_error(errno_message("opendir", path, ec.value()));
  std::sort(names.begin(), names.end());
  return names;
}

std::string SysRoot::sys_realpath(std::string_view rel) const {
  std::error_code ec;
  auto p = fs::canonical(sys_path(rel), ec);
  return ec ? std::string() : p.string();
}

Status SysRoot::write_sys(std::string_view rel, std::string_view value) const {
  // One write(2) per value: sysfs attributes take the whole value or reject it.
  std::string path = sys_path(rel);
  auto fd = Fd::open(path, O_WRONLY);
  if (!fd) return make_error(fd.error());
  ssize_t n = ::write(fd->get(), value.data(), value.size());
  if (n < 0) return make_error(errno_message("write", path, errno));
  if (static_cast<size_t>(n) != value.size()) return make_error("write(" + path + "): short write");
  return Ok{};
}

}  // namespace diskprobe
