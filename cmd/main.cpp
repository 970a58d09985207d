// diskprobe's command line: parse, call the modules in order, print, exit code.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <liburing.h>
#include <optional>

#include <blkid/blkid.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "args.h"
#include "diskprobe/core/block_device.h"
#include "diskprobe/core/engine.h"
#include "diskprobe/core/loop_device.h"
#include "diskprobe/core/report.h"
#include "diskprobe/profiles/profiles.h"
#include "diskprobe/safety/preflight.h"
#include "diskprobe/tuning/plan.h"
#include "diskprobe/tuning/restore.h"
#include "diskprobe/tuning/topology.h"
#include "render.h"

namespace {

using namespace diskprobe;
using nlohmann::json;

enum Exit { kOk = 0, kRuntime = 1, kUsage = 2, kRefused = 3, kExpectations = 4 };

std::atomic<bool> g_stop{false};
volatile sig_atomic_t g_signal = 0;

void on_signal(int sig) {
  g_signal = sig;
  g_stop.store(true);
}

// SIGINT/SIGTERM/SIGHUP only set a flag: the run stops at its next batch and unwinds, so
// every RestoreGuard and the scratch device are cleaned up by their destructors.
void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocking wait returns EINTR and sees the flag
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
}

int fail(int code, const std::string& message) {
  std::fprintf(stderr, "diskprobe: error: %s\n", message.c_str());
  return code;
}

void print(const std::string& s) {
  std::fwrite(s.data(), 1, s.size(), stdout);
  std::fflush(stdout);
}

void print_json(const json& j) { print(j.dump(2) + "\n"); }

std::optional<safety::Mode> mode_for(const cli::Args& a) {
  if (a.mode == "read") return safety::Mode::Read;
  return safety::Mode::Write;
}

int cmd_version() {
  io_uring_probe* probe = io_uring_get_probe();
  bool uring = probe != nullptr;
  bool write_fixed = uring && io_uring_opcode_supported(probe, IORING_OP_WRITE_FIXED);
  if (probe) io_uring_free_probe(probe);
  const char* blkid_version = nullptr;
  blkid_get_library_version(&blkid_version, nullptr);
  std::printf("diskprobe %s (git %s)\n", DISKPROBE_VERSION, DISKPROBE_GIT_REV);
  std::printf("built against liburing %s and libblkid %s (running libblkid %s)\n", DISKPROBE_LIBURING_VERSION,
              DISKPROBE_BLKID_VERSION, blkid_version ? blkid_version : "unknown");
  std::printf("running kernel: io_uring %s, fixed-buffer I/O %s\n", uring ? "available" : "NOT available",
              write_fixed ? "supported" : "not supported");
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
  return spec;
}

int cmd_profile(const cli::Args& a) {
  if (a.positional.size() != 2 || a.positional[0] != "show") {
    return fail(kUsage, "usage: diskprobe profile show NAME [--json]");
  }
  auto spec = spec_from(a, a.positional[1]);
  if (!spec) return fail(kUsage, spec.error());
  print(a.json ? cli::spec_json(*spec).dump(2) + "\n" : cli::spec_text(*spec));
  return kOk;
}

