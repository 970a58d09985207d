// tuning/: topology from fixture trees, plans, advice, and RestoreGuard on a scratch tree.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "diskprobe/base/units.h"
#include "diskprobe/tuning/advice.h"
#include "diskprobe/tuning/plan.h"
#include "diskprobe/tuning/restore.h"
#include "diskprobe/tuning/topology.h"
#include "tuning_fixtures.h"

namespace fs = std::filesystem;
using namespace diskprobe;
using namespace diskprobe::tuning;
using namespace tuning_fixtures;

// ---- CPU lists and /proc/interrupts ----

TEST_CASE("parse_cpu_list reads kernel lists, including blk-mq's \"0, 1\"", "[tuning]") {
  struct Case {
    const char* text;
    std::vector<int> cpus;
  };
  const Case cases[] = {
      {"0-3,8,10-11", {0, 1, 2, 3, 8, 10, 11}},
      {"0, 1", {0, 1}},
      {"0, 2, 4, 6\n", {0, 2, 4, 6}},
      {"5", {5}},
      {"", {}},
      {"\n", {}},
      {"3,1,1-2", {1, 2, 3}},
      {"7-7", {7}},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    auto r = parse_cpu_list(c.text);
    REQUIRE(r.ok());
    CHECK(*r == c.cpus);
  }
}

TEST_CASE("parse_cpu_list rejects malformed lists with a message", "[tuning]") {
  const char* bad[] = {"1,,2", "1,",    ",1",     "a",   "1-",       "-1",
                       "3-1",  "1-2-3", "0-15:2", "1 2", "99999999", "0x1"};
  for (const char* text : bad) {
    INFO(text);
    auto r = parse_cpu_list(text);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().find("malformed CPU list") != std::string::npos);
  }
  CHECK(parse_cpu_list("3-1").error() == "malformed CPU list '3-1': the range '3-1' runs backwards");
  // CPUs go below the kernel's largest NR_CPUS; a huge list is quoted as an excerpt.
  CHECK_FALSE(parse_cpu_list("8192").ok());
  CHECK(*parse_cpu_list("8191") == std::vector<int>{8191});
  std::string huge(100000, '9');
  CHECK(parse_cpu_list(huge).error().size() < 300);
}

TEST_CASE("format_cpu_list folds ranges", "[tuning]") {
  CHECK(format_cpu_list({0, 1, 2, 3, 8, 10, 11}) == "0-3,8,10-11");
  CHECK(format_cpu_list({5}) == "5");
  CHECK(format_cpu_list({}) == "");
  CHECK(format_cpu_list({3, 1, 2, 2}) == "1-3");
  CHECK(format_cpu_list({0, 2, 4}) == "0,2,4");
}

TEST_CASE("parse_proc_interrupts takes the action column, shared lines split", "[tuning]") {
  const char* text =
      "           CPU0       CPU1\n"
      " 24:          1          0  IO-APIC   5-edge      ACPI:Ged\n"
      " 36:          0      37132 PCI-MSIX-0000:00:02.0   1-edge      virtio1-req.0\n"
      " 40:         10          0  PCI-MSI 65536-edge      nvme0q0, nvme0q1\n"
      "NMI:          0          0   Non-maskable interrupts\n"
      "ERR:          0\n";
  auto lines = parse_proc_interrupts(text);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].number == 24);
  CHECK(lines[0].actions == std::vector<std::string>{"ACPI:Ged"});
  CHECK(lines[1].number == 36);
  CHECK(lines[1].actions == std::vector<std::string>{"virtio1-req.0"});
  CHECK(lines[2].number == 40);
  CHECK(lines[2].actions == std::vector<std::string>{"nvme0q0", "nvme0q1"});
}

// ---- (a) this VM's vda, captured read-only ----

TEST_CASE("topology of the captured virtio-blk vda", "[tuning]") {
  Topology t = topo_of("virtio-vda", "vda");
  CHECK(t.device == "vda");
  CHECK(t.driver == "virtio-blk");
  CHECK(t.driver_device == "virtio1");
  REQUIRE(t.hw_queues.size() == 1);
  CHECK(t.hw_queues[0].index == 0);
  CHECK(t.hw_queues[0].cpus == std::vector<int>{0, 1});
  CHECK(t.online_cpus == std::vector<int>{0, 1});
  CHECK(t.scheduler == "mq-deadline");
  // virtio0/2/3/4 interrupts are other devices'; only virtio1's two are vda's.
  REQUIRE(t.irqs.size() == 2);
  CHECK(t.irqs[0].number == 36);
  CHECK(t.irqs[0].name == "virtio1-req.0");
  CHECK(t.irqs[0].kind == IrqKind::Queue);
  CHECK(t.irqs[0].hw_queue == 0);
  CHECK(t.irqs[0].effective_cpus == std::vector<int>{1});
  CHECK(t.irqs[0].affinity_cpus == std::vector<int>{0, 1});
  CHECK(t.irqs[1].number == 35);
  CHECK(t.irqs[1].name == "virtio1-config");
  CHECK(t.irqs[1].kind == IrqKind::Config);
  CHECK(t.irqs[1].hw_queue == -1);
  CHECK(t.has_interrupts());
  CHECK(t.host.os_id == "debian");
  CHECK(t.host.irqbalance_pids.empty());
}

