// JobSpec: one workload, in fio's words, plus what it asks of the host.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "diskprobe/spec/io_shape.h"

namespace diskprobe {

enum class RwMode { Read, Write, RandRead, RandWrite, RandRW, ReadWrite };
enum class EngineKind { IoUring, Sync };
// none: run where the scheduler puts it; irq: on the CPU that takes the device's
// completion interrupt; hw-queues: jobs spread over the hardware queues' CPU lists.
enum class PinPolicy { None, Irq, HwQueues };
// fio's continue_on_error: which I/O errors let a job go on (counted) instead of ending it.
enum class ContinueOnError { None, Read, Write, Io, Verify, All };
enum class VerifyKind { None, Crc32c };

std::string_view to_string(RwMode m);
std::string_view to_string(EngineKind e);
std::string_view to_string(PinPolicy p);
std::optional<RwMode> parse_rw(std::string_view s);
std::optional<EngineKind> parse_engine(std::string_view s);
std::optional<PinPolicy> parse_pinning(std::string_view s);
std::string_view to_string(ContinueOnError c);
std::string_view to_string(VerifyKind v);
std::optional<ContinueOnError> parse_continue_on_error(std::string_view s);
std::optional<VerifyKind> parse_verify(std::string_view s);
// "0-3,6,8-9" (fio's cpus_allowed) -> {0,1,2,3,6,8,9}: a set, ascending, each CPU once;
// nullopt when malformed or when it has more entries than CPUs (4096).
std::optional<std::vector<int>> parse_cpus_allowed(std::string_view s);
// fio's percentile_list: "50:99:99.9" or "50,99,99.9"; each in (0, 100].
std::optional<std::vector<double>> parse_percentile_list(std::string_view s);

inline bool is_random(RwMode m) {
  return m == RwMode::RandRead || m == RwMode::RandWrite || m == RwMode::RandRW;
}
inline bool does_writes(RwMode m) {
  return m != RwMode::Read && m != RwMode::RandRead;
}
inline bool does_reads(RwMode m) {
  return m != RwMode::Write && m != RwMode::RandWrite;
}

// What a profile wants of the host while it runs; tuning:: turns it into a plan.
struct HostWishes {
  std::optional<int> rq_affinity;  // 0, 1 or 2; unset = leave alone
  PinPolicy pinning = PinPolicy::None;
  bool hold_cstates = false;        // hold /dev/cpu_dma_latency at 0 for the run
  bool advise_idle_poll = false;    // latency profiles: advise idle=poll
  std::string scheduler;            // queue/scheduler: "none", "mq-deadline"...; "" = leave alone
  std::optional<int> nomerges;      // queue/nomerges 0, 1 or 2; unset = leave alone
  // Disable every cpuidle state but state0 whose exit latency exceeds this many µs
  // (0 = all of them, as the AWS io1 guide's `cpupower idle-set -d 1..N-1`); unset = leave alone.
  std::optional<unsigned> cstate_latency_limit_us;
};

// fio's steadystate (ss=KIND:LIMIT[%]), ss_dur and ss_ramp: a time-based job ends early once the
// group's per-second IOPS or bandwidth holds still over a rolling window. iops/bw: every sample
// of the window within LIMIT of the window's mean; *_slope: the least-squares slope of the
// window within LIMIT (per second). LIMIT is a share of the mean when `percent`, else IOPS or
// bytes/s.
enum class SteadyStateKind { None, Iops, IopsSlope, Bw, BwSlope };
struct SteadyState {
  SteadyStateKind kind = SteadyStateKind::None;
  double limit = 0;
  bool percent = false;
  double duration_s = 0;  // ss_dur: the window (whole seconds)
  double ramp_s = 0;      // ss_ramp: seconds after the measured window opens before the first sample
  bool enabled() const { return kind != SteadyStateKind::None; }
};
std::string_view to_string(SteadyStateKind k);
// fio's ss=KIND:LIMIT[%] ("iops:0.2%", "iops_slope:0.1%", "bw:10m", "bw_slope:2%", "none"):
// kind, limit and percent set, duration and ramp left at 0; a bw limit without % takes fio's
// size units (10m = 10 MiB/s). nullopt when malformed or the limit is not above 0.
std::optional<SteadyState> parse_steadystate(std::string_view s);
// "iops_slope:0.1%", "bw:10485760": the ss= text of a criterion, as parse_steadystate reads it.
std::string steadystate_text(const SteadyState& ss);
// fio's rate_iops=R[,W] and rate=R[,W]: "R" caps both directions, "R," reads only, ",W" writes
// only; bytes: fio's size units (10m = 10 MiB/s), else whole I/Os. 0 = no cap.
std::optional<std::array<uint64_t, 2>> parse_rate(std::string_view s, bool bytes);

// fio's write_bw_log / write_lat_log / write_iops_log: per-I/O logs in fio's format, written
// after the run as PREFIX_bw.N.log, PREFIX_lat.N.log (with _clat and _slat), PREFIX_iops.N.log,
// N the job's number as fio counts them (every clone of every job, from 1). An empty prefix
// asks for no log of that kind.
struct IoLogs {
  std::string bw, lat, iops;
  uint32_t avg_msec = 0;  // log_avg_msec: one entry per direction per this many ms (means); 0 = every I/O
  bool offset = false;    // log_offset: each entry names its I/O's offset
  bool prio = false;      // log_prio: the priority column is the I/O's ioprio value, not 0
  bool any() const { return !bw.empty() || !lat.empty() || !iops.empty(); }
  bool operator==(const IoLogs&) const = default;
};

// fio's I/O priorities: prioclass/prio (every I/O's and the job thread's), and cmdprio_percentage
// or cmdprio_bssplit with cmdprio_class/cmdprio (a share of the I/Os, of a size or of any, at
// another priority). Values are the kernel's ioprio: class << 13 | level.
struct PrioShare {
  uint32_t bs = 0;       // the I/O size it is for; 0 = any size (cmdprio_percentage)
  uint32_t percent = 0;  // of that size's I/Os of the direction
  uint16_t ioprio = 0;
  bool operator==(const PrioShare&) const = default;
};
struct IoPriority {
  bool job_set = false;  // prioclass or prio given
  uint16_t job = 0;      // the job's ioprio (prioclass << 13 | prio)
  std::array<std::vector<PrioShare>, 2> cmd;  // [0] reads, [1] writes
  bool any() const { return job_set || !cmd[0].empty() || !cmd[1].empty(); }
  bool operator==(const IoPriority&) const = default;
};
constexpr uint16_t ioprio_value(unsigned cls, unsigned level) { return static_cast<uint16_t>(cls << 13 | level); }

// fio's latency_target, latency_window, latency_percentile: the job looks for the deepest queue,
// up to its iodepth, at which `percentile` % of its I/Os complete within target_ns (total
// latency), a window at a time (engine/depth_search.h), and ends once it ran a window there.
struct LatencyTarget {
  uint64_t target_ns = 0;  // 0: off
  uint64_t window_ns = 0;
  double percentile = 100.0;
  bool operator==(const LatencyTarget&) const = default;
};

// fio's numa_cpu_nodes and numa_mem_policy: the job's threads run on the CPUs of cpu_nodes (with
// cpus_allowed, on those of both), and their I/O buffers are placed by the memory policy
// (set_mempolicy on each job thread before its buffers are allocated).
struct NumaPolicy {
  enum class Mem { Unset, Default, Prefer, Bind, Interleave, Local };
  std::vector<int> cpu_nodes;  // empty: any
  Mem mem = Mem::Unset;
  std::vector<int> mem_nodes;  // Prefer: one; Bind, Interleave: one or more
  bool any() const { return !cpu_nodes.empty() || mem != Mem::Unset; }
  bool operator==(const NumaPolicy&) const = default;
};
// fio's name of the mode ("bind"); "" for Unset.
inline const char* to_string(NumaPolicy::Mem m) {
  static const char* const kModes[] = {"", "default", "prefer", "bind", "interleave", "local"};
  return kModes[static_cast<int>(m)];
}

// fio's write buffer contents: buffer_compress_percentage (each buffer_compress_chunk of a write
// is that share zeros after random bytes), dedupe_percentage (that share of the writes repeats
// earlier content: dedupe_mode repeat, the job's previous write's; working_set, one of the first
// dedupe_working_set_percentage of the region's worth of its writes), dedupe_global (one working
// set for every job of the run that asks for it). Each write then carries a content header
// (block_header.h, version 2), the same bytes for the same content.
struct BufferContent {
  uint32_t compress_percentage = 0;
  uint32_t compress_chunk = 512;
  uint32_t dedupe_percentage = 0;
  bool working_set = false;  // dedupe_mode=working_set (fio's default: repeat)
  uint32_t working_set_percentage = 5;
  bool dedupe_global = false;
  bool any() const { return compress_percentage || dedupe_percentage; }
  bool operator==(const BufferContent&) const = default;
};

struct JobSpec {
  std::string name = "diskprobe";   // profile name
  std::string description;
  std::string source;               // seed document the profile reproduces

