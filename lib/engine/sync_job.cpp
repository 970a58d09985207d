#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <utility>
#include <vector>

#include "job.h"

namespace diskprobe::engine {

namespace {

// fio's flow: the next I/O waits for the job's share (yielding the CPU between tries, or
// flow_sleep); false when the job stopped meanwhile.
bool flow_wait(const JobPlan& plan, JobRun& run, JobOutput& out) {
  while (!run.flow.may_issue()) {
    if (plan.flow_sleep_ns) {
      sleep_ns(plan.flow_sleep_ns);
    } else {
      sched_yield();
    }
    run.check(now_ns(), out);
    if (run.stopping) return false;
  }
  return true;
}

// Reads the whole I/O at `offset` into buf (a short read: what it got, or -errno).
ssize_t read_whole(int fd, uint8_t* buf, uint32_t len, uint64_t offset) {
  uint32_t done = 0;
  while (done < len) {
    ssize_t r = ::pread(fd, buf + done, len - done, static_cast<off_t>(offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return -errno;
    if (r == 0) break;
    done += static_cast<uint32_t>(r);
  }
  return done;
}

// fio's verify_backlog: the writes since the last batch read back, each checked and counted as
// one of the job's reads (its latency the read's). The buffer then holds device data, so the
// next write refills it.
void verify_batch(const JobPlan& plan, JobRun& run, int fd, Slot& sl, std::vector<std::pair<uint64_t, uint32_t>>& batch,
                  JobOutput& out) {
  for (const auto& [offset, len] : batch) {
    if (run.work.fatal()) break;
    const uint64_t t0 = now_ns();
    const ssize_t r = read_whole(fd, sl.buf, len, offset);
    const uint64_t t = now_ns();
    sl.held_read_data = true;
    if (r < 0) {
      run.work.failed(static_cast<int>(-r), false, offset);
    } else {
      run.work.backlog_check(sl.buf, static_cast<uint32_t>(r), len, offset);
      const auto got = static_cast<uint32_t>(r);
      if (run.work.completed(false, got, offset, sl.buf, t0, 0, t - t0, t, run.work.second_of(t)) && plan.logged) {
        run.work.sample(false, got, offset, 0, t - t0, t, sl.ioprio);
      }
    }
    run.check(t, out);
  }
  batch.clear();
}

// kExtras: rate caps, steadystate, a shaped plan or logs are on; without them the loop is the same code as before
// they existed (the counted instructions per I/O, issue 15).
template <bool kExtras>
Status sync_run(const JobPlan& plan, JobRun& run, int fd, uint8_t* buf, JobOutput& out) {
  Slot sl;
  sl.buf = buf;
  uint64_t t = now_ns();
  uint64_t t0 = t;
  bool again = false;
  std::vector<std::pair<uint64_t, uint32_t>> backlog;  // plan.backlog: writes not yet read back
  if constexpr (kExtras) backlog.reserve(plan.backlog);
  // The rest of a short I/O (sl.done > 0) is sent even when stopping: the I/O is not over.
  while (!run.stopping || (again && sl.done > 0)) {
    if (!again) {
      if (run.work.exhausted()) break;
      if constexpr (kExtras) {
        const int d = run.sleep_until_due(run.work.next_direction(), out);
        if (d < 0) break;  // only its direction was drawn: nothing to drop
        if (plan.flow && !flow_wait(plan, run, out)) break;
        if (!start_picked(plan, run, sl, d == 1)) break;  // a shaped walk is over
      } else {
        start_io(run.work, sl);
      }
    }
    again = false;
    const uint32_t bs = kExtras && plan.shaped ? sl.len : plan.bs[sl.write];
    if (sl.done == 0) t0 = now_ns();  // latency runs from the first submission
    const auto off = static_cast<off_t>(sl.offset + sl.done);
    ssize_t r = sl.write ? ::pwrite(fd, sl.buf + sl.done, bs - sl.done, off)
                         : ::pread(fd, sl.buf + sl.done, bs - sl.done, off);
    t = now_ns();
    if (r < 0) {
      int err = errno;
      if (err == EINTR || err == EAGAIN) {
        if (err == EAGAIN) run.work.again(sl.offset);
        again = true;
      } else {
        run.work.failed(err, sl.write, sl.offset);
      }
    } else if (!io_over(run.work, sl, bs, static_cast<uint32_t>(r))) {
      again = true;
    } else {
      [[maybe_unused]] const bool measured = run.work.completed(sl.write, sl.done, sl.offset, sl.buf, t0, 0, t - t0, t, run.work.second_of(t));
      if constexpr (kExtras) {
        if (measured && plan.logged) run.work.sample(sl.write, sl.done, sl.offset, 0, t - t0, t, sl.ioprio);
        if (measured && plan.depths) {  // fio's sync engines: each I/O submitted and completed alone
          out.result->depths.submitted(1, 1);
          out.result->depths.reaped(1);
        }
        if (plan.depth_search) run.latency_completed(t - t0, measured);
        if (plan.backlog && sl.write) {
          backlog.emplace_back(sl.offset, sl.done);
          if (backlog.size() >= plan.backlog) verify_batch(plan, run, fd, sl, backlog, out);
        }
        run.after_io(out);
      }
    }
    run.check(t, out);
    if constexpr (kExtras) {
      run.extras(t, out);
      if (plan.depth_search) run.latency_check(t, 0);
    }
  }
  if (again) run.work.dropped(sl.write, sl.offset);  // -EAGAIN'd at the stop, not sent again
  // The writes of the last, short batch: read back too, unless a signal or an error stopped the job.
  if (!backlog.empty() && !out.stopped && !run.work.fatal()) verify_batch(plan, run, fd, sl, backlog, out);
  run.finish(out);
  return Ok{};
}

}  // namespace

Status sync_loop(const JobPlan& plan, JobRun& run, int fd, uint8_t* buf, JobOutput& out) {
  if (plan.extras()) return sync_run<true>(plan, run, fd, buf, out);
  return sync_run<false>(plan, run, fd, buf, out);
}

}  // namespace diskprobe::engine
