// JobPlan: what every job of one run shares, worked out once (plan_jobs) from the spec, the
// target and the region; read-only once the threads start. Not tuning's Plan (pins, settings).
#pragma once

#include <cstddef>
#include <atomic>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "diskprobe/base/aligned_buffer.h"
#include "diskprobe/spec/job_spec.h"
#include "diskprobe/spec/region.h"
#include "diskprobe/spec/target.h"
#include "verify.h"

namespace diskprobe::engine {

class JobsDone;
struct FlowGroup;

constexpr size_t kBufferAlign = kDirectAlign;

// A submission cap above any batch: every free slot in one io_uring_enter.
inline constexpr uint32_t kAllAtOnce = UINT32_MAX;

// IoShape (spec/io_shape.h) worked out for the engine: per direction [0] reads, [1] writes.
struct ShapePlan {
  uint32_t min_bs[2] = {0, 0}, max_bs[2] = {0, 0};
  uint32_t ba[2] = {0, 0};       // random offsets are multiples of this (blockalign)
  uint64_t lastb[2] = {0, 0};    // random offsets: the ba units at which a min_bs I/O still fits
  // bssplit: each size with the percentages before it and its own (cumulative), in the order given.
  std::vector<std::pair<uint32_t, uint32_t>> split[2];
  // random_distribution=zoned|zoned_abs: for v = 0..99 (a draw), the zone's first ba unit and its units.
  std::vector<std::pair<uint64_t, uint64_t>> zone_of[2];
  int64_t seq_add = 0;           // rw=read:N: bytes added after each sequential I/O
  uint32_t seq_nr = 0;           // rw=randread:N: a random offset every N I/Os
  uint64_t region_len = 0;
  uint64_t wrap_at = 0;          // a holed walk at or past this (the target's size, as fio's real_file_size) wraps
  uint64_t think_ns = 0;         // thinktime, after every think_blocks I/Os
  uint32_t think_blocks = 1;
  uint64_t zone_size = 0, zone_range = 0, zone_skip = 0;  // zonemode=strided (IoShape), bytes; 0 = none
  uint64_t rate_bytes[2] = {0, 0};  // rate= with several sizes: paced by each I/O's bytes
  // fio's zipf: the sum of 1/i^theta over each direction's units, at most 10 million terms (fio's
  // ZIPF_MAX_GEN), worked out once for every job.
  double zetan[2] = {0, 0};
  // fio's random map over I/Os of several sizes (BlockMap, in min_bs blocks, both directions'):
  // each random I/O starts at a free block and is cut short at a done one.
  bool map = false;
};

struct JobPlan {
  const JobSpec* spec = nullptr;
  std::string path;
  int open_flags = 0;
  uint64_t region_start = 0;
  uint64_t nblocks = 0;      // bs-sized blocks in the region
  uint32_t bs[2] = {0, 0};          // [0] reads, [1] writes (fio's bs=R,W)
  uint64_t nblocks_dir[2] = {0, 0};  // blocks of each direction's size in the region
  std::vector<std::string> job_paths;  // --directory: each job's own file
  uint64_t rdev = 0;          // Target::rdev: what the opened path must be; 0 = not compared
  bool randommap = false;     // random I/O walks a permutation of the blocks
  bool verify = false;        // every write carries a crc32c
  bool verify_reads = false;  // a read workload checks every block it reads
  bool track_writes = false;  // remember written blocks for the verify pass
  std::vector<WrittenBlocks*> written;  // per job: its file's map (track_writes only)
  ContinueOnError continue_on_error = ContinueOnError::None;
  unsigned ring_flags = 0;    // IORING_SETUP_SQPOLL / IORING_SETUP_IOPOLL
  uint32_t async_every = 0;   // force_async: every Nth SQE with IOSQE_ASYNC; 0 = none
  bool probe_async = false;   // force_async=auto on a bio-based device: probe, keep the faster
  uint32_t submit_chunk = kAllAtOnce;  // iodepth_batch_submit: at most this many SQEs per io_uring_enter
  // auto chose one per call: each job watches how many of its I/Os stay in flight so, and
  // batches from then on where it kept less than half of them (its own calls were the limit).
  bool chunk_watch = false;
  uint64_t bytes_limit = 0;  // per job; 0 = no limit (time_based)
  uint64_t ramp_ns = 0;
  uint64_t start_delay_ns = 0;  // startdelay: from the gate's start to this plan's jobs' first I/O
  // The first of this plan's jobs among all the jobs started together (run_group): job j of the
  // plan is the group's job first_job + j, which seeds its random offsets (fio's thread_number).
  unsigned first_job = 0;
  unsigned group_jobs = 1;  // how many jobs run_group starts together (all members' numjobs)
  JobsDone* wait_for = nullptr;  // wait_for: these jobs start once every job counted there ended
  uint64_t runtime_ns = 0;      // measured part; 0 = until bytes_limit
  size_t seconds_capacity = 0;  // per-second slots preallocated
  uint32_t slots = 1;           // I/Os in flight per job
  size_t slot_stride = 0;       // bytes between two slots' buffers
  // fio's rate / rate_iops: rate_ns_num[d] / rate_ns_den[d] ns between two I/Os of direction d
  // (num 0 = no cap); paced when either direction is capped.
  uint64_t rate_ns_num[2] = {0, 0}, rate_ns_den[2] = {1, 1};
  bool paced = false;
  bool steady = false;          // steadystate: jobs publish their totals for the watching thread
  // The I/Os vary beyond one size and one walk (bssplit, rw=<op>:<n>, zones, thinktime): the
  // loops' extras path draws each I/O's offset and length through Workload::next_shaped.
  bool shaped = false;
  ShapePlan shape;
  // fio's per-I/O logs (JobSpec::logs): the extras path keeps every measured I/O's sample.
  bool logged = false;
  // fio's flow: the group of this plan's flow_id (run_group sets it) and this plan's weight; each
  // new I/O waits for its share (FlowShare), on the extras path.
  FlowGroup* flow = nullptr;
  // fio's exitall: set when another job's end ends this plan's jobs (run_group); read once per
  // batch beside the stop flag. Null: no job of the run has exitall.
  const std::atomic<bool>* terminate = nullptr;
  bool prioritized = false;  // JobSpec::priority: each I/O's ioprio drawn (Workload::pick_prio)
  uint32_t flow_weight = 0;
  uint64_t flow_sleep_ns = 0;
  bool depth_search = false;  // fio's latency_target: the depth in use is searched (DepthSearch)
  bool rate_floor = false;    // fio's ratemin / rate_iops_min: JobRun::check_min_rate
  uint32_t backlog = 0;       // fio's verify_backlog (sync engine): writes read back every this many
  uint32_t depth_low = 0;     // fio's iodepth_low (io_uring): once full, refilled from this depth; 0 = kept full
  bool depths = false;        // JobSpec::io_depths: each submit and reap counted (DepthStats)
  // The loops' extras path: any of rate caps, steadystate, a shape, logs, priorities, a flow,
  // a latency target or the depth counts.
  bool extras() const {
    return paced || steady || shaped || logged || prioritized || flow != nullptr || depth_search || rate_floor ||
           backlog != 0 || depth_low != 0 || depths;
  }
  // New I/Os started one at a time on the extras path (fill_paced, start_picked): each waits for
  // its time, its flow share or the searched depth, or draws its own offset, length or priority.
  bool one_at_a_time() const { return paced || shaped || prioritized || flow != nullptr || depth_search || depth_low != 0; }
  uint64_t device_id = 0;       // for every block header
  uint64_t run_id = 0;
};

JobPlan plan_jobs(const JobSpec& spec, const Target& target, const Region& reg);

// What iodepth_batch_submit comes to on this target: the most SQEs per io_uring_enter.
uint32_t submit_chunk(const JobSpec& spec, const Target& target, unsigned ring_flags);

// How long, and over how many completions at least, a job watches its queue under chunk_watch.
inline constexpr uint64_t kChunkWatchNs = 100'000'000;
inline constexpr uint64_t kChunkWatchIos = 4096;

// Registered buffers a ring takes at most: IORING_MAX_REG_BUFFERS is 16384, but the kernel
// checks each new buffer's huge pages against every one registered before it.
inline constexpr size_t kMaxRegisteredBuffers = 4096;

// How many slots share one registered buffer: one each (a 4k I/O's bio is then one segment,
// which the block layer takes without trying to split it, as fio's one buffer per io_u), more
// only past kMaxRegisteredBuffers slots; each buffer at most 1 GiB, the kernel's limit.
size_t slots_per_registered_buffer(size_t slots, size_t slot_stride);

}  // namespace diskprobe::engine
