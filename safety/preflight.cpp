#include "diskprobe/safety/preflight.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <map>
#include <optional>
#include <random>
#include <set>

#include "diskprobe/device/block_header.h"
#include "diskprobe/base/problems.h"
#include "diskprobe/safety/deep_probe.h"
#include "diskprobe/safety/mounts.h"
#include "diskprobe/safety/sampler.h"

namespace diskprobe::safety {
namespace {

constexpr char kNoTouch[] = "diskprobe will not touch it";
// Mount points whose disk is the running system.
constexpr std::string_view kSystemMounts[] = {"/", "/boot", "/boot/efi", "/usr"};

using diskprobe::join;
std::string join(const std::set<std::string>& v, std::string_view sep) {
  return join(std::vector<std::string>(v.begin(), v.end()), sep);
}

std::string base_name(std::string_view path) {
  auto slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string to_string(DevNum d) { return std::to_string(d.major) + ":" + std::to_string(d.minor); }

// How block devices are stacked, as sysfs shows it: names, numbers, partitions, slaves, holders.
// (Not tuning::Topology, which is one device's queues and interrupts.)
class BlockStack {
 public:
  BlockStack(const SysRoot& root, const DeviceProber& prober) : root_(root), prober_(prober) {}

  std::optional<DevNum> devnum(std::string_view name) const {
    auto text = root_.read_sys("class/block/" + std::string(name) + "/dev");
    DevNum d;
    char tail = 0;
    if (!text || std::sscanf(text->c_str(), "%u:%u%c", &d.major, &d.minor, &tail) != 2) return std::nullopt;
    return d;
  }

  // The kernel name of a device number: the dev/block/M:m link, else a scan of class/block.
  std::string name_of(DevNum d) const {
    if (d.major == 0) return {};  // anonymous (tmpfs, overlay, btrfs): no block device
    std::string real = root_.sys_realpath("dev/block/" + to_string(d));
    if (!real.empty()) return base_name(real);
    for (const auto& n : root_.list_sys("class/block")) {
      if (devnum(n) == d) return n;
    }
    return {};
  }

  std::string disk_of(std::string_view name) const { return diskprobe::disk_of(root_, name); }

  std::vector<std::string> holders(std::string_view name) const {
    return root_.list_sys("class/block/" + std::string(name) + "/holders");
  }

  // `name`, its disk, and everything it is built on through slaves/ and loop devices' backing
  // devices, down to whole disks.
  std::set<std::string> lower(std::string_view name) const {
    std::set<std::string> seen;
    std::vector<std::string> todo{std::string(name)};
    while (!todo.empty()) {
      std::string n = todo.back();
      todo.pop_back();
      if (n.empty() || !seen.insert(n).second) continue;
      todo.push_back(disk_of(n));
      todo.push_back(backing_device(n));
      for (auto& s : root_.list_sys("class/block/" + n + "/slaves")) todo.push_back(s);
    }
    return seen;
  }

  // The block device a path names (a mount source, a swap area, a loop device's backing
  // file): stat(2) first, since /dev/mapper and /dev/disk links are not kernel names; the
  // /dev/NAME spelling when stat cannot tell.
  std::optional<DevNum> device_at(const std::string& path) const {
    if (path.empty() || path.front() != '/') return std::nullopt;
    if (auto st = prober_.stat_path(path); st && st->is_block) return st->rdev;
    if (path.rfind("/dev/", 0) == 0 && path.find('/', 5) == std::string::npos) return devnum(path.substr(5));
    return std::nullopt;
  }

  // The kernel name of the block device under a loop device ("loop2" for losetup over
  // /dev/loop2); empty for a loop device over a file, and for anything else.
  std::string backing_device(std::string_view name) const {
    auto dev = device_at(backing_file(name));
    return dev ? name_of(*dev) : std::string();
  }

  // "dm-0 (device-mapper vg0-root)", "md0 (RAID)", "bcache0".
  std::string describe_holder(const std::string& h) const {
    if (auto dm = root_.read_sys("class/block/" + h + "/dm/name")) return h + " (device-mapper " + *dm + ")";
    if (root_.sys_exists("class/block/" + h + "/md")) return h + " (RAID)";
    return h;
  }

  // A loop device's backing file ("/dev/loop3", "/var/tmp/a.img"), " (deleted)" cut off;
  // empty for anything else or a loop device with none.
  std::string backing_file(std::string_view name) const {
    auto text = root_.read_sys("class/block/" + std::string(name) + "/loop/backing_file");
    if (!text) return {};
    std::string f = *text;
    while (!f.empty() && (f.back() == '\n' || f.back() == ' ')) f.pop_back();
    constexpr std::string_view kDeleted = " (deleted)";
    if (f.size() > kDeleted.size() && f.compare(f.size() - kDeleted.size(), kDeleted.size(), kDeleted) == 0)
      f.resize(f.size() - kDeleted.size());
    return f;
  }

  std::string loop_offset(std::string_view name) const {
    auto text = root_.read_sys("class/block/" + std::string(name) + "/loop/offset");
    if (!text) return "0";
    std::string o = *text;
    while (!o.empty() && (o.back() == '\n' || o.back() == ' ')) o.pop_back();
    return o.empty() ? "0" : o;
  }

  std::vector<std::string> slaves(std::string_view name) const {
    return root_.list_sys("class/block/" + std::string(name) + "/slaves");
  }

  std::vector<std::string> all() const { return root_.list_sys("class/block"); }

  // "a device-mapper device (vg0-data)", "an md RAID device", "a bcache device".
  std::string layer_kind(const std::string& u) const {
    if (auto dm = root_.read_sys("class/block/" + u + "/dm/name")) {
      std::string n = *dm;
      while (!n.empty() && n.back() == '\n') n.pop_back();
      return "a device-mapper device (" + n + ")";
    }
    if (root_.sys_exists("class/block/" + u + "/md")) return "an md RAID device";
    if (root_.sys_exists("class/block/" + u + "/bcache")) return "a bcache device";
    return "a block device";
  }

  // Every member of the btrfs filesystem that has `member` among its devices.
  std::vector<std::string> btrfs_members(const std::string& member) const {
    for (const auto& fsid : root_.list_sys("fs/btrfs")) {
      std::string devices = "fs/btrfs/" + fsid + "/devices";
      if (root_.sys_exists(devices + "/" + member)) return root_.list_sys(devices);
    }
    return {};
  }

 private:
  const SysRoot& root_;
  const DeviceProber& prober_;
};

// The devices under a mount: its major:minor, its source when that is a block device, and
// for btrfs every member (a btrfs mount shows an anonymous 0:N, and only one source).
std::vector<DevNum> mount_devices(const MountEntry& m, const BlockStack& topo) {
  std::vector<DevNum> devs{m.dev};
  if (auto src = topo.device_at(m.source)) {
    devs.push_back(*src);
    if (m.fstype == "btrfs") {
      for (const auto& member : topo.btrfs_members(topo.name_of(*src))) {
        if (auto d = topo.devnum(member)) devs.push_back(*d);
      }
    }
  }
  return devs;
}

// A swap area's device: the device itself, or for a swap file the one holding the file.
std::optional<DevNum> swap_device(const SwapEntry& s, const BlockStack& topo, const DeviceProber& prober) {
  if (s.type == "file") {
    if (auto st = prober.stat_path(s.path); st && !st->is_block) return st->dev;
  }
  return topo.device_at(s.path);
}

// The device under test and its partitions: each is checked for mounts, swap and holders.
struct Node {
  std::string name;
  std::optional<DevNum> dev;
  bool partition_of_target = false;
};

std::string node_label(const Node& n, const BlockDevice& d) {
  if (!n.partition_of_target) return d.path;
  return "/dev/" + n.name + " (a partition of " + d.path + ")";
}

// "an ext4", "an xfs" (said letter by letter), "a btrfs".
std::string with_article(const std::string& noun) {
  bool vowel = !noun.empty() && std::string_view("aeiouAEIOU").find(noun[0]) != std::string_view::npos;
  for (std::string_view spelled : {"xfs ", "ntfs ", "hfs ", "hfsplus ", "f2fs ", "mbr "}) {
    if (noun.rfind(spelled, 0) == 0) vowel = true;
  }
  return (vowel ? "an " : "a ") + noun;
}

// "an ext4 filesystem", "a gpt partition table", "an LVM physical volume (LVM2_member)".
std::string describe(const Signature& s) {
  if (s.type == "PMBR") return "a protective MBR (PMBR) of a GPT whose headers are gone";
  if (s.type == "dos") return "a dos (MBR) partition table";
  if (s.partition_table) return with_article(s.type + " partition table");
  if (s.type == "swap") return "a swap area";
  if (s.type == "LVM2_member") return "an LVM physical volume (LVM2_member)";
  if (s.type == "crypto_LUKS") return "a LUKS encrypted volume (crypto_LUKS)";
  if (s.usage == "filesystem") return with_article(s.type + " filesystem");
  if (s.usage == "raid") return "a RAID or volume-manager member (" + s.type + ")";
  if (s.usage == "crypto") return "an encrypted volume (" + s.type + ")";
  return with_article(s.type + " signature");
}

std::string_view name_code(NameError why) {
  switch (why) {
    case NameError::NotFound:
      return code::kNotFound;
    case NameError::NotBlockDevice:
      return code::kNotBlockDevice;
    default:
      return code::kBadName;
  }
}

class Preflight {
 public:
  // `exempt`, `depth`: a device below the target (check_backing_devices), where the chain from
  // the target down to it is no use of it.
  Preflight(const SysRoot& root, const DeviceProber& prober, Mode mode, const Options& options, Checked& out,
            std::set<std::string> exempt = {}, unsigned depth = 0)
      : root_(root),
        prober_(prober),
        mode_(mode),
        options_(options),
        out_(out),
        v_(out.verdict),
        topo_(root, prober),
        exempt_(std::move(exempt)),
        depth_(depth) {
    v_.mode = mode;
    out_.options = options;
  }

  // `held`: recheck through the descriptor a run holds instead of opening the device.
  void run(std::string_view arg, bool hold, const Fd* held) {
    v_.device = std::string(arg);
    if (!resolve(arg)) {
      v_.sampled.skipped = "refused already: " + v_.reasons.front().code;
      return;
    }
    const BlockDevice& d = out_.device;
    nodes_.push_back(Node{d.name, DevNum{d.major, d.minor}, false});
    for (const auto& p : d.partitions) {
      nodes_.push_back(Node{p, topo_.devnum(p), true});
      if (!nodes_.back().dev) {
        add(code::kCannotProbe, "cannot tell whether /dev/" + p + " (a partition of " + d.path +
                                    ") is mounted or swap: its device number (sysfs dev) cannot be read; " +
                                    kRefuseUnchecked);
      }
    }

    auto mounts = read_mounts(root_);
    auto swaps = read_swaps(root_);
    if (!mounts)
      add(code::kCannotProbe,
          "cannot tell whether " + d.path + " is mounted: " + mounts.error() + "; " + kRefuseUnchecked);
    if (!swaps)
      add(code::kCannotProbe,
          "cannot tell whether " + d.path + " is swap: " + swaps.error() + "; " + kRefuseUnchecked);
    if (mounts) {
      for (auto& mnt : *mounts)
        mounts_.push_back(Mounted{mount_devices(mnt, topo_), std::move(mnt)});
    }
    if (swaps) {
      for (auto& sw : *swaps) swaps_.push_back(Swapped{swap_device(sw, topo_, prober_), std::move(sw)});
    }

    if (depth_ == 0) check_system_disk();  // below the target, lower() has found it already
    check_mounted();
    check_swap();
    check_holders();
    check_layers();
    check_backing_devices();
    Fd fd = probe(held);
    if (mode_ == Mode::Write && v_.probed) deep(held ? *held : fd);
    if (mode_ == Mode::Write) check_partitions();
    if (mode_ == Mode::Write) check_read_only();
    sample(held ? *held : fd);

    if (hold && !held && mode_ == Mode::Write && v_.safe()) out_.hold = std::move(fd);
  }

 private:
  static constexpr char kRefuseUnchecked[] = "diskprobe refuses what it cannot check";
  static constexpr unsigned kMaxStackDepth = 8;  // loop devices over loop devices, at most

  // The --paranoid sampler, last: only a device that passed every other check is read.
  void sample(const Fd& fd) {
    const BlockDevice& d = out_.device;
    Sampled& s = v_.sampled;
    if (mode_ == Mode::Read) {
      s.skipped = "read mode: reading changes nothing";
    } else if (options_.paranoid == Paranoid::Off) {
      s.skipped = "--no-paranoid";
    } else if (options_.paranoid == Paranoid::Auto && d.size_bytes < kParanoidMinBytes) {
      s.skipped = "smaller than 1 GiB; --paranoid samples it anyway";
    } else if (options_.allow_nonzero) {
      s.skipped = "--allow-nonzero";
    } else if (!v_.safe() || !fd.valid()) {
      s.skipped = "refused already";
    }
    if (!s.skipped.empty()) return;
    uint64_t seed = options_.seed ? options_.seed : std::random_device{}() | 1;
    auto reader = prober_.reader(fd, d.path, d.logical_block_size);
    SampleReport r = sample_for_data(*reader, d.size_bytes, device_identity(d), seed);
    s.ran = true;
    s.windows = r.windows;
    s.zero_windows = r.zero_windows;
    s.own_windows = r.own_windows;
    s.bytes_read = r.bytes_read;
    s.no_data_windows = r.no_data_windows;
    s.unfilled_bytes = r.unfilled_bytes;
    for (const auto& f : r.foreign) s.foreign_offsets.push_back(f.offset);
    if (!r.ok) {
      add(code::kCannotProbe, "cannot sample " + d.path + " for data (--paranoid): " + r.error + "; " +
                                  std::string(kRefuseUnchecked) +
                                  " (check the device's health with dmesg, or pass --no-paranoid)");
      return;
    }
    if (r.foreign.empty()) return;
    std::sort(r.foreign.begin(), r.foreign.end(),
              [](const Foreign& x, const Foreign& y) { return x.offset < y.offset; });
    std::sort(s.foreign_offsets.begin(), s.foreign_offsets.end());
    std::string where;
    for (size_t i = 0; i < r.foreign.size() && i < kMaxForeignListed; ++i) {
      where += (i ? ", " : "") + std::to_string(r.foreign[i].offset) + " (" + r.foreign[i].what + ")";
    }
    if (r.foreign.size() > kMaxForeignListed) where += ", ...";
    add(code::kNonzeroData,
        d.path + " is not blank: " + std::to_string(r.foreign.size()) + " of " + std::to_string(r.windows) +
            " sampled places hold data diskprobe did not write to it, at byte offsets " + where +
            ": a used disk can hold data no signature announces, and " + std::string(kNoTouch) +
            "; pass --allow-nonzero if that data can go, or use a fresh disk (a new cloud disk reads "
            "zeroes)");
  }

  // What libblkid's probe of the whole device cannot see (deep_probe.h); writing only, as
  // signatures refuse only writing.
  void deep(const Fd& fd) {
    const BlockDevice& d = out_.device;
    DeepProbed r = deep_probe(prober_, fd, d.path, d.size_bytes, d.logical_block_size, device_identity(d),
                              v_.signatures);
    if (!r.ok) {
      add(code::kCannotProbe, "cannot check " + d.path + " for data beyond its first sectors: " + r.error + "; " +
                                  std::string(kRefuseUnchecked) + " (check the device's health with dmesg)");
      return;
    }
    for (const auto& f : r.findings) {
      // Below the target, diskprobe's blocks carry the target's identity, not this device's:
      // the target's own checks judge the data in its window.
      if (f.nonzero && depth_ > 0) continue;
      std::string what = f.what;
      if (f.signature) {
        what = describe(*f.signature) + " starting at byte " + std::to_string(f.start) + " (its signature at byte " +
               std::to_string(f.offset) + ")";
      }
      add(f.nonzero ? code::kNonzeroData : code::kSignature,
          d.path + " holds " + what + " (" + f.why + "): " + std::string(kNoTouch) +
              (f.nonzero ? "; zero it (blkdiscard, or dd if=/dev/zero) only if you are sure"
                         : "; wipe it (wipefs -a --offset, or zero the device) only if you are sure, or use an "
                           "empty disk"));
    }
  }

  void add(std::string_view c, std::string message) {
    v_.reasons.push_back(Reason{std::string(c), std::move(message)});
  }

  bool resolve(std::string_view arg) {
    NameError why = NameError::None;
    auto name = parse_device_name(root_, arg, &why);
    if (!name) {
      add(name_code(why), name.error());
      return false;
    }
    auto dev = read_block_device(root_, *name);
    if (!dev) {
      add(code::kNotFound, dev.error());
      return false;
    }
    out_.device = std::move(*dev);
    v_.device = out_.device.path;
    return true;
  }

  void check_system_disk() {
    // Every device the system stands on, with what it holds there ("/", "swap /dev/zram0").
    std::map<std::string, std::set<std::string>> system;
    auto mark = [&](DevNum dev, const std::string& what) {
      std::string name = topo_.name_of(dev);
      if (name.empty()) return;
      for (const auto& n : topo_.lower(name)) system[n].insert(what);
    };
    for (const auto& m : mounts_) {
      const auto& mp = m.entry.mount_point;
      if (std::find(std::begin(kSystemMounts), std::end(kSystemMounts), mp) == std::end(kSystemMounts))
        continue;
      for (const auto& dev : m.devs) mark(dev, mp);
    }
    for (const auto& sw : swaps_) {
      if (sw.dev) mark(*sw.dev, "swap " + sw.entry.path);
    }
    if (system.empty()) spdlog::debug("preflight: found no block device under / (a container?)");

    const BlockDevice& d = out_.device;
    std::set<std::string> on, what;
    for (const auto& n : topo_.lower(d.name)) {
      auto it = system.find(n);
      if (it == system.end()) continue;
      on.insert(n);
      what.insert(it->second.begin(), it->second.end());
    }
    if (on.empty()) return;
    add(code::kSystemDisk, d.path + " is on the system disk (" + join(on, ", ") + " holds " +
                               join(what, ", ") + "): " + std::string(kNoTouch) +
                               "; pick a data disk ('diskprobe devices' lists them)");
  }

  void check_mounted() {
    const BlockDevice& d = out_.device;
    for (const auto& node : nodes_) {
      if (!node.dev) continue;
      std::vector<std::string> where;
      for (const auto& m : mounts_) {
        if (std::find(m.devs.begin(), m.devs.end(), *node.dev) == m.devs.end()) continue;
        std::string at = m.entry.mount_point + " (" + m.entry.fstype + ")";
        if (std::find(where.begin(), where.end(), at) == where.end()) where.push_back(at);
      }
      if (where.empty()) continue;
      for (const auto& w : where) v_.mounts.push_back(w + " on /dev/" + node.name);
      std::string first = where.front().substr(0, where.front().rfind(" ("));
      add(code::kMounted, node_label(node, d) + " is mounted at " + join(where, ", ") + ": " +
                              std::string(kNoTouch) + "; unmount it first (umount " + first +
                              ") or pick another device");
    }
  }

  void check_swap() {
    const BlockDevice& d = out_.device;
    for (const auto& node : nodes_) {
      if (!node.dev) continue;
      for (const auto& swapped : swaps_) {
        if (!swapped.dev || !(*swapped.dev == *node.dev)) continue;
        const SwapEntry& sw = swapped.entry;
        v_.swaps.push_back(sw.path + " (" + sw.type + ") on /dev/" + node.name);
        std::string what = sw.type == "file" ? " holds the active swap file " + sw.path
                                             : " is active swap (" + sw.path + " in /proc/swaps)";
        add(code::kActiveSwap, node_label(node, d) + what + ": " + std::string(kNoTouch) + "; run swapoff " +
                                   sw.path + " first or pick another device");
      }
    }
  }

  void check_holders() {
    const BlockDevice& d = out_.device;
    for (const auto& node : nodes_) {
      auto listed = root_.read_sys_dir("class/block/" + node.name + "/holders");
      if (!listed) {
        add(code::kCannotProbe, "cannot tell whether " + node_label(node, d) + " is in use: " + listed.error() +
                                    "; " + kRefuseUnchecked);
        continue;
      }
      auto holders = std::move(*listed);
      std::erase_if(holders, [&](const std::string& h) { return exempt_.count(h) != 0; });
      if (holders.empty()) continue;
      std::vector<std::string> named;
      for (const auto& h : holders) named.push_back(topo_.describe_holder(h));
      for (const auto& n : named) v_.holders.push_back(n + " on /dev/" + node.name);
      add(code::kHolders,
          node_label(node, d) + " is in use by " + join(named, ", ") + ": " + std::string(kNoTouch) +
              "; take that down first (umount, then cryptsetup close, vgchange -an or mdadm --stop) "
              "or pick another device");
    }
  }

  // Block devices built on the target that holders/ does not show (loop devices take no claim
  // and leave it empty): loop devices over the target or a partition of it (any offset),
  // loop devices over the target's own backing file, and anything whose slaves/ names one of
  // them; then what is built on those, and so on.
  void check_layers() {
    const BlockDevice& d = out_.device;
    // The target, its partitions, and every layer found so far; the chain above a device below
    // the target counts as found, not as a use.
    std::set<std::string> below(exempt_);
    for (const auto& n : nodes_) below.insert(n.name);
    std::set<std::string> reported(d.holders.begin(), d.holders.end());
    for (const auto& n : nodes_) {
      if (!n.partition_of_target) continue;
      for (const auto& h : topo_.holders(n.name)) reported.insert(h);
    }
    const std::string own_backing = topo_.backing_file(d.name);
    auto own_file = own_backing.empty() ? std::nullopt : prober_.stat_path(own_backing);
    const auto names = topo_.all();
    std::vector<std::string> found;
    for (bool grew = true; grew;) {
      grew = false;
      for (const auto& u : names) {
        if (below.count(u)) continue;
        std::string how = layer_over(u, below, own_backing, own_file);
        if (how.empty()) continue;
        below.insert(u);
        grew = true;
        if (!reported.count(u)) found.push_back(u + " (" + how + in_use_by(u) + ")");
      }
    }
    if (found.empty()) return;
    for (const auto& f : found) v_.layers.push_back(f);
    add(code::kInUse, d.path + " is in use through " + join(found, ", ") + ": " + std::string(kNoTouch) +
                          "; take that down first (umount, swapoff, then losetup -d, dmsetup remove or "
                          "mdadm --stop) or pick another device");
  }

  // How `u` is built on one of `below`, or empty when it is not.
  std::string layer_over(const std::string& u, const std::set<std::string>& below, const std::string& own_backing,
                         const std::optional<PathDevice>& own_file) const {
    for (const auto& s : topo_.slaves(u)) {
      if (below.count(s)) return topo_.layer_kind(u) + " over /dev/" + s;
    }
    std::string file = topo_.backing_file(u);
    if (file.empty()) return {};
    std::string from = " from byte " + topo_.loop_offset(u);
    if (auto dev = topo_.device_at(file)) {
      std::string n = topo_.name_of(*dev);
      if (below.count(n)) return "a loop device over /dev/" + n + from;
    }
    if (own_backing.empty()) return {};
    bool same = file == own_backing;
    if (!same && own_file) {
      auto st = prober_.stat_path(file);
      same = st && !st->is_block && !own_file->is_block && st->dev == own_file->dev && st->ino == own_file->ino;
    }
    if (same) return "a loop device over " + own_backing + from + ", the backing file of " + out_.device.path;
    return {};
  }

  // A loop device over a block device writes to that device, and nothing above shows it: the
  // loop driver takes no claim on its backing device, and sysfs links the two neither way. So
  // the device under every loop device in the target's stack (the target itself, or one in
  // slaves/ below a layer) is checked as a target is (system disk, mounted, swap, holders,
  // layers, busy, what it holds, partitions), the chain down to it excepted, and each reason
  // refuses the target. Its sampler does not run: the target's own judges the bytes it writes.
  void check_backing_devices() {
    const BlockDevice& d = out_.device;
    std::set<std::string> chain(exempt_);
    std::vector<std::pair<std::string, std::string>> backed;  // a loop device, the device under it
    std::vector<std::string> todo{d.name};
    while (!todo.empty()) {
      std::string n = todo.back();
      todo.pop_back();
      if (n.empty() || !chain.insert(n).second) continue;
      for (auto& s : topo_.slaves(n)) todo.push_back(s);
      if (std::string under = topo_.backing_device(n); !under.empty()) backed.emplace_back(n, under);
    }
    for (const auto& [loop, under] : backed) {
      std::string via = loop == d.name ? d.path + " is a loop device over /dev/" + under
                                       : d.path + " writes through /dev/" + loop + ", a loop device over /dev/" + under;
      via += " from byte " + topo_.loop_offset(loop);
      if (depth_ >= kMaxStackDepth) {
        add(code::kCannotProbe, via + ", " + std::to_string(depth_ + 1) + " loop devices deep: " +
                                    std::string(kRefuseUnchecked) + "; run on the device at the bottom");
        continue;
      }
      Options inner_options = options_;
      inner_options.hold = false;
      inner_options.paranoid = Paranoid::Off;
      Checked inner;
      Preflight(root_, prober_, mode_, inner_options, inner, chain, depth_ + 1).run(under, false, nullptr);
      for (const auto& r : inner.verdict.reasons) add(r.code, via + ", so it writes there: " + r.message);
    }
  }

  // ", mounted at /mnt (ext4)", ", active swap": what makes the layer matter.
  std::string in_use_by(const std::string& u) const {
    auto dev = topo_.devnum(u);
    if (!dev) return {};
    std::string s;
    for (const auto& m : mounts_) {
      if (std::find(m.devs.begin(), m.devs.end(), *dev) != m.devs.end())
        s += ", mounted at " + m.entry.mount_point + " (" + m.entry.fstype + ")";
    }
    for (const auto& sw : swaps_) {
      if (sw.dev && *sw.dev == *dev) s += ", active swap";
    }
    return s;
  }

  // Opens read-only, exclusively in write mode: that is the busy check. When it is busy the
  // device is still opened shared, to name what is on it. An invalid Fd means refused.
  Fd open_device() {
    const BlockDevice& d = out_.device;
    Opened o = prober_.open(d.path, mode_ == Mode::Write);
    if (!o.fd.valid() && o.err == EBUSY && mode_ == Mode::Write) {
      add(code::kBusy, d.path +
                           " is held open exclusively by another process (mounted, in a RAID/LVM, or "
                           "another diskprobe): " +
                           std::string(kNoTouch) + "; stop that use first or pick another device");
      o = prober_.open(d.path, false);
    }
    if (!o.fd.valid()) {
      add(code::kCannotProbe, "cannot check " + d.path + " for data: " + o.error + "; " +
                                  std::string(kRefuseUnchecked) +
                                  " (run as root, or check the device's health)");
      return Fd();
    }
    DevNum want{d.major, d.minor};
    if (!o.is_block || !(o.rdev == want)) {
      add(code::kCannotProbe, d.path + " is not the block device sysfs calls " + d.name + " (" +
                                  to_string(want) + "): " + std::string(kRefuseUnchecked) +
                                  "; fix /dev or name the device another way");
      return Fd();
    }
    return std::move(o.fd);
  }

  // At a recheck: the path the engine will open still names the device held. A /dev entry
  // renamed or replaced since the check (mv, mknod) would get the writes; the engine compares
  // again on its own descriptor.
  bool still_named(const BlockDevice& d) {
    auto now = prober_.stat_path(d.path);
    DevNum want{d.major, d.minor};
    if (now && now->is_block && now->rdev == want) return true;
    std::string names = !now            ? "cannot be looked up (stat)"
                        : now->is_block ? "names block device " + to_string(now->rdev) + " now"
                                        : "names no block device now";
    add(code::kCannotProbe, d.path + " " + names + ", not the device checked (" + to_string(want) + "): " +
                                std::string(kRefuseUnchecked) + "; fix /dev (ls -l " + d.path + ") and run again");
    return false;
  }

  // Asks libblkid what the device holds, through `held` (a recheck) or a fresh read-only
  // open. Returns the fresh descriptor, for `hold`.
  Fd probe(const Fd* held) {
    const BlockDevice& d = out_.device;
    if (d.size_bytes == 0) {
      add(code::kCannotProbe, d.path +
                                  " has size 0 (no medium, or a loop device with no backing file): "
                                  "there is nothing to check or test; pick a device with storage");
      return Fd();
    }
    Fd opened;
    if (!held) {
      opened = open_device();
      if (!opened.valid()) return Fd();
    } else if (!still_named(d)) {
      return Fd();
    }
    const Fd& fd = held ? *held : opened;
    Probed p = prober_.probe(fd, d.path);
    if (!p.ok) {
      add(code::kCannotProbe, "cannot check " + d.path + " for data: " + p.error + "; " +
                                  std::string(kRefuseUnchecked) + " (check the device's health with dmesg)");
      return Fd();
    }
    v_.signatures = std::move(p.signatures);
    v_.probed = true;
    auto ro = prober_.read_only(fd);
    if (!ro && mode_ == Mode::Write) {
      add(code::kCannotProbe, "cannot tell whether " + d.path + " is read-only: the BLKROGET ioctl failed; " +
                                  std::string(kRefuseUnchecked));
    }
    ro_ioctl_ = ro.value_or(false);
    if (mode_ == Mode::Write) {
      for (const auto& s : v_.signatures) {
        add(s.partition_table ? code::kPartitionTable : code::kSignature,
            d.path + " holds " + describe(s) + " (signature at offset " + std::to_string(s.offset) +
                "): diskprobe will not write to it; wipe it with wipefs -a only if you are sure, or use an "
                "empty disk");
      }
    }
    return opened;
  }

  void check_partitions() {
    const BlockDevice& d = out_.device;
    if (d.partitions.empty()) return;
    std::vector<std::string> paths;
    for (const auto& p : d.partitions) paths.push_back("/dev/" + p);
    add(code::kHasPartitions, d.path + " has partitions (" + join(paths, ", ") +
                                  "): diskprobe will not write over them; delete them only if you are sure "
                                  "(wipefs -a on each, then on the disk), or use an empty disk");
  }

  void check_read_only() {
    const BlockDevice& d = out_.device;
    auto ro = root_.read_sys("class/block/" + d.name + "/ro");
    if (!ro || (*ro != "0" && *ro != "1")) {
      add(code::kCannotProbe, "cannot tell whether " + d.path + " is read-only: sysfs ro " +
                                  (ro ? "reads '" + *ro + "'" : "cannot be read (" + ro.error() + ")") + "; " +
                                  kRefuseUnchecked);
      return;
    }
    if (!d.read_only && !ro_ioctl_) return;
    add(code::kReadOnly,
        d.path + " is read-only (" + std::string(d.read_only ? "sysfs ro=1" : "BLKROGET") +
            "): diskprobe cannot write to it; use --mode read, or make it writable (blockdev --setrw)");
  }

  const SysRoot& root_;
  const DeviceProber& prober_;
  Mode mode_;
  Options options_;
  Checked& out_;
  Verdict& v_;
  BlockStack topo_;
  std::vector<Node> nodes_;
  struct Mounted {
    std::vector<DevNum> devs;
    MountEntry entry;
  };
  struct Swapped {
    std::optional<DevNum> dev;
    SwapEntry entry;
  };
  std::vector<Mounted> mounts_;
  std::vector<Swapped> swaps_;
  bool ro_ioctl_ = false;
  std::set<std::string> exempt_;
  unsigned depth_ = 0;
};

}  // namespace

std::string_view to_string(Mode m) { return m == Mode::Write ? "write" : "read"; }

bool Verdict::has(std::string_view c) const {
  return std::any_of(reasons.begin(), reasons.end(), [&](const Reason& r) { return r.code == c; });
}

std::string Verdict::summary() const {
  if (safe()) return "safe";
  std::string s = "refused: ";
  for (size_t i = 0; i < reasons.size(); ++i) {
    if (i) s += "; ";
    s += reasons[i].message + " (" + reasons[i].code + ")";
  }
  return s;
}

Checked preflight(const SysRoot& root, std::string_view device_arg, Mode mode, const Options& options,
                  const DeviceProber& prober) {
  Checked out;
  Preflight(root, prober, mode, options, out).run(device_arg, options.hold, nullptr);
  return out;
}

Checked preflight(const SysRoot& root, std::string_view device_arg, Mode mode, bool hold,
                  const DeviceProber& prober) {
  Options o;
  o.hold = hold;
  return preflight(root, device_arg, mode, o, prober);
}

Checked preflight(const SysRoot& root, std::string_view device_arg, Mode mode, bool hold) {
  Options o;
  o.hold = hold;
  return preflight(root, device_arg, mode, o, system_prober());
}

Verdict recheck(const SysRoot& root, const Checked& checked, const DeviceProber& prober) {
  Checked out;
  if (!checked.hold.valid()) {
    out.verdict.device = checked.device.path.empty() ? checked.verdict.device : checked.device.path;
    out.verdict.reasons.push_back(Reason{std::string(code::kCannotProbe),
                                         "cannot check " + out.verdict.device +
                                             " again: the preflight holds no descriptor for it; run the "
                                             "preflight with hold in write mode first"});
    return out.verdict;
  }
  Preflight(root, prober, Mode::Write, checked.options, out).run(checked.device.name, false, &checked.hold);
  return out.verdict;
}

Verdict recheck(const SysRoot& root, const Checked& checked) {
  return recheck(root, checked, system_prober());
}

}  // namespace diskprobe::safety
