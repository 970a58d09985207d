// Topology of a block device: hardware queues and their CPUs, the driver device behind
// it, and its interrupts matched by exact name (virtio1-req.0, nvme1q3 — never substrings).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "diskprobe/device/block_device.h"
#include "diskprobe/base/status.h"
#include "diskprobe/base/sysroot.h"

namespace diskprobe::tuning {

enum class IrqKind { Queue, Config, Admin, Other };

struct Irq {
  int number = -1;
  std::string name;  // "virtio1-req.0"
  IrqKind kind = IrqKind::Other;
  // For Queue interrupts: the hardware queue index; -1 when one interrupt serves every
  // queue (virtioN-virtqueues when MSI-X vectors ran short, or a legacy INTx "virtioN").
  int hw_queue = -1;
  std::vector<int> effective_cpus;  // /proc/irq/N/effective_affinity_list
  std::vector<int> affinity_cpus;   // /proc/irq/N/smp_affinity_list
};

struct HwQueue {
  int index = 0;
  std::vector<int> cpus;  // /sys/block/X/mq/N/cpu_list
  // An NVMe poll queue (nvme.poll_queues): no interrupt, and only polled I/O (io_uring
  // IOPOLL) is sent to it; a job's ordinary I/O goes to the queue of its CPU's default map.
  bool polled = false;
};

// One cpuidle state of one CPU: /sys/devices/system/cpu/cpuN/cpuidle/stateK.
struct CState {
  int cpu = 0;
  int index = 0;            // K; state0 is POLL on x86 and is never disabled by diskprobe
  std::string name;         // "POLL", "C1", "haltpoll idle"
  unsigned latency_us = 0;  // exit latency
  bool disabled = false;    // stateK/disable
};

// Facts about the host that only feed advice (not the pinning itself).
struct HostFacts {
  std::string cmdline;                   // /proc/cmdline
  std::string os_id;                     // os-release ID: "debian", "alinux", "rhel"
  std::string os_id_like;                // os-release ID_LIKE: "rhel fedora"
  std::string os_name;                   // os-release PRETTY_NAME
  std::vector<int> irqbalance_pids;      // processes whose /proc/PID/comm is "irqbalance"
  std::map<int, std::string> governors;  // online CPU -> cpufreq scaling_governor, where present
  std::string cpuidle_driver;            // devices/system/cpu/cpuidle/current_driver, "" without cpuidle
  std::vector<CState> cstates;           // online CPUs' cpuidle states by CPU, then index; empty
                                         // when the kernel has no cpuidle driver
};

struct Topology {
  std::string device;              // "vda"
  std::string driver;              // "virtio-blk", "nvme", "scsi", "xen-blkfront", "loop", "zram", ""
  std::string driver_device;       // "virtio1", "nvme0", "host0"
  std::vector<HwQueue> hw_queues;  // by index
  std::vector<Irq> irqs;           // Queue irqs first, by hw_queue
  std::vector<int> online_cpus;
  std::string scheduler;                // active I/O scheduler, "" when unknown
  std::vector<std::string> schedulers;  // every scheduler queue/scheduler offers
  int nr_requests = -1;                 // queue/nr_requests: tags per hardware queue; -1 unknown
  std::string write_cache;              // queue/write_cache: "write back", "write through", ""
  bool has_rq_affinity = true;          // queue/rq_affinity exists (not on bio-based zram)
  HostFacts host;
  bool has_interrupts() const;  // any Queue interrupt
};

// Reads every file through `root`; host facts come from read_host_facts(root,
// default_os_release_path(root)).
Result<Topology> read_topology(const SysRoot& root, const BlockDevice& dev);

// /etc/os-release for the real root; for a fixture root (procfs other than "/proc") the
// etc/os-release beside it: <fixture>/proc -> <fixture>/etc/os-release.
std::string default_os_release_path(const SysRoot& root);
HostFacts read_host_facts(const SysRoot& root, const std::string& os_release_path);

// One line of /proc/interrupts with a numeric IRQ: its number and its action names (more
// than one when the line is shared: "nvme0q0, nvme0q1").
struct ProcInterrupt {
  int number = -1;
  std::vector<std::string> actions;
};
std::vector<ProcInterrupt> parse_proc_interrupts(std::string_view text);

}  // namespace diskprobe::tuning