  RwMode rw = RwMode::RandWrite;
  unsigned rwmixread = 50;          // percent reads for randrw / readwrite
  uint32_t bs = 4096;
  uint32_t iodepth = 1;
  // fio's iodepth_low: once the queue is full, new I/Os wait until this few are in flight, then
  // it fills again (0, or iodepth and above: kept full).
  uint32_t iodepth_low = 0;
  // fio's "IO depths" figures (Results' DepthStats) are counted: what diskprobe fio's reports
  // print. A count at every submit and reap, so only where asked (the extras path).
  bool io_depths = false;
  uint32_t numjobs = 1;
  double runtime_s = 30;            // 0 = until size is done
  bool time_based = true;           // loop over the region until runtime ends
  double ramp_time_s = 0;           // excluded from statistics
  // fio's startdelay: this job's first I/O waits this long after the start of the jobs it runs
  // with (its runtime counts from then).
  double startdelay_s = 0;
  uint32_t loops = 1;               // fio's loops: a size-bounded job does its bytes this many times
  uint64_t number_ios = 0;          // fio's number_ios: each job stops after this many I/Os, if not before; 0 = no cap
  // fio's wait_for: the job run at the same time whose jobs must all end before this one starts
  // (by name; "" = none; a job of an earlier group has ended already).
  std::string wait_for;
  uint64_t offset = 0;              // start of the region, bytes
  uint64_t size = 0;                // length of the region, bytes; 0 = to the end
  bool direct = true;
  bool sync = false;                // fio's sync=1 (dd's oflag=sync): O_SYNC, each write durable when it completes
  bool randrepeat = true;           // same offsets every run (seeded from randseed)
  uint64_t randseed = 0x6469736b;   // "disk"
  bool refill_buffers = false;      // fresh random data for each write
  EngineKind engine = EngineKind::IoUring;
  // fio's directory: one file per job in DIR instead of a device (the command line's
  // --directory wins over a profile's).
  std::string directory;

