// steadystate in every report: the text line, our JSON object, fio's own "steadystate" object
// (keys and formats read from fio 3.33's output with --ss), and the HTML summary row.
#include <string>

#include <catch2/catch.hpp>

#include "diskprobe/report/fio_json.h"
#include "diskprobe/report/html_report.h"
#include "diskprobe/report/report.h"

using namespace diskprobe;
using Catch::Matchers::Contains;
using nlohmann::json;

namespace {

RunReport steady_run(const char* criterion, bool attained, std::vector<uint64_t> iops, double runtime_s = 23) {
  JobSpec spec;
  spec.name = "ss";
  spec.rw = RwMode::RandRead;
  spec.runtime_s = 60;
  spec.steadystate = *parse_steadystate(criterion);
  spec.steadystate.duration_s = 3;
  spec.steadystate.ramp_s = 2;
  Results r;
  r.runtime_s = runtime_s;
  r.started_at = "2026-12-01T15:48:41Z";
  SteadyStateResult& ss = r.steadystate;
  ss.checked = true;
  ss.attained = attained;
  ss.duration_s = 3;
  ss.iops = iops;
  for (uint64_t n : iops) ss.bw.push_back(n * 4096);
  ss.criterion = attained ? 0.08 : 0.75;
  ss.max_deviation = 1.5;
  ss.slope = -0.5;
  return report_of(std::move(r), spec, "/dev/loop7");
}

}  // namespace

TEST_CASE("steadystate text: attained, not steady, and a window that never filled", "[report][steadystate]") {
  CHECK(steadystate_line(steady_run("iops_slope:0.1%", true, {1000, 1001, 999})) ==
        "steady state: attained after 23 s (iops_slope 0.08% < 0.1% over 3 s)");
  CHECK(steadystate_line(steady_run("iops_slope:0.1%", false, {1000, 1010, 1020}, 60)) ==
        "not steady: iops_slope 0.75% >= 0.1% over the last 3 s, ran 60 s");
  CHECK(steadystate_line(steady_run("iops:0.1%", false, {1000}, 4)) ==
        "not steady: the 3 s window never filled (1 samples in 4 s, after ss_ramp 2 s)");
  auto bw = steady_run("bw:10m", false, {1000, 1010, 1020}, 60);
  bw.results.steadystate.criterion = 3 << 20;
  CHECK(steadystate_line(bw) == "not steady: bw 3072KiB/s >= 10.0MiB/s over the last 3 s, ran 60 s");
  auto text = render_text(steady_run("iops_slope:0.1%", true, {1000, 1001, 999}));
  CHECK_THAT(text, Contains("\nsteady state: attained after 23 s (iops_slope 0.08% < 0.1% over 3 s)\n"));
  // A run without a criterion says nothing of it.
  RunReport plain = report_of(Results{}, JobSpec{}, "/dev/loop7");
  CHECK(steadystate_line(plain).empty());
  CHECK_THAT(render_text(plain), !Contains("steady"));
  CHECK(to_json(plain)["steadystate"].is_null());
}

TEST_CASE("steadystate JSON: the criterion, the verdict, the window's samples", "[report][steadystate]") {
  json j = to_json(steady_run("iops_slope:0.1%", true, {1000, 1001, 999}))["steadystate"];
  CHECK(j["criterion"] == "iops_slope:0.1%");
  CHECK(j["attained"] == true);
  CHECK(j["window_filled"] == true);
  CHECK(j["value"].get<double>() == Approx(0.08));
  CHECK(j["limit"].get<double>() == Approx(0.1));
  CHECK(j["limit_unit"] == "percent_of_mean");
  CHECK(j["samples_unit"] == "iops");
  CHECK(j["duration_s"] == 3);
  CHECK(j["ramp_s"] == 2);
  CHECK(j["max_deviation"] == 1.5);
  CHECK(j["slope_per_s"] == -0.5);
  CHECK(j["iops_samples"] == json::array({1000, 1001, 999}));
  CHECK(j["iops_mean"] == 1000);
  CHECK(j["bw_bytes_per_s_samples"] == json::array({4096000, 4100096, 4091904}));
  auto zero = steady_run("iops:1%", false, {0, 0, 0});
  zero.results.steadystate.criterion = std::numeric_limits<double>::infinity();
  CHECK(to_json(zero)["steadystate"]["value"].is_null());  // no JSON number
}

TEST_CASE("steadystate fio-json: fio's keys and formats", "[report][steadystate][fio]") {
  json j = to_fio_json(steady_run("iops:2%", true, {1238, 1232, 1239}), false)["jobs"][0];
  REQUIRE(j.contains("steadystate"));
  json ss = j["steadystate"];
  // fio 3.33, --ss=iops:2% --ss_dur=3: {"ss": "iops:2.000000%", "duration": 3, "attained": 1,
  // "criterion": "0.350499%", "max_deviation": 4.33, "slope": 0.0, "data": {"bw_mean": ...}}
  CHECK(ss["ss"] == "iops:2.000000%");
  CHECK(ss["duration"] == 3);
  CHECK(ss["attained"] == 1);
  CHECK(ss["criterion"] == "0.080000%");
  CHECK(ss["max_deviation"].is_number_float());
  CHECK(ss["slope"].is_number_float());
  CHECK(ss["data"]["iops"] == json::array({1238, 1232, 1239}));
  CHECK(ss["data"]["iops_mean"] == 1236);  // integer, as fio's
  CHECK(ss["data"]["bw_mean"] == 3709 * 4096 / 3);  // 5,064,021 B/s, truncated
  CHECK(ss["data"]["bw"].size() == 3);
  CHECK(j["job options"]["steadystate"] == "iops:2%");
  CHECK(j["job options"]["steadystate_duration"] == "3");
  CHECK(j["job options"]["steadystate_ramp_time"] == "2");
  auto abs = to_fio_json(steady_run("bw_slope:1000", false, {10, 10, 10}), false)["jobs"][0]["steadystate"];
  CHECK(abs["ss"] == "bw_slope:1000.000000");  // no % for an absolute limit
  CHECK(abs["criterion"] == "0.750000");
  CHECK(abs["attained"] == 0);
  RunReport plain = report_of(Results{}, JobSpec{}, "/dev/loop7");
  CHECK_FALSE(to_fio_json(plain, false)["jobs"][0].contains("steadystate"));
}

TEST_CASE("rate caps in fio-json's job options, as fio echoes them", "[report][rate][fio]") {
  RunReport rep = report_of(Results{}, JobSpec{}, "/dev/loop7");
  rep.spec.rate_iops[0] = rep.spec.rate_iops[1] = 1237;
  rep.spec.rate_bytes[1] = 7 << 20;
  json o = to_fio_json(rep, false)["jobs"][0]["job options"];
  CHECK(o["rate_iops"] == "1237");
  CHECK(o["rate"] == "," + std::to_string(7 << 20));
}

TEST_CASE("steadystate HTML: a summary row with the verdict", "[report][steadystate]") {
  std::string html = render_html(steady_run("iops_slope:0.1%", true, {1000, 1001, 999}));
  CHECK_THAT(html, Contains("<tr id=\"steadystate\" data-attained=\"1\"><th>steady state</th><td>steady state: "
                            "attained after 23 s (iops_slope 0.08% &lt; 0.1% over 3 s)</td></tr>"));
}
