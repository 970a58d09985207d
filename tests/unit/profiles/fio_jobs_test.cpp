// fio's command line and job files read as fio 3.33 reads them, and their options as JobSpecs.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include <catch2/catch.hpp>

#include "diskprobe/profiles/fio_jobs.h"
#include "diskprobe/profiles/fio_spec.h"

namespace fs = std::filesystem;
using namespace diskprobe;
using namespace diskprobe::profiles::fio;

namespace {

Environment test_env(std::map<std::string, std::string> vars = {}) {
  Environment e;
  e.getenv = [vars](const std::string& n) -> std::optional<std::string> {
    auto it = vars.find(n);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  e.ncpus = 6;
  e.mb_memory = 2048;
  e.pagesize = 4096;
  return e;
}

std::map<std::string, std::string> options_of(const Job& j) {
  std::map<std::string, std::string> m;  // the last value wins, as fio applies them in order
  for (const auto& o : j.options) m[o.key] = o.value.value_or("<bare>");
  return m;
}

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("fio-jobs-test-" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name) << text;
    return (path / name).string();
  }
};

// fio's examples/, unchanged, beside the project (../shared/fio-examples); $DISKPROBE_FIO_EXAMPLES
// names another copy.
fs::path examples_dir() {
  const char* env = std::getenv("DISKPROBE_FIO_EXAMPLES");
  fs::path p = env ? fs::path(env) : fs::path(DISKPROBE_FIO_EXAMPLES);
  return fs::is_directory(p) ? fs::canonical(p) : fs::path();
}

}  // namespace

TEST_CASE("fio command line: globals before the first --name, each --name a job, both value forms", "[fio]") {
  auto in = read_command_line({"--direct=1", "-ioengine=libaio", "--name=writer", "--rw=write", "--bs", "128k",
                               "--name", "reader", "--rw=randread", "--bs=4k", "--norandommap", "--time-based"},
                              test_env());
  REQUIRE(in);
  REQUIRE(in->jobs.size() == 2);
  CHECK(in->jobs[0].name == "writer");
  CHECK(in->jobs[1].name == "reader");
  auto w = options_of(in->jobs[0]), r = options_of(in->jobs[1]);
  CHECK(w["direct"] == "1");
  CHECK(w["ioengine"] == "libaio");
  CHECK(w["rw"] == "write");
  CHECK(w["bs"] == "128k");
  CHECK(r["direct"] == "1");
  CHECK(r["rw"] == "randread");
  CHECK(r["norandommap"] == "<bare>");
  CHECK(r["time_based"] == "<bare>");  // dashes are underscores
  CHECK(w.count("norandommap") == 0);  // a job's options are its own
}

TEST_CASE("fio command line: fio's flags are not job options; words are job files", "[fio]") {
  TempDir d;
  std::string f = d.write("a.fio", "[a]\nrw=read\n");
  auto in = read_command_line({"--output-format=json", "--output", "out.json", "--parse-only", f}, test_env());
  REQUIRE(in);
  REQUIRE(in->flags.size() == 3);
  CHECK(in->flags[0].name == "output_format");
  CHECK(in->flags[0].value == "json");
  CHECK(in->flags[1].value == "out.json");
  CHECK(in->flags[2].name == "parse_only");
  REQUIRE(in->jobs.size() == 1);
  CHECK(in->jobs[0].name == "a");
  CHECK(!read_command_line({"--output-format"}, test_env()));
  CHECK(!read_command_line({"--parse-only=1"}, test_env()));
  CHECK(!read_command_line({"--name=x", "--bs"}, test_env()));  // fio's required argument
}

TEST_CASE("fio job files: [global] applies forward, comments, include, section errors", "[fio]") {
  TempDir d;
  d.write("inc.fio", "iodepth=8 ; from the include\n# nothing\n");
  std::string f = d.write("jobs.fio",
                          "; a comment\n"
                          "[global]\n"
                          "  bs = 8k   # trailing comment\n"
                          "direct=1\n"
                          "[first]\n"
                          "rw=randread\n"
                          "include inc.fio\n"
                          "[global]\n"
                          "bs=64k\n"
                          "[second]\n"
                          "rw=write\n");
  auto in = read_command_line({"--runtime=5", f}, test_env());
  REQUIRE(in);
  REQUIRE(in->jobs.size() == 2);
  auto a = options_of(in->jobs[0]), b = options_of(in->jobs[1]);
  CHECK(a["runtime"] == "5");  // the command line's globals apply to a file's jobs
  CHECK(a["bs"] == "8k");
  CHECK(a["iodepth"] == "8");
  CHECK(a["rw"] == "randread");
  CHECK(b["bs"] == "64k");      // the second [global] applies to what follows it only
  CHECK(b.count("iodepth") == 0);
  CHECK(b["direct"] == "1");
  CHECK(in->jobs[1].options.back().where == f + ":11");

  CHECK(!read_command_line({d.write("outside.fio", "rw=read\n[a]\n")}, test_env()));
  CHECK(!read_command_line({d.write("incsec.fio", "[a]\ninclude sec.fio\n")}, test_env()));  // missing file
  d.write("sec.fio", "[b]\n");
  auto nested = read_command_line({(d.path / "incsec.fio").string()}, test_env());
  REQUIRE(!nested);
  CHECK(nested.error().find("no new sections in an included file") != std::string::npos);
  d.write("self.fio", "include self.fio\n");
  auto self = read_command_line({d.write("loop.fio", "[a]\ninclude self.fio\n")}, test_env());
  REQUIRE(!self);
  CHECK(self.error().find("nested more than 16 deep") != std::string::npos);
}

