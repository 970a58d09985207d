// Every built-in profile against the seed command line it reproduces. The table quotes each
// seed line verbatim; where the seed documents are present ($DISKPROBE_SEED_DIR, or
// /work/shared/seeds) the test also checks that every quoted line is really in its file.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "diskprobe/cli/args.h"
#include "diskprobe/base/units.h"
#include "diskprobe/profiles/profiles.h"

using namespace diskprobe;

namespace {

const std::vector<std::string> kBuiltIn{DISKPROBE_PROFILE_SOURCE_DIR};

struct SeedRow {
  const char* profile;
  const char* seed_file;
  const char* command;      // the fio line, verbatim
  const char* shell_vars;   // "numjobs=10 iodepth=128 ..." the script sets before the line
  const char* rq_affinity;  // the script's "echo N > .../rq_affinity", verbatim, or ""
  bool cstates_off;         // the document disables C-states (cpupower idle-set -d)
  bool idle_poll;           // the document adds idle=poll to the kernel command line
};

constexpr const char* k000 = "000_71f76e30ab517717.txt";
constexpr const char* k001 = "001_0ae5b3751d2cd7eb.txt";
constexpr const char* k002 = "002_19d255e302d0fcfb.txt";
constexpr const char* k003 = "003_e26083b405a9b313.txt";
constexpr const char* k004 = "004_5b9c350d77ce7baa.txt";

// How a user finds each document: the profile's `source` starts with it.
std::string seed_title(const std::string& seed_file) {
  if (seed_file == k000) return "Alibaba Cloud ECS documentation, \"Testing ESSD PL-X cloud disk performance\": ";
  if (seed_file == k001) return "Alibaba Cloud ECS documentation (French), \"Test ESSD IOPS performance\": ";
  if (seed_file == k002) {
    return "Alibaba Cloud ECS documentation, \"How to test block storage performance on a Linux instance using "
           "FIO\": ";
  }
  if (seed_file == k003) return "Fuga Cloud documentation, \"How to do a Disk benchmark test\": ";
  return "AWS samples on GitHub, \"m5.12xlarge-io1-ebs-benchmark.md\": ";
}

const SeedRow kRows[] = {
    {"essd-plx-latency", k000,
     "fio --ioengine=libaio --runtime=30s --numjobs=1 --iodepth=1 --bs=4k --rw=randwrite "
     "--filename=$DEV_NAME "
     "--time_based=1 --direct=1 --name=test --group_reporting=1 --cpus_allowed_policy=split "
     "--cpus_allowed=$EFFECTIVE_SMP",
     "", "echo 2 > /sys/block/$DEV_NODE/queue/rq_affinity", false, true},
    {"essd-plx-iops", k000,
     "fio --ioengine=libaio --runtime=30s --numjobs=64 --iodepth=64 --bs=4k --rw=randwrite "
     "--filename=/dev/$DEV_NODE --time_based=1 --direct=1 --name=test --group_reporting=1",
     "", "echo 0 > /sys/block/$DEV_NODE/queue/rq_affinity", false, false},
    // RunFio 10 128 4k randwrite 1024g $DEV_NAME
    {"essd-pl3-test100w", k001,
     " fio --ioengine=libaio --runtime=30s --numjobs=${numjobs} --iodepth=${iodepth} --bs=${bs} "
     "--size=${size} "
     "--rw=${rw} --filename=${filename} --time_based=1 --direct=1 --name=test --group_reporting "
     "--cpus_allowed=$spincpu --cpus_allowed_policy=split",
     "numjobs=10 iodepth=128 bs=4k rw=randwrite size=1024g",
     "echo 2 > /sys/block/$DEV_NODE/queue/rq_affinity", false, false},
    {"ebs-io1-randwrite", k004,
     "sudo fio --ioengine=libaio --iodepth=32 --refill_buffers --randrepeat=0 --directory=/mnt/p_iops_vol0 "
     "--name "
     "fio_test_file --direct=1 --rw=randwrite --bs=16k --size=1G --numjobs=16 --time_based --runtime=180 "
     "--group_reporting --norandommap",
     "", "", true, false},
    {"ebs-io1-randwrite-sync", k004,
     "sudo fio --directory=/mnt/p_iops_vol0 --name fio_test_file --direct=1 --rw=randwrite --bs=16k "
     "--size=1G "
     "--numjobs=16 --time_based --runtime=180 --group_reporting --norandommap",
     "", "", true, false},
    {"ebs-io1-randread", k004,
     "sudo fio --ioengine=libaio --iodepth=32 --refill_buffers --randrepeat=0 --directory=/mnt/p_iops_vol0 "
     "--name "
     "fio_test_file --direct=1 --rw=randread --bs=16k --size=1G --numjobs=16 --time_based --runtime=180 "
     "--group_reporting --norandommap",
     "", "", true, false},
    {"ebs-io1-randread-sync", k004,
     "sudo fio --directory=/mnt/p_iops_vol0 --name fio_test_file --direct=1 --rw=randread --bs=16k --size=1G "
     "--numjobs=16 --time_based --runtime=180 --group_reporting --norandommap",
     "", "", true, false},
    {"cloud-randwrite-iops", k002,
     "sudo fio -direct=1 -iodepth=128 -rw=randwrite -ioengine=libaio -bs=4k -size=1G -numjobs=1 "
     "-runtime=1000 "
     "-group_reporting -filename=/dev/your_device -name=Rand_Write_Testing",
     "", "", false, false},
    {"cloud-randread-iops", k002,
     "sudo fio -direct=1 -iodepth=128 -rw=randread -ioengine=libaio -bs=4k -size=1G -numjobs=1 -runtime=1000 "
     "-group_reporting -filename=/dev/your_device -name=Rand_Read_Testing",
     "", "", false, false},
    {"cloud-seqwrite-bw", k002,
     "sudo fio -direct=1 -iodepth=64 -rw=write -ioengine=libaio -bs=1024k -size=1G -numjobs=1 -runtime=1000 "
     "-group_reporting -filename=/dev/your_device -name=Write_PPS_Testing",
     "", "", false, false},
    {"cloud-seqread-bw", k002,
     "sudo fio -direct=1 -iodepth=64 -rw=read -ioengine=libaio -bs=1024k -size=1G -numjobs=1 -runtime=1000 "
     "-group_reporting -filename=/dev/your_device -name=Read_PPS_Testing",
     "", "", false, false},
    {"cloud-randwrite-lat", k002,
     "sudo fio -direct=1 -iodepth=1 -rw=randwrite -ioengine=libaio -bs=4k -size=1G -numjobs=1 "
     "-group_reporting "
     "-filename=/dev/your_device -name=Rand_Write_Latency_Testing",
     "", "", false, false},
    {"cloud-randread-lat", k002,
     "sudo fio -direct=1 -iodepth=1 -rw=randread -ioengine=libaio -bs=4k -size=1G -numjobs=1 "
     "-group_reporting "
     "-filename=/dev/your_device -name=Rand_Read_Latency_Testing",
     "", "", false, false},
    {"local-randwrite-iops", k002,
     "sudo fio -direct=1 -iodepth=32 -rw=randwrite -ioengine=libaio -bs=4k -numjobs=4 -time_based=1 "
     "-runtime=1000 "
     "-group_reporting -filename=/dev/your_device -name=test",
     "", "", false, false},
    {"local-randread-iops", k002,
     "sudo fio -direct=1 -iodepth=32 -rw=randread -ioengine=libaio -bs=4k -numjobs=4 -time_based=1 "
     "-runtime=1000 "
     "-group_reporting -filename=/dev/your_device -name=test",
     "", "", false, false},
    {"local-seqwrite-bw", k002,
     "sudo fio -direct=1 -iodepth=128 -rw=write -ioengine=libaio -bs=128k -numjobs=1 -time_based=1 "
     "-runtime=1000 "
     "-group_reporting -filename=/dev/your_device -name=test",
     "", "", false, false},
    {"local-seqread-bw", k002,
     "sudo fio -direct=1 -iodepth=128 -rw=read -ioengine=libaio -bs=128k -numjobs=1 -time_based=1 "
     "-runtime=1000 "
     "-group_reporting -filename=/dev/your_device -name=test",
     "", "", false, false},
    {"local-randwrite-lat", k002,
     "sudo fio -direct=1 -iodepth=1 -rw=randwrite -ioengine=libaio -bs=4k -numjobs=1 -time_based=1 "
     "-runtime=1000 "
     "-group_reporting -filename=/dev/your_device -name=test",
     "", "", false, false},
    {"local-randread-lat", k002,
     "sudo fio -direct=1 -iodepth=1 -rw=randread -ioengine=libaio -bs=4k -numjobs=1 -time_based=1 "
     "-runtime=1000 "
     "-group_reporting -filename=/dev/your_device -name=test",
     "", "", false, false},
    {"local-seqwrite-lat", k002,
     "sudo fio -direct=1 -iodepth=1 -rw=write -ioengine=libaio -bs=4k -numjobs=1 -time_based=1 -runtime=1000 "
     "-group_reporting -filename=/dev/your_device -name=test",
     "", "", false, false},
    {"local-seqread-lat", k002,
     "sudo fio -direct=1 -iodepth=1 -rw=read -ioengine=libaio -bs=4k -numjobs=1 -time_based=1 -runtime=1000 "
     "-group_reporting -filename=/dev/your_device -name=test",
     "", "", false, false},
    {"fuga-randread", k003,
     "fio -direct=1 -iodepth=128 -rw=randread -ioengine=libaio -bs=4k -size=1G -numjobs=32 -runtime=15 "
     "-filename=fio_iotest -name=test -group_reporting -gtod_reduce=1",
     "", "", false, false},
    {"fuga-randwrite", k003,
     "fio -direct=1 -iodepth=128 -rw=randwrite -ioengine=libaio -bs=4k -size=1G -numjobs=32 -runtime=15 "
     "-filename=fio_iotest -name=test -group_reporting -gtod_reduce=1",
     "", "", false, false},
    {"fuga-randwrite-bw", k003,
     "fio -direct=1 -iodepth=128 -rw=randwrite -ioengine=libaio -bs=512k -size=1G -numjobs=32 -runtime=15 "
     "-filename=iotest -name=test -group_reporting -gtod_reduce=1",
     "", "", false, false},
};

// The seed's dd lines: a write of the test file, then a read of it back.
struct DdRow {
  const char* profile;
  const char* command;     // verbatim
  const char* written_by;  // a read's write line: dd reads the whole file it left ("" for a write)
};

constexpr const char* kDd1g = "dd if=/dev/zero of=./test1.bin bs=1G count=1 oflag=sync,noatime,nocache";
constexpr const char* kDd1m = "dd if=/dev/zero of=./test1.bin bs=1M count=1024 oflag=sync,noatime,nocache";
constexpr const char* kDd4k = "dd if=/dev/zero of=./test1.bin bs=4096 count=256 oflag=sync,noatime,nocache";
const DdRow kDdRows[] = {
    {"fuga-dd-write-1g", kDd1g, ""},
    {"fuga-dd-read-1g", "dd if=./test1.bin of=/dev/null bs=1G iflag=sync,noatime,nocache", kDd1g},
    {"fuga-dd-write-1m", kDd1m, ""},
    {"fuga-dd-read-1m", "dd if=./test1.bin of=/dev/null bs=1M iflag=sync,noatime,nocache", kDd1m},
    {"fuga-dd-write-4k", kDd4k, ""},
    {"fuga-dd-read-4k", "dd if=./test1.bin of=/dev/null bs=4096 iflag=sync,noatime,nocache", kDd4k},
};

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> w;
  for (std::string x; in >> x;) w.push_back(x);
  return w;
}

