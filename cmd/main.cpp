// diskprobe's command line: parse, call the modules in order, print, exit code.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <tuple>
#include <iostream>
#include <liburing.h>
#include <optional>

#include <blkid/blkid.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "acceptance.h"
#include "args.h"
#include "diskprobe/device/block_device.h"
#include "diskprobe/engine/engine.h"
#include "diskprobe/device/environment.h"
#include "diskprobe/spec/host_checks.h"
#include "diskprobe/report/html_report.h"
#include "diskprobe/base/json_io.h"
#include "diskprobe/device/loop_device.h"
#include "diskprobe/base/output_file.h"
#include "diskprobe/report/report.h"
#include "diskprobe/spec/file_targets.h"
#include "diskprobe/base/units.h"
#include "diskprobe/base/write_out.h"
#include "diskprobe/profiles/profiles.h"
#include "diskprobe/safety/file_target.h"
#include "diskprobe/safety/preflight.h"
#include "diskprobe/safety/wipe.h"
#include "diskprobe/tuning/plan.h"
#include "diskprobe/tuning/restore.h"
#include "diskprobe/tuning/topology.h"
#include "out.h"
#include "progress.h"
#include "render.h"
#include "stop_signals.h"
#include "tools.h"
#include "version.h"

namespace {

using namespace diskprobe;
using nlohmann::json;

using cli::fail;
using cli::kExpectations;
using cli::kOk;
using cli::kRefused;
using cli::kRuntime;
using cli::kUsage;
using cli::print;
using cli::print_json;

std::atomic<bool> g_stop{false};
volatile sig_atomic_t g_signal = 0;

void on_signal(int sig) {
  g_signal = sig;
  g_stop.store(true);
}

// SIGINT/SIGTERM/SIGHUP only set a flag: the run stops at its next batch and unwinds, so
// every RestoreGuard and the scratch device are cleaned up by their destructors. Installed
// from .preinit_array (below), before any library's constructor and main. The launcher
// (launcher.cpp) blocked them at the first instruction, before the dynamic loader; blocked
// here too (run without the launcher: the window of the loader stays open), then unblocked,
// so nothing diskprobe starts inherits them blocked. One left pending (in the loader, or
// blocked by the parent across exec) is delivered to the handler then. SIGPIPE is ignored: a
// closed pipe is a write error (EPIPE) with a message.
void install_signal_handlers() {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  for (int sig : cli::kStopSignals) sigaddset(&stop_signals, sig);
  sigprocmask(SIG_BLOCK, &stop_signals, nullptr);
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sa.sa_mask = stop_signals;
  sa.sa_flags = 0;  // no SA_RESTART: a blocking wait returns EINTR and sees the flag
  for (int sig : cli::kStopSignals) sigaction(sig, &sa, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  sigprocmask(SIG_UNBLOCK, &stop_signals, nullptr);
}
__attribute__((section(".preinit_array"), used)) void (*const install_early)() = install_signal_handlers;

std::optional<safety::Mode> mode_for(const cli::Args& a) {
  if (a.mode == "read") return safety::Mode::Read;
  return safety::Mode::Write;
}

safety::Options preflight_options(const cli::Args& a, bool hold) {
  safety::Options o;
  o.hold = hold;
  o.paranoid = a.paranoid      ? safety::Paranoid::On
               : a.no_paranoid ? safety::Paranoid::Off
                               : safety::Paranoid::Auto;
  o.allow_nonzero = a.allow_nonzero;
  return o;
}

// Random benchmark data can look like a partition table (fio issue #1942): the edges are
// zeroed after every write run, interrupted or failed ones too, through the held claim, only
// inside the region the engine was given.
bool zero_after_write(const safety::Checked& c, const Region& region) {
  auto zeroed = safety::zero_edges(c.hold, c.device.path, c.device.size_bytes, region);
  if (!zeroed) {
    std::fprintf(stderr, "diskprobe: error: %s\n", zeroed.error().c_str());
    return false;
  }
  std::string what;
  for (const auto& r : *zeroed) {
    what +=
        (what.empty() ? "" : " and ") + cli::human_bytes(r.length) + " at offset " + std::to_string(r.offset);
  }
  if (what.empty()) {
    spdlog::info("the run's region does not reach the first or last 4 MiB of {}: nothing to zero",
                 c.device.path);
    return true;
  }
  spdlog::info(
      "zeroed the first and last 4 MiB of {} ({}) so the benchmark data leaves no phantom partition "
      "table or signature behind",
      c.device.path, what);
  return true;
}

int cmd_version() {
  print(cli::version_text(probe_uring_features()));
  return kOk;
}

int cmd_profiles(const cli::Args& a) {
  auto all = profiles::list();
  if (a.json) {
    json out = json::array();
    for (const auto& p : all) out.push_back({{"name", p.name}, {"description", p.description}, {"path", p.path}});
    print_json(out);
    return kOk;
  }
  for (const auto& p : all) {
    char line[512];
    std::snprintf(line, sizeof line, "%-24s %s\n", p.name.c_str(), p.description.c_str());
    print(line);
  }
  return kOk;
}

Result<JobSpec> spec_from(const cli::Args& a, std::string_view name) {
  auto spec = profiles::load(name);
  if (!spec) return spec;
  auto st = profiles::apply_overrides(*spec, a.overrides);
  if (!st) return make_error(st.error());
  if (!a.name.empty()) spec->name = a.name;  // fio's --name labels the job in the report
  return spec;
}

int cmd_profile(const cli::Args& a) {
  if (a.positional.size() != 2 || a.positional[0] != "show") {
    return fail(kUsage, "usage: diskprobe profile show NAME [--json]");
  }
  auto spec = spec_from(a, a.positional[1]);
  if (!spec) return fail(kUsage, spec.error());
  print(a.json ? dump_json(diskprobe::to_json(*spec)) + "\n" : cli::spec_text(*spec));
  return kOk;
}

int cmd_devices(const cli::Args& a, const SysRoot& root) {
  std::vector<BlockDevice> devs;
  std::vector<safety::Verdict> verdicts;
  for (const auto& name : list_disks(root)) {
    auto dev = read_block_device(root, name);
    if (!dev) continue;
    if (dev->size_bytes == 0) continue;  // unconfigured loop/zram slots are not devices yet
    verdicts.push_back(
        safety::preflight(root, name, safety::Mode::Write, preflight_options(a, false)).verdict);
    devs.push_back(std::move(*dev));
  }
  if (a.json) {
    json out = json::array();
    for (size_t i = 0; i < devs.size(); ++i) out.push_back(cli::device_json(devs[i], verdicts[i]));
    print_json(out);
  } else {
    print(cli::devices_text(devs, verdicts));
  }
  return kOk;
}

// A name that is no block device (a FIFO, /dev/null, a directory) is bad input, 2; one that
// names nothing is refused (3, not-found), as the README says. `check` and `run` answer alike.
constexpr const char* kRefusedWhy = "refused by the preflight: nothing was written";

cli::Exit name_exit(NameError why) { return why == NameError::NotFound ? kRefused : kUsage; }

// run and tune: a DEVICE that is not a device name, or no block device, is bad input before
// anything else; nullopt for a name, even one of nothing (the preflight refuses that).
std::optional<int> bad_device_name(const std::string& arg) {
  NameError why = NameError::None;
  if (auto name = parse_device_name(arg, &why); !name && why != NameError::NotFound) {
    return fail(name_exit(why), name.error());
  }
  return std::nullopt;
}

// The preflight's refusal, as run and tune say it: the verdict on stderr, then one line.
int refused(const safety::Verdict& v, const std::string& why) {
  std::fputs(cli::verdict_text(v).c_str(), stderr);
  return cli::refuse(v, v.device + " " + why);
}

int cmd_check(const cli::Args& a, const SysRoot& root) {
  if (a.positional.size() != 1) return fail(kUsage, "usage: diskprobe check DEVICE [--mode write|read] [--json]");
  auto checked = safety::preflight(root, a.positional[0], *mode_for(a), preflight_options(a, false));
  if (a.json) {
    print_json(cli::verdict_json(checked.verdict));
  } else {
    print(cli::verdict_text(checked.verdict));
  }
  if (checked.device.name.empty()) {  // the name did not resolve: say why as `run` does
    NameError why = NameError::None;
    if (!parse_device_name(a.positional[0], &why)) return name_exit(why);
  }
  return checked.verdict.safe() ? kOk : kRefused;
}

// The tuning journals' directory; DISKPROBE_JOURNAL moves it (tests that must not meet
// another run's).
std::string journal_dir() {
  const char* env = std::getenv("DISKPROBE_JOURNAL");
  return env && *env ? env : tuning::kDefaultJournalDir;
}

// --strict: a plan that falls short of the profile is a usage error, before any change.
std::optional<std::string> strict_refusal(const cli::Args& a, const tuning::Plan& plan) {
  if (!a.strict || plan.deviations.empty()) return std::nullopt;
  std::string msg = "--strict: ";
  for (size_t i = 0; i < plan.deviations.size(); ++i) msg += (i ? "; " : "") + plan.deviations[i];
  return msg + "; nothing was changed (change the overrides, or drop --strict)";
}

int cmd_tune(const cli::Args& a, const SysRoot& root) {
  if (a.restore && !a.positional.empty()) {
    return fail(kUsage, "tune --restore takes no DEVICE: it restores what every killed run left (devices that "
                        "are gone too); drop " + excerpt(a.positional[0]));
  }
  if (a.restore) {
    auto r = tuning::restore_all(root, journal_dir());
    if (a.json) {
      print_json(cli::restore_json(r));
    } else {
      print(cli::restore_text(r, journal_dir()));
    }
    for (const auto& l : r.left) spdlog::info("left alone: {}", l);
    // 1 only when a killed run's setting is still changed: a gone device left nothing behind,
    // and a live run restores its own.
    for (const auto& f : r.failed) fail(kRuntime, f);
    return r.failed.empty() ? kOk : kRuntime;
  }
  if (a.positional.size() != 1) {
    return fail(kUsage, "usage: diskprobe tune DEVICE [--profile NAME] [--json] [--apply]");
  }
  auto spec = spec_from(a, a.profile.empty() ? "essd-plx-latency" : a.profile);
  if (!spec) return fail(kUsage, spec.error());
  if (auto rc = bad_device_name(a.positional[0])) return *rc;
  auto name = parse_device_name(a.positional[0]);
  auto dev = name ? read_block_device(root, *name) : Result<BlockDevice>(make_error(name.error()));
  if (!dev) {  // names nothing: refused (3, not-found) as check and run refuse it
    auto v = safety::preflight(root, a.positional[0], safety::Mode::Read, preflight_options(a, false)).verdict;
    if (v.safe()) return fail(kRuntime, dev.error());
    return refused(v, kRefusedWhy);
  }
  auto topo = tuning::read_topology(root, *dev);
  if (!topo) return fail(kRuntime, topo.error());
  auto plan = tuning::make_plan(*topo, *spec);
  if (auto refusal = strict_refusal(a, plan)) return fail(kUsage, *refusal);
  if (a.json) {
    print_json({{"profile", spec->name}, {"topology", cli::topology_json(*topo)}, {"plan", cli::plan_json(plan)}});
  } else {
    print(cli::tune_text(*topo, plan));
  }
  if (!a.apply) return kOk;
  tuning::RestoreGuard guard(root, journal_dir());
  auto st = guard.apply(dev->disk, plan);
  if (!st) return fail(kRuntime, st.error());
  std::fprintf(stderr, "diskprobe: settings applied; press Ctrl-C to restore them\n");
  while (!g_stop.load()) pause();
  auto restored = guard.restore();
  if (!restored) return fail(kRuntime, restored.error());
  std::fprintf(stderr, "diskprobe: settings restored\n");
  return kOk;
}

// --output and --report, opened before the preflight (see OutputFile::open).
struct Outputs {
  std::optional<OutputFile> output, report;
};

Result<Outputs> open_outputs(const cli::Args& a, const SysRoot& root, const JobSpec& spec) {
  std::vector<std::string> targets = a.positional;
  if (!spec.directory.empty()) targets = job_file_paths(spec.directory, spec);
  Outputs o;
  for (auto [option, path, slot] : {std::tuple{"--output", &a.output_file, &o.output},
                                    std::tuple{"--report", &a.report_file, &o.report}}) {
    if (path->empty()) continue;
    auto f = OutputFile::open(option, *path, root, targets);
    if (!f && slot == &o.output) cli::leave_json_file();
    if (!f) return make_error(f.error());
    slot->emplace(std::move(*f));
    targets.push_back(*path);  // --output and --report the same file: the second is refused
  }
  return o;
}

// A failed verify or a job stopped by an I/O error fails the run after the report is out.
// The report: on stdout in the asked format, or into --output FILE with the text report on
// the terminal; and the HTML page with --report.
int write_outputs(Outputs& out, const Results& results, OutputFormat format) {
  if (out.output) {
    if (auto st = out.output->write(render(results, format)); !st) {
      return fail(kRuntime, "the report is lost: " + st.error());
    }
    cli::leave_json_file();
    print(render_text(results));
  } else {
    print(render(results, format));
  }
  if (out.report) {
    if (auto st = out.report->write(render_html(results)); !st) {
      return fail(kRuntime, "the HTML report is lost: " + st.error());
    }
  }
  return kOk;
}

int run_outcome(const Results& r) {
  if (r.verify.mismatches) {
    const auto& m = r.verify.first.front();
    return fail(kRuntime, "verify: " + std::to_string(r.verify.mismatches) + " of " +
                              std::to_string(r.verify.blocks_checked) + " blocks did not match; first at offset " +
                              std::to_string(m.offset) + ": " + mismatch_text(m));
  }
  if (r.errors.stopped) return fail(kRuntime, r.errors.stop_reason);
  size_t unmet = 0;
  for (const auto& e : r.expectations) unmet += e.met ? 0 : 1;
  if (unmet) {
    return fail(kExpectations, std::to_string(unmet) + " of " + std::to_string(r.expectations.size()) +
                                   " expectations not met: see the report");
  }
  return kOk;
}

// A DEVICE argument that names a regular file, or a path outside /dev that does not exist
// yet (fio's filename=FILE: created at `size`). Absolute or ./relative, never with "..".
bool names_a_file(const std::string& arg) {
  if (arg.rfind("/", 0) != 0 && arg.rfind("./", 0) != 0) return false;
  if (arg.find("/../") != std::string::npos) return false;
  struct stat st {};
  if (::stat(arg.c_str(), &st) == 0) return S_ISREG(st.st_mode);
  // A missing /dev/vdx is a mistyped device, not a file to create (/dev/shm is tmpfs).
  bool under_dev = arg.rfind("/dev/", 0) == 0 && arg.rfind("/dev/shm/", 0) != 0;
  return errno == ENOENT && !under_dev;
}

// --directory DIR or a file: no device preflight and no tuning; the filesystem is checked
// instead (writable, room for the files, O_DIRECT), and the files this run made are removed
// afterwards unless --keep-files.
int cmd_run_files(const cli::Args& a, const JobSpec& spec, OutputFormat format,
                  const std::vector<Expectation>& expectations, Outputs& outputs) {
  if (spec.directory.empty()) {
    if (auto ok = may_use_file(a.positional[0], spec); !ok) return fail(kUsage, ok.error());
  }
  for (const auto& path : spec.directory.empty() ? a.positional : job_file_paths(spec.directory, spec)) {
    struct stat st {};
    if (!does_writes(spec.rw) || ::stat(path.c_str(), &st) != 0) continue;  // created by this run
    if (auto ok = safety::check_reused_file(path); !ok) return fail(kRefused, ok.error());
  }
  auto files = spec.directory.empty() ? JobFiles::open_file(a.positional[0], spec, a.keep_files)
                                      : JobFiles::create_in_directory(spec.directory, spec, a.keep_files);
  if (!files) return fail(kRuntime, files.error());
  if (g_stop) return fail(kRuntime, "interrupted before the run started");
  if (auto st = validate(spec, files->target()); !st) return fail(kUsage, st.error());
  EngineOptions opts;
  opts.stop = &g_stop;
  opts.settle_ns = kSettleAfterOwnIoNs;  // the preflight has just read the device
  auto results = run_jobs(spec, files->target(), opts);
  if (!results) return fail(kRuntime, results.error());
  results->preflight = "files: no device preflight (a filesystem holds them)";
  results->notes.insert(results->notes.end(), a.notes.begin(), a.notes.end());
  if (a.keep_files && !files->created().empty()) results->notes.push_back("--keep-files: the job files were kept");
  files->remove();
  results->expectations = check_expectations(expectations, *results);
  if (int rc = write_outputs(outputs, *results, format); rc != kOk) return rc;
  if (results->interrupted) return fail(kRuntime, "interrupted: partial results above");
  return run_outcome(*results);
}

// The scratch device, the held preflight claim and the tuning guard live until the report is
// written; their destructors run on every return path.
int cmd_run(const cli::Args& args, const SysRoot& root) {
  cli::Args a = args;
  if (!a.filename.empty() && a.positional.empty()) a.positional.push_back(a.filename);  // fio's --filename
  if (a.profile.empty()) return fail(kUsage, "run needs --profile NAME: see 'diskprobe profiles'");
  if (!a.directory.empty() && (!a.positional.empty() || !a.scratch.empty())) {
    return fail(kUsage, "give either --directory DIR, a DEVICE or --scratch SIZE, not more than one");
  }
  if (!a.scratch.empty() && !a.positional.empty()) {
    return fail(kUsage, "give either a DEVICE or --scratch SIZE, not both");
  }
  auto format = parse_output_format(a.output_format);
  if (!format) {
    return fail(kUsage, "--output-format " + a.output_format +
                            ": use text, json, junit, fio-json, fio-json+ or openmetrics");
  }
  auto spec = spec_from(a, a.profile);
  if (!spec) return fail(kUsage, spec.error());
  for (const auto& n : a.notes) spdlog::info("{}", n);
  if (!a.directory.empty()) spec->directory = a.directory;  // the command line wins
  // A profile's directory applies only where no DEVICE or --scratch names another target.
  if (a.directory.empty() && (!a.positional.empty() || !a.scratch.empty())) spec->directory.clear();
  auto expectations = cli::gather_expectations(a, *spec);
  if (!expectations) return fail(kUsage, expectations.error());
  // Everything that can be checked without the target, before the preflight or any change.
  if (auto st = validate_on_host(*spec, root); !st) return fail(kUsage, st.error());
  auto outputs = open_outputs(a, root, *spec);
  if (!outputs) return fail(kUsage, outputs.error());
  if (!spec->directory.empty() || (a.scratch.empty() && a.positional.size() == 1 && names_a_file(a.positional[0]))) {
    return cmd_run_files(a, *spec, *format, *expectations, *outputs);
  }
  if (a.scratch.empty() && a.positional.size() != 1) {
    return fail(kUsage, "run needs a DEVICE (like vdc or /dev/vdc), --scratch SIZE or --directory DIR");
  }

  std::optional<LoopDevice> scratch;
  std::string device_arg = a.scratch.empty() ? a.positional[0] : "";
  if (!a.scratch.empty()) {
    auto size = parse_size(a.scratch);
    if (!size) return fail(kUsage, "--scratch: " + size.error());
    LoopDevice::Options o;
    o.size_bytes = *size;
    auto loop = LoopDevice::create(o);
    if (!loop) return fail(kRuntime, "cannot create the scratch device: " + loop.error());
    scratch.emplace(std::move(*loop));
    device_arg = scratch->path();
    spdlog::info("scratch device {} ({} sparse file in {}, removed when the run ends)", device_arg,
                 cli::human_bytes(*size), scratch->backing_file().substr(0, scratch->backing_file().rfind('/')));
  }
  if (g_stop) return fail(kRuntime, "interrupted before the run started; nothing was changed");

  if (auto rc = bad_device_name(device_arg)) return *rc;
  auto mode = does_writes(spec->rw) ? safety::Mode::Write : safety::Mode::Read;
  auto checked = safety::preflight(root, device_arg, mode, preflight_options(a, /*hold=*/true));
  if (!checked.verdict.safe()) {
    if (outputs->output && *format == OutputFormat::Junit) {
      // CI still gets its report: the preflight testcase fails.
      Results refused;
      refused.spec = *spec;
      refused.device = checked.verdict.device;
      refused.preflight = checked.verdict.summary();
      refused.preflight_safe = false;
      if (auto st = outputs->output->write(render_junit(refused)); !st) {
        spdlog::error("the JUnit report is lost: {}", st.error());
      }
    }
    return refused(checked.verdict, kRefusedWhy);
  }
  const BlockDevice& dev = checked.device;
  Target target{dev.path, dev.size_bytes, dev.logical_block_size, device_identity(dev)};
  read_poll_support(root, dev.disk, target);
  read_bio_based(root, dev.disk, target);
  if (auto st = validate(*spec, target); !st) return fail(kUsage, st.error());
  const Region region = resolve_region(*spec, target);

  auto topo = tuning::read_topology(root, dev);
  if (!topo) return fail(kRuntime, topo.error());
  auto plan = tuning::make_plan(*topo, *spec);
  if (auto refusal = strict_refusal(a, plan)) return fail(kUsage, *refusal);
  spec->numjobs = plan.numjobs;  // fewer when the plan clamped them to the CPUs there are
  for (const auto& n : plan.notes) spdlog::info("{}", n);
  for (const auto& adv : plan.advice) spdlog::info("advice: {}", adv);

  tuning::RestoreGuard guard(root, journal_dir());
  if (!a.no_tune) {
    if (auto st = guard.apply(dev.disk, plan); !st) return fail(kRuntime, st.error());
  }
  if (g_stop) return fail(kRuntime, "interrupted before the run started; settings restored");

  // Checked again through the held O_EXCL descriptor right before the engine opens the device.
  // Read mode holds no descriptor (it needs no claim): a read run has nothing to recheck.
  if (auto again = mode == safety::Mode::Write ? safety::recheck(root, checked) : checked.verdict; !again.safe()) {
    return refused(again, "changed since the preflight: nothing was written");
  }
  auto before = read_disk_counters(root, dev);
  EngineOptions opts;
  opts.cpus = plan.cpus;
  opts.stop = &g_stop;
  opts.region = region;
  opts.settle_ns = kSettleAfterOwnIoNs;  // the preflight has just read the device
  std::optional<cli::ProgressLine> progress;
  progress.emplace(root, dev, *spec);
  auto results = run_jobs(*spec, target, opts);
  progress.reset();
  auto after = read_disk_counters(root, dev);
  bool zeroed = mode == safety::Mode::Read || zero_after_write(checked, region);
  if (!results) return fail(kRuntime, results.error());

  results->preflight = checked.verdict.summary();
  results->tuning = guard.applied();
  results->notes.insert(results->notes.end(), a.notes.begin(), a.notes.end());
  results->notes.insert(results->notes.end(), plan.notes.begin(), plan.notes.end());
  results->interrupted = g_stop.load();
  results->preflight_safe = true;
  results->environment = read_environment(root, dev, DISKPROBE_VERSION);
  if (before && after) results->disk = disk_stats_delta(*before, *after, results->runtime_s);
  if (auto st = guard.restore(); !st) {
    std::fprintf(stderr, "diskprobe: error: %s\n", st.error().c_str());
  }
  results->expectations = check_expectations(*expectations, *results);

  if (int rc = write_outputs(*outputs, *results, *format); rc != kOk) return rc;
  if (!zeroed) {
    return fail(kRuntime, "the benchmark data is still at the edges of " + dev.path +
                              ": zero its first and last 4 MiB yourself (dd if=/dev/zero of=" + dev.path +
                              " bs=1M count=4 oflag=direct, and again with seek= for the last 4 MiB)");
  }
  if (results->interrupted) {
    return fail(kRuntime, std::string("interrupted by ") + strsignal(g_signal) +
                              ": partial results above; every setting was restored");
  }
  return run_outcome(*results);
}

int dispatch(int argc, char** argv) {
  std::string error;
  auto args = diskprobe::cli::parse(argc, argv, error);
  if (!args) return fail(kUsage, error);
  if (args->help) return print(diskprobe::cli::usage()), kOk;
  if (args->version) return cmd_version();
  if (args->command.empty()) {
    std::fputs(diskprobe::cli::usage(), stderr);
    return fail(kUsage, "no command given");
  }

  auto logger = spdlog::stderr_color_st("diskprobe");
  logger->set_pattern("diskprobe: %v");
  logger->set_level(args->verbose ? spdlog::level::debug : spdlog::level::info);
  spdlog::set_default_logger(logger);

  const diskprobe::SysRoot root(args->sysfs, args->procfs);
  const std::string& c = args->command;
  if (c == "profiles") return cmd_profiles(*args);
  if (c == "profile") return cmd_profile(*args);
  if (c == "devices") return cmd_devices(*args, root);
  if (c == "check") return cmd_check(*args, root);
  if (c == "tune") return cmd_tune(*args, root);
  if (c == "compare") return diskprobe::cli::cmd_compare(*args);
  if (c == "aggregate") return diskprobe::cli::cmd_aggregate(*args);
  return cmd_run(*args, root);
}

}  // namespace

int main(int argc, char** argv) {
  diskprobe::guard_std_fds();
  diskprobe::cli::set_json_mode(diskprobe::cli::wants_json(argc, argv));
  auto file = diskprobe::cli::json_file(argc, argv);
  diskprobe::cli::set_json_file(std::move(file.path), std::move(file.others));
  return diskprobe::cli::finish(dispatch(argc, argv));
}
