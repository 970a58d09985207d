// The preflight on real loop devices holding real signatures, mounts and swap. Every device
// here is made by the test (testing::make_loop) and goes away however the test ends; every
// mount, swapon and partition added is undone by a scope guard before that.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "diskprobe/safety/preflight.h"
#include "harness.h"

namespace {

using testing::must;
using testing::Guard;

using diskprobe::SysRoot;
using diskprobe::safety::Mode;
using diskprobe::safety::preflight;
using diskprobe::safety::Verdict;
namespace code = diskprobe::safety::code;

constexpr uint64_t kMiB = 1ull << 20;

std::string codes(const Verdict& v) {
  std::string s;
  for (const auto& r : v.reasons) s += r.code + " ";
  return s;
}

bool has_signature(const Verdict& v, const std::string& type) {
  for (const auto& s : v.signatures) {
    if (s.type == type) return true;
  }
  return false;
}

std::string temp_dir() {
  std::string t = "/tmp/diskprobe-safety-XXXXXX";
  REQUIRE(::mkdtemp(t.data()) != nullptr);
  return t;
}

// The preflight in both modes, proving it left the device's first and last MiB alone.
struct Both {
  Verdict write, read;
};
Both check_both(const std::string& dev, uint64_t size) {
  SysRoot root;
  std::string before = testing::edges(dev, size);
  Both b{preflight(root, dev, Mode::Write).verdict, preflight(root, dev, Mode::Read).verdict};
  CHECK(testing::edges(dev, size) == before);
  INFO("write: " << b.write.summary() << "\nread: " << b.read.summary());
  return b;
}

}  // namespace

TEST_CASE("a blank device is safe in both modes, and hold claims it", "[safety]") {
  auto loop = testing::make_loop();
  SysRoot root;
  auto b = check_both(loop.path(), 64 * kMiB);
  CHECK(b.write.safe());
  CHECK(b.read.safe());
  CHECK(b.write.summary() == "safe");
  CHECK(b.write.device == loop.path());
  CHECK(b.write.signatures.empty());

  auto held = preflight(root, loop.name(), Mode::Write, /*hold=*/true);
  INFO(held.verdict.summary());
  REQUIRE(held.verdict.safe());
  REQUIRE(held.hold.valid());
  CHECK(held.device.name == loop.name());
  CHECK(held.device.size_bytes == 64 * kMiB);
  // The held O_EXCL descriptor makes every other writer's preflight see it busy ...
  auto second = preflight(root, loop.path(), Mode::Write);
  INFO(second.verdict.summary());
  CHECK(second.verdict.has(code::kBusy));
  CHECK_FALSE(second.hold.valid());
  // ... and the re-check through it, right before the engine opens the device, passes.
  auto again = diskprobe::safety::recheck(root, held);
  INFO(again.summary());
  CHECK(again.safe());

  auto read_hold = preflight(root, loop.path(), Mode::Read, /*hold=*/true);
  CHECK(read_hold.verdict.safe());
  CHECK_FALSE(read_hold.hold.valid());  // reading claims nothing
}

