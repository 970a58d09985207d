// Target: what a run's I/O goes to (a block device or the files of a file run), with the
// device facts the engine and the validator need, filled from sysfs by the readers below.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "diskprobe/base/sysroot.h"

namespace diskprobe {

struct Target {
  std::string path;         // block device or regular file
  uint64_t size_bytes = 0;  // the whole target (each job's file, with job_paths)
  uint32_t logical_block_size = 512;
  uint64_t device_id = 0;   // device_identity() of the device, for every block header
  // The block device the preflight checked (st_rdev, makedev(major, minor)); the engine opens
  // `path` and refuses to write where it now names another. 0: a file, nothing to compare.
  uint64_t rdev = 0;
  // --directory runs: job j works on job_paths[j] (its own file); empty = every job on path.
  std::vector<std::string> job_paths;
  // Polled completions (hipri): 1 = the device has poll queues, 0 = it has none (then
  // poll_why says why and what to do), -1 = not a block device or not known.
  int io_poll = -1;
  std::string poll_why;
  // A bio-based block device (no blk-mq hardware queues, /sys/block/X/mq absent: zram, brd).
  // Without nowait support, io_uring does each of its I/Os in an io-wq worker thread.
  bool bio_based = false;
  // A loop device (/sys/block/X/loop): the loop driver runs each request in a kworker.
  bool loop_device = false;
};

// What the sysfs says about polled I/O on a disk: io_poll, and for NVMe the driver's
// poll_queues parameter, turned into Target::io_poll / poll_why.
void read_poll_support(const SysRoot& root, const std::string& disk, Target& target);

// Target::bio_based (a disk with no mq/ directory) and Target::loop_device (one with a loop/
// directory) from the sysfs.
void read_driver_kind(const SysRoot& root, const std::string& disk, Target& target);

}  // namespace diskprobe
