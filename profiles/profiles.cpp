#include "diskprobe/profiles/profiles.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>

#include <nlohmann/json.hpp>

#include "diskprobe/acceptance/expect.h"
#include "diskprobe/base/json_io.h"
#include "diskprobe/device/loop_device.h"
#include "diskprobe/base/problems.h"
#include "diskprobe/base/sysroot.h"
#include "diskprobe/base/units.h"

namespace diskprobe::profiles {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Problems found in one profile or one command line, reported together.
using Problems = std::vector<std::string>;

// A value as an error message quotes it: shortened, so a 10 MB value makes a short line.
std::string show(const json& v) {
  return v.is_string() ? "'" + excerpt(v.get_ref<const std::string&>()) + "'" : excerpt(dump_json(v, -1));
}

// A profile is a page of JSON; a bigger file is a mistake, not a profile.
constexpr size_t kMaxProfileBytes = 1u << 20;
// Problems listed in one message; the rest are counted.
constexpr size_t kMaxProblemsShown = 10;

std::optional<uint64_t> as_u64(const json& v) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer() && v.get<int64_t>() >= 0) return static_cast<uint64_t>(v.get<int64_t>());
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    errno = 0;
    unsigned long long n = std::strtoull(s.c_str(), nullptr, 10);
    if (errno == ERANGE) return std::nullopt;
    return n;
  }
  return std::nullopt;
}

// "auto" as `auto_value`, or a count up to a million.
std::optional<int> auto_or_count(const json& v, int auto_value) {
  if (v.is_string() && v.get_ref<const std::string&>() == "auto") return auto_value;
  auto n = as_u64(v);
  if (!n || *n > 1'000'000) return std::nullopt;
  return static_cast<int>(*n);
}

std::optional<bool> as_bool(const json& v) {
  if (v.is_boolean()) return v.get<bool>();
  if (auto n = as_u64(v); n && *n <= 1) return *n == 1;
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (s == "true" || s == "yes" || s == "on") return true;
    if (s == "false" || s == "no" || s == "off") return false;
  }
  return std::nullopt;
}

std::optional<uint64_t> as_size(const json& v) {
  if (auto n = as_u64(v)) return n;
  if (!v.is_string()) return std::nullopt;
  auto r = parse_size(v.get<std::string>());
  if (!r) return std::nullopt;
  return *r;
}

// "30s", "30", "2m", "500ms", "1h" -> seconds (fio's time suffixes; a bare number is seconds).
std::optional<double> as_seconds(const json& v) {
  if (v.is_number()) {
    double d = v.get<double>();
    return d >= 0 ? std::optional<double>(d) : std::nullopt;
  }
  if (!v.is_string()) return std::nullopt;
  return parse_seconds(v.get_ref<const std::string&>());
}

// "50%" -> 50 (fio's offset=/size= as a share of the device); nullopt when not a percentage.
std::optional<double> as_percent(const json& v) {
  if (!v.is_string()) return std::nullopt;
  auto d = parse_percent(v.get_ref<const std::string&>(), true);
  if (!d || *d > 100) return std::nullopt;
  return d;
}

// The largest block: dd's bs=1G (seed 003) is one 1 GiB write; one buffer of it per slot.
constexpr uint64_t kMaxBs = 1u << 30;

// fio's bs=R,W: "4k" for both directions, "4k,16k" reads 4k and writes 16k, ",16k" only writes.
bool set_bs(JobSpec& s, const json& v) {
  auto one = [](const json& x, uint32_t& out) {
    auto n = as_size(x);
    if (!n || *n < 512 || *n > kMaxBs) return false;
    out = static_cast<uint32_t>(*n);
    return true;
  };
  if (!v.is_string() || v.get_ref<const std::string&>().find(',') == std::string::npos) {
    if (!one(v, s.bs)) return false;
    s.bs_write = 0;
    return true;
  }
  const auto& text = v.get_ref<const std::string&>();
  size_t comma = text.find(',');
  std::string r = text.substr(0, comma), w = text.substr(comma + 1);
  if (w.empty() || w.find(',') != std::string::npos) return false;
  uint32_t rb = s.bs, wb = 0;
  if (!r.empty() && !one(json(r), rb)) return false;
  if (!one(json(w), wb)) return false;
  s.bs = rb;
  s.bs_write = wb == rb ? 0 : wb;
  return true;
}

