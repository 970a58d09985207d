// One job of a run: its output, its I/O slots and the loop state both engines share, and the
// two steps every I/O takes in either engine (start_io, io_over), inline for the hot loops.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "async_probe.h"
#include "diskprobe/base/aligned_buffer.h"
#include "diskprobe/base/status.h"
#include "diskprobe/stats/results.h"
#include "diskprobe/engine/depth_search.h"
#include "diskprobe/engine/flow.h"
#include "job_plan.h"
#include "pacer.h"
#include "start_gate.h"
#include "steady_watch.h"
#include "workload.h"

namespace diskprobe::engine {

struct JobOutput {
  JobResult* result = nullptr;  // the job's slot in Results::jobs, written only by the job
  CpuUsage cpu;
  std::string error;     // set when the job could not start or its ring failed
  std::string fallback;  // registered files/buffers refused: plain ops were used
  std::string feature_note;  // sqpoll/hipri refused by the kernel: ran without
  AsyncProbe probe;          // force_async=auto: what the probe measured and kept
  // plan.chunk_watch: whether the watch ended (a run may end first), the I/Os it saw in
  // flight on average after each reap, and whether the job batched from then on.
  struct ChunkWatch {
    bool ended = false;
    double mean_in_flight = 0;
    bool batched = false;
  } chunk_watch;
  bool stopped = false;  // saw the stop flag
  bool arrived = false;  // has reported to the start gate
  // steadystate: where the job publishes its totals, and the watch's word to stop (else null).
  JobTotals* totals = nullptr;
  const std::atomic<uint64_t>* steady_stop = nullptr;
};

// The longest a capped job sleeps at once waiting for its next I/O's time, so that a stop
// (signal, steadystate, deadline) is seen within it.
inline constexpr uint64_t kMaxPacedSleepNs = 50'000'000;
void sleep_ns(uint64_t ns);

using Buffer = AlignedBuffer;

// This thread's CPU time and context switches (getrusage RUSAGE_THREAD), and the difference.
CpuUsage thread_cpu();
CpuUsage cpu_delta(const CpuUsage& a, const CpuUsage& b);

// One I/O slot: a buffer and what is in flight in it.
struct Slot {
  uint8_t* buf = nullptr;
  uint64_t offset = 0;
  uint64_t t_prep = 0;
  uint64_t t_submit = 0;
  unsigned buf_index = 0;  // registered buffer (chunk) that holds `buf`
  uint32_t done = 0;       // bytes of this I/O already transferred (short I/O: the rest goes again)
  uint32_t len = 0;        // shaped plans only (plan.shaped): this I/O's bytes; else plan.bs[write]
  uint16_t ioprio = 0;     // the I/O's sqe->ioprio (prio/prioclass, cmdprio); 0 = the thread's
  bool write = false;
  bool held_read_data = false;  // the last I/O in this buffer was a read
};

// State a job's loop carries; shared by both engines.
struct JobRun {
  const JobPlan& plan;
  Workload work;
  const std::atomic<bool>* stop;
  bool stopping = false;  // no new I/O: runtime over, size done, or stop flag
  bool measuring = false;
  uint64_t open_at = 0;   // ramp's end: the window opens at the first reap from here
  uint64_t deadline = 0;  // 0 = none; the window's once it opened, planned from open_at before
  bool reached_deadline = false;  // the run went on to its deadline (not stopped, not done)
  CpuUsage cpu_start;

  Pacer pacer;                                          // rate caps (plan.paced)
  JobTotals* totals = nullptr;                          // steadystate: published per batch
  const std::atomic<uint64_t>* steady_stop = nullptr;  // steadystate: the watch's stop, once
  JobResult* result;
  bool window_paced_ = false;  // the schedule was started again at the window's opening
  FlowShare flow;              // plan.flow: this job's share; it leaves the flow when the job ends
  DepthSearch depth;           // plan.depth_search: the depth new I/Os keep to
  bool restart_pending = false;  // the search found its depth: figures start again once drained

  JobRun(const JobPlan& p, unsigned job, JobResult& out, const std::atomic<bool>* s)
      : plan(p), work(p, job, out), stop(s), result(&out), flow(p.flow, p.flow_weight),
        depth(p.spec->latency, p.slots) {
    for (int d = 0; d < 2; ++d) {
      pacer.set(d, p.rate_ns_num[d], p.rate_ns_den[d]);
      if (p.shape.rate_bytes[d]) pacer.set_bytes(d, p.shape.rate_bytes[d]);
    }
    if (p.logged) out.samples.reserve(1u << 16);  // grows as fio's log chunks do, without a bound
    if (p.spec->rate_poisson) pacer.set_poisson(0x9e3779b97f4a7c15ull * (p.first_job + job + 1) ^ p.spec->randseed);
  }

