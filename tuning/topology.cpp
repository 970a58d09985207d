#include "diskprobe/tuning/topology.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <optional>
#include <sstream>

#include "diskprobe/base/units.h"

namespace diskprobe::tuning {
namespace {

// Far above any CONFIG_NR_CPUS; keeps a corrupt "0-4000000000" from allocating gigabytes.

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<int> to_int(std::string_view s) {
  if (!all_digits(s)) return std::nullopt;
  int v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// "virtio12" with prefix "virtio" -> true.
bool is_prefix_number(std::string_view s, std::string_view prefix) {
  return s.size() > prefix.size() && s.substr(0, prefix.size()) == prefix &&
         all_digits(s.substr(prefix.size()));
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(path);
  while (std::getline(in, part, '/')) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

// The driver behind `disk`, from its name (virtual devices) or its `device` link.
void identify_driver(const SysRoot& root, const std::string& disk, Topology& t, std::string& virtio_parent) {
  if (is_prefix_number(disk, "loop")) {
    t.driver = "loop";
    return;
  }
  if (is_prefix_number(disk, "zram")) {
    t.driver = "zram";
    return;
  }
  std::string link = "class/block/" + disk + "/device";
  std::string real = root.sys_realpath(link);
  if (real.empty()) return;  // no device link: a virtual device (dm, md, nbd, ...)
  auto parts = split_path(real);
  // Innermost first: virtio-scsi disks sit under .../virtio2/host0/target0:0:0/0:0:0:0.
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    const std::string& c = *it;
    if (t.driver.empty()) {
      if (is_prefix_number(c, "host")) {
        t.driver = "scsi";
        t.driver_device = c;
      } else if (is_prefix_number(c, "nvme")) {
        t.driver = "nvme";
        t.driver_device = c;
      } else if (is_prefix_number(c, "nvme-subsys")) {
        // Native NVMe multipath: the disk is the subsystem's head; take its first controller.
        t.driver = "nvme";
        for (const auto& e : root.list_sys(link)) {
          if (is_prefix_number(e, "nvme")) {
            t.driver_device = e;
            break;
          }
        }
      } else if (is_prefix_number(c, "virtio")) {
        t.driver = "virtio-blk";
        t.driver_device = c;
      } else if (is_prefix_number(c, "vbd-")) {
        t.driver = "xen-blkfront";
        t.driver_device = c;
      }
    } else if (t.driver == "scsi" && is_prefix_number(c, "virtio")) {
      virtio_parent = c;
      break;
    }
  }
}

struct Match {
  IrqKind kind = IrqKind::Other;
  int hw_queue = -1;
};

// Exact action names only: "virtio1-req.0" is virtio1's, never virtio10's or virtio1's
// config interrupt (the seed's `grep $DEVICE` took both).
std::optional<Match> match_virtio_blk(std::string_view action, const std::string& dev) {
  if (action == dev || action == dev + "-virtqueues") return Match{IrqKind::Queue, -1};
  if (action == dev + "-requests") return Match{IrqKind::Queue, 0};  // single-queue kernels
  if (action == dev + "-config") return Match{IrqKind::Config, -1};
  std::string req = dev + "-req.";
  if (action.substr(0, req.size()) == req) {
    if (auto q = to_int(action.substr(req.size()))) return Match{IrqKind::Queue, *q};
  }
  return std::nullopt;
}

std::optional<Match> match_nvme(std::string_view action, const std::string& ctrl) {
  std::string q = ctrl + "q";
  if (action.substr(0, q.size()) != q) return std::nullopt;
  auto n = to_int(action.substr(q.size()));
  if (!n) return std::nullopt;
  if (*n == 0) return Match{IrqKind::Admin, -1};
  return Match{IrqKind::Queue, *n - 1};
}

// virtio-scsi names every request queue "request": queue k is the k-th, by IRQ number.
std::optional<Match> match_virtio_scsi(std::string_view action, const std::string& dev) {
  if (action == dev + "-request") return Match{IrqKind::Queue, -2};  // numbered later
  if (action == dev + "-config") return Match{IrqKind::Config, -1};
  if (action == dev + "-control" || action == dev + "-event") return Match{IrqKind::Other, -1};
  return std::nullopt;
}

Status read_irq_affinity(const SysRoot& root, Irq& irq) {
  std::string base = "irq/" + std::to_string(irq.number) + "/";
  // Missing files are normal (effective_affinity_list is 4.13+); malformed ones are not.
  if (auto e = root.read_proc(base + "effective_affinity_list")) {
    auto l = parse_cpu_list(*e);
    if (!l) return make_error(root.proc_path(base + "effective_affinity_list") + ": " + l.error());
    irq.effective_cpus = *l;
  }
  if (auto a = root.read_proc(base + "smp_affinity_list")) {
    auto l = parse_cpu_list(*a);
    if (!l) return make_error(root.proc_path(base + "smp_affinity_list") + ": " + l.error());
    irq.affinity_cpus = *l;
  }
  return Ok{};
}

Result<std::vector<Irq>> read_irqs(const SysRoot& root, const Topology& t, const std::string& virtio_parent) {
  std::vector<Irq> irqs;
  if (t.driver_device.empty() && virtio_parent.empty()) return irqs;
  if (t.driver == "loop" || t.driver == "zram") return irqs;
  auto text = root.read_proc_raw("interrupts");
  if (!text) return make_error(text.error());
  int scsi_queue = 0;
  for (const auto& line : parse_proc_interrupts(*text)) {
    for (const auto& action : line.actions) {
      std::optional<Match> m;
      if (t.driver == "virtio-blk") m = match_virtio_blk(action, t.driver_device);
      if (t.driver == "nvme") m = match_nvme(action, t.driver_device);
      if (t.driver == "scsi" && !virtio_parent.empty()) m = match_virtio_scsi(action, virtio_parent);
      if (!m) continue;
      Irq irq;
      irq.number = line.number;
      irq.name = action;
      irq.kind = m->kind;
      irq.hw_queue = m->hw_queue == -2 ? scsi_queue++ : m->hw_queue;
      if (auto st = read_irq_affinity(root, irq); !st) return make_error(st.error());
      irqs.push_back(std::move(irq));
    }
  }
  // Queue interrupts first, by hardware queue (a shared one, -1, after the numbered ones).
  std::stable_sort(irqs.begin(), irqs.end(), [](const Irq& a, const Irq& b) {
    bool qa = a.kind == IrqKind::Queue, qb = b.kind == IrqKind::Queue;
    if (qa != qb) return qa;
    if (!qa) return a.number < b.number;
    unsigned ka = static_cast<unsigned>(a.hw_queue), kb = static_cast<unsigned>(b.hw_queue);
    return ka != kb ? ka < kb : a.number < b.number;
  });
  return irqs;
}

Result<std::vector<HwQueue>> read_hw_queues(const SysRoot& root, const std::string& disk) {
  std::vector<HwQueue> queues;
  std::string mq = "block/" + disk + "/mq";
  for (const auto& e : root.list_sys(mq)) {
    auto index = to_int(e);
    if (!index) continue;
    std::string rel = mq + "/" + e + "/cpu_list";
    auto text = root.read_sys(rel);
    if (!text) return make_error(text.error());
    auto cpus = parse_cpu_list(*text);
    if (!cpus) return make_error(root.sys_path(rel) + ": " + cpus.error());
    queues.push_back(HwQueue{*index, *cpus});
  }
  std::sort(queues.begin(), queues.end(),
            [](const HwQueue& a, const HwQueue& b) { return a.index < b.index; });
  return queues;
}

// NVMe gives every interrupt-driven I/O queue an nvmeNqK vector and poll queues none, and
// blk-mq numbers hardware contexts default, read, then poll: so on a controller with queue
// interrupts, a hardware queue without one is a poll queue.
void mark_poll_queues(Topology& t) {
  if (t.driver != "nvme" || !t.has_interrupts()) return;
  for (auto& q : t.hw_queues) {
    q.polled = std::none_of(t.irqs.begin(), t.irqs.end(), [&](const Irq& i) {
      return i.kind == IrqKind::Queue && (i.hw_queue == q.index || i.hw_queue < 0);
    });
  }
}

// cpuN/cpuidle/stateK for one CPU, by K; none when the kernel has no cpuidle driver.
Result<std::vector<CState>> read_cstates(const SysRoot& root, int cpu) {
  std::vector<CState> out;
  std::string dir = "devices/system/cpu/cpu" + std::to_string(cpu) + "/cpuidle";
  for (const auto& e : root.list_sys(dir)) {
    if (!is_prefix_number(e, "state")) continue;
    std::string base = dir + "/" + e + "/";
    CState c;
    c.cpu = cpu;
    c.index = *to_int(std::string_view(e).substr(5));
    if (auto n = root.read_sys(base + "name")) c.name = *n;
    auto lat = root.read_sys(base + "latency");
    auto dis = root.read_sys(base + "disable");
    if (!lat || !dis) return make_error(!lat ? lat.error() : dis.error());
    auto l = to_int(*lat);
    if (!l) return make_error(root.sys_path(base + "latency") + ": \"" + *lat + "\" is not a number");
    c.latency_us = static_cast<unsigned>(*l);
    c.disabled = *dis != "0";
    out.push_back(std::move(c));
  }
  std::sort(out.begin(), out.end(), [](const CState& a, const CState& b) { return a.index < b.index; });
  return out;
}

// os-release(5): KEY=value, value optionally in double or single quotes.
std::map<std::string, std::string> parse_os_release(const std::string& text) {
  std::map<std::string, std::string> kv;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
        value.back() == value.front()) {
      std::string unq;
      for (size_t i = 1; i + 1 < value.size(); ++i) {
        if (value[i] == '\\' && i + 2 < value.size()) ++i;
        unq += value[i];
      }
      value = unq;
    }
    kv[key] = value;
  }
  return kv;
}

}  // namespace

