// Real I/O without root: regular files in /var/tmp (ext4 and xfs take O_DIRECT; tmpfs may not).
#include <fcntl.h>
#include <liburing.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <filesystem>

#include "diskprobe/engine/engine.h"
#include "engine_fixtures.h"

using namespace diskprobe;
using engine_fixtures::TempFile;
using Catch::Matchers::Contains;

namespace {

JobSpec quick_spec(RwMode rw) {
  JobSpec s;
  s.name = "engine-test";
  s.rw = rw;
  s.bs = 4096;
  s.iodepth = 4;
  s.numjobs = 1;
  s.runtime_s = 0.5;
  s.time_based = true;
  s.direct = true;
  return s;
}

void check_consistent(const DirectionStats& d, uint32_t bs) {
  CHECK(d.bytes == d.ios * bs);
  CHECK(d.slat.count() == d.ios);
  CHECK(d.clat.count() == d.ios);
  CHECK(d.lat.count() == d.ios);
  uint64_t per_second = std::accumulate(d.ios_per_second.begin(), d.ios_per_second.end(), uint64_t{0});
  CHECK(per_second == d.ios);
  if (d.ios) {
    CHECK(d.lat.min() > 0);
    CHECK(d.lat.max() >= d.clat.max());
  }
}

}  // namespace

TEST_CASE("engine: randwrite, time_based 0.5 s, iodepth 4, O_DIRECT") {
  SKIP_WITHOUT_URING();
  TempFile file(64 << 20);
  auto spec = quick_spec(RwMode::RandWrite);
  auto r = run_jobs(spec, file.target(), EngineOptions{});
  INFO((r.ok() ? std::string() : r.error()));
  REQUIRE(r.ok());
  CHECK(r->write.ios > 0);
  CHECK(r->read.ios == 0);
  CHECK(r->errors.count == 0);
  CHECK(r->errors.short_ios == 0);
  check_consistent(r->write, spec.bs);
  CHECK(r->runtime_s >= 0.4);  // opens at the first completion: later on a busy machine
  CHECK(r->runtime_s < 1.5);
  REQUIRE(r->jobs.size() == 1);
  CHECK(r->jobs[0].cpu == -1);
  CHECK(r->started_at.size() == 20);  // 2024-01-02T03:04:05Z
  CHECK(r->started_at.back() == 'Z');
  CHECK_FALSE(r->interrupted);
  CHECK(r->cpu.user_s + r->cpu.sys_s > 0);
}

TEST_CASE("engine: a size-based sequential write of 1 MiB in 4k blocks is exactly 256 I/Os") {
  SKIP_WITHOUT_URING();
  TempFile file(1 << 20);
  auto spec = quick_spec(RwMode::Write);
  spec.time_based = false;
  spec.runtime_s = 0;
  auto r = run_jobs(spec, file.target(), EngineOptions{});
  REQUIRE(r.ok());
  CHECK(r->write.ios == 256);
  CHECK(r->write.bytes == 1 << 20);
  CHECK(r->errors.count == 0);
  check_consistent(r->write, spec.bs);
}

TEST_CASE("engine: every written block starts with DSKPROBE and its offset") {
  SKIP_WITHOUT_URING();
  TempFile file(1 << 20);
  auto spec = quick_spec(RwMode::Write);
  spec.time_based = false;
  spec.runtime_s = 0;
  spec.offset = 64 << 10;  // a region that starts inside the file
  spec.size = 256 << 10;
  REQUIRE(run_jobs(spec, file.target(), EngineOptions{}).ok());
  auto data = file.read_all();
  for (uint64_t off = 0; off < data.size(); off += spec.bs) {
    INFO("offset " << off);
    bool in_region = off >= spec.offset && off < spec.offset + spec.size;
    bool has_magic = std::memcmp(data.data() + off, kBlockMagic, 8) == 0;
    REQUIRE(has_magic == in_region);
    if (!in_region) continue;
    auto h = decode_block_header(data.data() + off, spec.bs);
    REQUIRE(h);
    REQUIRE(h->offset == off);
    REQUIRE(h->device_id == file.target().device_id);
    REQUIRE(h->seq >= 1);
    // The rest is random data, not zeros (incompressible).
    REQUIRE(std::count(data.begin() + static_cast<ptrdiff_t>(off + 16),
                       data.begin() + static_cast<ptrdiff_t>(off + spec.bs), 0) < 64);
  }
}

