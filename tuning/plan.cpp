#include "diskprobe/tuning/plan.h"

#include <algorithm>
#include <map>
#include <optional>

#include "diskprobe/base/problems.h"
#include "diskprobe/base/units.h"
#include "diskprobe/tuning/advice.h"

namespace diskprobe::tuning {
namespace {

bool contains(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

std::string join_ints(const std::vector<int>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

const HwQueue* find_queue(const Topology& t, int index) {
  for (const auto& q : t.hw_queues) {
    if (q.index == index) return &q;
  }
  return nullptr;
}

// A CPU can be pinned to when it is online (or online CPUs are unknown).
bool usable(const Topology& t, int cpu) { return t.online_cpus.empty() || contains(t.online_cpus, cpu); }

struct IrqChoice {
  int cpu = -1;
  const Irq* irq = nullptr;
};

// Where each queue interrupt's completions land. With rq_affinity=2 a job submitting on
// the CPU that takes its queue's interrupt completes without an IPI — the seed's intent,
// minus its `grep | shuf`, which could pick the config interrupt or another device's.
// A CPU maps to exactly one hardware queue, so "effective CPU in the queue's cpu_list"
// means "a job on this CPU submits to the queue whose interrupt this CPU takes".
std::vector<IrqChoice> irq_candidates(const Topology& t, bool require_own_queue) {
  std::vector<IrqChoice> out;
  for (const auto& irq : t.irqs) {
    if (irq.kind != IrqKind::Queue) continue;
    // effective_affinity_list is 4.13+; before it, a single-CPU smp_affinity is as good.
    std::vector<int> where = irq.effective_cpus;
    if (where.empty() && irq.affinity_cpus.size() == 1) where = irq.affinity_cpus;
    const HwQueue* q = irq.hw_queue >= 0 ? find_queue(t, irq.hw_queue) : nullptr;
    for (int cpu : where) {
      if (!usable(t, cpu)) continue;
      if (require_own_queue && q != nullptr && !contains(q->cpus, cpu)) continue;
      if (std::any_of(out.begin(), out.end(), [&](const IrqChoice& c) { return c.cpu == cpu; })) continue;
      out.push_back({cpu, &irq});
      break;
    }
  }
  // Deterministic: by hardware queue (irqs are sorted so), but CPU 0 last: it takes the
  // timer and most unmanaged interrupts, the noise a latency test must avoid.
  std::stable_partition(out.begin(), out.end(), [](const IrqChoice& c) { return c.cpu != 0; });
  return out;
}

std::string queue_words(const Irq& irq) {
  return irq.hw_queue >= 0 ? "the completion interrupt of hardware queue " + std::to_string(irq.hw_queue)
                           : "the completion interrupt of all its hardware queues";
}

// A bio-based device (no blk-mq hardware queues: zram, brd) has no completion interrupt:
// the kernel does its I/O in the submitting job's own context, inline or in the io_uring
// io-wq worker threads the job's ring starts, which take the job's CPU affinity. So the
// job's CPU is the completion CPU: one pinned job keeps submission, device work and
// completion on one CPU instead of waking a worker and then the job across CPUs (on a 2-vCPU
// guest, zram 4k QD1 reads: ~6 us pinned against ~40 us unpinned on an idle machine).
// Jobs spread over the online CPUs, CPU 0 last (it takes most of the machine's interrupts).
void plan_bio_based(const Topology& t, unsigned jobs, Plan& p) {
  std::vector<int> cpus = t.online_cpus;
  std::stable_partition(cpus.begin(), cpus.end(), [](int c) { return c != 0; });
  if (cpus.empty()) {
    p.notes.push_back(t.device + " has no completion interrupt and the online CPUs are unknown: running unpinned");
    return;
  }
  for (unsigned j = 0; j < jobs; ++j) {
    int cpu = cpus[j % cpus.size()];
    p.cpus[j] = cpu;
    p.pins.push_back({static_cast<int>(j), cpu, -1, -1, ""});
    p.notes.push_back("pinned job " + std::to_string(j) + " to CPU " + std::to_string(cpu) + ": " + t.device +
                      " is bio-based with no completion interrupt, so its I/O completes in the job's own "
                      "context (io_uring workers take the job's CPU) and the whole path stays on that CPU");
  }
  if (jobs > cpus.size()) {
    p.notes.push_back("warning: " + std::to_string(jobs) + " jobs on " + std::to_string(cpus.size()) +
                      " online CPU(s): jobs share them round-robin");
  }
}

void plan_irq(const Topology& t, unsigned jobs, Plan& p) {
  if (!t.has_interrupts()) {
    if (t.hw_queues.empty()) return plan_bio_based(t, jobs, p);
    std::string why = t.driver == "loop" ? " (loop device)" : "";
    p.notes.push_back(t.device + " has no completion interrupt" + why + ": running unpinned");
    return;
  }
  auto cands = irq_candidates(t, /*require_own_queue=*/true);
  if (cands.empty()) {
    cands = irq_candidates(t, false);
    if (!cands.empty()) {
      p.notes.push_back("no completion interrupt of " + t.device +
                        " lands on a CPU of its own hardware queue (moved by irqbalance or by hand?): "
                        "pinning to the interrupts' CPUs anyway; completions may need an IPI");
    }
  }
  if (cands.empty()) {
    p.notes.push_back("the completion interrupts of " + t.device +
                      " have no known effective CPU (no effective_affinity_list): running unpinned");
    return;
  }
  for (unsigned j = 0; j < jobs; ++j) {
    const IrqChoice& c = cands[j % cands.size()];
    p.cpus[j] = c.cpu;
    p.pins.push_back({static_cast<int>(j), c.cpu, c.irq->hw_queue, c.irq->number, c.irq->name});
    p.notes.push_back("pinned job " + std::to_string(j) + " to CPU " + std::to_string(c.cpu) +
                      ": it receives " + c.irq->name + " (IRQ " + std::to_string(c.irq->number) + "), " +
                      queue_words(*c.irq));
  }
  if (jobs > cands.size()) {
    p.notes.push_back("warning: " + std::to_string(jobs) + " jobs but only " + std::to_string(cands.size()) +
                      " CPU(s) take " + t.device + "'s completion interrupts: jobs share them round-robin");
  }
}

// test100w.sh, exactly:
//   for i in 1..9: cat /sys/block/$DEV/mq/*/cpu_list | awk '{print $i}' ...   # i-th CPU of each queue
//   cut -d, -f 2-$((numjobs+1))                                                 # drop the first entry
// so consecutive jobs land on different hardware queues. Kept from it: the round order
// and the queue order of the shell glob, which sorts names as text (mq/10 before mq/2).
// Changed: CPU 0 (the entry the seed cuts: mq/0 always holds it) is dropped wherever it
// is, and used last when the jobs outnumber the other CPUs rather than doubling up; no
// cap at 9 CPUs per queue (the loop bound); offline CPUs and NVMe poll queues are left
// out; and too many jobs are clamped to one job per CPU, with a warning (an error with
// --strict), where the script cuts its list short and lets fio double up.
std::vector<int> hw_queue_order(const Topology& t, std::vector<int>* queue_of) {
  std::vector<const HwQueue*> queues;
  for (const auto& q : t.hw_queues) {
    if (!q.polled) queues.push_back(&q);
  }
  std::stable_sort(queues.begin(), queues.end(), [](const HwQueue* a, const HwQueue* b) {
    return std::to_string(a->index) < std::to_string(b->index);
  });
  std::vector<int> order;
  for (size_t round = 0;; ++round) {
    bool any = false;
    for (const HwQueue* q : queues) {
      if (round >= q->cpus.size()) continue;
      any = true;
      int cpu = q->cpus[round];
      if (!usable(t, cpu) || contains(order, cpu)) continue;
      order.push_back(cpu);
      if (queue_of) queue_of->push_back(q->index);
    }
    if (!any) break;
  }
  return order;
}

void plan_hw_queues(const Topology& t, unsigned jobs, Plan& p) {
  std::vector<int> queue_of;
  std::vector<int> order = hw_queue_order(t, &queue_of);
  std::vector<int> polled;
  for (const auto& q : t.hw_queues) {
    if (q.polled) polled.push_back(q.index);
  }
  size_t submitting = t.hw_queues.size() - polled.size();
  std::string source = "the CPUs of " + t.device + "'s " + std::to_string(submitting) + " hardware queue(s)";
  if (!polled.empty()) {
    // test100w.sh's `cat mq/*/cpu_list` reads them too, and so lands jobs on CPUs it
    // believes are another queue's; ordinary I/O never reaches a poll queue.
    p.notes.push_back("left out " + t.device + "'s poll queue(s) " + join_ints(polled) +
                      ": they have no interrupt and take only polled I/O");
  }
  if (order.empty()) {
    // Bio-based devices (dm, md, zram) have no mq/ directory: spread over online CPUs.
    order = t.online_cpus;
    queue_of.assign(order.size(), -1);
    p.notes.push_back(t.device +
                      " has no hardware queues (a bio-based device): spreading over the online CPUs");
    source = "the online CPUs";
  }
  if (order.empty()) {
    p.notes.push_back("no CPU list for " + t.device + ": running unpinned");
    return;
  }
  auto zero = std::find(order.begin(), order.end(), 0);
  if (zero != order.end() && order.size() > 1) {
    size_t k = static_cast<size_t>(zero - order.begin());
    int qz = queue_of[k];
    order.erase(zero);
    queue_of.erase(queue_of.begin() + static_cast<std::ptrdiff_t>(k));
    if (jobs > order.size()) {
      order.push_back(0);
      queue_of.push_back(qz);
      p.notes.push_back("CPU 0 used too: " + std::to_string(jobs) + " jobs outnumber the other " +
                        std::to_string(order.size() - 1) + " CPU(s)");
    }
  }
  if (jobs > order.size()) {
    // Two jobs on one CPU measure the CPU, not the disk: run one job per CPU instead.
    p.deviations.push_back("numjobs " + std::to_string(jobs) + " exceeds the " +
                           std::to_string(order.size()) + " CPU(s) available (" + source + "): clamped to " +
                           std::to_string(order.size()) + " job(s), one per CPU");
    p.notes.push_back("warning: " + p.deviations.back() + " (--strict refuses instead)");
    jobs = static_cast<unsigned>(order.size());
    p.numjobs = jobs;
    p.cpus.assign(jobs, -1);
  }
  std::vector<int> queues_used;
  for (unsigned j = 0; j < jobs; ++j) {
    p.cpus[j] = order[j];
    queues_used.push_back(queue_of[j]);
    p.pins.push_back({static_cast<int>(j), order[j], queue_of[j], -1, ""});
  }
  std::string note = "spread " + std::to_string(jobs) + " job(s) over " + source +
                     ", one queue after another (test100w.sh): CPUs " + join_ints(p.cpus);
  if (!t.hw_queues.empty()) note += " on hardware queues " + join_ints(queues_used);
  p.notes.push_back(note);
}

void plan_scheduler(const Topology& t, const std::string& want, Plan& p) {
  if (t.schedulers.empty()) {
    p.deviations.push_back("scheduler " + want + " not set: " + t.device + " has no queue/scheduler");
  } else if (std::find(t.schedulers.begin(), t.schedulers.end(), want) == t.schedulers.end()) {
    std::string offered;
    for (const auto& s : t.schedulers) offered += (offered.empty() ? "" : ", ") + s;
    p.deviations.push_back("scheduler " + want + " not set: " + t.device + " offers only " + offered +
                           " (load its module, e.g. `modprobe " + want + "`)");
  } else {
    p.queue.push_back({"scheduler", want});
    return;
  }
  p.notes.push_back("warning: " + p.deviations.back());
}

// The AWS io1 guide's `cpupower idle-set -d 1..N-1`, limited to states slower than the limit,
// on every online CPU: completions land on any of them.
void plan_cstates(const Topology& t, unsigned limit_us, Plan& p) {
  const HostFacts& h = t.host;
  if (h.cstates.empty()) {
    p.notes.push_back(
        "no cpuidle states to disable: this kernel has no cpuidle driver (no "
        "/sys/devices/system/cpu/cpu0/cpuidle), so idle CPUs run its default idle routine (HLT on "
        "x86), which sysfs cannot turn off; only idle=poll on the kernel command line avoids it");
    return;
  }
  std::vector<std::string> named;  // "state1 (haltpoll idle, exit latency 1 us) on CPU 0-1"
  std::vector<std::string> already;
  std::map<int, std::vector<int>> cpus_of;
  std::map<int, const CState*> first_of;
  std::map<int, std::vector<int>> already_of;
  for (const auto& c : h.cstates) {
    if (c.index == 0 || c.latency_us <= limit_us) continue;
    if (c.disabled) {
      already_of[c.index].push_back(c.cpu);
      first_of.emplace(c.index, &c);
      continue;
    }
    p.disable_cstates.push_back({c.cpu, c.index, c.name, c.latency_us});
    cpus_of[c.index].push_back(c.cpu);
    first_of.emplace(c.index, &c);
  }
  auto describe = [&](int index, const std::vector<int>& cpus) {
    const CState* c = first_of.at(index);
    return "state" + std::to_string(index) + " (" + c->name + ", exit latency " +
           std::to_string(c->latency_us) + " us) on CPU " + format_cpu_list(cpus);
  };
  for (const auto& [index, cpus] : cpus_of) named.push_back(describe(index, cpus));
  for (const auto& [index, cpus] : already_of) already.push_back(describe(index, cpus));
  std::string limit = "exit latency above " + std::to_string(limit_us) + " us";
  std::string driver = h.cpuidle_driver.empty() ? "" : " (cpuidle driver " + h.cpuidle_driver + ")";
  if (named.empty() && already.empty()) {
    p.notes.push_back("no cpuidle state but state0 has an " + limit + driver + ": nothing to disable");
    return;
  }
  if (!named.empty()) {
    std::string n =
        "disable cpuidle " + join(named) + ": " + limit + driver + "; restored when the run ends";
    p.notes.push_back(n);
  }
  if (!already.empty()) p.notes.push_back("already disabled: cpuidle " + join(already));
}

}  // namespace

Plan make_plan(const Topology& topo, const JobSpec& spec) {
  Plan p;
  unsigned jobs = spec.numjobs;
  p.numjobs = jobs;
  p.cpus.assign(jobs, -1);
  if (spec.host.rq_affinity) {
    int v = *spec.host.rq_affinity;
    if (!topo.has_rq_affinity) {
      p.notes.push_back(topo.device + " has no queue/rq_affinity (a bio-based device: no blk-mq completion to "
                        "steer): rq_affinity " + std::to_string(v) + " left alone");
    } else if (v >= 0 && v <= 2) {
      p.queue.push_back({"rq_affinity", std::to_string(v)});
    } else {
      p.notes.push_back("rq_affinity " + std::to_string(v) + " ignored: the kernel takes 0, 1 or 2");
    }
  }
  if (!spec.host.scheduler.empty()) plan_scheduler(topo, spec.host.scheduler, p);
  if (spec.host.nomerges) {
    int v = *spec.host.nomerges;
    if (v >= 0 && v <= 2) {
      p.queue.push_back({"nomerges", std::to_string(v)});
    } else {
      p.notes.push_back("nomerges " + std::to_string(v) + " ignored: the kernel takes 0, 1 or 2");
    }
  }
  p.hold_cstates = spec.host.hold_cstates;
  if (spec.host.cstate_latency_limit_us) plan_cstates(topo, *spec.host.cstate_latency_limit_us, p);
  switch (spec.host.pinning) {
    case PinPolicy::None:
      break;
    case PinPolicy::Irq:
      plan_irq(topo, jobs, p);
      break;
    case PinPolicy::HwQueues:
      plan_hw_queues(topo, jobs, p);
      break;
  }
  p.advice = advise(topo, spec, p);
  return p;
}

}  // namespace diskprobe::tuning
