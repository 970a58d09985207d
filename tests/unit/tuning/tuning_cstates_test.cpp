// tuning/: cpuidle states, NVMe poll queues, a virtio-scsi disk, scheduler and nomerges
// wishes, the numjobs clamp, and RestoreGuard on cpuidle attributes (fixture trees only).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "diskprobe/profiles/profiles.h"
#include "diskprobe/tuning/advice.h"
#include "diskprobe/tuning/plan.h"
#include "diskprobe/tuning/restore.h"
#include "diskprobe/tuning/topology.h"
#include "tuning_fixtures.h"

namespace fs = std::filesystem;
using namespace diskprobe;
using namespace diskprobe::tuning;
using namespace tuning_fixtures;

// ---- cpuidle on this VM (captured into virtio-vda) ----

TEST_CASE("vda fixture: this VM's haltpoll cpuidle states are read per CPU", "[tuning][cstates]") {
  Topology t = topo_of("virtio-vda", "vda");
  CHECK(t.host.cpuidle_driver == "haltpoll");
  REQUIRE(t.host.cstates.size() == 4);
  const char* names[] = {"POLL", "haltpoll idle"};
  for (int cpu = 0; cpu < 2; ++cpu) {
    for (int k = 0; k < 2; ++k) {
      const CState& c = t.host.cstates[static_cast<size_t>(cpu * 2 + k)];
      INFO("cpu" << cpu << " state" << k);
      CHECK(c.cpu == cpu);
      CHECK(c.index == k);
      CHECK(c.name == names[k]);
      CHECK(c.latency_us == static_cast<unsigned>(k));
      CHECK_FALSE(c.disabled);
    }
  }
  CHECK(t.schedulers == std::vector<std::string>{"none", "mq-deadline", "kyber", "bfq"});
}

TEST_CASE("C-state limit 0 disables every state but state0 on every CPU (AWS io1's cpupower loop)",
          "[tuning][cstates]") {
  Topology t = topo_of("virtio-vda", "vda");
  JobSpec s = latency_spec();
  s.host.cstate_latency_limit_us = 0;
  Plan p = make_plan(t, s);
  REQUIRE(p.disable_cstates.size() == 2);
  CHECK(p.disable_cstates[0].cpu == 0);
  CHECK(p.disable_cstates[0].state == 1);
  CHECK(p.disable_cstates[0].name == "haltpoll idle");
  CHECK(p.disable_cstates[0].latency_us == 1);
  CHECK(p.disable_cstates[1].cpu == 1);
  CHECK(p.disable_cstates[1].state == 1);
  CHECK(any_contains(
      p.notes,
      "disable cpuidle state1 (haltpoll idle, exit latency 1 us) on CPU 0-1: exit latency above 0 us "
      "(cpuidle driver haltpoll); restored when the run ends"));
  CHECK(p.deviations.empty());
  // The plan disables them, so the advice does not ask for it again.
  CHECK_FALSE(any_contains(p.advice, "C-states enabled"));
  // A limit above every exit latency leaves them alone.
  s.host.cstate_latency_limit_us = 1;
  Plan loose = make_plan(t, s);
  CHECK(loose.disable_cstates.empty());
  CHECK(any_contains(loose.notes, "no cpuidle state but state0 has an exit latency above 1 us"));
}

TEST_CASE("latency advice lists the enabled C-states and their exit latencies", "[tuning][cstates]") {
  Plan p = make_plan(topo_of("virtio-vda", "vda"), latency_spec());
  CHECK(p.disable_cstates.empty());  // not asked for
  CHECK(any_contains(
      p.advice,
      "C-states enabled (cpuidle driver haltpoll): state1 haltpoll idle (exit latency 1 us, CPU 0-1). "
      "To disable them for the run and have them restored afterwards: --cstate_latency_limit_us 0"));
}

