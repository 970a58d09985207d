// The live progress line on stderr while a run is going (fio's "Jobs:" line): elapsed,
// ETA, and IOPS and bandwidth per direction from the device's own counters, so the engine's
// hot path does nothing for it. Silent when stderr is not a terminal.
#pragma once

#include <atomic>
#include <thread>

#include "diskprobe/device/block_device.h"
#include "diskprobe/spec/job_spec.h"
#include "diskprobe/base/sysroot.h"

namespace diskprobe::cli {

class ProgressLine {
 public:
  ProgressLine(const SysRoot& root, const BlockDevice& dev, const JobSpec& spec);
  ~ProgressLine();  // stops the thread and clears the line
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // The line for one interval; public for tests.
  static std::string format(double elapsed_s, double planned_s, const DiskCounters& before,
                            const DiskCounters& after, double interval_s);

 private:
  void loop();

  const SysRoot& root_;
  const BlockDevice& dev_;
  double planned_s_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace diskprobe::cli
