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
  auto [r, took] = engine_fixtures::run_stopped_after(spec, file.target(), 200);
  REQUIRE(r.ok());
  CHECK(took < 3);
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

namespace {

// offset -> seq of every block whose header says it was written at that offset (seq 0: none).
std::vector<uint64_t> written_seqs(const TempFile& file, uint32_t bs) {
  auto data = file.read_all();
  std::vector<uint64_t> seqs(data.size() / bs, 0);
  for (uint64_t off = 0; off + bs <= data.size(); off += bs) {
    auto h = decode_block_header(data.data() + off, bs);
    if (h && h->offset == off) seqs[off / bs] = h->seq;
  }
  return seqs;
}

// The same job on two fresh files, once with the sync engine (Workload::next, one I/O at a
// time) and once with io_uring at `iodepth` (Workload::draw's batches): which write went to
// which block, by its header's sequence number, and how many I/Os each did.
struct DrawOrder {
  std::vector<uint64_t> sync_seqs, uring_seqs;
  uint64_t sync_ios = 0, uring_ios = 0;
};
DrawOrder both_engines(JobSpec spec, unsigned iodepth, uint64_t file_size) {
  DrawOrder d;
  for (EngineKind kind : {EngineKind::Sync, EngineKind::IoUring}) {
    TempFile file(file_size);
    spec.engine = kind;
    spec.iodepth = kind == EngineKind::Sync ? 1 : iodepth;
    auto r = run_jobs(spec, file.target(), EngineOptions{});
    REQUIRE(r.ok());
    REQUIRE(r->errors.count == 0);
    auto seqs = written_seqs(file, spec.write_bs());
    const uint64_t ios = r->read.ios + r->write.ios;
    (kind == EngineKind::Sync ? d.sync_seqs : d.uring_seqs) = std::move(seqs);
    (kind == EngineKind::Sync ? d.sync_ios : d.uring_ios) = ios;
  }
  return d;
}

}  // namespace

// The io_uring fill draws a random one-direction job's blocks in batches straight from the
// walked-ahead map, with its size limit counted up front (issue 15). It must hand out the
// same blocks in the same order, and stop at the same I/O, as one next() at a time does.
TEST_CASE("engine: io_uring's batched fill writes the blocks in the order and number the sync engine draws") {
  SKIP_WITHOUT_URING();
  const uint64_t file_size = 2 << 20;
  auto spec = quick_spec(RwMode::RandWrite);
  spec.time_based = false;
  spec.runtime_s = 0;
  spec.offset = 64 << 10;  // a region inside the file: 300 blocks, past several 64-block walks
  spec.size = 300 * 4096;
  unsigned iodepth = 1;
  uint64_t expect_ios = 300;
  SECTION("one pass, QD1") { iodepth = 1; }
  SECTION("one pass, QD3") { iodepth = 3; }
  SECTION("one pass, QD7") { iodepth = 7; }
  SECTION("one pass, QD33") { iodepth = 33; }
  SECTION("one pass, QD64: batches end on the map's walk boundary") { iodepth = 64; }
  SECTION("io_size not a multiple of bs: the last I/O is whole, as fio does") {
    spec.io_size = 100 * 4096 + 1000;
    expect_ios = 101;
    iodepth = 7;
  }
  SECTION("io_size of less than one block: one I/O") {
    spec.io_size = 1000;
    expect_ios = 1;
    iodepth = 32;
  }
  SECTION("two and a half passes (a new order each pass), QD1: no two writes of a block in flight") {
    spec.io_size = 750 * 4096;
    expect_ios = 750;
    iodepth = 1;
  }
  SECTION("split block sizes bs=4k,8k: writes walk 8k blocks") {
    spec.bs_write = 8192;
    expect_ios = 150;
    iodepth = 5;
  }
  SECTION("a region given in percent") {
    spec.offset = 0;
    spec.size = 0;
    spec.offset_percent = 25;
    spec.size_percent = 50;
    expect_ios = (file_size / 2) / 4096;
    iodepth = 9;
  }
  // The per-I/O draw path. (Not randrw: a write into a buffer a read left data in refills it
  // from the job's generator, so which slot takes which I/O, one or six, changes the draws.)
  SECTION("norandommap: the per-I/O path agrees too (QD1: a block may come twice)") {
    spec.norandommap = true;
    iodepth = 1;
  }
  SECTION("sequential write: the per-I/O path agrees too") {
    spec.rw = RwMode::Write;
    iodepth = 6;
  }
  const DrawOrder d = both_engines(spec, iodepth, file_size);
  CHECK(d.sync_ios == expect_ios);
  CHECK(d.uring_ios == d.sync_ios);
  REQUIRE(d.uring_seqs.size() == d.sync_seqs.size());
  size_t written = 0, differ = 0;
  for (size_t b = 0; b < d.sync_seqs.size(); ++b) {
    written += d.sync_seqs[b] ? 1 : 0;
    differ += d.sync_seqs[b] != d.uring_seqs[b] ? 1 : 0;
  }
  CHECK(written > 0);
  CHECK(differ == 0);
}