TEST_CASE("without cpuidle the plan says so instead of pretending", "[tuning][cstates]") {
  Topology t = topo_of("loop-no-irq", "loop0");
  CHECK(t.host.cstates.empty());
  CHECK(t.host.cpuidle_driver.empty());
  JobSpec s = latency_spec();
  s.host.cstate_latency_limit_us = 0;
  Plan p = make_plan(t, s);
  CHECK(p.disable_cstates.empty());
  CHECK(any_contains(p.notes,
                     "no cpuidle states to disable: this kernel has no cpuidle driver (no "
                     "/sys/devices/system/cpu/cpu0/cpuidle)"));
  CHECK(any_contains(p.notes, "only idle=poll on the kernel command line avoids it"));
}

// ---- NVMe with an admin queue and poll queues ----

TEST_CASE("topology of an NVMe with admin queue and two poll queues", "[tuning][nvme]") {
  Topology t = topo_of("nvme-poll-queues", "nvme0n1");
  CHECK(t.driver == "nvme");
  CHECK(t.driver_device == "nvme0");
  REQUIRE(t.hw_queues.size() == 6);
  for (int k = 0; k < 4; ++k) {
    INFO("queue " << k);
    CHECK(t.hw_queues[k].cpus == std::vector<int>{k});
    CHECK_FALSE(t.hw_queues[k].polled);
  }
  CHECK(t.hw_queues[4].cpus == std::vector<int>{0, 1});
  CHECK(t.hw_queues[4].polled);
  CHECK(t.hw_queues[5].cpus == std::vector<int>{2, 3});
  CHECK(t.hw_queues[5].polled);
  REQUIRE(t.irqs.size() == 5);
  for (int k = 0; k < 4; ++k) {
    INFO("queue " << k);
    CHECK(t.irqs[k].number == 25 + k);
    CHECK(t.irqs[k].name == "nvme0q" + std::to_string(k + 1));
    CHECK(t.irqs[k].kind == IrqKind::Queue);
    CHECK(t.irqs[k].hw_queue == k);
    CHECK(t.irqs[k].effective_cpus == std::vector<int>{k});
    CHECK(t.irqs[k].affinity_cpus == std::vector<int>{k});
  }
  CHECK(t.irqs[4].number == 24);
  CHECK(t.irqs[4].name == "nvme0q0");
  CHECK(t.irqs[4].kind == IrqKind::Admin);
  CHECK(t.irqs[4].hw_queue == -1);
  CHECK(t.irqs[4].affinity_cpus == std::vector<int>{0, 1, 2, 3});
  CHECK(t.online_cpus == std::vector<int>{0, 1, 2, 3});
  CHECK(t.scheduler == "none");
  CHECK(t.host.cpuidle_driver == "intel_idle");
  CHECK(t.host.cstates.size() == 16);
}

TEST_CASE("NVMe poll queues: irq plan skips the admin queue, hw-queues plan skips poll queues",
          "[tuning][nvme]") {
  Topology t = topo_of("nvme-poll-queues", "nvme0n1");
  Plan lat = make_plan(t, latency_spec());
  CHECK(lat.cpus == std::vector<int>{1});
  REQUIRE(lat.pins.size() == 1);
  CHECK(lat.pins[0].irq == 26);
  CHECK(lat.pins[0].irq_name == "nvme0q2");
  CHECK(lat.pins[0].hw_queue == 1);
  JobSpec four = latency_spec();
  four.numjobs = 4;
  CHECK(make_plan(t, four).cpus == std::vector<int>{1, 2, 3, 0});

  const std::string dir = fixture("nvme-poll-queues") + "/sys/block/nvme0n1";
  Plan hw3 = make_plan(t, spec_with(PinPolicy::HwQueues, 3));
  CHECK(hw3.cpus == std::vector<int>{1, 2, 3});
  CHECK(join(hw3.cpus) == test100w_pipeline(dir, 3));  // the poll queues do not matter yet
  CHECK(any_contains(hw3.notes,
                     "left out nvme0n1's poll queue(s) 4,5: they have no interrupt and take only "
                     "polled I/O"));
  // Past the default queues the shell reads the poll queues' cpu_list and doubles CPU 2 up
  // on a "queue" ordinary I/O never reaches; diskprobe clamps to the 4 CPUs instead.
  CHECK(test100w_pipeline(dir, 5) == "1,2,3,0,2");
  Plan hw5 = make_plan(t, spec_with(PinPolicy::HwQueues, 5));
  CHECK(hw5.numjobs == 4);
  CHECK(hw5.cpus == std::vector<int>{1, 2, 3, 0});
  REQUIRE(hw5.deviations.size() == 1);
  CHECK(hw5.deviations[0] ==
        "numjobs 5 exceeds the 4 CPU(s) available (the CPUs of nvme0n1's 4 hardware queue(s)): clamped to 4 "
        "job(s), one per CPU");
}

