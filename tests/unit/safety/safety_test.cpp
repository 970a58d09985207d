// The preflight's verdict logic against fake sysfs/procfs trees and a fake prober: no root,
// no devices. The trees are written per test under a temporary directory.
#include <fcntl.h>
#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "diskprobe/device/block_header.h"
#include "diskprobe/base/status.h"
#include "diskprobe/safety/mounts.h"
#include "diskprobe/safety/preflight.h"
#include "diskprobe/safety/sampler.h"
#include "fake_disk.h"

namespace {

namespace fs = std::filesystem;
using diskprobe::Fd;
using diskprobe::SysRoot;
using namespace diskprobe::safety;

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

// Answers what a test scripts; opens /dev/null so a held descriptor is real.
class FakeProber final : public DeviceProber {
 public:
  std::map<std::string, DevNum> rdev;       // what fstat says each /dev path is
  std::map<std::string, PathDevice> stats;  // stat(2) of mount sources, swap files
  int open_err = 0;                         // every open fails with this errno
  int excl_err = 0;                         // only O_EXCL opens fail with this errno
  int shared_err = 0;                       // only shared opens fail with this errno
  std::string probe_error;                  // libblkid fails with this message
  std::vector<Signature> signatures;
  std::map<std::string, std::vector<Signature>> signatures_at;  // by path: these instead
  bool ro = false;
  bool ro_fails = false;  // BLKROGET fails
  mutable std::vector<std::string> opens;  // "excl /dev/vdc", "shared /dev/vdc"
  const BlockReader* disk = nullptr;       // what the sampler reads; null: a blank disk
  bool real_reader = false;                // with disk null: the real fd_reader (over /dev/null)
  fake::Disk blank{1ull << 50};
  mutable std::vector<int> sampled_fds;    // the descriptors the sampler read through

  Opened open(const std::string& path, bool exclusive) const override {
    opens.push_back((exclusive ? "excl " : "shared ") + path);
    Opened o;
    int err = open_err ? open_err : (exclusive ? excl_err : shared_err);
    if (err) {
      o.err = err;
      o.error = diskprobe::errno_message("open", path, err);
      return o;
    }
    auto it = rdev.find(path);
    if (it == rdev.end()) {
      o.err = ENOENT;
      o.error = diskprobe::errno_message("open", path, ENOENT);
      return o;
    }
    auto fd = Fd::open("/dev/null", O_RDONLY);
    REQUIRE(fd.ok());
    o.fd = std::move(*fd);
    o.is_block = true;
    o.rdev = it->second;
    return o;
  }
  Probed probe(const Fd&, const std::string& path) const override {
    Probed p;
    p.ok = probe_error.empty();
    p.error = probe_error;
    auto at = signatures_at.find(path);
    if (p.ok) p.signatures = at != signatures_at.end() ? at->second : signatures;
    return p;
  }
  // What libblkid finds over a range from each offset (the deep probe's partition starts).
  std::map<uint64_t, std::vector<Signature>> range_signatures;
  mutable std::vector<uint64_t> ranges_probed;
  Probed probe_range(const Fd&, const std::string&, uint64_t offset, uint64_t) const override {
    ranges_probed.push_back(offset);
    Probed p;
    p.ok = probe_error.empty();
    p.error = probe_error;
    if (auto it = range_signatures.find(offset); p.ok && it != range_signatures.end()) p.signatures = it->second;
    return p;
  }
  std::optional<bool> read_only(const Fd&) const override {
    if (ro_fails) return std::nullopt;
    return ro;
  }
  std::unique_ptr<BlockReader> reader(const Fd& fd, const std::string& path, uint32_t lbs) const override {
    sampled_fds.push_back(fd.get());
    if (!disk && real_reader) return DeviceProber::reader(fd, path, lbs);
    struct Forward final : BlockReader {
      const BlockReader& to;
      explicit Forward(const BlockReader& t) : to(t) {}
      diskprobe::Status read(uint64_t o, uint8_t* b, size_t n) const override { return to.read(o, b, n); }
    };
    return std::make_unique<Forward>(disk ? *disk : blank);
  }
  // stats, else a /dev path open() knows is that block device.
  std::optional<PathDevice> stat_path(const std::string& path) const override {
    if (auto it = stats.find(path); it != stats.end()) return it->second;
    if (auto it = rdev.find(path); it != rdev.end()) return PathDevice{true, it->second, {0, 6}, 0};
    return std::nullopt;
  }
};

// A sysfs and procfs tree shaped like the kernel's: devices under devices/virtual/block,
// class/block and dev/block links to them, partitions inside their disk's directory.
class FakeSystem {
 public:
  FakeSystem() {
    std::string t = (fs::temp_directory_path() / "diskprobe-safety-unit-XXXXXX").string();
    REQUIRE(::mkdtemp(t.data()) != nullptr);
    dir_ = t;
    fs::create_directories(sys("class/block"));
    fs::create_directories(sys("dev/block"));
    mountinfo("22 1 0:21 / /proc rw - proc proc rw\n");
    swaps("Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n");
  }
  ~FakeSystem() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  fs::path sys(const std::string& rel) const { return dir_ / "sys" / rel; }
  fs::path proc(const std::string& rel) const { return dir_ / "proc" / rel; }
  SysRoot root() const { return SysRoot((dir_ / "sys").string(), (dir_ / "proc").string()); }

  void disk(const std::string& name, DevNum d, uint64_t sectors = 131072) {
    add(fs::path("devices/virtual/block") / name, name, d, sectors);
  }
  void partition(const std::string& disk, const std::string& name, DevNum d) {
    fs::path rel = fs::path("devices/virtual/block") / disk / name;
    add(rel, name, d, 2048);
    write(sys(rel.string()) / "partition", "1\n");
  }
  // `upper` (dm-0, md0) is built on `lower`.
  void stack(const std::string& lower, const std::string& upper) {
    fs::create_directories(sys("class/block/" + lower + "/holders/" + upper));
    fs::create_directories(sys("class/block/" + upper + "/slaves/" + lower));
  }
  void set(const std::string& name, const std::string& attr, const std::string& value) {
    write(sys("class/block/" + name) / attr, value + "\n");
  }
  // `name` is a loop device over `backing` from byte `offset`.
  void loop(const std::string& name, const std::string& backing, uint64_t offset = 0) {
    set(name, "loop/backing_file", backing);
    set(name, "loop/offset", std::to_string(offset));
  }
  void mountinfo(const std::string& text) { write(proc("self/mountinfo"), text); }
  void swaps(const std::string& text) { write(proc("swaps"), text); }

  FakeProber prober;

 private:
  void add(const fs::path& rel, const std::string& name, DevNum d, uint64_t sectors) {
    fs::path p = sys(rel.string());
    std::string num = std::to_string(d.major) + ":" + std::to_string(d.minor);
    write(p / "dev", num + "\n");
    write(p / "size", std::to_string(sectors) + "\n");
    write(p / "ro", "0\n");
    fs::create_directories(p / "holders");
    fs::create_directories(p / "slaves");
    fs::create_symlink(fs::path("../..") / rel, sys("class/block/" + name));
    fs::create_symlink(fs::path("../..") / rel, sys("dev/block/" + num));
    prober.rdev["/dev/" + name] = d;
  }

