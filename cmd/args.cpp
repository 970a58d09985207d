#include "args.h"

#include <algorithm>
#include <set>

#include "diskprobe/profiles/profiles.h"

namespace diskprobe::cli {

namespace {

const std::set<std::string> kCommands = {"devices", "check", "tune", "profiles", "profile", "run", "compare",
                                         "aggregate"};

bool is_override(const std::string& key) {
  const auto& keys = profiles::override_keys();
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

}  // namespace

std::optional<Args> parse(int argc, char** argv, std::string& error) {
  Args a;
  std::vector<std::string> words(argv + 1, argv + argc);
  for (size_t i = 0; i < words.size(); ++i) {
    std::string w = words[i];
    std::optional<std::string> inline_value;
    if (w.rfind("--", 0) == 0) {
      if (auto eq = w.find('='); eq != std::string::npos) {
        inline_value = w.substr(eq + 1);
        w = w.substr(0, eq);
      }
    }
    // The value of an option that takes one: "--x v" or "--x=v".
    auto value = [&](std::string& out) {
      if (inline_value) {
        out = *inline_value;
        return true;
      }
      if (i + 1 >= words.size()) {
        error = w + " needs a value";
        return false;
      }
      out = words[++i];
      return true;
    };
    auto flag = [&](bool& out) {
      if (inline_value) {
        error = w + " takes no value";
        return false;
      }
      out = true;
      return true;
    };
    bool ok = true;
    if (w == "-h" || w == "--help") ok = flag(a.help);
    else if (w == "--version") ok = flag(a.version);
    else if (w == "-v" || w == "--verbose") ok = flag(a.verbose);
    else if (w == "--json") ok = flag(a.json);
    else if (w == "--no-tune") ok = flag(a.no_tune);
    else if (w == "--apply") ok = flag(a.apply);
    else if (w == "--restore") ok = flag(a.restore);
    else if (w == "--sysfs") ok = value(a.sysfs);
    else if (w == "--procfs") ok = value(a.procfs);
    else if (w == "--mode") ok = value(a.mode);
    else if (w == "--profile") ok = value(a.profile);
    else if (w == "--output-format") ok = value(a.output_format);
    else if (w == "--output") ok = value(a.output_file);
    else if (w == "--scratch") ok = value(a.scratch);
    else if (w == "--report") ok = value(a.report_file);
    else if (w == "--max-regression") ok = value(a.max_regression);
    else if (w.rfind("--", 0) == 0 && is_override(w.substr(2))) {
      std::string v;
      ok = value(v);
      if (ok) a.overrides[w.substr(2)] = v;
    } else if (w.size() > 1 && w[0] == '-') {
      error = "unknown option " + w + ": see 'diskprobe --help'";
      return std::nullopt;
    } else if (a.command.empty()) {
      if (!kCommands.count(w)) {
        error = "unknown command '" + w + "': use devices, check, tune, profiles, profile, run, compare or aggregate";
        return std::nullopt;
      }
      a.command = w;
    } else {
      a.positional.push_back(w);
    }
    if (!ok) return std::nullopt;
  }
  if (!a.report_file.empty() && a.command != "run") {
    error = "--report FILE.html goes with 'run': diskprobe run --profile NAME DEVICE --report FILE.html";
    return std::nullopt;
  }
  if (!a.max_regression.empty() && a.command != "compare") {
    error = "--max-regression goes with 'compare': diskprobe compare A.json B.json --max-regression 5%";
    return std::nullopt;
  }
  if (a.mode != "write" && a.mode != "read") {
    error = "--mode " + a.mode + ": use write or read";
    return std::nullopt;
  }
  return a;
}

const char* usage() {
  return R"(diskprobe: benchmark block devices safely, the way the cloud vendors' fio scripts do

usage:
  diskprobe devices [--json]                       block devices, sizes, signatures, verdicts
  diskprobe check DEVICE [--mode write|read] [--json]
                                                   preflight only: exit 0 safe, 3 refused
  diskprobe tune DEVICE [--profile NAME] [OVERRIDES] [--json] [--apply]
                                                   topology, tuning plan and advice; --apply
                                                   sets it and holds until Ctrl-C, then restores
  diskprobe tune --restore                         restore settings a killed run left changed
  diskprobe profiles [--json]                      built-in and user profiles
  diskprobe profile show NAME [--json]             one profile's parameters
  diskprobe run --profile NAME (DEVICE | --scratch SIZE) [OVERRIDES]
                [--output-format text|json] [--output FILE] [--report FILE.html] [--no-tune]
  diskprobe compare A.json B.json [--max-regression PERCENT] [--json]
                                                   two JSON reports side by side; exit 4 when B
                                                   is worse than A by more than PERCENT
  diskprobe aggregate FILE.json... [--json]        many hosts' JSON reports: per-volume table,
                                                   fleet percentiles, failed expectations

DEVICE is a kernel name (vdc) or a path (/dev/vdc). --scratch 1G runs on a temporary loop
device over a sparse file in $TMPDIR, removed however the run ends. --report FILE.html also
writes a self-contained HTML page with charts of the run.
OVERRIDES change any profile field: --rw --bs --iodepth --numjobs --runtime --ramp_time
  --time_based --size --offset --direct --rwmixread --randrepeat --randseed
  --refill_buffers --engine --rq_affinity --pinning --hold_cstates --advise_idle_poll
--no-tune leaves rq_affinity and C-states alone (jobs are still pinned as the profile says).

global: --sysfs PATH --procfs PATH (read topology from another root), -v/--verbose,
        --version, -h/--help
exit codes: 0 success, 1 runtime error, 2 usage error, 3 refused by the preflight,
            4 expectations not met
)";
}

}  // namespace diskprobe::cli
