// compare, aggregate and --report on the JSON and HTML of real scratch runs; the HTML is
// rendered by headless Chromium when it is installed.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "harness.h"

namespace fs = std::filesystem;
using nlohmann::json;
using testing::run_diskprobe;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

void write(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  REQUIRE(f);
}

size_t count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + needle.size())) ++n;
  return n;
}

// Two short scratch runs, made once for every test case in this file. --no-tune: what is
// tested here reads reports, and another run on a shared machine may hold the host's settings.
struct Runs {
  std::string dir, a, b, html;
  Runs() {
    std::string t = (fs::temp_directory_path() / "diskprobe-reports-XXXXXX").string();
    REQUIRE(::mkdtemp(t.data()) != nullptr);
    dir = t;
    a = dir + "/a.json";
    b = dir + "/b.json";
    html = dir + "/a.html";
    for (const auto& [out, report] : {std::pair{a, html}, std::pair{b, std::string()}}) {
      std::vector<std::string> args{"run",       "--profile", "essd-plx-latency", "--scratch",       "256M",
                                    "--runtime", "2",         "--no-tune",        "--output-format", "json",
                                    "--output",  out};
      if (!report.empty()) {
        args.push_back("--report");
        args.push_back(report);
      }
      auto r = run_diskprobe(args);
      INFO(r.err);
      REQUIRE(r.exit_code == 0);
    }
  }
  ~Runs() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

Runs& runs() {
  static Runs r;
  return r;
}

// A copy of `src` with 20% fewer IOPS and bandwidth and 20% more latency, as a person would
// edit it by hand; `expectations` is added when given.
std::string worse_copy(const std::string& src, const std::string& name, const json& expectations = nullptr) {
  json j = json::parse(slurp(src));
  auto& w = j["write"];
  w["iops"] = w["iops"].get<double>() * 0.8;
  w["bw_bytes_per_s"] = w["bw_bytes_per_s"].get<double>() * 0.8;
  w["clat_ns"]["mean"] = w["clat_ns"]["mean"].get<double>() * 1.2;
  for (auto& [k, v] : w["clat_ns"]["percentiles"].items()) v = v.get<double>() * 1.2;
  if (!expectations.is_null()) j["expectations"] = expectations;
  std::string path = runs().dir + "/" + name;
  write(path, j.dump(2));
  return path;
}

}  // namespace