int cmd_devices(const cli::Args& a, const SysRoot& root) {
  std::vector<BlockDevice> devs;
  std::vector<safety::Verdict> verdicts;
  for (const auto& name : list_disks(root)) {
    auto dev = read_block_device(root, name);
    if (!dev) continue;
    if (dev->size_bytes == 0) continue;  // unconfigured loop/zram slots are not devices yet
    verdicts.push_back(safety::preflight(root, name, safety::Mode::Write).verdict);
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

int cmd_check(const cli::Args& a, const SysRoot& root) {
  if (a.positional.size() != 1) return fail(kUsage, "usage: diskprobe check DEVICE [--mode write|read] [--json]");
  auto checked = safety::preflight(root, a.positional[0], *mode_for(a));
  if (a.json) {
    print_json(cli::verdict_json(checked.verdict));
  } else {
    print(cli::verdict_text(checked.verdict));
  }
  return checked.verdict.safe() ? kOk : kRefused;
}

int cmd_tune(const cli::Args& a, const SysRoot& root) {
  if (a.restore) {
    auto restored = tuning::restore_from_journal(root);
    if (!restored) return fail(kRuntime, restored.error());
    if (restored->empty()) print("nothing to restore: no journal at " + std::string(tuning::kDefaultJournal) + "\n");
    for (const auto& s : *restored) print("restored " + s.what + " to " + s.old_value + "\n");
    return kOk;
  }
  if (a.positional.size() != 1) {
    return fail(kUsage, "usage: diskprobe tune DEVICE [--profile NAME] [--json] [--apply]");
  }
  auto spec = spec_from(a, a.profile.empty() ? "essd-plx-latency" : a.profile);
  if (!spec) return fail(kUsage, spec.error());
  NameError why = NameError::None;
  auto name = parse_device_name(a.positional[0], &why);
  if (!name) return fail(why == NameError::BadName ? kUsage : kRuntime, name.error());
  auto dev = read_block_device(root, *name);
  if (!dev) return fail(kRuntime, dev.error());
  auto topo = tuning::read_topology(root, *dev);
  if (!topo) return fail(kRuntime, topo.error());
  auto plan = tuning::make_plan(*topo, *spec);
  if (a.json) {
    print_json({{"profile", spec->name}, {"topology", cli::topology_json(*topo)}, {"plan", cli::plan_json(plan)}});
  } else {
    print(cli::tune_text(*topo, plan));
  }
  if (!a.apply) return kOk;
  tuning::RestoreGuard guard(root);
  auto st = guard.apply(dev->disk, plan);
  if (!st) return fail(kRuntime, st.error());
  std::fprintf(stderr, "diskprobe: settings applied; press Ctrl-C to restore them\n");
  while (!g_stop.load()) pause();
  auto restored = guard.restore();
  if (!restored) return fail(kRuntime, restored.error());
  std::fprintf(stderr, "diskprobe: settings restored\n");
  return kOk;
}

// The scratch device, the held preflight claim and the tuning guard live until the report is
// written; their destructors run on every return path.
int cmd_run(const cli::Args& a, const SysRoot& root) {
  if (a.profile.empty()) return fail(kUsage, "run needs --profile NAME: see 'diskprobe profiles'");
  if (a.scratch.empty() && a.positional.size() != 1) {
    return fail(kUsage, "run needs a DEVICE (like vdc or /dev/vdc) or --scratch SIZE");
  }
  if (!a.scratch.empty() && !a.positional.empty()) {
    return fail(kUsage, "give either a DEVICE or --scratch SIZE, not both");
  }
  auto format = parse_output_format(a.output_format);
  if (!format) return fail(kUsage, "--output-format " + a.output_format + ": use text or json");
  auto spec = spec_from(a, a.profile);
  if (!spec) return fail(kUsage, spec.error());

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

  NameError why = NameError::None;
  auto name = parse_device_name(device_arg, &why);
  if (!name) return fail(why == NameError::NotFound ? kRuntime : kUsage, name.error());
  if (auto d = read_block_device(root, *name); !d) return fail(kRuntime, d.error());
  auto mode = does_writes(spec->rw) ? safety::Mode::Write : safety::Mode::Read;
  auto checked = safety::preflight(root, device_arg, mode, /*hold=*/true);
  if (!checked.verdict.safe()) {
    std::fputs(cli::verdict_text(checked.verdict).c_str(), stderr);
    return fail(kRefused, checked.verdict.device + " refused by the preflight: nothing was written");
  }
  const BlockDevice& dev = checked.device;
  Target target{dev.path, dev.size_bytes, dev.logical_block_size, device_identity(dev)};
  if (auto st = validate(*spec, target); !st) return fail(kUsage, st.error());

  auto topo = tuning::read_topology(root, dev);
  if (!topo) return fail(kRuntime, topo.error());
  auto plan = tuning::make_plan(*topo, *spec);
  for (const auto& n : plan.notes) spdlog::info("{}", n);
  for (const auto& adv : plan.advice) spdlog::info("advice: {}", adv);

  tuning::RestoreGuard guard(root);
  if (!a.no_tune) {
    if (auto st = guard.apply(dev.disk, plan); !st) return fail(kRuntime, st.error());
  }
  if (g_stop) return fail(kRuntime, "interrupted before the run started; settings restored");

  // Checked again through the held O_EXCL descriptor right before the engine opens the device.
  // Only a write run holds one: a read run changes nothing, so there is nothing to recheck.
  if (auto again = mode == safety::Mode::Write ? safety::recheck(root, checked) : checked.verdict;
      !again.safe()) {
    std::fputs(cli::verdict_text(again).c_str(), stderr);
    return fail(kRefused, again.device + " changed since the preflight: nothing was written");
  }
  auto before = read_disk_counters(root, dev);
  EngineOptions opts;
  opts.cpus = plan.cpus;
  opts.stop = &g_stop;
  auto results = run_jobs(*spec, target, opts);
  auto after = read_disk_counters(root, dev);
  if (!results) return fail(kRuntime, results.error());

  results->preflight = checked.verdict.summary();
  results->tuning = guard.applied();
  results->notes.insert(results->notes.end(), plan.notes.begin(), plan.notes.end());
  results->interrupted = g_stop.load();
  if (before && after) results->disk = disk_stats_delta(*before, *after, results->runtime_s);
  if (auto st = guard.restore(); !st) {
    std::fprintf(stderr, "diskprobe: error: %s\n", st.error().c_str());
  }

  if (!a.output_file.empty()) {
    std::ofstream f(a.output_file);
    f << render(*results, *format);
    if (!f) return fail(kRuntime, "cannot write " + a.output_file + ": " + std::strerror(errno));
    print(render_text(*results));
  } else {
    print(render(*results, *format));
  }
  if (results->interrupted) {
    return fail(kRuntime, std::string("interrupted by ") + strsignal(g_signal) +
                              ": partial results above; every setting was restored");
  }
  return kOk;
}

}  // namespace

int main(int argc, char** argv) {
  std::string error;
  auto args = diskprobe::cli::parse(argc, argv, error);
  if (!args) return fail(kUsage, error);
  if (args->help) return std::fputs(diskprobe::cli::usage(), stdout), kOk;
  if (args->version) return cmd_version();
  if (args->command.empty()) return std::fputs(diskprobe::cli::usage(), stderr), kUsage;

  auto logger = spdlog::stderr_color_st("diskprobe");
  logger->set_pattern("diskprobe: %v");
  logger->set_level(args->verbose ? spdlog::level::debug : spdlog::level::info);
  spdlog::set_default_logger(logger);
  install_signal_handlers();

  const diskprobe::SysRoot root(args->sysfs, args->procfs);
  const std::string& c = args->command;
  if (c == "profiles") return cmd_profiles(*args);
  if (c == "profile") return cmd_profile(*args);
  if (c == "devices") return cmd_devices(*args, root);
  if (c == "check") return cmd_check(*args, root);
  if (c == "tune") return cmd_tune(*args, root);
  return cmd_run(*args, root);
}
