// The curve's HTML as a user sees it: headless Chromium renders a real curve (a loop device
// throttled by cgroup v1 blkio, so the knee is there), the screenshot is a picture and not one
// colour, the curve's colours are drawn, and the DOM holds every point and the knee marker.
// Skips (77) without chromium or blkio throttling. DISKPROBE_SCREENSHOT=FILE keeps the PNG.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "harness.h"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr const char* kChromium = "/usr/bin/chromium";

[[noreturn]] void skip(const std::string& why) {
  std::fprintf(stderr, "SKIP: %s\n", why.c_str());
  std::exit(77);
}

std::string chromium(const std::string& profile_dir, const std::string& what, const std::string& page) {
  return std::string(kChromium) +
         " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
         "--disable-background-networking "
         "--disable-component-update --disable-sync --user-data-dir=" +
         profile_dir + " --window-size=1200,900 " + what + " file://" + page;
}

size_t count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + needle.size())) ++n;
  return n;
}

}  // namespace

TEST_CASE("the curve's HTML in Chromium: a picture with the curve drawn, every point and the knee in the DOM",
          "[curve][html]") {
  if (::access(kChromium, X_OK) != 0) skip(std::string(kChromium) + " is not installed");
  if (!fs::exists("/sys/fs/cgroup/blkio/blkio.throttle.write_iops_device")) {
    skip("cgroup v1 blkio with throttling is not mounted at /sys/fs/cgroup/blkio");
  }
  auto loop = testing::make_loop(128ull << 20);
  testing::BlkioCgroup cg("diskprobe-curve-html-" + std::to_string(::getpid()));
  cg.set("blkio.throttle.write_iops_device", testing::dev_numbers(loop.path()) + " 997");
  testing::TempDir dir("diskprobe-curve-html");
  std::string html = dir.path + "/curve.html", png = dir.path + "/curve.png";
  auto r = testing::sh(
      cg.run_inside(std::string(DISKPROBE_BIN) + " curve " + loop.path() +
                    " --profile essd-plx-iops --numjobs 1 --no-tune --step-time 1 --max-iodepth 16"
                    " --output-format json --report " +
                    html));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  auto steps = json::parse(r.out)["steps"].size();
  REQUIRE(steps >= 3);

  auto shot = testing::sh(chromium(dir.path + "/profile", "--screenshot=" + png, html));
  INFO(shot.err);
  REQUIRE(fs::exists(png));
  if (const char* keep = std::getenv("DISKPROBE_SCREENSHOT"); keep && *keep)
    fs::copy_file(png, keep, fs::copy_options::overwrite_existing);
  // The three percentile colours, and the page's text.
  auto colours = testing::sh("python3 " + std::string(DISKPROBE_PNG_COLOURS) + " " + png +
                             " 1f77b4 ff7f0e d62728 222222");
  INFO(colours.out << colours.err);
  REQUIRE(colours.exit_code == 0);
  std::istringstream in(colours.out);
  std::string word;
  long n = 0;
  in >> word >> n;
  CHECK(n > 20);  // not one colour: text, grid, three curves, anti-aliasing
  for (int i = 0; i < 4; ++i) {
    long pixels = 0;
    in >> word >> pixels;
    INFO("colour " << word);
    CHECK(pixels > 50);
  }

  auto dom = testing::sh(chromium(dir.path + "/profile", "--dump-dom", html));
  INFO(dom.err);
  REQUIRE(dom.exit_code == 0);
  for (const char* series : {"p50", "p99", "p99.9"}) {
    INFO(series);
    CHECK(count(dom.out, std::string("class=\"point\" data-series=\"") + series + "\"") == steps);
  }
  CHECK(count(dom.out, "<g class=\"knee\"") == 1);
  CHECK(dom.out.find("IOPS delivered") != std::string::npos);
  CHECK(dom.out.find("completion latency (log scale)") != std::string::npos);
}
