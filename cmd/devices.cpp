// `diskprobe devices`: every disk with its preflight verdict.
#include "commands.h"
#include "diskprobe/device/block_device.h"
#include "out.h"
#include "diskprobe/cli/render.h"

namespace diskprobe::cli {

using nlohmann::json;

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

}  // namespace diskprobe::cli
