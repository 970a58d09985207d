// The steps of a run behind small interfaces: the real ones (system_steps.h) touch devices,
// sysfs and the host; tests drive the sequence (run.h) with fakes and no root.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "diskprobe/device/block_device.h"
#include "diskprobe/device/environment.h"
#include "diskprobe/engine/engine.h"
#include "diskprobe/report/run_report.h"
#include "diskprobe/safety/preflight.h"
#include "diskprobe/safety/wipe.h"
#include "diskprobe/tuning/plan.h"

namespace diskprobe::run {

class Preflight {
 public:
  virtual ~Preflight() = default;
  // A DEVICE that is not a device name or no block device: bad input (a name of nothing is
  // Ok here: the preflight refuses it).
  virtual Status name(const std::string& device_arg) = 0;
  virtual safety::Checked check(const std::string& device_arg, safety::Mode mode) = 0;
  // Right before the engine opens the device.
  virtual safety::Verdict recheck(const safety::Checked& checked) = 0;
};

class Tuner {
 public:
  virtual ~Tuner() = default;
  virtual Result<tuning::Plan> plan(const BlockDevice& dev, const JobSpec& spec) = 0;
  virtual Status apply(const std::string& disk, const tuning::Plan& plan) = 0;
  // Puts back what apply changed; safe to call twice, and without apply.
  virtual Status restore() = 0;
  virtual std::vector<AppliedSetting> applied() const = 0;
};

class Engine {
 public:
  virtual ~Engine() = default;
  // `dev` is the block device of a device run, nullptr for files.
  virtual Result<Results> run(const JobSpec& spec, const Target& target, const EngineOptions& opts,
                              const BlockDevice* dev) = 0;
  // Jobs of different specs at once (engine.h run_group), on the device `dev`.
  virtual Result<std::vector<Results>> run_group(const std::vector<GroupMember>& members, const EngineOptions& opts,
                                                 const BlockDevice* dev) = 0;
};

class Zeroing {
 public:
  virtual ~Zeroing() = default;
  // Zeroes the device's edges inside `region` (the engine's) through the held claim.
  virtual Result<std::vector<safety::ByteRange>> zero(const safety::Checked& checked, const Region& region) = 0;
};

// What a device run reads from the host besides the preflight, and the scratch device.
class Host {
 public:
  virtual ~Host() = default;
  // fio's filename=FILE: a regular file, or a path outside /dev not there yet.
  virtual bool names_a_file(const std::string& arg) = 0;
  // A scratch loop device of `bytes`, kept until the Host goes; its path.
  virtual Result<std::string> scratch(uint64_t bytes) = 0;
  virtual void device_facts(const BlockDevice& dev, Target& target) = 0;  // poll, bio-based
  virtual Result<DiskCounters> counters(const BlockDevice& dev) = 0;
  virtual RunEnvironment environment(const BlockDevice& dev) = 0;
};

// The job files of a file or --directory run.
class Files {
 public:
  virtual ~Files() = default;
  // May FILE be written as asked (not someone's data without diskprobe's header)?
  virtual Status usable(const std::string& file, const JobSpec& spec) = 0;
  // Existing files a write run would reuse hold no signature.
  virtual Status no_signature(const std::vector<std::string>& paths, const JobSpec& spec) = 0;
  // Opens FILE, or creates the job files in spec.directory when FILE is empty.
  virtual Result<Target> open(const std::string& file, const JobSpec& spec, bool keep) = 0;
  virtual bool created_any() const = 0;
  virtual void remove() = 0;
};

// --output and --report, opened by the caller before the preflight.
class Outputs {
 public:
  virtual ~Outputs() = default;
  virtual Status report(const RunReport& report) = 0;  // "the report is lost: ..." on failure
  // A refused run: CI still gets its JUnit report (the preflight testcase fails), if asked.
  virtual void refusal(const RunReport& refused) = 0;
};

struct Steps {
  Preflight& preflight;
  Tuner& tuner;
  Engine& engine;
  Zeroing& zeroing;
  Host& host;
  Files& files;
  Outputs& outputs;
};

}  // namespace diskprobe::run
