#include "progress.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "diskprobe/cli/render.h"

namespace diskprobe::cli {

namespace {

std::string clock(double s) {
  if (s < 0) s = 0;
  auto t = static_cast<unsigned long>(s + 0.5);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%02lum:%02lus", t / 60, t % 60);
  return buf;
}

std::string rate(uint64_t ios, uint64_t sectors, double interval_s) {
  double iops = interval_s > 0 ? static_cast<double>(ios) / interval_s : 0;
  double bytes = interval_s > 0 ? static_cast<double>(sectors) * 512.0 / interval_s : 0;
  char buf[64];
  if (iops >= 10000) {
    std::snprintf(buf, sizeof buf, "%.1fk IOPS ", iops / 1000);
  } else {
    std::snprintf(buf, sizeof buf, "%.0f IOPS ", iops);
  }
  return buf + human_bytes(static_cast<uint64_t>(bytes)) + "/s";
}

}  // namespace

ProgressLine::ProgressLine(const SysRoot& root, const BlockDevice& dev, const JobSpec& spec)
    : root_(root), dev_(dev), planned_s_(spec.runtime_s + spec.ramp_time_s) {
  if (::isatty(STDERR_FILENO) == 1) thread_ = std::thread([this] { loop(); });
}

ProgressLine::~ProgressLine() {
  done_.store(true);
  if (thread_.joinable()) {
    thread_.join();
    std::fputs("\r\033[K", stderr);  // the report follows on a clean line
  }
}

std::string ProgressLine::format(double elapsed_s, double planned_s, const DiskCounters& before,
                                 const DiskCounters& after, double interval_s) {
  std::string eta = planned_s > 0 ? clock(planned_s - elapsed_s) : "--m:--s";
  return "diskprobe: [" + clock(elapsed_s) + " elapsed, eta " + eta + "] read " +
         rate(after.read_ios - before.read_ios, after.read_sectors - before.read_sectors, interval_s) +
         ", write " +
         rate(after.write_ios - before.write_ios, after.write_sectors - before.write_sectors, interval_s);
}

void ProgressLine::loop() {
  using clk = std::chrono::steady_clock;
  auto start = clk::now();
  auto last_t = start;
  auto last = read_disk_counters(root_, dev_);
  while (!done_.load()) {
    // Wake often so the line goes away promptly when the run ends; print once a second.
    for (int i = 0; i < 10 && !done_.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (done_.load()) break;
    auto now_t = clk::now();
    auto now = read_disk_counters(root_, dev_);
    if (!now || !last) {
      last = now;
      continue;
    }
    double interval = std::chrono::duration<double>(now_t - last_t).count();
    double elapsed = std::chrono::duration<double>(now_t - start).count();
    std::string line = format(elapsed, planned_s_, *last, *now, interval);
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
    std::fflush(stderr);
    last = now;
    last_t = now_t;
  }
}

}  // namespace diskprobe::cli
