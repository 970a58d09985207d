// Fidelity: what diskprobe reports against what the kernel saw or enforced, on loop devices
// the test makes. These check that the numbers are true, never how fast anything is.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
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
      // loop submits one I/O per call at first by default (iodepth_batch_submit=auto): the batched way,
      // and chunks that do not divide the depth, counted the same.
      {"time_based, 2 jobs x QD16, every free slot at once",
       {"--numjobs", "2", "--iodepth", "16", "--runtime", "2", "--offset", "8M", "--size", "128M",
        "--iodepth_batch_submit", "0"}},
      {"size-bounded 64 MiB, QD7 in chunks of 3",
       {"--numjobs", "1", "--iodepth", "7", "--iodepth_batch_submit", "3", "--offset", "8M", "--size", "64M",
        "--time_based", "false", "--runtime", "0"}},
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

// blk-throttle holds a 16k read for 2 s at 8 KiB/s, so the ramp's I/Os are still held when it
// ends and the first completion after it comes more than a second late (or, with no ramp, 2 s
// into the run). The window opens at that completion; its deadline was the planned ramp end +
// runtime, so such a window lost whole seconds (an 8 s run once counted 7 samples at load):
// now it runs its runtime from its opening, as fio's does. Not a rate check (the rates here
// are 0.5 to 2 I/Os a second): what is exact whatever the device's pace.
TEST_CASE(
    "per-second samples: one per second of the window, adding up to the total, when the first "
    "completion after the ramp is late",
    "[fidelity][window]") {
  if (!fs::exists("/sys/fs/cgroup/blkio/blkio.throttle.read_bps_device")) {
    WARN("SKIP: cgroup v1 blkio with throttling is not mounted at /sys/fs/cgroup/blkio");
    return;
  }
  struct Case {
    const char* what;
    uint64_t read_bps;
    int iodepth, numjobs;
    double ramp, runtime;  // runtime 0: size-bounded, io_size 64k
  };
  const Case cases[] = {
      {"QD1, a 0.5 s ramp, each I/O held 2 s", 8192, 1, 1, 0.5, 3},
      {"QD1, no ramp, each I/O held 2 s", 8192, 1, 1, 0, 3},
      {"QD2, a 0.5 s ramp, each I/O held 2 s", 8192, 2, 1, 0.5, 3},
      {"2 jobs sharing the throttle, a 0.5 s ramp", 16384, 1, 2, 0.5, 3},
      {"size-bounded: io_size 64k, no ramp", 32768, 1, 1, 0, 0},
  };
  for (const auto& c : cases) {
    DYNAMIC_SECTION(c.what) {
      auto loop = testing::make_loop(32ull << 20);
      // The preflight's own buffered reads then come from the page cache, not through the
      // throttle (at 8 KiB/s they would take minutes).
      testing::must("dd if=" + loop.path() + " of=/dev/null bs=1M status=none");
      testing::BlkioCgroup cg("diskprobe-window-" + std::to_string(::getpid()));
      cg.set("blkio.throttle.read_bps_device",
             testing::dev_numbers(loop.path()) + " " + std::to_string(c.read_bps));
      char workload[160];
      std::snprintf(workload, sizeof workload, " --iodepth %d --numjobs %d --ramp_time %g --runtime %g%s",
                    c.iodepth, c.numjobs, c.ramp, c.runtime,
                    c.runtime > 0 ? "" : " --time_based 0 --io_size 64k");
      const std::string line =
          std::string(DISKPROBE_BIN) + " run --profile essd-plx-iops " + loop.path() +
          " --no-tune --rw randread --bs 16k --offset 8M --size 16M --output-format json" + workload;
      auto r = testing::sh(cg.run_inside(line));
      INFO(line << "\n" << r.err);
      REQUIRE(r.exit_code == 0);
      auto j = json::parse(r.out);
      std::printf("window: %-44s runtime %.2f s, samples %s\n", c.what, j["runtime_s"].get<double>(),
                  j["read"]["iops_samples"].dump().c_str());
      INFO(j.dump());
      const json& d = j["read"];
      auto samples = d["iops_samples"].get<std::vector<uint64_t>>();
      const uint64_t sum = std::accumulate(samples.begin(), samples.end(), uint64_t{0});
      if (c.runtime > 0) {
        CHECK(samples.size() == static_cast<size_t>(c.runtime));
        CHECK(sum == d["ios"].get<uint64_t>());
        // Each job's window its whole runtime, however late it opened (the group's samples are
        // the jobs' added up: a short window of one job hid behind the other's).
        for (const auto& job : j["jobs"]) CHECK(job["runtime_s"].get<double>() >= c.runtime);
      } else {  // size-bounded: the whole seconds up to its last completion, not its partial last
        CHECK(samples.size() == static_cast<size_t>(j["runtime_s"].get<double>() + 0.01));
        CHECK(sum <= d["ios"].get<uint64_t>());
      }
      if (c.runtime == 0) CHECK(j["read"]["ios"].get<uint64_t>() == 4);  // every I/O: no ramp, no deadline
    }
  }
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
