// Hostile input (issue 13): each case crashed, hung or quoted megabytes before. Where input
// enters (profiles, extends, reports, fio lines, expectations) it is bounded, and whatever
// bytes a string holds the JSON, JUnit and HTML writers produce valid UTF-8.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "diskprobe/cli/args.h"
#include "diskprobe/acceptance/expect.h"
#include "diskprobe/report/html_report.h"
#include "diskprobe/spec/job_spec.h"
#include "diskprobe/base/json_io.h"
#include "diskprobe/base/units.h"
#include "diskprobe/report/report.h"
#include "diskprobe/stats/results.h"
#include "diskprobe/report/run_summary.h"
#include "diskprobe/base/sysroot.h"
#include "diskprobe/profiles/profiles.h"

using namespace diskprobe;
using Catch::Matchers::Contains;
using nlohmann::json;

namespace {

std::string nested(size_t depth, const std::string& around) {
  std::string v = std::string(depth, '[') + std::string(depth, ']');
  return around.substr(0, around.find('@')) + v + around.substr(around.find('@') + 1);
}

// One line a terminal shows whole (longer where it lists what is allowed).
void check_short_line(const std::string& message, size_t max = 400) {
  INFO(message.substr(0, 300));
  CHECK(message.size() <= max);
  CHECK(message.find('\n') == std::string::npos);
}

bool is_utf8(const std::string& s) { return valid_utf8(s) == s; }

struct TempDir {
  std::string path;
  TempDir() {
    std::string t = (std::filesystem::temp_directory_path() / "diskprobe-hostile-XXXXXX").string();
    path = ::mkdtemp(t.data()) ? t : "";
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    std::string p = path + "/" + name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
};

}  // namespace

TEST_CASE("a profile nested 60000 deep is an error, not a stack overflow while the message is built",
          "[hostile]") {
  auto s = profiles::parse(nested(60000, R"({"workload":{"rw":@}})"), "f.json");
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.error(), Contains("nested more than 64 deep"));
  check_short_line(s.error());
  // Nesting as deep as the limit still parses (and is refused for its value, shortly).
  auto at_limit = profiles::parse(nested(kMaxJsonDepth - 2, R"({"workload":{"rw":@}})"), "f.json");
  REQUIRE_FALSE(at_limit.ok());
  CHECK_THAT(at_limit.error(), Contains("workload.rw"));
  check_short_line(at_limit.error());
}

TEST_CASE("iodepth 1e400 is an error naming the number, not an abort", "[hostile]") {
  auto s = profiles::parse(R"({"workload":{"iodepth":1e400}})", "f.json");
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.error(), Contains("out of range") && Contains("1e400"));
  auto neg = profiles::parse(R"({"workload":{"iodepth":-1e400}})", "f.json");
  CHECK_FALSE(neg.ok());
  // In range as a double, not as a depth: refused with what is allowed.
  auto huge =
      profiles::parse(R"({"workload":{"iodepth":1e300, "time_based": true, "runtime": 1}})", "f.json");
  REQUIRE_FALSE(huge.ok());
  CHECK_THAT(huge.error(), Contains("a whole number from 1 to 65536"));
}

TEST_CASE("parse_json: every bad text is one short line, never an exception", "[hostile]") {
  const std::string long_token = "\"" + std::string(1 << 20, 'x');  // unterminated: nlohmann quotes it all
  for (const std::string& text : {std::string("{"), std::string("\xff"), std::string("[1e400]"), long_token,
                                  std::string("{\"a\": \"\xff\"}"), std::string(1 << 20, '['),
                                  std::string("123456789012345678901234567890e999")}) {
    auto j = parse_json(text, "r.json");
    REQUIRE_FALSE(j.ok());
    CHECK_THAT(j.error(), Contains("r.json"));
    check_short_line(j.error());
  }
  // Brackets inside strings are not nesting.
  CHECK(parse_json("{\"a\": \"" + std::string(1000, '[') + "\"}", "r.json").ok());
}