  // thinktime (shaped plans): after every think_blocks I/Os, the job waits think_ns, in naps
  // that let a stop or the deadline in.
  void after_io(JobOutput& out) {
    if (plan.shape.think_ns == 0 || ++thought_ < plan.shape.think_blocks) return;
    thought_ = 0;
    const uint64_t until = now_ns() + plan.shape.think_ns;
    for (uint64_t t = now_ns(); t < until && !stopping; t = now_ns()) {
      uint64_t nap = std::min(until - t, kMaxPacedSleepNs);
      if (deadline > t) nap = std::min(nap, deadline - t);
      sleep_ns(nap);
      check(now_ns(), out);
    }
  }
  uint32_t thought_ = 0;
  uint64_t stopped_at = 0;  // the deadline or another job's exitall stopped the job then (0: neither)
  bool terminated = false;  // the deadline or another job's exitall ended it (fio's terminate), not its size

  void start(uint64_t t0) {
    pacer.start(t0);
    depth.start(t0);
    open_at = t0 + plan.ramp_ns;
    if (plan.runtime_ns) deadline = open_at + plan.runtime_ns;  // until the window opens (paced waits)
    // A size-bounded run without ramp measures all it does; any other opens at a completion.
    if (plan.ramp_ns == 0 && !plan.spec->time_based) {
      work.window().open(t0);
      // The caps' schedule starts with the window, here: each direction's first I/O due now, as
      // fio's (an interval later, a randrw job capped below one I/O a runtime issued one read
      // and no write where fio issues one of each).
      window_paced_ = true;
    }
    if (plan.ramp_ns == 0) {
      measuring = true;
      cpu_start = thread_cpu();
    }
  }

  // Once per loop iteration, after the batch was reaped at `t`.
  void check(uint64_t t, JobOutput& out) {
    if (!work.window().is_open() && t >= open_at) {
      // This batch is not measured; the runtime runs from here, as fio's from its ramp's end.
      work.window().open(t);
      if (plan.runtime_ns) deadline = work.window().deadline();
    }
    if (!measuring && t >= open_at) {
      measuring = true;
      cpu_start = thread_cpu();  // ramp's CPU time is not counted either
    }
    if (stopping) return;
    if (work.fatal()) {
      stopping = true;
    } else if (stop && stop->load(std::memory_order_relaxed)) {
      stopping = true;  // what is in flight still completes and is counted
      out.stopped = true;
    } else if (plan.terminate && plan.terminate->load(std::memory_order_relaxed)) {
      stopping = true;  // another job's exitall: its end ends this one, counted as it is
      stopped_at = t;
      terminated = true;
    } else if (deadline && t >= deadline) {
      stopping = true;
      reached_deadline = true;
      stopped_at = std::min(t, deadline);
      terminated = true;
    }
  }

  // Rate caps and steadystate, once per reaped batch after check(); the loops call it only
  // when either is on (so nothing of it is in the loop without them).
  void extras(uint64_t t, JobOutput& out) {
    if (!window_paced_ && work.window().is_open()) {
      // The rate's schedule starts again with the window, as fio's when the ramp ends: the
      // I/Os due while the first completion was awaited would go at once inside it, above the
      // cap (1,243 IOPS for 1,237 when it took 17 ms).
      window_paced_ = true;
      pacer.start_window(work.window().start());
    }
    if (totals) {
      totals->ios.store(result->read.ios + result->write.ios, std::memory_order_relaxed);
      totals->bytes.store(result->read.bytes + result->write.bytes, std::memory_order_relaxed);
    }
    if (steady_stop) {
      if (uint64_t k = steady_stop->load(std::memory_order_relaxed)) {
        stop_after_second(k);
        check(t, out);  // stops now if that deadline has passed
      }
    }
    if (plan.rate_floor) check_min_rate(t);
  }