TEST_CASE("engine: refill_buffers writes fresh data each time") {
  SKIP_WITHOUT_URING();
  TempFile file(1 << 20);
  auto spec = quick_spec(RwMode::Write);
  spec.time_based = false;
  spec.runtime_s = 0;
  spec.iodepth = 1;  // one buffer: without refill every block would carry the same payload
  spec.refill_buffers = true;
  REQUIRE(run_jobs(spec, file.target(), EngineOptions{}).ok());
  auto data = file.read_all();
  CHECK(std::memcmp(data.data() + 16, data.data() + 4096 + 16, 4096 - 16) != 0);
  CHECK(std::memcmp(data.data() + 4096 + 16, data.data() + 8192 + 16, 4096 - 16) != 0);
}

TEST_CASE("engine: randread of a file") {
  SKIP_WITHOUT_URING();
  TempFile file(16 << 20);
  auto spec = quick_spec(RwMode::RandRead);
  spec.runtime_s = 0.3;
  auto r = run_jobs(spec, file.target(), EngineOptions{});
  REQUIRE(r.ok());
  CHECK(r->read.ios > 0);
  CHECK(r->write.ios == 0);
  CHECK(r->errors.count == 0);
  check_consistent(r->read, spec.bs);
  // Nothing was written: the file is still all zeros.
  auto data = file.read_all();
  CHECK(std::count(data.begin(), data.end(), 0) == static_cast<ptrdiff_t>(data.size()));
}

TEST_CASE("engine: randrw splits reads and writes by rwmixread") {
  SKIP_WITHOUT_URING();
  TempFile file(16 << 20);
  auto spec = quick_spec(RwMode::RandRW);
  spec.rwmixread = 70;
  spec.time_based = false;
  spec.runtime_s = 0;
  spec.size = 8 << 20;  // 2048 I/Os
  auto r = run_jobs(spec, file.target(), EngineOptions{});
  REQUIRE(r.ok());
  uint64_t total = r->read.ios + r->write.ios;
  CHECK(total == 2048);
  double reads = static_cast<double>(r->read.ios) / static_cast<double>(total);
  CHECK(reads > 0.64);
  CHECK(reads < 0.76);
  check_consistent(r->read, spec.bs);
  check_consistent(r->write, spec.bs);
}

TEST_CASE("engine: the sync engine does the same work with pread/pwrite") {
  TempFile file(1 << 20);
  auto spec = quick_spec(RwMode::Write);
  spec.engine = EngineKind::Sync;
  spec.iodepth = 8;  // forced to 1
  spec.time_based = false;
  spec.runtime_s = 0;
  spec.size = 64 << 10;
  auto r = run_jobs(spec, file.target(), EngineOptions{});
  REQUIRE(r.ok());
  CHECK(r->write.ios == 16);
  CHECK(r->write.slat.max() == 0);
  CHECK(r->write.clat.count() == 16);
  check_consistent(r->write, spec.bs);
  auto data = file.read_all();
  CHECK(std::memcmp(data.data() + 4096, kBlockMagic, 8) == 0);
}

TEST_CASE("engine: numjobs 2 gives two jobs whose sums are the aggregate") {
  SKIP_WITHOUT_URING();
  TempFile file(32 << 20);
  auto spec = quick_spec(RwMode::RandWrite);
  spec.numjobs = 2;
  spec.runtime_s = 0.4;
  auto r = run_jobs(spec, file.target(), EngineOptions{});
  REQUIRE(r.ok());
  REQUIRE(r->jobs.size() == 2);
  CHECK(r->jobs[0].job == 0);
  CHECK(r->jobs[1].job == 1);
  const auto& a = r->jobs[0].write;
  const auto& b = r->jobs[1].write;
  CHECK(a.ios > 0);
  CHECK(b.ios > 0);
  CHECK(a.ios + b.ios == r->write.ios);
  CHECK(a.bytes + b.bytes == r->write.bytes);
  CHECK(a.lat.count() + b.lat.count() == r->write.lat.count());
  CHECK(std::max(a.lat.max(), b.lat.max()) == r->write.lat.max());
  CHECK(std::min(a.clat.min(), b.clat.min()) == r->write.clat.min());
  for (size_t s = 0; s < r->write.ios_per_second.size(); ++s) {
    uint64_t sa = s < a.ios_per_second.size() ? a.ios_per_second[s] : 0;
    uint64_t sb = s < b.ios_per_second.size() ? b.ios_per_second[s] : 0;
    CHECK(sa + sb == r->write.ios_per_second[s]);
  }
  check_consistent(r->write, spec.bs);
  CHECK(r->runtime_s >= std::max(r->jobs[0].runtime_s, r->jobs[1].runtime_s));
}

