#include "run_steps.h"

#include <sys/stat.h>

#include <cerrno>
#include <tuple>

#include <spdlog/spdlog.h>

#include "diskprobe/device/environment.h"
#include "diskprobe/report/html_report.h"
#include "diskprobe/safety/file_target.h"
#include "diskprobe/safety/wipe.h"
#include "diskprobe/tuning/topology.h"
#include "out.h"
#include "progress.h"
#include "diskprobe/cli/render.h"

namespace diskprobe::cli {

Status SystemPreflight::name(const std::string& device_arg) {
  NameError why = NameError::None;
  if (auto name = parse_device_name(root_, device_arg, &why); !name && why != NameError::NotFound) {
    return make_error(name.error());
  }
  return Ok{};
}

safety::Checked SystemPreflight::check(const std::string& device_arg, safety::Mode mode) {
  return safety::preflight(root_, device_arg, mode, options_);
}

safety::Verdict SystemPreflight::recheck(const safety::Checked& checked) { return safety::recheck(root_, checked); }

Result<tuning::Plan> SystemTuner::plan(const BlockDevice& dev, const JobSpec& spec) {
  auto topo = tuning::read_topology(root_, dev);
  if (!topo) return make_error(topo.error());
  return tuning::make_plan(*topo, spec);
}

Result<Results> SystemEngine::run(const JobSpec& spec, const Target& target, const EngineOptions& opts,
                                  const BlockDevice* dev) {
  std::optional<ProgressLine> progress;
  if (dev) progress.emplace(root_, *dev, spec);
  return run_jobs(spec, target, opts);
}

Result<std::vector<Results>> SystemEngine::run_group(const std::vector<GroupMember>& members,
                                                     const EngineOptions& opts, const BlockDevice* dev) {
  // The progress line follows the longest-planned member.
  const JobSpec* longest = members.front().spec;
  for (const auto& m : members) {
    if (m.spec->runtime_s + m.spec->startdelay_s > longest->runtime_s + longest->startdelay_s) longest = m.spec;
  }
  std::optional<ProgressLine> progress;
  if (dev) progress.emplace(root_, *dev, *longest);
  return diskprobe::run_group(members, opts);
}

Result<std::vector<safety::ByteRange>> SystemZeroing::zero(const safety::Checked& c, const Region& region) {
  auto zeroed = safety::zero_edges(c.hold, c.device.path, c.device.size_bytes, region);
  if (!zeroed) return zeroed;
  std::string what;
  for (const auto& r : *zeroed) {
    what += (what.empty() ? "" : " and ") + human_bytes(r.length) + " at offset " + std::to_string(r.offset);
  }
  if (what.empty()) {
    spdlog::info("the run's region does not reach the first or last 4 MiB of {}: nothing to zero",
                 c.device.path);
  } else {
    spdlog::info(
        "zeroed the first and last 4 MiB of {} ({}) so the benchmark data leaves no phantom partition "
        "table or signature behind",
        c.device.path, what);
  }
  return zeroed;
}

// A DEVICE argument that names a regular file, or a path outside /dev that does not exist
// yet (fio's filename=FILE: created at `size`). Absolute or ./relative, never with "..".
bool SystemHost::names_a_file(const std::string& arg) {
  if (arg.rfind("/", 0) != 0 && arg.rfind("./", 0) != 0) return false;
  if (arg.find("/../") != std::string::npos) return false;
  struct stat st {};
  if (::stat(arg.c_str(), &st) == 0) return S_ISREG(st.st_mode);
  // A missing /dev/vdx is a mistyped device, not a file to create (/dev/shm is tmpfs).
  bool under_dev = arg.rfind("/dev/", 0) == 0 && arg.rfind("/dev/shm/", 0) != 0;
  return errno == ENOENT && !under_dev;
}

Result<std::string> SystemHost::scratch(uint64_t bytes) {
  LoopDevice::Options o;
  o.size_bytes = bytes;
  auto loop = LoopDevice::create(o);
  if (!loop) return make_error(loop.error());
  scratch_.emplace(std::move(*loop));
  const std::string& backing = scratch_->backing_file();
  spdlog::info("scratch device {} ({} sparse file in {}, removed when the run ends)", scratch_->path(),
               human_bytes(bytes), backing.substr(0, backing.rfind('/')));
  return scratch_->path();
}

void SystemHost::device_facts(const BlockDevice& dev, Target& target) {
  read_poll_support(root_, dev.disk, target);
  read_driver_kind(root_, dev.disk, target);
}

RunEnvironment SystemHost::environment(const BlockDevice& dev) {
  return read_environment(root_, dev, DISKPROBE_VERSION);
}

Status SystemFiles::usable(const std::string& file, const JobSpec& spec) { return may_use_file(file, spec); }

Status SystemFiles::no_signature(const std::vector<std::string>& paths, const JobSpec& spec) {
  for (const auto& path : paths) {
    struct stat st {};
    if (!does_writes(spec.rw) || ::stat(path.c_str(), &st) != 0) continue;  // created by this run
    if (auto ok = safety::check_reused_file(path); !ok) return ok;
  }
  return Ok{};
}

Result<Target> SystemFiles::open(const std::string& file, const JobSpec& spec, bool keep) {
  auto files = file.empty() ? JobFiles::create_in_directory(spec.directory, spec, keep)
                            : JobFiles::open_file(file, spec, keep);
  if (!files) return make_error(files.error());
  files_.emplace(std::move(*files));
  return files_->target();
}

Result<CliOutputs> CliOutputs::open(const Args& a, const SysRoot& root, const JobSpec& spec, OutputFormat format) {
  std::vector<std::string> targets = a.positional;
  if (!spec.directory.empty()) targets = job_file_paths(spec.directory, spec);
  CliOutputs o;
  o.format_ = format;
  for (auto [option, path, slot] : {std::tuple{"--output", &a.output_file, &o.output_},
                                    std::tuple{"--report", &a.report_file, &o.report_}}) {
    if (path->empty()) continue;
    auto f = OutputFile::open(option, *path, root, targets);
    if (!f && slot == &o.output_) leave_json_file();
    if (!f) return make_error(f.error());
    slot->emplace(std::move(*f));
    targets.push_back(*path);  // --output and --report the same file: the second is refused
  }
  return o;
}

Status CliOutputs::report(const RunReport& results) {
  return write(render(results, format_), render_text(results), report_ ? render_html(results) : "");
}

Status CliOutputs::write(const std::string& formatted, const std::string& text, const std::string& html) {
  if (output_) {
    if (auto st = output_->write(formatted); !st) return make_error("the report is lost: " + st.error());
    leave_json_file();
    print(text);
  } else {
    print(formatted);
  }
  if (report_) {
    if (auto st = report_->write(html); !st) {
      return make_error("the HTML report is lost: " + st.error());
    }
  }
  return Ok{};
}

void CliOutputs::refusal(const RunReport& refused) {
  if (!output_ || format_ != OutputFormat::Junit) return;
  if (auto st = output_->write(render_junit(refused)); !st) spdlog::error("the JUnit report is lost: {}", st.error());
}

}  // namespace diskprobe::cli