  // fio's check_min_rate, per direction that completed I/Os since the last batch: from 2 s into
  // the measured part, a sample every ratecycle; the bytes (ratemin) or I/Os (rate_iops_min)
  // since the last one, over the time since it, below the floor end the job (EIO). fio judges
  // bytes where either rate or ratemin is set for the direction, else I/Os.
  struct FloorSample {
    uint64_t bytes = 0, ios = 0, at = 0, seen_ios = 0;
  } floor_[2];
  void check_min_rate(uint64_t t) {
    if (stopping || !work.window().is_open() || t - work.window().start() < 2 * kNsPerSec) return;
    const JobSpec& s = *plan.spec;
    for (int d = 0; d < 2; ++d) {
      if (!s.rate_min_bytes[d] && !s.rate_min_iops[d]) continue;
      const DirectionStats& ds = d ? result->write : result->read;
      FloorSample& f = floor_[d];
      if (ds.ios == f.seen_ios) continue;  // fio asks only for a direction with bytes done
      f.seen_ios = ds.ios;
      if (f.bytes || f.ios) {
        const uint64_t spent_ms = (t - f.at) / 1'000'000;
        if (spent_ms < s.ratecycle_ms) continue;
        const bool by_bytes = s.rate_bytes[d] || s.rate_min_bytes[d];
        const uint64_t now = by_bytes ? ds.bytes : ds.ios, was = by_bytes ? f.bytes : f.ios;
        const uint64_t floor = by_bytes ? s.rate_min_bytes[d] : s.rate_min_iops[d];
        const uint64_t rate = spent_ms ? (now - was) * 1000 / spent_ms : 0;
        if (rate < floor) {
          work.under_rate(std::string(d ? "write" : "read") + (by_bytes ? " rate_min=" : " rate_iops_min=") +
                          std::to_string(floor) + (by_bytes ? "B/s" : "") + " not met, got " + std::to_string(rate) +
                          (by_bytes ? "B/s" : " IOPS") + " over " + std::to_string(spent_ms) + " ms");
          stopping = true;
          return;
        }
      }
      f.bytes = ds.bytes;
      f.ios = ds.ios;
      f.at = t;
    }
  }

  // steadystate attained: the window keeps its first k whole seconds; what completes after
  // them is the drain, counted in second k - 1 as after a deadline (check() then stops).
  void stop_after_second(uint64_t k) {
    if (!work.window().is_open()) return;  // asked again next batch
    steady_stop = nullptr;
    if (!work.window().end_after_seconds(k)) return;  // the deadline comes first
    deadline = work.window().deadline();
    work.refold();
  }

  // fio's latency_target, per completion (any, measured or not; total latency lat_ns).
  void latency_completed(uint64_t lat_ns, bool measured) {
    if (depth.completed(lat_ns, measured) == DepthSearch::Step::Fatal) {
      work.over_latency(lat_ns, plan.spec->latency.target_ns);
    }
  }

  // After each reaped batch (outside the ramp, as fio's lat_target_check), with `in_flight`
  // I/Os still out: a window judged, or a drain the search waits for come to its end.
  // A step that drains with nothing in flight any more (every I/O of the batch reaped, as at
  // QD1) takes its next window at once: the loop ends where nothing is in flight and nothing may
  // be issued, so the job would end there, its final run never run.
  void latency_check(uint64_t t, uint32_t in_flight) {
    if (stopping || !measuring) return;
    if (!depth.quiescing()) {
      switch (depth.check(t)) {
        case DepthSearch::Step::FinalRun:
          restart_pending = true;
          break;
        case DepthSearch::Step::Done:
          stopping = true;  // what is in flight completes and is counted
          stopped_at = t;
          return;
        default:
          break;
      }
    }
    if (!depth.quiescing() || in_flight) return;
    if (restart_pending) {
      // fio's reset_all_stats: the job's figures and its runtime start again here.
      restart_pending = false;
      work.restart_window(t);
      if (plan.runtime_ns) deadline = work.window().deadline();
      if (plan.paced) pacer.start_window(t);
      cpu_start = thread_cpu();
    }
    depth.begin_cycle(t);
  }

  // The sync engine's wait for a capped I/O's time, in naps that let a stop in: the direction
  // the pacer picked for one drawn as `drawn` (Pacer::pick), or -1 when the job stopped meanwhile.
  int sleep_until_due(bool drawn, JobOutput& out) {
    const bool may_switch = work.may_switch_to(!drawn);
    for (;;) {
      const uint64_t t = now_ns();
      if (int d = pacer.pick(drawn, may_switch, t); d >= 0) return d;
      check(t, out);
      extras(t, out);
      if (stopping) return -1;
      uint64_t nap = std::min(pacer.first_due(drawn, may_switch) - t, kMaxPacedSleepNs);
      if (deadline > t) nap = std::min(nap, deadline - t);
      sleep_ns(nap);
    }
  }