TEST_CASE("fio job files: a second job file starts behind a stonewall; --section picks jobs", "[fio]") {
  TempDir d;
  std::string f1 = d.write("1.fio", "[a]\n[b]\n"), f2 = d.write("2.fio", "[c]\n[d]\n");
  auto in = read_command_line({f1, f2}, test_env());
  REQUIRE(in);
  REQUIRE(in->jobs.size() == 4);
  CHECK(!in->jobs[0].file_stonewall);
  CHECK(!in->jobs[1].file_stonewall);
  CHECK(in->jobs[2].file_stonewall);
  CHECK(!in->jobs[3].file_stonewall);
  auto only = read_command_line({"--section=b", "--section", "d", f1, f2}, test_env());
  REQUIRE(only);
  REQUIRE(only->jobs.size() == 2);
  CHECK(only->jobs[0].name == "b");
  CHECK(only->jobs[1].name == "d");
}

TEST_CASE("fio values: ${VAR}, $ncpus, $mb_memory, $pagesize and arithmetic", "[fio]") {
  auto env = test_env({{"SIZE", "2g"}, {"DEV", "/dev/loop7"}});
  CHECK(*expand("${SIZE}", env) == "2g");
  CHECK(*expand("$ncpus", env) == "6");
  CHECK(*expand("($ncpus*2)", env) == "12");
  CHECK(*expand("($mb_memory/4)m", env) == "512m");
  CHECK(*expand("($pagesize*2)", env) == "8192");
  CHECK(*expand("(1+2*3)", env) == "7");
  CHECK(*expand("((1+2)*3)", env) == "9");
  CHECK(*expand("(2^10)", env) == "1024");
  CHECK(*expand("(10%4)", env) == "2");
  CHECK(*expand("(4k*2)", env) == "8192");
  CHECK(*expand("(1/4)", env) == "0.250000");
  CHECK(*expand("4k", env) == "4k");  // no parentheses: not arithmetic
  CHECK(!expand("(1/0)", env));
  CHECK(!expand("(1+)", env));
  CHECK(!expand("(2*(3)", env));
  CHECK(!expand("(1-5)", env));
  CHECK(!expand("(2^64*2^64)", env));  // beyond 2^63: refused, not cast (undefined)
  CHECK(!expand("(2^65)", env));       // exponent out of range
  CHECK(!expand(std::string(100, '(') + "1" + std::string(100, ')'), env));  // nested too deeply
  CHECK(!expand("(", env));
  std::vector<std::string> unset;
  CHECK(*expand("a${NOPE}b", env, &unset) == "ab");  // fio: an unset variable is nothing
  CHECK(unset == std::vector<std::string>{"NOPE"});
  auto noted = read_command_line({"--name=x", "--size=${NOPE}1g"}, env);
  REQUIRE(noted);
  REQUIRE(noted->notes.size() == 1);
  CHECK(noted->notes[0].find("${NOPE} is not set in the environment: it read as nothing") != std::string::npos);
  auto in = read_command_line({"--name=x", "--filename=${DEV}", "--size=${SIZE}", "--iodepth=($ncpus*4)"}, env);
  REQUIRE(in);
  auto x = options_of(in->jobs[0]);
  CHECK(x["filename"] == "/dev/loop7");
  CHECK(x["size"] == "2g");
  CHECK(x["iodepth"] == "24");
}

