#include "diskprobe/profiles/profiles.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>

#include <nlohmann/json.hpp>

#include "diskprobe/core/loop_device.h"
#include "diskprobe/core/sysroot.h"

namespace diskprobe::profiles {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Problems found in one profile or one command line, reported together.
using Problems = std::vector<std::string>;

std::string show(const json& v) { return v.is_string() ? "'" + v.get<std::string>() + "'" : v.dump(); }

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
  const auto& s = v.get_ref<const std::string&>();
  size_t end = 0;
  double d = 0;
  try {
    d = std::stod(s, &end);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (d < 0 || !std::isfinite(d) || (end > 0 && s[0] == '-')) return std::nullopt;
  std::string unit = s.substr(end);
  if (unit.empty() || unit == "s") return d;
  if (unit == "ms") return d / 1000.0;
  if (unit == "us") return d / 1e6;
  if (unit == "m") return d * 60.0;
  if (unit == "h") return d * 3600.0;
  return std::nullopt;
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

const std::vector<Field>& workload_fields() {
  static const std::vector<Field> fields = {
      {"rw", "read, write, randread, randwrite, randrw or readwrite",
       [](JobSpec& s, const json& v) { return v.is_string() && assign(parse_rw(v.get<std::string>()), s.rw); }},
      {"bs", "a block size like 4k or 4096 (bytes), at least 512",
       [](JobSpec& s, const json& v) {
         auto n = as_size(v);
         return in_range(n, 512, 64ull << 20, s.bs);
       }},
      {"iodepth", "a whole number from 1 to 65536",
       [](JobSpec& s, const json& v) { return in_range(as_u64(v), 1, 65536, s.iodepth); }},
      {"numjobs", "a whole number from 1 to 4096",
       [](JobSpec& s, const json& v) { return in_range(as_u64(v), 1, 4096, s.numjobs); }},
      {"runtime", "a duration like 30s, 2m or 30 (seconds)",
       [](JobSpec& s, const json& v) { return assign(as_seconds(v), s.runtime_s); }},
      {"ramp_time", "a duration like 5s",
       [](JobSpec& s, const json& v) { return assign(as_seconds(v), s.ramp_time_s); }},
      {"time_based", "true or false", [](JobSpec& s, const json& v) { return assign(as_bool(v), s.time_based); }},
      {"size", "a size like 1G or 1024g (bytes), 0 for the whole device",
       [](JobSpec& s, const json& v) { return assign(as_size(v), s.size); }},
      {"offset", "a size like 1G (bytes)", [](JobSpec& s, const json& v) { return assign(as_size(v), s.offset); }},
      {"direct", "true or false", [](JobSpec& s, const json& v) { return assign(as_bool(v), s.direct); }},
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
      problems.push_back(where + "." + key + ": unknown field; known fields are " + known);
    } else if (!f->set(spec, value)) {
      problems.push_back(where + "." + key + ": " + show(value) + " is not allowed; use " + f->allowed);
    }
  }
}

std::string join_problems(const std::string& origin, const Problems& problems) {
  std::string msg = origin + ": " + std::to_string(problems.size()) + " problem" +
                    (problems.size() == 1 ? "" : "s") + ": ";
  for (size_t i = 0; i < problems.size(); ++i) msg += (i ? "; " : "") + problems[i];
  return msg;
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
      if (auto text = read_file(p.string())) {
        auto j = json::parse(*text, nullptr, false);
        if (!j.is_discarded() && j.is_object() && j.contains("description") && j["description"].is_string()) {
          info.description = j["description"].get<std::string>();
        } else {
          info.description = "(invalid profile: run 'diskprobe profile show " + name + "' for the errors)";
        }
      }
      found.push_back(std::move(info));
    }
  }
  return found;
}

Result<JobSpec> parse(const std::string& json_text, const std::string& origin) {
  json j;
  try {
    j = json::parse(json_text);
  } catch (const json::parse_error& e) {
    return make_error(origin + ": not valid JSON: " + e.what());
  }
  if (!j.is_object()) return make_error(origin + ": expected a JSON object at the top level");
  JobSpec spec;
  Problems problems;
  for (const auto& [key, value] : j.items()) {
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
    } else {
      problems.push_back(key + ": unknown field; a profile has name, description, source, workload and host");
    }
  }
  if (!j.contains("workload")) problems.push_back("workload: missing; every profile needs a workload object");
  if (!spec.time_based && spec.size == 0 && spec.runtime_s == 0) {
    problems.push_back("workload: neither time_based with a runtime nor a size; the run would never end");
  }
  if (!problems.empty()) return make_error(join_problems(origin, problems));
  return spec;
}

Result<JobSpec> load(std::string_view name_or_path, const std::vector<std::string>& dirs) {
  std::string arg(name_or_path);
  if (arg.empty()) return make_error("empty profile name: see 'diskprobe profiles'");
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
      return make_error("unknown profile '" + arg + "'; known profiles: " + (known.empty() ? "(none found)" : known));
    }
  }
  auto text = read_file(path);
  if (!text) return make_error("profile " + arg + ": " + text.error());
  auto spec = parse(*text, path);
  if (spec && spec->name.empty()) spec->name = fs::path(path).stem().string();
  return spec;
}

Status apply_overrides(JobSpec& spec, const std::map<std::string, std::string>& overrides) {
  Problems problems;
  for (const auto& [key, text] : overrides) {
    const Field* f = find_field(workload_fields(), key);
    if (!f) f = find_field(host_fields(), key);
    if (!f) {
      problems.push_back("--" + key + ": unknown option");
      continue;
    }
    if (!f->set(spec, json(text))) problems.push_back("--" + key + " " + text + ": use " + f->allowed);
  }
  if (!problems.empty()) {
    std::string msg;
    for (size_t i = 0; i < problems.size(); ++i) msg += (i ? "; " : "") + problems[i];
    return make_error(msg);
  }
  return Ok{};
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