  fs::path dir_;
};

const DevNum kVda{252, 0}, kVda1{252, 1}, kVda2{252, 2}, kVdb{252, 16}, kVdb1{252, 17}, kVdc{252, 32},
    kVdc1{252, 33}, kVdd{252, 48}, kDm0{253, 0}, kZram{251, 0};

Verdict check(FakeSystem& f, const std::string& arg, Mode mode) {
  auto c = preflight(f.root(), arg, mode, false, f.prober);
  INFO(arg << " " << to_string(mode) << ": " << c.verdict.summary());
  return std::move(c.verdict);
}

std::vector<std::string> codes(const Verdict& v) {
  std::vector<std::string> c;
  for (const auto& r : v.reasons) c.push_back(r.code);
  return c;
}

using Codes = std::vector<std::string>;

}  // namespace

TEST_CASE("a blank disk is safe; hold keeps the O_EXCL descriptor in write mode only", "[safety]") {
  FakeSystem f;
  f.disk("vdc", kVdc);
  auto c = preflight(f.root(), "vdc", Mode::Write, true, f.prober);
  INFO(c.verdict.summary());
  CHECK(c.verdict.safe());
  CHECK(c.verdict.summary() == "safe");
  CHECK(c.verdict.device == "/dev/vdc");
  CHECK(c.device.name == "vdc");
  CHECK(c.device.size_bytes == 131072ull * 512);
  CHECK(c.hold.valid());
  CHECK(f.prober.opens == std::vector<std::string>{"excl /dev/vdc"});

  f.prober.opens.clear();
  auto r = preflight(f.root(), "vdc", Mode::Read, true, f.prober);
  CHECK(r.verdict.safe());
  CHECK_FALSE(r.hold.valid());
  CHECK(f.prober.opens == std::vector<std::string>{"shared /dev/vdc"});

  auto no_hold = preflight(f.root(), "vdc", Mode::Write, false, f.prober);
  CHECK(no_hold.verdict.safe());
  CHECK_FALSE(no_hold.hold.valid());
}

TEST_CASE("what cannot be probed is refused with cannot-probe in both modes", "[safety]") {
  struct Case {
    const char* what;
    int open_err;
    std::string probe_error;
    const char* expect;  // in the message
  };
  const std::vector<Case> cases = {
      {"open EPERM", EPERM, "", "Operation not permitted"},
      {"open EACCES", EACCES, "", "Permission denied"},
      {"open EIO", EIO, "", "Input/output error"},
      {"open ENXIO", ENXIO, "", "No such device or address"},
      {"libblkid read error", 0, diskprobe::errno_message("blkid_do_probe", "/dev/vdc", EIO),
       "Input/output error"},
      {"libblkid error without errno", 0, "blkid_do_probe(/dev/vdc): libblkid error", "libblkid error"},
  };
  for (const auto& c : cases) {
    SECTION(c.what) {
      FakeSystem f;
      f.disk("vdc", kVdc);
      f.prober.open_err = c.open_err;
      f.prober.probe_error = c.probe_error;
      f.prober.signatures = {{"ext4", "filesystem", 1080, false}};  // never seen
      for (Mode mode : {Mode::Write, Mode::Read}) {
        auto got = preflight(f.root(), "vdc", mode, true, f.prober);
        INFO(to_string(mode) << ": " << got.verdict.summary());
        CHECK(codes(got.verdict) == Codes{"cannot-probe"});
        CHECK(got.verdict.reasons[0].message.find(c.expect) != std::string::npos);
        CHECK(got.verdict.reasons[0].message.find("/dev/vdc") != std::string::npos);
        CHECK(got.verdict.signatures.empty());
        CHECK_FALSE(got.hold.valid());
      }
    }
  }
}

TEST_CASE("busy: refused for writing, and still probed through a shared open", "[safety]") {
  FakeSystem f;
  f.disk("vdc", kVdc);
  f.prober.excl_err = EBUSY;
  f.prober.signatures = {{"ext4", "filesystem", 1080, false}};
  auto w = preflight(f.root(), "vdc", Mode::Write, true, f.prober);
  INFO(w.verdict.summary());
  CHECK(codes(w.verdict) == Codes{"busy", "signature"});
  CHECK(w.verdict.reasons[0].message.find("held open exclusively by another process") != std::string::npos);
  CHECK(f.prober.opens == std::vector<std::string>{"excl /dev/vdc", "shared /dev/vdc"});
  CHECK_FALSE(w.hold.valid());
  CHECK(check(f, "vdc", Mode::Read).safe());  // reading opens shared: no busy check

  SECTION("and when the shared open fails too, cannot-probe joins busy") {
    f.prober.shared_err = EPERM;
    CHECK(codes(check(f, "vdc", Mode::Write)) == Codes{"busy", "cannot-probe"});
    CHECK(codes(check(f, "vdc", Mode::Read)) == Codes{"cannot-probe"});
  }
}

TEST_CASE("a /dev node that is not the device sysfs names is refused", "[safety]") {
  FakeSystem f;
  f.disk("vdc", kVdc);
  f.prober.rdev["/dev/vdc"] = kVdd;
  CHECK(codes(check(f, "vdc", Mode::Write)) == Codes{"cannot-probe"});
  CHECK(codes(check(f, "vdc", Mode::Read)) == Codes{"cannot-probe"});
}

TEST_CASE("signatures refuse writing, one reason each, and are only recorded for reading", "[safety]") {
  FakeSystem f;
  f.disk("vdc", kVdc);
  // Ambivalent: a disk reformatted whole keeps its old backup GPT header at the end.
  f.prober.signatures = {{"ext4", "filesystem", 1080, false}, {"gpt", "partition table", 67108352, true}};
  auto w = check(f, "vdc", Mode::Write);
  CHECK(codes(w) == Codes{"signature", "partition-table"});
  CHECK(
      w.reasons[0].message ==
      "/dev/vdc holds an ext4 filesystem (signature at offset 1080): diskprobe will not write to it; wipe it "
      "with wipefs -a only if you are sure, or use an empty disk");
  CHECK(w.reasons[1].message.find("a gpt partition table (signature at offset 67108352)") !=
        std::string::npos);
  CHECK(w.signatures.size() == 2);
  auto r = check(f, "vdc", Mode::Read);
  CHECK(r.safe());
  CHECK(r.signatures.size() == 2);
}

TEST_CASE("signature descriptions name what is there", "[safety]") {
  struct Case {
    Signature sig;
    const char* says;
  };
  const std::vector<Case> cases = {
      {{"swap", "other", 4086, false}, "holds a swap area"},
      {{"crypto_LUKS", "crypto", 0, false}, "holds a LUKS encrypted volume (crypto_LUKS)"},
      {{"LVM2_member", "raid", 536, false}, "holds an LVM physical volume (LVM2_member)"},
      {{"linux_raid_member", "raid", 4096, false},
       "holds a RAID or volume-manager member (linux_raid_member)"},
      {{"xfs", "filesystem", 0, false}, "holds an xfs filesystem"},
      {{"dos", "partition table", 510, true}, "holds a dos (MBR) partition table"},
      {{"PMBR", "partition table", 510, true},
       "holds a protective MBR (PMBR) of a GPT whose headers are gone"},
      {{"atari", "partition table", 0, true}, "holds an atari partition table"},
      {{"bcache", "other", 4120, false}, "holds a bcache signature"},
  };
  for (const auto& c : cases) {
    FakeSystem f;
    f.disk("vdc", kVdc);
    f.prober.signatures = {c.sig};
    auto v = check(f, "vdc", Mode::Write);
    REQUIRE(v.reasons.size() == 1);
    CHECK(v.reasons[0].code == (c.sig.partition_table ? "partition-table" : "signature"));
    CHECK(v.reasons[0].message.find(c.says) != std::string::npos);
  }
}