TEST_CASE("intel_idle C-states: a 10 us limit disables only C6, and not where it is already off",
          "[tuning][cstates]") {
  Topology t = topo_of("nvme-poll-queues", "nvme0n1");
  JobSpec s = spec_with(PinPolicy::None, 1);
  s.host.cstate_latency_limit_us = 10;
  Plan p = make_plan(t, s);
  REQUIRE(p.disable_cstates.size() == 3);
  for (int cpu = 0; cpu < 3; ++cpu) {
    CHECK(p.disable_cstates[cpu].cpu == cpu);
    CHECK(p.disable_cstates[cpu].state == 3);
    CHECK(p.disable_cstates[cpu].name == "C6");
    CHECK(p.disable_cstates[cpu].latency_us == 133);
  }
  CHECK(any_contains(p.notes,
                     "disable cpuidle state3 (C6, exit latency 133 us) on CPU 0-2: exit latency above "
                     "10 us (cpuidle driver intel_idle)"));
  CHECK(any_contains(p.notes, "already disabled: cpuidle state3 (C6, exit latency 133 us) on CPU 3"));

  s.host.cstate_latency_limit_us = 0;
  Plan all = make_plan(t, s);
  CHECK(all.disable_cstates.size() == 11);  // C1, C1E, C6 on 4 CPUs, less CPU 3's C6
  for (const auto& c : all.disable_cstates) CHECK(c.state != 0);
  CHECK(any_contains(all.notes,
                     "disable cpuidle state1 (C1, exit latency 2 us) on CPU 0-3; state2 (C1E, exit "
                     "latency 10 us) on CPU 0-3; state3 (C6, exit latency 133 us) on CPU 0-2"));
}

// ---- a SCSI disk (virtio-scsi) ----

TEST_CASE("topology of a virtio-scsi disk: request queues by IRQ order, virtio20 is not virtio2",
          "[tuning][scsi]") {
  Topology t = topo_of("scsi-virtio", "sda");
  CHECK(t.driver == "scsi");
  CHECK(t.driver_device == "host0");
  REQUIRE(t.hw_queues.size() == 2);
  CHECK(t.hw_queues[0].cpus == std::vector<int>{0, 1});
  CHECK(t.hw_queues[1].cpus == std::vector<int>{2, 3});
  CHECK_FALSE(t.hw_queues[0].polled);
  REQUIRE(t.irqs.size() == 5);
  CHECK(t.irqs[0].number == 33);
  CHECK(t.irqs[0].name == "virtio2-request");
  CHECK(t.irqs[0].kind == IrqKind::Queue);
  CHECK(t.irqs[0].hw_queue == 0);
  CHECK(t.irqs[0].effective_cpus == std::vector<int>{1});
  CHECK(t.irqs[1].number == 34);
  CHECK(t.irqs[1].hw_queue == 1);
  CHECK(t.irqs[1].effective_cpus == std::vector<int>{3});
  CHECK(t.irqs[2].name == "virtio2-config");
  CHECK(t.irqs[2].kind == IrqKind::Config);
  CHECK(t.irqs[3].name == "virtio2-control");
  CHECK(t.irqs[3].kind == IrqKind::Other);
  CHECK(t.irqs[4].name == "virtio2-event");
  CHECK(t.irqs[4].kind == IrqKind::Other);
  for (const auto& i : t.irqs) CHECK(i.name.rfind("virtio20", 0) != 0);
  CHECK(t.scheduler == "mq-deadline");
  CHECK(t.host.cstates.empty());
}

