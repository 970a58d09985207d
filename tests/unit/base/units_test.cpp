// Units read in one place (lib/units): every option and profile key takes the same forms.
#include <catch2/catch.hpp>
#include <string>

#include "diskprobe/base/units.h"

using namespace diskprobe;

TEST_CASE("parse_decimal takes plain decimals only", "[units]") {
  CHECK(*parse_decimal("5") == 5.0);
  CHECK(*parse_decimal("2.5") == 2.5);
  CHECK(*parse_decimal("0") == 0.0);
  // strtod would take every one of these.
  for (const char* bad : {"", ".", "5.", ".5", "1.2.3", "1e3", " 5", "5 ", "+5", "-5", "inf", "nan", "0x10"}) {
    INFO(bad);
    CHECK_FALSE(parse_decimal(bad));
  }
  CHECK_FALSE(parse_decimal(std::string(400, '9')));  // overflows to inf
}

TEST_CASE("parse_percent takes 5%, 5 and 2.5 and refuses the rest", "[units][compare]") {
  CHECK(*parse_percent("5%") == 5.0);
  CHECK(*parse_percent("5") == 5.0);
  CHECK(*parse_percent("2.5%") == 2.5);
  CHECK(*parse_percent("150%") == 150.0);  // ranges are the caller's
  for (const char* bad : {"", "%", "five", "-1%", "5%%", "nan", "1e1%", " 5%"}) {
    INFO(bad);
    CHECK_FALSE(parse_percent(bad));
  }
  CHECK(*parse_percent("50%", true) == 50.0);
  CHECK_FALSE(parse_percent("50", true));
}

TEST_CASE("parse_seconds takes fio's time suffixes", "[units]") {
  CHECK(*parse_seconds("30") == 30.0);
  CHECK(*parse_seconds("30s") == 30.0);
  CHECK(*parse_seconds("500ms") == Approx(0.5));
  CHECK(*parse_seconds("100us") == Approx(1e-4));
  CHECK(*parse_seconds("2m") == 120.0);
  CHECK(*parse_seconds("1h") == 3600.0);
  CHECK(*parse_seconds("1.5s") == 1.5);
  for (const char* bad : {"", "s", "-1s", "1e3s", "1d", "5 s", "ms", "1.s", "inf"}) {
    INFO(bad);
    CHECK_FALSE(parse_seconds(bad));
  }
}

TEST_CASE("parse_size reads fio's binary units and rejects the rest", "[core]") {
  struct Case {
    const char* text;
    uint64_t bytes;
  };
  const Case good[] = {{"4096", 4096}, {"4k", 4096},         {"4K", 4096},       {"4KiB", 4096},
                       {"512M", 512ull << 20}, {"1G", 1ull << 30}, {"1024g", 1ull << 40}, {"2T", 2ull << 40},
                       {"0", 0},       {"7b", 7}};
  for (const auto& c : good) {
    auto r = parse_size(c.text);
    INFO(c.text);
    REQUIRE(r.ok());
    CHECK(*r == c.bytes);
  }
  for (const char* bad : {"", "k", "4x", "1.5G", "-1", "4kk", "99999999999999999999", "20000000P"}) {
    INFO(bad);
    auto r = parse_size(bad);
    CHECK_FALSE(r.ok());
    if (!r.ok()) CHECK_FALSE(r.error().empty());
  }
}

// The one CPU-list formatter: the engine's pin errors and the host checks used to join CPUs
// with commas in the order given, each their own way.
TEST_CASE("format_cpu_list sorts, drops repeats and writes runs as ranges", "[units][cpu_list]") {
  CHECK(format_cpu_list({}) == "");
  CHECK(format_cpu_list({7}) == "7");
  CHECK(format_cpu_list({3, 1, 2, 0, 8}) == "0-3,8");
  CHECK(format_cpu_list({5, 5, 6}) == "5-6");
  CHECK(format_cpu_list({9, 5, 7, 6}) == "5-7,9");
  CHECK(format_cpu_list({0, 2, 4}) == "0,2,4");
  CHECK(format_cpu_list({kMaxCpus - 1, 0}) == "0," + std::to_string(kMaxCpus - 1));
}

TEST_CASE("parse_cpu_list and format_cpu_list read back each other", "[units][cpu_list]") {
  for (const char* text : {"0", "0-3,8", "1,3,5", "0-8191", "2-3,6-7"}) {
    INFO(text);
    auto cpus = parse_cpu_list(text);
    REQUIRE(cpus.ok());
    CHECK(format_cpu_list(*cpus) == text);
  }
  // Its cap: CPUs go to kMaxCpus - 1.
  CHECK(parse_cpu_list(std::to_string(kMaxCpus - 1)).ok());
  CHECK_FALSE(parse_cpu_list(std::to_string(kMaxCpus)).ok());
}