TEST_CASE("engine: the stop flag ends a long run promptly") {
  SKIP_WITHOUT_URING();
  TempFile file(16 << 20);
  auto spec = quick_spec(RwMode::RandWrite);
  spec.runtime_s = 60;
  std::atomic<bool> stop{false};
  EngineOptions opts;
  opts.stop = &stop;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    stop = true;
  });
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_jobs(spec, file.target(), opts);
  auto took = std::chrono::steady_clock::now() - t0;
  stopper.join();
  REQUIRE(r.ok());
  CHECK(took < std::chrono::seconds(3));
  CHECK(r->interrupted);
  CHECK(r->write.ios > 0);
  CHECK(r->runtime_s < 3);
  check_consistent(r->write, spec.bs);
}

TEST_CASE("engine: ramp time is not measured") {
  SKIP_WITHOUT_URING();
  TempFile file(16 << 20);
  auto spec = quick_spec(RwMode::RandWrite);
  spec.ramp_time_s = 0.3;
  spec.runtime_s = 0.3;
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_jobs(spec, file.target(), EngineOptions{});
  auto took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  REQUIRE(r.ok());
  CHECK(took >= 0.6);
  CHECK(r->runtime_s >= 0.29);  // from a completion after the ramp to the end of the drain
  CHECK(r->runtime_s <= engine_fixtures::window_bound_s(spec.runtime_s, r->write.lat));  // the ramp's 0.3 s are not in it
  CHECK(r->write.ios > 0);
  check_consistent(r->write, spec.bs);
}

TEST_CASE("engine: pinning reports the CPU, and a CPU that does not exist is an error") {
  TempFile file(1 << 20);
  auto spec = quick_spec(RwMode::Write);
  spec.engine = EngineKind::Sync;
  spec.time_based = false;
  spec.runtime_s = 0;
  EngineOptions opts;
  opts.cpus = {0};
  auto r = run_jobs(spec, file.target(), opts);
  REQUIRE(r.ok());
  CHECK(r->jobs[0].cpu == 0);

  opts.cpus = {4000};
  auto bad = run_jobs(spec, file.target(), opts);
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.error(), Contains("CPU 4000"));
}

TEST_CASE("engine: a target that cannot be opened is an error naming it") {
  auto spec = quick_spec(RwMode::RandRead);
  Target missing{"/var/tmp/diskprobe-engine-test-does-not-exist", 1 << 20, 512};
  auto r = run_jobs(spec, missing, EngineOptions{});
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error(),
             Contains("open(/var/tmp/diskprobe-engine-test-does-not-exist): No such file or directory"));

  spec.numjobs = 3;
  auto three = run_jobs(spec, missing, EngineOptions{});
  REQUIRE_FALSE(three.ok());
  CHECK_THAT(three.error(), Contains("job 0: open("));
  CHECK_THAT(three.error(), Contains("and 2 more jobs failed"));
}

TEST_CASE("run_jobs refuses a spec validate() refuses, before touching the target") {
  JobSpec s;
  s.bs = 1000;
  s.numjobs = 5000;
  const Target t{"/var/tmp/diskprobe-engine-test-never-made", 1 << 30, 512};
  auto r = run_jobs(s, t, EngineOptions{});
  REQUIRE_FALSE(r.ok());
  CHECK(r.error() == validate(s, t).error());
  CHECK_FALSE(std::filesystem::exists(t.path));
}
