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

Status resolve_numa(JobSpec& spec, const SysRoot& root, std::string* said) {
  NumaPolicy& n = spec.numa;
  if (!n.any()) return Ok{};
  auto online_text = root.read_sys("devices/system/node/online");
  auto online = online_text ? parse_cpu_list(*online_text) : Result<std::vector<int>>(make_error("unreadable"));
  if (!online) {
    return make_error("numa_cpu_nodes/numa_mem_policy: cannot read this host's NUMA nodes (" +
                      root.sys_path("devices/system/node/online") + "): a kernel without NUMA support runs the job "
                      "without these options");
  }
  auto missing = [&](const std::vector<int>& nodes) {
    std::vector<int> out;
    for (int node : nodes) {
      if (std::find(online->begin(), online->end(), node) == online->end()) out.push_back(node);
    }
    return out;
  };
  for (auto [what, nodes] : {std::pair{"numa_cpu_nodes", &n.cpu_nodes}, std::pair{"numa_mem_policy", &n.mem_nodes}}) {
    if (auto m = missing(*nodes); !m.empty()) {
      return make_error(std::string(what) + ": NUMA node " + format_cpu_list(m) + " is not on this host (nodes: " +
                        *online_text + "): use nodes from that list");
    }
  }
  if (n.cpu_nodes.empty()) return Ok{};
  std::vector<int> cpus;
  for (int node : n.cpu_nodes) {
    auto list = root.read_sys("devices/system/node/node" + std::to_string(node) + "/cpulist");
    auto parsed = list ? parse_cpu_list(*list) : Result<std::vector<int>>(make_error(list.error()));
    if (!parsed) return make_error("numa_cpu_nodes: cannot read node " + std::to_string(node) + "'s CPUs: " + parsed.error());
    cpus.insert(cpus.end(), parsed->begin(), parsed->end());
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  if (!spec.cpus_allowed.empty()) {
    std::vector<int> both;
    std::set_intersection(cpus.begin(), cpus.end(), spec.cpus_allowed.begin(), spec.cpus_allowed.end(),
                          std::back_inserter(both));
    if (both.empty()) {
      return make_error("numa_cpu_nodes " + format_cpu_list(n.cpu_nodes) + " (CPUs " + format_cpu_list(cpus) +
                        ") and cpus_allowed " + format_cpu_list(spec.cpus_allowed) + " share no CPU: give CPUs of those nodes");
    }
    cpus = both;
  }
  if (cpus.empty()) {
    return make_error("numa_cpu_nodes " + format_cpu_list(n.cpu_nodes) + ": the nodes have no CPUs (memory-only nodes): "
                      "give nodes with CPUs");
  }
  spec.cpus_allowed = cpus;
  if (said) *said = "numa_cpu_nodes=" + format_cpu_list(n.cpu_nodes) + ": CPUs " + format_cpu_list(cpus);
  return Ok{};
}

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