TEST_CASE("latency plan on vda pins to the CPU that takes virtio1-req.0", "[tuning]") {
  Topology t = topo_of("virtio-vda", "vda");
  Plan p = make_plan(t, latency_spec());
  CHECK(p.cpus == std::vector<int>{1});
  REQUIRE(p.queue.size() == 1);
  CHECK(p.queue[0].attribute == "rq_affinity");
  CHECK(p.queue[0].value == "2");
  CHECK(p.hold_cstates);
  REQUIRE_FALSE(p.notes.empty());
  CHECK(p.notes[0] ==
        "pinned job 0 to CPU 1: it receives virtio1-req.0 (IRQ 36), the completion interrupt of hardware "
        "queue 0");
}

TEST_CASE("idle=poll advice for Debian edits /etc/default/grub and runs update-grub", "[tuning]") {
  Topology t = topo_of("virtio-vda", "vda");
  Plan p = make_plan(t, latency_spec());
  REQUIRE_FALSE(p.advice.empty());
  const std::string& a = p.advice[0];
  CHECK(a.find("idle=poll is not on the kernel command line") == 0);
  CHECK(a.find("On Debian GNU/Linux 12 (bookworm): add idle=poll to GRUB_CMDLINE_LINUX in /etc/default/grub "
               "(`sudo sed -i 's/^GRUB_CMDLINE_LINUX=\"/&idle=poll /' /etc/default/grub`), then `sudo "
               "update-grub` "
               "and `sudo reboot`") != std::string::npos);
  CHECK(a.find("grubby") == std::string::npos);
  // The latency profile also hears about mq-deadline; nothing about irqbalance (not running).
  CHECK(any_contains(p.advice, "uses the mq-deadline I/O scheduler"));
  CHECK_FALSE(any_contains(p.advice, "irqbalance"));
}

// ---- (b) virtio-blk with 8 queues on 16 CPUs ----

TEST_CASE("topology of a virtio-blk with 8 queues on 16 CPUs; virtio30 is not virtio3", "[tuning]") {
  Topology t = topo_of("virtio-mq-16cpu", "vdb");
  CHECK(t.driver == "virtio-blk");
  CHECK(t.driver_device == "virtio3");
  REQUIRE(t.hw_queues.size() == 8);
  for (int k = 0; k < 8; ++k) {
    CHECK(t.hw_queues[k].index == k);
    CHECK(t.hw_queues[k].cpus == std::vector<int>{2 * k, 2 * k + 1});
  }
  CHECK(t.online_cpus.size() == 16);
  REQUIRE(t.irqs.size() == 9);
  const int effective[] = {0, 3, 4, 7, 8, 11, 12, 15};
  for (int k = 0; k < 8; ++k) {
    INFO("queue " << k);
    CHECK(t.irqs[k].number == 41 + k);
    CHECK(t.irqs[k].name == "virtio3-req." + std::to_string(k));
    CHECK(t.irqs[k].kind == IrqKind::Queue);
    CHECK(t.irqs[k].hw_queue == k);
    CHECK(t.irqs[k].effective_cpus == std::vector<int>{effective[k]});
    CHECK(t.irqs[k].affinity_cpus == std::vector<int>{2 * k, 2 * k + 1});
  }
  CHECK(t.irqs[8].name == "virtio3-config");
  CHECK(t.irqs[8].number == 40);
  CHECK(irq_named(t, "virtio30-req.0") == nullptr);
  CHECK(irq_named(t, "virtio30-config") == nullptr);
  CHECK(t.host.irqbalance_pids == std::vector<int>{812});
}

