#include "diskprobe/engine/engine.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <mutex>
#include <random>
#include <system_error>
#include <thread>

#include "diskprobe/base/fd.h"
#include "diskprobe/base/problems.h"
#include "diskprobe/engine/random_map.h"
#include "ring.h"
#include "verify.h"

namespace diskprobe {

namespace {

__extension__ typedef unsigned __int128 U128;  // -Wpedantic: __int128 is a GNU extension

constexpr uint64_t kNsPerSec = 1'000'000'000;
constexpr uint64_t kMaxIodepth = 65536;
constexpr uint64_t kMaxNumjobs = 4096;
// A day: beyond it the nanosecond deadlines still fit, but the per-second samples kept for
// every job (16 bytes a second) would not be a benchmark's memory any more.
constexpr double kMaxSeconds = 86400;
constexpr unsigned kMaxRingEntries = 32768;           // IORING_MAX_ENTRIES; the CQ gets twice that
constexpr uint64_t kMaxRegisteredChunk = 1ull << 30;  // the kernel's limit per registered iovec
constexpr size_t kBufferAlign = 4096;

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * kNsPerSec + static_cast<uint64_t>(ts.tv_nsec);
}


uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// xoshiro256**: a few ns per 64 bits, good enough for offsets and incompressible data.
class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (auto& w : s_) w = splitmix64(seed);
  }
  uint64_t next() {
    const uint64_t result = std::rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = std::rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, n) by Lemire's multiply-shift; the bias is below n / 2^64.
  uint64_t below(uint64_t n) { return static_cast<uint64_t>((static_cast<U128>(next()) * n) >> 64); }
  void fill(uint8_t* p, size_t len) {
    size_t words = len / 8;
    for (size_t i = 0; i < words; ++i) {
      uint64_t v = next();
      std::memcpy(p + i * 8, &v, 8);
    }
    if (len % 8) {
      uint64_t v = next();
      std::memcpy(p + words * 8, &v, len % 8);
    }
  }

 private:
  uint64_t s_[4];
};