// fio's jobs without stonewall between them: a writer and a reader of other shapes at once,
// each counted apart, both started by one gate.
TEST_CASE("engine: run_group runs different jobs at the same time, each with its own figures") {
  SKIP_WITHOUT_URING();
  TempFile file(8 << 20);
  JobSpec writer = quick_spec(RwMode::Write);
  writer.name = "writer";
  writer.bs = 64 << 10;
  writer.iodepth = 2;
  writer.time_based = false;
  writer.runtime_s = 0;
  writer.size = 4 << 20;  // the first half, once: 64 I/Os
  JobSpec reader = quick_spec(RwMode::RandRead);
  reader.name = "reader";
  reader.engine = EngineKind::Sync;
  reader.time_based = false;
  reader.runtime_s = 0;
  reader.offset = 4 << 20;  // the second half, every 4k block once: 1024 I/Os
  reader.size = 4 << 20;
  reader.numjobs = 2;
  const Target t = file.target();
  auto r = run_group({GroupMember{&writer, &t, std::nullopt, {}}, GroupMember{&reader, &t, std::nullopt, {}}},
                     EngineOptions{});
  INFO((r.ok() ? std::string() : r.error()));
  REQUIRE(r.ok());
  REQUIRE(r->size() == 2);
  const Results& w = (*r)[0];
  const Results& rd = (*r)[1];
  CHECK(w.write.ios == 64);
  CHECK(w.read.ios == 0);
  check_consistent(w.write, 64 << 10);
  REQUIRE(rd.jobs.size() == 2);
  CHECK(rd.read.ios == 2 * 1024);
  CHECK(rd.write.ios == 0);
  // Two members' clones are the group's jobs 0, 1, 2: the readers' offsets are not the writer's
  // seed, and not each other's.
  CHECK(rd.jobs[0].job == 0);
  CHECK(rd.jobs[1].job == 1);
  CHECK(w.started_at == rd.started_at);
}

TEST_CASE("engine: startdelay holds a job's first I/O back; loops repeats a size-bounded job") {
  SKIP_WITHOUT_URING();
  TempFile file(1 << 20);
  JobSpec first = quick_spec(RwMode::Read);
  first.time_based = false;
  first.runtime_s = 0;
  first.loops = 3;  // 3 passes over 1 MiB of 4k: 768 reads
  JobSpec late = first;
  late.loops = 1;
  late.startdelay_s = 0.3;
  const Target t = file.target();
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_group({GroupMember{&first, &t, std::nullopt, {}}, GroupMember{&late, &t, std::nullopt, {}}},
                     EngineOptions{});
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  REQUIRE(r.ok());
  CHECK((*r)[0].read.ios == 768);
  CHECK((*r)[1].read.ios == 256);
  CHECK(took >= 0.3);
  // The delay is not the late job's runtime: it counts from its first I/O.
  CHECK((*r)[1].runtime_s < 0.3);
}

TEST_CASE("engine: a stop during startdelay ends the job before its first I/O") {
  SKIP_WITHOUT_URING();
  TempFile file(1 << 20);
  JobSpec late = quick_spec(RwMode::Read);
  late.startdelay_s = 30;
  auto [r, took] = engine_fixtures::run_stopped_after(late, file.target(), 200);
  REQUIRE(r.ok());
  CHECK(r->interrupted);
  CHECK(r->read.ios == 0);
  CHECK(took < 5);
}

// fio's wait_for: the reader starts once every writer job ended, so each block it checks holds
// a writer's header (a reader let go at the start would find blocks not written yet).
TEST_CASE("engine: a member that waits for another starts after all its jobs ended") {
  SKIP_WITHOUT_URING();
  TempFile file(4 << 20);
  JobSpec writer = quick_spec(RwMode::Write);
  writer.name = "writer";
  writer.engine = EngineKind::Sync;  // slow enough that a reader started with it overtakes it
  writer.time_based = false;
  writer.runtime_s = 0;
  writer.verify = VerifyKind::Crc32c;
  writer.do_verify = false;
  JobSpec reader = writer;
  reader.name = "reader";
  reader.rw = RwMode::Read;
  reader.engine = EngineKind::IoUring;
  reader.iodepth = 16;
  const Target t = file.target();
  auto r = run_group({GroupMember{&writer, &t, std::nullopt, {}}, GroupMember{&reader, &t, std::nullopt, {}, 0}},
                     EngineOptions{});
  INFO((r.ok() ? std::string() : r.error()));
  REQUIRE(r.ok());
  CHECK((*r)[0].write.ios == 1024);
  CHECK((*r)[1].read.ios == 1024);
  CHECK((*r)[1].verify.blocks_checked == 1024);
  CHECK((*r)[1].verify.mismatches == 0);
}

TEST_CASE("engine: number_ios stops a job after that many I/Os, size-bounded or time_based") {
  SKIP_WITHOUT_URING();
  TempFile file(1 << 20);
  JobSpec sized = quick_spec(RwMode::RandRead);
  sized.time_based = false;
  sized.runtime_s = 0;
  sized.number_ios = 100;  // before the 256 of one pass
  auto r = run_jobs(sized, file.target(), EngineOptions{});
  REQUIRE(r.ok());
  CHECK(r->read.ios == 100);
  JobSpec timed = quick_spec(RwMode::Write);
  timed.runtime_s = 30;  // number_ios comes first
  timed.number_ios = 777;
  timed.numjobs = 2;
  auto t = run_jobs(timed, file.target(), EngineOptions{});
  REQUIRE(t.ok());
  // A time_based window opens at the first completion: the I/Os of the first submission (one
  // queue, 4 per job) are not in it.
  CHECK(t->write.ios <= 2 * 777);
  CHECK(t->write.ios >= 2 * (777 - 4));
  CHECK(t->runtime_s < 10);
  JobSpec more = sized;
  more.number_ios = 1000;  // past one pass: the pass ends the job first
  auto m = run_jobs(more, file.target(), EngineOptions{});
  REQUIRE(m.ok());
  CHECK(m->read.ios == 256);
}