TEST_CASE("irq plan: lowest hardware queue first, CPU 0 last, round-robin past the end", "[tuning]") {
  Topology t = topo_of("virtio-mq-16cpu", "vdb");
  // Queue 0's interrupt lands on CPU 0: the single latency job goes to queue 1's CPU 3.
  Plan one = make_plan(t, spec_with(PinPolicy::Irq, 1));
  CHECK(one.cpus == std::vector<int>{3});
  CHECK(one.notes[0] ==
        "pinned job 0 to CPU 3: it receives virtio3-req.1 (IRQ 42), the completion interrupt of hardware "
        "queue 1");
  Plan eight = make_plan(t, spec_with(PinPolicy::Irq, 8));
  CHECK(eight.cpus == std::vector<int>{3, 4, 7, 8, 11, 12, 15, 0});
  Plan ten = make_plan(t, spec_with(PinPolicy::Irq, 10));
  CHECK(ten.cpus == std::vector<int>{3, 4, 7, 8, 11, 12, 15, 0, 3, 4});
  CHECK(any_contains(ten.notes, "warning: 10 jobs but only 8 CPU(s) take vdb's completion interrupts"));
}

TEST_CASE("hw-queues plan reproduces test100w.sh's CPU selection", "[tuning]") {
  Topology t = topo_of("virtio-mq-16cpu", "vdb");
  Plan p = make_plan(t, spec_with(PinPolicy::HwQueues, 10));
  CHECK(p.cpus == std::vector<int>{2, 4, 6, 8, 10, 12, 14, 1, 3, 5});
  CHECK(any_contains(p.notes, "on hardware queues 1,2,3,4,5,6,7,0,1,2"));
  // The seed's own pipeline on the same tree.
  CHECK(join(p.cpus) == test100w_pipeline(fixture("virtio-mq-16cpu") + "/sys/block/vdb", 10));
  for (unsigned n : {1u, 5u, 15u}) {
    INFO("numjobs " << n);
    CHECK(join(make_plan(t, spec_with(PinPolicy::HwQueues, n)).cpus) ==
          test100w_pipeline(fixture("virtio-mq-16cpu") + "/sys/block/vdb", n));
  }
}

TEST_CASE("hw-queues plan keeps the shell's glob order past 10 queues", "[tuning]") {
  // 12 queues of 2 CPUs: bash sorts mq/10 and mq/11 before mq/2, and so must we.
  TempDir tmp;
  fs::path dev = tmp.path / "sys/devices/virtual/block/vdz";
  for (int k = 0; k < 12; ++k) {
    put(dev / "mq" / std::to_string(k) / "cpu_list",
        std::to_string(2 * k) + ", " + std::to_string(2 * k + 1) + "\n");
  }
  fs::create_directories(tmp.path / "sys/block");
  fs::create_symlink("../devices/virtual/block/vdz", tmp.path / "sys/block/vdz");
  put(tmp.path / "sys/devices/system/cpu/online", "0-23\n");
  put(tmp.path / "proc/interrupts", "           CPU0\n");
  auto t = read_topology(SysRoot((tmp.path / "sys").string(), (tmp.path / "proc").string()), disk("vdz"));
  REQUIRE(t.ok());
  REQUIRE(t->hw_queues.size() == 12);
  Plan p = make_plan(*t, spec_with(PinPolicy::HwQueues, 20));
  CHECK(join(p.cpus) == test100w_pipeline((tmp.path / "sys/block/vdz").string(), 20));
  CHECK(p.cpus[0] == 2);   // mq/1
  CHECK(p.cpus[1] == 20);  // mq/10
  CHECK(p.cpus[2] == 22);  // mq/11
  CHECK(p.cpus[3] == 4);   // mq/2
}

TEST_CASE("hw-queues plan with more jobs than CPUs warns and clamps numjobs", "[tuning]") {
  Topology t = topo_of("virtio-mq-16cpu", "vdb");
  Plan p = make_plan(t, spec_with(PinPolicy::HwQueues, 18));
  // 15 CPUs without CPU 0, then CPU 0; no CPU carries two jobs.
  CHECK(p.numjobs == 16);
  CHECK(p.cpus == std::vector<int>{2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15, 0});
  REQUIRE(p.pins.size() == 16);
  CHECK(p.pins[15].cpu == 0);
  CHECK(p.pins[15].hw_queue == 0);
  CHECK(any_contains(p.notes, "CPU 0 used too"));
  REQUIRE(p.deviations.size() == 1);
  CHECK(p.deviations[0] ==
        "numjobs 18 exceeds the 16 CPU(s) available (the CPUs of vdb's 8 hardware queue(s)): clamped to 16 "
        "job(s), one per CPU");
  CHECK(any_contains(p.notes, "warning: " + p.deviations[0] + " (--strict refuses instead)"));
  // Exactly as many jobs as CPUs is no deviation.
  Plan fits = make_plan(t, spec_with(PinPolicy::HwQueues, 16));
  CHECK(fits.numjobs == 16);
  CHECK(fits.deviations.empty());
}