std::string iso8601_utc(std::chrono::system_clock::time_point t) {
  std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

uint64_t round_up(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }

// What every job of one run shares; read-only once the threads start.
struct Plan {
  const JobSpec* spec = nullptr;
  std::string path;
  int open_flags = 0;
  uint64_t region_start = 0;
  uint64_t nblocks = 0;      // bs-sized blocks in the region
  uint32_t bs[2] = {0, 0};          // [0] reads, [1] writes (fio's bs=R,W)
  uint64_t nblocks_dir[2] = {0, 0};  // blocks of each direction's size in the region
  std::vector<std::string> job_paths;  // --directory: each job's own file
  bool randommap = false;     // random I/O walks a permutation of the blocks
  bool verify = false;        // every write carries a crc32c
  bool verify_reads = false;  // a read workload checks every block it reads
  bool track_writes = false;  // remember written blocks for the verify pass
  std::vector<WrittenBlocks*> written;  // per job: its file's map (track_writes only)
  ContinueOnError continue_on_error = ContinueOnError::None;
  unsigned ring_flags = 0;    // IORING_SETUP_SQPOLL / IORING_SETUP_IOPOLL
  uint32_t async_every = 0;   // force_async: every Nth SQE with IOSQE_ASYNC; 0 = none
  bool probe_async = false;   // force_async=auto on a bio-based device: probe, keep the faster
  uint64_t bytes_limit = 0;  // per job; 0 = no limit (time_based)
  uint64_t ramp_ns = 0;
  uint64_t runtime_ns = 0;      // measured part; 0 = until bytes_limit
  size_t seconds_capacity = 0;  // per-second slots preallocated
  uint32_t slots = 1;           // I/Os in flight per job
  size_t slot_stride = 0;       // bytes between two slots' buffers
  uint64_t device_id = 0;       // for every block header
  uint64_t run_id = 0;
};

// Holds every job at the start line until all have opened their target and set up their
// ring, so the measured part starts together and a job that cannot start stops the others.
class StartGate {
 public:
  explicit StartGate(unsigned jobs) : jobs_(jobs) {}
  // A job is ready (or failed); waits for the start. Returns the start time, 0 = abort.
  uint64_t arrive(bool failed) {
    std::unique_lock lock(m_);
    ++arrived_;
    if (failed) failed_ = true;
    cv_.notify_all();
    cv_.wait(lock, [&] { return start_ns_ != 0 || abort_; });
    return abort_ ? 0 : start_ns_;
  }
  // Waits for all jobs (or `expected` of them); starts them unless one failed.
  bool release(unsigned expected) {
    std::unique_lock lock(m_);
    cv_.wait(lock, [&] { return arrived_ >= expected; });
    if (failed_ || expected < jobs_) {
      abort_ = true;
    } else {
      start_ns_ = now_ns();
    }
    cv_.notify_all();
    return !abort_;
  }
  uint64_t start_ns() const { return start_ns_; }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  unsigned jobs_;
  unsigned arrived_ = 0;
  bool failed_ = false;
  bool abort_ = false;
  uint64_t start_ns_ = 0;
};

// force_async=auto on a bio-based device (zram): such a device has no nowait support, so
// io_uring hands every I/O to its io-wq workers anyway. Marked IOSQE_ASYNC, an I/O goes
// there directly and io-wq runs such work concurrently, a worker per CPU; unmarked, one
// worker takes the queue while it does not block. Which is faster depends on what an I/O
// costs the device: on this 2-vCPU VM, 128k reads of written zram ran 1.8x faster marked,
// 4k reads of never-written zram (a zero fill each) 1.5x slower. So each job measures both,
// kProbeNs each after a kProbeWarmNs warm-up, before the measured part (like ramp_time),
// and keeps IOSQE_ASYNC only where it completed kProbeMargin more I/Os. Marked I/O goes
// first: the extra workers it starts stay (io-wq keeps idle workers for seconds) and take
// unmarked I/O too, so the unmarked window measures what the run would get after it.
constexpr uint64_t kProbeWarmNs = 100'000'000;
constexpr uint64_t kProbeNs = 200'000'000;
constexpr double kProbeMargin = 1.05;

struct AsyncProbe {
  bool ran = false;
  uint64_t ios_plain = 0, ios_async = 0;  // completions in each kProbeNs window
  bool kept = false;                      // IOSQE_ASYNC on every I/O for the run
};

struct JobOutput {
  JobResult* result = nullptr;  // the job's slot in Results::jobs, written only by the job
  CpuUsage cpu;
  std::string error;     // set when the job could not start or its ring failed
  std::string fallback;  // registered files/buffers refused: plain ops were used
  std::string feature_note;  // sqpoll/hipri refused by the kernel: ran without
  AsyncProbe probe;          // force_async=auto: what the probe measured and kept
  bool stopped = false;  // saw the stop flag
  bool arrived = false;  // has reported to the start gate
};

struct AlignedFree {
  void operator()(uint8_t* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<uint8_t, AlignedFree>;

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

// The workload one job runs: which direction and offset comes next, what a write carries,
// and where each completion is counted. Everything here is on the per-I/O path.
class Workload {
 public:
  Workload(const Plan& p, unsigned job, JobResult& out)
      : p_(p), spec_(*p.spec), rng_(seed(*p.spec, job)), out_(out) {
    mixed_ = spec_.rw == RwMode::RandRW || spec_.rw == RwMode::ReadWrite;
    random_ = is_random(spec_.rw);
    writes_only_ = !does_reads(spec_.rw);
    for (auto* d : {&out_.read, &out_.write}) d->ios_per_second.assign(p.seconds_capacity, 0);
    out_.read.bs = p.bs[0];
    out_.write.bs = p.bs[1];
    if (p.randommap) {
      for (int d = 0; d < 2; ++d) perm_[d].reset(p.nblocks_dir[d], rng_.next());
    }
    if (p.track_writes) written_ = p.written[job];
    limit_ = p.bytes_limit ? p.bytes_limit : UINT64_MAX;
    region_start_ = p.region_start;
    bs_[0] = p.bs[0];
    bs_[1] = p.bs[1];
    randommap_ = p.randommap;
    verify_ = p.verify;
  }

  // True once this job has issued its `size` bytes (never for time_based runs).
  bool exhausted() const { return issued_ >= limit_; }

  // The next I/O's direction and offset; call only when !exhausted(). Inlined into the loop.
  [[gnu::always_inline]] void next(bool* write, uint64_t* offset) {
    bool w = mixed_ ? rng_.below(100) >= spec_.rwmixread : writes_only_;
    issued_ += bs_[w];
    uint64_t block;
    if (random_) {
      block = randommap_ ? perm_[w].next() : rng_.below(p_.nblocks_dir[w]);
    } else {
      uint64_t& n = next_block_[w];
      block = n;
      if (++n == p_.nblocks_dir[w]) n = 0;  // time_based runs loop over the region
    }
    *write = w;
    *offset = region_start_ + block * bs_[w];
  }

  // Fresh random data when asked (refill_buffers) or when a read left the device's data in
  // the buffer; then the header: two stores.
  void prepare_write(uint8_t* buf, uint64_t offset, bool held_read_data) {
    if (spec_.refill_buffers || held_read_data) rng_.fill(buf, p_.bs[1]);
    BlockHeader h;
    h.device_id = p_.device_id;
    h.run_id = p_.run_id;
    h.offset = offset;
    h.seq = ++write_seq_;
    encode_block_header(buf, h);  // bs >= 512 > kBlockHeaderBytes: validate() guarantees it
    if (p_.verify) store_block_checksum(buf, p_.bs[1]);  // only the crc field changes
  }

  void fill_initial(uint8_t* buf, size_t len) { rng_.fill(buf, len); }

  // The second (since the window opened) that completions reaped at `t` belong to; -1 before
  // it opened. The drain after the deadline counts in the deadline's second, so the samples
  // add up to the total. Called once per reaped batch.
  ptrdiff_t second_of(uint64_t t) {
    if (t < measure_start_) return -1;
    auto sec = static_cast<size_t>((std::min(t, fold_from_) - measure_start_) / kNsPerSec);
    if (sec >= out_.read.ios_per_second.size()) grow_seconds(sec);
    return static_cast<ptrdiff_t>(sec);
  }

  // One I/O is over with `bytes` transferred: bs, or fewer when a zero-byte result ended it
  // (short_result). slat and clat run from its first submission, at t_prep; it is measured
  // when that was inside the window (see open_window), reaped at t_reaped in `second`.
  void completed(bool write, uint32_t bytes, uint64_t offset, const uint8_t* buf, uint64_t t_prep, uint64_t slat,
                 uint64_t clat, uint64_t t_reaped, ptrdiff_t second) {
    if (over(write, bytes, offset, buf, t_prep, t_reaped, second)) timed(write, slat, clat, second, 1);
  }

  // completed() in two halves, for the io_uring loop. over(): every I/O's own part (verify,
  // bytes); true when the I/O is measured, and then its times are still to be given to
  // timed(), which records `n` measured completions of one direction whose slat, clat and
  // second are all the same at once.
  bool over(bool write, uint32_t bytes, uint64_t offset, const uint8_t* buf, uint64_t t_prep, uint64_t t_reaped,
            ptrdiff_t second) {
    if (verify_) {
      if (bytes == bs_[write]) {
        verified(write, offset, buf);
      } else if (write) {
        unlog(offset);
      }
    }
    if (second < 0 || t_prep < measure_start_) return false;  // issued before the window: not measured
    window_end_ = t_reaped;
    (write ? out_.write : out_.read).bytes += bytes;
    return true;
  }
  void timed(bool write, uint64_t slat, uint64_t clat, ptrdiff_t second, uint64_t n) {
    DirectionStats& d = write ? out_.write : out_.read;
    d.ios += n;
    d.slat.record(slat, n);
    d.clat.record(clat, n);
    d.lat.record(slat + clat, n);
    d.ios_per_second[static_cast<size_t>(second)] += n;
  }

  void failed(int err, bool write, uint64_t offset) {
    ErrorStats& e = out_.errors;
    if (e.count++ == 0) {
      e.first_errno = err;
      e.first_offset = offset;
    }
    (err == EIO ? e.eio : err == ENOSPC ? e.enospc : e.other).add(offset);
    if (write) unlog(offset);
    if (!io_error_allowed(write)) {
      stop_on(std::string(write ? "write" : "read") + " error (" + std::strerror(err) + ") at offset " +
              std::to_string(offset));
    }
  }

  // A completion of `res` bytes left the I/O at offset short after `done` earlier bytes.
  // Counted once per I/O however many pieces it takes; true = send the rest. A zero-byte
  // result (end of file) would repeat forever: it ends the I/O as a short I/O error, which
  // continue_on_error decides on like any I/O error.
  bool short_result(bool write, uint64_t offset, uint32_t done, uint32_t res) {
    if (done == 0) short_io(write, offset);
    if (res > 0) return true;
    if (!io_error_allowed(write)) {
      stop_on(std::string(write ? "write" : "read") + " at offset " + std::to_string(offset) + " came back short (" +
              std::to_string(done) + " of " + std::to_string(p_.bs[write]) + " bytes, then 0: end of file?)");
    }
    return false;
  }

  // A write issued but never completed whole (failed, short, dropped at the stop): its block
  // holds what it held, or half of each, so the verify pass leaves it out.
  void unlog(uint64_t offset) {
    if (written_) written_->clear((offset - p_.region_start) / p_.bs[1]);
  }

  // An I/O left unsent at the stop (-EAGAIN'd, not sent again).
  void dropped(bool write, uint64_t offset) {
    if (write) unlog(offset);
  }

  // -EAGAIN: the I/O is sent again; counted so a report shows the device pushed back.
  void again(uint64_t offset) { out_.errors.eagain.add(offset); }

  // An error continue_on_error does not allow: the job issues nothing more.
  bool fatal() const { return fatal_; }


  // The measured window. It opens at a completion (the first reaped at or after the ramp's
  // end; for a size-bounded run without ramp, at the start, so every I/O counts) and counts
  // only I/Os issued after it opened; it closes when the last of those has completed: the
  // I/Os in flight at the deadline are waited for and counted. So the window starts and ends
  // at the device's own pace and holds whole rounds of it. Why: a throttle (blk-throttle,
  // a cloud volume's limiter) grants its budget a slice at a time (100 ms for blk-throttle on
  // a rotational queue), the first one whole at the first I/O, and slices are counted from a
  // jiffy before it: a window of the deadline's length starting at the first submission took
  // in one slice's budget too many (+2.5% in 4 s at 5,000 IOPS, issue 14). What it costs: the
  // I/Os of the first batch (the ones issued before the window opened) are not measured, and
  // runtime_s is the window (from the first completion to the last) instead of the runtime
  // asked for: slightly longer when the device holds the last I/Os back.
  void open_window(uint64_t t) { measure_start_ = t; }
  bool window_open() const { return measure_start_ != UINT64_MAX; }
  uint64_t measure_start() const { return measure_start_; }
  uint64_t window_end() const { return window_end_; }
  void set_deadline(uint64_t t) { fold_from_ = t - 1; }

  // Drops the per-second slots the run never reached.
  void finish() {
    size_t used = 0;
    if (window_open() && window_end_ >= measure_start_) {
      used = static_cast<size_t>((std::min(window_end_, fold_from_) - measure_start_) / kNsPerSec) + 1;
    }
    for (auto* d : {&out_.read, &out_.write}) {
      if (d->ios_per_second.size() > used) d->ios_per_second.resize(used);
    }
    record_write_order();
  }

 private:
  bool io_error_allowed(bool write) const {
    ContinueOnError c = p_.continue_on_error;
    return c == ContinueOnError::All || c == ContinueOnError::Io ||
           c == (write ? ContinueOnError::Write : ContinueOnError::Read);
  }

  void stop_on(const std::string& what) {
    if (fatal_) return;
    fatal_ = true;
    out_.errors.stopped = true;
    out_.errors.stop_reason =
        what + ": the job stopped (continue_on_error=" + std::string(to_string(p_.continue_on_error)) + ")";
  }

  // Short I/O: counted per direction, never fatal (a read past the end of a file is one).
  void short_io(bool write, uint64_t offset) {
    out_.errors.short_ios++;
    (write ? out_.errors.short_write : out_.errors.short_read).add(offset);
  }

  // Only with --verify: a write marks its block for the verify pass, a read workload checks
  // the block it read.
  void verified(bool write, uint64_t offset, const uint8_t* buf) {
    if (write) {
      if (written_) written_->set((offset - p_.region_start) / p_.bs[1]);
      return;
    }
    if (!p_.verify_reads) return;
    out_.verify.blocks_checked++;
    if (const char* why = check_block(buf, p_.bs[0], offset, 0)) {
      out_.verify.add_mismatch(out_.job, offset, why);
      ContinueOnError c = p_.continue_on_error;
      if (c != ContinueOnError::Verify && c != ContinueOnError::All) {
        stop_on("verify mismatch at offset " + std::to_string(offset) + ": " + why);
      }
    }
  }

  // For the verify pass: how this job's writes walked the region (see WriteOrder), when it is
  // the file's only writer and its writes follow an order (not norandommap).
  void record_write_order() {
    if (!written_ || written_->writers != 1 || (random_ && !p_.randommap)) return;
    WriteOrder& o = written_->order;
    o.kind = random_ ? WriteOrder::Kind::Permutation : WriteOrder::Kind::Sequential;
    o.nblocks = p_.nblocks_dir[1];
    o.writes = write_seq_;
    o.in_flight = p_.slots;
    if (random_) o.perm = perm_[1];
  }

  static uint64_t seed(const JobSpec& s, unsigned job) {
    uint64_t base = s.randrepeat
                        ? s.randseed
                        : static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
    uint64_t x = base + job;
    return splitmix64(x);
  }

  // Only runs without a deadline (or with a drain longer than a second) get here: doubling
  // keeps it to a handful of allocations in a whole run.
  void grow_seconds(size_t sec) {
    size_t n = std::max(sec + 1, out_.read.ios_per_second.size() * 2);
    for (auto* d : {&out_.read, &out_.write}) d->ios_per_second.resize(n, 0);
  }

  const Plan& p_;
  const JobSpec& spec_;
  Rng rng_;
  JobResult& out_;
  bool mixed_ = false, random_ = false, writes_only_ = false;
  // Copies of the plan's per-I/O fields: read through p_ they cost a load of p_ each time,
  // since a store to a buffer may alias the plan for all the compiler knows.
  bool randommap_ = false, verify_ = false;
  uint32_t bs_[2] = {0, 0};
  uint64_t region_start_ = 0;
  uint64_t limit_ = UINT64_MAX;  // bytes_limit, MAX for none: one compare in exhausted()
  bool fatal_ = false;
  BlockPermutation perm_[2];
  WrittenBlocks* written_ = nullptr;
  uint64_t issued_ = 0;
  uint64_t write_seq_ = 0;
  uint64_t next_block_[2] = {0, 0};
  uint64_t measure_start_ = UINT64_MAX;  // the window's opening reap; MAX = not open yet
  uint64_t window_end_ = 0;               // the last measured completion's reap
  uint64_t fold_from_ = UINT64_MAX;       // deadline - 1: later reaps count in its second
};

// One I/O slot: a buffer and what is in flight in it.
struct Slot {
  uint8_t* buf = nullptr;
  uint64_t offset = 0;
  uint64_t t_prep = 0;
  uint64_t t_submit = 0;
  unsigned buf_index = 0;  // registered buffer (chunk) that holds `buf`
  uint32_t done = 0;       // bytes of this I/O already transferred (short I/O: the rest goes again)
  bool write = false;
  bool held_read_data = false;  // the last I/O in this buffer was a read
};

// State a job's loop carries; shared by both engines.
struct JobRun {
  const Plan& plan;
  Workload work;
  const std::atomic<bool>* stop;
  bool stopping = false;  // no new I/O: runtime over, size done, or stop flag
  bool measuring = false;
  uint64_t open_at = 0;   // ramp's end: the window opens at the first reap from here
  uint64_t deadline = 0;  // 0 = none
  CpuUsage cpu_start;

  JobRun(const Plan& p, unsigned job, JobResult& out, const std::atomic<bool>* s)
      : plan(p), work(p, job, out), stop(s) {}

  void start(uint64_t t0) {
    open_at = t0 + plan.ramp_ns;
    if (plan.runtime_ns) {
      deadline = open_at + plan.runtime_ns;
      work.set_deadline(deadline);
    }
    // A size-bounded run without ramp measures all it does; any other opens at a completion.
    if (plan.ramp_ns == 0 && !plan.spec->time_based) work.open_window(t0);
    if (plan.ramp_ns == 0) {
      measuring = true;
      cpu_start = thread_cpu();
    }
  }

  // Once per loop iteration, after the batch was reaped at `t`.
  void check(uint64_t t, JobOutput& out) {
    if (!work.window_open() && t >= open_at) work.open_window(t);  // this batch is not measured
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
    } else if (deadline && t >= deadline) {
      stopping = true;
    }
  }

  void finish(JobOutput& out) {
    if (measuring) out.cpu = cpu_delta(cpu_start, thread_cpu());
    work.finish();
    uint64_t ms = work.measure_start(), me = work.window_end();
    out.result->runtime_s = work.window_open() && me > ms ? static_cast<double>(me - ms) / 1e9 : 0.0;
  }
};

// Buffers for `plan.slots` I/Os, each aligned for O_DIRECT and filled with random data once.
Result<Buffer> allocate_buffers(const Plan& plan, Workload& work) {
  size_t total = plan.slot_stride * plan.slots;
  void* mem = nullptr;
  if (int err = posix_memalign(&mem, kBufferAlign, total); err != 0) {
    return make_error(errno_message("posix_memalign", std::to_string(total) + " bytes of I/O buffers", err) +
                      ": lower iodepth or bs");
  }
  Buffer buf(static_cast<uint8_t*>(mem));
  work.fill_initial(buf.get(), total);  // also faults every page in before the clock starts
  return buf;
}

std::string cpu_list_text(const std::vector<int>& cpus) {
  std::string s;
  for (int c : cpus) s += (s.empty() ? "" : ",") + std::to_string(c);
  return s;
}

// Pins the calling thread to `cpus` (one CPU, or cpus_allowed shared by jobs); empty = unpinned.
Status pin_to(const std::vector<int>& cpus) {
  if (cpus.empty()) return Ok{};
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus) {
    if (cpu < 0 || cpu >= CPU_SETSIZE) {
      return make_error("cannot pin to CPU " + std::to_string(cpu) + ": CPU numbers go from 0 to " +
                        std::to_string(CPU_SETSIZE - 1));
    }
    CPU_SET(cpu, &set);
  }
  if (int err = pthread_setaffinity_np(pthread_self(), sizeof set, &set); err != 0) {
    std::string what = cpus.size() == 1 ? "CPU " + cpu_list_text(cpus) : "CPUs " + cpu_list_text(cpus);
    return make_error(errno_message("pthread_setaffinity_np", what, err) + ": is " + what +
                      " online and allowed for this process (taskset, cgroup cpuset)?");
  }
  return Ok{};
}

// Job threads get an explicit, small stack: the hot loop keeps its state on the heap, and
// glibc's default (RLIMIT_STACK, usually 8 MiB) reserves 32 GiB of address space for 4096
// jobs. 512 KiB leaves room for sanitizer builds. Set as the process default only while the
// jobs are spawned (std::thread takes no attributes), then put back.
constexpr size_t kJobStackBytes = 512 << 10;

class JobStackSize {
 public:
  JobStackSize() {
    if (pthread_getattr_default_np(&old_) != 0) return;
    pthread_attr_t a;
    if (pthread_getattr_default_np(&a) != 0) return;
    if (pthread_attr_setstacksize(&a, kJobStackBytes) == 0 && pthread_setattr_default_np(&a) == 0) set_ = true;
    pthread_attr_destroy(&a);
  }
  ~JobStackSize() {
    if (set_) pthread_setattr_default_np(&old_);
    pthread_attr_destroy(&old_);
  }
  JobStackSize(const JobStackSize&) = delete;
  JobStackSize& operator=(const JobStackSize&) = delete;

 private:
  pthread_attr_t old_{};
  bool set_ = false;
};

// Starts a new I/O in `sl`: direction, offset and, for a write, its data. Always inlined: as
// a call it cost ~17 instructions an I/O in register saves and restores.
[[gnu::always_inline]] inline void start_io(Workload& work, Slot& sl) {
  sl.done = 0;
  work.next(&sl.write, &sl.offset);
  if (sl.write) {
    work.prepare_write(sl.buf, sl.offset, sl.held_read_data);
    sl.held_read_data = false;
  } else {
    sl.held_read_data = true;
  }
}

// fio's short I/O handling: a completion of `res` bytes, fewer than the I/O's `bs`, sends the
// rest again (buffer and offset advanced by what was done) until the I/O is whole. True when
// the I/O in `sl` is over: whole, or ended short by a zero-byte result; sl.done is its bytes.
bool io_over(Workload& work, Slot& sl, uint32_t bs, uint32_t res) {
  sl.done += res;
  if (sl.done >= bs) [[likely]] return true;
  return !work.short_result(sl.write, sl.offset, sl.done - res, res);
}

// ---- io_uring engine -------------------------------------------------------------------

class UringJob {
 public:
  UringJob(const Plan& plan, JobRun& run, int fd) : plan_(plan), run_(run), fd_(fd), file_(fd) {}

  // Ring, registered file and buffers. A refused registration falls back to plain ops.
  Status setup(uint8_t* buffers, std::string* fallback) {
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

  const std::string& feature_note() const { return feature_note_; }

  static std::string ring_flag_names(unsigned flags) {
    std::string n;
    if (flags & IORING_SETUP_SQPOLL) n += "IORING_SETUP_SQPOLL (sqpoll)";
    if (flags & IORING_SETUP_IOPOLL) n += std::string(n.empty() ? "" : " and ") + "IORING_SETUP_IOPOLL (hipri)";
    return n;
  }

  Status register_all(uint8_t* buffers, std::string* fallback) {
    if (int ret = ring_.register_file(fd_); ret == 0) {
      file_ = 0;
      fixed_file_ = true;
    } else {
      *fallback = errno_message("io_uring_register_files", plan_.path, -ret);
    }
    // Whole slots per registered iovec, each iovec at most 1 GiB.
    size_t per_chunk = std::max<size_t>(1, kMaxRegisteredChunk / plan_.slot_stride);
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
      slots_[i].buf_index = static_cast<unsigned>(i / per_chunk);
      free_[i] = plan_.slots - 1 - i;  // slot 0 is used first
    }
    nfree_ = plan_.slots;
    return Ok{};
  }

  // The hot loop: fill every free slot, submit them, wait for at least one completion, reap
  // the whole batch. Nothing here allocates or logs.
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
  Status loop(JobOutput& out) {
    io_uring* ring = ring_.get();
    Workload& work = run_.work;
    uint64_t t_reaped = now_ns();
    async_every_ = plan_.async_every;
    if (plan_.probe_async) {
      probe_.ran = true;
      probe_phase_ = 0;
      probe_end_ = t_reaped + kProbeWarmNs;
      async_every_ = 1;
    }
    for (;;) {
      unsigned nbatch = 0, nprepped = 0;  // new I/Os; all SQEs (resends and rests too)
      // The rest of a short I/O goes out even when stopping: the I/O is in flight until whole.
      if (nrest_ > 0 || (!run_.stopping && (nretry_ > 0 || (nfree_ > 0 && !work.exhausted())))) {
        uint64_t t_prep = now_ns();
        auto issue = [&](uint32_t s) {
          Slot& sl = slots_[s];
          io_uring_sqe* sqe = next_sqe(ring);
          prep(sqe, sl, plan_.bs[sl.write]);
          ++nprepped;
          io_uring_sqe_set_data64(sqe, s);
          if (sl.done == 0) {  // the rest of a short I/O keeps its first submission's times
            sl.t_prep = t_prep;
            batch_[nbatch++] = s;
          }
        };
        // Rests, then -EAGAIN resends (the same I/O again, buffer untouched), then new I/Os,
        // as far as the SQ has room (iodepth above its size: the rest go next round). One
        // loop each instead of one condition over all three per SQE: ~10 instructions an I/O.
        unsigned room = io_uring_sq_space_left(ring);
        for (; room > 0 && nrest_ > 0; --room) issue(rest_[--nrest_]);
        if (!run_.stopping) {
          for (; room > 0 && nretry_ > 0; --room) issue(retry_[--nretry_]);
          for (; room > 0 && nfree_ > 0 && !work.exhausted(); --room) {
            uint32_t s = free_[--nfree_];
            start_io(work, slots_[s]);
            issue(s);
          }
        }
      }
      if (run_.stopping) {
        for (uint32_t i = 0; i < nretry_; ++i) work.dropped(slots_[retry_[i]].write, slots_[retry_[i]].offset);
        nfree_ += nretry_;  // stopping: -EAGAIN'd I/Os are dropped, not resent
        nretry_ = 0;
      }
      if (nfree_ + nretry_ == plan_.slots) break;  // nothing in flight, nothing to issue

      // Submit (posting what already completed), stamp, then wait only if nothing has: so
      // clat starts when the kernel has the I/O, as fio's does (issue 14). The kernel's
      // submission path (for loop: queueing its work, or the whole read when it completes
      // inline) is then slat, not clat; in one submit-and-wait call it was in clat, and the
      // wait's own system call too (3.2 us p50 against fio's 0.4 us on loop). It costs one
      // system call more per batch when the batch has to wait (~0.5 us), a fraction of the
      // I/O's own kernel work at any depth.
      int ret = 0;
      if (nprepped > 0) {
        ret = io_uring_submit_and_get_events(ring);
        uint64_t t_submit = now_ns();
        for (unsigned i = 0; i < nbatch; ++i) slots_[batch_[i]].t_submit = t_submit;
      }
      io_uring_cqe* first = nullptr;
      if ((ret >= 0 || ret == -EINTR || ret == -EAGAIN || ret == -EBUSY) && io_uring_peek_cqe(ring, &first) != 0) {
        ret = io_uring_wait_cqe(ring, &first);
      }
      t_reaped = now_ns();
      if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY) {
        busy_ = true;
        return make_error(errno_message("io_uring_enter", plan_.path, -ret));
      }

      ptrdiff_t second = work.second_of(t_reaped);
      // Measured completions reaped together that were also submitted together (same slot
      // times) have the same slat, clat and lat: each run of them is recorded once with its
      // count, the same histograms as one record each. At QD32 a reap holds a few submit
      // batches, so this saves most of three histogram records an I/O.
      const Slot* alike = nullptr;
      uint64_t nalike = 0;
      auto flush = [&] {
        if (nalike) work.timed(alike->write, alike->t_submit - alike->t_prep, t_reaped - alike->t_submit, second, nalike);
        nalike = 0;
      };
      unsigned head;
      unsigned seen = 0;
      io_uring_cqe* cqe;
      io_uring_for_each_cqe(ring, head, cqe) {
        ++seen;
        auto s = static_cast<uint32_t>(io_uring_cqe_get_data64(cqe));
        Slot& sl = slots_[s];
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
        } else if (!io_over(work, sl, plan_.bs[sl.write], static_cast<uint32_t>(res))) {
          rest_[nrest_++] = s;
          continue;
        } else if (work.over(sl.write, sl.done, sl.offset, sl.buf, sl.t_prep, t_reaped, second)) {
          if (nalike && (sl.t_prep != alike->t_prep || sl.t_submit != alike->t_submit || sl.write != alike->write)) {
            flush();
          }
          if (nalike++ == 0) alike = &sl;
        }
        free_[nfree_++] = s;
      }
      flush();
      io_uring_cq_advance(ring, seen);
      reaped_ += seen;
      if (probe_phase_ >= 0 && t_reaped >= probe_end_) probe_step(t_reaped);
      run_.check(t_reaped, out);
    }
    run_.finish(out);
    out.probe = probe_;
    return Ok{};
  }

  // After a failed loop: the kernel may still write into the buffers.
  bool buffers_busy() const { return busy_; }

 private:
  // force_async=auto: warm-up and kProbeNs with IOSQE_ASYNC, kProbeNs without, then keep
  // the faster. Completions count in the window they are reaped in.
  void probe_step(uint64_t t) {
    uint64_t n = reaped_ - probe_mark_;
    probe_mark_ = reaped_;
    probe_end_ = t + kProbeNs;
    switch (probe_phase_++) {
      case 0:  // warmed up: measure marked
        return;
      case 1:
        probe_.ios_async = n;
        async_every_ = 0;
        return;
      default:
        probe_.ios_plain = n;
        probe_.kept = static_cast<double>(probe_.ios_async) > kProbeMargin * static_cast<double>(probe_.ios_plain);
        async_every_ = probe_.kept ? 1 : 0;
        probe_phase_ = -1;
    }
  }

  // io_uring_get_sqe once the room is known: the ring is ours alone and has no SQE128, so
  // the checks it makes per SQE (flags, the kernel's head) were made once per batch.
  static io_uring_sqe* next_sqe(io_uring* ring) {
    io_uring_sq& sq = ring->sq;
    return &sq.sqes[sq.sqe_tail++ & sq.ring_mask];
  }

  // The I/O in `sl`, or after a short result its rest (sl.done bytes in).
  void prep(io_uring_sqe* sqe, const Slot& sl, uint32_t bs) {
    uint8_t* buf = sl.buf + sl.done;
    const uint32_t len = bs - sl.done;
    const uint64_t offset = sl.offset + sl.done;
    if (fixed_buffers_) {
      if (sl.write) {
        io_uring_prep_write_fixed(sqe, file_, buf, len, offset, static_cast<int>(sl.buf_index));
      } else {
        io_uring_prep_read_fixed(sqe, file_, buf, len, offset, static_cast<int>(sl.buf_index));
      }
    } else if (sl.write) {
      io_uring_prep_write(sqe, file_, buf, len, offset);
    } else {
      io_uring_prep_read(sqe, file_, buf, len, offset);
    }
    if (fixed_file_) sqe->flags |= IOSQE_FIXED_FILE;
    if (async_every_ && ++async_count_ >= async_every_) {
      async_count_ = 0;
      sqe->flags |= IOSQE_ASYNC;  // straight to an io-wq worker (fio's force_async)
    }
  }

  const Plan& plan_;
  JobRun& run_;
  int fd_;
  int file_;  // index 0 when the file is registered, else the fd
  bool fixed_file_ = false;
  bool fixed_buffers_ = false;
  bool busy_ = false;
  std::string feature_note_;
  Ring ring_;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_, retry_, batch_;  // stacks of slot numbers; batch_: this round
  std::vector<uint32_t> rest_;                  // short I/Os whose rest is still to be sent
  uint32_t nfree_ = 0, nretry_ = 0, nrest_ = 0;
  uint32_t async_every_ = 0, async_count_ = 0;  // IOSQE_ASYNC on every async_every_-th SQE
  uint64_t reaped_ = 0;                         // CQEs seen, for the probe
  int probe_phase_ = -1;                        // -1: not probing
  uint64_t probe_end_ = 0, probe_mark_ = 0;
  AsyncProbe probe_;
};

