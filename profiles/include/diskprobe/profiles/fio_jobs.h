// fio's own input, read as fio 3.33 reads it: the command line (`--opt=val`, `-opt=val`,
// `--opt val`, bare switches; options before the first --name are global, each --name starts a
// job; other words are job files) and job files ([global] sections that apply to the jobs after
// them, job sections, ; and # comments to the end of a line, `include FILE` inside a section,
// ${VAR} from the environment, $ncpus, $mb_memory and $pagesize, arithmetic in parentheses).
// Each job comes out with every option that applies to it, in the order fio applies them;
// what an option means is fio_spec.cpp's business.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "diskprobe/base/status.h"

namespace diskprobe::profiles::fio {

struct Option {
  std::string key;               // as fio spells it, dashes already underscores
  std::optional<std::string> value;  // nullopt: a bare switch ("norandommap")
  std::string where;             // "file.fio:12" or "argument 3", for messages
};

struct Job {
  std::string name;              // the section's or --name's
  std::string where;             // where the section or --name is
  // The globals before it (the command line's, then its file's [global]s), then its own.
  std::vector<Option> options;
  size_t own_from = 0;           // options[own_from...] are the job's own, the rest global
  // The first job of a second job file waits for the first file's jobs, as fio does.
  bool file_stonewall = false;
};

// fio's own flags (--output-format, --output, --section, ...), which are not job options.
struct Flag {
  std::string name;
  std::string value;             // "" for a flag without one
  std::string where;
};

struct Input {
  std::vector<Flag> flags;
  std::vector<Job> jobs;
  std::vector<std::string> job_files;
  std::vector<std::string> notes;  // ${VAR}s that were not set (fio reads them as nothing)
};

// What ${VAR} and the $keywords read. Tests give their own.
struct Environment {
  std::function<std::optional<std::string>(const std::string&)> getenv;
  unsigned ncpus = 1;
  uint64_t mb_memory = 0;
  unsigned pagesize = 4096;
  static Environment of_this_host();
};

// fio's command-line flags that take a value ("--output-format json"); others stand alone.
bool flag_takes_value(const std::string& name);
// True for a name that is one of fio's command-line flags, not a job option.
bool is_flag(const std::string& name);

Result<Input> read_command_line(const std::vector<std::string>& args, const Environment& env);

// ${VAR}, $ncpus, $mb_memory, $pagesize, then arithmetic: a value that starts with '(' is an
// expression of integers (with fio's size suffixes), + - * / % ^ and parentheses, whose result
// may be followed by a suffix ("(2*4)k"). Other values are returned as substituted.
// Unset ${VAR}s read as nothing, as in fio; their names go to `unset` when given.
Result<std::string> expand(const std::string& value, const Environment& env,
                           std::vector<std::string>* unset = nullptr);

}  // namespace diskprobe::profiles::fio
