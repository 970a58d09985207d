// A file a run writes a report into (--output, --report), opened before the preflight: a path
// that cannot be written is a usage error while nothing has changed yet, and a path whose
// writing would change a device or the kernel is refused.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "diskprobe/base/fd.h"
#include "diskprobe/base/status.h"
#include "diskprobe/base/sysroot.h"

namespace diskprobe {

class OutputFile {
 public:
  OutputFile() = default;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  OutputFile(OutputFile&& o) noexcept;
  OutputFile& operator=(OutputFile&&) = delete;
  ~OutputFile();  // removes the file if this run created it and wrote nothing

  // Opens `path` for `option` ("--output") without truncating it. Refused: a block device; a
  // character device other than /dev/null and this process's own stdout/stderr (/dev/stdout:
  // what the report would reach anyway); a directory; a file on procfs, sysfs and the other
  // kernel filesystems (writing there sets the kernel); any of `targets` (the run's own
  // files); the backing file of a loop device; a full filesystem.
  static Result<OutputFile> open(std::string_view option, const std::string& path, const SysRoot& root,
                                 const std::vector<std::string>& targets);

  // Replaces the file's contents with `data` (a pipe or terminal gets it appended).
  Status write(std::string_view data);
  const std::string& path() const { return path_; }
  bool is_open() const { return fd_.valid(); }

 private:
  Fd fd_;
  std::string path_;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  bool created_ = false, written_ = false;
};

}  // namespace diskprobe
