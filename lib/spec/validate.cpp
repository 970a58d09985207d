#include "diskprobe/spec/validate.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "diskprobe/base/problems.h"
#include "diskprobe/spec/region.h"

namespace diskprobe {

namespace {

using Problems = std::vector<std::string>;

std::string num(uint64_t v) { return std::to_string(v); }

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

uint64_t round_up(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }

// The region on this target: aligned for O_DIRECT, inside it, room for a whole block.
void target_region_problems(const JobSpec& spec, const Target& target, Problems& problems) {
  const uint64_t lbs = target.logical_block_size ? target.logical_block_size : 1;
  const uint64_t bs = spec.max_bs();
  const std::string& dev = target.path;
  const Region reg = resolve_region(spec, target);
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
}

// One I/O size (`what`: "bs", "a bssplit size", ...): at least 512 bytes, and with direct I/O a
// whole number of the device's blocks (lbs; 1 when that does not apply). `use` names the fix.
void block_size_problems(uint64_t b, const std::string& what, uint64_t lbs, const std::string& use,
                         Problems& problems) {
  if (b < 512) {
    problems.push_back(what + " " + num(b) + " is below 512 bytes, the smallest block a disk takes" +
                       (use.empty() ? "" : ": use " + use + "4096"));
  } else if (b % lbs != 0) {
    problems.push_back(what + " " + num(b) + " is not a multiple of the device's logical block size " + num(lbs) +
                       (use.empty() ? " (direct I/O needs it): use " : ": use " + use) + num(round_up(b, lbs)));
  }
}

// Block sizes and the region: each block whole on the device, the region inside it. Without
// a target, only what needs none.
void region_problems(const JobSpec& spec, const Target* target, Problems& problems) {
  const uint64_t lbs = target && target->logical_block_size && spec.direct ? target->logical_block_size : 1;
  for (uint64_t b : {uint64_t{spec.bs}, uint64_t{spec.write_bs()}}) {
    block_size_problems(b, b == spec.bs ? "bs" : "bs (writes)", lbs, "bs=", problems);
    if (spec.bs_write == 0 || spec.bs_write == spec.bs) break;
  }
  if (target) target_region_problems(spec, *target, problems);
  if (spec.offset_percent < 0 || spec.offset_percent >= 100 || spec.size_percent < 0 || spec.size_percent > 100) {
    problems.push_back("offset and size percentages must be from 0 to 100 (offset below 100)");
  }
}

// The engine's options: which engine takes them, what the target offers, the limits.
// Without a target, only what needs none.
void engine_problems(const JobSpec& spec, const Target* target, Problems& problems) {
  if ((spec.sqpoll || spec.hipri) && spec.engine != EngineKind::IoUring) {
    problems.push_back("sqpoll and hipri are io_uring options: use engine=io_uring");
  }
  if (spec.force_async > 0 && spec.engine != EngineKind::IoUring) {
    problems.push_back("force_async is an io_uring option: use engine=io_uring or force_async=0");
  }
  if (spec.iodepth_batch_submit > 1 && spec.engine != EngineKind::IoUring) {
    problems.push_back("iodepth_batch_submit is an io_uring option (the sync engine does one I/O at a time): use "
                       "engine=io_uring or drop iodepth_batch_submit");
  }
  if (spec.hipri && !spec.direct) {
    problems.push_back("hipri (polled completions) works only with direct I/O: use direct=1");
  }
  if (target && spec.hipri && target->io_poll == 0) {
    problems.push_back("hipri: " +
                       (target->poll_why.empty() ? target->path + " has no poll queues" : target->poll_why) +
                       "; run without hipri");
  }
  if (spec.iodepth < 1 || spec.iodepth > kMaxIodepth) {
    problems.push_back("iodepth " + num(spec.iodepth) + " is out of range: use 1 to " + num(kMaxIodepth));
  }
  // The tuning plan may clamp numjobs to the CPUs there are: judged on the spec it gives.
  if (target && (spec.numjobs < 1 || spec.numjobs > kMaxNumjobs)) {
    problems.push_back("numjobs " + num(spec.numjobs) + " is out of range: use 1 to " + num(kMaxNumjobs));
  }
}

// A duration above 0 that the engine's whole nanoseconds would turn into 0: for `name`,
// `zero_means` (no limit, no ramp) and `fix` (what to write instead).
bool under_a_microsecond(double s, const std::string& name, const char* zero_means, const char* fix,
                         Problems& problems) {
  if (!(s > 0 && s < kMinSeconds)) return false;
  problems.push_back(name + " " + seconds(s) + " s is above 0 but below 1 us, which the engine would take as " +
                     zero_means + ": use " + fix + ", or 1us at the least");
  return true;
}

void duration_problems(const JobSpec& spec, Problems& problems) {
  if (!(spec.runtime_s >= 0) || !std::isfinite(spec.runtime_s)) {
    problems.push_back("runtime " + std::to_string(spec.runtime_s) + " s is not a duration: use runtime=30");
  } else if (spec.runtime_s > kMaxSeconds) {
    problems.push_back("runtime " + seconds(spec.runtime_s) + " s is above the limit of " +
                       seconds(kMaxSeconds) +
                       " s (24 h): use a shorter runtime, and several runs for a longer soak");
  } else if (under_a_microsecond(spec.runtime_s, "runtime", "no limit at all", "runtime=30 (seconds)", problems)) {
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
  } else {
    under_a_microsecond(spec.ramp_time_s, "ramp_time", "no ramp", "ramp_time=0", problems);
  }
  if (!(spec.startdelay_s >= 0) || !std::isfinite(spec.startdelay_s) || spec.startdelay_s > kMaxSeconds) {
    problems.push_back("startdelay " + std::to_string(spec.startdelay_s) +
                       " s is not a delay from 0 to 24 h: use startdelay=0");
  }
  if (spec.loops < 1) problems.push_back("loops 0 runs nothing: use loops=1 or more");
  if (spec.number_ios && does_reads(spec.rw) && does_writes(spec.rw) && spec.bs != spec.write_bs()) {
    problems.push_back("number_ios with reads and writes of different block sizes (bs=R,W) is not implemented: "
                       "use one bs, or size/io_size to bound the job");
  }
}

// rate_iops and rate cap the same direction in two ways; fio would take rate silently.
void rate_problems(const JobSpec& spec, Problems& problems) {
  if (spec.rate_poisson && !spec.rate_iops[0] && !spec.rate_iops[1] && !spec.rate_bytes[0] && !spec.rate_bytes[1]) {
    problems.push_back("rate_process=poisson spaces capped I/Os: give rate_iops or rate too");
  }
  if (spec.rate_poisson && spec.shape.variable_bs()) {
    problems.push_back("rate_process=poisson with several block sizes (bssplit, bsrange) is not implemented");
  }
  const char* dirs[] = {"reads", "writes"};
  for (int d = 0; d < 2; ++d) {
    if (spec.rate_iops[d] && spec.rate_bytes[d]) {
      problems.push_back(std::string("rate_iops and rate both cap ") + dirs[d] + ": give one of them");
    }
  }
}

// fio's steadystate ends a time-based run early once a full window of per-second samples holds still.
void steadystate_problems(const JobSpec& spec, Problems& problems) {
  const SteadyState& ss = spec.steadystate;
  if (!ss.enabled()) return;
  const std::string what = "steadystate (ss=" + steadystate_text(ss) + ")";
  if (!spec.time_based) {
    problems.push_back(what + " ends a time-based run early: add time_based=1 with a runtime");
  }
  if (!(ss.duration_s >= 2) || !std::isfinite(ss.duration_s)) {
    problems.push_back(what + " needs ss_dur, a window of at least 2 s (one sample a second): use ss_dur=10s");
  } else if (ss.duration_s != std::floor(ss.duration_s)) {
    problems.push_back("ss_dur " + seconds(ss.duration_s) + " s is not whole seconds (one sample a second): use ss_dur=" +
                       seconds(std::ceil(ss.duration_s)) + "s");
  } else if (ss.duration_s > spec.runtime_s) {
    problems.push_back("ss_dur " + seconds(ss.duration_s) + " s is longer than runtime " + seconds(spec.runtime_s) +
                       " s: the window could never fill; use ss_dur=" + seconds(std::floor(spec.runtime_s)) +
                       "s or less");
  } else if (under_a_microsecond(ss.ramp_s, "ss_ramp", "no ramp", "ss_ramp=0", problems)) {
  } else if (!(ss.ramp_s >= 0) || !std::isfinite(ss.ramp_s) || ss.ramp_s + ss.duration_s > spec.runtime_s) {
    problems.push_back("ss_ramp " + seconds(ss.ramp_s) + " s + ss_dur " + seconds(ss.duration_s) +
                       " s is longer than runtime " + seconds(spec.runtime_s) +
                       " s: the window could never fill; use a shorter ss_ramp or a longer runtime");
  }
}

// bssplit, bsrange, blockalign, rw=<op>:<n>, zones, thinktime (io_shape.h): each size a whole
// number of the device's blocks; what the shaped path does not do with them, refused.
void shape_problems(const JobSpec& spec, const Target* target, Problems& problems) {
  const IoShape& sh = spec.shape;
  if (!sh.any()) return;
  const uint64_t lbs = target && target->logical_block_size && spec.direct ? target->logical_block_size : 1;
  auto size_ok = [&](uint64_t b, const std::string& what) { block_size_problems(b, what, lbs, "", problems); };
  for (int d = 0; d < 2; ++d) {
    for (const BsShare& e : sh.bssplit[d]) size_ok(e.bs, "a bssplit size");
    if (sh.bs_max[d]) {
      size_ok(sh.bs_max[d], "bsrange's largest size");
      if (sh.bs_max[d] < (d ? spec.write_bs() : spec.bs)) problems.push_back("bsrange's MAX is below its MIN: use MIN-MAX");
    }
    if (sh.blockalign[d]) size_ok(sh.blockalign[d], "blockalign");
    if ((sh.distribution == Distribution::Zoned || sh.distribution == Distribution::ZonedAbs) && sh.zones[d].empty()) {
      problems.push_back("random_distribution names no zones: use zoned:ACCESS/SIZE:...");
    }
  }
  if (sh.seq_add % static_cast<int64_t>(lbs) != 0) {
    problems.push_back("rw=<op>:" + std::to_string(sh.seq_add) + " is not a multiple of the device's logical block size " +
                       num(lbs) + " (direct I/O needs it)");
  }
  if (target && sh.distribution == Distribution::ZonedAbs) {
    const uint64_t region = resolve_region(spec, *target).size;
    for (int d = 0; d < 2; ++d) {
      uint64_t total = 0;
      for (const RandomZone& z : sh.zones[d]) total += z.size_bytes;
      if (total > region) {
        problems.push_back("the zoned_abs zones come to " + num(total) + " bytes, past the region's " + num(region) +
                           ": use smaller zones or a larger size");
        break;
      }
    }
  }
  if (sh.zone_size) {
    size_ok(sh.zone_size, "zonesize");
    if (sh.zone_range) size_ok(sh.zone_range, "zonerange");
    if (sh.zone_skip % lbs != 0) size_ok(sh.zone_skip, "zoneskip");
    if (is_random(spec.rw)) {
      problems.push_back("zonemode=strided with random I/O (rw=" + std::string(to_string(spec.rw)) +
                         ") is not implemented: use a sequential rw");
    }
    const uint64_t region = target ? resolve_region(spec, *target).size : spec.size;
    if (spec.loops > 1 || (spec.io_size && region && spec.io_size > region)) {
      problems.push_back("zonemode=strided with loops or an io_size beyond one pass is not implemented: fio's walk "
                         "ends at the target's end");
    }
    // fio's zones run on to the target's end, past a smaller size: the region must reach it.
    if (target) {
      const Region r = resolve_region(spec, *target);
      if (r.offset + r.size < target->size_bytes) {
        problems.push_back("zonemode=strided over a region that ends before the target's end (" + num(r.offset + r.size) +
                           " of " + num(target->size_bytes) + " bytes) is not implemented: fio's zones run on to the "
                           "target's end; drop size");
      }
    }
  }
  // verify_backlog checks each write as it goes, at its own offset, without the map: any walk of
  // one write size will do.
  if (spec.verify != VerifyKind::None && !(spec.verify_backlog && !sh.variable_bs())) {
    problems.push_back("verify with bssplit, bsrange, blockalign, rw=<op>:<n> or random_distribution is not implemented "
                       "(the verify map is of one block size on its own grid): drop verify or the shape, or read each "
                       "write back as it goes with verify_backlog (one block size)");
  }
  if (spec.number_ios && sh.variable_bs()) {
    problems.push_back("number_ios with several block sizes (bssplit, bsrange) is not implemented: use size or io_size");
  }
  if (sh.thinktime_us && spec.engine != EngineKind::Sync) {
    problems.push_back("thinktime is implemented for the sync engines (ioengine=psync, sync), not for io_uring or "
                       "libaio: use ioengine=psync");
  }
}

// Every check, in one order: blocks and region, engine options, durations, mix.
Problems problems_of(const JobSpec& spec, const Target* target) {
  Problems problems;
  region_problems(spec, target, problems);
  engine_problems(spec, target, problems);
  duration_problems(spec, problems);
  rate_problems(spec, problems);
  steadystate_problems(spec, problems);
  shape_problems(spec, target, problems);
  if ((!spec.priority.cmd[0].empty() || !spec.priority.cmd[1].empty()) && spec.engine == EngineKind::Sync) {
    problems.push_back("cmdprio_percentage and cmdprio_bssplit are options of the asynchronous engines, as fio's: use "
                       "ioengine=libaio or io_uring (prioclass/prio set a sync job's priority)");
  }
  if (spec.content.any()) {
    if (spec.verify != VerifyKind::None) {
      problems.push_back("verify with buffer_compress_percentage or dedupe_percentage is not implemented (a content "
                         "block's header keys its content, not its place): drop verify or the content options");
    }
    if (max_bs(spec.shape, 1, spec.write_bs()) != min_bs(spec.shape, 1, spec.write_bs())) {
      problems.push_back("buffer_compress_percentage or dedupe_percentage with several write sizes (bssplit, bsrange) "
                         "is not implemented: give writes one block size");
    }
    if (!spec.verify_pattern.empty()) {
      problems.push_back("verify_pattern beside buffer_compress_percentage or dedupe_percentage: give one of them");
    }
  }
  if (spec.verify_interval) {
    const uint32_t wbs = spec.write_bs(), rbs = spec.bs;
    if (spec.verify == VerifyKind::None) {
      problems.push_back("verify_interval " + num(spec.verify_interval) + " without verify: give verify=crc32c (or meta)");
    } else if (spec.verify_interval < 64 || (wbs % spec.verify_interval) || (rbs % spec.verify_interval)) {
      problems.push_back("verify_interval " + num(spec.verify_interval) + " does not divide the block size (" + num(rbs) +
                         (wbs != rbs ? ", " + num(wbs) : std::string()) + ") into chunks of 64 bytes or more (each holds a "
                         "48-byte header): use a divisor such as 512");
    }
  }
  if (spec.verify_backlog && spec.engine != EngineKind::Sync) {
    problems.push_back("verify_backlog with the asynchronous engine is not implemented (the read-back of each batch "
                       "comes between writes in flight): use ioengine=psync, or drop verify_backlog for the read-back "
                       "after the writes");
  }
  if (spec.latency.target_ns && spec.steadystate.enabled()) {
    problems.push_back("latency_target beside steadystate is not implemented (each ends the job its own way): run "
                       "them as two jobs");
  }
  if (spec.rwmixread > 100) {
    problems.push_back("rwmixread " + num(spec.rwmixread) + " is above 100 percent: use 0 to 100");
  }
  return problems;
}

}  // namespace

Status validate(const JobSpec& spec, const Target& target) {
  Problems problems = problems_of(spec, &target);
  if (problems.empty()) return Ok{};
  return make_error(join_problems(target.path, problems));
}

Status validate_spec(const JobSpec& spec) {
  Problems problems = problems_of(spec, nullptr);
  if (problems.empty()) return Ok{};
  return make_error(join_problems("workload " + spec.name, problems));
}

}  // namespace diskprobe
