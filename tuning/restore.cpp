#include "diskprobe/tuning/restore.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <spdlog/spdlog.h>
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "diskprobe/base/json_io.h"
#include "diskprobe/base/write_out.h"

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

// "block/loop3/queue/rq_affinity" -> "loop3"; "" for a host setting (cpuidle states).
std::string disk_of(const std::string& rel) {
  if (rel.rfind("block/", 0) != 0) return "";
  return rel.substr(6, rel.find('/', 6) == std::string::npos ? std::string::npos : rel.find('/', 6) - 6);
}

void append(std::string& errors, const std::string& e) { errors += (errors.empty() ? "" : "; ") + e; }

// Field 22 of /proc/PID/stat; the fields after the ')' that ends comm start at field 3.
std::optional<unsigned long long> start_time_of(int pid) {
  auto stat = SysRoot().read_proc(std::to_string(pid) + "/stat");
  if (!stat) return std::nullopt;
  auto paren = stat->rfind(')');
  if (paren == std::string::npos) return std::nullopt;
  std::istringstream in(stat->substr(paren + 1));
  std::string field;
  for (int i = 3; i <= 22 && (in >> field); ++i) {
    if (i == 22) return std::strtoull(field.c_str(), nullptr, 10);
  }
  return std::nullopt;
}

struct Journal {
  std::string device, diskseq;  // device journals only
  std::vector<Owner> holders;
  std::vector<AppliedSetting> settings;
};

json journal_json(const Journal& j) {
  json holders = json::array(), settings = json::array();
  for (const auto& h : j.holders) {
    holders.push_back(
        {{"pid", h.pid}, {"start_time", h.start_time}, {"boot_id", h.boot_id}, {"started", h.started}});
  }
  for (const auto& s : j.settings) {
    settings.push_back({{"path", s.what}, {"old_value", s.old_value}, {"new_value", s.new_value}});
  }
  json doc = {{"holders", holders}, {"settings", settings}};
  if (!j.device.empty()) doc["device"] = j.device;
  if (!j.diskseq.empty()) doc["diskseq"] = j.diskseq;
  return doc;
}