TEST_CASE("mounts: the device, its partitions, escaped mount points, btrfs through its source", "[safety]") {
  FakeSystem f;
  f.disk("vdc", kVdc);
  f.partition("vdc", "vdc1", kVdc1);
  f.disk("vdd", kVdd);
  f.disk("vdb", kVdb);
  f.mountinfo(
      "22 1 0:21 / /proc rw - proc proc rw\n"
      "40 1 252:33 / /mnt/my\\040data rw,relatime shared:5 - ext4 /dev/vdc1 rw\n"
      // btrfs: an anonymous device number; /dev/vdd is found through stat of the source
      "41 1 0:45 / /srv rw,relatime - btrfs /dev/disk/by-label/pool rw\n");
  f.prober.stats["/dev/disk/by-label/pool"] = PathDevice{true, kVdd, {0, 6}};

  auto c = check(f, "vdc", Mode::Write);
  CHECK(codes(c) == Codes{"mounted", "has-partitions"});
  CHECK(c.reasons[0].message ==
        "/dev/vdc1 (a partition of /dev/vdc) is mounted at /mnt/my data (ext4): diskprobe will not touch it; "
        "unmount it first (umount /mnt/my data) or pick another device");
  CHECK(codes(check(f, "vdc", Mode::Read)) == Codes{"mounted"});
  CHECK(codes(check(f, "vdc1", Mode::Write)) == Codes{"mounted"});

  CHECK(codes(check(f, "vdd", Mode::Read)) == Codes{"mounted"});
  CHECK(check(f, "vdb", Mode::Write).safe());

  SECTION("every member of a multi-device btrfs is mounted") {
    fs::create_directories(f.sys("fs/btrfs/0a1b/devices/vdd"));
    fs::create_directories(f.sys("fs/btrfs/0a1b/devices/vdb"));
    CHECK(codes(check(f, "vdb", Mode::Read)) == Codes{"mounted"});
  }
}

TEST_CASE("active swap, on a device or as a file on it, refuses both modes", "[safety]") {
  FakeSystem f;
  f.disk("vda", kVda);
  f.disk("vdc", kVdc);
  f.disk("vdd", kVdd);
  f.disk("zram0", kZram);
  f.mountinfo("26 1 252:0 / / rw - ext4 /dev/vda rw\n");
  f.swaps(
      "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
      "/dev/vdc                                partition\t4011516\t\t0\t\t-2\n"
      "/data/swap\\040file                     file\t\t1048572\t\t0\t\t-3\n");
  f.prober.stats["/data/swap file"] = PathDevice{false, {0, 0}, kVdd};
  auto c = check(f, "vdc", Mode::Read);
  CHECK(codes(c) == Codes{"system-disk", "active-swap"});
  CHECK(c.reasons[1].message.find("run swapoff /dev/vdc") != std::string::npos);
  auto d = check(f, "vdd", Mode::Read);
  CHECK(codes(d) == Codes{"system-disk", "active-swap"});
  CHECK(d.reasons[1].message.find("holds the active swap file /data/swap file") != std::string::npos);
  CHECK(check(f, "zram0", Mode::Write).safe());
}

TEST_CASE("holders of the device or of its partitions refuse both modes", "[safety]") {
  FakeSystem f;
  f.disk("vdc", kVdc);
  f.partition("vdc", "vdc1", kVdc1);
  f.disk("vdd", kVdd);
  f.disk("dm-0", kDm0);
  f.disk("md0", {9, 0});
  f.stack("vdd", "dm-0");
  f.set("dm-0", "dm/name", "vg0-data");
  f.stack("vdc1", "md0");
  fs::create_directories(f.sys("class/block/md0/md"));

  auto d = check(f, "vdd", Mode::Read);
  CHECK(codes(d) == Codes{"holders"});
  CHECK(d.reasons[0].message.find("in use by dm-0 (device-mapper vg0-data)") != std::string::npos);
  auto c = check(f, "vdc", Mode::Write);
  CHECK(codes(c) == Codes{"holders", "has-partitions"});
  CHECK(c.reasons[0].message.find("/dev/vdc1 (a partition of /dev/vdc) is in use by md0 (RAID)") !=
        std::string::npos);
  CHECK(check(f, "dm-0", Mode::Write).safe());
}

TEST_CASE("system disk: the disks under /, /boot and swap, through partitions and LVM", "[safety]") {
  FakeSystem f;
  // vda: vda1 is /boot, vda2 the LVM PV under dm-0, which is /. vdb1 carries swap.
  f.disk("vda", kVda);
  f.partition("vda", "vda1", kVda1);
  f.partition("vda", "vda2", kVda2);
  f.disk("dm-0", kDm0);
  f.stack("vda2", "dm-0");
  f.disk("vdb", kVdb);
  f.partition("vdb", "vdb1", kVdb1);
  f.disk("vdc", kVdc);
  f.mountinfo(
      "26 1 253:0 / / rw,relatime shared:1 - ext4 /dev/mapper/vg0-root rw\n"
      "29 26 252:1 / /boot rw,relatime shared:60 - ext4 /dev/vda1 rw\n"
      "50 26 252:32 / /data rw,relatime - ext4 /dev/vdc rw\n");  // a data disk, not the system
  f.swaps("Filename Type Size Used Priority\n/dev/vdb1 partition 1024 0 -2\n");

  struct Case {
    const char* dev;
    Mode mode;
    Codes codes;
  };
  const std::vector<Case> cases = {
      {"vda", Mode::Read, {"system-disk", "mounted", "holders"}},
      {"vda", Mode::Write, {"system-disk", "mounted", "holders", "has-partitions"}},
      {"vda2", Mode::Read, {"system-disk", "holders"}},
      {"dm-0", Mode::Read, {"system-disk", "mounted"}},
      {"vdb", Mode::Read, {"system-disk", "active-swap"}},
      {"vdc", Mode::Read, {"mounted"}},
  };
  for (const auto& c : cases) {
    INFO(c.dev);
    CHECK(codes(check(f, c.dev, c.mode)) == c.codes);
  }
  auto v = check(f, "vda", Mode::Read);
  CHECK(v.reasons[0].message.find("/dev/vda is on the system disk (vda holds /, /boot)") == 0);

  SECTION("a device built on the system disk is refused too") {
    f.disk("dm-1", {253, 1});
    f.stack("vda2", "dm-1");
    CHECK(codes(check(f, "dm-1", Mode::Write)) == Codes{"system-disk"});
  }
}

TEST_CASE("read-only and partitions refuse writing only", "[safety]") {
  FakeSystem f;
  f.disk("vdc", kVdc);
  f.set("vdc", "ro", "1");
  f.disk("vdd", kVdd);
  f.partition("vdd", "vdd1", {252, 49});
  CHECK(codes(check(f, "vdc", Mode::Write)) == Codes{"read-only"});
  CHECK(check(f, "vdc", Mode::Read).safe());
  auto p = check(f, "vdd", Mode::Write);
  CHECK(codes(p) == Codes{"has-partitions"});
  CHECK(p.reasons[0].message.find("(/dev/vdd1)") != std::string::npos);
  CHECK(check(f, "vdd", Mode::Read).safe());

  SECTION("BLKROGET alone is enough") {
    f.prober.ro = true;
    CHECK(codes(check(f, "vdd1", Mode::Write)) == Codes{"read-only"});
  }
}

