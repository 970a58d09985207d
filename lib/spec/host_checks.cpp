#include "diskprobe/spec/host_checks.h"

#include <sched.h>

#include <algorithm>
#include <vector>

#include "diskprobe/base/problems.h"

namespace diskprobe {

std::string file_name_problem(std::string_view name) {
  if (name.empty()) return "the job name is empty";
  if (name.find('/') != std::string_view::npos || name.find('\0') != std::string_view::npos) {
    return "the job name '" + std::string(name) + "' has a path separator";
  }
  if (name == "." || name == "..") return "the job name '" + std::string(name) + "' names a directory";
  return "";
}

Status validate_on_host(const JobSpec& spec, const SysRoot& root) {
  std::vector<std::string> problems;
  if (!spec.cpus_allowed.empty()) {
    auto text = root.read_sys("devices/system/cpu/online");
    auto online = text ? parse_cpus_allowed(*text) : std::nullopt;
    cpu_set_t mask;
    CPU_ZERO(&mask);
    const bool have_mask = sched_getaffinity(0, sizeof mask, &mask) == 0;
    std::string offline, denied;
    for (int cpu : spec.cpus_allowed) {
      if (online && std::find(online->begin(), online->end(), cpu) == online->end()) {
        offline += (offline.empty() ? "" : ",") + std::to_string(cpu);
      } else if (have_mask && cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &mask)) {
        denied += (denied.empty() ? "" : ",") + std::to_string(cpu);
      }
    }
    if (!online) {
      problems.push_back("cpus_allowed: cannot read the online CPUs (" + root.sys_path("devices/system/cpu/online") +
                         ")");
    } else if (!offline.empty()) {
      problems.push_back("cpus_allowed: CPU " + offline + " is not online (online: " + *text +
                         "): give CPUs from that list");
    }
    if (!denied.empty()) {
      problems.push_back("cpus_allowed: CPU " + denied +
                         " is not allowed for this process (taskset, cgroup cpuset): give CPUs it may run on");
    }
  }
  if (!spec.directory.empty()) {
    if (auto why = file_name_problem(spec.name); !why.empty()) {
      problems.push_back(why + ", and it names the job files in --directory " + spec.directory +
                         ": give --name a plain name");
    }
  }
  return problems_status(problems);
}

}  // namespace diskprobe