// ---- sync engine -----------------------------------------------------------------------

// pread/pwrite, one I/O at a time: slat is 0 and clat is the system call.
Status sync_loop(const Plan& plan, JobRun& run, int fd, uint8_t* buf, JobOutput& out) {
  Slot sl;
  sl.buf = buf;
  uint64_t t = now_ns();
  uint64_t t0 = t;
  bool again = false;
  // The rest of a short I/O (sl.done > 0) is sent even when stopping: the I/O is not over.
  while (!run.stopping || (again && sl.done > 0)) {
    if (!again) {
      if (run.work.exhausted()) break;
      start_io(run.work, sl);
    }
    again = false;
    const uint32_t bs = plan.bs[sl.write];
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
      run.work.completed(sl.write, sl.done, sl.offset, sl.buf, t0, 0, t - t0, t, run.work.second_of(t));
    }
    run.check(t, out);
  }
  if (again) run.work.dropped(sl.write, sl.offset);  // -EAGAIN'd at the stop, not sent again
  run.finish(out);
  return Ok{};
}

// ---- one job ---------------------------------------------------------------------------

void job_body(const Plan& plan, unsigned job, const std::vector<int>& cpus, StartGate& gate,
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
  const std::string& path = plan.job_paths.empty() ? plan.path : plan.job_paths[job];
  auto fd = Fd::open(path, plan.open_flags);
  if (!fd) {
    std::string msg = fd.error();
    if (plan.spec->direct && msg.find(std::strerror(EINVAL)) != std::string::npos) {
      msg += ": the filesystem may not support O_DIRECT; use direct=0";
    }
    return fail(msg);
  }
  JobRun run(plan, job, *out.result, stop);
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
  run.start(t0);
  Status st = use_uring ? uring.loop(out) : sync_loop(plan, run, fd->get(), buffers->get(), out);
  out.feature_note = uring.feature_note();
  if (!st) {
    out.error = st.error();
    if (uring.buffers_busy()) (void)buffers->release();  // leaked on purpose: I/O may still land
  }
}

