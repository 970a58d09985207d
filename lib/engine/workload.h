// The workload one job runs: which direction and offset comes next, what a write carries,
// and where each completion is counted. In a header: everything here is on the per-I/O path
// and is inlined into the engines' loops.
#pragma once

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>

#include "clock.h"
#include "diskprobe/device/block_header.h"
#include "block_map.h"
#include "diskprobe/engine/random_map.h"
#include "diskprobe/stats/measured_window.h"
#include "diskprobe/stats/results.h"
#include "job_plan.h"
#include "rng.h"
#include "verify.h"

namespace diskprobe::engine {

class Workload {
 public:
  Workload(const JobPlan& p, unsigned job, JobResult& out)
      : p_(p), spec_(*p.spec), rng_(seed(*p.spec, p.first_job + job)), out_(out), window_(p.runtime_ns) {
    mixed_ = spec_.rw == RwMode::RandRW || spec_.rw == RwMode::ReadWrite;
    random_ = is_random(spec_.rw);
    writes_only_ = !does_reads(spec_.rw);
    for (auto* d : {&out_.read, &out_.write}) d->ios_per_second.assign(p.seconds_capacity, 0);
    out_.read.bs = p.bs[0];
    out_.write.bs = p.bs[1];
    if (p.randommap) {
      for (int d = 0; d < 2; ++d) perm_[d].reset(p.shaped ? p.shape.lastb[d] : p.nblocks_dir[d], rng_.next());
    }
    if (p.track_writes) written_ = p.written[job];
    ahead_draw_ = random_ && p.randommap && !written_ && !p.shaped;
    fill_bytes_ = p.shaped ? p.shape.max_bs[1] : p.bs[1];
    seq_left_ = p.shape.seq_nr;
    if (p.shaped && p.shape.map) map_.reset(p.shape.lastb[0]);
    limit_ = p.bytes_limit ? p.bytes_limit : UINT64_MAX;
    region_start_ = p.region_start;
    bs_[0] = p.bs[0];
    bs_[1] = p.bs[1];
    randommap_ = p.randommap;
    verify_ = p.verify;
    content_ = spec_.content.any();
    if (spec_.shape.distribution == Distribution::Zipf || spec_.shape.distribution == Distribution::Pareto ||
        spec_.shape.distribution == Distribution::Normal) {
      uint64_t x = rng_.next();
      dist_rng_ = Rng(splitmix64(x));
      dist_rand_off_ = dist_u32();  // fio: zs->rand_off = __rand() at init
    }
    if (content_) {
      uint64_t x = rng_.next();
      content_base_ = splitmix64(x);
      dedupe_rng_ = Rng(splitmix64(x));
      // dedupe_global: every job's contents from a base any job of the run can work out (base_of),
      // so a duplicate of another job's page is that page.
      uint64_t g = p.run_id ^ 0x636f6e74656e74ull;  // "content"
      global_base_ = splitmix64(g);
      job_index_ = p.first_job + job;
      working_set_pages_ = std::max<uint64_t>(1, p.nblocks_dir[1] * spec_.content.working_set_percentage / 100);
      if (spec_.content.dedupe_global) content_base_ = base_of(job_index_);
    }
  }

  // True once this job has issued its `size` bytes (never for time_based runs).
  bool exhausted() const { return issued_ >= limit_; }

  // The next I/O's direction and offset; call only when !exhausted(). Inlined into the loop.
  [[gnu::always_inline]] void next(bool* write, uint64_t* offset) {
    const bool w = next_direction();
    *write = w;
    *offset = next_offset(w);
  }