TEST_CASE("fio options as JobSpecs: fio's defaults, aliases, groups", "[fio]") {
  auto in = read_command_line({"--filename=/dev/loop9", "--name=a", "--name=b", "--readwrite=randrw", "--rwmixwrite=30",
                               "--blocksize=16k", "--timeout=10", "--buffered=0", "--ioengine=libaio",
                               "--name=c", "--stonewall", "--rw=write", "--name=d", "--new_group", "--name=e"},
                              test_env());
  REQUIRE(in);
  auto jobs = to_jobs(*in);
  CHECK(jobs.errors.empty());
  CHECK(jobs.unsupported.empty());
  REQUIRE(jobs.jobs.size() == 5);
  const JobSpec& a = jobs.jobs[0].spec;
  CHECK(a.rw == RwMode::Read);  // fio's defaults, not a profile's
  CHECK(a.bs == 4096);
  CHECK(a.iodepth == 1);
  CHECK(!a.direct);
  CHECK(a.engine == EngineKind::Sync);
  CHECK(a.runtime_s == 0);
  CHECK(!a.time_based);
  CHECK(!a.group_reporting);
  CHECK(jobs.jobs[0].filenames == std::vector<std::string>{"/dev/loop9"});
  const JobSpec& b = jobs.jobs[1].spec;
  CHECK(b.rw == RwMode::RandRW);
  CHECK(b.rwmixread == 70);
  CHECK(b.bs == 16384);
  CHECK(b.runtime_s == 10);
  CHECK(b.direct);
  CHECK(b.engine == EngineKind::IoUring);
  CHECK(jobs.notes.size() == 1);  // libaio runs on io_uring, said once for the job
  CHECK(jobs.jobs[0].groupid == 0);
  CHECK(jobs.jobs[1].groupid == 0);
  CHECK(jobs.jobs[2].groupid == 1);  // stonewall: a new group
  CHECK(jobs.jobs[2].stonewall);
  CHECK(jobs.jobs[3].groupid == 2);  // new_group without waiting
  CHECK(!jobs.jobs[3].stonewall);
  CHECK(jobs.jobs[4].groupid == 2);
}

TEST_CASE("fio's startdelay and loops are the job's; fio's defaults are none and once", "[fio]") {
  auto in = read_command_line({"--filename=/dev/loop9", "--name=a", "--name=b", "--startdelay=4", "--loops=3",
                               "--name=c", "--startdelay=1500ms", "--name=d", "--startdelay=2-5"},
                              test_env());
  REQUIRE(in);
  auto jobs = to_jobs(*in);
  CHECK(jobs.unsupported.empty());
  REQUIRE(jobs.jobs.size() == 4);
  CHECK(jobs.jobs[0].spec.startdelay_s == 0);
  CHECK(jobs.jobs[0].spec.loops == 1);
  CHECK(jobs.jobs[1].spec.startdelay_s == 4);
  CHECK(jobs.jobs[1].spec.loops == 3);
  CHECK(jobs.jobs[2].spec.startdelay_s == 1.5);
  REQUIRE(jobs.errors.size() == 1);
  CHECK(jobs.errors[0].find("job 'd': startdelay=2-5: use") != std::string::npos);
}

TEST_CASE("fio's wait_for names an earlier job; filesize is one file's region", "[fio]") {
  auto in = read_command_line({"--filename=/dev/loop9", "--filesize=128m", "--name=w", "--rw=write", "--name=r",
                               "--new_group", "--wait_for=w", "--name=x", "--wait_for=later", "--name=later",
                               "--size=1g", "--name=range", "--filesize=1m-4m"},
                              test_env());
  REQUIRE(in);
  auto jobs = to_jobs(*in);
  REQUIRE(jobs.jobs.size() == 5);
  CHECK(jobs.jobs[0].spec.size == 128ull << 20);
  CHECK(jobs.jobs[1].spec.wait_for == "w");
  CHECK(jobs.jobs[1].groupid == 1);
  REQUIRE(jobs.errors.size() == 1);
  CHECK(jobs.errors[0].find("job 'x': wait_for=later: no job of that name before it") != std::string::npos);
  REQUIRE(jobs.unsupported.size() == 2);
  CHECK(jobs.unsupported[0].job == "later");
  CHECK(jobs.unsupported[0].why.find("filesize beside size") != std::string::npos);
  CHECK(jobs.unsupported[1].job == "range");
  CHECK(jobs.unsupported[1].why.find("filesize with a range") != std::string::npos);
}

TEST_CASE("fio's number_ios is the job's; a rate's trim value caps no I/O and is said so", "[fio]") {
  auto in = read_command_line({"--filename=/dev/loop9", "--name=a", "--number_ios=1000", "--rate=300,200,300",
                               "--name=b", "--rate_iops=50,,7", "--name=c", "--rate=1m"},
                              test_env());
  REQUIRE(in);
  auto jobs = to_jobs(*in);
  CHECK(jobs.errors.empty());
  CHECK(jobs.unsupported.empty());
  REQUIRE(jobs.jobs.size() == 3);
  CHECK(jobs.jobs[0].spec.number_ios == 1000);
  CHECK(jobs.jobs[0].spec.rate_bytes[0] == 300);
  CHECK(jobs.jobs[0].spec.rate_bytes[1] == 200);
  CHECK(jobs.jobs[1].spec.rate_iops[0] == 50);
  CHECK(jobs.jobs[1].spec.rate_iops[1] == 0);
  CHECK(jobs.jobs[2].spec.rate_bytes[1] == 1u << 20);
  REQUIRE(jobs.notes.size() == 2);
  CHECK(jobs.notes[0].find("job 'a': rate=300,200,300: the third value caps trims") != std::string::npos);
  CHECK(jobs.notes[1].find("job 'b': rate_iops=50,,7") != std::string::npos);
}