void job_main(const Plan& plan, unsigned job, const std::vector<int>& cpus, StartGate& gate,
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

Plan make_plan(const JobSpec& spec, const Target& target, const Region& reg) {
  Plan p;
  p.spec = &spec;
  p.path = target.path;
  p.open_flags = (does_writes(spec.rw) ? O_RDWR : O_RDONLY) | (spec.direct ? O_DIRECT : 0);
  p.region_start = reg.offset;
  p.device_id = target.device_id;
  uint64_t region = reg.size;
  p.bs[0] = spec.bs;
  p.bs[1] = spec.write_bs();
  for (int d = 0; d < 2; ++d) p.nblocks_dir[d] = region / p.bs[d];
  p.nblocks = p.nblocks_dir[does_writes(spec.rw) && !does_reads(spec.rw) ? 1 : 0];
  p.job_paths = target.job_paths;
  p.randommap = is_random(spec.rw) && !spec.norandommap;
  p.verify = spec.verify != VerifyKind::None;
  p.verify_reads = p.verify && !does_writes(spec.rw);
  p.track_writes = p.verify && does_writes(spec.rw) && spec.do_verify;
  p.continue_on_error = spec.continue_on_error;
  if (spec.engine == EngineKind::IoUring) {
    p.ring_flags = (spec.sqpoll ? IORING_SETUP_SQPOLL : 0u) | (spec.hipri ? IORING_SETUP_IOPOLL : 0u);
    if (spec.force_async > 0) p.async_every = static_cast<uint32_t>(spec.force_async);
    p.probe_async = spec.force_async == JobSpec::kForceAsyncAuto && target.bio_based && spec.time_based &&
                    p.ring_flags == 0;
  }
  // size: one pass over the region per job; io_size: that many bytes, looping as needed.
  uint64_t pass = does_reads(spec.rw) && does_writes(spec.rw) ? region
                  : does_writes(spec.rw)                      ? p.nblocks_dir[1] * p.bs[1]
                                                              : p.nblocks_dir[0] * p.bs[0];
  p.bytes_limit = spec.time_based ? 0 : spec.io_size ? spec.io_size : pass;
  p.ramp_ns = static_cast<uint64_t>(spec.ramp_time_s * 1e9);
  if (p.probe_async) p.ramp_ns = std::max(p.ramp_ns, kProbeWarmNs + 2 * kProbeNs);  // the probe is not measured
  if (spec.time_based || spec.runtime_s > 0) p.runtime_ns = static_cast<uint64_t>(spec.runtime_s * 1e9);
  p.seconds_capacity = p.runtime_ns ? static_cast<size_t>(std::ceil(spec.runtime_s)) + 2 : 64;
  p.slots = spec.engine == EngineKind::Sync ? 1 : spec.iodepth;
  p.slot_stride = round_up(spec.max_bs(), kBufferAlign);
  return p;
}

// What force_async=auto found, from job 0's probe (every job probes its own ring at the
// same time and keeps its own choice); "" when nothing was probed.
std::string probe_note(const Plan& plan, const std::vector<JobOutput>& outs) {
  if (!plan.probe_async || outs.empty() || !outs[0].probe.ran) return "";
  const AsyncProbe& p = outs[0].probe;
  size_t kept = 0;
  for (const auto& o : outs) kept += o.probe.kept ? 1 : 0;
  auto iops = [](uint64_t n) { return std::to_string(static_cast<uint64_t>(static_cast<double>(n) * 1e9 / kProbeNs)); };
  std::string n = "force_async=auto: " + plan.path +
                  " is bio-based, so io_uring runs its I/O in io-wq workers; probed before the measured part: " +
                  iops(p.ios_async) + " IOPS with IOSQE_ASYNC, " + iops(p.ios_plain) + " without: ";
  if (kept == outs.size()) return n + "kept IOSQE_ASYNC (force_async=1)";
  if (kept == 0) return n + "ran without it (force_async=0)";
  return n + "IOSQE_ASYNC kept by " + std::to_string(kept) + " of " + std::to_string(outs.size()) + " jobs";
}

// fio's do_verify: after every job has finished writing, read back each block written and
// check its header and checksum. Jobs that share a file share one pass over the union of
// what they wrote.
void verify_pass(const Plan& plan, std::vector<std::unique_ptr<WrittenBlocks>>& maps,
                 const std::atomic<bool>* stop, Results& r) {
  for (auto& w : maps) {
    auto st = verify_written(*w, plan.spec->direct, plan.run_id, r.verify_pass, stop);
    if (!st) {
      r.verify_pass.add_mismatch(w->first_job, plan.region_start, "the verify pass could not read the target");
      r.notes.push_back(st.error());
    }
  }
  r.verified = true;
}

// One written-blocks map per file the jobs write (one for a device, one per job for
// --directory), set up before the jobs start.
std::vector<std::unique_ptr<WrittenBlocks>> make_written_maps(Plan& plan, unsigned jobs) {
  std::vector<std::unique_ptr<WrittenBlocks>> maps;
  if (!plan.track_writes) return maps;
  plan.written.assign(jobs, nullptr);
  for (unsigned j = 0; j < jobs; ++j) {
    const std::string& path = plan.job_paths.empty() ? plan.path : plan.job_paths[j];
    auto it = std::find_if(maps.begin(), maps.end(), [&](const auto& w) { return w->path == path; });
    if (it == maps.end()) {
      maps.push_back(std::make_unique<WrittenBlocks>(path, plan.region_start, plan.bs[1], j, plan.nblocks_dir[1]));
      it = maps.end() - 1;
    }
    plan.written[j] = it->get();
    (*it)->writers++;
  }
  return maps;
}

}  // namespace

