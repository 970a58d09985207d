// The io_uring engine: one ring per job, its registered file and buffers, and the hot loop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "async_probe.h"
#include "diskprobe/base/status.h"
#include "job.h"
#include "ring.h"

namespace diskprobe::engine {

class UringJob {
 public:
  UringJob(const JobPlan& plan, JobRun& run, int fd) : plan_(plan), run_(run), fd_(fd), file_(fd) {}

  // Ring, registered file and buffers. A refused registration falls back to plain ops
  // (said in *fallback); sqpoll/hipri refused by the kernel, to a plain ring (feature_note).
  Status setup(uint8_t* buffers, std::string* fallback);
  const std::string& feature_note() const { return feature_note_; }

  // Runs the job to its end; out gets its CPU time and the probe's findings.
  Status loop(JobOutput& out);

  // After a failed loop: the kernel may still write into the buffers.
  bool buffers_busy() const { return busy_; }

 private:
  struct Batch {
    unsigned fresh = 0;    // new I/Os (their times start now): batch_'s first `fresh`
    unsigned prepped = 0;  // all SQEs: resends and rests too
    uint64_t t_prep = 0;   // when the batch's prep began: the fresh I/Os' t_prep, stamped at submit
  };

  // Every SQE of the job (fill_free's fresh I/Os, prep's rests and resends): what
  // io_uring_prep_read_fixed and its kin write, in seven stores. Per direction, the SQE's first
  // 8 bytes (opcode, flags, ioprio 0, the file); from the I/O, offset, buffer, length (rw_flags
  // 0), buffer index (personality and file_index 0) and user_data; addr3 and the pad 0. Set
  // once the file and buffers are registered (or not); the slots' buf_index is 0 without
  // registered buffers, as the plain READ and WRITE take it.
  struct JobSqe {
    uint64_t head[2] = {0, 0};
    uint32_t bs[2] = {0, 0};
    static uint64_t head_of(uint8_t op, uint8_t flags, int fd) {
      return op | uint64_t{flags} << 8 | uint64_t{static_cast<uint32_t>(fd)} << 32;
    }
    [[gnu::always_inline]] void write_to(io_uring_sqe* sqe, bool w, const uint8_t* buf, uint64_t offset,
                                         uint32_t len, unsigned buf_index, uint64_t user_data) const {
      std::memcpy(&sqe->opcode, &head[w], 8);
      sqe->off = offset;
      sqe->addr = reinterpret_cast<uintptr_t>(buf);
      const uint64_t len_flags = len;
      std::memcpy(&sqe->len, &len_flags, 8);
      sqe->user_data = user_data;
      const uint64_t index = buf_index;
      std::memcpy(&sqe->buf_index, &index, 8);
      std::memset(&sqe->addr3, 0, 16);
    }
  };
  static_assert(offsetof(io_uring_sqe, opcode) == 0 && offsetof(io_uring_sqe, flags) == 1 &&
                offsetof(io_uring_sqe, ioprio) == 2 && offsetof(io_uring_sqe, fd) == 4 &&
                offsetof(io_uring_sqe, len) == 24 && offsetof(io_uring_sqe, rw_flags) == 28 &&
                offsetof(io_uring_sqe, buf_index) == 40 && offsetof(io_uring_sqe, personality) == 42 &&
                offsetof(io_uring_sqe, file_index) == 44 && offsetof(io_uring_sqe, addr3) == 48 &&
                sizeof(io_uring_sqe) == 64, "the SQE layout JobSqe writes");

  static constexpr uint32_t kNone = UINT32_MAX;

  Status register_all(uint8_t* buffers, std::string* fallback);
  // kExtras: rate caps, steadystate, a shaped plan or logs; false is the loop as it was without them.
  template <bool kExtras>
  Status run_loop(JobOutput& out);
  template <bool kExtras>
  Batch prep_batch();
  void fill_free(io_uring* ring, unsigned room, Batch& b);
  void fill_paced(io_uring* ring, unsigned room, uint64_t t_prep, Batch& b);
  void drop_retries();
  void drop_held();
  template <bool kExtras>
  int submit_and_wait(const Batch& b);
  int wait_due();
  template <bool kExtras>
  void reap(uint64_t t_reaped);
  void watch_chunk(uint64_t t_reaped, JobOutput& out);
  void issue(io_uring_sqe* sqe, uint32_t s, Batch& b);
  void prep(io_uring_sqe* sqe, uint32_t s, const Slot& sl, uint32_t bs);
  void mark_async(io_uring_sqe* sqe);

  const JobPlan& plan_;
  JobRun& run_;
  int fd_;
  int file_;  // index 0 when the file is registered, else the fd
  bool fixed_file_ = false;
  bool fixed_buffers_ = false;
  bool busy_ = false;
  JobSqe sqe_;
  std::string feature_note_;
  Ring ring_;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_, retry_, batch_;  // stacks of slot numbers; batch_: this round
  std::vector<uint32_t> rest_;                  // short I/Os whose rest is still to be sent
  uint32_t nfree_ = 0, nretry_ = 0, nrest_ = 0;
  uint32_t held_ = kNone;    // rate caps: the slot of an I/O waiting for its time
  bool held_drawn_ = false;  // the direction rwmixread drew for it
  bool flow_held_ = false;   // it waits for the job's share of its flow (fio's flow), not for a time
  bool draining_ = false;    // plan_.depth_low: the queue was full; no new I/O until it drained to it
  bool ext_arg_ = false;    // the kernel takes a timeout with io_uring_enter (IORING_FEAT_EXT_ARG)
  uint32_t async_every_ = 0, async_count_ = 0;  // IOSQE_ASYNC on every async_every_-th SQE
  uint64_t reaped_ = 0;                         // CQEs seen, for the probe
  uint64_t last_submit_ = 0;                    // the last submit call's t_submit
  uint32_t chunk_ = kAllAtOnce;                 // SQEs per io_uring_enter at most (plan_.submit_chunk)
  bool watching_ = false;                       // plan_.chunk_watch, until the watch ends
  uint64_t watch_until_ = 0, watch_rounds_ = 0, watch_in_flight_ = 0;
  // I/Os submitted and not yet reaped (completed ones in the CQ included, as fio's cur_depth).
  uint32_t in_flight() const { return plan_.slots - nfree_ - nretry_ - nrest_; }
  unsigned drain_limit(unsigned head, unsigned tail) const;  // plan_.depth_low: where this reap ends
  AsyncProbeRun probe_;
  DepthStats depths_;  // plan_.depths: fio's IO depths figures, of the measured window
};

}  // namespace diskprobe::engine
