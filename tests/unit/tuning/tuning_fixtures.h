// Helpers shared by the tuning unit tests: fixture trees, specs, and test100w.sh's own CPU
// selection run by bash on a fixture, to compare the plans with.
#pragma once

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "diskprobe/tuning/plan.h"
#include "diskprobe/tuning/topology.h"

namespace tuning_fixtures {

namespace fs = std::filesystem;
using namespace diskprobe;
using namespace diskprobe::tuning;

inline std::string fixture(const std::string& name) {
  return std::string(DISKPROBE_FIXTURES) + "/tuning/" + name;
}

inline SysRoot fixture_root(const std::string& name) {
  return SysRoot(fixture(name) + "/sys", fixture(name) + "/proc");
}

inline BlockDevice disk(const std::string& name) {
  BlockDevice d;
  d.name = name;
  d.disk = name;
  d.path = "/dev/" + name;
  d.sysfs_rel = "class/block/" + name;
  return d;
}

inline Topology topo_of(const std::string& fixture_name, const std::string& dev) {
  auto t = read_topology(fixture_root(fixture_name), disk(dev));
  INFO((t.ok() ? std::string() : t.error()));
  REQUIRE(t.ok());
  return *t;
}

inline JobSpec spec_with(PinPolicy pin, unsigned numjobs) {
  JobSpec s;
  s.numjobs = numjobs;
  s.host.pinning = pin;
  return s;
}

// The essd-plx-latency profile's host wishes (test_plx_lat.sh).
inline JobSpec latency_spec() {
  JobSpec s = spec_with(PinPolicy::Irq, 1);
  s.iodepth = 1;
  s.host.rq_affinity = 2;
  s.host.hold_cstates = true;
  s.host.advise_idle_poll = true;
  return s;
}

inline const Irq* irq_named(const Topology& t, const std::string& name) {
  for (const auto& i : t.irqs) {
    if (i.name == name) return &i;
  }
  return nullptr;
}

inline bool any_contains(const std::vector<std::string>& v, const std::string& needle) {
  for (const auto& s : v) {
    if (s.find(needle) != std::string::npos) return true;
  }
  return false;
}

inline std::string join(const std::vector<int>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

inline std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline void put(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

// test100w.sh's selection, verbatim, run by bash on a fixture's mq/ directory.
inline std::string test100w_pipeline(const std::string& block_dir, unsigned numjobs) {
  std::string script =
      "DEV=" + block_dir + "; numjobs=" + std::to_string(numjobs) +
      "\nlet nu=$numjobs+1\ncpulist=\"\"\n"
      "for ((i=1;i<10;i++))\ndo\n"
      "  list=`cat $DEV/mq/*/cpu_list | awk '{if(i<=NF) print $i;}' i=\"$i\" | tr -d ',' | tr '\\n' ','`\n"
      "  if [ -z $list ];then\n    break\n  fi\n  cpulist=${cpulist}${list}\ndone\n"
      "spincpu=`echo $cpulist | cut -d ',' -f 2-${nu}`\necho $spincpu\n";
  char dir_template[] = "/tmp/diskprobe-test100w-XXXXXX";
  REQUIRE(::mkdtemp(dir_template) != nullptr);
  std::string path = std::string(dir_template) + "/select.sh";
  put(path, script);
  std::string cmd = "LC_ALL=C bash " + path;
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[256];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  REQUIRE(::pclose(p) == 0);
  fs::remove_all(dir_template);
  while (!out.empty() && (out.back() == '\n' || out.back() == ',')) out.pop_back();
  return out;
}

struct TempDir {
  fs::path path;
  TempDir() {
    char t[] = "/tmp/diskprobe-tuning-unit-XXXXXX";
    REQUIRE(::mkdtemp(t) != nullptr);
    path = t;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

}  // namespace tuning_fixtures