Status validate(const JobSpec& spec, const Target& target) {
  std::vector<std::string> problems;
  auto num = [](uint64_t v) { return std::to_string(v); };
  const uint64_t lbs = target.logical_block_size ? target.logical_block_size : 1;
  const uint64_t bs = spec.max_bs();
  const std::string& dev = target.path;
  const Region reg = resolve_region(spec, target);

  for (uint64_t b : {uint64_t{spec.bs}, uint64_t{spec.write_bs()}}) {
    const char* which = b == spec.bs ? "bs" : "bs (writes)";
    if (b < 512) {
      problems.push_back(std::string(which) + " " + num(b) +
                         " is below 512 bytes, the smallest block a disk takes: use bs=4096");
    } else if (spec.direct && b % lbs != 0) {
      problems.push_back(std::string(which) + " " + num(b) + " is not a multiple of the device's logical block size " +
                         num(lbs) + ": use bs=" + num(round_up(b, lbs)));
    }
    if (spec.bs_write == 0 || spec.bs_write == spec.bs) break;
  }
  if (spec.direct && reg.offset % lbs != 0) {
    problems.push_back("offset " + num(reg.offset) + " is not aligned to the device's logical block size " +
                       num(lbs) + " (direct I/O needs it): use offset=" + num(reg.offset / lbs * lbs));
  }
  if (reg.offset >= target.size_bytes) {
    problems.push_back("offset " + num(reg.offset) + " is at or past the end of " + dev + " (" +
                       num(target.size_bytes) + " bytes): use an offset below " + num(target.size_bytes));
  } else {
    uint64_t room = target.size_bytes - reg.offset;
    if (reg.size > room) {
      problems.push_back("the region offset " + num(reg.offset) + " + size " + num(reg.size) +
                         " runs past the end of " + dev + " (" + num(target.size_bytes) +
                         " bytes): use size=" + num(room) + " or less");
    } else if (bs > 0 && reg.size < bs) {
      problems.push_back("the region (" + num(reg.size) + " bytes from offset " + num(reg.offset) +
                         ") holds no whole block of bs " + num(bs) + ": use a larger size or a smaller bs");
    }
  }
  if (spec.offset_percent < 0 || spec.offset_percent >= 100 || spec.size_percent < 0 || spec.size_percent > 100) {
    problems.push_back("offset and size percentages must be from 0 to 100 (offset below 100)");
  }
  if ((spec.sqpoll || spec.hipri) && spec.engine != EngineKind::IoUring) {
    problems.push_back("sqpoll and hipri are io_uring options: use engine=io_uring");
  }
  if (spec.force_async > 0 && spec.engine != EngineKind::IoUring) {
    problems.push_back("force_async is an io_uring option: use engine=io_uring or force_async=0");
  }
  if (spec.hipri && !spec.direct) {
    problems.push_back("hipri (polled completions) works only with direct I/O: use direct=1");
  }
  if (spec.hipri && target.io_poll == 0) {
    problems.push_back("hipri: " + (target.poll_why.empty() ? dev + " has no poll queues" : target.poll_why) +
                       "; run without hipri");
  }
  if (spec.iodepth < 1 || spec.iodepth > kMaxIodepth) {
    problems.push_back("iodepth " + num(spec.iodepth) + " is out of range: use 1 to " + num(kMaxIodepth));
  }
  if (spec.numjobs < 1 || spec.numjobs > kMaxNumjobs) {
    problems.push_back("numjobs " + num(spec.numjobs) + " is out of range: use 1 to " + num(kMaxNumjobs));
  }
  auto seconds = [](double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", s);
    return std::string(buf);
  };
  if (!(spec.runtime_s >= 0) || !std::isfinite(spec.runtime_s)) {
    problems.push_back("runtime " + std::to_string(spec.runtime_s) + " s is not a duration: use runtime=30");
  } else if (spec.runtime_s > kMaxSeconds) {
    problems.push_back("runtime " + seconds(spec.runtime_s) + " s is above the limit of " +
                       seconds(kMaxSeconds) +
                       " s (24 h): use a shorter runtime, and several runs for a longer soak");
  } else if (spec.time_based && spec.runtime_s <= 0) {
    problems.push_back(
        "time_based needs a runtime above 0 s: use runtime=30, or time_based=0 to stop after size");
  }
  if (!(spec.ramp_time_s >= 0) || !std::isfinite(spec.ramp_time_s)) {
    problems.push_back("ramp_time " + std::to_string(spec.ramp_time_s) +
                       " s is not a duration: use ramp_time=0");
  } else if (spec.ramp_time_s > kMaxSeconds) {
    problems.push_back("ramp_time " + seconds(spec.ramp_time_s) + " s is above the limit of " +
                       seconds(kMaxSeconds) + " s (24 h): use a shorter ramp_time");
  }
  if (spec.rwmixread > 100) {
    problems.push_back("rwmixread " + num(spec.rwmixread) + " is above 100 percent: use 0 to 100");
  }
  if (problems.empty()) return Ok{};
  return make_error(join_problems(dev, problems));
}

