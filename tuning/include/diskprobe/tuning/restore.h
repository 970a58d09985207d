// RestoreGuard: applies a plan's host settings and puts every one back when it goes out of
// scope. Each change is written to a journal before it is made, so `diskprobe tune
// --restore` can undo a run that was killed with SIGKILL.
#pragma once

#include <string>
#include <vector>

#include "diskprobe/core/fd.h"
#include "diskprobe/core/result.h"
#include "diskprobe/core/results.h"
#include "diskprobe/core/sysroot.h"
#include "diskprobe/tuning/plan.h"

namespace diskprobe::tuning {

// On tmpfs on purpose: a reboot resets every sysfs setting, and the journal goes with it.
inline constexpr const char* kDefaultJournal = "/run/diskprobe/restore.json";
inline constexpr const char* kCpuDmaLatency = "/dev/cpu_dma_latency";

// Journal (JSON): {"pid": 1234, "started": "2024-05-01T10:00:00Z",
//                  "settings": [{"path": "/sys/block/vdc/queue/rq_affinity",
//                                "old_value": "1", "new_value": "2"}, ...]}  oldest first.
// Only sysfs settings go in it: /dev/cpu_dma_latency is released by the kernel when the
// process dies, however it dies.
class RestoreGuard {
 public:
  RestoreGuard(const SysRoot& root, std::string journal_path = kDefaultJournal);
  RestoreGuard(const RestoreGuard&) = delete;
  RestoreGuard& operator=(const RestoreGuard&) = delete;
  ~RestoreGuard();  // restore(); errors are logged

  // Applies the plan's queue settings to `disk`, disables its cpuidle states and holds
  // C-states if asked. On the first failure, restores what was already changed and returns
  // the error. Refuses when another run's journal exists (live pid: it is running; dead
  // pid: `diskprobe tune --restore`).
  Status apply(const std::string& disk, const Plan& plan);
  // Puts back every setting, newest first, and removes the journal. Safe to call twice.
  // Settings that could not be put back stay in the journal for `tune --restore`.
  Status restore();

  // What this guard changed and has not restored yet; `what` is the absolute path
  // ("/sys/block/loop3/queue/rq_affinity", "/dev/cpu_dma_latency").
  const std::vector<AppliedSetting>& applied() const { return applied_; }

  // Tests only: hold C-states through another file than /dev/cpu_dma_latency.
  void set_cpu_dma_latency_path(std::string path) { cpu_dma_latency_path_ = std::move(path); }

 private:
  Status set(const std::string& rel, const std::string& value);
  Status hold_cstates();
  Status write_journal() const;
  Status claim_journal() const;  // first write: exclusive create, refuses another run's journal

  const SysRoot& root_;
  std::string journal_;
  std::vector<AppliedSetting> applied_;
  Fd cpu_dma_latency_;
  std::string cpu_dma_latency_path_ = kCpuDmaLatency;
  std::string started_;        // ISO 8601 UTC, for the journal
  bool owns_journal_ = false;  // this guard created the journal file
};

// Restores what a killed run left in the journal, newest first, and removes it. Returns
// what it restored; no journal -> empty. Refuses while the run that wrote it is alive.
Result<std::vector<AppliedSetting>> restore_from_journal(const SysRoot& root,
                                                         const std::string& journal_path = kDefaultJournal);

}  // namespace diskprobe::tuning