  // fio's bs=R,W: writes use bs_write when it is set (0 = bs for both directions).
  uint32_t bs_write = 0;
  // offset=N% / size=N%: a share of the target, resolved against its size (0 = unset; then
  // offset/size in bytes apply). Kept as given so a profile means the same on any disk.
  double offset_percent = 0;
  double size_percent = 0;
  uint64_t io_size = 0;             // bytes each job transfers (may loop the region); 0 = size
  // fio's default: random I/O touches every block once per pass before any block twice.
  bool norandommap = false;
  std::vector<int> cpus_allowed;    // empty = no restriction
  bool cpus_allowed_split = false;  // cpus_allowed_policy=split: job j on cpus_allowed[j % n]
  bool sqpoll = false;              // a kernel thread polls the submission queue
  bool hipri = false;               // IOPOLL: completions polled, needs the device's poll queues
  // fio's force_async: every Nth I/O goes straight to io_uring's io-wq workers (IOSQE_ASYNC);
  // 0 = never. kForceAsyncAuto: a bio-based device's time-based run probes both and keeps the
  // faster (the engine's note says which); anything else never.
  static constexpr int kForceAsyncAuto = -1;
  int force_async = kForceAsyncAuto;
  // fio's iodepth_batch_submit: at most N new I/Os per io_uring_enter; 0 or N >= iodepth: every
  // free slot at once. kBatchSubmitAuto: every free slot at once, but random I/O on a loop
  // device one I/O per call while that keeps the queue at least half full (engine/job_plan.cpp
  // says why; the run's note says what each job chose).
  static constexpr int kBatchSubmitAuto = -1;
  int iodepth_batch_submit = kBatchSubmitAuto;
  ContinueOnError continue_on_error = ContinueOnError::None;
  VerifyKind verify = VerifyKind::None;
  bool do_verify = true;            // with verify: read back and check what a write job wrote
  // fio's verify_interval: a header and checksum for every chunk of this many bytes of a block
  // (0: one per block), so a torn or misplaced sector is found where it is.
  uint32_t verify_interval = 0;
  // fio's verify_pattern: what a write carries after its header(s), repeated (empty: random data).
  std::vector<uint8_t> verify_pattern;
  // fio's verify_backlog: after every N writes the job reads those N back and checks them, as
  // its own reads (0: the read-back comes after all the writes); what is left at the end last.
  uint32_t verify_backlog = 0;
  // fio's verify_dump: a block that fails its check is written to NAME.OFFSET.received.
  bool verify_dump = false;
  std::vector<double> percentiles;  // clat percentiles to report; empty = fio's default list
  // fio's group_reporting: the text report shows the jobs summed. Every seed line asks for
  // it, so it is on unless turned off; off, each job of numjobs > 1 gets its own block too.
  bool group_reporting = true;

