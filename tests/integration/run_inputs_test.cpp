// Bad input reaches nothing: outputs are opened and checked, CPU lists and job names validated,
// and --sysfs/--procfs refused for writing commands, all before the preflight; a file
// diskprobe made that something else wrote since is refused. Each refusal: its exit code, and
// no byte of the device changed, no setting changed, no file made outside where it was told.
#include <sys/mount.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "harness.h"

namespace fs = std::filesystem;

namespace {

using testing::must;

constexpr uint64_t kMiB = 1ull << 20;

// A directory of the test's own under $TMPDIR (or /tmp), removed however the test ends.
struct TempDir {
  std::string path;
  TempDir() {
    std::string t = (fs::temp_directory_path() / "diskprobe-inputs-XXXXXX").string();
    REQUIRE(::mkdtemp(t.data()) != nullptr);
    path = t;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// A digest, not the bytes: Catch would print megabytes of them on a failure.
size_t digest(const std::string& bytes) { return std::hash<std::string>{}(bytes); }

// The first and last 4 MiB, where a write run zeroes: random data there shows any zeroing.
size_t edges4(const std::string& dev, uint64_t size) {
  must("blockdev --flushbufs " + dev);
  return digest(testing::read_bytes(dev, 0, 4 * kMiB) + testing::read_bytes(dev, size - 4 * kMiB, 4 * kMiB));
}

void fill_edges(const std::string& dev, uint64_t size) {
  must("dd if=/dev/urandom of=" + dev + " bs=1M count=4 oflag=direct status=none");
  must("dd if=/dev/urandom of=" + dev + " bs=1M count=4 seek=" + std::to_string(size / kMiB - 4) +
       " oflag=direct status=none");
}

std::string rq_affinity(const diskprobe::LoopDevice& loop) {
  return testing::read_sysfs("/sys/block/" + loop.name() + "/queue/rq_affinity");
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("run --output /dev/loopN (and --report) where loopN holds ext4: exit 2, ext4 intact", "[inputs]") {
  auto ext4 = testing::make_loop(64 * kMiB);
  must("mkfs.ext4 -F -q " + ext4.path());
  const size_t before = digest(testing::read_bytes(ext4.path(), 0, 4 * kMiB));
  for (const char* option : {"--output", "--report"}) {
    INFO(option);
    auto r = testing::run_diskprobe({"run", "--profile", "essd-plx-latency", "--scratch", "64M", "--runtime", "1",
                                     "--output-format", "json", option, ext4.path()});
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(has(r.err, "is a block device"));
    if (std::string(option) == "--output") {
      CHECK(r.out.empty());  // the report was to go into the file: stdout is not JSON mode's
    } else {
      CHECK(nlohmann::json::parse(r.out).at("exit_code") == 2);  // JSON mode: the error document
    }
    CHECK(testing::run({"fsck.ext4", "-n", ext4.path()}).exit_code == 0);
    CHECK(testing::run({"blkid", "-p", "-s", "TYPE", "-o", "value", ext4.path()}).out == "ext4\n");
    CHECK(digest(testing::read_bytes(ext4.path(), 0, 4 * kMiB)) == before);
  }
}

TEST_CASE("an output path that cannot be written is exit 2 before the preflight: device and settings untouched",
          "[inputs]") {
  auto loop = testing::make_loop(64 * kMiB);
  fill_edges(loop.path(), 64 * kMiB);
  REQUIRE(testing::sh("echo 1 > /sys/block/" + loop.name() + "/queue/rq_affinity").exit_code == 0);
  const size_t edges = edges4(loop.path(), 64 * kMiB);
  TempDir dir;
  const std::string target = dir.path + "/target.img";  // a file target: the output must not be it
  struct Case {
    std::vector<std::string> args;
    const char* says;
  };
  const Case cases[] = {
      {{"--output", dir.path}, "is a directory"},
      {{"--report", dir.path + "/no/such/dir/r.html"}, "No such file or directory"},
      {{"--output", "/proc/sys/vm/drop_caches"}, "kernel filesystem"},
      {{"--output", "/proc/diskprobe-test"}, "--output /proc/diskprobe-test"},
      {{"--output", "/sys/kernel/diskprobe-test"}, "--output /sys/kernel/diskprobe-test"},
      {{"--output", "/dev/zero"}, "is a character device"},
      {{"--output", dir.path + "/same", "--report", dir.path + "/same"}, "run's own target"},
      {{"--output", loop.path()}, "is a block device"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args{"run", "--profile", "essd-plx-latency", loop.path(), "--runtime", "1",
                                  "--allow-nonzero"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    auto r = testing::run_diskprobe(args);
    INFO(c.args[1] << " -> " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(has(r.err, c.says));
    CHECK(r.out.empty());
    CHECK(edges4(loop.path(), 64 * kMiB) == edges);
    CHECK(rq_affinity(loop) == "1");
  }
  CHECK(fs::is_empty(dir.path));  // an output made and not written is removed again
  // The file target and an --output naming it.
  auto r = testing::run_diskprobe({"run", "--profile", "essd-plx-latency", target, "--size", "4M", "--runtime", "1",
                                   "--direct", "0", "--keep-files", "--output", target});
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK(fs::is_empty(dir.path));
}

TEST_CASE("a full filesystem for --output is exit 2 before the run", "[inputs]") {
  TempDir dir;
  if (::mount("tmpfs", dir.path.c_str(), "tmpfs", 0, "size=64k") != 0) {
    WARN("cannot mount a tmpfs here: the full-filesystem case is not tested");
    return;
  }
  struct Unmount {
    std::string p;
    ~Unmount() { ::umount2(p.c_str(), MNT_DETACH); }
  } unmount{dir.path};
  testing::sh("dd if=/dev/zero of=" + dir.path + "/fill bs=4k status=none");  // until ENOSPC
  auto r = testing::run_diskprobe({"run", "--profile", "essd-plx-latency", "--scratch", "64M", "--runtime", "1",
                                   "--output", dir.path + "/fill"});
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK(has(r.err, "full filesystem"));
}

TEST_CASE("outputs /dev/null and /dev/stdout are taken", "[inputs]") {
  for (const char* path : {"/dev/null", "/dev/stdout"}) {
    auto r = testing::run_diskprobe({"run", "--profile", "essd-plx-latency", "--scratch", "64M", "--runtime", "1",
                                     "--no-tune", "--output-format", "json", "--output", path});
    INFO(path << ": " << r.err);
    CHECK(r.exit_code == 0);
    if (std::string(path) == "/dev/stdout") CHECK(has(r.out, "\"jobs\""));
  }
}

TEST_CASE("cpus_allowed beyond the online CPUs is exit 2: no tuning, no byte written or zeroed", "[inputs]") {
  auto loop = testing::make_loop(64 * kMiB);
  fill_edges(loop.path(), 64 * kMiB);
  REQUIRE(testing::sh("echo 1 > /sys/block/" + loop.name() + "/queue/rq_affinity").exit_code == 0);
  const size_t edges = edges4(loop.path(), 64 * kMiB);
  const long cpus = ::sysconf(_SC_NPROCESSORS_CONF);
  for (const std::string& list : std::vector<std::string>{std::to_string(cpus + 3), "0," + std::to_string(cpus + 3), "0-4095"}) {
    auto r = testing::run_diskprobe({"run", "--profile", "essd-plx-latency", loop.path(), "--runtime", "1",
                                     "--allow-nonzero", "--cpus_allowed", list});
    INFO(list << " -> " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(has(r.err, "is not online"));
    CHECK(edges4(loop.path(), 64 * kMiB) == edges);
    CHECK(rq_affinity(loop) == "1");
  }
}

TEST_CASE("name ../escaped with directory D creates nothing outside D", "[inputs]") {
  TempDir top;
  const std::string d = top.path + "/D";
  REQUIRE(fs::create_directory(d));
  for (const char* name : {"../escaped", "a/b", "..", "."}) {
    auto r = testing::run_diskprobe({"run", "--profile", "essd-plx-latency", "--directory", d, "--name", name,
                                     "--size", "1M", "--runtime", "1", "--direct", "0"});
    INFO(name << " -> " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(has(r.err, "--name"));
    std::vector<std::string> left;
    for (const auto& e : fs::recursive_directory_iterator(top.path)) left.push_back(e.path().string());
    CHECK(left == std::vector<std::string>{d});
  }
  // A plain name still runs there, and its files go away afterwards.
  auto ok = testing::run_diskprobe({"run", "--profile", "essd-plx-latency", "--directory", d, "--name", "plain",
                                    "--size", "1M", "--runtime", "1", "--direct", "0", "--no-tune"});
  INFO(ok.err);
  CHECK(ok.exit_code == 0);
  CHECK(fs::is_empty(d));
}

TEST_CASE("sysfs and procfs roots are refused for commands that write, kept for reading ones", "[inputs]") {
  auto loop = testing::make_loop(64 * kMiB);
  const std::string f = DISKPROBE_FIXTURES;
  const std::vector<std::string> writing[] = {
      {"--sysfs", f + "/tuning", "run", "--profile", "essd-plx-latency", loop.path(), "--runtime", "1"},
      {"--procfs", "/tmp", "run", "--profile", "essd-plx-latency", "--scratch", "64M", "--runtime", "1"},
      {"--sysfs", "/tmp", "tune", loop.name(), "--apply"},
      {"--sysfs", "/tmp", "tune", "--restore"},
      {"--procfs", "/tmp", "tune", "--restore"},
  };
  const size_t edges = digest(testing::edges(loop.path(), 64 * kMiB));
  for (const auto& args : writing) {
    auto r = testing::run_diskprobe(args);
    INFO(args[0] << " " << args[2] << " -> " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(has(r.err, "never for a command that writes"));
  }
  CHECK(digest(testing::edges(loop.path(), 64 * kMiB)) == edges);
  // The real roots, spelt differently, are the real roots.
  CHECK(testing::run_diskprobe({"--sysfs", "/sys/", "--procfs", "/proc", "check", loop.path()}).exit_code == 0);
  CHECK(testing::run_diskprobe({"--sysfs", "/tmp", "check", loop.name()}).exit_code != 2);
  CHECK(testing::run_diskprobe({"--sysfs", "/tmp", "devices"}).exit_code == 0);
}

TEST_CASE("a file diskprobe created that now holds ext4 is refused before it is reused", "[inputs]") {
  TempDir dir;
  const std::string file = dir.path + "/job.img";
  auto first = testing::run_diskprobe({"run", "--profile", "essd-plx-latency", file, "--size", "16M", "--runtime",
                                       "1", "--direct", "0", "--keep-files"});
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  // Kept and reused as diskprobe's own: fine.
  auto again = testing::run_diskprobe({"run", "--profile", "essd-plx-latency", file, "--runtime", "1", "--direct",
                                       "0", "--keep-files"});
  INFO(again.err);
  CHECK(again.exit_code == 0);
  // mkfs.ext4 zaps sector 0, and with it diskprobe's header: refused as a file it did not make.
  must("dd if=" + file + " of=" + dir.path + "/head bs=512 count=1 status=none");
  must("mkfs.ext4 -F -q " + file);
  const size_t image = digest(testing::read_bytes(file, 0, 16 * kMiB));
  auto plain = testing::run_diskprobe({"run", "--profile", "essd-plx-latency", file, "--runtime", "1", "--direct",
                                       "0", "--keep-files"});
  CHECK(plain.exit_code == 2);
  CHECK(digest(testing::read_bytes(file, 0, 16 * kMiB)) == image);
  // With the header back (ext4 leaves its first KiB alone) only libblkid tells the file is ext4.
  must("dd if=" + dir.path + "/head of=" + file + " conv=notrunc status=none");
  const size_t restored = digest(testing::read_bytes(file, 0, 16 * kMiB));
  auto r = testing::run_diskprobe({"run", "--profile", "essd-plx-latency", file, "--runtime", "1", "--direct", "0",
                                   "--keep-files"});
  INFO(r.err);
  CHECK(r.exit_code == 3);
  CHECK(has(r.err, "now holds ext4"));
  CHECK(digest(testing::read_bytes(file, 0, 16 * kMiB)) == restored);
  // The same for a --directory job file kept from an earlier run.
  const std::string d = dir.path + "/D";
  REQUIRE(fs::create_directory(d));
  auto kept = testing::run_diskprobe({"run", "--profile", "essd-plx-latency", "--directory", d, "--size", "16M",
                                      "--runtime", "1", "--direct", "0", "--keep-files", "--name", "j"});
  INFO(kept.err);
  REQUIRE(kept.exit_code == 0);
  const std::string job = d + "/j.0.0";
  must("dd if=" + job + " of=" + dir.path + "/head bs=512 count=1 status=none && mkfs.ext4 -F -q " + job +
       " && dd if=" + dir.path + "/head of=" + job + " conv=notrunc status=none");
  auto reused = testing::run_diskprobe({"run", "--profile", "essd-plx-latency", "--directory", d, "--size", "16M",
                                        "--runtime", "1", "--direct", "0", "--name", "j"});
  INFO(reused.err);
  CHECK(reused.exit_code == 3);
  CHECK(testing::run({"blkid", "-p", "-s", "TYPE", "-o", "value", job}).out == "ext4\n");
}
