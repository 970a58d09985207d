// The command line, parsed into plain values. No logic beyond syntax lives here.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace diskprobe::cli {

struct Args {
  std::string command;                    // devices, check, tune, profiles, profile, run, accept, curve, compare, aggregate
  std::vector<std::string> positional;    // after the command
  bool json = false;
  bool strict = false;                    // run/tune: refuse a plan that falls short of the profile
  bool help = false, version = false, verbose = false;
  std::string sysfs = "/sys", procfs = "/proc";
  std::string mode = "write";             // check --mode
  std::string profile;                    // run/tune --profile
  std::map<std::string, std::string> overrides;  // --runtime 5 ...
  std::vector<std::string> notes;         // fio options taken in diskprobe's own way (libaio, gtod_reduce)
  std::string output_format = "text";
  std::string output_file;
  std::string scratch;                    // --scratch SIZE
  bool no_tune = false;
  std::string directory;                  // run --directory DIR: one file per job
  bool keep_files = false;                // run --keep-files: leave those files
  bool apply = false, restore = false;    // tune --apply / --restore
  bool paranoid = false, no_paranoid = false, allow_nonzero = false;  // the zero sampler
  std::vector<std::string> expect;        // run --expect EXPR, repeatable
  std::string volume;                     // run --volume essd-pl3:1000GiB
  std::string tolerance = "95%";          // run --tolerance: share of --volume's figures
  std::string report_file;                // run/accept/curve --report FILE.html
  std::string max_time;                   // accept --max-time S: the suite's budget
  // curve: the sweep's limits, as given (cmd/curve.cpp reads them)
  std::string rate_steps;                 // --rate-steps 10,25,50,75,90%
  std::string max_iops;                   // --max-iops N: the rate steps' 100%
  std::string step_time;                  // --step-time 20s: each step's longest run
  std::string max_iodepth;                // --max-iodepth N: the queue-depth steps' last
  std::string past_knee;                  // --past-knee N: steps run after the knee
  std::string max_regression;             // compare --max-regression 5%
  std::string name;                       // run --name NAME (fio's): the job name in reports
  std::string filename;                   // run --filename PATH (fio's): the DEVICE
};

// Parses argv; on a usage error returns nullopt and sets `error` to a one-line message.
std::optional<Args> parse(int argc, char** argv, std::string& error);

// JSON mode, read from argv itself so a usage error gets its JSON document too: --json, or
// --output-format json with the report on stdout (no --output FILE).
bool wants_json(int argc, char** argv);

// Where JSON mode's document goes when it is not stdout: --output FILE with --output-format
// json. `others` are the other words' values, for OutputFile::open to refuse FILE if it is one.
struct JsonFile {
  std::string path;  // empty: none asked for
  std::vector<std::string> others;
};
JsonFile json_file(int argc, char** argv);

const char* usage();

}  // namespace diskprobe::cli