struct Field {
  const char* key;
  const char* allowed;  // said in the error when the value is wrong
  std::function<bool(JobSpec&, const json&)> set;
};

template <class T>
bool assign(std::optional<T> v, T& out) {
  if (!v) return false;
  out = *v;
  return true;
}

bool in_range(std::optional<uint64_t> v, uint64_t lo, uint64_t hi, uint32_t& out) {
  if (!v || *v < lo || *v > hi) return false;
  out = static_cast<uint32_t>(*v);
  return true;
}

// A JSON array [50, 99.9] or fio's "50:99:99.9" / "50,99,99.9".
bool set_percentiles(JobSpec& s, const json& v) {
  if (v.is_array()) {
    std::string t;
    for (const auto& x : v) t += (t.empty() ? "" : ",") + (x.is_string() ? x.get<std::string>() : x.dump());
    return assign(parse_percentile_list(t), s.percentiles);
  }
  return v.is_string() && assign(parse_percentile_list(v.get<std::string>()), s.percentiles);
}

// A field fio writes as text that a profile may give as a number too ("rate_iops": 1237).
std::optional<std::string> as_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_unsigned()) return std::to_string(v.get<uint64_t>());
  return std::nullopt;
}

bool set_rate(const json& v, bool bytes, uint64_t (&out)[2]) {
  auto t = as_text(v);
  auto r = t ? parse_rate(*t, bytes) : std::nullopt;
  if (!r) return false;
  out[0] = (*r)[0];
  out[1] = (*r)[1];
  return true;
}

// ss= sets the criterion; ss_dur and ss_ramp are their own fields.
bool set_steadystate(JobSpec& s, const json& v) {
  auto t = as_text(v);
  auto ss = t ? parse_steadystate(*t) : std::nullopt;
  if (!ss) return false;
  s.steadystate.kind = ss->kind;
  s.steadystate.limit = ss->limit;
  s.steadystate.percent = ss->percent;
  return true;
}

// fio's ss_dur: the window, and the switch: 0 turns steadystate off, a window without a
// criterion gets fio's default one, iops_slope:0.01%.
bool set_steadystate_duration(JobSpec& s, const json& v) {
  auto d = as_seconds(v);
  if (!d) return false;
  SteadyState& ss = s.steadystate;
  ss.duration_s = *d;
  if (*d == 0) {
    ss.kind = SteadyStateKind::None;
  } else if (!ss.enabled()) {
    ss.kind = SteadyStateKind::IopsSlope;
    ss.limit = 0.01;
    ss.percent = true;
  }
  return true;
}

constexpr const char* kSteadyAllowed =
    "KIND:LIMIT with KIND iops, iops_slope, bw or bw_slope and LIMIT a share of the mean like 0.2% or an "
    "absolute IOPS or bytes/s like 10m (iops:0.2%, bw_slope:2%), or none";

