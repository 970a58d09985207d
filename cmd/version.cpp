#include "version.h"

#include <blkid/blkid.h>

namespace diskprobe::cli {

// The versions come from CMake: the git revision when the build was configured ("unknown"
// outside a git checkout) and pkg-config's versions of the libraries compiled against
// (liburing 2.3 has no IO_URING_VERSION_* macros to ask at compile time).
std::string version_text(const UringFeatures& kernel) {
  std::string o = "diskprobe " DISKPROBE_VERSION " (git " DISKPROBE_GIT_REV ")\n";
  const char* blkid_running = nullptr;
  const char* blkid_date = nullptr;
  blkid_get_library_version(&blkid_running, &blkid_date);
  o += "built against liburing " DISKPROBE_LIBURING_VERSION ", libblkid " DISKPROBE_BLKID_VERSION;
  o += std::string(" (running libblkid ") + (blkid_running ? blkid_running : "unknown") + ")\n";
  std::string release = kernel.kernel_release.empty() ? "unknown" : kernel.kernel_release;
  if (!kernel.ring) {
    o += "kernel " + release + ": io_uring NOT available (" + kernel.ring_error + "); use --engine sync\n";
    return o;
  }
  o += "kernel " + release + ": io_uring " +
       (kernel.all_supported()
            ? std::string("supports every feature diskprobe uses")
            : std::string("lacks some features diskprobe uses (it falls back where it can)")) +
       "\n";
  for (const auto& f : kernel.features) {
    o += std::string("  ") + (f.supported ? "yes" : "no ") + "  " + f.name;
    if (!f.detail.empty()) o += " (" + f.detail + ")";
    o += "\n";
  }
  return o;
}

}  // namespace diskprobe::cli
