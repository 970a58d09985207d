#include "uring_job.h"

#include <sched.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>

#include "clock.h"

namespace diskprobe::engine {

namespace {

constexpr unsigned kMaxRingEntries = 32768;  // IORING_MAX_ENTRIES; the CQ gets twice that

std::string ring_flag_names(unsigned flags) {
  std::string n;
  if (flags & IORING_SETUP_SQPOLL) n += "IORING_SETUP_SQPOLL (sqpoll)";
  if (flags & IORING_SETUP_IOPOLL) n += std::string(n.empty() ? "" : " and ") + "IORING_SETUP_IOPOLL (hipri)";
  return n;
}

// io_uring_get_sqe once the room is known: the ring is ours alone and has no SQE128, so
// the checks it makes per SQE (flags, the kernel's head) were made once per batch.
[[gnu::always_inline]] inline io_uring_sqe* next_sqe(io_uring* ring) {
  io_uring_sq& sq = ring->sq;
  return &sq.sqes[sq.sqe_tail++ & sq.ring_mask];
}

// The results io_uring_enter may give that are no failure of the ring.
inline bool enter_went_on(int ret) { return ret >= 0 || ret == -EINTR || ret == -EAGAIN || ret == -EBUSY; }

}  // namespace

Status UringJob::setup(uint8_t* buffers, std::string* fallback) {
  unsigned entries = std::min<unsigned>(plan_.slots, kMaxRingEntries);
  if (plan_.ring_flags) {
    // sqpoll/hipri asked for: a kernel without them gets a plain ring and a note.
    int ret = ring_.init_flags(entries, plan_.ring_flags);
    if (ret == 0) return register_all(buffers, fallback);
    feature_note_ = errno_message("io_uring_setup with " + ring_flag_names(plan_.ring_flags), plan_.path, -ret) +
                    ": this kernel or process cannot use it; ran with interrupt-driven completions and "
                    "io_uring_enter submission instead";
  }
  if (int ret = ring_.init(entries); ret < 0) {
    return make_error(errno_message("io_uring_queue_init", plan_.path, -ret) +
                      (ret == -EPERM
                           ? ": io_uring is disabled (sysctl kernel.io_uring_disabled): use engine=sync"
                           : ": use engine=sync where io_uring is unavailable"));
  }
  return register_all(buffers, fallback);
}

Status UringJob::register_all(uint8_t* buffers, std::string* fallback) {
  if (int ret = ring_.register_file(fd_); ret == 0) {
    file_ = 0;
    fixed_file_ = true;
  } else {
    *fallback = errno_message("io_uring_register_files", plan_.path, -ret);
  }
  const size_t per_chunk = slots_per_registered_buffer(plan_.slots, plan_.slot_stride);
  size_t chunks = (plan_.slots + per_chunk - 1) / per_chunk;
  std::vector<iovec> iov(chunks);
  for (size_t c = 0; c < chunks; ++c) {
    size_t first = c * per_chunk;
    size_t n = std::min<size_t>(per_chunk, plan_.slots - first);
    iov[c].iov_base = buffers + first * plan_.slot_stride;
    iov[c].iov_len = n * plan_.slot_stride;
  }
  if (int ret = ring_.register_buffers(iov.data(), static_cast<unsigned>(chunks)); ret == 0) {
    fixed_buffers_ = true;
  } else {
    if (!fallback->empty()) *fallback += "; ";
    *fallback += errno_message("io_uring_register_buffers",
                               std::to_string(plan_.slot_stride * plan_.slots) + " bytes", -ret);
    if (ret == -ENOMEM) *fallback += " (raise ulimit -l)";
  }
  slots_.resize(plan_.slots);
  free_.resize(plan_.slots);
  retry_.resize(plan_.slots);
  rest_.resize(plan_.slots);
  batch_.resize(plan_.slots);
  for (uint32_t i = 0; i < plan_.slots; ++i) {
    slots_[i].buf = buffers + size_t{i} * plan_.slot_stride;
    slots_[i].buf_index = fixed_buffers_ ? static_cast<unsigned>(i / per_chunk) : 0;
    free_[i] = plan_.slots - 1 - i;  // slot 0 is used first
  }
  for (int w = 0; w < 2; ++w) {
    const uint8_t op = fixed_buffers_ ? (w ? IORING_OP_WRITE_FIXED : IORING_OP_READ_FIXED)
                                      : (w ? IORING_OP_WRITE : IORING_OP_READ);
    sqe_.head[w] = JobSqe::head_of(op, fixed_file_ ? IOSQE_FIXED_FILE : 0, file_);
    sqe_.bs[w] = plan_.bs[w];
  }
  nfree_ = plan_.slots;
  return Ok{};
}

// The I/O in slot s, or after a short result its rest (sl.done bytes in).
[[gnu::always_inline]] inline void UringJob::prep(io_uring_sqe* sqe, uint32_t s, const Slot& sl, uint32_t bs) {
  sqe_.write_to(sqe, sl.write, sl.buf + sl.done, sl.offset + sl.done, bs - sl.done, sl.buf_index, s);
  sqe->ioprio = sl.ioprio;  // 0 but with prio/cmdprio (start_picked)
  if (async_every_) mark_async(sqe);
}

// IOSQE_ASYNC on every async_every_-th SQE: straight to an io-wq worker (fio's force_async).
[[gnu::always_inline]] inline void UringJob::mark_async(io_uring_sqe* sqe) {
  if (++async_count_ >= async_every_) {
    async_count_ = 0;
    sqe->flags |= IOSQE_ASYNC;
  }
}

[[gnu::always_inline]] inline void UringJob::issue(io_uring_sqe* sqe, uint32_t s, Batch& b) {
  Slot& sl = slots_[s];
  prep(sqe, s, sl, plan_.shaped ? sl.len : plan_.bs[sl.write]);
  ++b.prepped;
  if (sl.done == 0) batch_[b.fresh++] = s;  // the rest of a short I/O keeps its first submission's times
}

// New I/Os in the free slots, as far as `room` goes. Every one is fresh (nothing done yet, its
// times start now), so its SQE is written from the slot and the job's constants (sqe_) alone,
// at SQ position tail + i, from free-list position nfree - 1 - i, into batch position fresh + i,
// and the counts are stored back once. Through issue() each was a member reloaded and stored for
// every I/O, because its stores to slots and SQEs may alias them for all the compiler knows.
// Out of line: inlined into run_loop, its locals and the loop's were more than the registers,
// and the spills cost more than the call (callgrind, 4k randread QD32 on zram).
[[gnu::noinline]] void UringJob::fill_free(io_uring* ring, unsigned room, Batch& b) {
  const unsigned n = std::min(room, nfree_);
  if (n == 0) return;
  Workload& work = run_.work;
  Slot* const slots = slots_.data();
  const uint32_t* const free_top = free_.data() + nfree_ - 1;
  uint32_t* const fresh = batch_.data() + b.fresh;
  io_uring_sq& sq = ring->sq;
  const unsigned tail = sq.sqe_tail, mask = sq.ring_mask;
  io_uring_sqe* const sqes = sq.sqes;
  const JobSqe f = sqe_;
  const unsigned issued = work.draw(n, [&](auto write, unsigned i, uint64_t offset) __attribute__((always_inline)) {
    const uint32_t s = *(free_top - i);
    Slot& sl = slots[s];
    start_io_at(work, sl, write, offset);
    io_uring_sqe* sqe = &sqes[(tail + i) & mask];  // room for it: io_uring_sq_space_left
    f.write_to(sqe, write, sl.buf, offset, f.bs[write], sl.buf_index, s);
    fresh[i] = s;
  });
  // After the loop, where its locals leave room: the same SQEs in the same order as one by one.
  if (async_every_) {
    for (unsigned i = 0; i < issued; ++i) mark_async(&sqes[(tail + i) & mask]);
  }
  sq.sqe_tail = tail + issued;
  nfree_ -= issued;
  b.fresh += issued;
  b.prepped += issued;
}

// Rate caps, and shaped plans (each I/O's offset and length drawn one at a time; unpaced, every
// I/O is due at once): new I/Os only as their times come (t_prep is now). The first one not yet due is
// held, its slot taken and its direction drawn; it goes as whichever direction is due first
// (Pacer::pick, fio's rate_ddir), its offset and data drawn then.
void UringJob::fill_paced(io_uring* ring, unsigned room, uint64_t t_prep, Batch& b) {
  Workload& work = run_.work;
  flow_held_ = false;
  for (; room > 0; --room) {
    if (held_ == kNone) {
      if (nfree_ == 0 || work.exhausted()) return;
      if (plan_.depth_low && draining_) {
        if (plan_.slots - nfree_ > plan_.depth_low) return;
        draining_ = false;
      }
      // fio's latency_target: no new I/O past the searched depth, none while a ramp down drains.
      if (plan_.depth_search && (run_.depth.quiescing() || plan_.slots - nfree_ >= run_.depth.depth())) return;
      held_ = free_[--nfree_];
      held_drawn_ = work.next_direction();
    }
    const int d = run_.pacer.pick(held_drawn_, work.may_switch_to(!held_drawn_), t_prep);
    if (d < 0) return;
    if (plan_.flow && !run_.flow.may_issue()) {  // fio's flow: held until the job's share allows it
      flow_held_ = true;
      return;
    }
    if (!start_picked(plan_, run_, slots_[held_], d == 1)) {  // a shaped walk is over
      drop_held();
      return;
    }
    issue(next_sqe(ring), held_, b);
    held_ = kNone;
    if (nfree_ == 0) draining_ = true;  // fio's iodepth_low: a full queue drains to it before filling again
  }
}

// fio's iodepth_low reaps as fio does (wait_for_completions): nothing while the queue refills,
// and once it is full one completion at a time (iodepth_batch_complete_max's default) until no
// more than iodepth_low are in flight; the rest stay in the CQ, in flight as fio counts them.
// Reaping every completion there is instead refilled from below the mark whenever the device
// completed several at once (a throttled loop device releases its queue in bursts): depth 2-3
// for 28% of the I/Os where fio has none below 5, and a mean latency 11-17% off fio's.
unsigned UringJob::drain_limit(unsigned head, unsigned tail) const {
  if (!draining_) return nfree_ > 0 && held_ == kNone && !run_.work.exhausted() ? head : tail;
  return in_flight() > plan_.depth_low && tail != head ? head + 1 : tail;
}

// Rests, then -EAGAIN resends (the same I/O again, buffer untouched), then new I/Os, as far
// as the SQ has room (iodepth above its size: the rest go next round). One loop each instead
// of one condition over all three per SQE: ~10 instructions an I/O. The rest of a short I/O
// goes out even when stopping: the I/O is in flight until whole. At most chunk_ SQEs
// (iodepth_batch_submit); submit_and_wait then does not wait, and the loop comes back for the
// next chunk.
template <bool kExtras>
[[gnu::always_inline]] inline UringJob::Batch UringJob::prep_batch() {
  Batch b;
  Workload& work = run_.work;
  auto nothing_new = [&]() __attribute__((always_inline)) {  // asked last, as before the caps
    bool none = nfree_ == 0 || work.exhausted();
    if constexpr (kExtras) none = none && held_ == kNone;
    return none;
  };
  if (nrest_ == 0 && (run_.stopping || (nretry_ == 0 && nothing_new()))) return b;
  io_uring* ring = ring_.get();
  b.t_prep = now_ns();
  unsigned room = std::min(io_uring_sq_space_left(ring), chunk_);
  for (; room > 0 && nrest_ > 0; --room) issue(next_sqe(ring), rest_[--nrest_], b);
  if (!run_.stopping) {
    for (; room > 0 && nretry_ > 0; --room) issue(next_sqe(ring), retry_[--nretry_], b);
    if constexpr (kExtras) {
      if (plan_.one_at_a_time()) {
        fill_paced(ring, room, b.t_prep, b);
        return b;
      }
    }
    fill_free(ring, room, b);
  }
  return b;
}

// Stopping: -EAGAIN'd I/Os are dropped, not resent.
void UringJob::drop_retries() {
  for (uint32_t i = 0; i < nretry_; ++i) run_.work.dropped(slots_[retry_[i]].write, slots_[retry_[i]].offset);
  nfree_ += nretry_;
  nretry_ = 0;
}

// Stopping: so is an I/O held for its time (only its direction was drawn).
void UringJob::drop_held() {
  if (held_ == kNone) return;
  free_[nfree_++] = held_;
  held_ = kNone;
}

// The held I/O is not due yet: wait for a completion or its time, whichever comes first, at
// most kMaxPacedSleepNs or to the deadline. Nothing in flight, or a kernel without timed
// waits (IORING_FEAT_EXT_ARG, 5.11; liburing would add a timeout SQE our reap does not
// expect): a plain sleep.
int UringJob::wait_due() {
  if (flow_held_) {
    // fio's flow: without flow_sleep the job tries again at once (fio spins; here it yields the
    // CPU first); with it, its I/Os in flight complete first, then it sleeps flow_sleep.
    if (plan_.flow_sleep_ns == 0) {
      sched_yield();
      return 0;
    }
    if (nfree_ + nretry_ + nrest_ + 1 < plan_.slots) return io_uring_submit_and_wait(ring_.get(), 1);
    sleep_ns(plan_.flow_sleep_ns);
    return 0;
  }
  const uint64_t t = now_ns(), due = run_.pacer.first_due(held_drawn_, run_.work.may_switch_to(!held_drawn_));
  if (due <= t) return 0;
  uint64_t wait = std::min(due - t, kMaxPacedSleepNs);
  if (run_.deadline > t) wait = std::min(wait, run_.deadline - t);
  const uint32_t idle = nfree_ + nretry_ + nrest_ + 1;  // + the held one
  if (!ext_arg_ || idle >= plan_.slots) {
    sleep_ns(wait);
    return 0;
  }
  __kernel_timespec ts{static_cast<long long>(wait / kNsPerSec), static_cast<long long>(wait % kNsPerSec)};
  io_uring_cqe* cqe = nullptr;
  int ret = io_uring_wait_cqe_timeout(ring_.get(), &cqe, &ts);
  return ret == -ETIME ? 0 : ret;
}

// Submit (posting what already completed), stamp, then wait only if nothing has: so clat
// starts when the kernel has the I/O, as fio's does (issue 14). The kernel's submission path
// (for loop: queueing its work, or the whole read when it completes inline) is then slat, not
// clat; in one submit-and-wait call it was in clat, and the wait's own system call too (3.2 us
// p50 against fio's 0.4 us on loop). It costs one system call more per batch when the batch
// has to wait (~0.5 us), a fraction of the I/O's own kernel work at any depth.
template <bool kExtras>
[[gnu::always_inline]] inline int UringJob::submit_and_wait(const Batch& b) {
  io_uring* ring = ring_.get();
  int ret = 0;
  if (b.prepped > 0) {
    ret = io_uring_submit_and_get_events(ring);
    // Unique per call, as reap's runs need: later than the last even where the clock is
    // coarse (jiffies) and two calls read the same time, then 1 ns off.
    const uint64_t t_submit = std::max(now_ns(), last_submit_ + 1);
    last_submit_ = t_submit;
    for (unsigned i = 0; i < b.fresh; ++i) {  // here, not at prep: one loop over the slots, not two
      Slot& sl = slots_[batch_[i]];
      sl.t_prep = b.t_prep;
      sl.t_submit = t_submit;
    }
    if constexpr (kExtras) {
      // fio's io_u_mark_depth at commit: the call's I/Os at the depth in flight with them.
      if (plan_.depths && run_.work.window().is_open()) {
        depths_.submitted(b.prepped, in_flight() - (held_ != kNone ? 1 : 0));
      }
    }
  }
  // Empty CQ: io_uring_cq_ready, the kernel's tail against our head. Not io_uring_peek_cqe and then
  // io_uring_wait_cqe: on an empty CQ the first makes a call into liburing that finds nothing,
  // and the second another that enters the kernel; io_uring_submit_and_wait(ring, 1) enters
  // it straight away with the same io_uring_enter(0, 1, GETEVENTS) (~15 instructions an I/O
  // at QD32 on zram, callgrind, tool and io-wq on one CPU). The two cases where liburing's
  // peek enters the kernel itself: an IOPOLL ring (hipri), where the submit call has just
  // polled once and the wait polls until one is done, and a CQ overflow, which cannot happen
  // here (the CQ is twice the SQ and at most `slots` I/Os are in flight).
  // A full chunk with free slots left: no wait, the next chunk goes first. Never so with every
  // free slot at once (kAllAtOnce is more than any batch).
  const bool next_chunk = b.prepped >= chunk_ && nfree_ > 0;
  if (enter_went_on(ret) && !next_chunk && io_uring_cq_ready(ring) == 0) {
    if constexpr (kExtras) {
      if (held_ != kNone) return wait_due();
    }
    ret = io_uring_submit_and_wait(ring, 1);
  }
  return ret;
}

// One I/O per call (auto, on loop) feeds the kworker each request as it is made, which pays
// while the kworker is the limit: the queue then stays full. Where each call costs more than
// the kworker takes for a request, few I/Os are in flight and the job's calls are the limit:
// then every free slot at once, from the end of the watch (kChunkWatchNs and kChunkWatchIos).
[[gnu::noinline]] void UringJob::watch_chunk(uint64_t t_reaped, JobOutput& out) {
  watch_in_flight_ += in_flight();
  ++watch_rounds_;
  if (run_.stopping) {
    watching_ = false;
    return;
  }
  if (t_reaped < watch_until_ || reaped_ < kChunkWatchIos) return;
  watching_ = false;
  auto& w = out.chunk_watch;
  w.ended = true;
  w.mean_in_flight = static_cast<double>(watch_in_flight_) / static_cast<double>(watch_rounds_);
  w.batched = 2 * watch_in_flight_ < uint64_t{plan_.slots} * watch_rounds_;
  if (w.batched) chunk_ = kAllAtOnce;
}

// Measured completions reaped together that were also submitted together (same slot times)
// have the same slat, clat and lat: each run of them is recorded once with its count, the
// same histograms as one record each. At QD32 a reap holds a few submit batches, so this
// saves most of three histogram records an I/O. A run is told by its t_submit alone, which
// submit_and_wait makes unique per submit call (so it stands for the call's t_prep too), and
// its direction; the run's key is held in locals, not read back through a pointer to its
// first slot, which the stores to free_ may alias (~4 instructions an I/O; callgrind, QD32).
template <bool kExtras>
[[gnu::always_inline]] inline void UringJob::reap(uint64_t t_reaped) {
  io_uring* ring = ring_.get();
  Workload& work = run_.work;
  ptrdiff_t second = work.second_of(t_reaped);
  uint64_t alike_prep = 0, alike_submit = 0;  // no slot's t_submit is 0
  bool alike_write = false;
  uint64_t nalike = 0;
  // Inlined by force (and Workload::timed in it): with run_loop instantiated twice GCC made
  // each a call, 27 instructions an I/O more than one loop had.
  auto flush = [&]() __attribute__((always_inline)) {
    if (nalike) work.timed(alike_write, alike_submit - alike_prep, t_reaped - alike_submit, second, nalike);
    nalike = 0;
  };
  // The CQ's tail read once, and the ring's fields and the free count in locals:
  // io_uring_for_each_cqe reloads the tail (an acquire load through std::atomic in C++) and
  // the mask and entry pointer for every CQE, and the stores to free_ may alias nfree_, so
  // it was reloaded and stored per CQE too (~12 instructions an I/O; callgrind, QD32). A CQE
  // posted while this loop runs is reaped next round, as one posted just after it would be;
  // with DEFER_TASKRUN none can be. The ring never has CQE32 (setup does not ask for it).
  io_uring_cq& cq = ring->cq;
  const unsigned head0 = *cq.khead;
  unsigned tail = io_uring_smp_load_acquire(cq.ktail);
  if constexpr (kExtras) {
    if (plan_.depth_low && !run_.stopping) tail = drain_limit(head0, tail);
  }
  const unsigned mask = cq.ring_mask;
  const io_uring_cqe* const cqes = cq.cqes;
  Slot* const slots = slots_.data();
  uint32_t* const free_list = free_.data();
  uint32_t nfree = nfree_;
  for (unsigned head = head0; head != tail; ++head) {
    const io_uring_cqe* cqe = &cqes[head & mask];
    auto s = static_cast<uint32_t>(io_uring_cqe_get_data64(cqe));
    Slot& sl = slots[s];
    int res = cqe->res;
    if (res == -EAGAIN) {
      work.again(sl.offset);
      if (sl.done) {
        rest_[nrest_++] = s;
      } else {
        retry_[nretry_++] = s;
      }
      continue;
    }
    if (res < 0) {
      work.failed(-res, sl.write, sl.offset);
    } else if (!io_over(work, sl, kExtras && plan_.shaped ? sl.len : plan_.bs[sl.write], static_cast<uint32_t>(res))) {
      rest_[nrest_++] = s;
      continue;
    } else if (work.over(sl.write, sl.done, sl.offset, sl.buf, sl.t_prep, t_reaped, second)) {
      if (sl.t_submit != alike_submit || sl.write != alike_write) {
        flush();
        alike_prep = sl.t_prep;
        alike_submit = sl.t_submit;
        alike_write = sl.write;
      }
      ++nalike;
      if constexpr (kExtras) {
        if (plan_.logged) work.sample(sl.write, sl.done, sl.offset, sl.t_submit - sl.t_prep, t_reaped - sl.t_submit, t_reaped, sl.ioprio);
        if (plan_.depth_search) run_.latency_completed(t_reaped - sl.t_prep, true);
      }
    } else if constexpr (kExtras) {
      if (plan_.depth_search) run_.latency_completed(t_reaped - sl.t_prep, false);
    }
    free_list[nfree++] = s;
  }
  nfree_ = nfree;
  flush();
  const unsigned seen = tail - head0;
  io_uring_cq_advance(ring, seen);  // liburing's own release store of the head; no-op at 0
  reaped_ += seen;
  if constexpr (kExtras) {
    if (plan_.depths && seen && work.window().is_open()) depths_.reaped(seen);  // fio's io_u_mark_complete
  }
}

// The hot loop: fill every free slot, submit them, wait for at least one completion, reap
// the whole batch. Nothing here allocates or logs. Its steps are always inlined into it: as
// calls they would cost register saves and restores each round.
//
// Clock: read before prepping a batch (t_prep), when the submit call returns (t_submit)
// and when the first completion is seen; the last is also the reap time of every
// completion in the batch. So, as fio defines them:
//   slat = t_submit - t_prep: diskprobe's prep (refill too) and the kernel's submission;
//   clat = t_reaped - t_submit: the device and the completion;
//   lat  = slat + clat.
// What that costs: the I/Os of one batch share their timestamps; a completion that lands
// while the batch is reaped is stamped up to one reap loop (well under a microsecond) early
// or counted in the next batch.
Status UringJob::loop(JobOutput& out) {
  ext_arg_ = (ring_.get()->features & IORING_FEAT_EXT_ARG) != 0;
  if (plan_.extras()) return run_loop<true>(out);
  return run_loop<false>(out);
}

template <bool kExtras>
Status UringJob::run_loop(JobOutput& out) {
  uint64_t t_reaped = now_ns();
  async_every_ = plan_.async_every;
  if (plan_.probe_async) async_every_ = probe_.start(t_reaped);
  chunk_ = plan_.submit_chunk;
  watching_ = plan_.chunk_watch;
  watch_until_ = t_reaped + kChunkWatchNs;
  for (;;) {
    const Batch b = prep_batch<kExtras>();
    if (run_.stopping) {
      drop_retries();
      if constexpr (kExtras) drop_held();
    }
    // Nothing in flight and nothing to issue (a held I/O is still to issue).
    if (nfree_ + nretry_ == plan_.slots) break;
    int ret = submit_and_wait<kExtras>(b);
    t_reaped = now_ns();
    if (!enter_went_on(ret)) {
      busy_ = true;
      return make_error(errno_message("io_uring_enter", plan_.path, -ret));
    }
    reap<kExtras>(t_reaped);
    if (watching_) watch_chunk(t_reaped, out);
    if (probe_.due(t_reaped)) async_every_ = probe_.step(t_reaped, reaped_);
    run_.check(t_reaped, out);
    if constexpr (kExtras) {
      run_.extras(t_reaped, out);
      if (plan_.depth_search) run_.latency_check(t_reaped, plan_.slots - nfree_ - nretry_);
    }
  }
  run_.finish(out);
  out.result->depths = depths_;
  out.probe = probe_.result();
  return Ok{};
}

}  // namespace diskprobe::engine