  // Up to n new I/Os, each handed to issue(write, i, offset) as it is drawn (i: 0, 1, ... within
  // this call), until the job is exhausted; returns how many. The same draws in the same order
  // as n next() calls. For the io_uring loop's fill. A random job of one direction (randread,
  // randwrite) takes its blocks straight from the walked-ahead run with its constants in
  // locals, its count cut to the size limit up front, and `write` a compile-time constant, so
  // the loop holds no code for the other direction: next() reloads the job's fields for every
  // I/O, because the stores issue() makes to slots and SQEs may alias them for all the compiler
  // knows (callgrind, 4k randread QD32 on zram).
  template <class Issue>
  [[gnu::always_inline]] unsigned draw(unsigned n, Issue&& issue) {
    if (!mixed_ && ahead_draw_) {
      return writes_only_ ? draw_one_way<true>(n, issue) : draw_one_way<false>(n, issue);
    }
    unsigned i = 0;
    for (; i < n && !exhausted(); ++i) {
      bool w;
      uint64_t offset;
      next(&w, &offset);
      issue(w, i, offset);
    }
    return i;
  }

  // next() in its two draws, for rate caps: the direction rwmixread draws, then (after the
  // caps may have turned it, as fio's rate_ddir does) the offset of the direction issued.
  [[gnu::always_inline]] bool next_direction() {
    return mixed_ ? rng_.below(100) >= spec_.rwmixread : writes_only_;
  }
  [[gnu::always_inline]] uint64_t next_offset(bool w) {
    issued_ += bs_[w];
    uint64_t block;
    if (ahead_draw_) {
      block = draw_ahead(w);
    } else if (random_) {
      block = randommap_ ? perm_[w].next() : rng_.below(p_.nblocks_dir[w]);
    } else {
      uint64_t& n = next_block_[w];
      block = n;
      if (++n == p_.nblocks_dir[w]) n = 0;  // time_based runs loop over the region
    }
    return region_start_ + block * bs_[w];
  }

  // The shaped path (plan.shaped; io_shape.h), after next_direction(): the offset and length of
  // an I/O of direction w, as fio's get_next_offset and get_next_buflen draw them. False when
  // the walk is over (a holed sequential walk past the region's end, or no size fits where it
  // stands): the job issues nothing more.
  bool next_shaped(bool w, uint64_t* offset, uint32_t* len) {
    const ShapePlan& sh = p_.shape;
    bool hit = true;  // rw=randread:N: a random offset on every Nth I/O only
    if (sh.seq_nr > 1) {
      hit = --seq_left_ == 0;
      if (hit) seq_left_ = sh.seq_nr;
    }
    uint64_t pos = 0;
    const bool mapped = random_ && hit && sh.map;
    if (mapped) {
      uint64_t b = map_.next_free(rng_.below(sh.lastb[w]));
      if (b == BlockMap::kNone) {
        if (!spec_.time_based) return over_walk();  // a pass did every block
        map_.clear();
        b = rng_.below(sh.lastb[w]);
      }
      pos = b * sh.ba[w];
    } else if (random_ && hit) {
      pos = random_unit(w) * sh.ba[w];
    } else {
      if (sh.zone_size) stride_zone(w);
      if (!sequential_pos(w, &pos)) return over_walk();
    }
    uint32_t l = shaped_len(w, pos);
    if (l == 0) return over_walk();
    if (mapped) {
      // fio's mark_random_map: the I/O ends where a done block begins.
      const uint64_t unit = sh.ba[w], blocks = map_.set_run(pos / unit, (l + unit - 1) / unit);
      if (blocks * unit < l) l = static_cast<uint32_t>(blocks * unit);
    }
    last_pos_[w] = pos + l;
    issued_ += l;
    zone_bytes_ += l;
    *offset = region_start_ + pos;
    *len = l;
    return true;
  }

  // A mixed job may issue direction w instead of the one drawn (fio: td_rw and rwmix[w] > 0).
  bool may_switch_to(bool w) const { return mixed_ && (w ? spec_.rwmixread < 100 : spec_.rwmixread > 0); }

