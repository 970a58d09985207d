// fio's per-I/O log files from a job's samples: the names, columns and values fio 3.33 writes.
#include <catch2/catch.hpp>

#include "diskprobe/report/fio_logs.h"

using namespace diskprobe;

namespace {

JobResult two_reads_one_write() {
  JobResult j;
  // t_ns, slat, clat, offset, bytes, prio, write
  j.samples.push_back({1'500'000, 2'000, 109'553, 0, 4096, 0, false});
  j.samples.push_back({99'000'000, 1'000, 58'437, 8192, 4096, 0x2000, false});
  j.samples.push_back({150'000'000, 500, 40'000, 65536, 65536, 0x6000, true});
  return j;
}

const FioLogFile& file(const std::vector<FioLogFile>& files, const std::string& path) {
  for (const auto& f : files) {
    if (f.path == path) return f;
  }
  FAIL("no " << path);
  return files.front();
}

}  // namespace

TEST_CASE("fio logs: every I/O a line, fio's names, bw as fio computes it per I/O", "[fio-logs]") {
  IoLogs logs;
  logs.bw = "p";
  logs.lat = "p";
  logs.iops = "p";
  auto files = fio_log_files(logs, /*sync_engine=*/false, two_reads_one_write(), 3);
  REQUIRE(files.size() == 5);
  // floor(bytes * 1e6 / clat_ns), as fio's per-I/O bandwidth: 37388 for 4 KiB in 109,553 ns.
  CHECK(file(files, "p_bw.3.log").text == "1, 37388, 0, 4096, 0\n99, 70092, 0, 4096, 1\n150, 1638400, 1, 65536, 0\n");
  CHECK(file(files, "p_clat.3.log").text == "1, 109553, 0, 4096, 0\n99, 58437, 0, 4096, 1\n150, 40000, 1, 65536, 0\n");
  CHECK(file(files, "p_lat.3.log").text == "1, 111553, 0, 4096, 0\n99, 59437, 0, 4096, 1\n150, 40500, 1, 65536, 0\n");
  CHECK(file(files, "p_slat.3.log").text == "1, 2000, 0, 4096, 0\n99, 1000, 0, 4096, 1\n150, 500, 1, 65536, 0\n");
  CHECK(file(files, "p_iops.3.log").text == "1, 1, 0, 4096, 0\n99, 1, 0, 4096, 1\n150, 1, 1, 65536, 0\n");
}

TEST_CASE("fio logs: log_offset adds the offset, log_prio the ioprio in hex; a sync engine's slat log is empty", "[fio-logs]") {
  IoLogs logs;
  logs.lat = "prio-run.log";
  logs.offset = true;
  logs.prio = true;
  auto files = fio_log_files(logs, /*sync_engine=*/true, two_reads_one_write(), 1);
  REQUIRE(files.size() == 3);
  CHECK(file(files, "prio-run.log_clat.1.log").text ==
        "1, 109553, 0, 4096, 0, 0x0000\n99, 58437, 0, 4096, 8192, 0x2000\n150, 40000, 1, 65536, 65536, 0x6000\n");
  CHECK(file(files, "prio-run.log_slat.1.log").text.empty());
}

TEST_CASE("fio logs: log_avg_msec gives one line per direction per window, at its end", "[fio-logs]") {
  IoLogs logs;
  logs.bw = "a";
  logs.iops = "a";
  logs.lat = "a";
  logs.avg_msec = 100;
  logs.offset = true;
  auto files = fio_log_files(logs, false, two_reads_one_write(), 2);
  // Window 0 (0-100 ms): both reads; window 1 (100-200 ms): the write.
  CHECK(file(files, "a_iops.2.log").text == "100, 20, 0, 0, 0, 0\n200, 10, 1, 0, 0, 0\n");
  // 8 KiB in 100 ms: 80 KiB/s; 64 KiB: 640 KiB/s.
  CHECK(file(files, "a_bw.2.log").text == "100, 80, 0, 0, 0, 0\n200, 640, 1, 0, 0, 0\n");
  CHECK(file(files, "a_clat.2.log").text == "100, 83995, 0, 0, 0, 0\n200, 40000, 1, 0, 0, 0\n");
}

TEST_CASE("fio logs: no log asked, no file", "[fio-logs]") {
  CHECK(fio_log_files(IoLogs{}, false, two_reads_one_write(), 1).empty());
}