bool Topology::has_interrupts() const {
  return std::any_of(irqs.begin(), irqs.end(), [](const Irq& i) { return i.kind == IrqKind::Queue; });
}

std::vector<ProcInterrupt> parse_proc_interrupts(std::string_view text) {
  std::vector<ProcInterrupt> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line =
        text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;

    std::vector<std::string> tokens;
    std::istringstream in{std::string(line)};
    for (std::string tok; in >> tok;) tokens.push_back(tok);
    // "36:" then per-CPU counts, chip, hwirq-type, actions; at least a count and an action.
    if (tokens.size() < 3 || tokens[0].back() != ':') continue;
    auto number = to_int(std::string_view(tokens[0]).substr(0, tokens[0].size() - 1));
    if (!number) continue;  // NMI:, LOC:, ... are not IRQ lines
    // The action list is the last column; shared lines separate actions with ", ".
    size_t first = tokens.size() - 1;
    while (first > 1 && tokens[first - 1].back() == ',') --first;
    ProcInterrupt pi;
    pi.number = *number;
    for (size_t i = first; i < tokens.size(); ++i) {
      std::string a = tokens[i];
      if (!a.empty() && a.back() == ',') a.pop_back();
      if (!a.empty()) pi.actions.push_back(a);
    }
    out.push_back(std::move(pi));
  }
  return out;
}