TEST_CASE("names: bad, missing, empty devices", "[safety]") {
  FakeSystem f;
  f.disk("vdc", kVdc);
  f.disk("loop7", {7, 7}, 0);
  CHECK(codes(check(f, "../etc", Mode::Write)) == Codes{"bad-name"});
  CHECK(codes(check(f, "", Mode::Read)) == Codes{"bad-name"});
  CHECK(codes(check(f, "vdz", Mode::Read)) == Codes{"not-found"});
  CHECK(codes(check(f, "/dev/diskprobe-unit-no-such-device", Mode::Read)) == Codes{"not-found"});
  auto v = check(f, "loop7", Mode::Write);
  CHECK(codes(v) == Codes{"cannot-probe"});
  CHECK(v.reasons[0].message.find("size 0") != std::string::npos);
  CHECK(f.prober.opens.empty());  // none of these got as far as an open
}

TEST_CASE("procfs that cannot be read or parsed refuses with cannot-probe", "[safety]") {
  FakeSystem f;
  f.disk("vdc", kVdc);
  SECTION("no mountinfo") {
    fs::remove(f.proc("self/mountinfo"));
    CHECK(codes(check(f, "vdc", Mode::Read)) == Codes{"cannot-probe"});
  }
  SECTION("a malformed mountinfo line") {
    f.mountinfo("22 1 0:21 / /proc rw - proc proc rw\n40 1 garbage\n");
    auto v = check(f, "vdc", Mode::Read);
    CHECK(codes(v) == Codes{"cannot-probe"});
    CHECK(v.reasons[0].message.find("mountinfo:2") != std::string::npos);
  }
  SECTION("no /proc/swaps is a kernel without swap, not an error") {
    fs::remove(f.proc("swaps"));
    CHECK(check(f, "vdc", Mode::Write).safe());
  }
}

TEST_CASE("recheck probes again through the held descriptor", "[safety]") {
  FakeSystem f;
  f.disk("vdc", kVdc);
  auto c = preflight(f.root(), "vdc", Mode::Write, true, f.prober);
  REQUIRE(c.hold.valid());
  f.prober.opens.clear();
  CHECK(recheck(f.root(), c, f.prober).safe());
  // Someone wrote a filesystem between the check and the run.
  f.prober.signatures = {{"xfs", "filesystem", 0, false}};
  CHECK(codes(recheck(f.root(), c, f.prober)) == Codes{"signature"});
  CHECK(f.prober.opens.empty());  // through the held descriptor, no new open

  Checked unheld = preflight(f.root(), "vdc", Mode::Write, false, f.prober);
  auto v = recheck(f.root(), unheld, f.prober);
  CHECK(codes(v) == Codes{"cannot-probe"});
}

TEST_CASE("Verdict: has, summary, mode names", "[safety]") {
  Verdict v;
  CHECK(v.summary() == "safe");
  CHECK_FALSE(v.has("busy"));
  v.reasons.push_back({"busy", "/dev/vdc is held"});
  v.reasons.push_back({"read-only", "/dev/vdc is read-only"});
  CHECK(v.has("busy"));
  CHECK(v.has("read-only"));
  CHECK_FALSE(v.has("mounted"));
  CHECK(v.summary() == "refused: /dev/vdc is held (busy); /dev/vdc is read-only (read-only)");
  CHECK(to_string(Mode::Write) == "write");
  CHECK(to_string(Mode::Read) == "read");
}

TEST_CASE("parse_mountinfo: optional fields, octal escapes, a real-world file", "[safety]") {
  auto text = diskprobe::read_file(std::string(DISKPROBE_FIXTURES) + "/safety/mountinfo");
  REQUIRE(text.ok());
  auto m = parse_mountinfo(*text, "mountinfo");
  INFO((m ? std::string() : m.error()));
  REQUIRE(m.ok());
  REQUIRE(m->size() == 9);
  CHECK((*m)[3].mount_point == "/");
  CHECK((*m)[3].dev == DevNum{253, 0});
  CHECK((*m)[3].source == "/dev/mapper/vg0-root");
  CHECK((*m)[6].mount_point == "/srv/btrfs pool");
  CHECK((*m)[6].fstype == "btrfs");
  CHECK((*m)[6].dev == DevNum{0, 45});
  CHECK((*m)[7].mount_point == "/home/with\ttab\\and\nnewline");
  CHECK((*m)[7].dev == DevNum{252, 48});

  for (const char* bad :
       {"1 2 3\n", "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 ext3 /dev/root rw\n",
        "36 35 x:0 / / rw - ext3 /dev/root rw\n", "36 35 8:0x / / rw - ext3 /dev/root rw\n"}) {
    INFO(bad);
    CHECK_FALSE(parse_mountinfo(bad, "mountinfo").ok());
  }
}

TEST_CASE("parse_swaps: header, partitions, escaped files", "[safety]") {
  auto text = diskprobe::read_file(std::string(DISKPROBE_FIXTURES) + "/safety/swaps");
  REQUIRE(text.ok());
  auto s = parse_swaps(*text, "swaps");
  REQUIRE(s.ok());
  REQUIRE(s->size() == 2);
  CHECK((*s)[0].path == "/dev/zram0");
  CHECK((*s)[0].type == "partition");
  CHECK((*s)[1].path == "/swap file");
  CHECK((*s)[1].type == "file");
  CHECK(parse_swaps("Filename Type Size Used Priority\n", "swaps")->empty());
  CHECK_FALSE(parse_swaps("Filename Type Size Used Priority\n/dev/vdb partition\n", "swaps").ok());
}

namespace {

constexpr uint64_t kGiBSectors = (1ull << 30) / 512;

Options paranoid(Paranoid p, bool allow_nonzero = false, bool hold = false) {
  Options o;
  o.paranoid = p;
  o.allow_nonzero = allow_nonzero;
  o.hold = hold;
  o.seed = 11;
  return o;
}

}  // namespace

TEST_CASE("paranoid: when the sampler runs", "[safety][sampler]") {
  FakeSystem f;
  f.disk("vdc", kVdc, kGiBSectors);      // 1 GiB: sampled by default
  f.disk("vdd", kVdd, kGiBSectors - 8);  // just below: only with --paranoid
  fake::Disk blank(1ull << 30);
  f.prober.disk = &blank;
  struct Case {
    const char* dev;
    Mode mode;
    Options options;
    bool ran;
    const char* skipped;
  };
  const std::vector<Case> cases = {
      {"vdc", Mode::Write, paranoid(Paranoid::Auto), true, ""},
      {"vdd", Mode::Write, paranoid(Paranoid::Auto), false,
       "smaller than 1 GiB; --paranoid samples it anyway"},
      {"vdd", Mode::Write, paranoid(Paranoid::On), true, ""},
      {"vdc", Mode::Write, paranoid(Paranoid::Off), false, "--no-paranoid"},
      {"vdc", Mode::Read, paranoid(Paranoid::On), false, "read mode: reading changes nothing"},
      {"vdc", Mode::Write, paranoid(Paranoid::On, true), false, "--allow-nonzero"},
  };
  for (const auto& c : cases) {
    auto v = preflight(f.root(), c.dev, c.mode, c.options, f.prober).verdict;
    INFO(c.dev << " " << to_string(c.mode) << ": " << v.summary() << " / " << v.sampled.skipped);
    CHECK(v.safe());
    CHECK(v.sampled.ran == c.ran);
    CHECK(v.sampled.skipped == c.skipped);
    if (c.ran) CHECK(v.sampled.zero_windows == v.sampled.windows);
  }
  SECTION("a device refused already is not read") {
    f.prober.signatures = {{"ext4", "filesystem", 1080, false}};
    auto v = preflight(f.root(), "vdc", Mode::Write, paranoid(Paranoid::On), f.prober).verdict;
    CHECK(codes(v) == Codes{"signature"});
    CHECK_FALSE(v.sampled.ran);
    CHECK(v.sampled.skipped == "refused already");
  }
}