TEST_CASE("a value or key of a megabyte is quoted as a short excerpt", "[hostile]") {
  std::string big(1 << 19, 'x');
  auto s = profiles::parse(
      R"({"workload":{"rw":")" + big + R"(", ")" + big + R"(": 1}, ")" + big + R"(": 2})", "f.json");
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.error(), Contains("(524288 bytes)"));
  check_short_line(s.error(), 1500);
  JobSpec spec;
  auto st = profiles::apply_overrides(spec, {{"rw", big}, {big, "1"}});
  REQUIRE_FALSE(st.ok());
  check_short_line(st.error());
}

TEST_CASE("thousands of problems in a profile make one message of ten and a count", "[hostile]") {
  std::string fields;
  for (int i = 0; i < 5000; ++i) fields += "\"k" + std::to_string(i) + "\": 1, ";
  auto s = profiles::parse("{" + fields + "\"workload\": {}}", "f.json");
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.error(), Contains("5000 problems") && Contains("and 4990 more"));
  CHECK(s.error().size() < 2000);
}

TEST_CASE("read_file refuses /dev/zero, a pipe and a directory before reading, and caps the size",
          "[hostile]") {
  auto zero = read_file("/dev/zero");
  REQUIRE_FALSE(zero.ok());
  CHECK_THAT(zero.error(), Contains("a character device"));
  TempDir dir;
  REQUIRE(!dir.path.empty());
  std::string fifo = dir.path + "/fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  auto pipe = read_file(fifo);  // O_NONBLOCK: no writer, no wait
  REQUIRE_FALSE(pipe.ok());
  CHECK_THAT(pipe.error(), Contains("a pipe"));
  auto d = read_file(dir.path);
  REQUIRE_FALSE(d.ok());
  CHECK_THAT(d.error(), Contains("a directory"));
  std::string big = dir.write("big", std::string(8192, 'x'));
  CHECK(read_file(big, 8192).ok());
  auto over = read_file(big, 8191);
  REQUIRE_FALSE(over.ok());
  CHECK_THAT(over.error(), Contains("larger than"));
}

TEST_CASE("--profile /dev/zero and extends /dev/zero are refused, not read until memory runs out",
          "[hostile]") {
  auto direct = profiles::load("/dev/zero");
  REQUIRE_FALSE(direct.ok());
  CHECK_THAT(direct.error(), Contains("character device"));
  TempDir dir;
  std::string f = dir.write("f.json", R"({"extends": "/dev/zero"})");
  auto extended = profiles::load(f, {dir.path});
  REQUIRE_FALSE(extended.ok());
  CHECK_THAT(extended.error(), Contains("extends") && Contains("character device"));
  // A profile over 1 MiB is not a profile.
  std::string big =
      dir.write("big.json", "{\"workload\": {}, \"notes\": [\"" + std::string(2 << 20, 'x') + "\"]}");
  auto too_big = profiles::load(big, {dir.path});
  REQUIRE_FALSE(too_big.ok());
  CHECK_THAT(too_big.error(), Contains("larger than 1024 KiB"));
}

TEST_CASE("cpus_allowed is a set: 0-4095 said 18000 times is 4096 CPUs, not 73 million", "[hostile]") {
  std::string list;
  for (int i = 0; i < 4000; ++i) list += "0-4095,";
  list += "0";
  auto cpus = parse_cpus_allowed(list);
  REQUIRE(cpus);
  CHECK(cpus->size() == 4096);
  CHECK(cpus->front() == 0);
  CHECK(cpus->back() == 4095);
  // More entries than CPUs can only be a mistake.
  std::string too_many;
  for (int i = 0; i < kMaxCpus; ++i) too_many += "1,";
  too_many += "1";
  CHECK_FALSE(parse_cpus_allowed(too_many));
  // Order and repeats are the mask's, as fio reads it.
  CHECK(parse_cpus_allowed("3,1,1,2") == std::vector<int>{1, 2, 3});
  JobSpec spec;
  REQUIRE(profiles::apply_overrides(spec, {{"cpus_allowed", list}}).ok());
  CHECK(dump_json(to_json(spec)).size() < 100000);
}