TEST_CASE("virtio-scsi plans: irq on the request queue's CPU, hw-queues as test100w.sh", "[tuning][scsi]") {
  Topology t = topo_of("scsi-virtio", "sda");
  Plan lat = make_plan(t, latency_spec());
  CHECK(lat.cpus == std::vector<int>{1});
  CHECK(lat.notes.back() ==
        "pinned job 0 to CPU 1: it receives virtio2-request (IRQ 33), the completion interrupt of hardware "
        "queue 0");
  JobSpec two = latency_spec();
  two.numjobs = 2;
  CHECK(make_plan(t, two).cpus == std::vector<int>{1, 3});
  const std::string dir = fixture("scsi-virtio") + "/sys/block/sda";
  for (unsigned n : {1u, 2u, 3u}) {
    INFO("numjobs " << n);
    CHECK(join(make_plan(t, spec_with(PinPolicy::HwQueues, n)).cpus) == test100w_pipeline(dir, n));
  }
  CHECK(make_plan(t, spec_with(PinPolicy::HwQueues, 3)).cpus == std::vector<int>{2, 1, 3});
  CHECK(any_contains(lat.advice, "uses the mq-deadline I/O scheduler"));
}

// ---- scheduler and nomerges wishes ----

TEST_CASE("scheduler and nomerges become queue settings; an unoffered scheduler is a deviation", "[tuning]") {
  Topology t = topo_of("scsi-virtio", "sda");
  JobSpec s = spec_with(PinPolicy::None, 1);
  s.host.scheduler = "none";
  s.host.nomerges = 2;
  Plan p = make_plan(t, s);
  REQUIRE(p.queue.size() == 2);
  CHECK(p.queue[0].attribute == "scheduler");
  CHECK(p.queue[0].value == "none");
  CHECK(p.queue[1].attribute == "nomerges");
  CHECK(p.queue[1].value == "2");
  CHECK(p.deviations.empty());

  Topology nv = topo_of("nvme-poll-queues", "nvme0n1");  // offers none and mq-deadline only
  s.host.scheduler = "bfq";
  Plan bfq = make_plan(nv, s);
  REQUIRE(bfq.queue.size() == 1);
  CHECK(bfq.queue[0].attribute == "nomerges");
  REQUIRE(bfq.deviations.size() == 1);
  CHECK(
      bfq.deviations[0] ==
      "scheduler bfq not set: nvme0n1 offers only none, mq-deadline (load its module, e.g. `modprobe bfq`)");
  CHECK(any_contains(bfq.notes, "warning: scheduler bfq not set"));
}

TEST_CASE("profile host keys scheduler, nomerges and cstate_latency_limit_us parse and override",
          "[tuning][profiles]") {
  auto spec = profiles::parse(R"({"workload": {"rw": "randwrite", "runtime": "10s", "time_based": true},
      "host": {"scheduler": "none", "nomerges": 2, "cstate_latency_limit_us": 0}})",
                              "test.json");
  INFO((spec.ok() ? std::string() : spec.error()));
  REQUIRE(spec.ok());
  CHECK(spec->host.scheduler == "none");
  CHECK(spec->host.nomerges == 2);
  CHECK(spec->host.cstate_latency_limit_us == 0u);
  REQUIRE(profiles::apply_overrides(
              *spec, {{"scheduler", "mq-deadline"}, {"nomerges", "1"}, {"cstate_latency_limit_us", "20"}})
              .ok());
  CHECK(spec->host.scheduler == "mq-deadline");
  CHECK(spec->host.nomerges == 1);
  CHECK(spec->host.cstate_latency_limit_us == 20u);

  auto bad = profiles::apply_overrides(
      *spec, {{"scheduler", "../none"}, {"nomerges", "3"}, {"cstate_latency_limit_us", "-1"}});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().find("--scheduler ../none: use an I/O scheduler name") != std::string::npos);
  CHECK(bad.error().find("--nomerges 3: use 0, 1 or 2") != std::string::npos);
  CHECK(bad.error().find("--cstate_latency_limit_us -1") != std::string::npos);
  CHECK(spec->host.scheduler == "mq-deadline");
  const auto& keys = profiles::override_keys();
  for (const char* k : {"scheduler", "nomerges", "cstate_latency_limit_us"}) {
    CHECK(std::find(keys.begin(), keys.end(), k) != keys.end());
  }
}