  // Fresh random data when asked (refill_buffers) or when a read left the device's data in
  // the buffer; then the header: two stores.
  void prepare_write(uint8_t* buf, uint64_t offset, bool held_read_data) {
    if (content_) [[unlikely]] return fill_content(buf);
    if (spec_.refill_buffers || held_read_data) fill_initial(buf, fill_bytes_);
    BlockHeader h;
    h.device_id = p_.device_id;
    h.run_id = p_.run_id;
    h.offset = offset;
    h.seq = ++write_seq_;
    encode_block_header(buf, h);  // bs >= 512 > kBlockHeaderBytes: validate() guarantees it
    if (p_.verify) {
      if (spec_.verify_interval) {
        stamp_chunks(buf, h);
      } else {
        store_block_checksum(buf, p_.bs[1]);  // only the crc field changes
      }
    }
  }

  // Random data, or verify_pattern repeated.
  void fill_initial(uint8_t* buf, size_t len) {
    const auto& pat = spec_.verify_pattern;
    if (pat.empty()) return rng_.fill(buf, len);
    for (size_t i = 0; i < len; ++i) buf[i] = pat[i % pat.size()];
  }

  // The second of the window (see MeasuredWindow) that completions reaped at `t` belong to;
  // -1 before it opened. Called once per reaped batch.
  ptrdiff_t second_of(uint64_t t) {
    const ptrdiff_t sec = window_.second_of(t);
    if (sec >= static_cast<ptrdiff_t>(out_.read.ios_per_second.size()))
      grow_seconds(static_cast<size_t>(sec));
    return sec;
  }

  // One I/O is over with `bytes` transferred: bs, or fewer when a zero-byte result ended it
  // (short_result). slat and clat run from its first submission, at t_prep; it is measured
  // when that was inside the window (see open_window), reaped at t_reaped in `second`.
  // True when it was measured.
  bool completed(bool write, uint32_t bytes, uint64_t offset, const uint8_t* buf, uint64_t t_prep, uint64_t slat,
                 uint64_t clat, uint64_t t_reaped, ptrdiff_t second) {
    if (!over(write, bytes, offset, buf, t_prep, t_reaped, second)) return false;
    timed(write, slat, clat, second, 1);
    return true;
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
    if (second < 0 || !window_.counts(t_prep)) return false;  // issued before the window: not measured
    window_.completed_at(t_reaped);
    (write ? out_.write : out_.read).bytes += bytes;
    return true;
  }
  // fio's cmdprio: the ioprio of an I/O of direction w and `len` bytes: a share's, drawn as fio's
  // (0..99 against the shares for its size, in order), else the job's.
  uint16_t pick_prio(bool w, uint32_t len) {
    const IoPriority& pr = spec_.priority;
    const auto& shares = pr.cmd[w];
    if (!shares.empty()) {
      const uint64_t v = prio_rng_.below(100);
      uint64_t sum = 0;
      for (const PrioShare& s : shares) {
        if (s.bs && s.bs != len) continue;
        sum += s.percent;
        if (v < sum) return s.ioprio;
      }
    }
    return pr.job;
  }