TEST_CASE("fio options as JobSpecs: a filename goes inside directory, an absolute one too, as fio lays it out", "[fio]") {
  auto in = read_command_line({"--directory=/srv/d", "--name=a", "--filename=f1", "--name=b", "--filename=/x/f2",
                               "--name=c"},
                              test_env());
  REQUIRE(in);
  auto jobs = to_jobs(*in);
  REQUIRE(jobs.jobs.size() == 3);
  CHECK(jobs.jobs[0].filenames == std::vector<std::string>{"/srv/d/f1"});
  CHECK(jobs.jobs[1].filenames == std::vector<std::string>{"/srv/d/x/f2"});
  CHECK(jobs.jobs[0].spec.directory.empty());
  CHECK(jobs.jobs[2].filenames.empty());  // no filename: NAME.N.0 files in the directory
  CHECK(jobs.jobs[2].spec.directory == "/srv/d");
}

TEST_CASE("fio's bsrange: one size is that block size, a range sizes from MIN to MAX", "[fio]") {
  auto in = read_command_line({"--name=a", "--bsrange=4k-4k", "--name=b", "--blocksize_range=4k-4k,16k-16k",
                               "--name=c", "--bsrange=1k-4k", "--name=d", "--bsrange=4k", "--name=e",
                               "--bsrange=8k-4k"},
                              test_env());
  REQUIRE(in);
  auto jobs = to_jobs(*in);
  CHECK(jobs.jobs[0].spec.bs == 4096);
  CHECK_FALSE(jobs.jobs[0].spec.shape.any());
  CHECK(jobs.jobs[1].spec.bs == 4096);
  CHECK(jobs.jobs[1].spec.write_bs() == 16384);
  CHECK(jobs.jobs[2].spec.bs == 1024);
  CHECK(jobs.jobs[2].spec.shape.bs_max == std::array<uint32_t, 2>{4096, 4096});
  CHECK(jobs.jobs[2].spec.max_bs() == 4096);
  CHECK(jobs.unsupported.empty());
  REQUIRE(jobs.errors.size() == 2);
  CHECK(jobs.errors[0].find("job 'd': bsrange=4k: use MIN-MAX") != std::string::npos);
  CHECK(jobs.errors[1].find("job 'e': bsrange=8k-4k: use MIN-MAX") != std::string::npos);
}

TEST_CASE("fio's bssplit, blockalign, rw=<op>:<n>, random_distribution and thinktime shape the job", "[fio]") {
  auto in = read_command_line({"--name=a", "--bssplit=512/10:4k/:64k/30,1m/100", "--blockalign=4k", "--rw=read:-8k",
                               "--name=b", "--rw=randread:8", "--random_distribution=zoned:50/5:30/15:20/",
                               "--thinktime=2ms", "--thinktime_blocks=4", "--name=c",
                               "--random_distribution=zoned_abs:60/1m:40/3m,100/4m", "--rw=randrw"},
                              test_env());
  REQUIRE(in);
  auto jobs = to_jobs(*in);
  REQUIRE(jobs.errors.empty());
  REQUIRE(jobs.unsupported.empty());
  const IoShape& a = jobs.jobs[0].spec.shape;
  REQUIRE(a.bssplit[0].size() == 3);
  CHECK(a.bssplit[0][1] == BsShare{4096, 60});  // the blank share: what the others leave
  CHECK(a.bssplit[1] == std::vector<BsShare>{{1u << 20, 100}});
  CHECK(jobs.jobs[0].spec.bs == 512);            // each direction's smallest
  CHECK(jobs.jobs[0].spec.write_bs() == 1u << 20);
  CHECK(jobs.jobs[0].spec.max_bs() == 1u << 20);
  CHECK(a.blockalign == std::array<uint32_t, 2>{4096, 4096});
  CHECK(a.seq_add == -8192);
  CHECK(jobs.jobs[0].spec.rw == RwMode::Read);
  const IoShape& b = jobs.jobs[1].spec.shape;
  CHECK(b.seq_nr == 8);
  CHECK(b.distribution == Distribution::Zoned);
  REQUIRE(b.zones[0].size() == 3);
  CHECK(b.zones[0][2].size_percent == Approx(80));  // blank: the rest of the region
  CHECK(b.zones[1] == b.zones[0]);
  CHECK(b.thinktime_us == 2000);
  CHECK(b.thinktime_blocks == 4);
  const IoShape& c = jobs.jobs[2].spec.shape;
  CHECK(c.distribution == Distribution::ZonedAbs);
  CHECK(c.zones[0][1].size_bytes == 3u << 20);
  CHECK(c.zones[1] == std::vector<RandomZone>{{100, 0, 4u << 20}});
  // The same in fio's words again (the JSON report's job options, the side-by-side fio line).
  CHECK(bssplit_text(a.bssplit) == "512/10:4k/60:64k/30,1m/100");
  CHECK(random_distribution_text(b) == "zoned:50/5:30/15:20/80");
  CHECK(rw_suffix(a) == ":-8k");
  CHECK(rw_suffix(b) == ":8");
}

