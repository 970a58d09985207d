// `diskprobe run`: parse and check the command line, build the real steps, call cmd/run.
#include <cstdio>

#include <spdlog/spdlog.h>

#include "acceptance.h"
#include "commands.h"
#include "diskprobe/run/run.h"
#include "diskprobe/spec/host_checks.h"
#include "out.h"
#include "diskprobe/cli/render.h"
#include "run_steps.h"

namespace diskprobe::cli {

run::Request run_request(const cli::Args& a, JobSpec spec, std::vector<Expectation> expectations) {
  run::Request req;
  req.spec = std::move(spec);
  req.devices = a.positional;
  req.scratch = a.scratch;
  req.no_tune = a.no_tune;
  req.strict = a.strict;
  req.keep_files = a.keep_files;
  req.notes = a.notes;
  req.expectations = std::move(expectations);
  req.stop = &stop_flag();
  req.stopped_by = stopped_by;
  return req;
}

// The ending as the README says it: refusals with their verdict on stderr.
int render_end(const run::Ended& end) {
  if (end.why == run::Outcome::Ok) return kOk;
  if (end.verdict) {
    std::fputs(cli::verdict_text(*end.verdict).c_str(), stderr);
    return cli::refuse(*end.verdict, end.message);
  }
  return fail(run::exit_code(end.why), end.message);
}

// Parse and check the command line; the run itself is cmd/run's, with the real steps. Their
// destructors (the tuning guard, then the scratch device) run after the report is out.
int cmd_run(const cli::Args& args, const SysRoot& root) {
  cli::Args a = args;
  if (!a.filename.empty() && a.positional.empty()) a.positional.push_back(a.filename);  // fio's --filename
  if (a.profile.empty()) return fail(kUsage, "run needs --profile NAME: see 'diskprobe profiles'");
  if (!a.directory.empty() && (!a.positional.empty() || !a.scratch.empty())) {
    return fail(kUsage, "give either --directory DIR, a DEVICE or --scratch SIZE, not more than one");
  }
  if (!a.scratch.empty() && !a.positional.empty()) {
    return fail(kUsage, "give either a DEVICE or --scratch SIZE, not both");
  }
  auto format = parse_output_format(a.output_format);
  if (!format) {
    return fail(kUsage, "--output-format " + a.output_format +
                            ": use text, json, junit, fio-json, fio-json+ or openmetrics");
  }
  auto spec = spec_from(a, a.profile);
  if (!spec) return fail(kUsage, spec.error());
  for (const auto& n : a.notes) spdlog::info("{}", n);
  if (!a.directory.empty()) spec->directory = a.directory;  // the command line wins
  // A profile's directory applies only where no DEVICE or --scratch names another target.
  if (a.directory.empty() && (!a.positional.empty() || !a.scratch.empty())) spec->directory.clear();
  return run_spec(a, std::move(*spec), *format, root);
}

int run_spec(const cli::Args& a, JobSpec spec, OutputFormat format, const SysRoot& root) {
  auto expectations = cli::gather_expectations(a, spec);
  if (!expectations) return fail(kUsage, expectations.error());
  // Everything that can be checked without the target, before the preflight or any change.
  if (auto st = validate_on_host(spec, root); !st) return fail(kUsage, st.error());
  auto outputs = cli::CliOutputs::open(a, root, spec, format);
  if (!outputs) return fail(kUsage, outputs.error());

  cli::SystemSteps system(root, preflight_options(a, /*hold=*/true), journal_dir());
  return render_end(run::run(run_request(a, std::move(spec), std::move(*expectations)), system.with(*outputs)));
}

}  // namespace diskprobe::cli