const std::vector<Field>& workload_fields() {
  static const std::vector<Field> fields = {
      {"rw", "read, write, randread, randwrite, randrw or readwrite",
       [](JobSpec& s, const json& v) { return v.is_string() && assign(parse_rw(v.get<std::string>()), s.rw); }},
      {"bs", "a block size like 4k or 4096 (bytes), 512 to 1G, or reads,writes like 4k,16k", set_bs},
      {"iodepth", "a whole number from 1 to 65536",
       [](JobSpec& s, const json& v) { return in_range(as_u64(v), 1, 65536, s.iodepth); }},
      {"numjobs", "a whole number from 1 to 4096",
       [](JobSpec& s, const json& v) { return in_range(as_u64(v), 1, 4096, s.numjobs); }},
      {"runtime", "a duration like 30s, 2m or 30 (seconds)",
       [](JobSpec& s, const json& v) { return assign(as_seconds(v), s.runtime_s); }},
      {"ramp_time", "a duration like 5s",
       [](JobSpec& s, const json& v) { return assign(as_seconds(v), s.ramp_time_s); }},
      {"startdelay", "a duration like 4s (the job starts that long after the jobs it runs with)",
       [](JobSpec& s, const json& v) { return assign(as_seconds(v), s.startdelay_s); }},
      {"loops", "a whole number from 1 to 1000000 (a size-bounded job does its bytes that many times)",
       [](JobSpec& s, const json& v) { return in_range(as_u64(v), 1, 1000000, s.loops); }},
      {"number_ios", "a whole number of I/Os (each job stops after that many, if not before; 0 = no cap)",
       [](JobSpec& s, const json& v) { return assign(as_u64(v), s.number_ios); }},
      {"time_based", "true or false", [](JobSpec& s, const json& v) { return assign(as_bool(v), s.time_based); }},
      {"size", "a size like 1G or 1024g (bytes), a share of the device like 50%, 0 for the whole device",
       [](JobSpec& s, const json& v) {
         if (auto pct = as_percent(v)) {
           s.size_percent = *pct;
           s.size = 0;
           return true;
         }
         s.size_percent = 0;
         return assign(as_size(v), s.size);
       }},
      {"offset", "a size like 1G (bytes) or a share of the device like 25%",
       [](JobSpec& s, const json& v) {
         if (auto pct = as_percent(v); pct && *pct < 100) {
           s.offset_percent = *pct;
           s.offset = 0;
           return true;
         }
         s.offset_percent = 0;
         return assign(as_size(v), s.offset);
       }},
      {"io_size", "a size like 10G (bytes each job transfers), 0 for size",
       [](JobSpec& s, const json& v) { return assign(as_size(v), s.io_size); }},
      {"norandommap", "true or false", [](JobSpec& s, const json& v) { return assign(as_bool(v), s.norandommap); }},
      {"cpus_allowed", "a CPU list like 0-3,6",
       [](JobSpec& s, const json& v) {
         if (v.is_string() && v.get_ref<const std::string&>().empty()) {
           s.cpus_allowed.clear();
           return true;
         }
         std::string text = v.is_string() ? v.get<std::string>() : v.dump();
         return assign(parse_cpus_allowed(text), s.cpus_allowed);
       }},
      {"cpus_allowed_policy", "shared or split",
       [](JobSpec& s, const json& v) {
         if (!v.is_string()) return false;
         const auto& t = v.get_ref<const std::string&>();
         if (t != "shared" && t != "split") return false;
         s.cpus_allowed_split = t == "split";
         return true;
       }},
      {"sqpoll", "true or false", [](JobSpec& s, const json& v) { return assign(as_bool(v), s.sqpoll); }},
      {"hipri", "true or false", [](JobSpec& s, const json& v) { return assign(as_bool(v), s.hipri); }},
      {"force_async", "auto or a count N >= 0 (every Nth I/O async; 0 never)",
       [](JobSpec& s, const json& v) { return assign(auto_or_count(v, JobSpec::kForceAsyncAuto), s.force_async); }},
      {"iodepth_batch_submit", "auto or a count N >= 0 (new I/Os per io_uring_enter; 0 all at once)",
       [](JobSpec& s, const json& v) {
         return assign(auto_or_count(v, JobSpec::kBatchSubmitAuto), s.iodepth_batch_submit);
       }},
      {"continue_on_error", "none, read, write, io, verify or all",
       [](JobSpec& s, const json& v) {
         std::string t = v.is_string() ? v.get<std::string>() : v.dump();
         return assign(parse_continue_on_error(t), s.continue_on_error);
       }},
      {"verify", "crc32c or none",
       [](JobSpec& s, const json& v) { return v.is_string() && assign(parse_verify(v.get<std::string>()), s.verify); }},
      {"do_verify", "true or false", [](JobSpec& s, const json& v) { return assign(as_bool(v), s.do_verify); }},
      {"group_reporting", "true or false",
       [](JobSpec& s, const json& v) { return assign(as_bool(v), s.group_reporting); }},
      {"percentiles", "a list like 50,99,99.9 (each above 0, at most 100)", set_percentiles},
      {"percentile_list", "a list like 50:99:99.9 (fio's name for percentiles)", set_percentiles},
      {"rate_iops", "I/Os per second per job, R or R,W (reads,writes; R, or ,W caps one; 0 = no cap), like 1237",
       [](JobSpec& s, const json& v) { return set_rate(v, false, s.rate_iops); }},
      {"rate", "bytes per second per job, R or R,W in fio's units, like 7m or 10m,2m (0 = no cap)",
       [](JobSpec& s, const json& v) { return set_rate(v, true, s.rate_bytes); }},
      {"steadystate", kSteadyAllowed, set_steadystate},
      {"ss", kSteadyAllowed, set_steadystate},
      {"ss_dur", "a duration like 30s (the steadystate window, whole seconds; 0 = off)", set_steadystate_duration},
      {"steadystate_duration", "a duration like 30s (fio's name for ss_dur)", set_steadystate_duration},
      {"ss_ramp", "a duration like 10s (before the first steadystate sample)",
       [](JobSpec& s, const json& v) { return assign(as_seconds(v), s.steadystate.ramp_s); }},
      {"steadystate_ramp_time", "a duration like 10s (fio's name for ss_ramp)",
       [](JobSpec& s, const json& v) { return assign(as_seconds(v), s.steadystate.ramp_s); }},
      {"direct", "true or false", [](JobSpec& s, const json& v) { return assign(as_bool(v), s.direct); }},
      {"sync", "true or false (O_SYNC)", [](JobSpec& s, const json& v) { return assign(as_bool(v), s.sync); }},
      {"rwmixread", "a percentage from 0 to 100",
       [](JobSpec& s, const json& v) {
         auto n = as_u64(v);
         if (!n || *n > 100) return false;
         s.rwmixread = static_cast<unsigned>(*n);
         return true;
       }},
      {"randrepeat", "true or false", [](JobSpec& s, const json& v) { return assign(as_bool(v), s.randrepeat); }},
      {"randseed", "a whole number", [](JobSpec& s, const json& v) { return assign(as_u64(v), s.randseed); }},
      {"refill_buffers", "true or false",
       [](JobSpec& s, const json& v) { return assign(as_bool(v), s.refill_buffers); }},
      {"engine", "io_uring or sync",
       [](JobSpec& s, const json& v) { return v.is_string() && assign(parse_engine(v.get<std::string>()), s.engine); }},
      {"directory", "an absolute directory path, or empty for the device itself",
       [](JobSpec& s, const json& v) {
         if (!v.is_string()) return false;
         const auto& d = v.get_ref<const std::string&>();
         if (!d.empty() && d[0] != '/') return false;
         s.directory = d;
         return true;
       }},
  };
  return fields;
}

