// JUnit XML: whatever a job name or an expectation holds, the document stays XML 1.0.
#include <string>

#include <catch2/catch.hpp>

#include "diskprobe/report/report.h"

using namespace diskprobe;
using Catch::Matchers::Contains;

namespace {

RunReport named(const std::string& name) {
  RunReport rep;
  rep.spec.name = name;
  rep.device = "/dev/loop7";
  rep.preflight = "safe";
  rep.preflight_safe = true;
  ExpectationResult e;
  e.expectation.text = "iops>=1" + name;
  e.met = false;
  rep.expectations.push_back(e);
  return rep;
}

}  // namespace

// U+FFFE and U+FFFF are valid UTF-8 but no XML 1.0 Char: a parser rejects the document.
TEST_CASE("JUnit XML replaces U+FFFE and U+FFFF which XML 1.0 forbids", "[junit]") {
  const std::string xml = render_junit(named("job\xEF\xBF\xBE-\xEF\xBF\xBF."));
  INFO(xml);
  CHECK(xml.find("\xEF\xBF\xBE") == std::string::npos);
  CHECK(xml.find("\xEF\xBF\xBF") == std::string::npos);
  CHECK_THAT(xml, Contains("job\xEF\xBF\xBD-\xEF\xBF\xBD."));
}

TEST_CASE("JUnit XML keeps the characters XML allows and replaces the rest", "[junit]") {
  struct Case {
    const char* in;
    const char* out;
  };
  const Case cases[] = {
      {"\xEF\xBF\xBD", "\xEF\xBF\xBD"},          // U+FFFD itself
      {"\xEF\xBF\xBC", "\xEF\xBF\xBC"},          // U+FFFC, the last Char before the two
      {"\xEE\x80\x80", "\xEE\x80\x80"},          // U+E000, the first after the surrogates
      {"\xED\x9F\xBF", "\xED\x9F\xBF"},          // U+D7FF, the last before them
      {"\xF0\x9F\x92\xBE", "\xF0\x9F\x92\xBE"},  // U+1F4BE, above the BMP
      {"\xF4\x8F\xBF\xBF", "\xF4\x8F\xBF\xBF"},  // U+10FFFF
      // A surrogate's encoding is no UTF-8: each byte replaced before XML sees it.
      {"\xED\xA0\x80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"},
      {"\xEF\xBF", "\xEF\xBF\xBD"},              // a cut sequence
      {"a<&>\"'", "a&lt;&amp;&gt;&quot;&apos;"},
      {"\x01", "?"},
  };
  for (const auto& c : cases) {
    INFO(c.in);
    const std::string xml = render_junit(named(std::string("[") + c.in + "]"));
    CHECK_THAT(xml, Contains(std::string("[") + c.out + "]"));
    CHECK(xml.find("\xEF\xBF\xBE") == std::string::npos);
  }
}