// ---- RestoreGuard on cpuidle attributes (scratch tree) ----

TEST_CASE("RestoreGuard disables cpuidle states, journals them and restores them", "[tuning][cstates]") {
  TempDir tmp;
  fs::path sys = tmp.path / "sys";
  put(sys / "block/vdx/queue/rq_affinity", "1\n");
  for (int cpu = 0; cpu < 2; ++cpu) {
    put(sys / ("devices/system/cpu/cpu" + std::to_string(cpu) + "/cpuidle/state1/disable"), "0\n");
  }
  std::string dir = (tmp.path / "run/diskprobe").string();
  std::string journal = host_journal(dir);  // cpuidle states are the host's, not the device's
  SysRoot root(sys.string(), (tmp.path / "proc").string());
  auto disable_of = [&](int cpu) {
    return trim(
        slurp((sys / ("devices/system/cpu/cpu" + std::to_string(cpu) + "/cpuidle/state1/disable")).string()));
  };
  Plan p;
  p.disable_cstates = {{0, 1, "haltpoll idle", 1}, {1, 1, "haltpoll idle", 1}};
  {
    RestoreGuard g(root, dir);
    auto st = g.apply("vdx", p);
    INFO((st.ok() ? std::string() : st.error()));
    REQUIRE(st.ok());
    CHECK(disable_of(0) == "1");
    CHECK(disable_of(1) == "1");
    auto j = nlohmann::json::parse(slurp(journal));
    REQUIRE(j.at("settings").size() == 2);
    CHECK(j["settings"][0]["path"] == root.sys_path("devices/system/cpu/cpu0/cpuidle/state1/disable"));
    CHECK(j["settings"][0]["old_value"] == "0");
    CHECK(j["settings"][0]["new_value"] == "1");
  }
  CHECK(disable_of(0) == "0");
  CHECK(disable_of(1) == "0");
  CHECK_FALSE(fs::exists(journal));

  // A killed run's journal of cpuidle settings is undone by restore_from_journal.
  put(sys / "devices/system/cpu/cpu1/cpuidle/state1/disable", "1\n");
  put(journal, nlohmann::json({{"pid", 2147483647},
                               {"started", "2024-05-01T10:00:00Z"},
                               {"settings",
                                {{{"path", root.sys_path("devices/system/cpu/cpu1/cpuidle/state1/disable")},
                                  {"old_value", "0"},
                                  {"new_value", "1"}}}}})
                   .dump());
  auto r = restore_from_journal(root, journal);
  INFO((r.ok() ? std::string() : r.error()));
  REQUIRE(r.ok());
  REQUIRE(r->size() == 1);
  CHECK(disable_of(1) == "0");
  CHECK_FALSE(fs::exists(journal));
}