const std::vector<Field>& host_fields() {
  static const std::vector<Field> fields = {
      {"rq_affinity", "0, 1 or 2",
       [](JobSpec& s, const json& v) {
         auto n = as_u64(v);
         if (!n || *n > 2) return false;
         s.host.rq_affinity = static_cast<int>(*n);
         return true;
       }},
      {"pinning", "none, irq or hw-queues",
       [](JobSpec& s, const json& v) {
         return v.is_string() && assign(parse_pinning(v.get<std::string>()), s.host.pinning);
       }},
      {"hold_cstates", "true or false",
       [](JobSpec& s, const json& v) { return assign(as_bool(v), s.host.hold_cstates); }},
      {"advise_idle_poll", "true or false",
       [](JobSpec& s, const json& v) { return assign(as_bool(v), s.host.advise_idle_poll); }},
      {"scheduler", "an I/O scheduler name like none, mq-deadline, kyber or bfq",
       [](JobSpec& s, const json& v) {
         if (!v.is_string()) return false;
         const auto& name = v.get_ref<const std::string&>();
         // It becomes a sysfs write: a kernel name, nothing else.
         if (name.empty() || name.size() > 32 ||
             name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-_") != std::string::npos) {
           return false;
         }
         s.host.scheduler = name;
         return true;
       }},
      {"nomerges", "0, 1 or 2",
       [](JobSpec& s, const json& v) {
         auto n = as_u64(v);
         if (!n || *n > 2) return false;
         s.host.nomerges = static_cast<int>(*n);
         return true;
       }},
      {"cstate_latency_limit_us", "a whole number of microseconds (0 disables every C-state but state0)",
       [](JobSpec& s, const json& v) {
         auto n = as_u64(v);
         if (!n || *n > 100000000) return false;
         s.host.cstate_latency_limit_us = static_cast<unsigned>(*n);
         return true;
       }},
  };
  return fields;
}

const Field* find_field(const std::vector<Field>& fields, std::string_view key) {
  for (const auto& f : fields) {
    if (key == f.key) return &f;
  }
  return nullptr;
}

void apply_object(JobSpec& spec, const json& obj, const std::vector<Field>& fields, const std::string& where,
                  Problems& problems) {
  if (!obj.is_object()) {
    problems.push_back(where + ": expected an object, found " + obj.type_name());
    return;
  }
  for (const auto& [key, value] : obj.items()) {
    const Field* f = find_field(fields, key);
    if (!f) {
      std::string known;
      for (const auto& g : fields) known += (known.empty() ? "" : ", ") + std::string(g.key);
      problems.push_back(where + "." + excerpt(key) + ": unknown field; known fields are " + known);
    } else if (!f->set(spec, value)) {
      problems.push_back(where + "." + key + ": " + show(value) + " is not allowed; use " + f->allowed);
    }
  }
}