TEST_CASE("paranoid: foreign data refuses with nonzero-data naming offsets; own data passes",
          "[safety][sampler]") {
  FakeSystem f;
  f.disk("vdc", kVdc, kGiBSectors);
  const uint64_t size = 1ull << 30;
  const uint64_t id = diskprobe::device_identity_from("", "", "", "vdc", size);

  fake::Disk foreign(size);
  foreign.random(256ull << 20, 512ull << 20);
  f.prober.disk = &foreign;
  auto v = preflight(f.root(), "vdc", Mode::Write, paranoid(Paranoid::Auto, false, true), f.prober);
  INFO(v.verdict.summary());
  CHECK(codes(v.verdict) == Codes{"nonzero-data"});
  CHECK_FALSE(v.hold.valid());
  REQUIRE_FALSE(v.verdict.sampled.foreign_offsets.empty());
  const auto& msg = v.verdict.reasons[0].message;
  CHECK(msg.find(std::to_string(v.verdict.sampled.foreign_offsets[0])) != std::string::npos);
  CHECK(msg.find("--allow-nonzero") != std::string::npos);
  CHECK(preflight(f.root(), "vdc", Mode::Write, paranoid(Paranoid::Auto, true), f.prober).verdict.safe());
  CHECK(preflight(f.root(), "vdc", Mode::Read, paranoid(Paranoid::Auto), f.prober).verdict.safe());

  fake::Disk own(size);
  own.blocks(0, 128 << 10, size / (128 << 10), id);
  own.zero(0, 4 << 20);
  f.prober.disk = &own;
  auto mine = preflight(f.root(), "vdc", Mode::Write, paranoid(Paranoid::Auto), f.prober).verdict;
  INFO(mine.summary());
  CHECK(mine.safe());
  CHECK(mine.sampled.own_windows > 0);

  fake::Disk others(size);
  others.blocks(0, 4096, size / 4096, id ^ 1);
  f.prober.disk = &others;
  auto theirs = preflight(f.root(), "vdc", Mode::Write, paranoid(Paranoid::Auto), f.prober).verdict;
  CHECK(codes(theirs) == Codes{"nonzero-data"});
  CHECK(theirs.reasons[0].message.find("another device") != std::string::npos);
}

TEST_CASE("paranoid: a sampler read that fails refuses with cannot-probe (fail closed)",
          "[safety][sampler]") {
  FakeSystem f;
  f.disk("vdc", kVdc, kGiBSectors);
  const uint64_t size = 1ull << 30;
  struct Case {
    const char* what;
    int err;
    const char* expect;
  };
  const std::vector<Case> cases = {{"EIO", EIO, "Input/output error"},
                                   {"EPERM", EPERM, "Operation not permitted"},
                                   {"EACCES", EACCES, "Permission denied"},
                                   {"short read", 0, "short read"}};
  for (const auto& c : cases) {
    SECTION(c.what) {
      fake::Disk d(size);
      d.fail_from = 0;
      d.fail_to = size;
      d.fail_errno = c.err;
      f.prober.disk = &d;
      auto v = preflight(f.root(), "vdc", Mode::Write, paranoid(Paranoid::Auto, false, true), f.prober);
      INFO(v.verdict.summary());
      CHECK(codes(v.verdict) == Codes{"cannot-probe"});
      CHECK(v.verdict.reasons[0].message.find(c.expect) != std::string::npos);
      CHECK_FALSE(v.hold.valid());
    }
  }
  SECTION("the real reader over a descriptor that reads nothing (/dev/null)") {
    f.prober.disk = nullptr;
    f.prober.real_reader = true;
    auto v = preflight(f.root(), "vdc", Mode::Write, paranoid(Paranoid::Auto), f.prober).verdict;
    INFO(v.summary());
    CHECK(codes(v) == Codes{"cannot-probe"});
    CHECK(v.reasons[0].message.find("short read") != std::string::npos);
  }
}

TEST_CASE("paranoid: recheck samples again through the held descriptor", "[safety][sampler]") {
  FakeSystem f;
  f.disk("vdc", kVdc, kGiBSectors);
  fake::Disk d(1ull << 30);
  f.prober.disk = &d;
  auto c = preflight(f.root(), "vdc", Mode::Write, paranoid(Paranoid::Auto, false, true), f.prober);
  REQUIRE(c.hold.valid());
  REQUIRE(f.prober.sampled_fds.size() == 2);  // the deep probe, then the sampler
  for (int fd : f.prober.sampled_fds) CHECK(fd == c.hold.get());  // both read through the claim
  CHECK(recheck(f.root(), c, f.prober).safe());
  d.random(0, 4096);  // someone wrote to it without claiming it
  CHECK(codes(recheck(f.root(), c, f.prober)) == Codes{"nonzero-data"});
  CHECK(f.prober.sampled_fds.back() == c.hold.get());
}

namespace {

// Little- and big-endian fields into a superblock image.
void put_le(std::vector<uint8_t>& b, size_t at, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
}
void put_be(std::vector<uint8_t>& b, size_t at, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * (n - 1 - i)));
}
void put_str(std::vector<uint8_t>& b, size_t at, const char* s) { std::memcpy(&b[at], s, std::strlen(s)); }

std::vector<uint8_t> ext_backup(uint64_t log_bs, uint64_t per_group, uint64_t group) {
  std::vector<uint8_t> sb(1024, 0);
  put_le(sb, 56, 0xEF53, 2);
  put_le(sb, 24, log_bs, 4);
  put_le(sb, 32, per_group, 4);
  put_le(sb, 90, group, 2);
  return sb;
}

std::string all_messages(const Verdict& v) {
  std::string s;
  for (const auto& r : v.reasons) s += r.message + "\n";
  return s;
}

}  // namespace

