// A regular file a write run would reuse (one diskprobe laid out earlier, kept with
// --keep-files): its first block says diskprobe made it, but anything may have written it
// since (mkfs.ext4 -F FILE keeps the first KiB), so libblkid looks at the file too.
#pragma once

#include <string>

#include "diskprobe/base/status.h"

namespace diskprobe::safety {

// Ok when libblkid finds no signature in the file at `path`; else a message naming each one.
Status check_reused_file(const std::string& path);

}  // namespace diskprobe::safety
