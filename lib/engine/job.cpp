#include "job.h"

#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <sys/sysmacros.h>
#include <time.h>

#include <linux/mempolicy.h>

#include <cerrno>
#include <cstring>
#include <exception>

#include "diskprobe/base/fd.h"
#include "pinning.h"
#include "uring_job.h"

namespace diskprobe::engine {

CpuUsage thread_cpu() {
  rusage ru{};
  getrusage(RUSAGE_THREAD, &ru);
  CpuUsage c;
  c.user_s = static_cast<double>(ru.ru_utime.tv_sec) + static_cast<double>(ru.ru_utime.tv_usec) / 1e6;
  c.sys_s = static_cast<double>(ru.ru_stime.tv_sec) + static_cast<double>(ru.ru_stime.tv_usec) / 1e6;
  c.voluntary_ctx = static_cast<uint64_t>(ru.ru_nvcsw);
  c.involuntary_ctx = static_cast<uint64_t>(ru.ru_nivcsw);
  return c;
}

CpuUsage cpu_delta(const CpuUsage& a, const CpuUsage& b) {
  return {b.user_s - a.user_s, b.sys_s - a.sys_s, b.voluntary_ctx - a.voluntary_ctx,
          b.involuntary_ctx - a.involuntary_ctx};
}

void sleep_ns(uint64_t ns) {
  timespec ts{static_cast<time_t>(ns / kNsPerSec), static_cast<long>(ns % kNsPerSec)};
  while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR) {
  }
}

Result<Buffer> allocate_buffers(const JobPlan& plan, Workload& work) {
  size_t total = plan.slot_stride * plan.slots;
  Buffer buf = aligned_buffer(total);
  if (!buf) {
    return make_error(errno_message("posix_memalign", std::to_string(total) + " bytes of I/O buffers", ENOMEM) +
                      ": lower iodepth or bs");
  }
  work.fill_initial(buf.get(), total);  // also faults every page in before the clock starts
  return buf;
}

namespace {

// The path names the device the preflight checked: a /dev entry renamed or replaced since the
// check (mv, mknod, a udev rule) would otherwise get the writes. Compared on the descriptor
// the job does its I/O through, so nothing can change between the check and the I/O.
Status checked_device(const Fd& fd, const JobPlan& plan, const std::string& path) {
  if (plan.rdev == 0) return Ok{};
  auto num = [](dev_t d) { return std::to_string(major(d)) + ":" + std::to_string(minor(d)); };
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    return make_error(errno_message("fstat", path, errno) +
                      ": cannot tell it is the device the preflight checked, so nothing was written");
  }
  if (S_ISBLK(st.st_mode) && st.st_rdev == plan.rdev) return Ok{};
  return make_error(path + " is no longer the device the preflight checked (" + num(plan.rdev) + "): it names " +
                    (S_ISBLK(st.st_mode) ? "block device " + num(st.st_rdev) : std::string("no block device")) +
                    " now, so nothing was written; fix /dev (ls -l " + path + ") and run again");
}

// fio's numa_mem_policy: this thread's memory policy, before its buffers are allocated (they
// are faulted in by the first fill, so their pages follow it). local is the kernel's default
// policy, as libnuma's numa_set_localalloc sets it.
Status set_memory_policy(const NumaPolicy& n) {
  if (n.mem == NumaPolicy::Mem::Unset) return Ok{};
  constexpr size_t kMaxNodes = 1024;
  constexpr size_t kBitsPerWord = 8 * sizeof(unsigned long);
  unsigned long mask[kMaxNodes / kBitsPerWord + 1] = {};
  for (int node : n.mem_nodes) {
    if (node < 0 || static_cast<size_t>(node) >= kMaxNodes) return make_error("numa_mem_policy: node " + std::to_string(node) + " is past 1023");
    mask[static_cast<size_t>(node) / kBitsPerWord] |= 1UL << (static_cast<size_t>(node) % kBitsPerWord);
  }
  int mode = MPOL_DEFAULT;
  switch (n.mem) {
    case NumaPolicy::Mem::Prefer: mode = MPOL_PREFERRED; break;
    case NumaPolicy::Mem::Bind: mode = MPOL_BIND; break;
    case NumaPolicy::Mem::Interleave: mode = MPOL_INTERLEAVE; break;
    default: break;
  }
  const bool nodes = mode != MPOL_DEFAULT;
  if (::syscall(SYS_set_mempolicy, mode, nodes ? mask : nullptr, nodes ? kMaxNodes + 1 : 0) != 0) {
    return make_error(errno_message("set_mempolicy", "numa_mem_policy", errno) +
                      ": the kernel refused the policy (a node without memory, or outside this process's cpuset mems)");
  }
  return Ok{};
}

