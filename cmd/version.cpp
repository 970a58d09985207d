#include "version.h"

#include "diskprobe/safety/probe.h"
#include "out.h"

namespace diskprobe::cli {

// The versions come from CMake: the git revision when the build was configured ("unknown"
// outside a git checkout) and pkg-config's versions of the libraries compiled against
// (liburing 2.3 has no IO_URING_VERSION_* macros to ask at compile time).
std::string version_text(const UringFeatures& kernel) {
  std::string o = "diskprobe " DISKPROBE_VERSION " (git " DISKPROBE_GIT_REV ")\n";
  o += "built against liburing " DISKPROBE_LIBURING_VERSION ", libblkid " DISKPROBE_BLKID_VERSION;
  o += " (running libblkid " + safety::blkid_running_version() + ")\n";
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

int cmd_version() {
  print(version_text(probe_uring_features()));
  return kOk;
}

}  // namespace diskprobe::cli