TEST_CASE("idle=poll advice for Alibaba Cloud Linux uses grubby; irqbalance is named", "[tuning]") {
  Topology t = topo_of("virtio-mq-16cpu", "vdb");
  CHECK(distro_family(t.host) == DistroFamily::RedHat);
  Plan p = make_plan(t, latency_spec());
  REQUIRE(p.advice.size() >= 2);
  CHECK(p.advice[0].find("the kernel command line has idle=halt, not idle=poll") == 0);
  CHECK(p.advice[0].find("On Alibaba Cloud Linux 3 (Soaring Falcon): `sudo grubby --update-kernel=ALL "
                         "--args=idle=poll` then `sudo reboot`") != std::string::npos);
  CHECK(p.advice[0].find("update-grub") == std::string::npos);
  CHECK(p.advice[1].find("irqbalance is running (pid 812)") == 0);
  CHECK(p.advice[1].find("`sudo systemctl stop irqbalance`") != std::string::npos);
  // Unpinned profiles do not care where interrupts go.
  JobSpec iops = spec_with(PinPolicy::None, 64);
  CHECK_FALSE(any_contains(make_plan(t, iops).advice, "irqbalance"));
}

TEST_CASE("pinning none leaves every job unpinned", "[tuning]") {
  Topology t = topo_of("virtio-mq-16cpu", "vdb");
  JobSpec s = spec_with(PinPolicy::None, 4);
  s.host.rq_affinity = 0;
  Plan p = make_plan(t, s);
  CHECK(p.cpus == std::vector<int>{-1, -1, -1, -1});
  REQUIRE(p.queue.size() == 1);
  CHECK(p.queue[0].value == "0");
  CHECK_FALSE(p.hold_cstates);
  CHECK(p.advice.empty());
}

// ---- (c) NVMe: nvme1 and nvme10 ----

TEST_CASE("nvme1n1 gets nvme1's interrupts and none of nvme10's", "[tuning]") {
  Topology t = topo_of("nvme-two-controllers", "nvme1n1");
  CHECK(t.driver == "nvme");
  CHECK(t.driver_device == "nvme1");
  REQUIRE(t.hw_queues.size() == 4);
  CHECK(t.hw_queues[2].cpus == std::vector<int>{4, 5});
  REQUIRE(t.irqs.size() == 5);
  const int effective[] = {1, 2, 5, 6};
  for (int k = 0; k < 4; ++k) {
    INFO("queue " << k);
    CHECK(t.irqs[k].name == "nvme1q" + std::to_string(k + 1));
    CHECK(t.irqs[k].number == 51 + k);
    CHECK(t.irqs[k].kind == IrqKind::Queue);
    CHECK(t.irqs[k].hw_queue == k);
    CHECK(t.irqs[k].effective_cpus == std::vector<int>{effective[k]});
  }
  CHECK(t.irqs[4].name == "nvme1q0");
  CHECK(t.irqs[4].number == 50);
  CHECK(t.irqs[4].kind == IrqKind::Admin);
  for (const auto& i : t.irqs) CHECK(i.name.rfind("nvme10", 0) != 0);
}

TEST_CASE("nvme10n1 gets nvme10's interrupts and none of nvme1's", "[tuning]") {
  Topology t = topo_of("nvme-two-controllers", "nvme10n1");
  CHECK(t.driver_device == "nvme10");
  REQUIRE(t.hw_queues.size() == 8);
  REQUIRE(t.irqs.size() == 9);
  for (int k = 0; k < 8; ++k) {
    CHECK(t.irqs[k].name == "nvme10q" + std::to_string(k + 1));
    CHECK(t.irqs[k].number == 41 + k);
    CHECK(t.irqs[k].hw_queue == k);
    CHECK(t.irqs[k].effective_cpus == std::vector<int>{k});
  }
  CHECK(t.irqs[8].name == "nvme10q0");
  CHECK(t.irqs[8].kind == IrqKind::Admin);
  CHECK(irq_named(t, "nvme1q1") == nullptr);
}