Result<Results> run_jobs(const JobSpec& spec, const Target& target, const EngineOptions& opts) {
  if (auto st = validate(spec, target); !st) return make_error(st.error());
  Plan plan = make_plan(spec, target, opts.region ? *opts.region : resolve_region(spec, target));
  plan.run_id = opts.run_id;
  if (plan.run_id == 0) {
    std::random_device rd;
    plan.run_id = (static_cast<uint64_t>(rd()) << 32) | rd();
  }
  const unsigned n = spec.numjobs;
  if (!target.job_paths.empty() && target.job_paths.size() < n) {
    return make_error("internal: " + std::to_string(target.job_paths.size()) + " job files for " +
                      std::to_string(n) + " jobs");
  }
  // cpus_allowed (the profile's word) wins over the tuning plan's pins: the user chose it.
  std::vector<std::vector<int>> cpu_sets(n);
  for (unsigned j = 0; j < n; ++j) {
    const auto& allowed = spec.cpus_allowed;
    if (!allowed.empty()) {
      cpu_sets[j] = spec.cpus_allowed_split ? std::vector<int>{allowed[j % allowed.size()]} : allowed;
    } else if (j < opts.cpus.size() && opts.cpus[j] >= 0) {
      cpu_sets[j] = {opts.cpus[j]};
    }
  }
  // Each job writes its statistics straight into its own JobResult: no copy afterwards, which
  // matters with thousands of jobs of ~110 KB of histograms each.
  Results r;
  r.jobs.resize(n);
  std::vector<JobOutput> outs(n);
  for (unsigned j = 0; j < n; ++j) outs[j].result = &r.jobs[j];
  std::vector<std::unique_ptr<WrittenBlocks>> written_maps;
  try {
    written_maps = make_written_maps(plan, n);
  } catch (const std::bad_alloc&) {
    return make_error("verify: no memory for the map of written blocks (" + std::to_string(plan.nblocks_dir[1] / 8) +
                      " bytes): lower size or set do_verify=0");
  }
  StartGate gate(n);
  std::vector<std::thread> threads;
  threads.reserve(n);
  std::string spawn_error;
  try {
    JobStackSize stack_size;
    for (unsigned j = 0; j < n; ++j) {
      threads.emplace_back(job_main, std::cref(plan), j, std::cref(cpu_sets[j]), std::ref(gate), opts.stop,
                           std::ref(outs[j]));
    }
  } catch (const std::system_error& e) {
    spawn_error =
        "cannot start job thread " + std::to_string(threads.size()) + ": " + e.what() + ": lower numjobs";
  }
  // After diskprobe's own reads (see EngineOptions::settle_ns); the jobs are ready, so
  // nothing but the pause stands between it and the first I/O.
  if (opts.settle_ns) std::this_thread::sleep_for(std::chrono::nanoseconds(opts.settle_ns));
  gate.release(static_cast<unsigned>(threads.size()));
  auto started_at = std::chrono::system_clock::now();
  for (auto& t : threads) t.join();
  if (!spawn_error.empty()) return make_error(spawn_error);

  std::string error;
  unsigned failed = 0;
  for (unsigned j = 0; j < n; ++j) {
    if (outs[j].error.empty()) continue;
    if (failed++ == 0) error = n > 1 ? "job " + std::to_string(j) + ": " + outs[j].error : outs[j].error;
  }
  if (failed > 1) error += " (and " + std::to_string(failed - 1) + " more jobs failed)";
  if (failed) return make_error(error);

  r.spec = spec;
  r.device = target.path;
  r.started_at = iso8601_utc(started_at);
  std::string fallback;
  for (auto& o : outs) {
    r.cpu.user_s += o.cpu.user_s;
    r.cpu.sys_s += o.cpu.sys_s;
    r.cpu.voluntary_ctx += o.cpu.voluntary_ctx;
    r.cpu.involuntary_ctx += o.cpu.involuntary_ctx;
    r.runtime_s = std::max(r.runtime_s, o.result->runtime_s);
    r.interrupted = r.interrupted || o.stopped;
    if (fallback.empty()) fallback = o.fallback;
  }
  if (!fallback.empty()) {
    // Logged once for the run, not once per job.
    spdlog::warn("io_uring: {}: using plain reads and writes", fallback);
    r.notes.push_back("io_uring registration refused (" + fallback + "): plain reads and writes were used");
  }
  if (std::string note = probe_note(plan, outs); !note.empty()) {
    spdlog::info("{}", note);
    r.notes.push_back(note);
  }
  for (auto& o : outs) {
    if (o.feature_note.empty()) continue;
    spdlog::warn("{}", o.feature_note);
    r.notes.push_back(o.feature_note);
    break;
  }
  r.verified = plan.verify_reads;
  if (plan.track_writes && !r.interrupted) {
    if (opts.before_verify) opts.before_verify();
    verify_pass(plan, written_maps, opts.stop, r);
  }
  r.aggregate();
  return r;
}

}  // namespace diskprobe