std::string default_os_release_path(const SysRoot& root) {
  namespace fs = std::filesystem;
  if (root.procfs() == "/proc") return "/etc/os-release";
  return (fs::path(root.procfs()).parent_path() / "etc" / "os-release").string();
}

HostFacts read_host_facts(const SysRoot& root, const std::string& os_release_path) {
  HostFacts h;
  if (auto c = root.read_proc("cmdline")) h.cmdline = *c;
  auto os = read_file(os_release_path);
  // os-release(5): /usr/lib/os-release when /etc/os-release is missing.
  if (!os && os_release_path == "/etc/os-release") os = read_file("/usr/lib/os-release");
  if (os) {
    auto kv = parse_os_release(*os);
    h.os_id = kv["ID"];
    h.os_id_like = kv["ID_LIKE"];
    h.os_name = kv.count("PRETTY_NAME") ? kv["PRETTY_NAME"] : kv["NAME"];
  }
  // The process list is a directory of the rooted procfs, so a fixture can hold one too.
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(root.proc_path(""), ec)) {
    std::string name = e.path().filename().string();
    auto pid = to_int(name);
    if (!pid) continue;
    auto comm = root.read_proc(name + "/comm");
    if (comm && *comm == "irqbalance") h.irqbalance_pids.push_back(*pid);
  }
  std::sort(h.irqbalance_pids.begin(), h.irqbalance_pids.end());
  return h;
}

