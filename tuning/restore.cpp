#include "diskprobe/tuning/restore.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <spdlog/spdlog.h>
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>

namespace diskprobe::tuning {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

std::string now_utc() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// A kernel name or attribute: it becomes part of a sysfs path, so no '/' and no "..".
bool safe_component(const std::string& s) {
  if (s.empty() || s == "." || s.find("..") != std::string::npos) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.' || c == ':';
  });
}

// "none [mq-deadline] kyber" -> "mq-deadline": multiple-choice attributes mark the active one.
std::string current_choice(const std::string& value) {
  auto b = value.find('['), e = value.find(']');
  if (b != std::string::npos && e != std::string::npos && e > b) return value.substr(b + 1, e - b - 1);
  return value;
}

// SysRoot errors read "open(path): reason" or "write(path): reason"; the user wants to
// know which value failed to go where: "write(path, value): reason".
std::string write_error(const std::string& path, const std::string& value, const std::string& err) {
  auto p = err.find("): ");
  std::string reason = p == std::string::npos ? err : err.substr(p + 3);
  return "write(" + path + ", " + value + "): " + reason;
}

// The sysfs-relative form of an absolute journal path, or "" when it is not under sysfs.
std::string sysfs_rel(const SysRoot& root, const std::string& path) {
  std::string prefix = root.sysfs() + "/";
  if (path.size() <= prefix.size() || path.compare(0, prefix.size(), prefix) != 0) return "";
  if (path.find("/../") != std::string::npos || path.find("/./") != std::string::npos) return "";
  return path.substr(prefix.size());
}

// Alive and still a diskprobe: after a SIGKILL the pid can be reused by anything, and a
// journal must not wait forever on an unrelated process. Same comm as ours is the test.
bool pid_alive(int pid) {
  if (pid <= 0) return false;
  if (::kill(pid, 0) != 0 && errno != EPERM) return false;
  auto theirs = read_file("/proc/" + std::to_string(pid) + "/comm");
  auto ours = read_file("/proc/self/comm");
  return !theirs || !ours || *theirs == *ours;
}

json journal_json(const std::vector<AppliedSetting>& settings, const std::string& started) {
  json list = json::array();
  for (const auto& s : settings) {
    if (s.what == kCpuDmaLatency || s.what.rfind("/dev/", 0) == 0) continue;
    list.push_back({{"path", s.what}, {"old_value", s.old_value}, {"new_value", s.new_value}});
  }
  return {{"pid", static_cast<int>(::getpid())}, {"started", started}, {"settings", list}};
}

Status write_all(const std::string& path, const std::string& text) {
  auto fd = Fd::open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (!fd) return make_error(fd.error());
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd->get(), text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return make_error(errno_message("write", path, errno));
    done += static_cast<size_t>(n);
  }
  return Ok{};
}

// Writes the journal beside its final name, then moves it into place: a reader never sees
// half a journal. `exclusive` creates it only if absent (link(2) fails with EEXIST).
Status place_journal(const std::string& journal, const std::string& text, bool exclusive) {
  std::error_code ec;
  fs::path dir = fs::path(journal).parent_path();
  if (!dir.empty()) {
    fs::create_directories(dir, ec);
    if (ec) return make_error("mkdir -p " + dir.string() + ": " + ec.message());
  }
  std::string tmp = journal + ".tmp." + std::to_string(::getpid());
  if (auto st = write_all(tmp, text); !st) {
    ::unlink(tmp.c_str());
    return st;
  }
  if (exclusive) {
    int rc = ::link(tmp.c_str(), journal.c_str());
    int err = errno;
    ::unlink(tmp.c_str());
    if (rc != 0) return make_error(errno_message("link", journal, err));
    return Ok{};
  }
  if (::rename(tmp.c_str(), journal.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return make_error(errno_message("rename", journal, err));
  }
  return Ok{};
}

struct Journal {
  int pid = 0;
  std::string started;
  std::vector<AppliedSetting> settings;
};

// Parsing boundary: nlohmann throws, the caller gets a message naming file and field.
Result<Journal> read_journal(const std::string& path) {
  auto text = read_file(path);
  if (!text) return make_error(text.error());
  Journal j;
  std::string field = "(document)";
  try {
    json doc = json::parse(*text);
    field = "pid";
    j.pid = doc.at("pid").get<int>();
    field = "started";
    j.started = doc.value("started", "");
    field = "settings";
    for (const auto& s : doc.at("settings")) {
      field = "settings[].path";
      AppliedSetting a;
      a.what = s.at("path").get<std::string>();
      field = "settings[].old_value";
      a.old_value = s.at("old_value").get<std::string>();
      a.new_value = s.value("new_value", "");
      j.settings.push_back(std::move(a));
    }
  } catch (const json::exception& e) {
    return make_error("journal " + path + ": bad " + field + ": " + e.what());
  }
  return j;
}

std::string busy_message(const std::string& journal, const Journal& j) {
  if (pid_alive(j.pid)) {
    return "another diskprobe run (pid " + std::to_string(j.pid) + ", started " + j.started +
           ") holds host settings recorded in " + journal +
           ": wait for it to finish; two runs would each restore the other's changes";
  }
  return "a diskprobe run (pid " + std::to_string(j.pid) + ", started " + j.started +
         ") was killed before it restored its settings (journal " + journal +
         "): run `diskprobe tune --restore` first";
}

}  // namespace

