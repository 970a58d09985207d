// `diskprobe check DEVICE`: the preflight alone.
#include "commands.h"
#include "out.h"
#include "diskprobe/cli/render.h"

namespace diskprobe::cli {

namespace {

safety::Mode mode_for(const cli::Args& a) {
  if (a.mode == "read") return safety::Mode::Read;
  return safety::Mode::Write;
}

}  // namespace

int cmd_check(const cli::Args& a, const SysRoot& root) {
  if (a.positional.size() != 1) return fail(kUsage, "usage: diskprobe check DEVICE [--mode write|read] [--json]");
  auto checked = safety::preflight(root, a.positional[0], mode_for(a), preflight_options(a, false));
  if (a.json) {
    print_json(cli::verdict_json(checked.verdict));
  } else {
    print(cli::verdict_text(checked.verdict));
  }
  if (checked.device.name.empty()) {  // the name did not resolve: say why as `run` does
    NameError why = NameError::None;
    if (!parse_device_name(root, a.positional[0], &why)) return name_exit(why);
  }
  return checked.verdict.safe() ? kOk : kRefused;
}

}  // namespace diskprobe::cli
