// A write run changes no byte outside its region: the device is filled with a known pattern,
// the bytes outside the region are read before and after the run (and its zeroing), and must
// be the same; and a run's own data passes the next `check --paranoid`, for split bs too.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness.h"

namespace {

using testing::must;

constexpr uint64_t kKiB = 1ull << 10;
constexpr uint64_t kMiB = 1ull << 20;

// The page cache dropped first, so what is read is what the device holds.
std::string device_bytes(const std::string& dev, uint64_t offset, uint64_t len) {
  must("blockdev --flushbufs " + dev);
  return testing::read_bytes(dev, offset, len);
}

size_t digest(const std::string& dev, uint64_t size, uint64_t start, uint64_t end) {
  return std::hash<std::string>{}(device_bytes(dev, 0, start)) ^
         (std::hash<std::string>{}(device_bytes(dev, end, size - end)) * 31);
}

bool all_zero(const std::string& s) { return s.find_first_not_of('\0') == std::string::npos; }

// One sequential pass over the region, host tuning left alone (other tests share the host).
testing::CommandResult write_pass(const std::string& dev, const std::vector<std::string>& extra) {
  std::vector<std::string> args{"run",   "--profile",     "essd-plx-iops", dev,         "--no-tune", "--numjobs",
                                "1",     "--iodepth",     "16",            "--rw",      "write",     "--time_based",
                                "false", "--runtime",     "0",             "--allow-nonzero"};
  args.insert(args.end(), extra.begin(), extra.end());
  return testing::run_diskprobe(args);
}

struct Case {
  const char* what;
  uint64_t device;
  std::vector<std::string> args;
  uint64_t start, end;  // the region as the run should resolve it
};

}  // namespace

TEST_CASE("no byte outside the region changes: percent and byte regions, split bs, both ends, odd sizes",
          "[region]") {
  const uint64_t m256 = 256 * kMiB, odd = 64 * kMiB + 3 * 512;
  const Case cases[] = {
      // The reported case: the device's first and last 4 MiB were zeroed.
      {"run --offset 25% --size 50% zeroed the first and last 4 MiB", m256, {"--bs", "4k", "--offset", "25%", "--size", "50%"},
       64 * kMiB, 192 * kMiB},
      {"percent region touching the end", 64 * kMiB, {"--bs", "64k", "--offset", "50%", "--size", "50%"}, 32 * kMiB,
       64 * kMiB},
      {"byte region touching the start", 64 * kMiB, {"--bs", "4k", "--size", std::to_string(8 * kMiB)}, 0, 8 * kMiB},
      {"byte region in the first 4 MiB's tail", 64 * kMiB,
       {"--bs", "4k", "--offset", std::to_string(2 * kMiB), "--size", std::to_string(6 * kMiB)}, 2 * kMiB, 8 * kMiB},
      {"split bs 4k,16k from 4096 to the end", 64 * kMiB, {"--bs", "4k,16k", "--offset", "4096"}, 4096, 64 * kMiB},
      {"split bs 4k,1020k, percent region in the middle", 64 * kMiB, {"--bs", "4k,1020k", "--offset", "10%", "--size", "80%"},
       6709248, 6709248 + 53687091},  // 10% aligned down to 4k; 80% in bytes
      {"odd device size, odd byte offset, to the end", odd, {"--bs", "4k", "--offset", "12800"}, 12800, odd},
      {"odd device size, percent region touching the end", odd, {"--bs", "16k", "--offset", "75%", "--size", "25%"},
       50331648, odd},  // 75% aligned down to 16k
  };
  for (const auto& c : cases) {
    SECTION(c.what) {
      auto loop = testing::make_loop(c.device);
      const std::string dev = loop.path();
      must("yes 'bytes outside the region' | head -c " + std::to_string(c.device) + " > " + dev + " && sync");
      const size_t before = digest(dev, c.device, c.start, c.end);
      auto r = write_pass(dev, c.args);
      INFO(r.out << r.err);
      REQUIRE(r.exit_code == 0);
      CHECK(digest(dev, c.device, c.start, c.end) == before);
      // The run wrote its region, and zeroed the device's edges only inside it.
      CHECK(device_bytes(dev, c.start, 4096).find("outside") == std::string::npos);
      if (c.start < 4 * kMiB) CHECK(all_zero(device_bytes(dev, c.start, 4 * kMiB - c.start)));
      if (c.start >= 4 * kMiB && c.end <= c.device - 4 * kMiB) {
        CHECK(r.err.find("nothing to zero") != std::string::npos);
      }
    }
  }
}

