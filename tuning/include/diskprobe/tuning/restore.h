// RestoreGuard: applies a plan's host settings and puts every one back when it goes out of
// scope. Each change is written to a journal before it is made, so `diskprobe tune
// --restore` can undo a run that was killed with SIGKILL.
#pragma once

#include <string>
#include <vector>

#include "diskprobe/base/fd.h"
#include "diskprobe/base/status.h"
#include "diskprobe/stats/results.h"
#include "diskprobe/base/sysroot.h"
#include "diskprobe/tuning/plan.h"

namespace diskprobe::tuning {

// On tmpfs on purpose: a reboot resets every sysfs setting, and the journals go with it.
inline constexpr const char* kDefaultJournalDir = "/run/diskprobe";
inline constexpr const char* kCpuDmaLatency = "/dev/cpu_dma_latency";

// The journals, all in one directory:
//   DIR/<disk>.json  one device's queue settings, written by the one run that tunes that
//                    device (created with link(2): a second run on the same device is refused);
//   DIR/host.json    settings every run shares (cpuidle states), with every run that holds
//                    them; the last holder to leave puts them back (see README "Tuning").
// Both: {"device": "loop3", "diskseq": "12", "holders": [{"pid": 1234, "start_time": 5678,
//        "started": "2024-05-01T10:00:00Z"}], "settings": [{"path": "/sys/block/loop3/queue/
//        rq_affinity", "old_value": "1", "new_value": "2"}, ...]}  oldest first.
// /dev/cpu_dma_latency is not journalled: the kernel releases it when the process dies.
std::string device_journal(const std::string& dir, const std::string& disk);
std::string host_journal(const std::string& dir);

// A run, as a journal names it: a pid is reused after a kill, its start time (clock ticks
// after boot, field 22 of /proc/PID/stat) with it is not, and the boot id says which boot the
// two belong to. Neither depends on the command's name or path: launcher, real binary and a
// renamed copy are judged alike.
struct Owner {
  int pid = 0;
  unsigned long long start_time = 0;  // 0: not recorded (an older journal)
  std::string started;                // ISO 8601 UTC, for people
  std::string boot_id;                // /proc/sys/kernel/random/boot_id; "" in an older journal
};
Owner this_process();
bool alive(const Owner& o);

class RestoreGuard {
 public:
  RestoreGuard(const SysRoot& root, std::string journal_dir = kDefaultJournalDir);
  RestoreGuard(const RestoreGuard&) = delete;
  RestoreGuard& operator=(const RestoreGuard&) = delete;
  ~RestoreGuard();  // restore(); errors are logged

  // Applies the plan's queue settings to `disk`, disables its cpuidle states and holds
  // C-states if asked. On the first failure, restores what was already changed and returns
  // the error. Refuses when this device's journal exists (live owner: it is running; dead:
  // `diskprobe tune --restore`), or when a killed run left shared host settings behind.
  Status apply(const std::string& disk, const Plan& plan);
  // Puts back every setting, newest first, and removes the journal. Shared host settings are
  // put back only by the last run holding them. Safe to call twice. Settings that could not
  // be put back stay in the journal for `tune --restore`.
  Status restore();

  // What this guard changed and has not restored yet; `what` is the absolute path
  // ("/sys/block/loop3/queue/rq_affinity", "/dev/cpu_dma_latency").
  const std::vector<AppliedSetting>& applied() const { return applied_; }

  // Tests only: hold C-states through another file than /dev/cpu_dma_latency.
  void set_cpu_dma_latency_path(std::string path) { cpu_dma_latency_path_ = std::move(path); }

 private:
  Status set(const std::string& rel, const std::string& value);
  Status disable_cstates(const Plan& plan);
  Status hold_cstates();
  Status write_journal() const;  // first write: exclusive create, refuses another run's journal
  void restore_device(std::string& errors);
  void leave_host(std::string& errors);

  const SysRoot& root_;
  std::string dir_;
  std::string journal_;  // dir_/<disk>.json once apply() knows the disk
  std::string disk_, diskseq_;
  std::vector<AppliedSetting> applied_;
  Fd cpu_dma_latency_;
  std::string cpu_dma_latency_path_ = kCpuDmaLatency;
  Owner self_;
  bool owns_journal_ = false;  // this guard created the device journal
  bool holds_host_ = false;    // this guard is one of host.json's holders
};

// Restores what a killed run left in one journal, newest first, and removes it. Returns what
// it restored; no journal -> empty. Refuses while a run holding it is alive. Settings of a
// device that is gone (no /sys/block/DEV) have nothing to put back: they go to `gone`, not
// into the error. Under another diskseq (a loop device detached and attached again keeps its
// queue) a setting still at the value the run set is restored, one at a third value is an
// error and left alone.
Result<std::vector<AppliedSetting>> restore_from_journal(const SysRoot& root, const std::string& journal_path,
                                                         std::vector<AppliedSetting>* gone = nullptr);

// `tune --restore`: every journal in `dir`, the devices' first, then host.json.
struct RestoreReport {
  std::vector<AppliedSetting> restored;
  std::vector<AppliedSetting> gone;     // their device no longer exists: nothing left changed
  std::vector<AppliedSetting> already;  // another diskseq, and the old value is back already
  std::vector<std::string> left;        // journals of runs still alive: they restore themselves
  std::vector<std::string> failed;      // could not be put back; their journal keeps them
  bool any_journal = false;
};
RestoreReport restore_all(const SysRoot& root, const std::string& dir = kDefaultJournalDir);

}  // namespace diskprobe::tuning
