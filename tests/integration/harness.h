// Helpers for integration tests: real loop devices, running commands, reading bytes.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "diskprobe/device/loop_device.h"

namespace testing {

struct CommandResult {
  int exit_code = -1;     // exit status, or 128 + signal
  std::string out, err;
};

// Runs argv (no shell) with stdin from /dev/null and captures both streams.
CommandResult run(const std::vector<std::string>& argv);
// Runs a shell line; for the real tools (mkfs.ext4, sgdisk) in setup steps.
CommandResult sh(const std::string& line);
// Runs a shell line and REQUIREs that it succeeded; both streams are printed when it did not.
void must(const std::string& line);

// Runs f when the scope ends, however the test ends (unmount, swapoff, detach).
class Guard {
 public:
  explicit Guard(std::function<void()> f) : f_(std::move(f)) {}
  Guard(const Guard&) = delete;
  Guard& operator=(const Guard&) = delete;
  ~Guard() {
    if (f_) f_();
  }

 private:
  std::function<void()> f_;
};

// The diskprobe binary under test.
CommandResult run_diskprobe(const std::vector<std::string>& args);
// The command line that runs the diskprobe binary with `args` under strace -f, the system
// calls named in `syscalls` (strace's trace=) written to `trace`. LeakSanitizer cannot run
// under ptrace: an ASan build is traced with it off. The caller checks that strace is there.
std::vector<std::string> diskprobe_traced(const std::string& trace, const std::string& syscalls,
                                          const std::vector<std::string>& args);

// Starts the diskprobe binary in the background with stdout and stderr sent to files and the
// given environment variables set; returns its pid (wait_exit() reaps it).
pid_t spawn_diskprobe(const std::vector<std::string>& args, const std::string& out_path,
                      const std::string& err_path,
                      const std::vector<std::pair<std::string, std::string>>& env = {});
// In a forked child: becomes the diskprobe binary with these arguments (exit 127 if it cannot).
[[noreturn]] void exec_diskprobe(const std::vector<std::string>& args);
// Waits for pid: its exit status, or 128 + signal.
int wait_exit(pid_t pid);

// A loop device the test made; REQUIREs that creation worked.
diskprobe::LoopDevice make_loop(uint64_t size_bytes = 64ull << 20, bool read_only = false);
// The same with its backing file in memory (/dev/shm, tmpfs; $TMPDIR where there is none): no
// disk under it, so a throttle or the tool is all that limits a rate.
diskprobe::LoopDevice make_loop_in_memory(uint64_t size_bytes);

std::string read_bytes(const std::string& path, uint64_t offset, uint64_t len);
std::string read_sysfs(const std::string& path);
// /sys/block/NAME/stat's fields (read I/Os, merges, sectors, ticks, then the same for writes,
// ...); REQUIREs the eleven every kernel since 2.6 prints.
std::vector<uint64_t> block_stat(const std::string& name);
// Sectors read and written so far (fields 3 and 7).
inline uint64_t sectors_read(const std::string& name) { return block_stat(name)[2]; }
inline uint64_t sectors_written(const std::string& name) { return block_stat(name)[6]; }
// First and last MiB, to prove a refused device was not written.
std::string edges(const std::string& device_path, uint64_t size_bytes);
// The first and last 4 MiB are all zero: what a write run leaves (issue 17: once per sequence).
bool edges_zeroed(const std::string& device_path, uint64_t size_bytes);
// How often `what` occurs in `text` (a log line counted).
size_t count_of(const std::string& text, const std::string& what);

// A zram device of the test's own (/sys/class/zram-control/hot_add), hot_removed however the
// test ends. path is empty when this kernel has no zram-control: the test then says so and
// returns.
struct ScratchZram {
  int id = -1;
  std::string path;
  explicit ScratchZram(uint64_t bytes);
  ~ScratchZram();
  ScratchZram(const ScratchZram&) = delete;
  ScratchZram& operator=(const ScratchZram&) = delete;
};

// A block-I/O cgroup (v1) made for one test, removed when the test ends; a leftover of a
// killed earlier run of the same name is removed first.
struct BlkioCgroup {
  std::string path;
  explicit BlkioCgroup(const std::string& name);
  ~BlkioCgroup();
  BlkioCgroup(const BlkioCgroup&) = delete;
  BlkioCgroup& operator=(const BlkioCgroup&) = delete;
  void set(const std::string& file, const std::string& value) const;  // REQUIREs the write
  // A shell line that joins the cgroup and then becomes `command`: every thread and io-wq
  // worker it starts is in the cgroup before its first I/O.
  std::string run_inside(const std::string& command) const;
  // blkio.throttle.io_serviced: the bios of `op` ("Read", "Write") the cgroup's tasks sent to
  // device `devno` ("MAJOR:MINOR"); counted with or without a limit.
  uint64_t serviced(const std::string& devno, const std::string& op) const;
};
// "MAJOR:MINOR" of a device node, as the cgroup files want it.
std::string dev_numbers(const std::string& dev_path);

// A fresh directory under $TMPDIR (or /tmp) for a test's files, removed with all it holds
// however the test ends.
struct TempDir {
  std::string path;
  explicit TempDir(const std::string& prefix);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

// Loop devices currently attached to a backing file under `dir`.
std::vector<std::string> loops_backed_by(const std::string& dir);

}  // namespace testing