TEST_CASE("nvme plans: irq pinning, hw-queues spread, Ubuntu and governor advice", "[tuning]") {
  Topology t = topo_of("nvme-two-controllers", "nvme1n1");
  Plan lat = make_plan(t, latency_spec());
  CHECK(lat.cpus == std::vector<int>{1});
  CHECK(lat.notes[0] ==
        "pinned job 0 to CPU 1: it receives nvme1q1 (IRQ 51), the completion interrupt of hardware queue 0");
  CHECK(
      lat.advice[0].find("On Ubuntu 22.04.4 LTS: add idle=poll to GRUB_CMDLINE_LINUX in /etc/default/grub") !=
      std::string::npos);
  JobSpec four = latency_spec();
  four.numjobs = 4;
  Plan p4 = make_plan(t, four);
  CHECK(p4.cpus == std::vector<int>{1, 2, 5, 6});
  CHECK(any_contains(p4.advice, "CPU 2,5 runs the powersave cpufreq governor"));
  CHECK_FALSE(any_contains(lat.advice, "governor"));  // CPU 1 runs performance

  Plan hw = make_plan(t, spec_with(PinPolicy::HwQueues, 6));
  CHECK(hw.cpus == std::vector<int>{2, 4, 6, 1, 3, 5});
  CHECK(join(hw.cpus) == test100w_pipeline(fixture("nvme-two-controllers") + "/sys/block/nvme1n1", 6));
  Topology t10 = topo_of("nvme-two-controllers", "nvme10n1");
  CHECK(make_plan(t10, spec_with(PinPolicy::HwQueues, 4)).cpus == std::vector<int>{1, 2, 3, 4});
}

// ---- (d) loop: no interrupts ----

TEST_CASE("a loop device has no interrupts and runs unpinned", "[tuning]") {
  Topology t = topo_of("loop-no-irq", "loop0");
  CHECK(t.driver == "loop");
  CHECK(t.driver_device.empty());
  CHECK(t.irqs.empty());
  CHECK_FALSE(t.has_interrupts());
  REQUIRE(t.hw_queues.size() == 1);
  CHECK(t.hw_queues[0].cpus == std::vector<int>{0, 1});
  Plan p = make_plan(t, latency_spec());
  CHECK(p.cpus == std::vector<int>{-1});
  REQUIRE(p.notes.size() == 1);
  CHECK(p.notes[0] == "loop0 has no completion interrupt (loop device): running unpinned");
  // Two jobs on a 2-CPU host: CPU 1, then CPU 0 rather than both on CPU 1.
  Plan hw = make_plan(t, spec_with(PinPolicy::HwQueues, 2));
  CHECK(hw.cpus == std::vector<int>{1, 0});
}

// ---- (d2) zram: bio-based, no interrupts, completions in the job's own context ----

TEST_CASE("a zram device (bio-based, no interrupt) pins each job to a CPU of its own, CPU 0 last",
          "[tuning]") {
  Topology t = topo_of("zram-bio", "zram1");  // captured from this VM with capture.sh
  CHECK(t.driver == "zram");
  CHECK(t.hw_queues.empty());
  CHECK_FALSE(t.has_interrupts());
  REQUIRE(t.online_cpus == std::vector<int>{0, 1});
  Plan p = make_plan(t, latency_spec());
  CHECK(p.cpus == std::vector<int>{1});
  REQUIRE(p.pins.size() == 1);
  CHECK(p.pins[0].cpu == 1);
  CHECK(p.pins[0].irq == -1);
  REQUIRE_FALSE(p.notes.empty());
  CHECK(any_contains(p.notes, "pinned job 0 to CPU 1: zram1 is bio-based with no completion interrupt"));
  // zram has no queue/rq_affinity: the latency profile's rq_affinity=2 is left alone, not
  // planned (setting it would fail with ENOENT and end the run).
  CHECK_FALSE(t.has_rq_affinity);
  CHECK(std::none_of(p.queue.begin(), p.queue.end(), [](const auto& q) { return q.attribute == "rq_affinity"; }));
  CHECK(any_contains(p.notes, "zram1 has no queue/rq_affinity"));
  CHECK(topo_of("loop-no-irq", "loop0").has_rq_affinity);
  // Three jobs on two CPUs: spread, then shared round-robin with a warning.
  Plan three = make_plan(t, spec_with(PinPolicy::Irq, 3));
  CHECK(three.cpus == std::vector<int>{1, 0, 1});
  CHECK(any_contains(three.notes, "warning: 3 jobs on 2 online CPU(s)"));
  // Only the irq (latency) policy pins: an IOPS profile's "none" leaves the io-wq workers free
  // to spread over every CPU.
  CHECK(make_plan(t, spec_with(PinPolicy::None, 1)).cpus == std::vector<int>{-1});
}