RestoreGuard::RestoreGuard(const SysRoot& root, std::string journal_path)
    : root_(root), journal_(std::move(journal_path)), started_(now_utc()) {}

RestoreGuard::~RestoreGuard() {
  if (auto st = restore(); !st) spdlog::error("{}", st.error());
}

Status RestoreGuard::claim_journal() const {
  auto st = place_journal(journal_, journal_json(applied_, started_).dump(2) + "\n", /*exclusive=*/true);
  if (st) return st;
  std::error_code ec;
  if (!fs::exists(journal_, ec)) return st;  // a real I/O error, not another run
  auto other = read_journal(journal_);
  if (!other) {
    return make_error("a tuning journal already exists and cannot be read (" + other.error() +
                      "): check it, then run `diskprobe tune --restore` or remove it");
  }
  return make_error(busy_message(journal_, *other));
}

Status RestoreGuard::write_journal() const {
  if (!owns_journal_) return claim_journal();
  return place_journal(journal_, journal_json(applied_, started_).dump(2) + "\n", /*exclusive=*/false);
}

Status RestoreGuard::set(const std::string& rel, const std::string& value) {
  std::string path = root_.sys_path(rel);
  auto cur = root_.read_sys(rel);
  if (!cur) return make_error(cur.error());
  std::string old = current_choice(*cur);
  if (old == value) return Ok{};  // nothing to change, nothing to restore
  // Journal first: if we die between the two writes, `tune --restore` rewrites a value
  // that is already current, which is harmless; the other order could lose the old value.
  applied_.push_back({path, old, value});
  if (auto st = write_journal(); !st) {
    applied_.pop_back();
    return st;
  }
  owns_journal_ = true;
  if (auto st = root_.write_sys(rel, value); !st) {
    applied_.pop_back();
    return make_error(write_error(path, value, st.error()));
  }
  return Ok{};
}

Status RestoreGuard::hold_cstates() {
  if (cpu_dma_latency_.valid()) return Ok{};
  // The PM QoS request lives as long as this fd: closing it (or dying) releases it.
  auto fd = Fd::open(cpu_dma_latency_path_, O_RDWR);
  if (!fd) return make_error(fd.error());
  std::int32_t old = -1;  // the aggregate limit before ours, for the report
  if (::read(fd->get(), &old, sizeof old) != static_cast<ssize_t>(sizeof old)) old = -1;
  std::int32_t zero = 0;
  if (::write(fd->get(), &zero, sizeof zero) != static_cast<ssize_t>(sizeof zero)) {
    int err = errno;
    return make_error("write(" + cpu_dma_latency_path_ + ", 0): " + std::strerror(err));
  }
  cpu_dma_latency_ = std::move(*fd);
  applied_.push_back({cpu_dma_latency_path_, old < 0 ? std::string("unknown") : std::to_string(old), "0"});
  return Ok{};
}