bool looks_like_path(std::string_view s) {
  return s.find('/') != std::string_view::npos || (s.size() > 5 && s.substr(s.size() - 5) == ".json");
}

}  // namespace

// <prefix>/bin/diskprobe -> <prefix>/share/diskprobe/profiles: an installed package, or one
// unpacked anywhere with `dpkg -x`, finds its own profiles whatever prefix it was built for.
static std::string beside_executable() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec || exe.empty()) return {};
  return (exe.parent_path().parent_path() / "share" / "diskprobe" / "profiles").string();
}

std::vector<std::string> search_dirs() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("DISKPROBE_PROFILE_DIR"); env && *env) dirs.emplace_back(env);
  if (auto beside = beside_executable(); !beside.empty()) dirs.push_back(beside);
  dirs.emplace_back(DISKPROBE_PROFILE_SOURCE_DIR);
  dirs.emplace_back(DISKPROBE_PROFILE_INSTALL_DIR);
  if (const char* home = std::getenv("HOME"); home && *home) {
    dirs.push_back(std::string(home) + "/.config/diskprobe/profiles");
  }
  return dirs;
}

std::vector<ProfileInfo> list(const std::vector<std::string>& dirs) {
  std::vector<ProfileInfo> found;
  for (const auto& dir : dirs) {
    std::error_code ec;
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      if (e.path().extension() == ".json") files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& p : files) {
      std::string name = p.stem().string();
      bool shadowed = std::any_of(found.begin(), found.end(), [&](const ProfileInfo& i) { return i.name == name; });
      if (shadowed) continue;
      ProfileInfo info{name, "", p.string()};
      if (auto text = read_file(p.string(), kMaxProfileBytes)) {
        auto parsed = parse_json(*text, p.string());
        static const json kInvalid;
        const json& j = parsed ? *parsed : kInvalid;
        if (j.is_object() && j.contains("description") && j["description"].is_string()) {
          info.description = j["description"].get<std::string>();
        } else if (j.is_object() && j.contains("extends") && j["extends"].is_string()) {
          info.description = "extends " + excerpt(j["extends"].get_ref<const std::string&>());
        } else {
          info.description = "(invalid profile: run 'diskprobe profile show " + name + "' for the errors)";
        }
      }
      found.push_back(std::move(info));
    }
  }
  return found;
}

