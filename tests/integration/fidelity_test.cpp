// Fidelity: what diskprobe reports against what the kernel saw or enforced, on loop devices
// the test makes. These check that the numbers are true, never how fast anything is.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "diskprobe/device/block_header.h"
#include "harness.h"

namespace fs = std::filesystem;
using nlohmann::json;
using testing::run_diskprobe;

namespace {

// /sys/block/X/stat: the fields this test needs, after checking the line has at least the
// eleven fields every kernel since 2.6 prints (fio's diskutil.c checks the same).
struct KernelStat {
  uint64_t read_ios = 0, read_merges = 0, write_ios = 0, write_merges = 0;
};

KernelStat kernel_stat(const std::string& name) {
  std::istringstream in(testing::read_sysfs("/sys/block/" + name + "/stat"));
  std::vector<uint64_t> f;
  uint64_t v;
  while (in >> v) f.push_back(v);
  REQUIRE(f.size() >= 11);
  return {f[0], f[1], f[4], f[5]};
}

json run_json(const std::vector<std::string>& args) {
  auto r = run_diskprobe(args);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return json::parse(r.out);
}

struct FreeDeleter {
  void operator()(uint8_t* p) const { std::free(p); }
};

// Every block of the device, read with O_DIRECT so no page cache from the preflight's own
// buffered probe can answer in the device's place.
std::vector<uint8_t> read_device(const std::string& dev_path, uint64_t size) {
  int fd = ::open(dev_path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
  REQUIRE(fd >= 0);
  void* mem = nullptr;
  REQUIRE(::posix_memalign(&mem, 4096, size) == 0);
  std::unique_ptr<uint8_t, FreeDeleter> buf(static_cast<uint8_t*>(mem));
  uint64_t done = 0;
  while (done < size) {
    ssize_t n = ::pread(fd, buf.get() + done, size - done, static_cast<off_t>(done));
    if (n <= 0) break;
    done += static_cast<uint64_t>(n);
  }
  ::close(fd);
  REQUIRE(done == size);
  return {buf.get(), buf.get() + size};
}

}  // namespace

TEST_CASE("completed writes equal the kernel's /sys/block/X/stat delta within 0.5%", "[fidelity]") {
  // Writes only: the preflight's own libblkid probe reads the device, but never writes it.
  // The region keeps clear of the first and last 4 MiB, which a write run zeroes afterwards
  // (safety): those writes are the kernel's too, but not the workload's.
  struct Case {
    const char* what;
    std::vector<std::string> workload;
  };
  const Case cases[] = {
      {"time_based, 2 jobs x QD16", {"--numjobs", "2", "--iodepth", "16", "--runtime", "2", "--offset", "8M", "--size", "128M"}},
      {"size-bounded 64 MiB, QD8",
       {"--numjobs", "1", "--iodepth", "8", "--offset", "8M", "--size", "64M", "--time_based", "false", "--runtime",
        "0"}},
  };
  for (const auto& c : cases) {
    SECTION(c.what) {
      auto loop = testing::make_loop(256ull << 20);
      testing::sh("udevadm settle");  // udev's own probe of the new device is done before "before"
      std::vector<std::string> args = {"run", "--profile", "essd-plx-iops", loop.path(), "--no-tune",
                                       "--output-format", "json"};
      args.insert(args.end(), c.workload.begin(), c.workload.end());
      auto before = kernel_stat(loop.name());
      auto j = run_json(args);
      auto after = kernel_stat(loop.name());

      auto reported = j["write"]["ios"].get<uint64_t>();
      // A merged bio is one request plus one merge; diskprobe counts bios.
      uint64_t kernel = (after.write_ios + after.write_merges) - (before.write_ios + before.write_merges);
      INFO("diskprobe " << reported << ", kernel " << kernel);
      REQUIRE(reported > 0);
      CHECK(std::abs(static_cast<double>(reported) - static_cast<double>(kernel)) <=
            0.005 * static_cast<double>(kernel));
      if (std::string(c.what).rfind("size", 0) == 0) CHECK(reported == (64ull << 20) / 4096);
    }
  }
}

TEST_CASE("reported IOPS on a loop device throttled to 5000 write IOPS is within 1% of 5000", "[fidelity]") {
  if (!fs::exists("/sys/fs/cgroup/blkio/blkio.throttle.write_iops_device")) {
    WARN("SKIP: cgroup v1 blkio with throttling is not mounted at /sys/fs/cgroup/blkio; "
         "this check needs blkio.throttle.write_iops_device");
    return;
  }
  auto loop = testing::make_loop(256ull << 20);
  testing::BlkioCgroup cg("diskprobe-fidelity-" + std::to_string(::getpid()));
  cg.set("blkio.throttle.write_iops_device", testing::dev_numbers(loop.path()) + " 5000");

  // ramp_time: the figure of a run with ramp; fidelity_fio_test has the runs without.
  std::string line = cg.run_inside(std::string(DISKPROBE_BIN) + " run --profile essd-plx-iops " + loop.path() +
                                   " --no-tune --numjobs 2 --iodepth 16 --ramp_time 1 --runtime 5 --output-format json");
  auto r = testing::sh(line);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto j = json::parse(r.out);
  double iops = j["write"]["iops"].get<double>();
  INFO("reported " << iops << " IOPS");
  CHECK(iops >= 4950.0);
  CHECK(iops <= 5050.0);
}

TEST_CASE("a size-bounded randwrite with the random map touches every block exactly once", "[fidelity]") {
  // An 8 MiB region in the middle of a 32 MiB device: clear of the edges a write run zeroes.
  constexpr uint64_t kSize = 8ull << 20;
  constexpr uint64_t kStart = 8ull << 20;
  constexpr uint64_t kBs = 4096;
  auto loop = testing::make_loop(32ull << 20);
  auto j = run_json({"run", "--profile", "essd-plx-iops", loop.path(), "--no-tune", "--numjobs", "1",
                     "--iodepth", "8", "--offset", "8M", "--size", "8M", "--time_based", "false", "--runtime", "0",
                     "--output-format", "json"});
  REQUIRE(j["write"]["ios"].get<uint64_t>() == kSize / kBs);

  auto all = read_device(loop.path(), 32ull << 20);
  std::vector<uint8_t> data(all.begin() + kStart, all.begin() + kStart + kSize);
  std::map<uint64_t, uint64_t> seqs;  // seq -> blocks carrying it
  uint64_t wrong_offset = 0, no_header = 0;
  for (uint64_t off = 0; off < kSize; off += kBs) {
    auto h = diskprobe::decode_block_header(data.data() + off, kBs);
    if (!h) {
      ++no_header;
      continue;
    }
    if (h->offset != kStart + off) ++wrong_offset;
    seqs[h->seq]++;
  }
  INFO(no_header << " blocks never written, " << wrong_offset << " with another block's offset");
  CHECK(no_header == 0);
  CHECK(wrong_offset == 0);
  // One job writes seq 1..N; a block written twice would have lost an earlier seq.
  REQUIRE(seqs.size() == kSize / kBs);
  CHECK(seqs.begin()->first == 1);
  CHECK(seqs.rbegin()->first == kSize / kBs);
  for (const auto& [seq, n] : seqs) {
    if (n != 1) FAIL_CHECK("seq " << seq << " found in " << n << " blocks");
  }
}
