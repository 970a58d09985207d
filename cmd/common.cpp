// What several subcommands share: the preflight options, the spec from a profile, the
// device-name errors, the refusal line, the journal directory.
#include <cstdio>
#include <cstdlib>

#include "commands.h"
#include "diskprobe/profiles/profiles.h"
#include "diskprobe/run/run.h"
#include "diskprobe/tuning/restore.h"
#include "out.h"
#include "diskprobe/cli/render.h"

namespace diskprobe::cli {

safety::Options preflight_options(const cli::Args& a, bool hold) {
  safety::Options o;
  o.hold = hold;
  o.paranoid = a.paranoid      ? safety::Paranoid::On
               : a.no_paranoid ? safety::Paranoid::Off
                               : safety::Paranoid::Auto;
  o.allow_nonzero = a.allow_nonzero;
  return o;
}

Result<JobSpec> spec_from(const cli::Args& a, std::string_view name) {
  auto spec = profiles::load(name);
  if (!spec) return spec;
  auto st = profiles::apply_overrides(*spec, a.overrides);
  if (!st) return make_error(st.error());
  if (!a.name.empty()) spec->name = a.name;  // fio's --name labels the job in the report
  return spec;
}

Exit name_exit(NameError why) { return why == NameError::NotFound ? kRefused : kUsage; }

// run and tune: a DEVICE that is not a device name, or no block device, is bad input before
// anything else; nullopt for a name, even one of nothing (the preflight refuses that).
std::optional<int> bad_device_name(const SysRoot& root, const std::string& arg) {
  NameError why = NameError::None;
  if (auto name = parse_device_name(root, arg, &why); !name && why != NameError::NotFound) {
    return fail(name_exit(why), name.error());
  }
  return std::nullopt;
}

// The preflight's refusal, as run and tune say it: the verdict on stderr, then one line.
int refused(const safety::Verdict& v, const std::string& why) {
  std::fputs(cli::verdict_text(v).c_str(), stderr);
  return cli::refuse(v, v.device + " " + why);
}

// The tuning journals' directory; DISKPROBE_JOURNAL moves it (tests that must not meet
// another run's).
std::string journal_dir() {
  const char* env = std::getenv("DISKPROBE_JOURNAL");
  return env && *env ? env : tuning::kDefaultJournalDir;
}

}  // namespace diskprobe::cli
