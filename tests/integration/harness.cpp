#include "harness.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace testing {
namespace {

std::string slurp_fd(int fd) {
  std::string s;
  std::array<char, 4096> buf{};
  for (;;) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n > 0) {
      s.append(buf.data(), static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  return s;
}

}  // namespace

CommandResult run(const std::vector<std::string>& argv) {
  int out[2], err[2];
  REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
  REQUIRE(::pipe2(err, O_CLOEXEC) == 0);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    int devnull = ::open("/dev/null", O_RDONLY);
    ::dup2(devnull, 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    std::fprintf(stderr, "exec %s: %s\n", args[0], std::strerror(errno));
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(err[1]);
  CommandResult r;
  std::thread t([&] { r.err = slurp_fd(err[0]); });
  r.out = slurp_fd(out[0]);
  t.join();
  ::close(out[0]);
  ::close(err[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

CommandResult sh(const std::string& line) { return run({"/bin/sh", "-c", line}); }

void must(const std::string& line) {
  auto r = sh(line);
  INFO(line << "\nstdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.exit_code == 0);
}

CommandResult run_diskprobe(const std::vector<std::string>& args) {
  std::vector<std::string> argv{DISKPROBE_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv);
}

std::vector<std::string> diskprobe_traced(const std::string& trace, const std::string& syscalls,
                                          const std::vector<std::string>& args) {
  const char* asan = std::getenv("ASAN_OPTIONS");
  std::vector<std::string> argv = {"strace", "-f", "-o", trace, "-E",
                                   "ASAN_OPTIONS=" + std::string(asan ? asan : "") + (asan && *asan ? ":" : "") +
                                       "detect_leaks=0",
                                   "-e", "trace=" + syscalls, DISKPROBE_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

diskprobe::LoopDevice make_loop(uint64_t size_bytes, bool read_only) {
  diskprobe::LoopDevice::Options o;
  o.size_bytes = size_bytes;
  o.read_only = read_only;
  auto loop = diskprobe::LoopDevice::create(o);
  INFO((loop.ok() ? std::string() : loop.error()));
  REQUIRE(loop.ok());
  return std::move(loop.value());
}

diskprobe::LoopDevice make_loop_in_memory(uint64_t size_bytes) {
  diskprobe::LoopDevice::Options o;
  o.size_bytes = size_bytes;
  if (std::filesystem::is_directory("/dev/shm")) o.dir = "/dev/shm";
  auto loop = diskprobe::LoopDevice::create(o);
  INFO((loop.ok() ? std::string() : loop.error()));
  REQUIRE(loop.ok());
  return std::move(loop.value());
}

std::string read_bytes(const std::string& path, uint64_t offset, uint64_t len) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE(f.good());
  f.seekg(static_cast<std::streamoff>(offset));
  std::string s(len, '\0');
  f.read(s.data(), static_cast<std::streamsize>(len));
  s.resize(static_cast<size_t>(f.gcount()));
  return s;
}

std::string read_sysfs(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  std::string s = ss.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::vector<uint64_t> block_stat(const std::string& name) {
  std::istringstream in(read_sysfs("/sys/block/" + name + "/stat"));
  std::vector<uint64_t> fields;
  uint64_t v;
  while (in >> v) fields.push_back(v);
  REQUIRE(fields.size() >= 11);
  return fields;
}

std::string edges(const std::string& device_path, uint64_t size_bytes) {
  constexpr uint64_t kMiB = 1 << 20;
  return read_bytes(device_path, 0, kMiB) + read_bytes(device_path, size_bytes - kMiB, kMiB);
}

bool edges_zeroed(const std::string& device_path, uint64_t size_bytes) {
  constexpr uint64_t kEdge = 4ull << 20;
  const std::string bytes =
      read_bytes(device_path, 0, kEdge) + read_bytes(device_path, size_bytes - kEdge, kEdge);
  return bytes.size() == 2 * kEdge && std::all_of(bytes.begin(), bytes.end(), [](char c) { return c == 0; });
}

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::vector<std::string> loops_backed_by(const std::string& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/sys/block", ec)) {
    std::string name = e.path().filename();
    if (name.rfind("loop", 0) != 0) continue;
    std::string backing = read_sysfs(e.path().string() + "/loop/backing_file");
    if (!backing.empty() && backing.rfind(dir, 0) == 0) found.push_back(name);
  }
  return found;
}

pid_t spawn_diskprobe(const std::vector<std::string>& args, const std::string& out_path,
                      const std::string& err_path, const std::vector<std::pair<std::string, std::string>>& env) {
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    for (const auto& [name, value] : env) ::setenv(name.c_str(), value.c_str(), 1);
    if (!std::freopen(out_path.c_str(), "w", stdout) || !std::freopen(err_path.c_str(), "w", stderr)) ::_exit(126);
    exec_diskprobe(args);
  }
  return pid;
}

void exec_diskprobe(const std::vector<std::string>& args) {
  std::vector<char*> argv{const_cast<char*>(DISKPROBE_BIN)};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execv(DISKPROBE_BIN, argv.data());
  ::_exit(127);
}

int wait_exit(pid_t pid) {
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace testing

namespace testing {

ScratchZram::ScratchZram(uint64_t bytes) {
  if (!std::filesystem::exists("/sys/class/zram-control/hot_add")) return;
  std::ifstream add("/sys/class/zram-control/hot_add");  // reading it makes the device
  if (!(add >> id)) {
    id = -1;
    return;
  }
  std::ofstream size("/sys/block/zram" + std::to_string(id) + "/disksize");
  size << bytes;
  size.flush();
  if (size) path = "/dev/zram" + std::to_string(id);
}

ScratchZram::~ScratchZram() {
  if (id < 0) return;
  for (int i = 0; i < 100; ++i) {  // udev may hold it open for a moment
    std::ofstream rm("/sys/class/zram-control/hot_remove");
    rm << id;
    rm.flush();
    if (rm) return;
    ::usleep(100'000);
  }
}

BlkioCgroup::BlkioCgroup(const std::string& name) : path("/sys/fs/cgroup/blkio/" + name) {
  std::error_code ec;
  std::filesystem::remove(path, ec);  // empty: rmdir works
  REQUIRE(::mkdir(path.c_str(), 0755) == 0);
}

BlkioCgroup::~BlkioCgroup() { ::rmdir(path.c_str()); }

void BlkioCgroup::set(const std::string& file, const std::string& value) const {
  std::ofstream f(path + "/" + file);
  f << value << "\n";
  f.close();
  INFO(path << "/" << file << " <- " << value);
  REQUIRE(f.good());
}

std::string BlkioCgroup::run_inside(const std::string& command) const {
  return "echo $$ > " + path + "/cgroup.procs && exec " + command;
}

uint64_t BlkioCgroup::serviced(const std::string& devno, const std::string& op) const {
  std::ifstream f(path + "/blkio.throttle.io_serviced");
  std::string dev, what;
  uint64_t n = 0;
  while (f >> dev >> what) {  // "MAJ:MIN Op N" lines, then "Total N"
    if (dev == "Total") continue;
    f >> n;
    if (dev == devno && what == op) return n;
  }
  return 0;
}

TempDir::TempDir(const std::string& prefix) {
  std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
  path = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

std::string dev_numbers(const std::string& dev_path) {
  struct stat st {};
  REQUIRE(::stat(dev_path.c_str(), &st) == 0);
  return std::to_string(major(st.st_rdev)) + ":" + std::to_string(minor(st.st_rdev));
}

}  // namespace testing