  void finish(JobOutput& out) {
    flow.leave();
    if (depth.on()) out.result->latency_depth = depth.depth();
    if (measuring) out.cpu = cpu_delta(cpu_start, thread_cpu());
    work.finish(reached_deadline);
    out.result->terminated = terminated;
    out.result->runtime_s = work.window().runtime_s();
    // A capped job waits for its I/Os' times: its runtime runs to its stop, as fio's, not to its
    // last completion (one I/O in 3 s at rate=300 is 0.33 IOPS, not one over the I/O's latency).
    if (plan.paced && stopped_at && work.window().is_open() && stopped_at > work.window().start()) {
      out.result->runtime_s = std::max(out.result->runtime_s, static_cast<double>(stopped_at - work.window().start()) / 1e9);
    }
  }
};

// Buffers for `plan.slots` I/Os, each aligned for O_DIRECT and filled with random data once.
Result<Buffer> allocate_buffers(const JobPlan& plan, Workload& work);

// Starts a new I/O in `sl`: direction, offset and, for a write, its data. Always inlined: as
// a call it cost ~17 instructions an I/O in register saves and restores.
[[gnu::always_inline]] inline void load_io(Workload& work, Slot& sl) {
  if (sl.write) {
    work.prepare_write(sl.buf, sl.offset, sl.held_read_data);
    sl.held_read_data = false;
  } else {
    sl.held_read_data = true;
  }
}
[[gnu::always_inline]] inline void start_io(Workload& work, Slot& sl) {
  sl.done = 0;
  work.next(&sl.write, &sl.offset);
  load_io(work, sl);
}
// An I/O whose direction and offset are drawn already (Workload::draw).
[[gnu::always_inline]] inline void start_io_at(Workload& work, Slot& sl, bool write, uint64_t offset) {
  sl.done = 0;
  sl.write = write;
  sl.offset = offset;
  load_io(work, sl);
}
// Rate caps: the direction was drawn (Workload::next_direction) and picked by the pacer.
inline void start_io_as(Workload& work, Slot& sl, bool write) { start_io_at(work, sl, write, work.next_offset(write)); }
// A shaped plan's I/O of the direction picked: its offset and length drawn (Workload::next_shaped);
// false when the walk is over (nothing started in sl).
inline bool start_io_shaped(Workload& work, Slot& sl, bool write) {
  uint64_t offset = 0;
  uint32_t len = 0;
  if (!work.next_shaped(write, &offset, &len)) return false;
  sl.len = len;
  start_io_at(work, sl, write, offset);
  return true;
}
// Starts the picked direction's I/O in sl and tells the pacer; false: a shaped walk is over.
inline bool start_picked(const JobPlan& plan, JobRun& run, Slot& sl, bool write) {
  if (plan.shaped) {
    if (!start_io_shaped(run.work, sl, write)) return false;
    run.pacer.issued(write, sl.len);
  } else {
    run.pacer.issued(write);
    start_io_as(run.work, sl, write);
  }
  if (plan.prioritized) sl.ioprio = run.work.pick_prio(write, plan.shaped ? sl.len : plan.bs[write]);
  return true;
}

// fio's short I/O handling: a completion of `res` bytes, fewer than the I/O's `bs`, sends the
// rest again (buffer and offset advanced by what was done) until the I/O is whole. True when
// the I/O in `sl` is over: whole, or ended short by a zero-byte result; sl.done is its bytes.
inline bool io_over(Workload& work, Slot& sl, uint32_t bs, uint32_t res) {
  sl.done += res;
  if (sl.done >= bs) [[likely]] return true;
  return !work.short_result(sl.write, sl.offset, sl.done - res, res);
}

// pread/pwrite, one I/O at a time: slat is 0 and clat is the system call. Paced by the rate
// caps, each new I/O waits for its time first.
Status sync_loop(const JobPlan& plan, JobRun& run, int fd, uint8_t* buf, JobOutput& out);

// A job's thread: pins, opens, sets up, waits at the gate, runs its engine; every failure
// lands in out.error, and the gate always hears from it.
void job_main(const JobPlan& plan, unsigned job, const std::vector<int>& cpus, StartGate& gate,
              const std::atomic<bool>* stop, JobOutput& out);

}  // namespace diskprobe::engine
