#include <cmath>
#include <cstdio>
#include <string>

#include "diskprobe/base/json_io.h"
#include "diskprobe/report/accept_report.h"
#include "diskprobe/report/report.h"

namespace diskprobe {

namespace {

// Declared UTF-8 in the header, so bytes that are not become U+FFFD first; that also takes
// out surrogates (U+D800-DFFF), whose encodings are no UTF-8.
std::string xml_escape(const std::string& raw) {
  const std::string s = valid_utf8(raw);
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r') {
          // XML 1.0 forbids most control characters, even escaped.
          out += '?';
        } else if (s.compare(i, 3, "\xEF\xBF\xBE") == 0 || s.compare(i, 3, "\xEF\xBF\xBF") == 0) {
          // U+FFFE and U+FFFF are valid UTF-8 but no XML 1.0 Char: a parser refuses them.
          out += "\xEF\xBF\xBD";
          i += 2;
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", s);
  return buf;
}

std::string testcase(const std::string& suite, const std::string& name, double time_s) {
  return "    <testcase classname=\"" + xml_escape(suite) + "\" name=\"" + xml_escape(name) + "\" time=\"" +
         seconds(time_s) + "\">\n";
}

}  // namespace

std::string render_accept_junit(const AcceptReport& r) {
  const std::string suite = "diskprobe.accept." + r.volume;
  std::string cases;
  size_t failures = 0, skipped = 0, tests = 0;
  double total_s = 0;
  auto out = [&](const std::string& text) { cases += "      <system-out>" + xml_escape(text) + "</system-out>\n"; };
  if (!r.preflight_safe) {
    ++tests, ++failures;
    cases += testcase(suite, "preflight", 0);
    cases += "      <failure message=\"" + xml_escape(r.preflight) + "\" type=\"preflight\"/>\n";
    out(r.preflight);
    cases += "    </testcase>\n";
  }
  for (size_t i = 0; r.preflight_safe && i < r.planned.size(); ++i) {
    ++tests;
    if (i >= r.phases.size()) {
      ++failures;
      cases += testcase(suite, r.planned[i], 0);
      cases += "      <failure message=\"" + xml_escape("not run: " + r.ended) + "\" type=\"not-run\"/>\n";
      cases += "    </testcase>\n";
      continue;
    }
    const auto& p = r.phases[i];
    const double t = p.report.results.runtime_s;
    total_s += t;
    cases += testcase(suite, p.verdict.name, t);
    if (!p.verdict.judged) {
      ++skipped;
      cases += "      <skipped message=\"" + xml_escape(p.verdict.line) + "\"/>\n";
    } else if (!p.verdict.passed) {
      ++failures;
      cases += "      <failure message=\"" + xml_escape(p.verdict.line) + "\" type=\"metric\"/>\n";
    }
    out(p.verdict.line);
    cases += "    </testcase>\n";
  }
  const std::string counts = " tests=\"" + std::to_string(tests) + "\" failures=\"" + std::to_string(failures) + "\"";
  std::string o = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites" + counts + ">\n";
  o += "  <testsuite name=\"" + xml_escape(suite) + "\"" + counts + " errors=\"0\" skipped=\"" +
       std::to_string(skipped) + "\" time=\"" + seconds(total_s) + "\">\n";
  o += "    <properties>\n";
  for (const auto& [name, value] : {std::pair<const char*, std::string>{"device", r.device},
                                    {"volume", r.volume},
                                    {"tolerance", std::to_string(r.tolerance)}}) {
    o += "      <property name=\"" + xml_escape(name) + "\" value=\"" + xml_escape(value) + "\"/>\n";
  }
  o += "    </properties>\n" + cases + "  </testsuite>\n</testsuites>\n";
  return o;
}

std::string render_junit(const RunReport& rep) {
  const Results& r = rep.results;
  size_t failures = rep.preflight_safe ? 0 : 1;
  for (const auto& e : rep.expectations) failures += e.met ? 0 : 1;
  size_t tests = 1 + rep.expectations.size();
  std::string suite = "diskprobe." + rep.spec.name;
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out +=
      "<testsuites tests=\"" + std::to_string(tests) + "\" failures=\"" + std::to_string(failures) + "\">\n";
  out += "  <testsuite name=\"" + xml_escape(suite) + "\" tests=\"" + std::to_string(tests) +
         "\" failures=\"" + std::to_string(failures) + "\" errors=\"0\" skipped=\"0\" time=\"" +
         seconds(r.runtime_s) + "\" timestamp=\"" + xml_escape(r.started_at) + "\">\n";
  out += "    <properties>\n";
  auto prop = [&](const std::string& name, const std::string& value) {
    out += "      <property name=\"" + xml_escape(name) + "\" value=\"" + xml_escape(value) + "\"/>\n";
  };
  prop("device", rep.device);
  prop("profile", rep.spec.name);
  prop("source", rep.spec.source);
  prop("diskprobe_version", rep.environment.diskprobe_version);
  prop("kernel", rep.environment.kernel);
  prop("dmi_product_name", rep.environment.dmi_product_name);
  prop("device_model", rep.environment.device_model);
  out += "    </properties>\n";

  out += "    <testcase classname=\"" + xml_escape(suite) + "\" name=\"preflight\" time=\"0\">\n";
  if (!rep.preflight_safe) {
    out += "      <failure message=\"" + xml_escape(rep.preflight) + "\" type=\"preflight\"/>\n";
  }
  out += "      <system-out>" + xml_escape(rep.preflight) + "</system-out>\n";
  out += "    </testcase>\n";

  for (const auto& e : rep.expectations) {
    std::string line = expectation_line(e);
    out += "    <testcase classname=\"" + xml_escape(suite) + "\" name=\"" + xml_escape(e.expectation.text) +
           "\" time=\"" + seconds(r.runtime_s) + "\">\n";
    if (!e.met) {
      out += "      <failure message=\"" + xml_escape(line) + "\" type=\"expectation\"/>\n";
    }
    out += "      <system-out>" + xml_escape(line) + "</system-out>\n";
    out += "    </testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace diskprobe
