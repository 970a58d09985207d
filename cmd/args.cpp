#include "diskprobe/cli/args.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "diskprobe/base/json_io.h"
#include "diskprobe/profiles/profiles.h"

namespace diskprobe::cli {

namespace {

const std::set<std::string> kCommands = {"devices", "check", "tune", "profiles", "profile", "run", "accept", "curve",
                                         "compare", "aggregate"};

bool is_override(const std::string& key) {
  const auto& keys = profiles::override_keys();
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

// Boolean workload options fio accepts without a value.
bool is_switch(const std::string& key) {
  static const std::set<std::string> kSwitches = {"norandommap", "time_based", "refill_buffers", "direct",
                                                  "randrepeat",  "sqpoll",     "hipri",          "do_verify",
                                                  "group_reporting", "sync"};
  return kSwitches.count(key) > 0;
}

// fio's spellings of an option word: "-direct=1" (one dash) is "--direct=1", and dashes in a
// fio option's name are underscores ("--time-based" is "--time_based"). diskprobe's own
// options ("--no-tune") are left alone.
std::string fio_spelling(const std::string& w) {
  if (w.size() < 3 || w[0] != '-') return w;
  std::string name = w[1] == '-' ? w.substr(2) : w.substr(1);
  std::string rest;
  if (auto eq = name.find('='); eq != std::string::npos) {
    rest = name.substr(eq);
    name = name.substr(0, eq);
  }
  std::string key = name;
  std::replace(key.begin(), key.end(), '-', '_');
  if (key == "iodepth_batch") key = "iodepth_batch_submit";  // fio's alias
  static const std::set<std::string> kFioOnly = {"name", "filename", "ioengine", "directory"};
  if (is_override(key) || kFioOnly.count(key) || profiles::fio_always_done(key)) return "--" + key + rest;
  return w;
}

// fio's ioengine as diskprobe's engine; nullopt = not one diskprobe has. libaio (every vendor
// line) is the same asynchronous O_DIRECT I/O, run on io_uring.
std::optional<std::string> engine_for(const std::string& ioengine) {
  if (ioengine == "io_uring" || ioengine == "libaio") return "io_uring";
  if (ioengine == "sync" || ioengine == "psync") return "sync";  // pread/pwrite either way
  return std::nullopt;
}

// PATH_MAX: no path, option or value is longer; a longer word is refused before anything
// quotes or parses it.
constexpr size_t kMaxWordBytes = 4096;

bool looks_numeric(const std::string& w) {
  return !w.empty() &&
         std::all_of(w.begin(), w.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
}

bool is_bool_word(const std::string& w) {
  static const std::set<std::string> kWords = {"0", "1", "true", "false", "yes", "no", "on", "off"};
  return kWords.count(w) > 0;
}

// run, tune --apply and tune --restore write to devices or the host: a --sysfs/--procfs
// fixture would let them check one tree and write another (the real journal into a fixture).
const char* fixture_root_for_writing(const Args& a) {
  bool writes = a.command == "run" || a.command == "accept" || a.command == "curve" ||
                (a.command == "tune" && (a.apply || a.restore));
  auto is = [](const std::string& given, const char* real) {
    std::string p = std::filesystem::path(given).lexically_normal().string();
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    return p == real;
  };
  if (writes && !is(a.sysfs, "/sys")) return "--sysfs";
  if (writes && !is(a.procfs, "/proc")) return "--procfs";
  return nullptr;
}

// The commands each option goes with; an option a command does not take is refused (exit 2)
// rather than ignored: `run ... --restore` ran a benchmark, `devices --iodepth 4` listed
// devices. Where a command has its own message for what it refuses (accept: --profile and
// workload options; curve: --output, --expect, --volume), it is listed here and says it. -h,
// --version, -v, --sysfs and --procfs go with every command; OVERRIDES are the workload options
// (--runtime, --bs, fio's --ioengine, ...), "fio-note" fio's options that diskprobe always does.
const std::map<std::string, std::set<std::string>>& option_commands() {
  static const std::set<std::string> kAll = kCommands;
  static const std::set<std::string> kSampler = {"devices", "check", "run", "accept", "curve"};
  static const std::map<std::string, std::set<std::string>> kTable = {
      {"--json", kAll},
      {"--strict", {"tune", "run", "accept", "curve"}},
      {"--no-tune", {"run", "accept", "curve"}},
      {"--apply", {"tune"}},
      {"--restore", {"tune"}},
      {"--paranoid", kSampler},
      {"--no-paranoid", kSampler},
      {"--allow-nonzero", kSampler},
      {"--mode", {"check"}},
      {"--profile", {"tune", "run", "accept", "curve"}},
      {"--output-format", {"run", "accept", "curve"}},
      {"--output", {"run", "accept", "curve"}},
      {"--scratch", {"run", "accept", "curve"}},
      {"--directory", {"run", "accept", "curve"}},
      {"--keep-files", {"run"}},
      {"--expect", {"run", "accept", "curve"}},
      {"--volume", {"run", "accept", "curve"}},
      {"--tolerance", {"run", "accept"}},
      {"--report", {"run", "accept", "curve"}},
      {"--max-time", {"accept"}},
      {"--max-regression", {"compare"}},
      {"--rate-steps", {"curve"}},
      {"--max-iops", {"curve"}},
      {"--step-time", {"curve"}},
      {"--max-iodepth", {"curve"}},
      {"--past-knee", {"curve"}},
      {"--name", {"tune", "profile", "run", "curve"}},
      {"--filename", {"run"}},
      {"OVERRIDES", {"tune", "profile", "run", "accept", "curve"}},
      {"fio-note", {"tune", "profile", "run", "curve"}},
  };
  return kTable;
}

// The first option (in the order given) or extra argument the command does not take.
std::optional<std::string> not_for_command(const Args& a, const std::vector<std::pair<std::string, std::string>>& given) {
  const std::string& c = a.command;
  for (const auto& [word, kind] : given) {
    auto it = option_commands().find(kind);
    if (it == option_commands().end()) continue;  // global
    bool takes = it->second.count(c) > 0;
    // tune --restore restores what killed runs left: it plans nothing and takes only --json.
    if (c == "tune" && a.restore && kind != "--restore" && kind != "--json") takes = false;
    if (!takes) {
      std::string what = kind == "OVERRIDES" ? word + " (a workload option)" : word;
      if (c == "tune" && a.restore && it->second.count(c)) {
        return "'tune --restore' takes no " + what + ": it only puts back what killed runs left; drop " + word;
      }
      return "'" + c + "' takes no " + what + ": drop it (see 'diskprobe --help' for what '" + c + "' takes)";
    }
  }
  // Commands that take no arguments at all say so here; the others count their own.
  if ((c == "devices" || c == "profiles") && !a.positional.empty()) {
    return "unexpected argument '" + excerpt(a.positional[0]) + "': '" + c + "' takes none";
  }
  return std::nullopt;
}

}  // namespace

namespace {

// fio takes the last of a repeated option and starts a new job at each --name; one run of
// diskprobe is one job, so either would run something other than what was written (two jobs
// merged into the last one's shape). --expect is the one option that adds up.
std::optional<std::string> repeated(const std::string& w, const std::string& typed, const std::optional<std::string>& inline_value,
                                    const std::string* next, std::map<std::string, std::string>& first_values) {
  if (w == "--expect") return std::nullopt;
  // Two names of one setting are one option given twice.
  static const std::map<std::string, std::string> kSame = {
      {"-h", "--help"}, {"-v", "--verbose"}, {"--percentile_list", "--percentiles"}, {"--steadystate", "--ss"},
      {"--steadystate_duration", "--ss_dur"}, {"--steadystate_ramp_time", "--ss_ramp"}};
  auto same = kSame.find(w);
  const std::string& key = same == kSame.end() ? w : same->second;
  static const std::set<std::string> kFlags = {"--help",    "--version",     "--verbose", "--strict",
                                               "--json",    "--no-tune",     "--apply",   "--restore",
                                               "--paranoid", "--no-paranoid", "--allow-nonzero", "--keep-files"};
  bool takes_value = !kFlags.count(key) && !(key.rfind("--", 0) == 0 && is_switch(key.substr(2)));
  std::string value = inline_value ? *inline_value : takes_value && next && next->rfind("-", 0) != 0 ? *next : "";
  auto [it, first] = first_values.emplace(key, value);
  if (first) return std::nullopt;
  if (w == "--name") {
    return "a second --name (" + excerpt(value) + " after " + excerpt(it->second) +
           ") starts a second job, and one run is one job: for several jobs, put the line after "
           "`diskprobe fio` (diskprobe fio --name=A ... --name=B ...)";
  }
  std::string shown = typed.substr(0, typed.find('='));
  if (key != w) shown = key + " (also as " + shown + ")";
  return shown + " is given twice" +
         (value.empty() && it->second.empty() ? std::string()
                                               : " (" + excerpt(it->second) + ", then " + excerpt(value) + ")") +
         ": give it once (fio would take the last one without a word; several jobs are `diskprobe fio`'s)";
}

}  // namespace

std::optional<Args> parse(int argc, char** argv, std::string& error) {
  Args a;
  std::map<std::string, std::string> first_values;  // option -> its first value, for repeated()
  std::vector<std::pair<std::string, std::string>> typed;
  std::vector<std::string> words(argv + 1, argv + argc);
  for (size_t i = 0; i < words.size(); ++i) {
    if (words[i].size() > kMaxWordBytes) {
      error = "argument " + std::to_string(i + 1) + " ('" + excerpt(words[i], 32) + "') is longer than " +
              std::to_string(kMaxWordBytes) + " bytes: no option, value or path is";
      return std::nullopt;
    }
  }
  for (size_t i = 0; i < words.size(); ++i) {
    std::string w = fio_spelling(words[i]);
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
    // What was given, for not_for_command(): the word as typed, and its row in the table.
    if (w.size() > 1 && w[0] == '-') {
      if (auto why = repeated(w, words[i], inline_value, i + 1 < words.size() ? &words[i + 1] : nullptr, first_values)) {
        error = *why;
        return std::nullopt;
      }
      std::string kind = w;
      if (w == "--ioengine" || (w.rfind("--", 0) == 0 && is_override(w.substr(2)))) kind = "OVERRIDES";
      else if (w.rfind("--", 0) == 0 && profiles::fio_always_done(w.substr(2))) kind = "fio-note";
      typed.emplace_back(words[i].substr(0, words[i].find('=')), kind);
    }
    bool ok = true;
    if (w == "-h" || w == "--help") ok = flag(a.help);
    else if (w == "--version") ok = flag(a.version);
    else if (w == "-v" || w == "--verbose") ok = flag(a.verbose);
    else if (w == "--strict") ok = flag(a.strict);
    else if (w == "--json") ok = flag(a.json);
    else if (w == "--no-tune") ok = flag(a.no_tune);
    else if (w == "--apply") ok = flag(a.apply);
    else if (w == "--restore") ok = flag(a.restore);
    else if (w == "--paranoid") ok = flag(a.paranoid);
    else if (w == "--no-paranoid") ok = flag(a.no_paranoid);
    else if (w == "--allow-nonzero") ok = flag(a.allow_nonzero);
    else if (w == "--sysfs") ok = value(a.sysfs);
    else if (w == "--procfs") ok = value(a.procfs);
    else if (w == "--mode") ok = value(a.mode);
    else if (w == "--profile") ok = value(a.profile);
    else if (w == "--output-format") ok = value(a.output_format);
    else if (w == "--output") ok = value(a.output_file);
    else if (w == "--scratch") ok = value(a.scratch);
    else if (w == "--directory") ok = value(a.directory);
    else if (w == "--keep-files") ok = flag(a.keep_files);
    else if (w == "--expect") ok = value(a.expect.emplace_back());
    else if (w == "--volume") ok = value(a.volume);
    else if (w == "--tolerance") ok = value(a.tolerance);
    else if (w == "--report") ok = value(a.report_file);
    else if (w == "--max-time") ok = value(a.max_time);
    else if (w == "--max-regression") ok = value(a.max_regression);
    else if (w == "--rate-steps") ok = value(a.rate_steps);
    else if (w == "--max-iops") ok = value(a.max_iops);
    else if (w == "--step-time") ok = value(a.step_time);
    else if (w == "--max-iodepth") ok = value(a.max_iodepth);
    else if (w == "--past-knee") ok = value(a.past_knee);
    else if (w == "--name") ok = value(a.name);
    else if (w == "--filename") ok = value(a.filename);
    else if (w == "--ioengine") {
      std::string v;
      ok = value(v);
      auto engine = engine_for(v);
      if (ok && v == "libaio") {
        a.notes.push_back("--ioengine libaio: ran on diskprobe's io_uring engine (the same asynchronous direct "
                          "I/O; libaio itself is not used)");
      }
      if (ok && !engine) {
        error = "--ioengine " + excerpt(v) + ": diskprobe runs io_uring (libaio's job lines run on it too) " +
                "or sync/psync (pread/pwrite)";
        return std::nullopt;
      }
      if (ok) a.overrides["engine"] = *engine;
    } else if (const char* why = w.rfind("--", 0) == 0 ? profiles::fio_always_done(w.substr(2)) : nullptr) {
      std::string key = w.substr(2), v;
      if (key.rfind("iodepth_batch", 0) == 0) {
        ok = value(v);
      } else if (inline_value) {
        v = *inline_value;  // a switch: "--gtod_reduce=1", "--fixedbufs", "--fixedbufs 1"
      } else if (i + 1 < words.size() && is_bool_word(words[i + 1])) {
        v = words[++i];
      }
      if (ok) a.notes.push_back(w + (v.empty() ? "" : "=" + v) + " ignored: " + why);
    } else if (w.rfind("--", 0) == 0 && is_override(w.substr(2))) {
      std::string v;
      // fio's switches (--norandommap, --time_based) stand alone; "--direct 0" still works.
      bool is_sw = !inline_value && is_switch(w.substr(2));
      if (is_sw && i + 1 < words.size() && looks_numeric(words[i + 1]) && !is_bool_word(words[i + 1])) {
        // "--time_based 2": a switch's value, not a DEVICE (kernel names start with a letter).
        error = w + " " + words[i + 1] + ": " + w + " is a switch: give it alone, or 0/1 (" + w + "=0)";
        return std::nullopt;
      }
      if (is_sw && (i + 1 >= words.size() || !is_bool_word(words[i + 1]))) {
        v.assign(1, '1');  // not v = "1": GCC 12 warns -Wrestrict on it
      } else {
        ok = value(v);
      }
      if (ok) a.overrides[w.substr(2)] = v;
    } else if (w.size() > 1 && w[0] == '-') {
      error = "unknown option " + excerpt(w) + ": see 'diskprobe --help'";
      return std::nullopt;
    } else if (a.command.empty()) {
      if (!kCommands.count(w)) {
        error = "unknown command '" + excerpt(w) +
                "': use devices, check, tune, profiles, profile, run, accept, curve, compare or aggregate";
        return std::nullopt;
      }
      a.command = w;
    } else {
      a.positional.push_back(w);
    }
    if (!ok) return std::nullopt;
  }
  if (!a.filename.empty() && !a.positional.empty() && a.command == "run" && a.positional[0] != a.filename) {
    error = "--filename " + excerpt(a.filename) + " and DEVICE " + excerpt(a.positional[0]) +
            " name two targets: give one";
    return std::nullopt;
  }
  if (a.paranoid && a.no_paranoid) {
    error = "--paranoid and --no-paranoid contradict each other: give one";
    return std::nullopt;
  }
  if (!a.report_file.empty() && a.command != "run" && a.command != "accept" && a.command != "curve") {
    error = "--report FILE.html goes with 'run', 'accept' or 'curve': diskprobe run --profile NAME DEVICE --report FILE.html";
    return std::nullopt;
  }
  if (!a.max_time.empty() && a.command != "accept") {
    error = "--max-time goes with 'accept': diskprobe accept DEVICE --volume TYPE:ARG --max-time 600";
    return std::nullopt;
  }
  for (const auto& [option, given] : {std::pair{"--rate-steps", &a.rate_steps}, {"--max-iops", &a.max_iops},
                                      {"--step-time", &a.step_time}, {"--max-iodepth", &a.max_iodepth},
                                      {"--past-knee", &a.past_knee}}) {
    if (!given->empty() && a.command != "curve") {
      error = std::string(option) + " goes with 'curve': diskprobe curve DEVICE --profile NAME " + option + " ...";
      return std::nullopt;
    }
  }
  if (!a.max_regression.empty() && a.command != "compare") {
    error = "--max-regression goes with 'compare': diskprobe compare A.json B.json --max-regression 5%";
    return std::nullopt;
  }
  if (!a.help && !a.version && !a.command.empty()) {
    if (auto why = not_for_command(a, typed)) {
      error = *why;
      return std::nullopt;
    }
  }
  if (a.mode != "write" && a.mode != "read") {
    error = "--mode " + excerpt(a.mode) + ": use write or read";
    return std::nullopt;
  }
  if (const char* root = fixture_root_for_writing(a)) {
    error = std::string(root) + " replaces what the preflight and the tuning trust: it is for reading a fixture "
            "tree (devices, check, tune without --apply), never for a command that writes; drop it";
    return std::nullopt;
  }
  return a;
}

namespace {

// What argv says of JSON output, read without the parser so a usage error knows it too.
struct JsonWords {
  bool json = false, format_json = false, to_file = false;
  JsonFile file;
};

JsonWords json_words(int argc, char** argv) {
  JsonWords r;
  for (int i = 1; i < argc; ++i) {
    std::string w = argv[i];
    if (w == "--") break;
    if (w == "--json") r.json = true;
    if (w == "--output-format=json" ||
        (w == "--output-format" && i + 1 < argc && std::string(argv[i + 1]) == "json"))
      r.format_json = true;
    if (w == "--output" || w.rfind("--output=", 0) == 0) {
      r.to_file = true;
      if (w == "--output" && i + 1 < argc) {
        r.file.path = argv[++i];
      } else if (w != "--output") {
        r.file.path = w.substr(w.find('=') + 1);
      }
      continue;
    }
    // "--filename=./x" names ./x.
    auto eq = w.find('=');
    r.file.others.push_back(w.rfind("--", 0) == 0 && eq != std::string::npos ? w.substr(eq + 1) : w);
  }
  return r;
}

}  // namespace

bool wants_json(int argc, char** argv) {
  auto w = json_words(argc, argv);
  return w.json || (w.format_json && !w.to_file);
}

JsonFile json_file(int argc, char** argv) {
  auto w = json_words(argc, argv);
  if (!w.format_json || w.file.path.empty()) return {};
  return w.file;
}

const char* usage() {
  return R"(diskprobe: benchmark block devices safely, the way the cloud vendors' fio scripts do

usage:
  diskprobe devices [--json]                       block devices, sizes, signatures, verdicts
  diskprobe check DEVICE [--mode write|read] [--json]
                                                   preflight only: exit 0 safe, 3 refused
  diskprobe tune DEVICE [--profile NAME] [OVERRIDES] [--json] [--apply]
                                                   topology, tuning plan and advice; --apply
                                                   sets it and holds until Ctrl-C, then restores;
                                                   host OVERRIDES also --scheduler --nomerges
                                                   --cstate_latency_limit_us; --strict (also for
                                                   run) refuses, exit 2, a plan short of the
                                                   profile (numjobs clamped, scheduler missing)
  diskprobe tune --restore                         restore settings a killed run left changed
  diskprobe profiles [--json]                      built-in and user profiles
  diskprobe profile show NAME [--json]             one profile's parameters
  diskprobe run --profile NAME (DEVICE | --scratch SIZE) [OVERRIDES]
                [--output-format text|json|junit|fio-json|fio-json+|openmetrics] [--output FILE]
                [--report FILE.html] [--no-tune]
                [--expect EXPR]... [--volume TYPE:ARG [--tolerance 95%]]
  diskprobe accept DEVICE --volume TYPE:ARG [--tolerance 95%] [--max-time 600]
                [--output-format text|json|junit|fio-json|fio-json+|openmetrics] [--output FILE]
                [--report FILE.html] [--no-tune]
                                                   the volume's suite: random write and read
                                                   IOPS, sequential read and write, QD1 latency;
                                                   exit 0 all within tolerance, 4 when one is not
  diskprobe curve DEVICE --profile NAME [OVERRIDES] [--max-iodepth N] [--step-time 20s]
                [--rate-steps 10,25,50,75,90,95,100% [--max-iops N]] [--past-knee 1]
                [--output-format text|json] [--report FILE.html] [--no-tune]
                                                   latency against load: queue depth 1, 2, 4 ...
                                                   (or rate caps), one step at a time, until
                                                   --past-knee steps past the knee
  diskprobe fio [FIO FLAGS] [JOB OPTIONS] [JOBFILE...]
                                                   a fio command line or job file as fio runs
                                                   it, from fio's defaults, the target through
                                                   the preflight first (diskprobe fio --help)
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
  --io_size --norandommap --cpus_allowed --cpus_allowed_policy --sqpoll --hipri --force_async
  --iodepth_batch_submit
  --continue_on_error --verify --do_verify --percentiles --group_reporting --sync (bs=4k,16k:
  reads,writes; size=50%); fio's spellings too: -direct=1, --time-based, --name NAME,
  --filename DEVICE, --ioengine io_uring|libaio|sync|psync
--rate_iops R[,W] and --rate R[,W] (7m: bytes/s) cap each job's reads and writes as fio's do.
--ss KIND:LIMIT (--steadystate; iops, iops_slope, bw, bw_slope; 0.2% of the mean or absolute)
  with --ss_dur 10s (--steadystate_duration) and --ss_ramp 5s (--steadystate_ramp_time) ends a
  time_based run once a full window of per-second samples holds still, or at runtime, flagged.
--directory DIR runs on one file of `size` per job in DIR (a filesystem), removed after the
  run unless --keep-files; a regular file works as DEVICE too.
check and run sample a device of 1 GiB or more for data with no signature before writing
  (the first and last MiB and 64 random 4 KiB blocks): --paranoid samples any size,
  --no-paranoid skips it, --allow-nonzero writes over such data. After a write run the
  first and last 4 MiB are zeroed.
--no-tune leaves rq_affinity and C-states alone (jobs are still pinned as the profile says).
--expect iops>=38000, write.lat.p99<=2ms, bw>=350MB/s, errors==0 (repeatable; exit 4 when
  one is not met). --volume essd-pl0..pl3|essd-autopl:SIZE, essd-plx|ebs-io1|ebs-io2:IOPS,
  ebs-gp3:IOPS,MiB/s expects --tolerance (95%) of the provider's published performance;
  custom:iops=N,mbps=M[,lat_ms=L] is a volume outside the catalog (mbps in MiB/s).
--max-time S (accept, default 600) is the suite's time budget, split over its phases; each
  phase ends earlier once steady.
--output FILE writes the chosen format to FILE; the text report still goes to stdout.
curve: --max-iodepth (256) is the last queue-depth step; --step-time (20s) the longest a
  step runs (it ends sooner once steady: the profile's steadystate, else IOPS within 5% over
  5 s); --rate-steps caps the IOPS at shares of --max-iops N, or of the best step of a
  queue-depth sweep run first. The knee: the first step where mean latency grew by more
  than 25% while IOPS gained under 5%, or more than twice as fast as IOPS (log-log).

global: --sysfs PATH --procfs PATH (read topology from another root), -v/--verbose,
        --version, -h/--help
exit codes: 0 success, 1 runtime error, 2 usage error, 3 refused by the preflight,
            4 expectations not met
)";
}

}  // namespace diskprobe::cli