TEST_CASE("a command-line word over 4096 bytes is refused with an excerpt", "[hostile]") {
  std::vector<std::string> words = {"diskprobe", "run", "--cpus_allowed", std::string(126000, '1')};
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  std::string error;
  CHECK_FALSE(cli::parse(static_cast<int>(argv.size()), argv.data(), error));
  CHECK_THAT(error, Contains("argument 3") && Contains("longer than 4096 bytes"));
  check_short_line(error);
}

TEST_CASE("an expectation of kilobytes is refused short; numbers out of range too", "[hostile]") {
  auto e = parse_expectation("iops>=" + std::string(4000, '9'));
  REQUIRE_FALSE(e.ok());
  check_short_line(e.error());
  CHECK_THAT(e.error(), Contains("longer than 128 bytes"));
  auto ok = parse_expectation("write.lat.p99<=" + std::string(100, '9') + "s");
  CHECK(ok.ok());
}

TEST_CASE("compare/aggregate: a report nested 60000 deep in a dumped value is an error, not SIGSEGV",
          "[hostile]") {
  auto r = parse_run_summary(
      nested(60000, R"({"schema_version": 1, "read": {"ios": 1}, "expectations": [{"actual": @}]})"),
      "a.json");
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error(), Contains("a.json") && Contains("nested more than 64 deep"));
  check_short_line(r.error());
  auto big = parse_run_summary(R"({"schema_version": 1e400, "read": {}})", "a.json");
  REQUIRE_FALSE(big.ok());
  CHECK_THAT(big.error(), Contains("out of range"));
}

TEST_CASE("bytes that are not UTF-8 become U+FFFD in the JSON, JUnit and HTML reports", "[hostile]") {
  RunReport r;
  r.spec.name = "job\xff";
  r.spec.description = "\xc3(";  // a lead byte without its continuation
  r.device = "/tmp/\xff\xfe.dat";
  r.environment.device_model = "Amazon \xed\xa0\x80";  // a UTF-16 surrogate, not UTF-8
  r.preflight_safe = true;
  std::string j = render(r, OutputFormat::Json);
  auto back = json::parse(j);  // what a consumer does: must not throw
  CHECK(back["job"]["name"] == "job\xef\xbf\xbd");
  CHECK(back["device"] == "/tmp/\xef\xbf\xbd\xef\xbf\xbd.dat");
  CHECK(is_utf8(render_junit(r)));
  CHECK_THAT(render_junit(r), Contains("job\xef\xbf\xbd"));
  CHECK(is_utf8(render_html(r)));
  CHECK(dump_json(to_json(r.spec)).find("job\xef\xbf\xbd") != std::string::npos);
}

TEST_CASE("valid_utf8 keeps every valid sequence and replaces each bad byte", "[hostile]") {
  const std::pair<std::string, std::string> cases[] = {
      {"plain", "plain"},
      {"\xc3\xa9t\xc3\xa9", "\xc3\xa9t\xc3\xa9"},  // été
      {"\xe2\x82\xac", "\xe2\x82\xac"},            // €
      {"\xf0\x9f\x92\xbe", "\xf0\x9f\x92\xbe"},    // a floppy disk
      {"\xff", "\xef\xbf\xbd"},
      {"\xc0\xaf", "\xef\xbf\xbd\xef\xbf\xbd"},                                  // overlong '/'
      {"\xe0\x80\xaf", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},                  // overlong, 3 bytes
      {"\xf4\x90\x80\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"},  // above U+10FFFF
      {"a\xe2\x82", "a\xef\xbf\xbd"},                                            // cut short: one
      {"\xe2\x82z", "\xef\xbf\xbdz"},
  };
  for (const auto& [in, want] : cases) {
    INFO(in);
    CHECK(valid_utf8(in) == want);
    CHECK(json::parse(dump_json(json(in))) == want);
  }
}

TEST_CASE("excerpt cuts at a character boundary and says how long the whole was", "[hostile]") {
  CHECK(excerpt("short") == "short");
  CHECK(excerpt(std::string(100, 'x'), 10) == "xxxxxxxxxx... (100 bytes)");
  std::string e = excerpt(std::string(9, 'x') + "\xc3\xa9" + std::string(50, 'y'), 10);
  CHECK(e.substr(0, 12) == "xxxxxxxxx...");
}
