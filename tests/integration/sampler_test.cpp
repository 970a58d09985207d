// The --paranoid zero sampler and the zeroing after write runs, through the diskprobe binary
// on loop devices the test makes: back-to-back runs pass, foreign bytes are refused and left
// alone, and `check`/`devices` never write.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "harness.h"

namespace {

using testing::must;

using nlohmann::json;
constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kGiB = 1ull << 30;

bool all_zero(const std::string& s) { return s.find_first_not_of('\0') == std::string::npos; }

// The first and last 4 MiB: what diskprobe zeroes after a write run.
bool edges_zero(const std::string& dev, uint64_t size) {
  return all_zero(testing::read_bytes(dev, 0, 4 * kMiB)) &&
         all_zero(testing::read_bytes(dev, size - 4 * kMiB, 4 * kMiB));
}

json check_json(const std::string& dev, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args{"check", dev, "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  auto r = testing::run_diskprobe(args);
  INFO(r.out << r.err);
  REQUIRE((r.exit_code == 0 || r.exit_code == 3));
  auto j = json::parse(r.out);
  CHECK(j["safe"].get<bool>() == (r.exit_code == 0));
  return j;
}

std::vector<std::string> codes(const json& verdict) {
  std::vector<std::string> c;
  for (const auto& r : verdict["reasons"]) c.push_back(r["code"]);
  return c;
}

// A short write run with the profile's host tuning left alone (other tests share the host).
testing::CommandResult write_run(const std::string& dev, const std::vector<std::string>& overrides) {
  std::vector<std::string> args{"run",       "--profile", "essd-plx-iops", dev, "--no-tune",
                                "--numjobs", "1",         "--iodepth",     "16"};
  args.insert(args.end(), overrides.begin(), overrides.end());
  return testing::run_diskprobe(args);
}

using testing::sectors_written;

}  // namespace

TEST_CASE("back-to-back write runs pass the default paranoid preflight, for every bs", "[sampler]") {
  auto loop = testing::make_loop(kGiB);
  const std::string dev = loop.path();
  auto fresh = check_json(dev);
  CHECK(fresh["safe"] == true);
  CHECK(fresh["sampler"]["ran"] == true);  // 1 GiB: on by default in write mode
  CHECK(fresh["sampler"]["zero_windows"] == fresh["sampler"]["windows"]);

  // Each run writes the whole device sequentially, so every sampled place is its data.
  for (const std::string bs : {"4k", "128k", "1m", "4m", "12k"}) {
    SECTION("bs " + bs) {
      auto r = write_run(dev, {"--rw", "write", "--bs", bs, "--time_based", "false", "--runtime", "0",
                               "--size", std::to_string(kGiB)});
      INFO(r.out << r.err);
      REQUIRE(r.exit_code == 0);
      CHECK(r.err.find("zeroed the first and last 4 MiB of " + dev) != std::string::npos);
      CHECK(edges_zero(dev, kGiB));
      CHECK_FALSE(all_zero(testing::read_bytes(dev, 512 * kMiB, kMiB)));  // the run did write

      auto again = check_json(dev);
      INFO(again.dump(2));
      CHECK(again["safe"] == true);
      CHECK(again["sampler"]["own_data_windows"].get<int>() > 0);
      CHECK(again["sampler"]["foreign_offsets_bytes"].empty());

      // And a second run, a random one, on top of the first passes the preflight too.
      auto second = write_run(dev, {"--rw", "randwrite", "--bs", "4k", "--runtime", "1"});
      INFO(second.out << second.err);
      CHECK(second.exit_code == 0);
      CHECK(edges_zero(dev, kGiB));
      // Each check samples other places. After bs 4m, one check in three refused the device: a
      // window in a 4 MiB block whose header a 4 KiB write had replaced, judged before the 4 MiB
      // run's write size was known, with nothing but the zeroed first 4 MiB at the aligned
      // starts beyond it.
      for (int i = 0; i < 12; ++i) {
        auto j = check_json(dev);
        INFO("check " << i << ": " << j.dump(2));
        CHECK(j["safe"] == true);
      }
    }
  }
}

TEST_CASE("random foreign bytes with no signature are refused, left unchanged, and allowed on request",
          "[sampler]") {
  auto loop = testing::make_loop(kGiB);
  const std::string dev = loop.path();
  // Half the device in the middle: 64 random samples all missing it is a 2^-64 chance.
  must("dd if=/dev/urandom of=" + dev + " bs=1M seek=256 count=512 oflag=direct status=none");
  const std::string middle = testing::read_bytes(dev, 256 * kMiB, 512 * kMiB);
  const std::string edges = testing::edges(dev, kGiB);
  auto blkid = testing::run({"blkid", "-p", dev});
  CHECK(blkid.exit_code == 2);  // no signature: only the sampler can see this data

  auto v = check_json(dev);
  CHECK(codes(v) == std::vector<std::string>{"nonzero-data"});
  REQUIRE_FALSE(v["sampler"]["foreign_offsets_bytes"].empty());
  for (uint64_t off : v["sampler"]["foreign_offsets_bytes"]) {
    CHECK(off >= 256 * kMiB);
    CHECK(off < 768 * kMiB);
  }
  auto text = testing::run_diskprobe({"check", dev});
  CHECK(text.exit_code == 3);
  CHECK(text.out.find("nonzero-data: " + dev + " is not blank") != std::string::npos);

  auto run = write_run(dev, {"--runtime", "1"});
  INFO(run.out << run.err);
  CHECK(run.exit_code == 3);
  CHECK(run.err.find("nonzero-data") != std::string::npos);
  CHECK(run.err.find("zeroed") == std::string::npos);
  CHECK(testing::read_bytes(dev, 256 * kMiB, 512 * kMiB) == middle);
  CHECK(testing::edges(dev, kGiB) == edges);

  CHECK(check_json(dev, {"--no-paranoid"})["safe"] == true);
  auto allowed = check_json(dev, {"--allow-nonzero"});
  CHECK(allowed["safe"] == true);
  CHECK(allowed["sampler"]["skipped"] == "--allow-nonzero");
  auto forced = write_run(dev, {"--runtime", "1", "--allow-nonzero"});
  INFO(forced.out << forced.err);
  CHECK(forced.exit_code == 0);
  CHECK(edges_zero(dev, kGiB));
}

TEST_CASE("--paranoid samples a small device; read mode never samples", "[sampler]") {
  auto loop = testing::make_loop(64 * kMiB);
  const std::string dev = loop.path();
  must("dd if=/dev/urandom of=" + dev + " bs=1M seek=16 count=32 oflag=direct status=none");
  auto def = check_json(dev);
  CHECK(def["safe"] == true);  // below 1 GiB: not sampled by default
  CHECK(def["sampler"]["ran"] == false);
  CHECK(codes(check_json(dev, {"--paranoid"})) == std::vector<std::string>{"nonzero-data"});
  CHECK(check_json(dev, {"--paranoid", "--mode", "read"})["safe"] == true);
  auto both = testing::run_diskprobe({"check", dev, "--paranoid", "--no-paranoid"});
  CHECK(both.exit_code == 2);
}

TEST_CASE("a run over the middle of a device zeroes nothing outside its region", "[sampler]") {
  auto loop = testing::make_loop(64 * kMiB);
  const std::string dev = loop.path();
  must("dd if=/dev/urandom of=" + dev + " bs=1M count=1 oflag=direct status=none");
  must("dd if=/dev/urandom of=" + dev + " bs=1M seek=63 count=1 oflag=direct status=none");
  const std::string edges = testing::edges(dev, 64 * kMiB);
  auto r = write_run(
      dev, {"--rw", "write", "--bs", "64k", "--time_based", "false", "--runtime", "0", "--offset",
            std::to_string(16 * kMiB), "--size", std::to_string(32 * kMiB), "--paranoid", "--allow-nonzero"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("nothing to zero") != std::string::npos);
  CHECK(testing::edges(dev, 64 * kMiB) == edges);
  CHECK_FALSE(all_zero(testing::read_bytes(dev, 16 * kMiB, kMiB)));
}

TEST_CASE("diskprobe's data copied to another device is foreign there", "[sampler]") {
  auto a = testing::make_loop(256 * kMiB);
  auto b = testing::make_loop(256 * kMiB);
  auto r = write_run(a.path(), {"--rw", "write", "--bs", "64k", "--time_based", "false", "--runtime", "0",
                                "--size", std::to_string(256 * kMiB), "--paranoid"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  must("dd if=" + a.path() + " of=" + b.path() + " bs=1M iflag=direct oflag=direct status=none");
  CHECK(check_json(a.path(), {"--paranoid"})["safe"] == true);
  auto v = check_json(b.path(), {"--paranoid"});
  CHECK(codes(v) == std::vector<std::string>{"nonzero-data"});
  CHECK(v["reasons"][0]["message"].get<std::string>().find("another device") != std::string::npos);
}

TEST_CASE("an interrupted write run zeroes the edges too", "[sampler]") {
  auto loop = testing::make_loop(kGiB);
  const std::string dev = loop.path();
  // Sequential from offset 0: the first 4 MiB are written within the first second.
  std::string cmd = std::string(DISKPROBE_BIN) + " run --profile essd-plx-iops " + dev +
                    " --no-tune --numjobs 1 --iodepth 16 --rw write --bs 128k --runtime 60 & pid=$!; "
                    "sleep 2; kill -INT $pid; wait $pid";
  auto r = testing::sh(cmd);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("interrupted by") != std::string::npos);
  CHECK(r.err.find("zeroed the first and last 4 MiB of " + dev) != std::string::npos);
  CHECK(edges_zero(dev, kGiB));
  CHECK_FALSE(all_zero(testing::read_bytes(dev, 4 * kMiB, 4 * kMiB)));
  CHECK(check_json(dev)["safe"] == true);
}

TEST_CASE("devices and check show every field and reason, and never write", "[sampler]") {
  auto blank = testing::make_loop(kGiB);
  auto ext4 = testing::make_loop(64 * kMiB);
  must("mkfs.ext4 -F -q " + ext4.path());
  const uint64_t w_blank = sectors_written(blank.name()), w_ext4 = sectors_written(ext4.name());

  auto text = testing::run_diskprobe({"devices"});
  INFO(text.out << text.err);
  REQUIRE(text.exit_code == 0);
  auto list = testing::run_diskprobe({"devices", "--json"});
  REQUIRE(list.exit_code == 0);
  auto j = json::parse(list.out);
  bool seen_blank = false, seen_ext4 = false;
  for (const auto& d : j) {
    for (const char* field : {"name", "path", "size_bytes", "model", "serial", "partitions", "holders",
                              "signatures", "mounts", "verdict"}) {
      CHECK(d.contains(field));
    }
    const auto& v = d["verdict"];
    // A device that could not be probed says so; it is never reported safe or empty.
    for (const auto& r : v["reasons"]) {
      if (r["code"] != "cannot-probe") continue;
      CHECK(v["safe"] == false);
      if (v["probed"] == false) CHECK(d["signatures"].is_null());  // unknown, never "none"
    }
    if (d["path"] == blank.path()) {
      seen_blank = true;
      CHECK(v["safe"] == true);
      CHECK(v["sampler"]["ran"] == true);
    }
    if (d["path"] == ext4.path()) {
      seen_ext4 = true;
      CHECK(codes(v) == std::vector<std::string>{"signature"});
      CHECK(d["signatures"][0]["type"] == "ext4");
    }
  }
  CHECK(seen_blank);
  CHECK(seen_ext4);
  CHECK(text.out.find(blank.path() + "  1.0GiB") != std::string::npos);
  CHECK(text.out.find("signatures: ext4 (filesystem) at offset 1080") != std::string::npos);
  CHECK(text.out.find("verdict:    refused (signature)") != std::string::npos);

  auto c = testing::run_diskprobe({"check", ext4.path()});
  CHECK(c.exit_code == 3);
  CHECK(c.out.find("  signature: " + ext4.path() + " holds an ext4 filesystem") != std::string::npos);
  CHECK(sectors_written(blank.name()) == w_blank);
  CHECK(sectors_written(ext4.name()) == w_ext4);
}

TEST_CASE("check refuses the disk holding /, by exit code", "[sampler]") {
  std::ifstream mi("/proc/self/mountinfo");
  std::string line, source;
  while (std::getline(mi, line)) {
    auto dash = line.find(" - ");
    std::istringstream f(line);
    std::string id, parent, majmin, root_dir, mount_point;
    f >> id >> parent >> majmin >> root_dir >> mount_point;
    if (mount_point != "/" || dash == std::string::npos) continue;
    std::istringstream tail(line.substr(dash + 3));
    std::string fstype;
    tail >> fstype >> source;
  }
  if (source.rfind("/dev/", 0) != 0) {
    WARN("/ is on " << source << ", not a block device (a container?): nothing to check");
    return;
  }
  for (const char* mode : {"write", "read"}) {
    auto r = testing::run_diskprobe({"check", source, "--mode", mode});
    INFO(r.out << r.err);
    CHECK(r.exit_code == 3);
  }
}
