#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "diskprobe/device/block_device.h"
#include "diskprobe/device/loop_device.h"
#include "diskprobe/base/sysroot.h"

using namespace diskprobe;

namespace {
const SysRoot kFixture(std::string(DISKPROBE_FIXTURES) + "/core/sys", std::string(DISKPROBE_FIXTURES) + "/core/proc");
}

TEST_CASE("parse_device_name accepts kernel names and refuses traversal", "[core]") {
  CHECK(*parse_device_name(kFixture, "vdc") == "vdc");
  CHECK(*parse_device_name(kFixture, "nvme0n1") == "nvme0n1");
  struct Bad {
    const char* arg;
    NameError why;
  };
  const Bad bad[] = {{"", NameError::BadName},
                     {"..", NameError::BadName},
                     {"../vda", NameError::BadName},
                     {"vd c", NameError::BadName},
                     {"/dev/../dev/vda", NameError::BadName},
                     {"/dev/diskprobe-no-such-device", NameError::NotFound},
                     {"/etc/passwd", NameError::NotBlockDevice}};
  for (const auto& b : bad) {
    INFO(b.arg);
    NameError why = NameError::None;
    auto r = parse_device_name(kFixture, b.arg, &why);
    CHECK_FALSE(r.ok());
    CHECK(why == b.why);
  }
}

// A path's kernel name comes from dev/block/MAJ:MIN under the SysRoot, not from the host's
// /sys: a node of the host is looked up in a tree made here, which names it otherwise.
TEST_CASE("parse_device_name reads a path's kernel name through the SysRoot", "[core]") {
  namespace fs = std::filesystem;
  std::string node;
  struct stat st {};
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/dev", ec)) {  // stat(2) only: nothing is opened
    if (::stat(e.path().c_str(), &st) == 0 && S_ISBLK(st.st_mode)) {
      node = e.path().string();
      break;
    }
  }
  if (node.empty()) {
    WARN("no block device node in /dev: test skipped");
    return;
  }
  char tmpl[] = "/var/tmp/diskprobe-sysroot-XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  const fs::path sys = fs::path(tmpl) / "sys";
  fs::create_directories(sys / "devices/virtual/block/renamed0");
  fs::create_directories(sys / "dev/block");
  const std::string majmin = std::to_string(major(st.st_rdev)) + ":" + std::to_string(minor(st.st_rdev));
  fs::create_directory_symlink("../../devices/virtual/block/renamed0", sys / "dev/block" / majmin);
  const SysRoot root(sys.string(), (fs::path(tmpl) / "proc").string());
  auto name = parse_device_name(root, node);
  fs::remove_all(tmpl);
  INFO(node << " is " << majmin);
  REQUIRE(name.ok());
  CHECK(*name == "renamed0");
}

TEST_CASE("read_block_device reads a disk and its partition from a sysfs tree", "[core]") {
  auto vdc = read_block_device(kFixture, "vdc");
  REQUIRE(vdc.ok());
  CHECK(vdc->path == "/dev/vdc");
  CHECK(vdc->major == 254);
  CHECK(vdc->minor == 32);
  CHECK(vdc->size_bytes == 2097152ull * 512);
  CHECK(vdc->logical_block_size == 4096);
  CHECK_FALSE(vdc->is_partition);
  CHECK(vdc->disk == "vdc");
  CHECK(vdc->partitions == std::vector<std::string>{"vdc1"});
  CHECK(vdc->holders.empty());
  CHECK(vdc->serial == "vol-0abc123");

  auto part = read_block_device(kFixture, "vdc1");
  REQUIRE(part.ok());
  CHECK(part->is_partition);
  CHECK(part->disk == "vdc");
  CHECK(part->logical_block_size == 4096);  // from the disk's queue

  auto missing = read_block_device(kFixture, "vdz");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().find("no block device named vdz") != std::string::npos);

  CHECK(list_disks(kFixture) == std::vector<std::string>{"loop0", "vdc"});
}

TEST_CASE("disk counters parse /sys/block/X/stat and refuse a short line", "[core]") {
  auto vdc = read_block_device(kFixture, "vdc");
  REQUIRE(vdc.ok());
  auto c = read_disk_counters(kFixture, *vdc);
  REQUIRE(c.ok());
  CHECK(c->read_ios == 51120);
  CHECK(c->write_ios == 1102570);
  CHECK(c->write_ticks_ms == 26754);
  CHECK(c->io_ticks_ms == 25568);

  DiskCounters after = *c;
  after.write_ios += 1000;
  after.io_ticks_ms += 500;
  after.read_at_ns = c->read_at_ns + 1'000'000'000;
  auto d = disk_stats_delta(*c, after);
  CHECK(d.valid);
  CHECK(d.write_ios == 1000);
  CHECK(d.util_percent == Approx(50.0));

  auto part = read_block_device(kFixture, "vdc1");
  REQUIRE(part.ok());
  auto bad = read_disk_counters(kFixture, *part);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().find("expected at least 11 fields") != std::string::npos);
}

// util was io_ticks over the measured runtime, but the counters are read before the settle
// and ramp and after the drain and verify pass: fio divides by the time between its reads.
TEST_CASE("disk util is io_ticks over the time between the two readings", "[core]") {
  DiskCounters before, after;
  before.read_at_ns = 5'000'000'000;
  after.read_at_ns = 17'000'000'000;  // 12 s later: a 10 s run, its ramp, settle and drain
  before.io_ticks_ms = 1000;
  after.io_ticks_ms = 7000;
  before.write_ios = 10;
  after.write_ios = 60010;
  DiskStats d = disk_stats_delta(before, after);
  CHECK(d.valid);
  CHECK(d.span_s == Approx(12.0));
  CHECK(d.util_percent == Approx(50.0));  // 6 s busy of 12, not 6 of the 10 measured
  CHECK(d.write_ios == 60000);            // every I/O between the readings, the ramp's too

  SECTION("busier than the span (the kernel's ticks are coarse): 100%") {
    after.io_ticks_ms = 14000;
    CHECK(disk_stats_delta(before, after).util_percent == 100.0);
  }
  SECTION("no time between the readings: no util, never a division by 0") {
    after.read_at_ns = before.read_at_ns;
    DiskStats same = disk_stats_delta(before, after);
    CHECK(same.util_percent == 0.0);
    CHECK(same.span_s == 0.0);
  }
}

TEST_CASE("each reading of the disk counters carries when it was taken", "[core]") {
  auto vdc = read_block_device(kFixture, "vdc");
  REQUIRE(vdc.ok());
  auto first = read_disk_counters(kFixture, *vdc);
  auto second = read_disk_counters(kFixture, *vdc);
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  CHECK(first->read_at_ns > 0);
  CHECK(second->read_at_ns >= first->read_at_ns);
}

TEST_CASE("SysRoot joins paths under its roots and trims values", "[core]") {
  SysRoot r("/x/sys/", "/y/proc");
  CHECK(r.sys_path("block/vda") == "/x/sys/block/vda");
  CHECK(r.proc_path("interrupts") == "/y/proc/interrupts");
  CHECK(trim("  2\n") == "2");
  auto missing = kFixture.read_sys("class/block/vdc/no-such-attribute");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().find("no-such-attribute") != std::string::npos);
}
