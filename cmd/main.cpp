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
#include "diskprobe/run/run.h"
#include "out.h"
#include "progress.h"
#include "render.h"
#include "run_steps.h"
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
using run::kRefusedWhy;

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
  if (auto refusal = a.strict ? run::strict_refusal(plan) : std::nullopt) return fail(kUsage, *refusal);
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

run::Request run_request(const cli::Args& a, JobSpec spec, std::vector<Expectation> expectations) {
  run::Request req;
  req.spec = std::move(spec);
  req.devices = a.positional;
  req.scratch = a.scratch;
  req.no_tune = a.no_tune;
  req.strict = a.strict;
  req.keep_files = a.keep_files;
  req.notes = a.notes;
  req.expectations = std::move(expectations);
  req.stop = &g_stop;
  req.stopped_by = [] { return std::string("interrupted by ") + strsignal(g_signal); };
  return req;
}

// The ending as the README says it: refusals with their verdict on stderr.
int render_end(const run::Ended& end) {
  if (end.why == run::Outcome::Ok) return kOk;
  if (end.verdict) {
    std::fputs(cli::verdict_text(*end.verdict).c_str(), stderr);
    return cli::refuse(*end.verdict, end.message);
  }
  return fail(run::exit_code(end.why), end.message);
}

// Parse and check the command line; the run itself is cmd/run's, with the real steps. Their
// destructors (the tuning guard, then the scratch device) run after the report is out.
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
  if (!format) return fail(kUsage, "--output-format " + a.output_format + ": use text, json or junit");
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
  auto outputs = cli::CliOutputs::open(a, root, *spec, *format);
  if (!outputs) return fail(kUsage, outputs.error());

  cli::SystemHost host(root);
  cli::SystemPreflight preflight(root, preflight_options(a, /*hold=*/true));
  cli::SystemTuner tuner(root, journal_dir());
  cli::SystemEngine engine(root);
  cli::SystemZeroing zeroing;
  cli::SystemFiles files;
  const run::Steps steps{preflight, tuner, engine, zeroing, host, files, *outputs};
  return render_end(run::run(run_request(a, std::move(*spec), std::move(*expectations)), steps));
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