TEST_CASE("signatures refuse writing, are named in read mode, and the device is untouched", "[safety]") {
  struct Case {
    const char* what;
    uint64_t size_mib;
    std::string make;  // %D is the device
    std::string_view code;
    const char* type;
    std::string undo;  // run after the checks (pvremove)
  };
  const std::string key = "/tmp/diskprobe-safety-key";
  { std::ofstream(key) << "not a secret, a test key"; }
  Guard remove_key([&] { std::filesystem::remove(key); });
  const std::vector<Case> cases = {
      {"ext4", 64, "mkfs.ext4 -F -q %D", code::kSignature, "ext4", ""},
      {"xfs", 320, "mkfs.xfs -f -q %D", code::kSignature, "xfs", ""},
      {"btrfs", 128, "mkfs.btrfs -f -q %D", code::kSignature, "btrfs", ""},
      {"vfat", 64, "mkfs.vfat %D", code::kSignature, "vfat", ""},
      {"inactive swap", 64, "mkswap %D", code::kSignature, "swap", ""},
      {"LUKS2", 64,
       "cryptsetup luksFormat --batch-mode --type luks2 --pbkdf pbkdf2 --pbkdf-force-iterations 1000 "
       "--key-file " +
           key + " %D",
       code::kSignature, "crypto_LUKS", ""},
      {"LVM physical volume", 64, "pvcreate -ff -y -q %D", code::kSignature, "LVM2_member",
       "pvremove -ff -y -q %D"},
      {"empty GPT", 64, "sgdisk -o %D", code::kPartitionTable, "gpt", ""},
      {"empty MBR", 64, "echo 'label: dos' | sfdisk -q %D", code::kPartitionTable, "dos", ""},
      // The primary GPT header (LBA 1) zeroed; the backup at the last LBA is all that is left.
      {"GPT with its primary header zeroed", 64,
       "sgdisk -o %D && dd if=/dev/zero of=%D bs=512 seek=1 count=1 conv=notrunc,fsync status=none",
       code::kPartitionTable, "gpt", ""},
      // Sectors 0-1 zeroed too: no protective MBR, only the backup header.
      {"GPT with only its backup header", 64,
       "sgdisk -o %D && dd if=/dev/zero of=%D bs=512 count=2 conv=notrunc,fsync status=none",
       code::kPartitionTable, "gpt", ""},
      // Both GPT headers zeroed: what is left is the protective MBR, and the partitions' data.
      {"GPT with both headers zeroed", 64,
       "sgdisk -o -n1:0:0 %D && dd if=/dev/zero of=%D bs=512 seek=1 count=1 conv=notrunc,fsync status=none "
       "&& "
       "dd if=/dev/zero of=%D bs=512 seek=131071 count=1 conv=notrunc,fsync status=none",
       code::kPartitionTable, "PMBR", ""},
  };
  for (const auto& c : cases) {
    SECTION(c.what) {
      auto loop = testing::make_loop(c.size_mib * kMiB);
      auto subst = [&](std::string s) {
        for (size_t p; (p = s.find("%D")) != std::string::npos;) s.replace(p, 2, loop.path());
        return s;
      };
      must(subst(c.make));
      Guard undo([&] {
        if (!c.undo.empty()) testing::sh(subst(c.undo));
      });
      auto b = check_both(loop.path(), c.size_mib * kMiB);
      CHECK_FALSE(b.write.safe());
      CHECK(b.write.has(c.code));
      CHECK(has_signature(b.write, c.type));
      CHECK(b.write.summary().find(c.type) != std::string::npos);
      // Reading a device with data on it is allowed; what is there is still reported.
      CHECK(b.read.safe());
      CHECK(has_signature(b.read, c.type));
    }
  }
}

TEST_CASE("ambivalent: ext4 with an old swap magic left in its boot block shows both", "[safety]") {
  auto loop = testing::make_loop();
  // Bytes 2048-4095 of a 4 KiB-block ext4 are unused, so the v0 swap magic at 4086 survives.
  must("mkfs.ext4 -F -q -b 4096 " + loop.path() + " && printf SWAP-SPACE | dd of=" + loop.path() +
       " bs=1 seek=4086 conv=notrunc,fsync status=none");
  auto b = check_both(loop.path(), 64 * kMiB);
  CHECK(has_signature(b.write, "ext4"));
  CHECK(has_signature(b.write, "swap"));
  int sigs = 0;
  for (const auto& r : b.write.reasons) sigs += r.code == code::kSignature;
  CHECK(sigs == 2);
  CHECK(b.read.signatures.size() == 2);
}

TEST_CASE("a GPT with an ext4 partition: partition table and partitions, then mounted", "[safety]") {
  auto loop = testing::make_loop();
  const std::string part = loop.path() + "p1";
  must("sgdisk -o -n1:0:0 " + loop.path());
  must("partx -a " + loop.path());
  Guard drop_parts([&] { testing::sh("partx -d " + loop.path()); });
  for (int i = 0; i < 100 && ::access(part.c_str(), F_OK) != 0; ++i) ::usleep(10000);
  must("mkfs.ext4 -F -q " + part);

  auto b = check_both(loop.path(), 64 * kMiB);
  CHECK(b.write.has(code::kPartitionTable));
  CHECK(b.write.has(code::kHasPartitions));
  CHECK_FALSE(b.write.has(code::kMounted));
  CHECK(b.read.safe());

  SysRoot root;
  auto p = preflight(root, part, Mode::Write).verdict;
  INFO(p.summary());
  CHECK(p.has(code::kSignature));
  CHECK(has_signature(p, "ext4"));

  std::string dir = temp_dir();
  Guard rm_dir([&] { ::rmdir(dir.c_str()); });
  must("mount " + part + " " + dir);
  Guard unmount([&] { testing::sh("umount " + dir); });
  auto m = check_both(loop.path(), 64 * kMiB);
  CHECK(m.write.has(code::kMounted));  // through its partition
  CHECK(m.write.has(code::kBusy));     // the mounted partition claims the whole disk
  CHECK(m.write.summary().find(dir) != std::string::npos);
  CHECK(m.read.has(code::kMounted));
  CHECK_FALSE(m.read.safe());
}