TEST_CASE("fio's shape options with bad values are errors naming the option; zipf, pareto, normal taken", "[fio]") {
  auto in = read_command_line({"--name=a", "--bssplit=4k/60:8k/60", "--name=b", "--bssplit=4k/50", "--name=c",
                               "--random_distribution=zoned:50/5:30/15", "--name=d", "--random_distribution=zipf:1.2:0.25",
                               "--name=e", "--rw=randread:-4", "--name=f", "--blockalign=0", "--name=g",
                               "--random_distribution=zoned:50/60:50/60"},
                              test_env());
  REQUIRE(in);
  auto jobs = to_jobs(*in);
  REQUIRE(jobs.errors.size() == 6);
  CHECK(jobs.errors[0].find("job 'a': bssplit=4k/60:8k/60: the bssplit percentages come to 120, above 100") !=
        std::string::npos);
  CHECK(jobs.errors[1].find("job 'b': bssplit=4k/50: the bssplit percentages come to 50, not 100") != std::string::npos);
  CHECK(jobs.errors[2].find("job 'c': random_distribution=zoned:50/5:30/15: the zones' access percentages come to 80") !=
        std::string::npos);
  CHECK(jobs.errors[3].find("job 'e': rw=randread:-4: use rw=randread:N") != std::string::npos);
  CHECK(jobs.errors[4].find("job 'f': blockalign=0: use a size") != std::string::npos);
  CHECK(jobs.errors[5].find("job 'g': random_distribution=zoned:50/60:50/60: the zones' sizes come to 120%") !=
        std::string::npos);
  CHECK(jobs.unsupported.empty());
  const IoShape& d = jobs.jobs[3].spec.shape;
  CHECK(d.distribution == Distribution::Zipf);
  CHECK(d.dist_value == 1.2);
  CHECK(d.dist_center == 0.25);
  auto more = to_jobs(*read_command_line({"--name=p", "--random_distribution=pareto:0.9", "--name=n",
                                          "--random_distribution=normal:10", "--random_center=0.75", "--name=x",
                                          "--random_distribution=zipf:1", "--name=y", "--random_distribution=pareto:1.5",
                                          "--name=z", "--random_distribution=normal"},
                                         test_env()));
  REQUIRE(more.errors.size() == 3);
  CHECK(more.jobs[0].spec.shape.distribution == Distribution::Pareto);
  CHECK(more.jobs[1].spec.shape.distribution == Distribution::Normal);
  CHECK(more.jobs[1].spec.shape.dist_center == 0.75);
  CHECK(more.errors[0].find("random_distribution=zipf:1: use zipf:THETA") != std::string::npos);
  CHECK(more.errors[1].find("random_distribution=pareto:1.5: use pareto:H") != std::string::npos);
  CHECK(more.errors[2].find("random_distribution=normal: use normal:DEV") != std::string::npos);
}

TEST_CASE("fio's log options: a bare write_bw_log is the job's name, the others' values as given", "[fio]") {
  // A bare write_bw_log is a job file's (on fio's command line it needs a value, as here).
  TempDir d;
  auto in = read_command_line({d.write("logs.fio", "[global]\nwrite_bw_log\nlog_offset=1\n[first]\n[second]\n"
                                                   "write_bw_log=--name=x\nwrite_lat_log=p\nwrite_iops_log=q\n"
                                                   "log_avg_msec=500\nlog_prio=1\nlog_offset=0\n")},
                              test_env());
  REQUIRE(in);
  auto jobs = to_jobs(*in);
  REQUIRE(jobs.errors.empty());
  REQUIRE(jobs.unsupported.empty());
  REQUIRE(jobs.jobs.size() == 2);
  const IoLogs& a = jobs.jobs[0].spec.logs;
  CHECK(a.bw == "first");  // bare: the job's own name
  CHECK(a.lat.empty());
  CHECK(a.offset);  // the global log_offset=1
  CHECK(a.avg_msec == 0);
  const IoLogs& b = jobs.jobs[1].spec.logs;
  CHECK(b.bw == "--name=x");  // a prefix is any text
  CHECK(b.lat == "p");
  CHECK(b.iops == "q");
  CHECK(b.avg_msec == 500);
  CHECK(b.prio);
  CHECK_FALSE(b.offset);
  auto bad = read_command_line({"--name=a", "--log_avg_msec=fast"}, test_env());
  REQUIRE(bad);
  CHECK(to_jobs(*bad).errors.size() == 1);
}

