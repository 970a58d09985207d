// What fio's options mean, job by job: each job of fio_jobs.h's Input as a JobSpec that starts
// from fio 3.33's defaults (rw=read, bs=4k, iodepth=1, ioengine=psync, direct=0, the whole
// target once, no group_reporting), with its targets and its place in fio's groups. An option
// diskprobe does not implement is listed with its job and where it was written, never ignored.
#pragma once

#include <string>
#include <vector>

#include "diskprobe/profiles/fio_jobs.h"
#include "diskprobe/spec/job_spec.h"

namespace diskprobe::profiles::fio {

struct FioJob {
  std::string name;
  std::string where;
  JobSpec spec;
  // filename=a:b -> {a, b}, inside directory when both are given; empty: spec.directory holds
  // the job's NAME.N.0 files (the working directory when neither is given, as in fio)
  std::vector<std::string> filenames;
  bool stonewall = false;              // waits for every job before it (stonewall, wait_for_previous)
  bool new_group = false;              // starts a reporting group (stonewall does too)
  int groupid = 0;                     // fio's numbering: 0, then +1 at each new group
  bool fill_device = false;            // fio's fill_device: to the device's end (a file's filesystem is refused)
};

struct Unsupported {
  std::string job, where, option;      // option as written: "loops=2"
  std::string why;                     // "" = not an option diskprobe fio implements
};

struct Jobs {
  std::vector<FioJob> jobs;
  std::vector<Unsupported> unsupported;
  std::vector<std::string> errors;     // a known option with a bad value: "where: job 'x': bs=3: use ..."
  std::vector<std::string> notes;      // options taken that change nothing ("gtod_reduce=1 ignored: ...")
};

Jobs to_jobs(const Input& in);

// The options diskprobe fio takes (fio's names and aliases), for --help and the README.
std::vector<std::string> supported_options();

}  // namespace diskprobe::profiles::fio
