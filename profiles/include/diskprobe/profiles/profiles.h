// Built-in and user profiles: JSON files turned into JobSpecs, with command-line overrides.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "diskprobe/spec/job_spec.h"
#include "diskprobe/base/status.h"

namespace diskprobe::profiles {

struct ProfileInfo {
  std::string name;
  std::string description;
  std::string path;      // the file it was loaded from
};

// Where profiles are looked for, in order: $DISKPROBE_PROFILE_DIR, ../share/diskprobe/profiles
// beside the executable (an installed or unpacked package), the build tree's profiles/
// (compiled in), the installed share/diskprobe/profiles, ~/.config/diskprobe/profiles.
std::vector<std::string> search_dirs();

std::vector<ProfileInfo> list(const std::vector<std::string>& dirs = search_dirs());

// Loads a profile by name or by path to a .json file. Errors name the file, the field and
// what is allowed; every problem in the file is reported together.
Result<JobSpec> load(std::string_view name_or_path, const std::vector<std::string>& dirs = search_dirs());
// A profile may "extends" another (a name looked up in `dirs`, or a path relative to the file).
Result<JobSpec> parse(const std::string& json_text, const std::string& origin,
                      const std::vector<std::string>& dirs = search_dirs());

// The fio command line that runs the same workload (ioengine=io_uring for diskprobe's
// io_uring engine, psync for sync; pinning as cpus_allowed placeholders).
std::string fio_command_line(const JobSpec& spec, const std::string& target = "/dev/DEVICE");

// One workload or host field by its key, from text as fio writes it: the error is "unknown
// option" or "use <what the field allows>".
Status set_field(JobSpec& spec, const std::string& key, const std::string& text);
// fio options that ask for what diskprobe always does (gtod_reduce, fixedbufs, ...): why they
// change nothing, or nullptr for any other option. Taken with a note by `run` and `fio` alike.
const char* fio_always_done(const std::string& key);
// Command-line overrides ("runtime" -> "10"); every bad one reported together.
Status apply_overrides(JobSpec& spec, const std::map<std::string, std::string>& overrides);
// The override keys `run` and `tune` accept.
const std::vector<std::string>& override_keys();

}  // namespace diskprobe::profiles
