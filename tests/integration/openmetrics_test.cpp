// --output-format openmetrics read by its consumers (issue 18): `promtool check metrics`
// (Debian's prometheus) accepts a real run's file, and a real prometheus-node-exporter,
// started on 127.0.0.1 with --collector.textfile.directory, serves every sample of it with the
// same value. Skips (77) where either tool is missing.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include "harness.h"

namespace {

// Seconds node_exporter may take to start listening on a loaded machine; it is polled, so a
// quick start costs nothing.
constexpr int kStartSeconds = 30;

void need(const char* tool, const char* package) {
  if (testing::sh(std::string("command -v ") + tool).exit_code != 0) {
    std::fprintf(stderr, "SKIP: %s is not installed (Debian package %s; packaging/install-deps.sh --test)\n",
                 tool, package);
    std::exit(77);  // nothing made yet: nothing to remove
  }
}

// A port nobody listens on now: bound to 0, read back, released for node_exporter.
int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
            ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0;
  ::close(fd);
  REQUIRE(ok);
  return ntohs(a.sin_port);
}

// Sample lines by series: the name and its labels sorted (node_exporter re-orders them),
// mapped to the value. Label values here hold no escaped quotes.
std::map<std::string, double> samples(const std::string& text, const std::string& prefix) {
  std::map<std::string, double> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) != 0) continue;
    auto open = line.find('{'), close = line.rfind('}');
    std::string key = line.substr(0, std::min(open, line.find(' ')));
    if (open != std::string::npos && close != std::string::npos) {
      std::map<std::string, std::string> labels;
      std::istringstream l(line.substr(open + 1, close - open - 1));
      for (std::string pair; std::getline(l, pair, ',');) labels[pair.substr(0, pair.find('='))] = pair;
      for (const auto& [k, pair] : labels) key += " " + pair;
    }
    out[key] = std::stod(line.substr(line.rfind(' ') + 1));
  }
  return out;
}

}  // namespace

TEST_CASE("promtool accepts a run's openmetrics and node_exporter's textfile collector serves it",
          "[openmetrics]") {
  need("promtool", "prometheus");
  need("prometheus-node-exporter", "prometheus-node-exporter");
  need("python3", "python3");
  testing::TempDir dir("diskprobe-openmetrics");
  auto loop = testing::make_loop(128ull << 20);
  const std::string prom = dir.path + "/diskprobe.prom";
  const auto before = std::time(nullptr);
  auto run = testing::sh(std::string(DISKPROBE_BIN) + " run --profile essd-plx-iops " + loop.path() +
                         " --no-tune --numjobs 1 --iodepth 8 --runtime 2 --offset 8M --size 100M"
                         " --volume essd-pl1:100 --expect 'iops>=1' --output-format openmetrics --output " +
                         prom);
  INFO(run.err);
  // 4: the loop device missed essd-pl1's IOPS on a loaded machine; the file is written alike.
  REQUIRE((run.exit_code == 0 || run.exit_code == 4));
  const auto after = std::time(nullptr);
  std::ifstream f(prom);
  std::stringstream file;
  file << f.rdbuf();
  const std::string written = file.str();
  CHECK(written.find("volume_type=\"essd-pl1\"") != std::string::npos);

  // promtool reads the file as Prometheus does and lints it (names, units, HELP, TYPE).
  auto check = testing::sh("promtool check metrics < " + prom);
  INFO("promtool: " << check.out << check.err);
  CHECK(check.exit_code == 0);
  CHECK(check.out + check.err == "");

  const int port = free_port();
  const std::string addr = "127.0.0.1:" + std::to_string(port);
  auto started = testing::sh(
      "prometheus-node-exporter --web.listen-address=" + addr +
      " --collector.disable-defaults --collector.textfile --collector.textfile.directory=" + dir.path +
      " > " + dir.path + "/node_exporter.log 2>&1 & echo $!");
  REQUIRE(started.exit_code == 0);
  const std::string pid = started.out.substr(0, started.out.find('\n'));
  testing::Guard stop(
      [&] { testing::sh("kill " + pid + " && while kill -0 " + pid + " 2>/dev/null; do sleep 0.1; done"); });

  testing::CommandResult served;
  const std::string fetch =
      "python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen("
      "\"http://" +
      addr + "/metrics\", timeout=5).read().decode())'";
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(kStartSeconds);
  do {
    served = testing::sh(fetch);
    if (served.exit_code == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  } while (std::chrono::steady_clock::now() < until);
  INFO("node_exporter log: " << testing::sh("cat " + dir.path + "/node_exporter.log").out);
  REQUIRE(served.exit_code == 0);
  CHECK(served.out.find("node_textfile_scrape_error 0") != std::string::npos);

  auto ours = samples(written, "diskprobe_"), theirs = samples(served.out, "diskprobe_");
  REQUIRE(ours.size() > 20);
  for (const auto& [series, value] : ours) {
    INFO(series);
    REQUIRE(theirs.count(series) == 1);
    CHECK(theirs[series] == Approx(value).epsilon(1e-9));
  }
  CHECK(theirs.size() == ours.size());
  bool has_iops = false, has_p99 = false;
  for (const auto& [series, value] : theirs) {
    if (series.rfind("diskprobe_iops ", 0) == 0 && value > 0) has_iops = true;
    if (series.rfind("diskprobe_completion_latency_seconds ", 0) == 0 &&
        series.find("quantile=\"0.99\"") != std::string::npos && value > 0)
      has_p99 = true;
  }
  CHECK(has_iops);
  CHECK(has_p99);
  // The run's start, in whole seconds, lies within the command's wall time.
  bool has_start = false;
  for (const auto& [series, value] : theirs) {
    if (series.rfind("diskprobe_run_timestamp_seconds ", 0) != 0) continue;
    has_start = true;
    CHECK(value >= static_cast<double>(before));
    CHECK(value <= static_cast<double>(after));
  }
  CHECK(has_start);
}
