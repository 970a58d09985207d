// The preflight: is this device safe to write (or read)? Fails closed: anything that cannot
// be checked is a reason to refuse.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "diskprobe/device/block_device.h"
#include "diskprobe/base/fd.h"
#include "diskprobe/base/sysroot.h"
#include "diskprobe/safety/probe.h"  // Signature, DeviceProber

namespace diskprobe::safety {

enum class Mode { Write, Read };
std::string_view to_string(Mode m);

// Stable, machine-readable reason codes.
namespace code {
inline constexpr std::string_view kNotFound = "not-found";
inline constexpr std::string_view kNotBlockDevice = "not-block-device";
inline constexpr std::string_view kBadName = "bad-name";
inline constexpr std::string_view kReadOnly = "read-only";
inline constexpr std::string_view kPartitionTable = "partition-table";
inline constexpr std::string_view kSignature = "signature";  // filesystem, swap, LUKS, raid...
inline constexpr std::string_view kHasPartitions = "has-partitions";
inline constexpr std::string_view kMounted = "mounted";
inline constexpr std::string_view kActiveSwap = "active-swap";
inline constexpr std::string_view kHolders = "holders";
// Used through another block device that holders/ does not show: a loop device over it or
// over its backing file, a device-mapper/md/bcache layer found through slaves/.
inline constexpr std::string_view kInUse = "in-use";
inline constexpr std::string_view kBusy = "busy";  // O_EXCL open refused
inline constexpr std::string_view kSystemDisk = "system-disk";
inline constexpr std::string_view kCannotProbe = "cannot-probe";
inline constexpr std::string_view kNonzeroData = "nonzero-data";  // the --paranoid sampler found data
}  // namespace code

struct Reason {
  std::string code;     // one of code::*
  std::string message;  // a sentence naming what was found and where
};

// What the --paranoid sampler (sampler.h) did.
struct Sampled {
  bool ran = false;
  std::string skipped;  // why it did not run: "read mode", "--no-paranoid", ...
  uint32_t windows = 0, zero_windows = 0, own_windows = 0;
  uint32_t no_data_windows = 0;  // reads that succeeded and returned nothing (null_blk)
  uint64_t bytes_read = 0;
  uint64_t unfilled_bytes = 0;
  std::vector<uint64_t> foreign_offsets;  // where data diskprobe did not write was found
};

struct Verdict {
  std::string device;  // "/dev/loop3" (as resolved), or the argument when unresolved
  Mode mode = Mode::Write;
  std::vector<Reason> reasons;  // every reason found, not only the first
  std::vector<Signature> signatures;
  bool probed = false;               // libblkid read the device: `signatures` is the whole answer
  std::vector<std::string> mounts;   // "/mnt/data (ext4) on /dev/loop3p1"
  std::vector<std::string> swaps;    // "/dev/loop3 (partition) on /dev/loop3"
  std::vector<std::string> holders;  // "dm-0 (device-mapper vg0-data) on /dev/loop3"
  std::vector<std::string> layers;   // "loop5 (a loop device over /dev/loop3 from byte 1048576)"
  Sampled sampled;
  bool safe() const { return reasons.empty(); }
  bool has(std::string_view code) const;
  // "refused: /dev/loop3 holds an ext4 filesystem (signature)" or "safe".
  std::string summary() const;
};

// The --paranoid sampler: Auto samples in write mode devices of kParanoidMinBytes (1 GiB)
// and more; On samples any size in write mode; reading never needs it.
enum class Paranoid { Auto, On, Off };

struct Options {
  bool hold = false;  // keep the O_EXCL descriptor of a safe device (write mode)
  Paranoid paranoid = Paranoid::Auto;
  bool allow_nonzero = false;  // the user accepts data without a signature: no sampling
  uint64_t seed = 0;           // picks the sampled blocks; 0 = a random seed
};

// A verdict plus, for a safe device, the descriptor held open with O_EXCL from the check to
// the end of the run, so nothing can mount or claim the device in between.
struct Checked {
  Verdict verdict;
  BlockDevice device;  // filled when the name resolved
  Fd hold;             // valid only when verdict.safe(), in write mode, and hold was asked for
  Options options;     // as given; recheck() samples again with them
};

// Resolves `device_arg` ("vdc" or "/dev/vdc"), then checks it. Never opens for writing.
// In write mode the device is opened O_EXCL (the busy check); `hold` keeps that descriptor.
// Read mode needs no claim and holds nothing.
Checked preflight(const SysRoot& root, std::string_view device_arg, Mode mode, bool hold = false);
// The same with the system calls and libblkid behind `prober` (tests pass a fake).
Checked preflight(const SysRoot& root, std::string_view device_arg, Mode mode, bool hold,
                  const DeviceProber& prober);

// The same with every option (the sampler's) spelled out.
Checked preflight(const SysRoot& root, std::string_view device_arg, Mode mode, const Options& options,
                  const DeviceProber& prober = system_prober());

// The check right before the engine opens the device: sysfs, mounts and swaps read again,
// signatures probed again through `checked.hold` (no one else can have claimed it since).
// Refuses with cannot-probe when there is no held descriptor.
Verdict recheck(const SysRoot& root, const Checked& checked);
Verdict recheck(const SysRoot& root, const Checked& checked, const DeviceProber& prober);

}  // namespace diskprobe::safety