TEST_CASE("fio's zonemode=strided: zonesize, zonerange and zoneskip, and only with it", "[fio]") {
  auto in = read_command_line({"--name=z", "--zonemode=strided", "--zonesize=256m", "--zoneskip=2g", "--name=r",
                               "--zonemode=strided", "--zonesize=3m", "--zonerange=1m"},
                              test_env());
  REQUIRE(in);
  auto jobs = to_jobs(*in);
  REQUIRE(jobs.errors.empty());
  CHECK(jobs.jobs[0].spec.shape.zone_size == 256ull << 20);
  CHECK(jobs.jobs[0].spec.shape.zone_skip == 2ull << 30);
  CHECK(jobs.jobs[0].spec.shape.zone_range == 0);  // the engine takes zonesize for it, as fio
  CHECK(jobs.jobs[1].spec.shape.zone_range == 1ull << 20);
  CHECK(jobs.jobs[0].spec.shape.any());
  auto none = read_command_line({"--name=z", "--zonesize=1m"}, test_env());
  REQUIRE(none);
  auto j = to_jobs(*none);
  REQUIRE(j.errors.size() == 1);
  CHECK(j.errors[0].find("need zonemode=strided") != std::string::npos);
}

TEST_CASE("fio's priorities: prioclass/prio the job's, cmdprio's shares with their class and level", "[fio]") {
  auto in = read_command_line({"--ioengine=libaio", "--name=p", "--prioclass=3", "--cmdprio_percentage=20,60",
                               "--name=b", "--prioclass=2", "--prio=7", "--cmdprio_class=3", "--cmdprio=4",
                               "--cmdprio_bssplit=64k/25/1/1:64k/75:1m/0,1m/10/2/0/1"},
                              test_env());
  REQUIRE(in);
  auto jobs = to_jobs(*in);
  REQUIRE(jobs.errors.empty());
  const IoPriority& p = jobs.jobs[0].spec.priority;
  CHECK(p.job_set);
  CHECK(p.job == 0x6000);
  REQUIRE(p.cmd[0].size() == 1);
  CHECK(p.cmd[0][0] == PrioShare{0, 20, 0x2000});  // cmdprio_class unset: fio's highest class, level 0
  CHECK(p.cmd[1][0] == PrioShare{0, 60, 0x2000});
  const IoPriority& b = jobs.jobs[1].spec.priority;
  CHECK(b.job == 0x4007);
  REQUIRE(b.cmd[0].size() == 3);
  CHECK(b.cmd[0][0] == PrioShare{64 << 10, 25, 0x2001});  // its own class and level
  CHECK(b.cmd[0][1] == PrioShare{64 << 10, 75, 0x6004});  // cmdprio_class and cmdprio
  CHECK(b.cmd[0][2] == PrioShare{1 << 20, 0, 0x6004});
  REQUIRE(b.cmd[1].size() == 1);
  CHECK(b.cmd[1][0] == PrioShare{1 << 20, 10, 0x4000});  // the hint field sets nothing, as fio 3.33
  CHECK(std::any_of(jobs.notes.begin(), jobs.notes.end(),
                    [](const std::string& n) { return n.find("fifth field (a priority hint)") != std::string::npos; }));
}

