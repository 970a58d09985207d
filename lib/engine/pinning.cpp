#include "pinning.h"

#include <sched.h>

#include <memory>
#include <string>

#include "diskprobe/base/units.h"

namespace diskprobe::engine {

namespace {

struct CpuSetFree {
  void operator()(cpu_set_t* s) const { CPU_FREE(s); }
};

}  // namespace

// Sized for kMaxCpus, the cap of every CPU list (parse_cpu_list), not glibc's 1,024 of a
// plain cpu_set_t: a CPU that parses is one that can be pinned to.
Status pin_to(const std::vector<int>& cpus) {
  if (cpus.empty()) return Ok{};
  for (int cpu : cpus) {
    if (cpu < 0 || cpu >= kMaxCpus) {
      return make_error("cannot pin to CPU " + std::to_string(cpu) + ": CPU numbers go from 0 to " +
                        std::to_string(kMaxCpus - 1));
    }
  }
  std::unique_ptr<cpu_set_t, CpuSetFree> set(CPU_ALLOC(kMaxCpus));
  if (!set) return make_error("cannot pin to CPUs " + format_cpu_list(cpus) + ": no memory for a CPU set");
  const size_t size = CPU_ALLOC_SIZE(kMaxCpus);
  CPU_ZERO_S(size, set.get());
  for (int cpu : cpus) CPU_SET_S(static_cast<size_t>(cpu), size, set.get());
  if (int err = pthread_setaffinity_np(pthread_self(), size, set.get()); err != 0) {
    std::string what = (cpus.size() == 1 ? "CPU " : "CPUs ") + format_cpu_list(cpus);
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
