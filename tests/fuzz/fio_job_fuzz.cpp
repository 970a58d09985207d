// A fio job file as `diskprobe fio FILE` reads it (profiles/fio_jobs, then fio_spec): sections,
// comments, ${VAR}, $keywords and arithmetic. The part after a "----" line is an included file
// (include inc.fio); other includes are dropped, so nothing outside the scratch directory is
// read.
#include <string>
#include <vector>

#include "diskprobe/profiles/fio_jobs.h"
#include "diskprobe/profiles/fio_spec.h"
#include "fuzz_input.h"

using namespace diskprobe;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto parts = fuzz::split(fuzz::as_text(data, size), "\n----\n", 2);
  std::string job(parts[0]);
  // Only "include inc.fio" stays an include; any other names a file outside the scratch dir.
  std::string kept;
  size_t b = 0;
  while (b <= job.size()) {
    size_t e = job.find('\n', b);
    if (e == std::string::npos) e = job.size();
    std::string line = job.substr(b, e - b);
    if (line.find("include") == std::string::npos || line == "include inc.fio") kept += line + "\n";
    b = e + 1;
  }
  const std::string dir = fuzz::scratch_dir();
  fuzz::write_file(dir + "/job.fio", kept);
  fuzz::write_file(dir + "/inc.fio", parts.size() > 1 ? parts[1] : "");
  profiles::fio::Environment env;
  env.getenv = [](const std::string& n) -> std::optional<std::string> {
    if (n == "FILENAME") return std::string("/dev/loop9");
    return std::nullopt;
  };
  env.ncpus = 4;
  env.mb_memory = 1024;
  auto in = profiles::fio::read_command_line({dir + "/job.fio"}, env);
  if (!in) return 0;
  (void)profiles::fio::to_jobs(*in);
  return 0;
}