TEST_CASE("fio's latency_target and latency_window are microseconds without a unit; lfsr is the random map", "[fio]") {
  auto in = read_command_line({"--name=a", "--latency_target=500000", "--latency_window=5000000",
                               "--latency_percentile=99.9", "--random_generator=lfsr", "--norandommap",
                               "--name=b", "--latency_target=2ms", "--latency_window=1s", "--random_generator=tausworthe64"},
                              test_env());
  REQUIRE(in);
  auto jobs = to_jobs(*in);
  REQUIRE(jobs.errors.empty());
  REQUIRE(jobs.unsupported.empty());
  const LatencyTarget& a = jobs.jobs[0].spec.latency;
  CHECK(a.target_ns == 500'000'000);
  CHECK(a.window_ns == 5'000'000'000);
  CHECK(a.percentile == 99.9);
  CHECK_FALSE(jobs.jobs[0].spec.norandommap);  // lfsr repeats no block in a pass, norandommap or not
  const LatencyTarget& b = jobs.jobs[1].spec.latency;
  CHECK(b.target_ns == 2'000'000);
  CHECK(b.window_ns == 1'000'000'000);
  CHECK(b.percentile == 100.0);  // fio's default: every I/O within the target
  auto bad = to_jobs(*read_command_line({"--name=c", "--latency_percentile=101", "--latency_target=soon",
                                         "--random_generator=mt"}, test_env()));
  REQUIRE(bad.errors.size() == 3);
  CHECK(bad.errors[0].find("latency_percentile=101: use a percentage") != std::string::npos);
  CHECK(bad.errors[1].find("latency_target=soon: use microseconds") != std::string::npos);
  CHECK(bad.errors[2].find("random_generator=mt: use tausworthe, lfsr or tausworthe64") != std::string::npos);
}

TEST_CASE("fio's numa options: node lists and memory policies as fio reads them, bad ones named", "[fio]") {
  auto in = read_command_line({"--name=a", "--numa_cpu_nodes=0-1,3", "--numa_mem_policy=interleave:0-1", "--name=b",
                               "--numa_mem_policy=prefer:1", "--name=c", "--numa_mem_policy=local", "--numa_cpu_nodes=all"},
                              test_env());
  REQUIRE(in);
  auto jobs = to_jobs(*in);
  REQUIRE(jobs.errors.empty());
  CHECK(jobs.jobs[0].spec.numa.cpu_nodes == std::vector<int>{0, 1, 3});
  CHECK(jobs.jobs[0].spec.numa.mem == NumaPolicy::Mem::Interleave);
  CHECK(jobs.jobs[0].spec.numa.mem_nodes == std::vector<int>{0, 1});
  CHECK(jobs.jobs[1].spec.numa.mem == NumaPolicy::Mem::Prefer);
  CHECK(jobs.jobs[1].spec.numa.mem_nodes == std::vector<int>{1});
  CHECK(jobs.jobs[2].spec.numa.mem == NumaPolicy::Mem::Local);
  CHECK(jobs.jobs[2].spec.numa.cpu_nodes.empty());  // all: every node, no restriction
  auto bad = to_jobs(*read_command_line({"--name=d", "--numa_mem_policy=bind", "--numa_mem_policy=local:0",
                                         "--numa_mem_policy=spread:0", "--numa_cpu_nodes=x"}, test_env()));
  REQUIRE(bad.errors.size() == 4);
  CHECK(bad.errors[0].find("numa_mem_policy=bind: use bind:NODES") != std::string::npos);
  CHECK(bad.errors[1].find("local takes no nodes") != std::string::npos);
  CHECK(bad.errors[2].find("use default, prefer:N, bind:NODES, interleave:NODES or local") != std::string::npos);
  CHECK(bad.errors[3].find("numa_cpu_nodes=x: use NUMA nodes like 0, 0-1 or all") != std::string::npos);
}

TEST_CASE("fio's offset_increment: each clone a job of its own at offset + k x increment, in order", "[fio]") {
  auto in = read_command_line({"--offset=120k", "--name=w", "--numjobs=3", "--offset_increment=4m", "--rw=write:112k",
                               "--bs=16k", "--verify=crc32c", "--verify_backlog=1", "--verify_dump=1", "--name=r",
                               "--stonewall", "--numjobs=2", "--offset_increment=1m"},
                              test_env());
  REQUIRE(in);
  auto jobs = to_jobs(*in);
  REQUIRE(jobs.errors.empty());
  REQUIRE(jobs.unsupported.empty());
  REQUIRE(jobs.jobs.size() == 5);
  for (int k = 0; k < 3; ++k) {
    INFO(k);
    CHECK(jobs.jobs[k].name == "w");
    CHECK(jobs.jobs[k].spec.numjobs == 1);
    CHECK(jobs.jobs[k].spec.offset == 120 * 1024 + k * (4ull << 20));
    CHECK(jobs.jobs[k].groupid == 0);
    CHECK(jobs.jobs[k].spec.verify_backlog == 1);
    CHECK(jobs.jobs[k].spec.verify_dump);
  }
  CHECK(jobs.jobs[3].stonewall);  // the second job's first clone starts its group; the next runs with it
  CHECK_FALSE(jobs.jobs[4].stonewall);
  CHECK(jobs.jobs[3].groupid == 1);
  CHECK(jobs.jobs[4].groupid == 1);
  CHECK(jobs.jobs[4].spec.offset == 120 * 1024 + (1ull << 20));
  auto pct = to_jobs(*read_command_line({"--name=p", "--numjobs=2", "--offset_increment=10%"}, test_env()));
  REQUIRE(pct.unsupported.size() == 1);
  CHECK(pct.unsupported[0].why.find("a percentage of the device") != std::string::npos);
}

TEST_CASE("fio's buffer content options: compress and dedupe shares, mode, working set, global", "[fio]") {
  auto in = read_command_line({"--dedupe_mode=working_set", "--dedupe_global=1", "--dedupe_percentage=50",
                               "--buffer_compress_percentage=50", "--dedupe_working_set_percentage=40",
                               "--buffer_compress_chunk=1k", "--name=a", "--name=b", "--dedupe_mode=repeat"},
                              test_env());
  REQUIRE(in);
  auto jobs = to_jobs(*in);
  REQUIRE(jobs.errors.empty());
  REQUIRE(jobs.unsupported.empty());
  const BufferContent& a = jobs.jobs[0].spec.content;
  CHECK(a.working_set);
  CHECK(a.dedupe_global);
  CHECK(a.dedupe_percentage == 50);
  CHECK(a.compress_percentage == 50);
  CHECK(a.working_set_percentage == 40);
  CHECK(a.compress_chunk == 1024);
  CHECK_FALSE(jobs.jobs[1].spec.content.working_set);
  auto bad = to_jobs(*read_command_line({"--name=c", "--dedupe_percentage=101", "--dedupe_mode=sometimes"}, test_env()));
  REQUIRE(bad.errors.size() == 2);
  CHECK(bad.errors[0].find("dedupe_percentage=101: use a whole percentage") != std::string::npos);
  CHECK(bad.errors[1].find("dedupe_mode=sometimes: use repeat or working_set") != std::string::npos);
}

TEST_CASE("fio's filename adds a file: [global]'s and the job's own are two, as fio runs them", "[fio]") {
  auto in = read_command_line({"--filename=/dev/loop9", "--name=a", "--filename=/dev/loop9", "--name=b",
                               "--filename=/dev/loop8:/dev/loop7", "--name=c"},
                              test_env());
  REQUIRE(in);
  auto jobs = to_jobs(*in);
  REQUIRE(jobs.errors.empty());
  CHECK(jobs.jobs[0].filenames == std::vector<std::string>{"/dev/loop9", "/dev/loop9"});
  CHECK(jobs.jobs[1].filenames == std::vector<std::string>{"/dev/loop9", "/dev/loop8", "/dev/loop7"});
  CHECK(jobs.jobs[2].filenames == std::vector<std::string>{"/dev/loop9"});
}

TEST_CASE("fio options diskprobe does not implement are listed with job and place, values checked", "[fio]") {
  auto in = read_command_line({"--name=a", "--thinktime_spin=10", "--rw=randtrim", "--ioengine=mmap", "--bs=3",
                               "--zonemode=zbd", "--loops=1", "--kb_base=1024", "--gtod_reduce=1"},
                              test_env());
  REQUIRE(in);
  auto jobs = to_jobs(*in);
  REQUIRE(jobs.unsupported.size() == 4);
  CHECK(jobs.unsupported[0].option == "thinktime_spin=10");
  CHECK(jobs.unsupported[0].job == "a");
  CHECK(jobs.unsupported[0].where == "argument 2");
  CHECK(jobs.unsupported[1].why.find("trim workloads") != std::string::npos);
  CHECK(jobs.unsupported[2].why.find("ioengine=mmap") != std::string::npos);
  CHECK(jobs.unsupported[3].option == "zonemode=zbd");
  CHECK(jobs.unsupported[3].why.find("zonemode=zbd is not implemented (zonemode=strided and none are)") != std::string::npos);
  REQUIRE(jobs.errors.size() == 1);
  CHECK(jobs.errors[0].find("bs=3: use") != std::string::npos);
  REQUIRE(jobs.notes.size() == 1);
  CHECK(jobs.notes[0].find("gtod_reduce=1 ignored") != std::string::npos);
}

// fio's own examples/ (read from ../shared, never copied): every file parses, and each job keeps
// the sections fio sees. Which of them run is the integration test's business.
// Its own ctest entry (unit.fio_examples), which skips with 77 where the copy is absent.
TEST_CASE("fio's examples/ job files all parse", "[fio-examples]") {
  fs::path dir = examples_dir();
  if (dir.empty()) {
    std::fprintf(stderr, "SKIP: fio's examples/ not found at %s (set DISKPROBE_FIO_EXAMPLES)\n", DISKPROBE_FIO_EXAMPLES);
    std::exit(77);
  }
  size_t files = 0, jobs = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".fio") continue;
    ++files;
    auto in = read_command_line({e.path().string()}, test_env({{"FILENAME", "/dev/loop9"}}));
    INFO(e.path().filename().string() << ": " << (in ? "" : in.error()));
    REQUIRE(in);
    jobs += in->jobs.size();
  }
  CHECK(files >= 100);
  CHECK(jobs > files);
}

TEST_CASE("fio's rate_process and io_submit_mode: poisson taken, offload taken with a note, others errors", "[fio]") {
  auto in = read_command_line({"--name=a", "--rate_iops=50", "--rate_process=poisson", "--io_submit_mode=offload",
                               "--name=b", "--rate_process=exp", "--name=c", "--io_submit_mode=thread"},
                              test_env());
  REQUIRE(in);
  auto jobs = to_jobs(*in);
  CHECK(jobs.jobs[0].spec.rate_poisson);
  CHECK_FALSE(jobs.jobs[1].spec.rate_poisson);
  REQUIRE(jobs.notes.size() == 1);
  CHECK(jobs.notes[0].find("io_submit_mode=offload") != std::string::npos);
  REQUIRE(jobs.errors.size() == 2);
  CHECK(jobs.errors[0].find("job 'b': rate_process=exp: use linear or poisson") != std::string::npos);
  CHECK(jobs.errors[1].find("job 'c': io_submit_mode=thread: use inline or offload") != std::string::npos);
}