// ---- (e) an old kernel: virtio1-requests, no mq/, no effective_affinity_list ----

TEST_CASE("old single-queue virtio-blk: virtioN-requests, smp_affinity as the CPU", "[tuning]") {
  Topology t = topo_of("virtio-legacy", "vdb");
  CHECK(t.driver_device == "virtio1");
  CHECK(t.hw_queues.empty());
  REQUIRE(t.irqs.size() == 2);
  CHECK(t.irqs[0].name == "virtio1-requests");
  CHECK(t.irqs[0].kind == IrqKind::Queue);
  CHECK(t.irqs[0].hw_queue == 0);
  CHECK(t.irqs[0].effective_cpus.empty());
  CHECK(t.irqs[0].affinity_cpus == std::vector<int>{2});
  CHECK(irq_named(t, "virtio10-requests") == nullptr);
  CHECK(t.scheduler == "deadline");
  Plan p = make_plan(t, latency_spec());
  CHECK(p.cpus == std::vector<int>{2});
  // idle=poll is already on the command line; no os-release: no distro advice at all.
  CHECK_FALSE(any_contains(p.advice, "idle=poll"));
  CHECK(distro_family(t.host) == DistroFamily::Unknown);
  // No mq/: spread over the online CPUs, CPU 0 skipped.
  CHECK(make_plan(t, spec_with(PinPolicy::HwQueues, 3)).cpus == std::vector<int>{1, 2, 3});
}

TEST_CASE("distro families and idle= parsing", "[tuning]") {
  auto fam = [](std::string id, std::string like) {
    HostFacts h;
    h.os_id = std::move(id);
    h.os_id_like = std::move(like);
    return distro_family(h);
  };
  CHECK(fam("alinux", "rhel fedora centos anolis") == DistroFamily::RedHat);
  CHECK(fam("centos", "rhel fedora") == DistroFamily::RedHat);
  CHECK(fam("fedora", "") == DistroFamily::RedHat);
  CHECK(fam("rhel", "fedora") == DistroFamily::RedHat);
  CHECK(fam("somethingel", "rhel") == DistroFamily::RedHat);
  CHECK(fam("debian", "") == DistroFamily::Debian);
  CHECK(fam("ubuntu", "debian") == DistroFamily::Debian);
  CHECK(fam("pop", "ubuntu debian") == DistroFamily::Debian);
  CHECK(fam("arch", "") == DistroFamily::Unknown);
  CHECK(has_idle_poll("ro quiet idle=poll"));
  CHECK_FALSE(has_idle_poll("ro quiet idle=halt"));
  CHECK_FALSE(has_idle_poll("ro quiet -- idle=poll"));  // init's argument, not the kernel's
  CHECK_FALSE(has_idle_poll("ro xidle=poll"));
  CHECK(has_idle_poll("idle=halt idle=poll"));
}

TEST_CASE("os-release of a fixture root sits beside its proc/", "[tuning]") {
  CHECK(default_os_release_path(SysRoot()) == "/etc/os-release");
  CHECK(default_os_release_path(fixture_root("virtio-vda")) == fixture("virtio-vda") + "/etc/os-release");
}

TEST_CASE("read_topology refuses a device sysfs does not have", "[tuning]") {
  auto t = read_topology(fixture_root("virtio-vda"), disk("vdq"));
  REQUIRE_FALSE(t.ok());
  CHECK(t.error().find("no block device vdq") != std::string::npos);
  CHECK_FALSE(read_topology(fixture_root("virtio-vda"), disk("../vda")).ok());
}

// ---- RestoreGuard on a scratch tree (regular files, no root needed) ----

namespace {

struct ScratchSys {
  TempDir tmp;
  fs::path queue;
  std::string dir, journal;  // the journals' directory, and vdx's journal in it
  ScratchSys() {
    queue = tmp.path / "sys/block/vdx/queue";
    put(queue / "rq_affinity", "1\n");
    put(queue / "scheduler", "[mq-deadline] none kyber\n");
    dir = (tmp.path / "run/diskprobe").string();  // made by the guard
    journal = device_journal(dir, "vdx");
  }
  SysRoot root() const { return SysRoot((tmp.path / "sys").string(), (tmp.path / "proc").string()); }
  std::string value(const std::string& attr) const { return trim(slurp((queue / attr).string())); }
  // write_sys does not truncate (a sysfs attribute takes the whole value); on a regular
  // file a shorter value leaves the old tail, so compare what was written at the start.
  bool starts(const std::string& attr, const std::string& v) const { return value(attr).rfind(v, 0) == 0; }
};

Plan two_settings() {
  Plan p;
  p.queue = {{"rq_affinity", "2"}, {"scheduler", "none"}};
  return p;
}

}  // namespace