Result<Topology> read_topology(const SysRoot& root, const BlockDevice& dev) {
  Topology t;
  t.device = dev.disk.empty() ? dev.name : dev.disk;
  if (t.device.empty() || t.device.find('/') != std::string::npos ||
      t.device.find("..") != std::string::npos) {
    return make_error("read_topology: bad device name \"" + t.device + "\"");
  }
  if (!root.sys_exists("block/" + t.device)) {
    return make_error("no block device " + t.device + " in " + root.sys_path("block"));
  }
  std::string virtio_parent;
  identify_driver(root, t.device, t, virtio_parent);

  auto queues = read_hw_queues(root, t.device);
  if (!queues) return make_error(queues.error());
  t.hw_queues = std::move(*queues);

  auto irqs = read_irqs(root, t, virtio_parent);
  if (!irqs) return make_error(irqs.error());
  t.irqs = std::move(*irqs);

  if (auto online = root.read_sys("devices/system/cpu/online")) {
    auto l = parse_cpu_list(*online);
    if (!l) return make_error(root.sys_path("devices/system/cpu/online") + ": " + l.error());
    t.online_cpus = *l;
  }
  if (auto sched = root.read_sys("block/" + t.device + "/queue/scheduler")) {
    auto b = sched->find('['), e = sched->find(']');
    t.scheduler = (b != std::string::npos && e != std::string::npos && e > b)
                      ? sched->substr(b + 1, e - b - 1)
                      : trim(*sched);
    std::istringstream in(*sched);
    for (std::string w; in >> w;) {
      if (w.size() > 2 && w.front() == '[' && w.back() == ']') w = w.substr(1, w.size() - 2);
      t.schedulers.push_back(w);
    }
  }
  if (auto nr = root.read_sys("block/" + t.device + "/queue/nr_requests")) {
    if (auto n = to_int(*nr)) t.nr_requests = *n;
  }
  if (auto wc = root.read_sys("block/" + t.device + "/queue/write_cache")) t.write_cache = *wc;
  t.has_rq_affinity = static_cast<bool>(root.read_sys("block/" + t.device + "/queue/rq_affinity"));
  mark_poll_queues(t);
  t.host = read_host_facts(root, default_os_release_path(root));
  for (int cpu : t.online_cpus) {
    auto g = root.read_sys("devices/system/cpu/cpu" + std::to_string(cpu) + "/cpufreq/scaling_governor");
    if (g) t.host.governors[cpu] = *g;
  }
  if (auto d = root.read_sys("devices/system/cpu/cpuidle/current_driver")) t.host.cpuidle_driver = *d;
  for (int cpu : t.online_cpus) {
    auto states = read_cstates(root, cpu);
    if (!states) return make_error(states.error());
    t.host.cstates.insert(t.host.cstates.end(), states->begin(), states->end());
  }
  return t;
}

}  // namespace diskprobe::tuning