// fio options of one command line: "-x=v", "--x=v", "--x v" and bare flags ("--norandommap").
std::map<std::string, std::string> fio_options(const std::string& line, const std::string& vars) {
  std::map<std::string, std::string> shell;
  for (const auto& v : words(vars)) shell[v.substr(0, v.find('='))] = v.substr(v.find('=') + 1);
  auto w = words(line);
  std::map<std::string, std::string> opts;
  for (size_t i = 0; i < w.size(); ++i) {
    if (w[i].empty() || w[i][0] != '-') continue;
    std::string key = w[i].substr(w[i].find_first_not_of('-'));
    std::string value;
    if (auto eq = key.find('='); eq != std::string::npos) {
      value = key.substr(eq + 1);
      key = key.substr(0, eq);
    } else if (i + 1 < w.size() && w[i + 1][0] != '-') {
      value = w[++i];
    }
    if (value.size() > 3 && value.rfind("${", 0) == 0) {
      std::string var = value.substr(2, value.size() - 3);
      if (shell.count(var)) value = shell[var];
    }
    opts[key] = value;
  }
  return opts;
}

// "30s" or "1000": fio's runtime is in seconds either way.
double seconds(const std::string& v) { return std::stod(v); }

bool flag(const std::map<std::string, std::string>& o, const std::string& key) {
  auto it = o.find(key);
  return it != o.end() && it->second != "0";
}

