#include "job_plan.h"

#include <fcntl.h>

#include <algorithm>
#include <cmath>

#include "async_probe.h"
#include "clock.h"
#include "ring.h"

namespace diskprobe::engine {

// iodepth_batch_submit as the most SQEs per io_uring_enter, kAllAtOnce for every free slot.
// fio's 0 is the whole depth, as is any count at or above it. auto: every free slot at once,
// but one I/O per call for random I/O on a loop device. Loop runs each request in its
// kworker, whose CPU the scheduler picks; fed one request per call, it starts on the first
// while the job makes the next, and 4k random reads at QD32 ran faster in the placements the
// scheduler chose (2-vCPU VM, five 3 s runs each: 324k-352k IOPS, median 348k, against
// 281k-313k, median 294k, batched; fio's default, which submits so, 308k-323k). Batching wins
// where the kworker shares the job's CPU throughout (forced by a workqueue cpumask: 434k-460k
// against 375k-403k), which the scheduler did not choose, and for sequential I/O, whose
// neighbours a batch lets the block layer merge (128k reads: median 41.2k against 39.1k; 4k:
// 449k against 436k). sqpoll submits from the kernel's thread, and hipri's IOPOLL has no
// kworker: both batch. One per call pays only while the kworker is the limit and the queue
// stays full; where each call costs more than the kworker's request (another host, 2026-12-05:
// one per call kept 4-9 of 32 I/Os in flight, 252k-374k IOPS against 346k-466k batched), the
// job's own calls are the limit, so each job watches its queue first (plan.chunk_watch).
uint32_t submit_chunk(const JobSpec& spec, const Target& target, unsigned ring_flags) {
  if (spec.iodepth_batch_submit == JobSpec::kBatchSubmitAuto) {
    return target.loop_device && is_random(spec.rw) && spec.iodepth > 1 && ring_flags == 0 ? 1 : kAllAtOnce;
  }
  const auto n = static_cast<uint32_t>(spec.iodepth_batch_submit);
  return n > 0 && n < spec.iodepth ? n : kAllAtOnce;
}

size_t slots_per_registered_buffer(size_t slots, size_t slot_stride) {
  constexpr size_t kMaxRegisteredBytes = size_t{1} << 30;
  const size_t by_table = (slots + kMaxRegisteredBuffers - 1) / kMaxRegisteredBuffers;
  const size_t by_bytes = std::max<size_t>(1, kMaxRegisteredBytes / std::max<size_t>(1, slot_stride));
  return std::clamp<size_t>(by_table, 1, by_bytes);
}

namespace {

// fio's zoned and zoned_abs: a draw v of 0..99 picks the zone whose share of the accesses holds
// it; the zone is a share of the ba units (zoned) or a byte range (zoned_abs), laid from the start.
std::vector<std::pair<uint64_t, uint64_t>> zone_table(const IoShape& s, int d, uint64_t lastb, uint32_t ba) {
  std::vector<std::pair<uint64_t, uint64_t>> of;
  if (s.distribution == Distribution::Uniform) return of;
  double start_percent = 0;
  uint64_t start_bytes = 0;
  for (const RandomZone& z : s.zones[d]) {
    uint64_t first = 0, units = 0;
    if (s.distribution == Distribution::Zoned) {
      first = static_cast<uint64_t>(start_percent * static_cast<double>(lastb) / 100.0);
      units = static_cast<uint64_t>(static_cast<double>(lastb) * z.size_percent / 100.0);
      start_percent += z.size_percent;
    } else {
      first = start_bytes / ba;
      units = z.size_bytes / ba;
      start_bytes += z.size_bytes;
    }
    first = std::min(first, lastb - 1);
    units = std::clamp<uint64_t>(units, 1, lastb - first);
    for (uint32_t k = 0; k < z.access_percent; ++k) of.emplace_back(first, units);
  }
  return of;  // 100 entries: validate() checks that the accesses come to 100
}

void plan_shape(const JobSpec& spec, const Target& target, uint64_t region, JobPlan& p) {
  const IoShape& s = spec.shape;
  ShapePlan& sh = p.shape;
  for (int d = 0; d < 2; ++d) {
    const uint32_t bs = d ? spec.write_bs() : spec.bs;
    sh.min_bs[d] = min_bs(s, d, bs);
    sh.max_bs[d] = max_bs(s, d, bs);
    sh.ba[d] = s.blockalign[d] ? s.blockalign[d] : sh.min_bs[d];
    uint32_t cum = 0;
    for (const BsShare& e : s.bssplit[d]) {
      if (e.percent == 0) continue;
      cum += e.percent;
      sh.split[d].emplace_back(e.bs, cum);
    }
    // fio's last_block: a min_bs I/O fits at the last unit.
    uint64_t room = region;
    if (sh.min_bs[d] > sh.ba[d]) room -= std::min<uint64_t>(room, sh.min_bs[d] - sh.ba[d]);
    sh.lastb[d] = std::max<uint64_t>(1, room / sh.ba[d]);
    sh.zone_of[d] = zone_table(s, d, sh.lastb[d], sh.ba[d]);
    if (s.distribution == Distribution::Zipf) {
      const uint64_t terms = std::min<uint64_t>(sh.lastb[d], 10'000'000);
      if (d == 1 && sh.lastb[1] == sh.lastb[0]) {
        sh.zetan[1] = sh.zetan[0];
      } else {
        for (uint64_t i = 0; i < terms; ++i) sh.zetan[d] += std::pow(1.0 / static_cast<double>(i + 1), s.dist_value);
      }
    }
    if (s.variable_bs(d)) sh.rate_bytes[d] = spec.rate_bytes[d];
  }
  // fio's random map with several sizes: one map of the smallest size's blocks, both directions'.
  constexpr uint64_t kMaxMapBlocks = uint64_t{1} << 32;  // 512 MiB of map; beyond, uniform draws
  sh.map = is_random(spec.rw) && !spec.norandommap && s.variable_bs() && s.distribution == Distribution::Uniform &&
           sh.min_bs[0] == sh.min_bs[1] && sh.ba[0] == sh.min_bs[0] && sh.ba[1] == sh.min_bs[1] &&
           sh.lastb[0] <= kMaxMapBlocks;
  sh.seq_add = s.seq_add;
  sh.seq_nr = s.seq_nr;
  sh.region_len = region;
  sh.wrap_at = target.size_bytes;
  sh.think_ns = s.thinktime_us * 1000;
  sh.think_blocks = std::max<uint32_t>(1, s.thinktime_blocks);
  sh.zone_size = s.zone_size;
  sh.zone_range = s.zone_range ? s.zone_range : s.zone_size;
  sh.zone_skip = s.zone_skip;
}

}  // namespace

JobPlan plan_jobs(const JobSpec& spec, const Target& target, const Region& reg) {
  JobPlan p;
  p.spec = &spec;
  p.path = target.path;
  // O_NOATIME: otherwise every read asks whether the node's atime is due (touch_atime, on
  // each I/O of a block device); fio opens devices so too. Fd::open drops it where refused.
  p.open_flags = (does_writes(spec.rw) ? O_RDWR : O_RDONLY) | (spec.direct ? O_DIRECT : 0) |
                 (spec.sync ? O_SYNC : 0) | O_NOATIME;
  p.region_start = reg.offset;
  p.device_id = target.device_id;
  uint64_t region = reg.size;
  p.bs[0] = spec.bs;
  p.bs[1] = spec.write_bs();
  for (int d = 0; d < 2; ++d) p.nblocks_dir[d] = region / p.bs[d];
  p.nblocks = p.nblocks_dir[does_writes(spec.rw) && !does_reads(spec.rw) ? 1 : 0];
  p.job_paths = target.job_paths;
  p.rdev = target.job_paths.empty() ? target.rdev : 0;
  // The random map hands out blocks of one size, each once a pass: with several sizes or zones,
  // offsets are drawn at random (as norandommap; fio's --parse-only side says so).
  p.shaped = spec.shape.any();
  p.logged = spec.logs.any();
  p.prioritized = spec.priority.any();
  p.depth_search = spec.latency.target_ns != 0;
  if (spec.engine == EngineKind::IoUring && spec.iodepth_low && spec.iodepth_low < spec.iodepth) p.depth_low = spec.iodepth_low;
  p.depths = spec.io_depths;
  p.rate_floor = spec.rate_min_bytes[0] || spec.rate_min_bytes[1] || spec.rate_min_iops[0] || spec.rate_min_iops[1];
  if (p.shaped) plan_shape(spec, target, region, p);
  p.randommap = is_random(spec.rw) && !spec.norandommap && !spec.shape.variable_bs() &&
                spec.shape.distribution == Distribution::Uniform;
  p.verify = spec.verify != VerifyKind::None;
  p.verify_reads = p.verify && !does_writes(spec.rw);
  p.backlog = p.verify && does_writes(spec.rw) ? spec.verify_backlog : 0;
  p.track_writes = p.verify && does_writes(spec.rw) && spec.do_verify && p.backlog == 0;
  p.continue_on_error = spec.continue_on_error;
  if (spec.engine == EngineKind::IoUring) {
    p.ring_flags = (spec.sqpoll ? IORING_SETUP_SQPOLL : 0u) | (spec.hipri ? IORING_SETUP_IOPOLL : 0u);
    if (spec.force_async > 0) p.async_every = static_cast<uint32_t>(spec.force_async);
    p.probe_async = spec.force_async == JobSpec::kForceAsyncAuto && target.bio_based && spec.time_based &&
                    p.ring_flags == 0;
    p.submit_chunk = submit_chunk(spec, target, p.ring_flags);
    p.chunk_watch = spec.iodepth_batch_submit == JobSpec::kBatchSubmitAuto && p.submit_chunk == 1;
  }
  // size: one pass over the region per job; io_size: that many bytes, looping as needed.
  uint64_t pass = (does_reads(spec.rw) && does_writes(spec.rw)) || p.shaped ? region
                  : does_writes(spec.rw)                      ? p.nblocks_dir[1] * p.bs[1]
                                                              : p.nblocks_dir[0] * p.bs[0];
  p.bytes_limit = spec.time_based ? 0 : spec.io_size ? spec.io_size : pass;
  // loops: the job's bytes that many times over (fio's loops; a time_based job ignores it).
  if (p.bytes_limit && spec.loops > 1) {
    p.bytes_limit = p.bytes_limit > UINT64_MAX / spec.loops ? UINT64_MAX : p.bytes_limit * spec.loops;
  }
  // number_ios: N I/Os at most, of the job's one block size (validate() refuses two).
  if (spec.number_ios) {
    const uint64_t cap = spec.number_ios > UINT64_MAX / spec.max_bs() ? UINT64_MAX : spec.number_ios * spec.max_bs();
    p.bytes_limit = p.bytes_limit ? std::min(p.bytes_limit, cap) : cap;
  }
  p.start_delay_ns = static_cast<uint64_t>(spec.startdelay_s * 1e9);
  p.ramp_ns = static_cast<uint64_t>(spec.ramp_time_s * 1e9);
  if (p.probe_async) p.ramp_ns = std::max(p.ramp_ns, kProbeRampNs);  // the probe is not measured
  // 0 ns is "no limit": a runtime above 0 never truncates to it (validate() refuses one under 1 us).
  if (spec.time_based || spec.runtime_s > 0) {
    p.runtime_ns = static_cast<uint64_t>(spec.runtime_s * 1e9);
    if (spec.runtime_s > 0) p.runtime_ns = std::max<uint64_t>(p.runtime_ns, 1);
  }
  p.seconds_capacity = p.runtime_ns ? static_cast<size_t>(std::ceil(spec.runtime_s)) + 2 : 64;
  p.slots = spec.engine == EngineKind::Sync ? 1 : spec.iodepth;
  // One I/O every bs / rate seconds, or every 1 / rate_iops (validate() refuses both at once).
  for (int d = 0; d < 2; ++d) {
    if (spec.rate_bytes[d]) {
      p.rate_ns_num[d] = uint64_t{p.bs[d]} * kNsPerSec;  // <= 64 MiB * 1e9: fits
      p.rate_ns_den[d] = spec.rate_bytes[d];
    } else if (spec.rate_iops[d]) {
      p.rate_ns_num[d] = kNsPerSec;
      p.rate_ns_den[d] = spec.rate_iops[d];
    }
    p.paced = p.paced || p.rate_ns_num[d] != 0;
  }
  p.steady = spec.steadystate.enabled();
  p.slot_stride = round_up(spec.max_bs(), kBufferAlign);
  return p;
}

}  // namespace diskprobe::engine