TEST_CASE("RestoreGuard never disables state0 and undoes cpuidle changes when a later one fails",
          "[tuning][cstates]") {
  TempDir tmp;
  fs::path sys = tmp.path / "sys";
  put(sys / "devices/system/cpu/cpu0/cpuidle/state0/disable", "0\n");
  put(sys / "devices/system/cpu/cpu0/cpuidle/state1/disable", "0\n");
  std::string dir = (tmp.path / "journals").string();
  SysRoot root(sys.string(), (tmp.path / "proc").string());
  RestoreGuard g(root, dir);
  Plan zero;
  zero.disable_cstates = {{0, 0, "POLL", 0}};
  auto st = g.apply("vdx", zero);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error() == "tuning: bad cpuidle state cpu0/state0");
  CHECK(trim(slurp((sys / "devices/system/cpu/cpu0/cpuidle/state0/disable").string())) == "0");

  Plan missing;
  missing.disable_cstates = {{0, 1, "C1", 2}, {5, 1, "C1", 2}};  // cpu5 does not exist
  st = g.apply("vdx", missing);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().find(root.sys_path("devices/system/cpu/cpu5/cpuidle/state1/disable")) !=
        std::string::npos);
  CHECK(trim(slurp((sys / "devices/system/cpu/cpu0/cpuidle/state1/disable").string())) == "0");
  CHECK(g.applied().empty());
  CHECK_FALSE(fs::exists(host_journal(dir)));
}

TEST_CASE("RestoreGuard refuses a killed run's journal even when its plan changes nothing", "[tuning]") {
  TempDir tmp;
  fs::path sys = tmp.path / "sys";
  put(sys / "block/vdx/queue/rq_affinity", "2\n");  // as the killed run left it
  std::string dir = (tmp.path / "journals").string();
  std::string journal = device_journal(dir, "vdx");
  put(journal, nlohmann::json({{"pid", 2147483647},
                               {"started", "2024-05-01T10:00:00Z"},
                               {"settings",
                                {{{"path", (sys / "block/vdx/queue/rq_affinity").string()},
                                  {"old_value", "1"},
                                  {"new_value", "2"}}}}})
                   .dump());
  SysRoot root(sys.string(), (tmp.path / "proc").string());
  RestoreGuard g(root, dir);
  Plan p;
  p.queue = {{"rq_affinity", "2"}};
  auto st = g.apply("vdx", p);
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().find("run `diskprobe tune --restore` first") != std::string::npos);
  CHECK(fs::exists(journal));
}

TEST_CASE("nr_requests and write cache are read; too few tags for the I/Os in flight is advised",
          "[tuning]") {
  Topology t = topo_of("virtio-vda", "vda");
  CHECK(t.nr_requests == 256);
  CHECK(t.write_cache == "write back");
  JobSpec iops = spec_with(PinPolicy::None, 64);
  iops.iodepth = 64;  // essd-plx-iops: 4096 in flight on one queue of 256 tags
  Plan p = make_plan(t, iops);
  REQUIRE(p.advice.size() == 1);
  CHECK(
      p.advice[0] ==
      "4096 I/Os in flight (iodepth 64 x 64 jobs) but vda has nr_requests 256 per hardware queue x 1: the "
      "rest "
      "wait in the kernel for a tag, which the latency includes and the disk never sees. For the test: `echo "
      "4096 | sudo tee /sys/block/vda/queue/nr_requests` (the driver may cap it; put back 256 afterwards).");
  iops.numjobs = 4;  // 256 in flight: fits
  CHECK_FALSE(any_contains(make_plan(t, iops).advice, "nr_requests"));
  // NVMe: 4 interrupt-driven queues of 1023 tags; the poll queues do not count.
  Topology nv = topo_of("nvme-poll-queues", "nvme0n1");
  CHECK(nv.write_cache == "write through");
  JobSpec big = spec_with(PinPolicy::None, 64);
  big.iodepth = 128;
  CHECK(any_contains(make_plan(nv, big).advice, "nr_requests 1023 per hardware queue x 4"));
  big.iodepth = 63;
  CHECK_FALSE(any_contains(make_plan(nv, big).advice, "nr_requests"));
  CHECK(topo_of("scsi-virtio", "sda").write_cache.empty());
}