TEST_CASE("a mounted filesystem is refused in both modes", "[safety]") {
  struct Case {
    const char* what;
    const char* mkfs;
    uint64_t size_mib;
  };
  // btrfs shows an anonymous 0:N in mountinfo: it is found through its source.
  const std::vector<Case> cases = {{"ext4", "mkfs.ext4 -F -q", 64}, {"btrfs", "mkfs.btrfs -f -q", 128}};
  for (const auto& c : cases) {
    SECTION(c.what) {
      auto loop = testing::make_loop(c.size_mib * kMiB);
      must(std::string(c.mkfs) + " " + loop.path());
      std::string dir = temp_dir();
      Guard rm_dir([&] { ::rmdir(dir.c_str()); });
      must("mount " + loop.path() + " " + dir);
      Guard unmount([&] { testing::sh("umount " + dir); });
      auto b = check_both(loop.path(), c.size_mib * kMiB);
      CHECK(b.write.has(code::kMounted));
      CHECK(b.write.has(code::kBusy));
      CHECK(b.write.has(code::kSignature));
      CHECK(b.read.has(code::kMounted));
      CHECK_FALSE(b.read.safe());
      CHECK_FALSE(b.read.has(code::kSignature));
    }
  }
}

TEST_CASE("active swap is refused in both modes, and its disk is a system disk", "[safety]") {
  auto loop = testing::make_loop();
  must("mkswap " + loop.path());
  auto swapon = testing::sh("swapon " + loop.path());
  if (swapon.exit_code != 0) {
    WARN("swapon failed here, skipping: " << swapon.err);
    return;
  }
  Guard off([&] { testing::sh("swapoff " + loop.path()); });
  auto b = check_both(loop.path(), 64 * kMiB);
  CHECK(b.write.has(code::kActiveSwap));
  CHECK(b.write.has(code::kBusy));
  CHECK(b.write.has(code::kSystemDisk));
  CHECK(b.read.has(code::kActiveSwap));
  CHECK(b.read.has(code::kSystemDisk));
  CHECK_FALSE(b.read.safe());
}

TEST_CASE("a device another process holds with O_EXCL is busy for writing", "[safety]") {
  auto loop = testing::make_loop();
  int fd = ::open(loop.path().c_str(), O_RDONLY | O_EXCL | O_CLOEXEC);
  REQUIRE(fd >= 0);
  Guard close_fd([&] { ::close(fd); });
  auto b = check_both(loop.path(), 64 * kMiB);
  CHECK(b.write.has(code::kBusy));
  CHECK(b.write.reasons.size() == 1);
  CHECK(b.read.safe());  // reading needs no claim
}

TEST_CASE("another process holding the device O_EXCL makes it busy for writing only", "[safety]") {
  auto loop = testing::make_loop();
  int ready[2], release[2];
  REQUIRE(::pipe2(ready, O_CLOEXEC) == 0);
  REQUIRE(::pipe2(release, O_CLOEXEC) == 0);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(release[1]);  // else the read below never sees the parent close its end
    ::close(ready[0]);
    int fd = ::open(loop.path().c_str(), O_RDONLY | O_EXCL | O_CLOEXEC);
    char c = fd >= 0 ? 'y' : 'n';
    (void)!::write(ready[1], &c, 1);
    (void)!::read(release[0], &c, 1);  // until the parent closes its end
    ::_exit(0);
  }
  ::close(ready[1]);
  ::close(release[0]);
  Guard reap([&] {
    ::close(release[1]);
    int status = 0;
    ::waitpid(pid, &status, 0);
  });
  char c = 0;
  REQUIRE(::read(ready[0], &c, 1) == 1);
  ::close(ready[0]);
  REQUIRE(c == 'y');
  auto b = check_both(loop.path(), 64 * kMiB);
  CHECK(codes(b.write) == "busy ");
  CHECK(b.read.safe());
  auto cli = testing::run_diskprobe({"check", loop.path()});
  CHECK(cli.exit_code == 3);
  CHECK(cli.out.find("busy: " + loop.path() + " is held open exclusively") != std::string::npos);
}