TEST_CASE("compare: a run against itself passes a 0% tolerance", "[compare]") {
  auto r = run_diskprobe({"compare", runs().a, runs().a, "--max-regression", "0%"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("write  IOPS") != std::string::npos);
  CHECK(r.out.find("+0.0%") != std::string::npos);
  CHECK(r.out.find("B is within 0% of A") != std::string::npos);
}

TEST_CASE("compare: a hand-edited worse copy exits 4 beyond 5%, and the reverse passes", "[compare]") {
  std::string worse = worse_copy(runs().a, "worse.json");
  auto r = run_diskprobe({"compare", runs().a, worse, "--max-regression", "5%"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 4);
  CHECK(r.out.find("-20.0%") != std::string::npos);
  CHECK(r.out.find("+20.0%") != std::string::npos);
  CHECK(count(r.out, "REGRESSION") == 5);
  CHECK(run_diskprobe({"compare", worse, runs().a, "--max-regression", "5%"}).exit_code == 0);
  CHECK(run_diskprobe({"compare", runs().a, worse, "--max-regression", "25%"}).exit_code == 0);
  CHECK(run_diskprobe({"compare", runs().a, worse}).exit_code == 0);  // no tolerance: a table only
}

TEST_CASE("compare: the two real runs, as JSON, agree with their reports", "[compare]") {
  auto r = run_diskprobe({"compare", runs().a, runs().b, "--json"});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  json c = json::parse(r.out);
  json a = json::parse(slurp(runs().a)), b = json::parse(slurp(runs().b));
  REQUIRE(c["rows"].size() == 5);
  CHECK(c["rows"][0]["metric"] == "IOPS");
  CHECK(c["rows"][0]["a"].get<double>() == Approx(a["write"]["iops"].get<double>()));
  CHECK(c["rows"][0]["b"].get<double>() == Approx(b["write"]["iops"].get<double>()));
}

TEST_CASE("compare: bad input is a usage error naming the file", "[compare]") {
  auto missing = run_diskprobe({"compare", runs().a, runs().dir + "/nope.json"});
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("nope.json") != std::string::npos);
  std::string notes = runs().dir + "/notes.json";
  write(notes, "{\"hello\": 1}");
  auto wrong = run_diskprobe({"compare", runs().a, notes});
  CHECK(wrong.exit_code == 2);
  CHECK(wrong.err.find("not a diskprobe run report") != std::string::npos);
  CHECK(run_diskprobe({"compare", runs().a, runs().b, "--max-regression", "lots"}).exit_code == 2);
  CHECK(run_diskprobe({"compare", runs().a}).exit_code == 2);
}

TEST_CASE("aggregate: real reports, one with a failed expectation", "[aggregate]") {
  json failing = json::array({{{"expression", "write.iops >= 100000000"}, {"met", false}}});
  std::string failed = worse_copy(runs().a, "host3.json", failing);
  auto ok = run_diskprobe({"aggregate", runs().a, runs().b});
  INFO(ok.out << ok.err);
  CHECK(ok.exit_code == 0);
  CHECK(ok.out.find("no volume failed its expectations") != std::string::npos);

  auto r = run_diskprobe({"aggregate", runs().a, runs().b, failed, "--json"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 4);
  json f = json::parse(r.out);
  REQUIRE(f["volumes"].size() == 3);
  CHECK(f["failed_volumes"] == 1);
  CHECK(f["volumes"][2]["expectations_failed"][0]["expectation"] == "write.iops >= 100000000");
  REQUIRE(f["fleet"].size() == 2);
  CHECK(f["fleet"][0]["metric"] == "IOPS");
  CHECK(f["fleet"][0]["volumes"] == 3);
  // The fleet's worst IOPS is the lowest of the three, whichever run that was.
  json a = json::parse(slurp(runs().a)), b = json::parse(slurp(runs().b));
  double worst = std::min(a["write"]["iops"].get<double>() * 0.8, b["write"]["iops"].get<double>());
  CHECK(f["fleet"][0]["worst"].get<double>() == Approx(worst));

  auto text = run_diskprobe({"aggregate", runs().a, runs().b, failed});
  CHECK(text.out.find("host3.json:") != std::string::npos);
  CHECK(text.out.find("1 volume failed its expectations") != std::string::npos);
  CHECK(run_diskprobe({"aggregate", runs().a, runs().dir + "/missing.json"}).exit_code == 2);
}

TEST_CASE("--report writes the run as a self-contained page with its charts", "[html]") {
  std::string html = slurp(runs().html);
  json a = json::parse(slurp(runs().a));
  REQUIRE(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html.find("id=\"iops-timeline\"") != std::string::npos);
  CHECK(html.find("id=\"cdf-write\"") != std::string::npos);
  // One point per whole second the JSON lists, with the same values.
  const auto& samples = a["write"]["iops_samples"];
  CHECK(count(html, "class=\"point\" data-series=\"write\"") == 2 * samples.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    char buf[128];
    std::snprintf(buf, sizeof buf, "data-series=\"write\" data-second=\"%zu\" data-value=\"%.3f\"", i + 1,
                  samples[i].get<double>());
    CHECK(html.find(buf) != std::string::npos);
  }
  CHECK(html.find("data-ns=\"" +
                  std::to_string(a["write"]["clat_ns"]["percentiles"]["99.00"].get<uint64_t>())) !=
        std::string::npos);
}

TEST_CASE("headless Chromium renders the report's charts", "[html][browser]") {
  auto which = testing::sh("command -v chromium || command -v chromium-browser");
  if (which.exit_code != 0) {
    WARN(
        "chromium is not installed (packaging/install-deps.sh --test installs it): browser rendering not "
        "checked");
    return;
  }
  std::string browser = which.out.substr(0, which.out.find('\n'));
  std::string profile = runs().dir + "/chromium-profile";
  auto chromium = [&](const std::vector<std::string>& extra, const std::string& url) {
    std::vector<std::string> argv{"timeout",
                                  "120",
                                  browser,
                                  "--headless",
                                  "--no-sandbox",
                                  "--disable-gpu",
                                  "--disable-background-networking",
                                  "--disable-component-update",
                                  "--disable-sync",
                                  "--no-first-run",
                                  "--user-data-dir=" + profile,
                                  "--window-size=1200,1600"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back(url);
    return testing::run(argv);
  };
  // The DOM after the browser parsed it: the SVG charts and their points are really there.
  auto dom = chromium({"--dump-dom"}, "file://" + runs().html);
  INFO(dom.err);
  REQUIRE(dom.exit_code == 0);
  CHECK(count(dom.out, "<svg") == 3);  // IOPS, bandwidth, write CDF
  CHECK(dom.out.find("<path class=\"cdf-line\"") != std::string::npos);
  CHECK(count(dom.out, "<circle class=\"point\"") >= 2);

  // A screenshot with charts in it is far more than a blank page of the same size.
  std::string shot = runs().dir + "/report.png", blank = runs().dir + "/blank.html",
              blank_shot = runs().dir + "/blank.png";
  write(blank, "<!DOCTYPE html><html><body></body></html>");
  REQUIRE(chromium({"--screenshot=" + shot}, "file://" + runs().html).exit_code == 0);
  REQUIRE(chromium({"--screenshot=" + blank_shot}, "file://" + blank).exit_code == 0);
  std::string png = slurp(shot), empty = slurp(blank_shot);
  REQUIRE(png.size() > 24);
  CHECK(png.compare(1, 3, "PNG") == 0);
  auto be32 = [&](size_t at) {
    return (static_cast<uint32_t>(static_cast<unsigned char>(png[at])) << 24) |
           (static_cast<uint32_t>(static_cast<unsigned char>(png[at + 1])) << 16) |
           (static_cast<uint32_t>(static_cast<unsigned char>(png[at + 2])) << 8) |
           static_cast<uint32_t>(static_cast<unsigned char>(png[at + 3]));
  };
  CHECK(be32(16) == 1200);  // IHDR width
  CHECK(be32(20) == 1600);  // IHDR height
  INFO("report screenshot " << png.size() << " bytes, blank page " << empty.size() << " bytes");
  CHECK(png.size() > 10 * empty.size());
  if (const char* keep = std::getenv("DISKPROBE_KEEP_SCREENSHOT"); keep && *keep)
    fs::copy_file(shot, keep, fs::copy_options::overwrite_existing);
}
