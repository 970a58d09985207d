#include "diskprobe/safety/file_target.h"

#include <fcntl.h>

#include "blkid_probe.h"
#include "diskprobe/base/fd.h"

namespace diskprobe::safety {

Status check_reused_file(const std::string& path) {
  auto fd = Fd::open(path, O_RDONLY | O_CLOEXEC);
  if (!fd) return make_error("cannot check " + path + " before reusing it: " + fd.error());
  auto probe = BlkidProbe::over(fd->get(), path);
  if (!probe) return make_error("cannot check " + path + " before reusing it: " + probe.error());
  auto found = probe->all_signatures(path);
  if (!found) return make_error("cannot check " + path + " before reusing it: " + found.error());
  if (found->empty()) return Ok{};
  std::string what;
  for (const auto& s : *found) {
    what += (what.empty() ? "" : ", ") + s.type + " (" + s.usage + ") at offset " + std::to_string(s.offset);
  }
  return make_error(path + " was made by diskprobe but now holds " + what +
                    ": a write run would overwrite it; remove the file or give a new path");
}

}  // namespace diskprobe::safety