TEST_CASE("a read-only device is refused for writing, fine for reading", "[safety]") {
  auto loop = testing::make_loop(64 * kMiB, /*read_only=*/true);
  auto b = check_both(loop.path(), 64 * kMiB);
  CHECK(b.write.has(code::kReadOnly));
  CHECK(b.write.reasons.size() == 1);
  CHECK(b.read.safe());
}

TEST_CASE("names that are not block devices are refused before anything is opened", "[safety]") {
  SysRoot root;
  std::string dir = temp_dir();
  std::string file = dir + "/regular";
  { std::ofstream(file) << "data"; }
  Guard cleanup([&] { std::filesystem::remove_all(dir); });
  struct Case {
    std::string arg;
    std::string_view code;
  };
  const std::vector<Case> cases = {
      {file, code::kNotBlockDevice},
      {dir, code::kNotBlockDevice},
      {dir + "/missing", code::kNotFound},
      {"/dev/diskprobe-no-such-device", code::kNotFound},
      {"diskprobe-no-such-device", code::kNotFound},
      {"../etc", code::kBadName},
      {"/dev/../etc/passwd", code::kBadName},
      {"", code::kBadName},
  };
  for (const auto& c : cases) {
    for (Mode mode : {Mode::Write, Mode::Read}) {
      auto v = preflight(root, c.arg, mode, true);
      INFO("'" << c.arg << "' " << diskprobe::safety::to_string(mode) << ": " << v.verdict.summary());
      CHECK(v.verdict.has(c.code));
      CHECK(v.verdict.reasons.size() == 1);
      CHECK_FALSE(v.hold.valid());
    }
  }
}

TEST_CASE("the disk holding / is refused as the system disk, never passed", "[safety]") {
  // Found from mountinfo and sysfs only; the test never opens it.
  std::ifstream mi("/proc/self/mountinfo");
  std::string line, devnum;
  while (std::getline(mi, line)) {
    std::istringstream f(line);
    std::string id, parent, majmin, root_dir, mount_point;
    f >> id >> parent >> majmin >> root_dir >> mount_point;
    if (mount_point == "/") devnum = majmin;
  }
  REQUIRE(!devnum.empty());
  std::error_code ec;
  auto sys = std::filesystem::canonical("/sys/dev/block/" + devnum, ec);
  if (ec) {
    WARN("/ is on " << devnum << ", not a block device (a container?): nothing to check");
    return;
  }
  std::string name = sys.filename();
  // The whole disk: a partition's sysfs directory sits inside its disk's.
  std::string disk =
      std::filesystem::exists(sys / "partition") ? sys.parent_path().filename().string() : name;
  SysRoot root;
  for (const std::string& arg : {name, disk, "/dev/" + disk}) {
    for (Mode mode : {Mode::Write, Mode::Read}) {
      auto v = preflight(root, arg, mode, true);
      INFO(arg << " " << diskprobe::safety::to_string(mode) << ": " << v.verdict.summary());
      CHECK(v.verdict.has(code::kSystemDisk));
      CHECK(v.verdict.has(code::kMounted) == (arg == name || arg == "/dev/" + name));
      CHECK_FALSE(v.verdict.safe());
      CHECK_FALSE(v.hold.valid());
    }
  }
}

TEST_CASE("every reason is collected, not only the first", "[safety]") {
  auto loop = testing::make_loop();
  must("mkfs.ext4 -F -q " + loop.path());
  std::string dir = temp_dir();
  Guard rm_dir([&] { ::rmdir(dir.c_str()); });
  must("mount -o ro " + loop.path() + " " + dir);
  Guard unmount([&] { testing::sh("umount " + dir); });
  must("blockdev --setro " + loop.path());
  Guard rw([&] { testing::sh("blockdev --setrw " + loop.path()); });
  auto b = check_both(loop.path(), 64 * kMiB);
  INFO(codes(b.write));
  CHECK(b.write.has(code::kMounted));
  CHECK(b.write.has(code::kBusy));
  CHECK(b.write.has(code::kSignature));
  CHECK(b.write.has(code::kReadOnly));
  CHECK(b.write.reasons.size() == 4);
}