  // bssplit, bsrange, blockalign, rw=<op>:<n>, random_distribution, thinktime (io_shape.h);
  // with several sizes, bs and bs_write are each direction's smallest.
  IoShape shape;

  uint32_t write_bs() const { return bs_write ? bs_write : bs; }
  // The largest I/O of either direction.
  uint32_t max_bs() const {
    const uint32_t r = diskprobe::max_bs(shape, 0, bs), w = diskprobe::max_bs(shape, 1, write_bs());
    return r > w ? r : w;
  }

  // fio's rate_iops=R,W and rate=R,W: each job's cap per direction, [0] read, [1] write
  // (0 = no cap). rate is in bytes/s.
  uint64_t rate_iops[2] = {0, 0};
  // fio's rate_process=poisson: the capped I/Os arrive as a Poisson process (exponential gaps
  // of the rate's mean) instead of evenly spaced (linear).
  bool rate_poisson = false;
  uint64_t rate_bytes[2] = {0, 0};
  // fio's ratemin and rate_iops_min (R,W): each job's floor per direction, judged every
  // ratecycle_ms after a 2 s settle (fio's check_min_rate); below it the job fails with EIO.
  uint64_t rate_min_bytes[2] = {0, 0};
  uint64_t rate_min_iops[2] = {0, 0};
  uint32_t ratecycle_ms = 1000;
  SteadyState steadystate;
  IoLogs logs;
  // fio's flow=W (flow_id, flow_sleep): jobs run at once with the same flow_id issue I/Os in the
  // proportion of their weights (fio 3.33's: a job waits while its share of the flow's I/Os is
  // above its share of the weights; flow_sleep: it waits for its I/Os in flight, then sleeps
  // that many microseconds). 0 = not in a flow.
  IoPriority priority;
  // fio's exitall (exit_what): when one of this job's clones ends, the jobs it names end too:
  // Group, those run at once in its reporting group (`group`, fio's groupid); Stonewall, all
  // run at once; All, those and every job after them (no later group starts).
  enum class ExitWhat { Group, Stonewall, All };
  struct ExitAll {
    bool on = false;
    ExitWhat what = ExitWhat::Group;
    int group = 0;
    bool operator==(const ExitAll&) const = default;
  } exitall;
  uint32_t flow = 0;
  uint32_t flow_id = 0;
  uint64_t flow_sleep_us = 0;
  LatencyTarget latency;
  NumaPolicy numa;
  BufferContent content;

  HostWishes host;

  // Acceptance checks the profile carries ("iops>=38000"); see diskprobe/acceptance/expect.h.
  std::vector<std::string> expect;
  // Where the profile knowingly differs from its seed command (libaio -> io_uring, ...).
  std::vector<std::string> notes;
};

// The one JSON form of a JobSpec: `profile show --json` and the run report's "job" object.
// Every number carries its unit in its name.
nlohmann::json to_json(const JobSpec& s);

}  // namespace diskprobe