TEST_CASE("deep probe: backup superblocks libblkid does not read refuse writing, with their offset", "[safety][deep]") {
  const uint64_t size = 1ull << 30;
  struct Case {
    const char* what;
    uint64_t at;
    std::vector<uint8_t> bytes;
  };
  std::vector<uint8_t> btrfs(4096, 0), xfs(512, 0);
  put_str(btrfs, 0x40, "_BHRfS_M");
  put_le(btrfs, 0x30, 64ull << 20, 8);
  put_str(xfs, 0, "XFSB");
  put_be(xfs, 4, 4096, 4);
  put_be(xfs, 84, 65536, 4);  // 1 GiB in 4 AGs of 65536 blocks
  const std::vector<Case> cases = {
      {"ext4, 4 KiB blocks, group 1", 128ull << 20, ext_backup(2, 32768, 1)},
      {"ext4, 4 KiB blocks, group 3 only", 3 * (128ull << 20), ext_backup(2, 32768, 3)},
      {"ext2, 1 KiB blocks, group 5", (1 + 5 * 8192ull) * 1024, ext_backup(0, 8192, 5)},
      {"ext4 at 1 MiB (a wiped table), 4 KiB blocks, group 1", (1ull << 20) + (128ull << 20), ext_backup(2, 32768, 1)},
      {"btrfs copy at 64 MiB", 64ull << 20, btrfs},
      {"xfs AG 1", 256ull << 20, xfs},
      {"xfs AG 3", 768ull << 20, xfs},
  };
  for (const auto& c : cases) {
    SECTION(c.what) {
      FakeSystem f;
      f.disk("vdc", kVdc, size / 512);
      fake::Disk d(size);
      d.put(c.at, c.bytes);
      f.prober.disk = &d;
      auto v = preflight(f.root(), "vdc", Mode::Write, paranoid(Paranoid::Off), f.prober).verdict;
      INFO(v.summary());
      CHECK(codes(v) == Codes{"signature"});
      CHECK(all_messages(v).find("at byte " + std::to_string(c.at)) != std::string::npos);
      // Reading is not refused for what is on the device.
      CHECK(preflight(f.root(), "vdc", Mode::Read, paranoid(Paranoid::Off), f.prober).verdict.safe());
    }
  }
  SECTION("near misses are not superblocks: a magic alone, or fields that do not fit where it sits") {
    FakeSystem f;
    f.disk("vdc", kVdc, size / 512);
    fake::Disk d(size);
    d.put(128ull << 20, ext_backup(2, 32768, 2));  // group 2 is not where it sits
    d.put(3 * (128ull << 20), ext_backup(0, 32768, 3));  // block size does not fit
    std::vector<uint8_t> moved = btrfs;
    put_le(moved, 0x30, 0, 8);  // a copy of the primary, not the 64 MiB copy
    d.put(64ull << 20, moved);
    f.prober.disk = &d;
    auto v = preflight(f.root(), "vdc", Mode::Write, paranoid(Paranoid::Off), f.prober).verdict;
    CHECK(v.safe());
  }
}

TEST_CASE("deep probe: libblkid at the first-partition starts and at what leftover tables name", "[safety][deep]") {
  const uint64_t size = 1ull << 30;
  FakeSystem f;
  f.disk("vdc", kVdc, size / 512);
  fake::Disk d(size);
  f.prober.disk = &d;
  SECTION("an ext4 at 1 MiB after wipefs -a of the disk") {
    f.prober.range_signatures[1ull << 20] = {Signature{"ext4", "filesystem", 1080, false}};
    auto v = preflight(f.root(), "vdc", Mode::Write, paranoid(Paranoid::Off), f.prober).verdict;
    CHECK(codes(v) == Codes{"signature"});
    CHECK(all_messages(v).find("ext4 filesystem starting at byte 1048576 (its signature at byte 1049656)") !=
          std::string::npos);
    CHECK(all_messages(v).find("was the table wiped?") != std::string::npos);
  }
  SECTION("the usual starts are probed: 34 and 63 sectors, 1 MiB") {
    preflight(f.root(), "vdc", Mode::Write, paranoid(Paranoid::Off), f.prober);
    std::set<uint64_t> at(f.prober.ranges_probed.begin(), f.prober.ranges_probed.end());
    CHECK(at == std::set<uint64_t>{34 * 512, 63 * 512, 1ull << 20});
  }
  SECTION("starts named by a leftover MBR entry and by the backup GPT's entries") {
    std::vector<uint8_t> mbr(512, 0);
    mbr[446 + 4] = 0x83;
    put_le(mbr, 446 + 8, 8192, 4);
    put_le(mbr, 446 + 12, 65536, 4);
    d.put(0, mbr);
    std::vector<uint8_t> entry(128, 0);
    entry[0] = 0xaf;  // a type GUID that is not zero
    put_le(entry, 32, 4096, 8);
    put_le(entry, 40, 100000, 8);
    d.put(size - 512 - 128 * 128, entry);
    f.prober.range_signatures[4096 * 512] = {Signature{"xfs", "filesystem", 0, false}};
    auto v = preflight(f.root(), "vdc", Mode::Write, paranoid(Paranoid::Off), f.prober).verdict;
    std::set<uint64_t> at(f.prober.ranges_probed.begin(), f.prober.ranges_probed.end());
    CHECK(at.count(8192 * 512));
    CHECK(at.count(4096 * 512));
    CHECK(all_messages(v).find("xfs filesystem starting at byte 2097152") != std::string::npos);
  }
  SECTION("a damaged backup GPT header (magic erased) still says where its entries are") {
    std::vector<uint8_t> hdr(512, 0);  // "EFI PART" erased by wipefs, the rest left
    put_le(hdr, 72, 1000, 8);          // entries at LBA 1000, not before the last LBA
    put_le(hdr, 80, 128, 4);
    put_le(hdr, 84, 128, 4);
    d.put(size - 512, hdr);
    std::vector<uint8_t> entry(128, 0);
    entry[3] = 0x11;
    put_le(entry, 32, 10240, 8);
    put_le(entry, 40, 20000, 8);
    d.put(1000 * 512 + 128, entry);  // the second entry
    preflight(f.root(), "vdc", Mode::Write, paranoid(Paranoid::Off), f.prober);
    std::set<uint64_t> at(f.prober.ranges_probed.begin(), f.prober.ranges_probed.end());
    CHECK(at.count(10240 * 512));
  }
  SECTION("a libblkid error there refuses, as everywhere") {
    f.prober.probe_error = "blkid_do_probe(/dev/vdc): libblkid error";
    auto v = preflight(f.root(), "vdc", Mode::Write, paranoid(Paranoid::Off), f.prober).verdict;
    CHECK(v.has(code::kCannotProbe));
  }
}

TEST_CASE("deep probe: a device of 8 MiB or less is read whole", "[safety][deep]") {
  for (uint64_t size : {uint64_t{1} << 20, uint64_t{1536} << 10, uint64_t{8} << 20}) {
    FakeSystem f;
    f.disk("vdc", kVdc, size / 512);
    SECTION("blank passes, size " + std::to_string(size)) {
      fake::Disk d(size);
      f.prober.disk = &d;
      CHECK(preflight(f.root(), "vdc", Mode::Write, paranoid(Paranoid::Off), f.prober).verdict.safe());
    }
    SECTION("an LVM label (sector 1) refuses, size " + std::to_string(size)) {
      fake::Disk d(size);
      std::vector<uint8_t> label(32, 0);
      put_str(label, 0, "LABELONE");
      put_str(label, 24, "LVM2 001");
      d.put(512, label);
      f.prober.disk = &d;
      auto v = preflight(f.root(), "vdc", Mode::Write, paranoid(Paranoid::Off), f.prober).verdict;
      CHECK(codes(v) == Codes{"nonzero-data"});
      CHECK(all_messages(v).find("at byte 512") != std::string::npos);
    }
    SECTION("md 0.90 (64 KiB before the end) and 1.2 (at 4 KiB) superblocks refuse, size " + std::to_string(size)) {
      for (uint64_t at : {uint64_t{(size & ~uint64_t{0xffff}) - 0x10000}, uint64_t{4096}}) {
        fake::Disk d(size);
        d.put(at, {0xfc, 0x4e, 0x2b, 0xa9});
        f.prober.disk = &d;
        auto v = preflight(f.root(), "vdc", Mode::Write, paranoid(Paranoid::Off), f.prober).verdict;
        CHECK(codes(v) == Codes{"nonzero-data"});
        CHECK(all_messages(v).find("at byte " + std::to_string(at)) != std::string::npos);
      }
    }
    SECTION("diskprobe's own blocks (a killed run) pass, size " + std::to_string(size)) {
      fake::Disk d(size);
      d.blocks(0, 4096, size / 4096, diskprobe::device_identity_from("", "", "", "vdc", size));
      f.prober.disk = &d;
      auto v = preflight(f.root(), "vdc", Mode::Write, paranoid(Paranoid::Off), f.prober).verdict;
      CHECK(v.safe());
    }
  }
}

