// Targets that are files, not block devices: a regular file (fio's filename=FILE) or a
// directory where each job gets its own file (fio's directory=DIR, the EBS seed's run on XFS).
// Files get no device preflight; what is checked instead is that the filesystem can hold
// them: a directory, writable, enough free space, O_DIRECT where direct=1.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "diskprobe/spec/job_spec.h"
#include "diskprobe/spec/target.h"
#include "diskprobe/base/status.h"

namespace diskprobe {

// Files a run made and removes when it ends (unless kept). Move-only.
class JobFiles {
 public:
  JobFiles() = default;
  JobFiles(const JobFiles&) = delete;
  JobFiles& operator=(const JobFiles&) = delete;
  JobFiles(JobFiles&& o) noexcept;
  JobFiles& operator=(JobFiles&& o) noexcept;
  ~JobFiles();

  // One file per job in `dir`, named like fio's "<name>.<job>.0", each `size` bytes and
  // written out once (fio's "Laying out IO file"), so reads reach the device rather than a
  // hole the filesystem answers with zeros. A file left by an earlier --keep-files run (it
  // starts with diskprobe's header) is reused as it is; any other existing file is refused.
  static Result<JobFiles> create_in_directory(const std::string& dir, const JobSpec& spec, bool keep);
  // One regular file: used as it is when it exists (at its size, or extended to spec.size);
  // created and laid out when it does not (then spec.size is needed).
  static Result<JobFiles> open_file(const std::string& path, const JobSpec& spec, bool keep);

  // The engine's target: every job's path (directory) or the one file, and its size.
  const Target& target() const { return target_; }
  const std::vector<std::string>& created() const { return created_; }
  // Removes the files this run created (not reused ones). Safe to call twice.
  void remove();

 private:
  Target target_;
  std::vector<std::string> created_;  // removed by remove() unless keep_
  bool keep_ = false;
};

// The job files of a --directory run: DIR/NAME.JOB.0 for each of spec.numjobs jobs.
std::vector<std::string> job_file_paths(const std::string& dir, const JobSpec& spec);

// Whether a run may use the regular file at `path`: a missing file (created), a read-only
// workload, or a file diskprobe made (it starts with diskprobe's header). Any other existing
// file would be overwritten: refused, saying so.
Status may_use_file(const std::string& path, const JobSpec& spec);

// Why files cannot go in `dir`, or Ok: not a directory, read-only, not writable, too little
// free space for `need_bytes`, no O_DIRECT (tmpfs) when `direct`.
Status check_directory(const std::string& dir, uint64_t need_bytes, bool direct);

}  // namespace diskprobe