// Writes the journal beside its final name, then moves it into place: a reader never sees
// half a journal. `exclusive` creates it only if absent (link(2) fails with EEXIST).
Status place_journal(const std::string& journal, const Journal& j, bool exclusive) {
  std::error_code ec;
  fs::path dir = fs::path(journal).parent_path();
  if (!dir.empty()) {
    fs::create_directories(dir, ec);
    if (ec) return make_error("mkdir -p " + dir.string() + ": " + ec.message());
  }
  std::string tmp = journal + ".tmp." + std::to_string(::getpid());
  if (auto st = write_file(tmp, dump_json(journal_json(j)) + "\n", 0600); !st) {
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

// Parsing boundary: nlohmann throws, the caller gets a message naming file and field. An
// older journal has one top-level "pid" and "started" instead of "holders".
Result<Journal> read_journal(const std::string& path) {
  auto text = read_file(path);
  if (!text) return make_error(text.error());
  Journal j;
  auto parsed = parse_json(*text, "journal " + path);  // depth and number limits: a journal is input too
  if (!parsed) return make_error(parsed.error());
  std::string field = "(document)";
  try {
    const json& doc = *parsed;
    field = "device";
    j.device = doc.value("device", "");
    j.diskseq = doc.value("diskseq", "");
    field = "pid";
    if (doc.contains("pid")) j.holders.push_back({doc.at("pid").get<int>(), 0, doc.value("started", "")});
    field = "holders";
    for (const auto& h : doc.value("holders", json::array())) {
      j.holders.push_back({h.at("pid").get<int>(), h.value("start_time", 0ull), h.value("started", ""),
                           h.value("boot_id", "")});
    }
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

bool same(const Owner& a, const Owner& b) {
  return a.pid == b.pid && a.start_time == b.start_time && a.boot_id == b.boot_id;
}

// The kernel's id for this boot: a journal of an earlier boot names a pid and start time that
// may belong to anything now (/run is tmpfs, but a journal directory may be elsewhere). It
// cannot change while this process lives: read once.
const std::string& boot_id() {
  static const std::string id = [] {
    auto r = SysRoot().read_proc("sys/kernel/random/boot_id");
    return r ? *r : std::string();
  }();
  return id;
}

// Drops the holders that are dead (or are this process); true when one is left.
bool keep_live_holders(Journal& j, const Owner& self) {
  std::erase_if(j.holders, [&](const Owner& h) { return same(h, self) || !alive(h); });
  return !j.holders.empty();
}

std::string owner_text(const Owner& o) {
  return "pid " + std::to_string(o.pid) + (o.started.empty() ? "" : ", started " + o.started);
}

std::string busy_message(const std::string& journal, const Journal& j) {
  Owner self = this_process();
  for (const auto& h : j.holders) {
    if (!same(h, self) && alive(h)) {
      return "another diskprobe run (" + owner_text(h) + ") holds host settings recorded in " + journal +
             ": wait for it to finish; two runs would each restore the other's changes";
    }
  }
  Owner who = j.holders.empty() ? Owner{} : j.holders.front();
  return "a diskprobe run (" + owner_text(who) + ") was killed before it restored its settings (journal " +
         journal + "): run `diskprobe tune --restore` first";
}

std::string unreadable(const std::string& err) {
  return "a tuning journal already exists and cannot be read (" + err +
         "): check it, then run `diskprobe tune --restore` or remove it";
}

// The journals' directory, locked for a read-modify-write of host.json (flock: released
// however the process ends).
class DirLock {
 public:
  explicit DirLock(const std::string& dir) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    auto fd = Fd::open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (!fd) {
      error_ = fd.error();
      return;
    }
    while (::flock(fd->get(), LOCK_EX) != 0) {
      if (errno != EINTR) {
        error_ = errno_message("flock", dir, errno);
        return;
      }
    }
    fd_ = std::move(*fd);
  }
  const std::string& error() const { return error_; }

 private:
  Fd fd_;
  std::string error_;
};

// What became of a journalled device setting since the run that wrote it.
enum class Since {
  same_device,  // the journal's diskseq, or nothing to tell it by: put the old value back
  gone,         // no such node: the queue went with the device, nothing is left changed
  ours,         // another diskseq, still the value the run set: put the old value back
  back,         // another diskseq, the old value already: nothing to do
  changed,      // another diskseq and a third value: someone else's now, left alone
};

// A loop device keeps its queue, and every setting in it, through detach and attach; only
// the diskseq moves (6.18: nomerges, rq_affinity and scheduler unchanged across `losetup -d`
// and a new attach, diskseq +1 each; LOOP_CTL_REMOVE and a new add reset them to the
// defaults). So another diskseq under the same name does not mean the settings are gone:
// the value that is there now tells.
Since since(const SysRoot& root, const Journal& j, const std::string& rel, const AppliedSetting& s) {
  std::string disk = disk_of(rel);
  if (disk.empty()) return Since::same_device;
  if (!root.sys_exists("block/" + disk)) return Since::gone;
  if (j.diskseq.empty() || disk != j.device) return Since::same_device;
  auto seq = root.read_sys("block/" + disk + "/diskseq");
  if (seq && *seq == j.diskseq) return Since::same_device;
  auto now = root.read_sys(rel);
  if (!now) return Since::gone;  // the node, but not this attribute: the queue went
  std::string value = current_choice(*now);
  if (value == s.old_value) return Since::back;
  if (value == s.new_value) return Since::ours;
  return Since::changed;
}

struct Undone {
  std::vector<AppliedSetting> restored, gone, already, failed;  // failed: oldest first, for the journal
  std::string errors;
};

// Puts `settings` back newest first.
Undone undo(const SysRoot& root, const Journal& j, const std::vector<AppliedSetting>& settings) {
  Undone u;
  for (auto it = settings.rbegin(); it != settings.rend(); ++it) {
    std::string rel = sysfs_rel(root, it->what);
    // The journal is only root-writable, but a path outside sysfs is never ours to write.
    if (rel.empty()) {
      append(u.errors, it->what + " is not under " + root.sysfs() + ": skipped");
      continue;
    }
    switch (since(root, j, rel, *it)) {
      case Since::gone:
        u.gone.push_back(*it);
        continue;
      case Since::back:
        u.already.push_back(*it);
        continue;
      case Since::changed: {
        // Not ours to write any more, and not what it was before the run either: say so
        // (exit 1), but do not keep it in the journal, where it would block every later run.
        auto now = root.read_sys(rel);
        append(u.errors, "not restored " + it->what + ": it is now " + current_choice(now ? *now : "?") +
                             ", not the " + it->new_value + " the run set (its device was detached or " +
                             "replaced since, and someone set it); it was " + it->old_value +
                             " before the run: write that back yourself if it should be");
        continue;
      }
      case Since::same_device:
      case Since::ours:
        break;
    }
    if (auto st = root.write_sys(rel, it->old_value); !st) {
      append(u.errors, write_error(it->what, it->old_value, st.error()));
      u.failed.insert(u.failed.begin(), *it);
      continue;
    }
    u.restored.push_back(*it);
  }
  return u;
}

// The journal after an undo: removed when nothing failed, else rewritten with what did.
void settle(const std::string& path, Journal j, const Undone& u, std::string& errors) {
  append(errors, u.errors);
  std::error_code ec;
  if (u.failed.empty()) {
    fs::remove(path, ec);
    if (ec) append(errors, "remove(" + path + "): " + ec.message());
    return;
  }
  j.settings = u.failed;
  if (auto st = place_journal(path, j, false); !st) append(errors, st.error());
}

struct JournalOutcome {
  Undone undone;
  bool live = false;  // a holder still runs: left alone
  std::string error;  // "" = fine
};

JournalOutcome restore_journal(const SysRoot& root, const std::string& path) {
  JournalOutcome out;
  std::error_code ec;
  if (!fs::exists(path, ec)) return out;
  DirLock lock(fs::path(path).parent_path().string());
  if (!lock.error().empty()) {
    out.error = lock.error();
    return out;
  }
  auto j = read_journal(path);
  if (!j) {
    out.error = j.error();
    return out;
  }
  Journal rest = *j;
  if (keep_live_holders(rest, this_process())) {
    out.live = true;
    const Owner& run = rest.holders.front();
    out.error = "run pid " + std::to_string(run.pid) + " is alive: left alone (" + path +
                (run.started.empty() ? "" : ", started " + run.started) +
                "; it restores its settings itself when it ends)";
    return out;
  }
  out.undone = undo(root, *j, j->settings);
  settle(path, rest, out.undone, out.error);
  if (!out.error.empty()) {
    out.error =
        "restoring from " + path + ": " + out.error +
        (out.undone.failed.empty() ? "" : " (the journal keeps what failed; fix the cause and run again)");
  }
  return out;
}

// A device journal is one run's: any is refused. host.json is shared: refused only when
// every run holding it is gone and it still has settings (a killed run left them changed).
Status refuse_leftovers(const std::string& path, bool device) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return Ok{};
  auto other = read_journal(path);
  if (!other) return make_error(unreadable(other.error()));
  Journal live = *other;
  if (!device && (keep_live_holders(live, this_process()) || other->settings.empty())) return Ok{};
  return make_error(busy_message(path, *other));
}

}  // namespace

std::string device_journal(const std::string& dir, const std::string& disk) {
  return dir + "/" + disk + ".json";
}
std::string host_journal(const std::string& dir) { return dir + "/host.json"; }

Owner this_process() {
  static const Owner self = [] {
    Owner o;
    o.pid = static_cast<int>(::getpid());
    o.start_time = start_time_of(o.pid).value_or(0);
    o.started = now_utc();
    o.boot_id = boot_id();
    return o;
  }();
  Owner o = self;
  o.pid = static_cast<int>(::getpid());  // a forked child is another run
  if (o.pid != self.pid) o.start_time = start_time_of(o.pid).value_or(0);
  return o;
}

// Alive and the same process: after a SIGKILL the pid can be reused by anything (another
// diskprobe too), and a journal must not wait forever on it. An older journal without a
// start time is given the benefit of the doubt while its pid exists.
bool alive(const Owner& o) {
  if (o.pid <= 0) return false;
  if (!o.boot_id.empty() && o.boot_id != boot_id()) return false;  // a run of an earlier boot
  if (::kill(o.pid, 0) != 0 && errno != EPERM) return false;
  if (o.start_time == 0) return true;
  auto now = start_time_of(o.pid);
  return now && *now == o.start_time;
}

RestoreGuard::RestoreGuard(const SysRoot& root, std::string journal_dir)
    : root_(root), dir_(std::move(journal_dir)), self_(this_process()) {}

RestoreGuard::~RestoreGuard() {
  if (auto st = restore(); !st) spdlog::error("{}", st.error());
}

// The first write creates the journal exclusively: another run's journal refuses this one.
Status RestoreGuard::write_journal() const {
  Journal j{disk_, diskseq_, {self_}, {}};
  for (const auto& s : applied_) {
    if (!disk_of(sysfs_rel(root_, s.what)).empty()) j.settings.push_back(s);
  }
  auto st = place_journal(journal_, j, /*exclusive=*/!owns_journal_);
  if (st || owns_journal_) return st;
  std::error_code ec;
  if (!fs::exists(journal_, ec)) return st;  // a real I/O error, not another run
  auto other = read_journal(journal_);
  if (!other) return make_error(unreadable(other.error()));
  return make_error(busy_message(journal_, *other));
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

// cpuidle states are the host's, not the device's: every run that wants them off joins
// host.json as a holder, and a state already off for another run is left to it.
Status RestoreGuard::disable_cstates(const Plan& plan) {
  if (plan.disable_cstates.empty()) return Ok{};
  DirLock lock(dir_);
  if (!lock.error().empty()) return make_error(lock.error());
  const std::string path = host_journal(dir_);
  Journal j;
  std::error_code ec;
  if (fs::exists(path, ec)) {
    auto read = read_journal(path);
    if (!read) return make_error(unreadable(read.error()));
    j = *read;
    Journal live = j;
    if (!keep_live_holders(live, self_) && !j.settings.empty()) return make_error(busy_message(path, j));
    j.holders = live.holders;
  }
  j.holders.push_back(self_);
  holds_host_ = true;  // from here on restore() leaves host.json, even after a failure below
  if (auto st = place_journal(path, j, false); !st) return st;
  for (const auto& c : plan.disable_cstates) {
    std::string rel = "devices/system/cpu/cpu" + std::to_string(c.cpu) + "/cpuidle/state" +
                      std::to_string(c.state) + "/disable";
    std::string where = root_.sys_path(rel);
    if (std::any_of(j.settings.begin(), j.settings.end(), [&](const auto& s) { return s.what == where; })) {
      continue;  // off already, held by another run
    }
    auto cur = root_.read_sys(rel);
    if (!cur) return make_error(cur.error());
    if (*cur == "1") continue;
    j.settings.push_back({where, *cur, "1"});
    if (auto st = place_journal(path, j, false); !st) return st;
    if (auto st = root_.write_sys(rel, "1"); !st) return make_error(write_error(where, "1", st.error()));
    applied_.push_back(j.settings.back());
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
  for (const auto& c : plan.disable_cstates) {
    // state0 stays: with every state disabled the cpuidle core falls back to it anyway.
    if (c.cpu < 0 || c.state <= 0) {
      return make_error("tuning: bad cpuidle state cpu" + std::to_string(c.cpu) + "/state" +
                        std::to_string(c.state));
    }
  }
  if (!owns_journal_) {
    disk_ = disk;
    journal_ = device_journal(dir_, disk);
    auto seq = root_.read_sys("block/" + disk + "/diskseq");  // kernels before 5.15 have none
    diskseq_ = seq ? *seq : "";
  }
  // A killed run's journal is refused even when this plan would change nothing: the
  // settings it left are the ones this run would measure with, and nobody would undo them.
  // Another device's journal is another run's business; host.json is everybody's.
  if (!owns_journal_) {
    if (auto st = refuse_leftovers(journal_, /*device=*/true); !st) return st;
  }
  if (!holds_host_) {
    if (auto st = refuse_leftovers(host_journal(dir_), /*device=*/false); !st) return st;
  }
  Status st = Ok{};
  for (const auto& q : plan.queue) {
    st = set("block/" + disk + "/queue/" + q.attribute, q.value);
    if (!st) break;
  }
  if (st) st = disable_cstates(plan);
  if (st && plan.hold_cstates) st = hold_cstates();
  if (st) return st;
  // All or nothing: a half-tuned host would measure something no profile describes.
  if (auto undo = restore(); !undo) return make_error(st.error() + "; and while undoing: " + undo.error());
  return st;
}

void RestoreGuard::restore_device(std::string& errors) {
  std::vector<AppliedSetting> mine;
  for (const auto& s : applied_) {
    if (!disk_of(sysfs_rel(root_, s.what)).empty()) mine.push_back(s);
  }
  Journal j{disk_, diskseq_, {self_}, {}};
  Undone u = undo(root_, j, mine);
  for (const auto& g : u.gone) spdlog::warn("{}: {} is gone, nothing to put back", g.what, disk_);
  std::erase_if(applied_,
                [&](const AppliedSetting& s) { return !disk_of(sysfs_rel(root_, s.what)).empty(); });
  if (!owns_journal_) {
    append(errors, u.errors);
    applied_.insert(applied_.begin(), u.failed.begin(), u.failed.end());
    return;
  }
  settle(journal_, j, u, errors);
  if (u.failed.empty()) owns_journal_ = false;
  applied_.insert(applied_.begin(), u.failed.begin(), u.failed.end());
}

// The last holder out puts host.json's settings back (its own and those of runs killed while
// it held them); an earlier one only leaves.
void RestoreGuard::leave_host(std::string& errors) {
  std::erase_if(applied_, [&](const AppliedSetting& s) {
    return s.what != cpu_dma_latency_path_ && disk_of(sysfs_rel(root_, s.what)).empty();
  });
  if (!holds_host_) return;
  DirLock lock(dir_);
  if (!lock.error().empty()) return append(errors, lock.error());
  const std::string path = host_journal(dir_);
  holds_host_ = false;
  std::error_code ec;
  if (!fs::exists(path, ec)) return;  // never written: joining failed before any change
  auto j = read_journal(path);
  if (!j) return append(errors, j.error());
  if (keep_live_holders(*j, self_)) {
    if (auto st = place_journal(path, *j, false); !st) append(errors, st.error());
    return;
  }
  settle(path, *j, undo(root_, *j, j->settings), errors);
}

Status RestoreGuard::restore() {
  cpu_dma_latency_.reset();
  std::erase_if(applied_, [&](const AppliedSetting& s) { return s.what == cpu_dma_latency_path_; });
  std::string errors;
  restore_device(errors);
  leave_host(errors);
  if (errors.empty()) return Ok{};
  if (!applied_.empty()) {
    append(errors, journal_ + " keeps " + std::to_string(applied_.size()) +
                       " setting(s) for `diskprobe tune --restore`");
  }
  return make_error("could not restore every setting: " + errors);
}

Result<std::vector<AppliedSetting>> restore_from_journal(const SysRoot& root, const std::string& journal_path,
                                                         std::vector<AppliedSetting>* gone) {
  auto out = restore_journal(root, journal_path);
  if (gone) *gone = out.undone.gone;
  if (!out.error.empty()) return make_error(out.error);
  return out.undone.restored;
}

RestoreReport restore_all(const SysRoot& root, const std::string& dir) {
  RestoreReport r;
  std::vector<std::string> journals;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0)
      journals.push_back(e.path().string());
  }
  // The devices' first, host.json last: the order a run applied them in, reversed.
  std::sort(journals.begin(), journals.end(), [&](const std::string& a, const std::string& b) {
    bool ha = a == host_journal(dir), hb = b == host_journal(dir);
    return ha != hb ? hb : a < b;
  });
  for (const auto& path : journals) {
    r.any_journal = true;
    auto out = restore_journal(root, path);
    r.restored.insert(r.restored.end(), out.undone.restored.begin(), out.undone.restored.end());
    r.gone.insert(r.gone.end(), out.undone.gone.begin(), out.undone.gone.end());
    r.already.insert(r.already.end(), out.undone.already.begin(), out.undone.already.end());
    if (out.live) {
      r.left.push_back(out.error);
    } else if (!out.error.empty()) {
      r.failed.push_back(out.error);
    }
  }
  return r;
}

}  // namespace diskprobe::tuning