// startdelay: sleeps until `at` in naps that let a stop in; false when stopped meanwhile.
bool wait_until(uint64_t at, const std::atomic<bool>* stop) {
  for (uint64_t t = now_ns(); t < at; t = now_ns()) {
    if (stop && stop->load(std::memory_order_relaxed)) return false;
    sleep_ns(std::min(at - t, kMaxPacedSleepNs));
  }
  return true;
}

void job_body(const JobPlan& plan, unsigned job, const std::vector<int>& cpus, StartGate& gate,
              const std::atomic<bool>* stop, JobOutput& out) {
  out.result->job = job;
  out.result->cpu = cpus.size() == 1 ? cpus[0] : -1;
  auto fail = [&](std::string msg) {
    out.error = std::move(msg);
    out.arrived = true;
    gate.arrive(true);
  };
  // Pinned before the ring exists, so the kernel's per-ring state is set up on that CPU.
  if (auto st = pin_to(cpus); !st) return fail(st.error());
  // fio's prioclass/prio: the job thread's I/O priority (what a sync engine's I/O goes at; the
  // io_uring engine also sets it on each SQE).
  if (plan.spec->priority.job_set) {
    constexpr int kIoprioWhoProcess = 1;  // linux/ioprio.h; 0 = this thread
    if (::syscall(SYS_ioprio_set, kIoprioWhoProcess, 0, int{plan.spec->priority.job}) != 0) {
      return fail(errno_message("ioprio_set", "prioclass " + std::to_string(plan.spec->priority.job >> 13) + " prio " +
                                                  std::to_string(plan.spec->priority.job & 0x1fff), errno) +
                  ": the real-time class needs CAP_SYS_ADMIN");
    }
  }
  if (auto st = set_memory_policy(plan.spec->numa); !st) return fail(st.error());
  const std::string& path = plan.job_paths.empty() ? plan.path : plan.job_paths[job];
  auto fd = Fd::open(path, plan.open_flags);
  if (!fd) {
    std::string msg = fd.error();
    if (plan.spec->direct && msg.find(std::strerror(EINVAL)) != std::string::npos) {
      msg += ": the filesystem may not support O_DIRECT; use direct=0";
    }
    return fail(msg);
  }
  if (auto st = checked_device(*fd, plan, path); !st) return fail(st.error());
  JobRun run(plan, job, *out.result, stop);
  run.totals = out.totals;
  run.steady_stop = out.steady_stop;
  // A capped job sleeps until each I/O's time: the default 50 us timer slack would make every
  // wake-up that much late (the rate still holds, the schedule being absolute; the spacing not).
  if (plan.paced) prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  auto buffers = allocate_buffers(plan, run.work);
  if (!buffers) return fail(buffers.error());
  // Declared after the buffers and the fd: the ring goes first.
  UringJob uring(plan, run, fd->get());
  bool use_uring = plan.spec->engine == EngineKind::IoUring;
  if (use_uring) {
    if (auto st = uring.setup(buffers->get(), &out.fallback); !st) return fail(st.error());
  }
  out.arrived = true;
  uint64_t t0 = gate.arrive(false);
  if (t0 == 0) return;  // another job could not start
  if (plan.wait_for) {
    // fio's wait_for: from the end of the job waited for, then its startdelay.
    while (!plan.wait_for->wait_until(now_ns() + kMaxPacedSleepNs)) {
      if (stop && stop->load(std::memory_order_relaxed)) {
        out.stopped = true;
        return;
      }
    }
    t0 = now_ns();
  }
  if (plan.start_delay_ns) {
    if (!wait_until(t0 + plan.start_delay_ns, stop)) {
      out.stopped = true;  // stopped before its first I/O: nothing to count
      return;
    }
    t0 = now_ns();
  }
  run.start(t0);
  Status st = use_uring ? uring.loop(out) : sync_loop(plan, run, fd->get(), buffers->get(), out);
  out.feature_note = uring.feature_note();
  if (!st) {
    out.error = st.error();
    if (uring.buffers_busy()) (void)buffers->release();  // leaked on purpose: I/O may still land
  }
}

}  // namespace

void job_main(const JobPlan& plan, unsigned job, const std::vector<int>& cpus, StartGate& gate,
              const std::atomic<bool>* stop, JobOutput& out) {
  try {
    job_body(plan, job, cpus, gate, stop, out);
  } catch (const std::exception& e) {
    // Setup allocates (and a run without a deadline may grow its per-second series); the
    // start gate must hear from this job either way.
    out.error = std::string("job failed: ") + e.what();
    if (!out.arrived) gate.arrive(true);
  }
}

}  // namespace diskprobe::engine
