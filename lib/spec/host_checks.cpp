#include "diskprobe/spec/host_checks.h"

#include <sched.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "diskprobe/base/problems.h"
#include "diskprobe/base/units.h"

namespace diskprobe {

std::string file_name_problem(std::string_view name) {
  if (name.empty()) return "the job name is empty";
  if (name.find('/') != std::string_view::npos || name.find('\0') != std::string_view::npos) {
    return "the job name '" + std::string(name) + "' has a path separator";
  }
  if (name == "." || name == "..") return "the job name '" + std::string(name) + "' names a directory";
  return "";
}

namespace {

struct CpuSetFree {
  void operator()(cpu_set_t* s) const { CPU_FREE(s); }
};

// cpus_allowed against the online CPUs and this process's affinity, each kind of bad CPU
// listed once, as a CPU list ("5-7,9"). The mask is sized for kMaxCpus, as the engine's is.
void cpu_problems(const std::vector<int>& cpus, const SysRoot& root, std::vector<std::string>& problems) {
  auto text = root.read_sys("devices/system/cpu/online");
  auto online = text ? parse_cpus_allowed(*text) : std::nullopt;
  std::unique_ptr<cpu_set_t, CpuSetFree> mask(CPU_ALLOC(kMaxCpus));
  const size_t size = CPU_ALLOC_SIZE(kMaxCpus);
  const bool have_mask = mask && sched_getaffinity(0, size, mask.get()) == 0;
  std::vector<int> offline, denied;
  for (int cpu : cpus) {
    if (online && std::find(online->begin(), online->end(), cpu) == online->end()) {
      offline.push_back(cpu);
    } else if (have_mask && !CPU_ISSET_S(static_cast<size_t>(cpu), size, mask.get())) {
      denied.push_back(cpu);
    }
  }
  if (!online) {
    problems.push_back("cpus_allowed: cannot read the online CPUs (" + root.sys_path("devices/system/cpu/online") +
                       ")");
  } else if (!offline.empty()) {
    problems.push_back("cpus_allowed: CPU " + format_cpu_list(offline) + " is not online (online: " + *text +
                       "): give CPUs from that list");
  }
  if (!denied.empty()) {
    problems.push_back("cpus_allowed: CPU " + format_cpu_list(denied) +
                       " is not allowed for this process (taskset, cgroup cpuset): give CPUs it may run on");
  }
}

}  // namespace

Status validate_on_host(const JobSpec& spec, const SysRoot& root) {
  std::vector<std::string> problems;
  if (!spec.cpus_allowed.empty()) cpu_problems(spec.cpus_allowed, root, problems);
  if (!spec.directory.empty()) {
    if (auto why = file_name_problem(spec.name); !why.empty()) {
      problems.push_back(why + ", and it names the job files in --directory " + spec.directory +
                         ": give --name a plain name");
    }
  }
  return problems_status(problems);
}

}  // namespace diskprobe