bool any_note_mentions(const JobSpec& s, const std::string& what) {
  for (const auto& n : s.notes) {
    if (n.find(what) != std::string::npos) return true;
  }
  return false;
}

std::string seed_dir() {
  if (const char* env = std::getenv("DISKPROBE_SEED_DIR"); env && *env) return env;
  return "/work/shared/seeds";
}

// The seed's parameters, one by one, against the profile; every fio option in the seed line
// must be accounted for.
void check_row(const SeedRow& row) {
  INFO(row.profile << " <- " << row.seed_file << ": " << row.command);
  auto spec = profiles::load(row.profile, kBuiltIn);
  INFO((spec.ok() ? std::string() : spec.error()));
  REQUIRE(spec.ok());
  CHECK(spec->source.rfind(seed_title(row.seed_file), 0) == 0);
  auto o = fio_options(row.command, row.shell_vars);

  for (const auto& [key, value] : o) {
    INFO("seed option " << key << "=" << value);
    if (key == "ioengine") {
      CHECK(value == "libaio");
      CHECK(spec->engine == EngineKind::IoUring);
    } else if (key == "iodepth") {
      CHECK(spec->iodepth == std::stoul(value));
    } else if (key == "rw") {
      CHECK(to_string(spec->rw) == value);
    } else if (key == "bs") {
      CHECK(spec->bs == *parse_size(value));
    } else if (key == "size") {
      CHECK(spec->size == *parse_size(value));
    } else if (key == "numjobs") {
      CHECK(spec->numjobs == std::stoul(value));
    } else if (key == "runtime") {
      CHECK(spec->runtime_s == seconds(value));
    } else if (key == "time_based") {
      CHECK(spec->time_based == (value != "0"));
    } else if (key == "direct") {
      CHECK(spec->direct == (value == "1"));
    } else if (key == "norandommap") {
      CHECK(spec->norandommap);
    } else if (key == "refill_buffers") {
      CHECK(spec->refill_buffers);
    } else if (key == "randrepeat") {
      CHECK(spec->randrepeat == (value != "0"));
    } else if (key == "cpus_allowed_policy") {
      CHECK(value == "split");
    } else if (key == "cpus_allowed") {
      // $EFFECTIVE_SMP: the completion interrupt's CPU; $spincpu: the hardware queues' CPUs.
      CHECK(spec->host.pinning == (value == "$EFFECTIVE_SMP" ? PinPolicy::Irq : PinPolicy::HwQueues));
    } else if (key == "directory") {
      CHECK(spec->directory.empty());  // runs on the raw device unless --directory is given
      CHECK(any_note_mentions(*spec, "--directory=" + value));
    } else if (key == "filename") {
      if (value.find("/dev/") == std::string::npos && value.rfind("$", 0) != 0) {
        CHECK(any_note_mentions(*spec, value));  // a file, not a device: said in a note
      }
    } else if (key == "gtod_reduce") {
      CHECK(any_note_mentions(*spec, "gtod_reduce"));
    } else if (key == "name" || key == "group_reporting") {
      // fio's job label and its summing of jobs: diskprobe always reports the group.
    } else {
      FAIL("seed option --" << key << " is not reproduced by any profile field");
    }
  }
  // What the seed leaves at fio's defaults.
  if (!o.count("ioengine")) CHECK(spec->engine == EngineKind::Sync);  // fio's default psync
  if (!o.count("iodepth")) CHECK(spec->iodepth == 1);
  if (!o.count("time_based")) CHECK_FALSE(spec->time_based);
  if (!o.count("runtime")) CHECK(spec->runtime_s == 0);
  if (!o.count("size")) CHECK(spec->size == 0);
  if (!o.count("norandommap")) CHECK_FALSE(spec->norandommap);
  if (!o.count("refill_buffers")) CHECK_FALSE(spec->refill_buffers);
  if (!o.count("randrepeat")) CHECK(spec->randrepeat);
  if (!o.count("cpus_allowed")) CHECK(spec->host.pinning == PinPolicy::None);

  // The script's queue setting, C-states and idle=poll.
  std::string rq = row.rq_affinity;
  if (rq.empty()) {
    CHECK_FALSE(spec->host.rq_affinity.has_value());
  } else {
    REQUIRE(spec->host.rq_affinity.has_value());
    CHECK(*spec->host.rq_affinity == rq[5] - '0');  // "echo N > ..."
  }
  CHECK(spec->host.hold_cstates == (row.cstates_off || row.idle_poll));
  CHECK(spec->host.advise_idle_poll == row.idle_poll);

  // `profile show` prints the fio equivalent: it carries the seed's workload options.
  auto shown = fio_options(profiles::fio_command_line(*spec), "");
  for (const char* key : {"iodepth", "rw", "bs", "size", "numjobs", "runtime", "time_based", "direct",
                          "norandommap", "refill_buffers", "randrepeat", "cpus_allowed_policy"}) {
    if (!o.count(key)) continue;
    INFO("fio equivalent: " << profiles::fio_command_line(*spec) << " option " << key);
    REQUIRE(shown.count(key));
    if (std::string(key) == "bs" || std::string(key) == "size") {
      CHECK(*parse_size(shown[key]) == *parse_size(o[key]));
    } else if (std::string(key) == "runtime") {
      CHECK(std::stod(shown[key]) == std::stod(o[key]));
    } else if (std::string(key) == "time_based" || std::string(key) == "norandommap" ||
               std::string(key) == "refill_buffers") {
      CHECK(flag(shown, key) == flag(o, key));
    } else {
      CHECK(shown[key] == o[key]);
    }
  }
}

