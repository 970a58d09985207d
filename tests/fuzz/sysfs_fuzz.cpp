// The sysfs and procfs readers, fed a fixture root: tests/fixtures/tuning/nvme-poll-queues
// copied once, then per input some of its files rewritten. The input is parts separated by
// "\n===\n", each "NAME\nCONTENT": every file called NAME (cpu_list, interrupts, model,
// mountinfo...) gets CONTENT. Each part also goes to the text parsers directly.
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "diskprobe/cli/render.h"
#include "diskprobe/device/block_device.h"
#include "diskprobe/device/environment.h"
#include "diskprobe/base/json_io.h"
#include "diskprobe/base/sysroot.h"
#include "diskprobe/base/units.h"
#include "diskprobe/safety/mounts.h"
#include "diskprobe/tuning/plan.h"
#include "diskprobe/tuning/topology.h"
#include "fuzz_input.h"

using namespace diskprobe;
namespace fs = std::filesystem;

namespace {

struct Tree {
  std::string root;
  std::map<std::string, std::vector<std::string>> by_name;  // basename -> files
  std::map<std::string, std::string> original;              // file -> content
};

// Files the fixture lacks but the readers look for.
void add_missing(const std::string& root) {
  const std::string dev = root + "/sys/devices/pci0000:00/0000:00:04.0/nvme/nvme0";
  const std::pair<std::string, std::string> extra[] = {
      {dev + "/model", "Amazon Elastic Block Store"},
      {dev + "/serial", "vol0123456789abcdef0"},
      {dev + "/nvme0n1/stat", "1 0 8 1 2 0 16 2 0 3 3 0 0 0 0"},
      {root + "/proc/self/mountinfo", "22 1 254:1 / / rw,relatime - ext4 /dev/vda1 rw\n"},
      {root + "/proc/swaps", "Filename\tType\tSize\tUsed\tPriority\n"},
      {root + "/proc/cpuinfo", "processor\t: 0\nmodel name\t: Fuzz CPU\n"},
      {root + "/proc/sys/kernel/osrelease", "6.1.0"},
      {root + "/sys/class/dmi/id/product_name", "fuzz"},
  };
  for (const auto& [path, content] : extra) {
    fs::create_directories(fs::path(path).parent_path());
    if (!fs::exists(path)) fuzz::write_file(path, content);
  }
}

const Tree& tree() {
  static const Tree t = [] {
    Tree x;
    x.root = fuzz::scratch_dir() + "/root";
    fs::copy(std::string(DISKPROBE_FIXTURES) + "/tuning/nvme-poll-queues", x.root,
             fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    add_missing(x.root);
    for (const auto& e : fs::recursive_directory_iterator(x.root)) {
      if (!e.is_regular_file() || e.is_symlink()) continue;
      std::string p = e.path().string();
      x.by_name[e.path().filename().string()].push_back(p);
      std::ostringstream s;
      s << std::ifstream(p, std::ios::binary).rdbuf();
      x.original[p] = s.str();
    }
    return x;
  }();
  return t;
}

void read_everything(const Tree& t) {
  SysRoot root(t.root + "/sys", t.root + "/proc");
  for (const auto& name : list_disks(root)) {
    auto dev = read_block_device(root, name);
    if (!dev) continue;
    (void)read_disk_counters(root, *dev);
    (void)dump_json(cli::device_json(*dev, safety::Verdict{}));
    RunEnvironment env = read_environment(root, *dev, "fuzz");
    (void)dump_json(nlohmann::json{{"model", env.device_model}, {"cpu", env.cpu_model}});
    auto topo = tuning::read_topology(root, *dev);
    if (!topo) continue;
    JobSpec spec;
    spec.numjobs = 4;
    spec.host.pinning = PinPolicy::Irq;
    auto plan = tuning::make_plan(*topo, spec);
    (void)dump_json(cli::topology_json(*topo));
    (void)dump_json(cli::plan_json(plan));
    (void)cli::tune_text(*topo, plan);
  }
  (void)safety::read_mounts(root);
  (void)safety::read_swaps(root);
  (void)tuning::read_host_facts(root, t.root + "/etc/os-release");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Tree& t = tree();
  std::vector<std::string> changed;
  for (auto part : fuzz::split(fuzz::as_text(data, size), "\n===\n", 16)) {
    size_t nl = part.find('\n');
    std::string name(part.substr(0, nl));
    std::string_view content = nl == std::string_view::npos ? std::string_view{} : part.substr(nl + 1);
    (void)parse_cpu_list(content);
    (void)tuning::parse_proc_interrupts(content);
    (void)safety::parse_mountinfo(content, "fuzz");
    (void)safety::parse_swaps(content, "fuzz");
    auto it = t.by_name.find(name);
    if (it == t.by_name.end()) continue;
    for (const auto& path : it->second) {
      fuzz::write_file(path, content);
      changed.push_back(path);
    }
  }
  read_everything(t);
  for (const auto& path : changed) fuzz::write_file(path, t.original.at(path));
  return 0;
}
