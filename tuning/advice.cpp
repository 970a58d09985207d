#include "diskprobe/tuning/advice.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "diskprobe/base/units.h"

namespace diskprobe::tuning {
namespace {

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// The value of idle= on the command line ("" when absent); init's arguments after "--" do
// not count.
std::string idle_value(const std::string& cmdline) {
  std::string value;
  for (const auto& w : words(cmdline)) {
    if (w == "--") break;
    if (w.rfind("idle=", 0) == 0) value = w.substr(5);  // the kernel takes the last one
  }
  return value;
}

std::string distro_name(const HostFacts& h) { return h.os_name.empty() ? h.os_id : h.os_name; }

std::string idle_poll_advice(const Topology& t) {
  const HostFacts& h = t.host;
  std::string other = idle_value(h.cmdline);
  std::string why = other.empty() ? "idle=poll is not on the kernel command line"
                                  : "the kernel command line has idle=" + other + ", not idle=poll";
  why +=
      ": idle CPUs enter C-states and every completion pays their exit latency (the vendor's latency "
      "test boots with idle=poll). ";
  const std::string cost = " idle=poll keeps every idle CPU spinning, so remove it after testing.";
  switch (distro_family(h)) {
    case DistroFamily::RedHat:
      return why + "On " + distro_name(h) + ": `sudo grubby --update-kernel=ALL --args=idle=poll` then " +
             "`sudo reboot`; undo with `sudo grubby --update-kernel=ALL --remove-args=idle` and reboot." +
             cost;
    case DistroFamily::Debian:
      return why + "On " + distro_name(h) + ": add idle=poll to GRUB_CMDLINE_LINUX in /etc/default/grub" +
             (other.empty() ? "" : " and remove idle=" + other) +
             " (`sudo sed -i 's/^GRUB_CMDLINE_LINUX=\"/&idle=poll /' /etc/default/grub`), then `sudo "
             "update-grub` "
             "and `sudo reboot`; undo by removing it and running `sudo update-grub` again." +
             cost;
    case DistroFamily::Unknown:
      break;
  }
  return why + "Add idle=poll to the kernel command line with your boot loader's tool (" +
         (distro_name(h).empty() ? std::string("unknown distribution") : distro_name(h)) + ") and reboot." +
         cost;
}

// The idle states a completion may have to wake a CPU from, when the profile does not
// already disable them.
std::string cstate_advice(const Topology& t, const JobSpec& spec) {
  if (spec.host.cstate_latency_limit_us) return "";  // the plan's notes say what is disabled
  const HostFacts& h = t.host;
  if (h.cstates.empty()) return "";
  std::map<int, std::vector<int>> enabled;  // deep state index -> CPUs where it is enabled
  std::map<int, const CState*> first;
  for (const auto& c : h.cstates) {
    if (c.index == 0 || c.disabled) continue;
    enabled[c.index].push_back(c.cpu);
    first.emplace(c.index, &c);
  }
  if (enabled.empty()) return "";
  std::string list;
  for (const auto& [index, cpus] : enabled) {
    const CState* c = first.at(index);
    list += (list.empty() ? "" : ", ") +
            ("state" + std::to_string(index) + " " + c->name + " (exit latency " +
             std::to_string(c->latency_us) + " us, CPU " + format_cpu_list(cpus) + ")");
  }
  return "C-states enabled" + (h.cpuidle_driver.empty() ? "" : " (cpuidle driver " + h.cpuidle_driver + ")") +
         ": " + list +
         ". To disable them for the run and have them restored afterwards: --cstate_latency_limit_us 0 (the "
         "AWS io1 guide's `cpupower idle-set -d`).";
}

// Requests beyond the tags of the queues in use wait in the kernel for a free tag: latency
// the run measures that the disk never caused.
std::string nr_requests_advice(const Topology& t, const JobSpec& spec) {
  if (t.nr_requests <= 0) return "";
  size_t queues = 0;
  for (const auto& q : t.hw_queues) queues += q.polled ? 0 : 1;
  uint64_t capacity = static_cast<uint64_t>(t.nr_requests) * std::max<size_t>(queues, 1);
  uint64_t inflight = static_cast<uint64_t>(spec.iodepth) * spec.numjobs;
  if (inflight <= capacity) return "";
  uint64_t per_queue = (inflight + std::max<size_t>(queues, 1) - 1) / std::max<size_t>(queues, 1);
  return std::to_string(inflight) + " I/Os in flight (iodepth " + std::to_string(spec.iodepth) + " x " +
         std::to_string(spec.numjobs) + " jobs) but " + t.device + " has nr_requests " +
         std::to_string(t.nr_requests) + " per hardware queue x " +
         std::to_string(std::max<size_t>(queues, 1)) +
         ": the rest wait in the kernel for a tag, which the latency includes and the disk never sees. For "
         "the test: `echo " +
         std::to_string(per_queue) + " | sudo tee /sys/block/" + t.device +
         "/queue/nr_requests` (the driver may cap it; put back " + std::to_string(t.nr_requests) +
         " afterwards).";
}

}  // namespace

DistroFamily distro_family(const HostFacts& h) {
  static const std::set<std::string> redhat = {"rhel",        "centos",    "fedora", "alinux", "anolis",
                                               "rocky",       "almalinux", "ol",     "amzn",   "tencentos",
                                               "opencloudos", "openEuler", "euleros"};
  static const std::set<std::string> debian = {"debian", "ubuntu", "linuxmint", "raspbian"};
  if (redhat.count(h.os_id)) return DistroFamily::RedHat;
  if (debian.count(h.os_id)) return DistroFamily::Debian;
  for (const auto& w : words(h.os_id_like)) {
    if (redhat.count(w)) return DistroFamily::RedHat;
    if (debian.count(w)) return DistroFamily::Debian;
  }
  return DistroFamily::Unknown;
}

bool has_idle_poll(const std::string& cmdline) { return idle_value(cmdline) == "poll"; }

std::vector<std::string> advise(const Topology& t, const JobSpec& spec, const Plan& plan) {
  std::vector<std::string> out;
  const HostFacts& h = t.host;
  if (spec.host.advise_idle_poll && !has_idle_poll(h.cmdline)) out.push_back(idle_poll_advice(t));

  // Only an irq-pinned plan depends on where the interrupt stays.
  bool pinned = std::any_of(plan.cpus.begin(), plan.cpus.end(), [](int c) { return c >= 0; });
  if (spec.host.pinning == PinPolicy::Irq && pinned && !h.irqbalance_pids.empty()) {
    out.push_back(
        "irqbalance is running (pid " + std::to_string(h.irqbalance_pids.front()) + "): it may move " +
        t.device +
        "'s completion interrupt away from the pinned CPU during the run. Stop it for the test with "
        "`sudo systemctl stop irqbalance` and start it again afterwards with "
        "`sudo systemctl start irqbalance`.");
  }

  if (auto n = nr_requests_advice(t, spec); !n.empty()) out.push_back(n);

  if (spec.host.advise_idle_poll) {
    std::vector<int> slow;
    for (int cpu : plan.cpus) {
      auto g = h.governors.find(cpu);
      if (cpu >= 0 && g != h.governors.end() && g->second != "performance" &&
          std::find(slow.begin(), slow.end(), cpu) == slow.end()) {
        slow.push_back(cpu);
      }
    }
    if (!slow.empty()) {
      out.push_back("CPU " + format_cpu_list(slow) + " runs the " + h.governors.at(slow.front()) +
                    " cpufreq governor: a clock ramping up adds latency. For the test: "
                    "`sudo cpupower frequency-set -g performance`.");
    }
    if (auto c = cstate_advice(t, spec); !c.empty()) out.push_back(c);
    if (!t.scheduler.empty() && t.scheduler != "none" && spec.host.scheduler.empty()) {
      out.push_back(t.device + " uses the " + t.scheduler +
                    " I/O scheduler, which adds a little to every request; the lowest latency is with none: "
                    "`echo none | sudo tee /sys/block/" +
                    t.device + "/queue/scheduler`, or `--scheduler none` to set it for the run only.");
    }
  }
  return out;
}

}  // namespace diskprobe::tuning
