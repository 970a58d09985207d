// The run's real steps (run/steps.h): the preflight, the tuning guard, the engine with its
// progress line, the zeroing, the host's sysfs, the job files, and --output / --report.
#pragma once

#include <optional>
#include <string>

#include "diskprobe/cli/args.h"
#include "diskprobe/base/output_file.h"
#include "diskprobe/device/loop_device.h"
#include "diskprobe/report/report.h"
#include "diskprobe/run/steps.h"
#include "diskprobe/spec/file_targets.h"
#include "diskprobe/tuning/restore.h"

namespace diskprobe::cli {

class SystemPreflight : public run::Preflight {
 public:
  SystemPreflight(const SysRoot& root, safety::Options options) : root_(root), options_(options) {}
  Status name(const std::string& device_arg) override;
  safety::Checked check(const std::string& device_arg, safety::Mode mode) override;
  safety::Verdict recheck(const safety::Checked& checked) override;

 private:
  const SysRoot& root_;
  safety::Options options_;
};

class SystemTuner : public run::Tuner {
 public:
  SystemTuner(const SysRoot& root, const std::string& journal_dir) : root_(root), guard_(root, journal_dir) {}
  Result<tuning::Plan> plan(const BlockDevice& dev, const JobSpec& spec) override;
  Status apply(const std::string& disk, const tuning::Plan& plan) override { return guard_.apply(disk, plan); }
  Status restore() override { return guard_.restore(); }
  std::vector<AppliedSetting> applied() const override { return guard_.applied(); }

 private:
  const SysRoot& root_;
  tuning::RestoreGuard guard_;
};

class SystemEngine : public run::Engine {
 public:
  explicit SystemEngine(const SysRoot& root) : root_(root) {}
  Result<Results> run(const JobSpec& spec, const Target& target, const EngineOptions& opts,
                      const BlockDevice* dev) override;
  Result<std::vector<Results>> run_group(const std::vector<GroupMember>& members, const EngineOptions& opts,
                                         const BlockDevice* dev) override;

 private:
  const SysRoot& root_;
};

class SystemZeroing : public run::Zeroing {
 public:
  Result<std::vector<safety::ByteRange>> zero(const safety::Checked& checked, const Region& region) override;
};

class SystemHost : public run::Host {
 public:
  explicit SystemHost(const SysRoot& root) : root_(root) {}
  bool names_a_file(const std::string& arg) override;
  Result<std::string> scratch(uint64_t bytes) override;
  void device_facts(const BlockDevice& dev, Target& target) override;
  Result<DiskCounters> counters(const BlockDevice& dev) override { return read_disk_counters(root_, dev); }
  RunEnvironment environment(const BlockDevice& dev) override;

 private:
  const SysRoot& root_;
  std::optional<LoopDevice> scratch_;
};

class SystemFiles : public run::Files {
 public:
  Status usable(const std::string& file, const JobSpec& spec) override;
  Status no_signature(const std::vector<std::string>& paths, const JobSpec& spec) override;
  Result<Target> open(const std::string& file, const JobSpec& spec, bool keep) override;
  bool created_any() const override { return files_ && !files_->created().empty(); }
  void remove() override {
    if (files_) files_->remove();
  }

 private:
  std::optional<JobFiles> files_;
};

// --output and --report, opened before the preflight (see OutputFile::open). The report: on
// stdout in the asked format, or into --output FILE with the text report on the terminal;
// and the HTML page with --report.
class CliOutputs : public run::Outputs {
 public:
  static Result<CliOutputs> open(const Args& a, const SysRoot& root, const JobSpec& spec, OutputFormat format);
  Status report(const RunReport& report) override;
  void refusal(const RunReport& refused) override;
  // The report in the chosen format on stdout or into --output FILE (then `text` on stdout),
  // and `html` into --report FILE.
  Status write(const std::string& formatted, const std::string& text, const std::string& html);
  OutputFormat format() const { return format_; }
  bool has_output_file() const { return output_.has_value(); }

 private:
  OutputFormat format_ = OutputFormat::Text;
  std::optional<OutputFile> output_, report_;
};

// run_phases' own report and refusal are not written: accept and fio write their one report
// of all the phases after.
struct DeferredOutputs : run::Outputs {
  Status report(const RunReport&) override { return Ok{}; }
  void refusal(const RunReport&) override {}
};

// The real steps but the outputs, as run and accept build them; members in the order their
// destructors must run backwards (the tuning guard, then the scratch device, last).
struct SystemSteps {
  SystemHost host;
  SystemPreflight preflight;
  SystemTuner tuner;
  SystemEngine engine;
  SystemZeroing zeroing;
  SystemFiles files;
  SystemSteps(const SysRoot& root, safety::Options options, const std::string& journal)
      : host(root), preflight(root, options), tuner(root, journal), engine(root) {}
  run::Steps with(run::Outputs& outputs) { return {preflight, tuner, engine, zeroing, host, files, outputs}; }
};

}  // namespace diskprobe::cli
