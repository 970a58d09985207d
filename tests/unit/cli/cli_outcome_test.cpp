// The command line's part of issue 13: which invocations are in JSON mode (one document on
// stdout whatever the outcome), and a switch given a number.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "diskprobe/cli/args.h"

using namespace diskprobe;

namespace {

std::vector<char*> argv_of(std::vector<std::string>& words) {
  words.insert(words.begin(), "diskprobe");
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  return argv;
}

bool json_mode(std::vector<std::string> words) {
  auto argv = argv_of(words);
  return cli::wants_json(static_cast<int>(argv.size()), argv.data());
}

}  // namespace

TEST_CASE("JSON mode: --json, or --output-format json with the report on stdout", "[cli][json]") {
  CHECK(json_mode({"check", "vdc", "--json"}));
  CHECK(json_mode({"run", "--profile", "x", "vdc", "--output-format", "json"}));
  CHECK(json_mode({"run", "--profile", "x", "vdc", "--output-format=json"}));
  // Even when the parse itself fails: the usage error gets its document.
  CHECK(json_mode({"run", "--bogus", "--output-format", "json"}));
  CHECK_FALSE(json_mode({"run", "--profile", "x", "vdc"}));
  CHECK_FALSE(json_mode({"run", "--profile", "x", "vdc", "--output-format", "junit"}));
  // The document goes to the file; stdout has the text report.
  CHECK_FALSE(json_mode({"run", "--profile", "x", "vdc", "--output-format", "json", "--output", "r.json"}));
}

TEST_CASE("--output FILE with --output-format json: FILE gets the error document, never a target", "[cli][json]") {
  auto file_of = [](std::vector<std::string> words) {
    auto argv = argv_of(words);
    return cli::json_file(static_cast<int>(argv.size()), argv.data());
  };
  auto f = file_of({"run", "--profile", "x", "./t.img", "--output-format", "json", "--output", "r.json"});
  CHECK(f.path == "r.json");
  CHECK(f.others == std::vector<std::string>{"run", "--profile", "x", "./t.img", "--output-format", "json"});
  f = file_of({"run", "--filename=./t.img", "--output-format=json", "--output=r.json", "--bogus"});
  CHECK(f.path == "r.json");
  CHECK(f.others == std::vector<std::string>{"run", "./t.img", "json", "--bogus"});
  CHECK(file_of({"run", "--output-format", "junit", "--output", "r.xml"}).path.empty());
  CHECK(file_of({"run", "--output-format", "json"}).path.empty());
  CHECK(file_of({"run", "--output-format", "json", "--output"}).path.empty());
}

// Before: "--time_based 2" left "2" as a DEVICE and said "give either a DEVICE or --scratch SIZE".
TEST_CASE("a switch followed by a number is an error about the switch", "[cli]") {
  for (const char* sw : {"--time_based", "--norandommap", "--refill_buffers"}) {
    std::vector<std::string> words{"run", "--profile", "x", "--scratch", "1G", sw, "2"};
    auto argv = argv_of(words);
    std::string error;
    CHECK_FALSE(cli::parse(static_cast<int>(argv.size()), argv.data(), error));
    CHECK(error == std::string(sw) + " 2: " + sw + " is a switch: give it alone, or 0/1 (" + sw + "=0)");
  }
  std::vector<std::string> ok{"run", "--profile", "x", "--time_based", "1", "--norandommap", "vdc"};
  auto argv = argv_of(ok);
  std::string error;
  auto a = cli::parse(static_cast<int>(argv.size()), argv.data(), error);
  REQUIRE(a);
  CHECK(a->overrides.at("time_based") == "1");
  CHECK(a->positional == std::vector<std::string>{"vdc"});
}