// dd's operands: "bs=1G" -> {bs, 1G}.
std::map<std::string, std::string> dd_operands(const std::string& line) {
  std::map<std::string, std::string> o;
  for (const auto& w : words(line)) {
    if (auto eq = w.find('='); eq != std::string::npos) o[w.substr(0, eq)] = w.substr(eq + 1);
  }
  return o;
}

// The bytes one dd line moves: bs x count, or for a read without count the file its write left.
uint64_t dd_bytes(const DdRow& row) {
  auto o = dd_operands(*row.written_by ? row.written_by : row.command);
  return *parse_size(o["bs"]) * std::stoull(o["count"]);
}

// A dd line as fio would run it: one job, one blocking I/O at a time, sequential, O_SYNC and
// O_DIRECT for sync,nocache; every operand accounted for in a field or a note.
void check_dd_row(const DdRow& row) {
  INFO(row.profile << " <- " << row.command);
  auto spec = profiles::load(row.profile, kBuiltIn);
  INFO((spec.ok() ? std::string() : spec.error()));
  REQUIRE(spec.ok());
  CHECK(spec->source.rfind(seed_title(k003), 0) == 0);
  auto o = dd_operands(row.command);
  bool writes = o["if"] == "/dev/zero";
  CHECK(spec->rw == (writes ? RwMode::Write : RwMode::Read));
  CHECK(o[writes ? "of" : "if"] == "./test1.bin");
  CHECK(any_note_mentions(*spec, "test1.bin"));
  if (writes) CHECK(any_note_mentions(*spec, "/dev/zero"));
  CHECK(spec->bs == *parse_size(o["bs"]));
  CHECK(spec->size == dd_bytes(row));
  CHECK(spec->engine == EngineKind::Sync);
  CHECK(spec->iodepth == 1);
  CHECK(spec->numjobs == 1);
  CHECK_FALSE(spec->time_based);
  CHECK(spec->runtime_s == 0);  // dd moves its bytes once, however long it takes
  CHECK(spec->offset == 0);
  const std::string flag = writes ? "oflag" : "iflag";
  REQUIRE(o.count(flag));
  std::string flags = o[flag] + ",";
  for (size_t at = 0, comma; (comma = flags.find(',', at)) != std::string::npos; at = comma + 1) {
    std::string f = flags.substr(at, comma - at);
    INFO(flag << "=" << f);
    CHECK(any_note_mentions(*spec, flag + "=" + f));
    if (f == "sync") {
      CHECK(spec->sync);
    } else if (f == "nocache") {
      CHECK(spec->direct);
    } else {
      CHECK(f == "noatime");  // every target is opened O_NOATIME: said in the note
    }
  }
  for (const auto& [key, value] : o) {
    INFO("dd operand " << key << "=" << value);
    CHECK((key == "if" || key == "of" || key == "bs" || key == "count" || key == flag));
  }
  auto shown = fio_options(profiles::fio_command_line(*spec), "");
  INFO("fio equivalent: " << profiles::fio_command_line(*spec));
  CHECK(shown["ioengine"] == "psync");
  CHECK(shown["sync"] == "1");
  CHECK(shown["direct"] == "1");
  CHECK(shown["rw"] == (writes ? "write" : "read"));
  CHECK(*parse_size(shown["bs"]) == spec->bs);
  CHECK(*parse_size(shown["size"]) == dd_bytes(row));
  CHECK(shown["numjobs"] == "1");
  CHECK_FALSE(shown.count("runtime"));
  CHECK_FALSE(shown.count("time_based"));
}

}  // namespace

