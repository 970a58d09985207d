#include "diskprobe/engine/uring_features.h"

#include <fcntl.h>
#include <liburing.h>
#include <sys/uio.h>
#include <sys/utsname.h>

#include <cstdlib>
#include <cstring>
#include <memory>

#include "diskprobe/base/aligned_buffer.h"
#include "diskprobe/base/fd.h"
#include "ring.h"

namespace diskprobe {

namespace {

std::string kernel_says(const char* call, int ret) { return std::string(call) + ": " + std::strerror(-ret); }

// The opcodes lib/engine/engine.cpp prepares: fixed-buffer I/O first, plain read/write as its fallback.
struct Opcode {
  int op;
  const char* name;
};
constexpr Opcode kOpcodes[] = {{IORING_OP_READ_FIXED, "READ_FIXED"},
                               {IORING_OP_WRITE_FIXED, "WRITE_FIXED"},
                               {IORING_OP_READ, "READ"},
                               {IORING_OP_WRITE, "WRITE"}};

}  // namespace

bool UringFeatures::all_supported() const {
  if (!ring) return false;
  for (const auto& f : features) {
    if (!f.supported) return false;
  }
  return true;
}

UringFeatures probe_uring_features() {
  UringFeatures out;
  if (utsname u{}; ::uname(&u) == 0) out.kernel_release = u.release;
  Ring ring;
  if (int ret = ring.init(8); ret < 0) {
    out.ring_error = kernel_says("io_uring_queue_init", ret);
    if (ret == -EPERM) out.ring_error += " (sysctl kernel.io_uring_disabled?)";
    return out;
  }
  out.ring = true;

  // DEFER_TASKRUN (6.1+) is what Ring::init tries first; it tells whether that set was taken.
  bool defer = (ring.get()->flags & IORING_SETUP_DEFER_TASKRUN) != 0;
  out.features.push_back(
      {"single-issuer deferred task work (6.1+)", defer, defer ? "" : "older flag set in use"});

  auto null = Fd::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (!null) {
    out.features.push_back({"registered files", false, null.error()});
  } else {
    int ret = ring.register_file(null->get());
    out.features.push_back(
        {"registered files", ret == 0, ret == 0 ? "" : kernel_says("io_uring_register_files", ret)});
  }

  // One page, as the engine registers its aligned I/O buffers.
  constexpr size_t kPage = 4096;
  if (AlignedBuffer page = aligned_buffer(kPage); !page) {
    out.features.push_back({"fixed buffers", false, "posix_memalign: out of memory"});
  } else {
    iovec iov{page.get(), kPage};
    int ret = ring.register_buffers(&iov, 1);
    out.features.push_back(
        {"fixed buffers", ret == 0, ret == 0 ? "" : kernel_says("io_uring_register_buffers", ret)});
  }

  io_uring_probe* probe = io_uring_get_probe_ring(ring.get());
  for (const auto& o : kOpcodes) {
    bool ok = probe && io_uring_opcode_supported(probe, o.op);
    out.features.push_back({std::string("opcode ") + o.name, ok,
                            ok      ? ""
                            : probe ? "this kernel does not know it"
                                    : "io_uring_get_probe_ring failed"});
  }
  if (probe) io_uring_free_probe(probe);
  return out;
}

}  // namespace diskprobe
