// A sysfs and procfs tree of a test's own in a temporary directory, removed when the test
// ends: files are written into it, and root() reads them as the tool reads /sys and /proc.
#pragma once

#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "diskprobe/base/sysroot.h"

namespace spec_fixtures {

class FakeSys {
 public:
  FakeSys() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "diskprobe-fake-sys-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    dir_ = tmpl;
  }
  ~FakeSys() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  FakeSys(const FakeSys&) = delete;
  FakeSys& operator=(const FakeSys&) = delete;

  // `rel` under the tree ("sys/block/vdc/dev"), holding `text` and a newline.
  void file(const std::string& rel, const std::string& text) const {
    std::filesystem::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel) << text << "\n";
  }
  diskprobe::SysRoot root() const {
    return diskprobe::SysRoot((dir_ / "sys").string(), (dir_ / "proc").string());
  }

 private:
  std::filesystem::path dir_;
};

}  // namespace spec_fixtures