TEST_CASE("RestoreGuard journals, applies and restores newest first", "[tuning]") {
  ScratchSys s;
  SysRoot root = s.root();
  {
    RestoreGuard g(root, s.dir);
    auto st = g.apply("vdx", two_settings());
    INFO((st.ok() ? std::string() : st.error()));
    REQUIRE(st.ok());
    CHECK(s.value("rq_affinity") == "2");
    CHECK(s.starts("scheduler", "none"));
    REQUIRE(g.applied().size() == 2);
    CHECK(g.applied()[0].what == root.sys_path("block/vdx/queue/rq_affinity"));
    CHECK(g.applied()[0].old_value == "1");
    CHECK(g.applied()[1].old_value == "mq-deadline");  // the bracketed choice
    REQUIRE(fs::exists(s.journal));
    auto j = nlohmann::json::parse(slurp(s.journal));
    CHECK(j.at("device") == "vdx");
    REQUIRE(j.at("holders").size() == 1);
    CHECK(j["holders"][0].at("pid").get<int>() == ::getpid());
    CHECK(j["holders"][0].at("start_time").get<unsigned long long>() == this_process().start_time);
    CHECK_FALSE(j["holders"][0].at("started").get<std::string>().empty());
    REQUIRE(j.at("settings").size() == 2);
    CHECK(j["settings"][0]["path"] == root.sys_path("block/vdx/queue/rq_affinity"));
    CHECK(j["settings"][0]["old_value"] == "1");
    CHECK(j["settings"][1]["path"] == root.sys_path("block/vdx/queue/scheduler"));
    CHECK(j["settings"][1]["old_value"] == "mq-deadline");
  }
  CHECK(s.value("rq_affinity") == "1");
  CHECK(s.starts("scheduler", "mq-deadline"));
  CHECK_FALSE(fs::exists(s.journal));
}

TEST_CASE("RestoreGuard skips a setting that already has the value", "[tuning]") {
  ScratchSys s;
  SysRoot root = s.root();
  RestoreGuard g(root, s.dir);
  Plan p;
  p.queue = {{"rq_affinity", "1"}};
  REQUIRE(g.apply("vdx", p).ok());
  CHECK(g.applied().empty());
  CHECK_FALSE(fs::exists(s.journal));
}

TEST_CASE("RestoreGuard restore() twice is harmless", "[tuning]") {
  ScratchSys s;
  SysRoot root = s.root();
  RestoreGuard g(root, s.dir);
  REQUIRE(g.apply("vdx", two_settings()).ok());
  REQUIRE(g.restore().ok());
  put(s.queue / "rq_affinity", "0\n");  // someone else changes it afterwards
  REQUIRE(g.restore().ok());
  CHECK(s.value("rq_affinity") == "0");
  CHECK(g.applied().empty());
}

TEST_CASE("RestoreGuard fails on a missing attribute, undoes what it did, names the file", "[tuning]") {
  ScratchSys s;
  SysRoot root = s.root();
  RestoreGuard g(root, s.dir);
  Plan p;
  p.queue = {{"rq_affinity", "2"}, {"nomerges", "2"}};
  auto st = g.apply("vdx", p);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().find(root.sys_path("block/vdx/queue/nomerges")) != std::string::npos);
  CHECK(s.value("rq_affinity") == "1");
  CHECK(g.applied().empty());
  CHECK_FALSE(fs::exists(s.journal));
}

TEST_CASE("RestoreGuard refuses bad names before touching anything", "[tuning]") {
  ScratchSys s;
  SysRoot root = s.root();
  RestoreGuard g(root, s.dir);
  CHECK_FALSE(g.apply("../vdx", two_settings()).ok());
  Plan p;
  p.queue = {{"../../rq_affinity", "2"}};
  CHECK_FALSE(g.apply("vdx", p).ok());
  CHECK(s.value("rq_affinity") == "1");
}

