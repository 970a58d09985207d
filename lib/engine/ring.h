// Ring: one io_uring instance, owned; the only place that sets up and tears down a ring.
// Private to lib/: the engine is its only user.
#pragma once

#include <liburing.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstdint>

// Older liburing headers lack the newer setup flags; the values are the kernel's ABI, and a
// kernel that does not know one refuses it with -EINVAL, which init() falls back from.
#ifndef IORING_SETUP_COOP_TASKRUN
#define IORING_SETUP_COOP_TASKRUN (1U << 8)  // 5.19
#endif
#ifndef IORING_SETUP_SINGLE_ISSUER
#define IORING_SETUP_SINGLE_ISSUER (1U << 12)  // 6.0
#endif
#ifndef IORING_SETUP_DEFER_TASKRUN
#define IORING_SETUP_DEFER_TASKRUN (1U << 13)  // 6.1
#endif

namespace diskprobe {

class Ring {
 public:
  Ring() = default;
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;
  ~Ring() {
    if (ready_) io_uring_queue_exit(&ring_);
  }

  // Sets up a ring for one submitting thread; returns 0 or -errno. Tries the flags that cut
  // completion overhead (task work run only when this thread waits: 6.1+), then older sets.
  int init(unsigned entries) { return init_flags(entries, 0); }

  // Like init(), with IORING_SETUP_SQPOLL and/or IORING_SETUP_IOPOLL added. SQPOLL takes
  // none of the task-run flags, so the attempts go down to `extra` alone.
  int init_flags(unsigned entries, unsigned extra) {
    const unsigned attempts[] = {extra | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
                                 extra | IORING_SETUP_COOP_TASKRUN, extra};
    int ret = -EINVAL;
    for (unsigned flags : attempts) {
      ret = io_uring_queue_init(entries, &ring_, flags);
      if (ret == 0) {
        ready_ = true;
        // Saves a file-table lookup per io_uring_enter (5.18+); harmless when refused.
        io_uring_register_ring_fd(&ring_);
        return 0;
      }
      if (ret != -EINVAL) return ret;
    }
    return ret;
  }

  int register_file(int fd) { return io_uring_register_files(&ring_, &fd, 1); }
  int register_buffers(const iovec* iov, unsigned n) { return io_uring_register_buffers(&ring_, iov, n); }

  io_uring* get() { return &ring_; }

 private:
  io_uring ring_{};
  bool ready_ = false;
};

}  // namespace diskprobe