// The zeroing rounded to the read size and cut write blocks: their rest had no header, and
// the next check --paranoid refused the device as foreign data. The write blocks across the
// 4 MiB edges must be zeroed whole.
TEST_CASE("split bs: zeroing rounded to the read size (bs 4k,1020k; bs 4k,16k offset 4096); check paranoid passes",
          "[region]") {
  const uint64_t size = 64 * kMiB;
  struct Split {
    std::vector<std::string> args;
    uint64_t offset, write_bs;
  };
  const Split cases[] = {
      {{"--bs", "4k,1020k"}, 0, 1020 * kKiB},
      {{"--bs", "4k,16k", "--offset", "4096"}, 4096, 16 * kKiB},
      {{"--bs", "4k,12k", "--offset", "50%"}, 32 * kMiB, 12 * kKiB},
  };
  for (const auto& c : cases) {
    SECTION(c.args[1] + (c.args.size() > 2 ? " --offset " + c.args[3] : "")) {
      auto loop = testing::make_loop(size);
      const std::string dev = loop.path();
      auto r = write_pass(dev, c.args);
      INFO(r.out << r.err);
      REQUIRE(r.exit_code == 0);
      for (uint64_t edge : {4 * kMiB, size - 4 * kMiB}) {
        if (edge < c.offset) continue;
        uint64_t block = c.offset + (edge - c.offset) / c.write_bs * c.write_bs;
        INFO("the write block at " << block << " across " << edge);
        CHECK(all_zero(device_bytes(dev, block, c.write_bs)));
      }
      auto check = testing::run_diskprobe({"check", dev, "--paranoid", "--json"});
      INFO(check.out << check.err);
      CHECK(check.exit_code == 0);
      CHECK(nlohmann::json::parse(check.out)["sampler"]["foreign_offsets_bytes"].empty());
    }
  }
}

// The zeroing wrote through the page cache, which wrote back a bio per 4 KiB page; a device
// throttled per I/O counts bios, so at 50 write IOPS zeroing 4 MiB took 20 s. The cgroup's
// blkio.throttle.io_serviced counts the bios diskprobe sent (a limit is not needed to count):
// less the run's own writes, the zeroing's. A 1 MiB write of pages scattered in memory is two
// bios on a loop device (128 segments a bio), so the bound is 64 KiB a bio, against 4 KiB.
TEST_CASE("zeroing the edges writes 1 MiB at a time, not a bio per 4 KiB page (throttled volumes)", "[region][zero]") {
  if (!std::filesystem::exists("/sys/fs/cgroup/blkio/blkio.throttle.io_serviced")) {
    WARN("SKIP: cgroup v1 blkio is not mounted at /sys/fs/cgroup/blkio");
    return;
  }
  struct Zero {
    const char* what;
    std::vector<std::string> args;
    uint64_t zeroed;  // bytes the run's zeroing covers
  };
  const Zero cases[] = {
      {"whole device: both edges", {}, 8 * kMiB},
      {"first 8 MiB: the head only", {"--size", "8M"}, 4 * kMiB},
      {"bs 16k from offset 4096", {"--bs", "16k", "--offset", "4096"}, 8 * kMiB},
  };
  for (const auto& c : cases) {
    SECTION(c.what) {
      auto loop = testing::make_loop(64 * kMiB);
      testing::BlkioCgroup cg("diskprobe-region-zero-" + std::to_string(::getpid()));
      const std::string devno = testing::dev_numbers(loop.path());
      auto writes = [&] { return cg.serviced(devno, "Write"); };
      std::vector<std::string> args{"run",          "--profile", "essd-plx-iops", loop.path(), "--no-tune",
                                    "--numjobs",    "1",         "--iodepth",     "16",        "--rw",
                                    "write",        "--time_based", "false",      "--runtime", "0",
                                    "--allow-nonzero", "--output-format", "json"};
      args.insert(args.end(), c.args.begin(), c.args.end());
      std::string line = std::string(DISKPROBE_BIN);
      for (const auto& a : args) line += " '" + a + "'";
      const uint64_t before = writes();
      auto r = testing::sh(cg.run_inside(line));
      INFO(line << "\n" << r.err);
      REQUIRE(r.exit_code == 0);
      const uint64_t run_writes = nlohmann::json::parse(r.out)["write"]["ios"].get<uint64_t>();
      const uint64_t zeroing = writes() - before - run_writes;
      INFO("the run wrote " << run_writes << " times; the zeroing " << zeroing << " for " << c.zeroed << " bytes");
      CHECK(r.err.find("zeroed the first") != std::string::npos);
      CHECK(zeroing >= c.zeroed / kMiB);
      CHECK(zeroing <= c.zeroed / (64 * kKiB));
    }
  }
}