  // A measured I/O's sample for fio's logs (plan.logged), after over() said it is measured.
  void sample(bool write, uint32_t bytes, uint64_t offset, uint64_t slat, uint64_t clat, uint64_t t_reaped, uint16_t prio) {
    out_.samples.push_back({t_reaped - window_.start(), slat, clat, offset, bytes, prio, write});
  }
  [[gnu::always_inline]] void timed(bool write, uint64_t slat, uint64_t clat, ptrdiff_t second, uint64_t n) {
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

  // fio's latency_target at percentile 100: an I/O over the target at depth 1 ends the job with
  // ETIMEDOUT, as fio's lat_fatal.
  void over_latency(uint64_t lat_ns, uint64_t target_ns) {
    if (out_.errors.first_errno == 0) out_.errors.first_errno = ETIMEDOUT;
    stop_on("latency of " + std::to_string(lat_ns) + " ns exceeds latency_target (" + std::to_string(target_ns) +
            " ns) at depth 1");
  }

  // fio's verify_backlog: a write read back (`got` of its `len` bytes) checked as it was written.
  void backlog_check(const uint8_t* buf, uint32_t got, uint32_t len, uint64_t offset) {
    out_.verify.blocks_checked++;
    uint32_t at = 0;
    const char* why = got < len ? "read back short" : check_block(buf, len, offset, p_.run_id, nullptr, spec_.verify_interval, &at);
    if (!why) return;
    if (spec_.verify_dump) dump_block(buf, got, offset);
    offset += at;
    out_.verify.add_mismatch(out_.job, offset, why);
    ContinueOnError c = p_.continue_on_error;
    if (c != ContinueOnError::Verify && c != ContinueOnError::All) {
      stop_on("verify mismatch at offset " + std::to_string(offset) + ": " + why);
    }
  }

  // fio's ratemin / rate_iops_min not met (JobRun::check_min_rate): the job fails with EIO.
  void under_rate(const std::string& what) {
    if (out_.errors.first_errno == 0) out_.errors.first_errno = EIO;
    stop_on(what);
  }

  // fio's reset_all_stats (latency_target's final run): what was measured so far is dropped and
  // the window opens again at t; nothing is in flight.
  void restart_window(uint64_t t) {
    for (auto* d : {&out_.read, &out_.write}) {
      d->ios = 0;
      d->bytes = 0;
      d->slat = Histogram{};
      d->clat = Histogram{};
      d->lat = Histogram{};
      std::fill(d->ios_per_second.begin(), d->ios_per_second.end(), 0);
    }
    out_.samples.clear();
    window_ = MeasuredWindow(p_.runtime_ns);
    window_.open(t);
  }

  // An I/O left unsent at the stop (-EAGAIN'd, not sent again).
  void dropped(bool write, uint64_t offset) {
    if (write) unlog(offset);
  }

  // -EAGAIN: the I/O is sent again; counted so a report shows the device pushed back.
  void again(uint64_t offset) { out_.errors.eagain.add(offset); }

  // An error continue_on_error does not allow: the job issues nothing more.
  bool fatal() const { return fatal_; }

  // The measured window. It opens at a completion (see MeasuredWindow: the first reaped at or
  // after the ramp's end) and closes when the last I/O issued after it has completed: the I/Os
  // in flight at the deadline are waited for and counted. So the window starts and ends at the
  // device's own pace and holds whole rounds of it. Why: a throttle (blk-throttle, a cloud
  // volume's limiter) grants its budget a slice at a time (100 ms for blk-throttle on a
  // rotational queue), the first one whole at the first I/O, and slices are counted from a
  // jiffy before it: a window of the deadline's length starting at the first submission took
  // in one slice's budget too many (+2.5% in 4 s at 5,000 IOPS, issue 14). What it costs: the
  // I/Os of the first batch (the ones issued before the window opened) are not measured, and
  // runtime_s is the window (from the first completion to the last) instead of the runtime
  // asked for: slightly longer when the device holds the last I/Os back.
  MeasuredWindow& window() { return window_; }
  const MeasuredWindow& window() const { return window_; }
  // The deadline moved earlier (steadystate's stop): what was counted past it moves into it.
  void refold() {
    for (auto* d : {&out_.read, &out_.write}) window_.fold(d->ios_per_second);
  }

  // Keeps the per-second slots of the window's seconds (see MeasuredWindow::seconds).
  void finish(bool reached_deadline) {
    const size_t used = window_.seconds(reached_deadline);
    for (auto* d : {&out_.read, &out_.write}) d->ios_per_second.resize(used, 0);
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
    uint32_t at = 0;
    if (const char* why = check_block(buf, p_.bs[0], offset, 0, nullptr, spec_.verify_interval, &at)) {
      if (spec_.verify_dump) dump_block(buf, p_.bs[0], offset);
      offset += at;  // verify_interval: the chunk that is wrong
      out_.verify.add_mismatch(out_.job, offset, why);
      ContinueOnError c = p_.continue_on_error;
      if (c != ContinueOnError::Verify && c != ContinueOnError::All) {
        stop_on("verify mismatch at offset " + std::to_string(offset) + ": " + why);
      }
    }
  }

  // fio's verify_dump: the block as read, in the working directory as NAME.OFFSET.received (fio's
  // name; its .expected is not written: diskprobe's data is checked by checksum, not regenerated).
  void dump_block(const uint8_t* buf, uint32_t len, uint64_t offset) {
    const std::string path = spec_.name + "." + std::to_string(offset) + ".received";
    if (FILE* f = std::fopen(path.c_str(), "wb")) {
      std::fwrite(buf, 1, len, f);
      std::fclose(f);
      out_.verify.dumped.push_back(path);
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

  // The random map's next block from blocks walked ahead; one at a time (perm_.next()) when
  // verify tracks this job's writes, as it asks the map which blocks were handed out. The
  // walk, its keys in registers, saves ~13 user instructions an I/O over a next() call each
  // (issue 15; callgrind, 4k randread QD32 on zram: the map 41 -> 27, handing out +4). Which
  // of the two is fixed for the job (ahead_draw_): one test an I/O instead of three.
  [[gnu::always_inline]] uint64_t draw_ahead(bool w) {
    Ahead& a = ahead_[w];
    if (a.pos == kAhead) [[unlikely]] {
      perm_[w].next_n(a.blocks, kAhead);
      a.pos = 0;
    }
    return a.blocks[a.pos++];
  }

  // draw() for a random job of one direction with the walked-ahead map: as many I/Os as the
  // size limit leaves (each adds bs to issued_, and exhausted() is issued_ >= limit_), then the
  // runs of walked blocks.
  template <bool kWrite, class Issue>
  [[gnu::always_inline]] unsigned draw_one_way(unsigned n, Issue& issue) {
    const uint64_t bs = bs_[kWrite], start = region_start_;
    if (limit_ != UINT64_MAX) {
      const uint64_t left = issued_ >= limit_ ? 0 : (limit_ - issued_ - 1) / bs + 1;  // I/Os until exhausted()
      n = static_cast<unsigned>(std::min<uint64_t>(n, left));
    }
    issued_ += uint64_t{n} * bs;
    Ahead& a = ahead_[kWrite];
    for (unsigned i = 0; i < n;) {
      if (a.pos == kAhead) [[unlikely]] {
        perm_[kWrite].next_n(a.blocks, kAhead);
        a.pos = 0;
      }
      const unsigned run = std::min(n - i, kAhead - a.pos);
      const uint64_t* blocks = a.blocks + a.pos;
      a.pos += run;
      for (unsigned j = 0; j < run; ++j, ++i) issue(std::bool_constant<kWrite>{}, i, start + blocks[j] * bs);
    }
    return n;
  }

  // fio's zonemode=strided, before each sequential I/O: after zone_size bytes, the next zone
  // (zone_range + zone_skip on, from the region's start past its end); inside a zone, its start
  // again once the walk reached its range's end.
  void stride_zone(bool w) {
    const ShapePlan& sh = p_.shape;
    if (zone_bytes_ >= sh.zone_size) {
      zone_bytes_ = 0;
      zone_start_ += sh.zone_range + sh.zone_skip;
      if (zone_start_ >= sh.region_len) zone_start_ = 0;
      last_pos_[w] = zone_start_;
    }
    if (last_pos_[w] >= zone_start_ + sh.zone_range) last_pos_[w] = zone_start_;
  }

  // fio's buffer_compress_percentage and dedupe_percentage (JobSpec::content): which content this
  // write carries, as fio's get_buf_state picks it (a draw of 1..100 against the percentage: a
  // repeat of earlier content, else the job's next fresh content), then the content itself.
  void fill_content(uint8_t* buf) {
    const BufferContent& c = spec_.content;
    uint64_t base = content_base_, page = 0;
    if (c.dedupe_percentage == 100) {
      // fio: every buffer the same one, whatever the mode.
    } else if (c.dedupe_percentage && dedupe_rng_.below(100) < c.dedupe_percentage && (c.working_set || fresh_ > 0)) {
      if (c.working_set) {
        page = dedupe_rng_.below(working_set_pages_);
        if (c.dedupe_global) {
          // fio 3.33 spreads a global working set evenly over the jobs: this job's pages, a run of
          // pages_per_seed of them, then the next job's first as many, and so on round the jobs.
          const uint64_t jobs = std::max(1u, p_.group_jobs);
          const uint64_t per = std::max<uint64_t>(working_set_pages_ / jobs, 1);
          base = base_of((job_index_ + page / per) % jobs);
          page %= per;
        }
      } else {
        page = fresh_ - 1;  // repeat: the previous fresh write's content
      }
    } else {
      page = fresh_++;
    }
    write_content(buf, base, page);
  }

  uint64_t base_of(uint64_t job) const {
    uint64_t x = global_base_ ^ ((job + 1) * 0xd1b54a32d192ed03ull);
    return splitmix64(x);
  }

  // One content, from its key alone: each compress_chunk its random part (from the chunk's own
  // seed, as fio seeds each chunk) then zeros; the content header over the first bytes.
  void write_content(uint8_t* buf, uint64_t base, uint64_t page) const {
    const BufferContent& c = spec_.content;
    uint64_t x = base ^ (page * 0x9e3779b97f4a7c15ull);
    const uint64_t key = splitmix64(x);
    const uint32_t bs = p_.bs[1], chunk = std::min(c.compress_chunk ? c.compress_chunk : bs, bs);
    const uint32_t random_len = static_cast<uint32_t>(uint64_t{chunk} * (100 - c.compress_percentage) / 100);
    for (uint32_t at = 0, n = 0; at < bs; at += chunk, ++n) {
      const uint32_t len = std::min(chunk, bs - at), r = std::min(random_len, len);
      Rng chunk_rng(key + n);
      chunk_rng.fill(buf + at, r);
      std::memset(buf + at + r, 0, len - r);
    }
    BlockHeader h;
    h.version = kContentHeaderVersion;
    h.device_id = p_.device_id;
    h.run_id = p_.run_id;
    h.offset = key;
    h.seq = 0;
    encode_block_header(buf, h);
  }

  // verify_interval: each chunk of the block its own header (its offset) and checksum.
  void stamp_chunks(uint8_t* buf, BlockHeader h) {
    const uint32_t step = spec_.verify_interval;
    const uint64_t at = h.offset;
    for (uint32_t c = 0; c < p_.bs[1]; c += step) {
      h.offset = at + c;
      encode_block_header(buf + c, h);
      store_block_checksum(buf + c, step);
    }
  }

  // The walk ended: exhausted() from now on.
  bool over_walk() {
    limit_ = issued_;
    return false;
  }

  // fio's get_next_seq_offset: where the last I/O of direction w ended, plus rw=<op>:<n>'s
  // bytes; a time-based walk (or one with bytes left to do, loops or io_size) starts over at
  // the region's end; a holed one wraps at the target's end (forward: to the start; backward:
  // to the region's end plus the step), and ends at the region's end.
  bool sequential_pos(bool w, uint64_t* out) {
    const ShapePlan& sh = p_.shape;
    uint64_t pos = last_pos_[w];
    // (fio's strided zones end a size-bounded walk at the region's end, inside a zone or not.)
    if (pos >= sh.region_len && (spec_.time_based || (sh.seq_add == 0 && sh.zone_size == 0 && issued_ < limit_))) pos = 0;
    if (pos != 0 && sh.seq_add != 0) {
      const int64_t next = static_cast<int64_t>(pos) + sh.seq_add;
      if (next < 0 || static_cast<uint64_t>(next) >= sh.wrap_at) {
        pos = sh.seq_add > 0 ? 0 : static_cast<uint64_t>(std::max<int64_t>(0, static_cast<int64_t>(sh.region_len) + sh.seq_add));
      } else {
        pos = static_cast<uint64_t>(next);
      }
      if (pos >= sh.region_len && spec_.time_based) pos = 0;
    }
    if (pos >= sh.region_len) return false;
    *out = pos;
    return true;
  }

  // A random offset of direction w, in ba units: the random map's next, a uniform draw, or a
  // draw inside the zone a draw of 0..99 picks (fio's zoned: the zone's share of the I/Os).
  uint64_t random_unit(bool w) {
    const ShapePlan& sh = p_.shape;
    switch (spec_.shape.distribution) {
      case Distribution::Zipf: return zipf_unit(w);
      case Distribution::Pareto: return pareto_unit(w);
      case Distribution::Normal: return normal_unit(w);
      default: break;
    }
    if (!sh.zone_of[w].empty()) {
      const auto& z = sh.zone_of[w][rng_.below(sh.zone_of[w].size())];
      return z.first + rng_.below(z.second);
    }
    return randommap_ ? perm_[w].next() : rng_.below(sh.lastb[w]);
  }

  // fio's zipf, pareto and normal (lib/zipf.c, lib/gauss.c), unit for unit: a 32-bit uniform draw
  // turned into a rank, the rank scattered by fio's __hash_u64 (a multiply by 2^64 / phi), then
  // moved by the centre (zipf and pareto: a random one unless random_center says) modulo the
  // units. The draws come from their own stream (fio's zipf/gauss state).
  uint32_t dist_u32() { return static_cast<uint32_t>(dist_rng_.next() >> 32); }
  static uint64_t fio_hash(uint64_t v) { return v * 0x61C8864680B583EBull; }
  uint64_t dist_offset(uint64_t n) const {
    return spec_.shape.dist_center < 0 ? dist_rand_off_ : static_cast<uint64_t>(static_cast<double>(n) * spec_.shape.dist_center);
  }
  uint64_t zipf_unit(bool w) {
    const ShapePlan& sh = p_.shape;
    const uint64_t n = sh.lastb[w];
    const double theta = spec_.shape.dist_value, zetan = sh.zetan[w];
    const double zeta2 = 1.0 + std::pow(0.5, theta), alpha = 1.0 / (1.0 - theta);
    const double eta = (1.0 - std::pow(2.0 / static_cast<double>(n), 1.0 - theta)) / (1.0 - zeta2 / zetan);
    const double u = static_cast<double>(dist_u32()) / 4294967295.0, z = u * zetan;
    uint64_t val = z < 1.0 ? 1 : z < 1.0 + std::pow(0.5, theta) ? 2 : 1 + static_cast<uint64_t>(static_cast<double>(n) * std::pow(eta * u - eta + 1.0, alpha));
    return (fio_hash(val - 1) + dist_offset(n)) % n;
  }
  uint64_t pareto_unit(bool w) {
    const uint64_t n = p_.shape.lastb[w];
    const double h = spec_.shape.dist_value, power = std::log(h) / std::log(1.0 - h);
    const double u = static_cast<double>(dist_u32()) / 4294967295.0;
    const auto rank = static_cast<uint64_t>(static_cast<double>(n - 1) * std::pow(u, power));
    return (fio_hash(rank) + dist_offset(n)) % n;
  }
  uint64_t normal_unit(bool w) {
    const uint64_t n = p_.shape.lastb[w];
    uint64_t sum = 0;
    for (int i = 0; i < 12; ++i) sum += dist_u32() % (n + 1);
    sum = (sum + 11) / 12;
    const double dev_pct = spec_.shape.dist_value;
    if (dev_pct != 0.0) {
      auto stddev = static_cast<uint32_t>(std::ceil(static_cast<double>(n) * dev_pct / 100.0));
      stddev = static_cast<uint32_t>(std::min<uint64_t>(stddev, n / 2));
      if (stddev) {
        int dev = static_cast<int>(stddev * (static_cast<double>(dist_u32()) / 4294967296.0)) - static_cast<int>(stddev / 2);
        while (static_cast<uint64_t>(static_cast<int64_t>(dev)) + sum >= n) dev /= 2;
        sum += static_cast<uint64_t>(static_cast<int64_t>(dev));
      }
    }
    // fio's centre here is n x (center - 0.5), kept in an unsigned int (0 without one).
    const double c = spec_.shape.dist_center;
    const uint32_t off = c < 0 ? 0 : static_cast<uint32_t>(static_cast<int64_t>(static_cast<double>(n) * (c - 0.5)));
    return (fio_hash(sum) + off) % n;
  }

  // fio's get_next_buflen: bssplit's size for a draw (the first whose cumulative share holds
  // it and that fits before the region's end), or bsrange's MIN + MAX * U; each a multiple of
  // the smallest size, at most the largest; drawn again until it fits. 0: not even the smallest fits.
  uint32_t shaped_len(bool w, uint64_t pos) {
    const ShapePlan& sh = p_.shape;
    const uint32_t lo = sh.min_bs[w], hi = sh.max_bs[w];
    auto fits = [&](uint64_t l) { return pos + l <= sh.region_len; };
    if (lo == hi) return fits(lo) ? lo : 0;
    if (!fits(lo)) return 0;
    const auto& split = sh.split[w];
    for (;;) {
      uint64_t l = 0;
      if (split.empty()) {
        l = lo + static_cast<uint64_t>(static_cast<double>(hi) * (static_cast<double>(rng_.next() >> 11) * 0x1p-53));
      } else {
        const uint64_t v = rng_.below(100);  // the share a draw falls in
        for (const auto& [bs, cum] : split) {
          l = bs;
          if (v < cum && fits(l)) break;
        }
      }
      l -= l % lo;
      l = std::min<uint64_t>(l, hi);
      if (l >= lo && fits(l)) return static_cast<uint32_t>(l);
    }
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

  const JobPlan& p_;
  const JobSpec& spec_;
  Rng rng_;
  Rng prio_rng_{0x70726f6972697479ull};  // cmdprio's draws, apart from the offsets' (as fio's own state)
  Rng dedupe_rng_{0x6465647570650000ull};
  Rng dist_rng_{0x7a697066ull};     // zipf, pareto, normal draws (fio's zipf/gauss state)
  uint64_t dist_rand_off_ = 0;     // their random centre (fio's rand_off)  // dedupe_percentage's draws and working-set picks (fio's dedupe_state)
  bool content_ = false;                   // JobSpec::content: each write's buffer from fill_content
  uint64_t content_base_ = 0, global_base_ = 0, fresh_ = 0, working_set_pages_ = 1, job_index_ = 0;
  JobResult& out_;
  bool mixed_ = false, random_ = false, writes_only_ = false;
  // Copies of the plan's per-I/O fields: read through p_ they cost a load of p_ each time,
  // since a store to a buffer may alias the plan for all the compiler knows.
  bool randommap_ = false, verify_ = false;
  bool ahead_draw_ = false;  // random, with the map, verify not tracking writes: draw_ahead()
  uint32_t bs_[2] = {0, 0};
  uint64_t region_start_ = 0;
  uint64_t limit_ = UINT64_MAX;  // bytes_limit, MAX for none: one compare in exhausted()
  bool fatal_ = false;
  BlockPermutation perm_[2];
  static constexpr unsigned kAhead = 64;
  struct Ahead {
    uint64_t blocks[kAhead];
    unsigned pos = kAhead;  // kAhead: none walked yet
  };
  Ahead ahead_[2];
  WrittenBlocks* written_ = nullptr;
  uint64_t issued_ = 0;
  uint64_t write_seq_ = 0;
  uint64_t next_block_[2] = {0, 0};
  uint64_t last_pos_[2] = {0, 0};  // shaped: where direction d's last I/O ended, from the region's start
  uint64_t zone_start_ = 0, zone_bytes_ = 0;  // zonemode=strided: the zone walked, and the bytes done in it
  uint32_t seq_left_ = 0;          // shaped, rw=randread:N: I/Os until the next random offset
  uint32_t fill_bytes_ = 0;        // what a refilled write buffer gets: the largest write
  BlockMap map_;                   // shaped, plan.shape.map: the random map of several sizes
  MeasuredWindow window_;
};

}  // namespace diskprobe::engine