namespace {

constexpr int kMaxExtendsDepth = 8;

Result<JobSpec> load_at(std::string_view name_or_path, const std::vector<std::string>& dirs, int depth);

std::optional<std::vector<std::string>> as_strings(const json& v) {
  if (!v.is_array()) return std::nullopt;
  std::vector<std::string> out;
  for (const auto& e : v) {
    if (!e.is_string()) return std::nullopt;
    out.push_back(e.get<std::string>());
  }
  return out;
}

Result<JobSpec> parse_at(const std::string& json_text, const std::string& origin, const std::vector<std::string>& dirs,
                         int depth) {
  auto doc = parse_json(json_text, origin);
  if (!doc) return make_error(doc.error());
  const json& j = *doc;
  if (!j.is_object()) return make_error(origin + ": expected a JSON object at the top level");
  JobSpec spec;
  Problems problems;
  // "extends": start from another profile (a built-in name or a path relative to this file)
  // and change only what this file says.
  if (j.contains("extends")) {
    const json& base = j["extends"];
    if (!base.is_string() || base.get<std::string>().empty()) {
      problems.push_back("extends: " + show(base) + " is not allowed; use the name of a profile or a path to one");
    } else if (depth >= kMaxExtendsDepth) {
      problems.push_back("extends: more than " + std::to_string(kMaxExtendsDepth) +
                         " levels of extends; is there a cycle?");
    } else {
      std::string b = base.get<std::string>();
      if (looks_like_path(b) && b[0] != '/') b = (fs::path(origin).parent_path() / b).string();
      auto parent = load_at(b, dirs, depth + 1);
      if (!parent) {
        problems.push_back("extends: " + parent.error());
      } else {
        spec = std::move(*parent);
        spec.name.clear();  // the extending file names itself
      }
    }
  }
  bool has_workload = j.contains("workload") || j.contains("extends");
  for (const auto& [key, value] : j.items()) {
    if (key == "extends") continue;
    if (key == "name" || key == "description" || key == "source") {
      if (!value.is_string()) {
        problems.push_back(key + ": expected a string, found " + value.type_name());
        continue;
      }
      std::string s = value.get<std::string>();
      (key == "name" ? spec.name : key == "description" ? spec.description : spec.source) = s;
    } else if (key == "workload") {
      apply_object(spec, value, workload_fields(), "workload", problems);
    } else if (key == "host") {
      apply_object(spec, value, host_fields(), "host", problems);
    } else if (key == "expect") {
      auto list = as_strings(value);
      if (!list) {
        problems.push_back("expect: expected an array of expressions like [\"iops>=38000\"], found " +
                           show(value));
        continue;
      }
      for (const auto& e : *list) {
        auto parsed = parse_expectation(e);
        if (!parsed) problems.push_back("expect: " + parsed.error());
      }
      spec.expect = *list;
    } else if (key == "notes") {
      auto list = as_strings(value);
      if (!list) {
        problems.push_back("notes: expected an array of strings, found " + show(value));
        continue;
      }
      spec.notes = *list;
    } else {
      problems.push_back(excerpt(key) +
                         ": unknown field; a profile has name, description, source, extends, workload, host, "
                         "expect and notes");
    }
  }
  if (!has_workload) problems.push_back("workload: missing; every profile needs a workload object (or extends one)");
  if (!spec.time_based && spec.size == 0 && spec.size_percent == 0 && spec.io_size == 0 && spec.runtime_s == 0) {
    problems.push_back("workload: neither time_based with a runtime nor a size; the run would never end");
  }
  if (!problems.empty()) return make_error(join_problems(origin, problems, kMaxProblemsShown));
  return spec;
}

Result<JobSpec> load_at(std::string_view name_or_path, const std::vector<std::string>& dirs, int depth) {
  std::string arg(name_or_path);
  if (arg.empty()) return make_error("empty profile name: see 'diskprobe profiles'");
  if (arg.size() > 4096) {  // PATH_MAX: no name or path is longer
    return make_error("profile '" + excerpt(arg) + "': longer than any path; give a profile's name or file");
  }
  std::string path;
  if (looks_like_path(arg)) {
    path = arg;
  } else {
    for (const auto& info : list(dirs)) {
      if (info.name == arg) {
        path = info.path;
        break;
      }
    }
    if (path.empty()) {
      std::string known;
      for (const auto& info : list(dirs)) known += (known.empty() ? "" : ", ") + info.name;
      return make_error("unknown profile '" + excerpt(arg) +
                        "'; known profiles: " + (known.empty() ? "(none found)" : known));
    }
  }
  auto text = read_file(path, kMaxProfileBytes);
  if (!text) return make_error("profile " + excerpt(arg) + ": " + text.error());
  auto spec = parse_at(*text, path, dirs, depth);
  if (spec && spec->name.empty()) spec->name = fs::path(path).stem().string();
  return spec;
}

}  // namespace

Result<JobSpec> parse(const std::string& json_text, const std::string& origin, const std::vector<std::string>& dirs) {
  return parse_at(json_text, origin, dirs, 0);
}

Result<JobSpec> load(std::string_view name_or_path, const std::vector<std::string>& dirs) {
  return load_at(name_or_path, dirs, 0);
}

Status set_field(JobSpec& spec, const std::string& key, const std::string& text) {
  const Field* f = find_field(workload_fields(), key);
  if (!f) f = find_field(host_fields(), key);
  if (!f) return make_error("unknown option");
  if (!f->set(spec, json(text))) return make_error(std::string("use ") + f->allowed);
  return Ok{};
}

Status apply_overrides(JobSpec& spec, const std::map<std::string, std::string>& overrides) {
  Problems problems;
  for (const auto& [key, text] : overrides) {
    auto st = set_field(spec, key, text);
    if (st) continue;
    if (st.error() == "unknown option") {
      problems.push_back("--" + excerpt(key) + ": unknown option");
    } else {
      problems.push_back("--" + key + " " + excerpt(text) + ": " + st.error());
    }
  }
  return problems_status(problems);
}

const std::vector<std::string>& override_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (const auto& f : workload_fields()) k.emplace_back(f.key);
    for (const auto& f : host_fields()) k.emplace_back(f.key);
    return k;
  }();
  return keys;
}

}  // namespace diskprobe::profiles
