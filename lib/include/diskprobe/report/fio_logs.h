// fio's per-I/O logs (write_bw_log, write_lat_log, write_iops_log; JobSpec::logs) from a job's
// samples, in fio 3.33's format, which fio2gnuplot and fio's own log tools read: one line per
// I/O "time_ms, value, direction, bytes[, offset], prio", or with log_avg_msec one line per
// direction per window "window_end_ms, mean, direction, 0[, 0], 0".
#pragma once

#include <string>
#include <vector>

#include "diskprobe/spec/job_spec.h"
#include "diskprobe/stats/results.h"

namespace diskprobe {

struct FioLogFile {
  std::string path;  // PREFIX_bw.N.log, as fio names it
  std::string text;
};

// The log files of one job (one clone): `number` is its place among all jobs' clones as fio
// counts them (from 1). A sync engine has no submission latency: its _slat log is empty, as
// fio's. Values: bw per I/O bytes*1e6/clat_ns (fio's), averaged KiB/s; lat in ns; iops 1 per
// I/O, averaged I/Os per second.
std::vector<FioLogFile> fio_log_files(const IoLogs& logs, bool sync_engine, const JobResult& job, unsigned number);

}  // namespace diskprobe
