#include "diskprobe/report/fio_logs.h"

#include <cinttypes>
#include <cstdio>
#include <functional>

namespace diskprobe {

namespace {

using Value = std::function<uint64_t(const IoSample&)>;

// fio prints the priority as the ioprio value in hex with log_prio, else 1 for the real-time
// class and 0 for any other.
std::string prio_text(const IoLogs& logs, uint16_t prio) {
  char buf[16];
  if (logs.prio) {
    std::snprintf(buf, sizeof buf, "0x%04x", static_cast<unsigned>(prio));
  } else {
    std::snprintf(buf, sizeof buf, "%u", (prio >> 13) == 1 ? 1u : 0u);
  }
  return buf;
}

void line(std::string& out, const IoLogs& logs, uint64_t t_ms, uint64_t value, bool write, uint64_t bytes,
          uint64_t offset, const std::string& prio) {
  char buf[128];
  int n = logs.offset ? std::snprintf(buf, sizeof buf, "%" PRIu64 ", %" PRIu64 ", %u, %" PRIu64 ", %" PRIu64 ", ", t_ms,
                                      value, write ? 1u : 0u, bytes, offset)
                      : std::snprintf(buf, sizeof buf, "%" PRIu64 ", %" PRIu64 ", %u, %" PRIu64 ", ", t_ms, value,
                                      write ? 1u : 0u, bytes);
  out.append(buf, static_cast<size_t>(n));
  out += prio;
  out += '\n';
}

// Every I/O its own line.
std::string per_io(const IoLogs& logs, const JobResult& job, const Value& value) {
  std::string out;
  out.reserve(job.samples.size() * 32);
  for (const IoSample& s : job.samples) {
    line(out, logs, s.t_ns / 1'000'000, value(s), s.write, s.bytes, s.offset, prio_text(logs, s.prio));
  }
  return out;
}

// log_avg_msec: per window of that many ms and per direction, one line at the window's end.
// `how` turns a window's sum of values, its I/Os and bytes into the logged figure.
enum class Average { MeanOfValues, KibPerSecond, IosPerSecond };

// Only windows that ended inside the job's runtime: the drain after it is no window of its
// own (fio writes a window when the next begins, and none after the job's end).
std::string averaged(const IoLogs& logs, const JobResult& job, const Value& value, Average how) {
  std::string out;
  const uint64_t win_ns = uint64_t{logs.avg_msec} * 1'000'000;
  const auto runtime_ns = static_cast<uint64_t>(job.runtime_s * 1e9);
  const uint64_t windows = runtime_ns ? runtime_ns / win_ns : UINT64_MAX;
  uint64_t window = 0;  // index of the window being summed
  struct Sum {
    uint64_t n = 0, bytes = 0;
    long double values = 0;
  } sum[2];
  auto flush = [&] {
    for (int d = 0; d < 2; ++d) {
      if (sum[d].n == 0) continue;
      uint64_t v = 0;
      if (how == Average::MeanOfValues) v = static_cast<uint64_t>(sum[d].values / static_cast<long double>(sum[d].n));
      if (how == Average::KibPerSecond) v = sum[d].bytes * 1000 / logs.avg_msec / 1024;
      if (how == Average::IosPerSecond) v = sum[d].n * 1000 / logs.avg_msec;
      line(out, logs, (window + 1) * logs.avg_msec, v, d == 1, 0, 0, "0");
      sum[d] = {};
    }
  };
  for (const IoSample& s : job.samples) {
    const uint64_t w = s.t_ns / win_ns;
    if (w >= windows) break;
    if (w != window) {
      flush();
      window = w;
    }
    Sum& d = sum[s.write ? 1 : 0];
    ++d.n;
    d.bytes += s.bytes;
    d.values += static_cast<long double>(value(s));
  }
  flush();
  return out;
}

}  // namespace

std::vector<FioLogFile> fio_log_files(const IoLogs& logs, bool sync_engine, const JobResult& job, unsigned number) {
  std::vector<FioLogFile> files;
  const std::string n = "." + std::to_string(number) + ".log";
  auto add = [&](const std::string& prefix, const char* kind, const Value& value, Average how) {
    files.push_back({prefix + "_" + kind + n,
                     logs.avg_msec ? averaged(logs, job, value, how) : per_io(logs, job, value)});
  };
  if (!logs.bw.empty()) {
    add(logs.bw, "bw", [](const IoSample& s) { return s.clat_ns ? uint64_t{s.bytes} * 1'000'000 / s.clat_ns : 0; },
        Average::KibPerSecond);
  }
  if (!logs.lat.empty()) {
    add(logs.lat, "lat", [](const IoSample& s) { return s.slat_ns + s.clat_ns; }, Average::MeanOfValues);
    add(logs.lat, "clat", [](const IoSample& s) { return s.clat_ns; }, Average::MeanOfValues);
    if (sync_engine) {
      files.push_back({logs.lat + "_slat" + n, ""});
    } else {
      add(logs.lat, "slat", [](const IoSample& s) { return s.slat_ns; }, Average::MeanOfValues);
    }
  }
  if (!logs.iops.empty()) add(logs.iops, "iops", [](const IoSample&) { return uint64_t{1}; }, Average::IosPerSecond);
  return files;
}

}  // namespace diskprobe
