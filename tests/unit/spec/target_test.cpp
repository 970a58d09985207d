// The device facts the engine plans by, read from a sysfs tree made here: a loop device (the
// engine submits its random I/O one per call), a bio-based zram (force_async=auto probes it),
// a virtio disk (neither), and a name with no device behind it.
#include <catch2/catch.hpp>

#include "diskprobe/spec/target.h"
#include "fake_sys.h"

using namespace diskprobe;

TEST_CASE("read_driver_kind: loop/ makes a loop device, no mq/ a bio-based one, a missing disk neither",
          "[spec]") {
  spec_fixtures::FakeSys t;
  t.file("sys/block/loop3/dev", "7:3");
  t.file("sys/block/loop3/mq/0/cpu_list", "0, 1");
  t.file("sys/block/loop3/loop/backing_file", "/var/tmp/backing");
  t.file("sys/block/loop4/dev", "7:4");  // unbound: no loop/ attributes
  t.file("sys/block/loop4/mq/0/cpu_list", "0, 1");
  t.file("sys/block/zram1/dev", "252:1");
  t.file("sys/block/vdc/dev", "254:32");
  t.file("sys/block/vdc/mq/0/cpu_list", "0");
  const SysRoot root = t.root();
  struct Case {
    const char* disk;
    bool loop, bio;
  } cases[] = {{"loop3", true, false}, {"loop4", false, false}, {"zram1", false, true},
               {"vdc", false, false},  {"nvme9n1", false, false}};
  for (const auto& c : cases) {
    INFO(c.disk);
    Target target;
    read_driver_kind(root, c.disk, target);
    CHECK(target.loop_device == c.loop);
    CHECK(target.bio_based == c.bio);
  }
}