TEST_CASE("in use through the back doors: loop devices over the target, its backing file, layers in slaves/",
          "[safety][layers]") {
  const DevNum kLoop2{7, 2}, kLoop3{7, 3}, kLoop4{7, 4}, kDm1{253, 1};
  FakeSystem f;
  f.disk("vdc", kVdc);
  f.partition("vdc", "vdc1", kVdc1);
  f.disk("loop2", kLoop2);
  f.disk("loop3", kLoop3);
  f.disk("loop4", kLoop4);
  f.disk("dm-1", kDm1);
  f.prober.stats["/dev/vdc"] = PathDevice{true, kVdc, {0, 6}, 0};
  f.prober.stats["/dev/vdc1"] = PathDevice{true, kVdc1, {0, 6}, 0};
  auto both_modes = [&](const std::string& dev, const std::string& expect) {
    for (Mode m : {Mode::Write, Mode::Read}) {
      auto v = check(f, dev, m);
      INFO(to_string(m) << ": " << v.summary());
      CHECK(v.has(code::kInUse));
      CHECK(all_messages(v).find(expect) != std::string::npos);
      CHECK_FALSE(v.layers.empty());
    }
  };
  SECTION("a loop device over the disk at an offset (losetup -o 1M), mounted") {
    f.loop("loop3", "/dev/vdc", 1 << 20);
    f.mountinfo("30 1 7:3 / /mnt/data rw - ext4 /dev/loop3 rw\n");
    both_modes("vdc", "loop3 (a loop device over /dev/vdc from byte 1048576, mounted at /mnt/data (ext4))");
  }
  SECTION("a loop device over a partition of the disk, as active swap") {
    f.loop("loop3", "/dev/vdc1");
    f.swaps("Filename Type Size Used Priority\n/dev/loop3 partition 1024 0 -2\n");
    f.prober.stats["/dev/loop3"] = PathDevice{true, kLoop3, {0, 6}, 0};
    both_modes("vdc", "loop3 (a loop device over /dev/vdc1 from byte 0, active swap)");
  }
  SECTION("a deleted backing file name still names the device") {
    f.loop("loop3", "/dev/vdc (deleted)");
    both_modes("vdc", "loop3 (a loop device over /dev/vdc");
  }
  SECTION("a second loop device over the target's backing file, by name or by inode") {
    f.loop("loop2", "/var/tmp/a.img");
    f.prober.stats["/var/tmp/a.img"] = PathDevice{false, {}, {8, 1}, 1234};
    SECTION("the same name") {
      f.loop("loop3", "/var/tmp/a.img", 4096);
      both_modes("loop2", "loop3 (a loop device over /var/tmp/a.img from byte 4096, the backing file of /dev/loop2)");
    }
    SECTION("another name for the same file (a hard link)") {
      f.loop("loop3", "/var/tmp/link.img");
      f.prober.stats["/var/tmp/link.img"] = PathDevice{false, {}, {8, 1}, 1234};
      both_modes("loop2", "loop3 (a loop device over /var/tmp/a.img");
    }
    SECTION("another file is not the target") {
      f.loop("loop3", "/var/tmp/b.img");
      f.prober.stats["/var/tmp/b.img"] = PathDevice{false, {}, {8, 1}, 99};
      CHECK(check(f, "loop2", Mode::Write).safe());
    }
  }
  SECTION("a device-mapper layer over a loop over the disk: the whole chain") {
    f.loop("loop3", "/dev/vdc", 1 << 20);
    fs::create_directories(f.root().sysfs() + "/class/block/dm-1/slaves/loop3");
    f.set("dm-1", "dm/name", "vg-data");
    both_modes("vdc", "dm-1 (a device-mapper device (vg-data) over /dev/loop3)");
  }
  SECTION("a layer found through slaves/ when holders/ is empty") {
    fs::create_directories(f.root().sysfs() + "/class/block/dm-1/slaves/vdc");
    both_modes("vdc", "dm-1 (a block device over /dev/vdc)");
  }
  SECTION("holders/ already named it: one reason, not two") {
    f.stack("vdc", "dm-1");
    auto v = check(f, "vdc", Mode::Read);
    CHECK(codes(v) == Codes{"holders"});
  }
  SECTION("loop devices over other things leave the disk alone") {
    f.loop("loop3", "/var/tmp/other.img");
    f.loop("loop4", "/dev/loop2");
    auto v = check(f, "vdc", Mode::Read);  // (writing is refused for its partition)
    INFO(v.summary());
    CHECK(v.safe());
  }
}

TEST_CASE("recheck refuses when the device's /dev path names another device than the one held", "[safety]") {
  // mv /dev/vdc away and mknod another disk's numbers in its place between the check and the
  // run: the engine opens the path, so it would write to the other disk.
  FakeSystem f;
  f.disk("vdc", kVdc);
  f.disk("vdb", kVdb);
  auto c = preflight(f.root(), "vdc", Mode::Write, true, f.prober);
  REQUIRE(c.hold.valid());
  CHECK(recheck(f.root(), c, f.prober).safe());
  SECTION("another block device's numbers") {
    f.prober.stats["/dev/vdc"] = PathDevice{true, kVdb, {0, 6}, 0};
    auto v = recheck(f.root(), c, f.prober);
    CHECK(codes(v) == Codes{"cannot-probe"});
    CHECK(all_messages(v).find("/dev/vdc names block device 252:16 now, not the device checked (252:32)") !=
          std::string::npos);
  }
  SECTION("no block device") {
    f.prober.stats["/dev/vdc"] = PathDevice{false, {}, {0, 6}, 77};
    CHECK(all_messages(recheck(f.root(), c, f.prober)).find("/dev/vdc names no block device now") !=
          std::string::npos);
  }
  SECTION("gone") {
    f.prober.rdev.erase("/dev/vdc");
    CHECK(all_messages(recheck(f.root(), c, f.prober)).find("/dev/vdc cannot be looked up") != std::string::npos);
  }
}

