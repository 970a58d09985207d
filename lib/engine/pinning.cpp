#include "pinning.h"

#include <sched.h>

#include <string>

namespace diskprobe::engine {

namespace {

std::string cpu_list_text(const std::vector<int>& cpus) {
  std::string s;
  for (int c : cpus) s += (s.empty() ? "" : ",") + std::to_string(c);
  return s;
}

}  // namespace

Status pin_to(const std::vector<int>& cpus) {
  if (cpus.empty()) return Ok{};
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus) {
    if (cpu < 0 || cpu >= CPU_SETSIZE) {
      return make_error("cannot pin to CPU " + std::to_string(cpu) + ": CPU numbers go from 0 to " +
                        std::to_string(CPU_SETSIZE - 1));
    }
    CPU_SET(cpu, &set);
  }
  if (int err = pthread_setaffinity_np(pthread_self(), sizeof set, &set); err != 0) {
    std::string what = cpus.size() == 1 ? "CPU " + cpu_list_text(cpus) : "CPUs " + cpu_list_text(cpus);
    return make_error(errno_message("pthread_setaffinity_np", what, err) + ": is " + what +
                      " online and allowed for this process (taskset, cgroup cpuset)?");
  }
  return Ok{};
}

JobStackSize::JobStackSize() {
  if (pthread_getattr_default_np(&old_) != 0) return;
  pthread_attr_t a;
  if (pthread_getattr_default_np(&a) != 0) return;
  if (pthread_attr_setstacksize(&a, kJobStackBytes) == 0 && pthread_setattr_default_np(&a) == 0) set_ = true;
  pthread_attr_destroy(&a);
}

JobStackSize::~JobStackSize() {
  if (set_) pthread_setattr_default_np(&old_);
  pthread_attr_destroy(&old_);
}

}  // namespace diskprobe::engine