TEST_CASE("the seed's dd lines are sequential sync I/O profiles with dd's exact sizes", "[profiles][seeds]") {
  for (const auto& row : kDdRows) check_dd_row(row);
}

TEST_CASE("every built-in profile reproduces its seed command line", "[profiles][seeds]") {
  for (const auto& row : kRows) check_row(row);
}

TEST_CASE("every built-in profile has a seed row, and every row a profile", "[profiles][seeds]") {
  auto all = profiles::list(kBuiltIn);
  CHECK(all.size() == std::size(kRows) + std::size(kDdRows));
  for (const auto& p : all) {
    INFO(p.name);
    bool found = false;
    for (const auto& row : kRows) found |= p.name == row.profile;
    for (const auto& row : kDdRows) found |= p.name == row.profile;
    CHECK(found);
  }
}

TEST_CASE("the quoted seed lines are really in the seed documents", "[profiles][seeds]") {
  std::string dir = seed_dir();
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    WARN("seed documents not found in " << dir
                                        << " (set DISKPROBE_SEED_DIR): only the quoted table was checked");
    return;
  }
  for (const auto& row : kRows) {
    std::ifstream f(dir + "/" + row.seed_file);
    REQUIRE(f.good());
    std::stringstream ss;
    ss << f.rdbuf();
    std::string text = ss.str();
    INFO(row.profile << ": " << row.command);
    CHECK(text.find(row.command) != std::string::npos);
    if (*row.rq_affinity) CHECK(text.find(row.rq_affinity) != std::string::npos);
    if (row.cstates_off) CHECK(text.find("cpupower idle-set -d") != std::string::npos);
    if (row.idle_poll) CHECK(text.find("idle=poll") != std::string::npos);
    if (*row.shell_vars) CHECK(text.find("RunFio 10 128 4k randwrite 1024g") != std::string::npos);
  }
  std::ifstream f(dir + "/" + k003);
  std::stringstream ss;
  ss << f.rdbuf();
  for (const auto& row : kDdRows) {
    INFO(row.profile << ": " << row.command);
    CHECK(ss.str().find(row.command) != std::string::npos);
  }
}