Status RestoreGuard::apply(const std::string& disk, const Plan& plan) {
  if (!safe_component(disk)) return make_error("tuning: bad disk name \"" + disk + "\"");
  for (const auto& q : plan.queue) {
    if (!safe_component(q.attribute))
      return make_error("tuning: bad queue attribute \"" + q.attribute + "\"");
  }
  // A killed run's journal is refused even when this plan would change nothing: the
  // settings it left are the ones this run would measure with, and nobody would undo them.
  if (!owns_journal_) {
    std::error_code ec;
    if (fs::exists(journal_, ec)) {
      auto other = read_journal(journal_);
      if (!other) {
        return make_error("a tuning journal already exists and cannot be read (" + other.error() +
                          "): check it, then run `diskprobe tune --restore` or remove it");
      }
      return make_error(busy_message(journal_, *other));
    }
  }
  for (const auto& c : plan.disable_cstates) {
    // state0 stays: with every state disabled the cpuidle core falls back to it anyway.
    if (c.cpu < 0 || c.state <= 0) {
      return make_error("tuning: bad cpuidle state cpu" + std::to_string(c.cpu) + "/state" +
                        std::to_string(c.state));
    }
  }
  Status st = Ok{};
  for (const auto& q : plan.queue) {
    st = set("block/" + disk + "/queue/" + q.attribute, q.value);
    if (!st) break;
  }
  for (size_t i = 0; st && i < plan.disable_cstates.size(); ++i) {
    const auto& c = plan.disable_cstates[i];
    st = set("devices/system/cpu/cpu" + std::to_string(c.cpu) + "/cpuidle/state" + std::to_string(c.state) +
                 "/disable",
             "1");
  }
  if (st && plan.hold_cstates) st = hold_cstates();
  if (st) return st;
  // All or nothing: a half-tuned host would measure something no profile describes.
  if (auto undo = restore(); !undo) return make_error(st.error() + "; and while undoing: " + undo.error());
  return st;
}

Status RestoreGuard::restore() {
  std::vector<AppliedSetting> kept;  // could not be put back: stay in the journal
  std::string errors;
  for (auto it = applied_.rbegin(); it != applied_.rend(); ++it) {
    if (it->what == cpu_dma_latency_path_) {
      cpu_dma_latency_.reset();
      continue;
    }
    std::string rel = sysfs_rel(root_, it->what);
    auto st = rel.empty() ? Status(make_error(it->what + ": not under " + root_.sysfs()))
                          : root_.write_sys(rel, it->old_value);
    if (!st) {
      errors += (errors.empty() ? "" : "; ") + write_error(it->what, it->old_value, st.error());
      kept.insert(kept.begin(), *it);
    }
  }
  applied_ = std::move(kept);
  if (owns_journal_) {
    if (applied_.empty()) {
      std::error_code ec;
      fs::remove(journal_, ec);
      if (ec) errors += (errors.empty() ? "" : "; ") + ("remove(" + journal_ + "): " + ec.message());
      owns_journal_ = false;
    } else if (auto st = write_journal(); !st) {
      errors += "; " + st.error();
    }
  }
  if (errors.empty()) return Ok{};
  if (!applied_.empty()) {
    errors += "; " + journal_ + " keeps " + std::to_string(applied_.size()) +
              " setting(s) for `diskprobe tune --restore`";
  }
  return make_error("could not restore every setting: " + errors);
}

Result<std::vector<AppliedSetting>> restore_from_journal(const SysRoot& root,
                                                         const std::string& journal_path) {
  std::vector<AppliedSetting> restored;
  std::error_code ec;
  if (!fs::exists(journal_path, ec)) return restored;
  auto j = read_journal(journal_path);
  if (!j) return make_error(j.error());
  if (j->pid != ::getpid() && pid_alive(j->pid)) {
    return make_error("the diskprobe run that wrote " + journal_path + " (pid " + std::to_string(j->pid) +
                      ") is still running: it restores its settings itself when it ends");
  }
  std::vector<AppliedSetting> failed;
  std::string errors;
  for (auto it = j->settings.rbegin(); it != j->settings.rend(); ++it) {
    std::string rel = sysfs_rel(root, it->what);
    // The journal is only root-writable, but a path outside sysfs is never ours to write.
    if (rel.empty()) {
      errors += (errors.empty() ? "" : "; ") + it->what + " is not under " + root.sysfs() + ": skipped";
      continue;
    }
    if (auto st = root.write_sys(rel, it->old_value); !st) {
      errors += (errors.empty() ? "" : "; ") + write_error(it->what, it->old_value, st.error());
      failed.insert(failed.begin(), *it);
      continue;
    }
    restored.push_back(*it);
  }
  if (failed.empty()) {
    fs::remove(journal_path, ec);
    if (ec) errors += (errors.empty() ? "" : "; ") + ("remove(" + journal_path + "): " + ec.message());
  } else {
    json doc = {{"pid", j->pid}, {"started", j->started}, {"settings", json::array()}};
    for (const auto& s : failed) {
      doc["settings"].push_back({{"path", s.what}, {"old_value", s.old_value}, {"new_value", s.new_value}});
    }
    if (auto st = place_journal(journal_path, doc.dump(2) + "\n", false); !st) errors += "; " + st.error();
  }
  if (!errors.empty()) {
    return make_error(
        "restoring from " + journal_path + ": " + errors +
        (failed.empty() ? "" : " (the journal keeps what failed; fix the cause and run again)"));
  }
  return restored;
}

}  // namespace diskprobe::tuning
