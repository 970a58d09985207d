// `diskprobe tune DEVICE [--apply]` and `tune --restore`.

#include <cstdio>

#include <spdlog/spdlog.h>

#include "commands.h"
#include "diskprobe/base/json_io.h"
#include "diskprobe/run/run.h"
#include "diskprobe/tuning/plan.h"
#include "diskprobe/tuning/restore.h"
#include "diskprobe/tuning/topology.h"
#include "out.h"
#include "diskprobe/cli/render.h"

namespace diskprobe::cli {

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
    for (const auto& l : r.left) spdlog::info("{}", l);
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
  if (auto rc = bad_device_name(root, a.positional[0])) return *rc;
  auto name = parse_device_name(root, a.positional[0]);
  auto dev = name ? read_block_device(root, *name) : Result<BlockDevice>(make_error(name.error()));
  if (!dev) {  // names nothing: refused (3, not-found) as check and run refuse it
    auto v = safety::preflight(root, a.positional[0], safety::Mode::Read, preflight_options(a, false)).verdict;
    if (v.safe()) return fail(kRuntime, dev.error());
    return refused(v, run::kRefusedWhy);
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
  wait_for_stop();
  auto restored = guard.restore();
  if (!restored) return fail(kRuntime, restored.error());
  std::fprintf(stderr, "diskprobe: settings restored\n");
  return kOk;
}

}  // namespace diskprobe::cli