// `diskprobe run --profile P` followed by the seed's own fio options (pasted, one dash or two,
// "--x v" or "--x=v", bare switches) parses into exactly the profile's JobSpec. Only a CPU
// list the script computes ($EFFECTIVE_SMP) and its policy are left out: they are the
// profile's pinning. libaio runs on io_uring and gtod_reduce is ignored, each with a note.
TEST_CASE("the seed fio command lines parse on diskprobe's command line into their profile's JobSpec",
          "[profiles][seeds][cli]") {
  for (const auto& row : kRows) {
    INFO(row.profile << ": " << row.command);
    std::map<std::string, std::string> shell;
    for (const auto& v : words(row.shell_vars)) shell[v.substr(0, v.find('='))] = v.substr(v.find('=') + 1);
    std::vector<std::string> args = {"diskprobe", "run", "--profile", row.profile};
    auto w = words(row.command);
    auto fio = std::find(w.begin(), w.end(), "fio");
    REQUIRE(fio != w.end());
    for (auto it = fio + 1; it != w.end(); ++it) {
      std::string word = *it;
      if (auto d = word.find("${"); d != std::string::npos) {
        std::string var = word.substr(d + 2, word.find('}', d) - d - 2);
        if (shell.count(var)) word = word.substr(0, d) + shell[var];  // ${filename}: a path left as is
      }
      if (word.find("cpus_allowed") != std::string::npos) continue;  // =$VAR or its policy
      args.push_back(word);
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    std::string error;
    auto parsed = cli::parse(static_cast<int>(argv.size()), argv.data(), error);
    INFO("parse error: " << error);
    REQUIRE(parsed.has_value());
    auto o = fio_options(row.command, row.shell_vars);
    auto noted = [&](const std::string& what) {
      return std::any_of(parsed->notes.begin(), parsed->notes.end(),
                         [&](const std::string& n) { return n.find(what) != std::string::npos; });
    };
    if (o["ioengine"] == "libaio") CHECK(noted("--ioengine libaio: ran on diskprobe's io_uring engine"));
    if (o.count("gtod_reduce")) CHECK(noted("--gtod_reduce=1 ignored"));
    CHECK(parsed->name == o["name"]);
    CHECK(parsed->filename == (o.count("filename") ? o["filename"] : ""));
    CHECK(parsed->directory == (o.count("directory") ? o["directory"] : ""));
    auto profile = profiles::load(row.profile, kBuiltIn);
    REQUIRE(profile.ok());
    JobSpec from_cli = *profile;
    auto st = profiles::apply_overrides(from_cli, parsed->overrides);
    INFO((st.ok() ? std::string() : st.error()));
    REQUIRE(st.ok());
    CHECK(to_json(from_cli).dump() == to_json(*profile).dump());
    CHECK(from_cli.group_reporting == profile->group_reporting);
    CHECK(from_cli.group_reporting);  // every seed line asks for it
  }
}