TEST_CASE("what cannot be read about a device refuses it: BLKROGET, sysfs ro, a partition's number, holders/",
          "[safety]") {
  FakeSystem f;
  f.disk("vdc", kVdc);
  auto says = [&](Mode m, const std::string& text) {
    auto v = check(f, "vdc", m);
    INFO(to_string(m) << ": " << v.summary());
    CHECK(codes(v) == Codes{"cannot-probe"});
    CHECK(all_messages(v).find(text) != std::string::npos);
  };
  SECTION("BLKROGET fails: writing refused, reading not") {
    f.prober.ro_fails = true;
    says(Mode::Write, "cannot tell whether /dev/vdc is read-only: the BLKROGET ioctl failed");
    CHECK(check(f, "vdc", Mode::Read).safe());
  }
  SECTION("sysfs ro cannot be read, or reads neither 0 nor 1") {
    fs::remove(f.sys("devices/virtual/block/vdc/ro"));
    says(Mode::Write, "cannot tell whether /dev/vdc is read-only: sysfs ro cannot be read");
    f.set("vdc", "ro", "x");
    says(Mode::Write, "sysfs ro reads 'x'");
    CHECK(check(f, "vdc", Mode::Read).safe());
  }
  SECTION("a partition's device number cannot be read: whether it is mounted is unknown") {
    f.partition("vdc", "vdc1", kVdc1);
    fs::remove(f.sys("devices/virtual/block/vdc/vdc1/dev"));
    auto v = check(f, "vdc", Mode::Read);
    CHECK(codes(v) == Codes{"cannot-probe"});
    CHECK(all_messages(v).find("cannot tell whether /dev/vdc1 (a partition of /dev/vdc) is mounted or swap") !=
          std::string::npos);
  }
  SECTION("holders/ cannot be read (not a directory)") {
    fs::remove_all(f.sys("devices/virtual/block/vdc/holders"));
    write(f.sys("devices/virtual/block/vdc/holders"), "");
    for (Mode m : {Mode::Write, Mode::Read}) says(m, "cannot tell whether /dev/vdc is in use: opendir(");
  }
  SECTION("no holders/ at all is no holders") {
    fs::remove_all(f.sys("devices/virtual/block/vdc/holders"));
    CHECK(check(f, "vdc", Mode::Write).safe());
  }
}

TEST_CASE("a loop device over a block device is checked as that device: what refuses it refuses the loop",
          "[safety][layers]") {
  const DevNum kLoop1{7, 1}, kLoop2{7, 2}, kDm1{253, 1};
  FakeSystem f;
  f.disk("vdc", kVdc);
  f.disk("loop1", kLoop1);
  f.loop("loop1", "/dev/vdc", 27 << 20);
  f.prober.stats["/dev/vdc"] = PathDevice{true, kVdc, {0, 6}, 0};
  const std::string via = "/dev/loop1 is a loop device over /dev/vdc from byte 28311552, so it writes there: ";
  auto refused = [&](const std::string& dev, Mode m, const std::string& code, const std::string& says) {
    auto v = check(f, dev, m);
    INFO(to_string(m) << ": " << v.summary());
    CHECK(v.has(code));
    CHECK(all_messages(v).find(says) != std::string::npos);
  };
  SECTION("the device under it is mounted (losetup -o 27M over a mounted ext4's disk)") {
    f.mountinfo("30 1 252:32 / /mnt/data rw - ext4 /dev/vdc rw\n");
    for (Mode m : {Mode::Write, Mode::Read}) refused("loop1", m, "mounted", via + "/dev/vdc is mounted at /mnt/data");
  }
  SECTION("the device under it holds a filesystem the window does not show") {
    f.prober.signatures_at["/dev/vdc"] = {{"ext4", "filesystem", 1080, false}};
    refused("loop1", Mode::Write, "signature", via + "/dev/vdc holds an ext4 filesystem");
    CHECK(check(f, "loop1", Mode::Read).safe());  // reading harms no filesystem
  }
  SECTION("a partition of the device under it is mounted") {
    f.partition("vdc", "vdc1", kVdc1);
    f.mountinfo("30 1 252:33 / /mnt/data rw - ext4 /dev/vdc1 rw\n");
    auto v = check(f, "loop1", Mode::Write);
    CHECK(v.has(code::kHasPartitions));
    CHECK(all_messages(v).find(via + "/dev/vdc1 (a partition of /dev/vdc) is mounted at /mnt/data") !=
          std::string::npos);
  }
  SECTION("the device under it is the system disk: said once") {
    f.partition("vdc", "vdc1", kVdc1);
    f.mountinfo("30 1 252:33 / / rw - ext4 /dev/vdc1 rw\n");
    auto v = check(f, "loop1", Mode::Write);
    auto c = codes(v);
    CHECK(std::count(c.begin(), c.end(), "system-disk") == 1);
    CHECK(all_messages(v).find("/dev/loop1 is on the system disk (vdc holds /)") != std::string::npos);
  }
  SECTION("the device under it cannot be opened: refused, not passed") {
    f.prober.rdev.erase("/dev/vdc");
    refused("loop1", Mode::Write, "cannot-probe", via + "cannot check /dev/vdc for data");
  }
  SECTION("a blank device under it passes, and the loop device over it is no use of it") {
    auto v = check(f, "loop1", Mode::Write);
    CHECK(v.safe());
    CHECK(std::find(f.prober.opens.begin(), f.prober.opens.end(), "excl /dev/vdc") != f.prober.opens.end());
  }
  SECTION("through a device-mapper layer over the loop device") {
    f.disk("dm-1", kDm1);
    f.stack("loop1", "dm-1");
    f.mountinfo("30 1 252:32 / /mnt/data rw - ext4 /dev/vdc rw\n");
    refused("dm-1", Mode::Write, "mounted",
            "/dev/dm-1 writes through /dev/loop1, a loop device over /dev/vdc from byte 28311552, so it writes "
            "there: /dev/vdc is mounted at /mnt/data");
  }
  SECTION("a loop device over that loop device: the whole chain down") {
    f.disk("loop2", kLoop2);
    f.loop("loop2", "/dev/loop1", 4096);
    f.prober.stats["/dev/loop1"] = PathDevice{true, kLoop1, {0, 6}, 0};
    f.mountinfo("30 1 252:32 / /mnt/data rw - ext4 /dev/vdc rw\n");
    refused("loop2", Mode::Write, "mounted",
            "/dev/loop2 is a loop device over /dev/loop1 from byte 4096, so it writes there: " + via +
                "/dev/vdc is mounted at /mnt/data");
    f.mountinfo("22 1 0:21 / /proc rw - proc proc rw\n");
    CHECK(check(f, "loop2", Mode::Write).safe());
  }
  SECTION("a loop device over a file is not followed") {
    f.loop("loop1", "/var/tmp/a.img");
    f.prober.stats["/var/tmp/a.img"] = PathDevice{false, {}, {8, 1}, 1234};
    f.prober.signatures_at["/dev/vdc"] = {{"ext4", "filesystem", 1080, false}};
    CHECK(check(f, "loop1", Mode::Write).safe());
    CHECK(std::find(f.prober.opens.begin(), f.prober.opens.end(), "excl /dev/vdc") == f.prober.opens.end());
  }
}


TEST_CASE("in use through a loop device: the loop-over-target fixture tree", "[safety][layers]") {
  const std::string dir = std::string(DISKPROBE_FIXTURES) + "/safety/loop-over-target";
  SysRoot root(dir + "/sys", dir + "/proc");
  FakeProber prober;
  prober.rdev["/dev/loop0"] = DevNum{7, 0};
  for (Mode m : {Mode::Write, Mode::Read}) {
    auto v = preflight(root, "loop0", m, false, prober).verdict;
    INFO(v.summary());
    CHECK(codes(v) == Codes{"in-use"});
    REQUIRE(v.layers.size() == 1);
    CHECK(v.layers[0] == "loop1 (a loop device over /dev/loop0 from byte 1048576, mounted at /mnt/scratch (ext4))");
  }
}

TEST_CASE("a name that does not resolve says why the sampler did not run: never 'not run ()'", "[safety]") {
  FakeSystem f;
  for (const char* arg : {"../etc", "nosuchdisk9", ""}) {
    auto v = check(f, arg, Mode::Write);
    INFO(arg << ": " << v.summary());
    CHECK_FALSE(v.sampled.ran);
    CHECK(v.sampled.skipped.rfind("refused already: ", 0) == 0);
  }
}
