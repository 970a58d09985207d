// diskprobe's command line: parse, dispatch to the subcommand (one file each), exit code.
#include <cstdio>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "diskprobe/cli/args.h"
#include "commands.h"
#include "diskprobe/base/write_out.h"
#include "out.h"

namespace {

using namespace diskprobe::cli;
using diskprobe::kOk;
using diskprobe::kUsage;

void set_logger(bool verbose) {
  auto logger = spdlog::stderr_color_st("diskprobe");
  logger->set_pattern("diskprobe: %v");
  logger->set_level(verbose ? spdlog::level::debug : spdlog::level::info);
  spdlog::set_default_logger(logger);
}

// `diskprobe fio ...` takes fio's syntax, not diskprobe's: its words go to it unparsed.
bool is_fio(int argc, char** argv) { return argc > 1 && std::string(argv[1]) == "fio"; }

int dispatch(int argc, char** argv) {
  if (is_fio(argc, argv)) {
    set_logger(false);
    return cmd_fio(std::vector<std::string>(argv + 2, argv + argc), diskprobe::SysRoot());
  }
  std::string error;
  auto args = parse(argc, argv, error);
  if (!args) return fail(kUsage, error);
  if (args->help) return print(usage()), kOk;
  if (args->version) return cmd_version();
  if (args->command.empty()) {
    std::fputs(usage(), stderr);
    return fail(kUsage, "no command given");
  }

  set_logger(args->verbose);

  const diskprobe::SysRoot root(args->sysfs, args->procfs);
  const std::string& c = args->command;
  if (c == "profiles") return cmd_profiles(*args);
  if (c == "profile") return cmd_profile(*args);
  if (c == "devices") return cmd_devices(*args, root);
  if (c == "check") return cmd_check(*args, root);
  if (c == "tune") return cmd_tune(*args, root);
  if (c == "compare") return cmd_compare(*args);
  if (c == "aggregate") return cmd_aggregate(*args);
  if (c == "accept") return cmd_accept(*args, root);
  if (c == "curve") return cmd_curve(*args, root);
  return cmd_run(*args, root);
}

}  // namespace

int main(int argc, char** argv) {
  diskprobe::guard_std_fds();
  if (!is_fio(argc, argv)) {  // fio's --output-format=json is its report's, not JSON mode
    diskprobe::cli::set_json_mode(diskprobe::cli::wants_json(argc, argv));
    auto file = diskprobe::cli::json_file(argc, argv);
    diskprobe::cli::set_json_file(std::move(file.path), std::move(file.others));
  }
  return diskprobe::cli::finish(dispatch(argc, argv));
}

