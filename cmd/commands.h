// The subcommands, one file each (main.cpp dispatches), and what several of them share. Each
// returns the process exit code (diskprobe/run/exit_codes.h).
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <string_view>

#include "diskprobe/cli/args.h"
#include "diskprobe/base/status.h"
#include "diskprobe/base/sysroot.h"
#include "diskprobe/device/block_device.h"
#include "diskprobe/report/report.h"
#include "diskprobe/run/exit_codes.h"
#include "diskprobe/run/run.h"
#include "diskprobe/safety/preflight.h"
#include "diskprobe/spec/job_spec.h"

namespace diskprobe::cli {

int cmd_version();                                  // version.cpp
int cmd_profiles(const Args& a);                    // profile.cpp
int cmd_profile(const Args& a);                     // profile.cpp
int cmd_devices(const Args& a, const SysRoot& root);
int cmd_check(const Args& a, const SysRoot& root);
int cmd_tune(const Args& a, const SysRoot& root);
int cmd_run(const Args& a, const SysRoot& root);
// run.cpp: one job's spec, as resolved (a profile with overrides, or `fio`'s job), run on the
// target a.positional, a.scratch or spec.directory names, reported in `format`.
int run_spec(const Args& a, JobSpec spec, OutputFormat format, const SysRoot& root);
int cmd_fio(const std::vector<std::string>& words, const SysRoot& root);  // fio.cpp
int cmd_accept(const Args& a, const SysRoot& root);  // accept.cpp: the volume's suite
int cmd_curve(const Args& a, const SysRoot& root);  // curve.cpp
int cmd_compare(const Args& a);  // reads JSON run reports back: 0, 2, or 4 for a regression
int cmd_aggregate(const Args& a);

// signals.cpp: set by SIGINT/SIGTERM/SIGHUP; "interrupted by Terminated" once it is.
const std::atomic<bool>& stop_flag();
// Sleeps until a stop signal has arrived (at once if one already has).
void wait_for_stop();
std::string stopped_by();

// run.cpp, for every command that runs the engine: the request from the command line, and
// how a run's ending is told (refusals with their verdict on stderr).
run::Request run_request(const cli::Args& a, JobSpec spec, std::vector<Expectation> expectations);
int render_end(const run::Ended& end);

// common.cpp
safety::Options preflight_options(const Args& a, bool hold);
Result<JobSpec> spec_from(const Args& a, std::string_view name);  // the profile with the overrides
// A name that is no block device (a FIFO, /dev/null, a directory) is bad input, 2; one that
// names nothing is refused (3, not-found), as the README says. `check` and `run` answer alike.
Exit name_exit(NameError why);
std::optional<int> bad_device_name(const SysRoot& root, const std::string& arg);
int refused(const safety::Verdict& v, const std::string& why);
std::string journal_dir();

}  // namespace diskprobe::cli
