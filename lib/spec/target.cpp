#include "diskprobe/spec/target.h"

namespace diskprobe {

void read_driver_kind(const SysRoot& root, const std::string& disk, Target& target) {
  const bool known = root.read_sys("block/" + disk + "/dev").ok();
  target.bio_based = known && root.list_sys("block/" + disk + "/mq").empty();
  target.loop_device = known && root.read_sys("block/" + disk + "/loop/backing_file").ok();
}

void read_poll_support(const SysRoot& root, const std::string& disk, Target& target) {
  auto v = root.read_sys("block/" + disk + "/queue/io_poll");
  if (!v) {
    target.io_poll = -1;
    return;
  }
  target.io_poll = *v == "1" ? 1 : 0;
  if (target.io_poll == 1) return;
  target.poll_why = disk + " has no poll queues (/sys/block/" + disk + "/queue/io_poll is 0)";
  if (disk.rfind("nvme", 0) == 0) {
    auto pq = root.read_sys("module/nvme/parameters/poll_queues");
    target.poll_why += ": load the nvme driver with poll_queues=N (now " + (pq ? *pq : std::string("unset")) + ")";
  } else {
    target.poll_why += ": only drivers with poll queues (NVMe with poll_queues=N) can complete polled I/O";
  }
}

}  // namespace diskprobe