TEST_CASE("RestoreGuard refuses another run's journal: live pid waits, dead pid restores", "[tuning]") {
  ScratchSys s;
  SysRoot root = s.root();
  // A live "other run": a child of ours, so it has our comm, as a second diskprobe would.
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  pid_t live = ::fork();
  REQUIRE(live >= 0);
  if (live == 0) {
    ::close(ready[1]);
    char c;
    while (::read(ready[0], &c, 1) < 0) {
    }
    ::_exit(0);
  }
  ::close(ready[0]);
  put(s.journal,
      "{\"pid\": " + std::to_string(live) + ", \"started\": \"2024-05-01T10:00:00Z\", \"settings\": []}\n");
  {
    RestoreGuard g(root, s.dir);
    auto st = g.apply("vdx", two_settings());
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().find("another diskprobe run (pid " + std::to_string(live)) != std::string::npos);
    CHECK(s.value("rq_affinity") == "1");
    CHECK_FALSE(restore_from_journal(root, s.journal).ok());
  }
  REQUIRE(fs::exists(s.journal));  // not ours: left alone
  ::close(ready[1]);               // the child exits
  REQUIRE(::waitpid(live, nullptr, 0) == live);

  RestoreGuard g(root, s.dir);
  auto st = g.apply("vdx", two_settings());
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().find("(pid " + std::to_string(live) +
                        ", started 2024-05-01T10:00:00Z) was killed before it "
                        "restored its settings") != std::string::npos);
  CHECK(st.error().find("run `diskprobe tune --restore` first") != std::string::npos);

  // A pid reused by another process (pid 1, started at another time) counts as dead too.
  put(s.journal, "{\"holders\": [{\"pid\": 1, \"start_time\": 999999999999, \"started\": \"x\"}], "
                 "\"settings\": []}\n");
  auto reused = g.apply("vdx", two_settings());
  REQUIRE_FALSE(reused.ok());
  CHECK(reused.error().find("was killed before it restored its settings") != std::string::npos);
}

TEST_CASE("restore_from_journal puts values back and removes the journal", "[tuning]") {
  ScratchSys s;
  SysRoot root = s.root();
  CHECK(restore_from_journal(root, s.journal)->empty());  // no journal: nothing to do

  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) ::_exit(0);
  REQUIRE(::waitpid(child, nullptr, 0) == child);
  put(s.queue / "rq_affinity", "2\n");
  nlohmann::json j = {
      {"pid", child},
      {"started", "2024-05-01T10:00:00Z"},
      {"settings",
       {{{"path", root.sys_path("block/vdx/queue/rq_affinity")}, {"old_value", "1"}, {"new_value", "2"}},
        {{"path", root.sys_path("block/vdx/queue/scheduler")},
         {"old_value", "kyber"},
         {"new_value", "none"}}}}};
  put(s.journal, j.dump());
  auto r = restore_from_journal(root, s.journal);
  INFO((r.ok() ? std::string() : r.error()));
  REQUIRE(r.ok());
  REQUIRE(r->size() == 2);
  CHECK((*r)[0].what == root.sys_path("block/vdx/queue/scheduler"));  // newest first
  CHECK(s.value("rq_affinity") == "1");
  CHECK(s.starts("scheduler", "kyber"));
  CHECK_FALSE(fs::exists(s.journal));
}

TEST_CASE("restore_from_journal refuses a malformed journal and paths outside sysfs", "[tuning]") {
  ScratchSys s;
  SysRoot root = s.root();
  put(s.journal, "{\"pid\": \"x\"");
  auto r = restore_from_journal(root, s.journal);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().find("journal " + s.journal) != std::string::npos);

  fs::path outside = s.tmp.path / "not-sysfs";
  put(outside, "keep\n");
  put(s.journal, nlohmann::json({{"pid", 2147483647},
                                 {"settings", {{{"path", outside.string()}, {"old_value", "gone"}}}}})
                     .dump());
  r = restore_from_journal(root, s.journal);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().find("is not under") != std::string::npos);
  CHECK(trim(slurp(outside.string())) == "keep");
}

TEST_CASE("RestoreGuard holds C-states through an open fd and releases it", "[tuning]") {
  ScratchSys s;
  SysRoot root = s.root();
  fs::path qos = s.tmp.path / "cpu_dma_latency";
  put(qos, "");
  RestoreGuard g(root, s.dir);
  g.set_cpu_dma_latency_path(qos.string());
  Plan p;
  p.hold_cstates = true;
  REQUIRE(g.apply("vdx", p).ok());
  REQUIRE(g.applied().size() == 1);
  CHECK(g.applied()[0].what == qos.string());
  CHECK(g.applied()[0].new_value == "0");
  CHECK(fs::file_size(qos) == 4);      // one binary int32, as the PM QoS interface wants
  CHECK_FALSE(fs::exists(s.journal));  // the kernel releases it on death: nothing to journal
  REQUIRE(g.restore().ok());
  CHECK(g.applied().empty());
}
