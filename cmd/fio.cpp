// `diskprobe fio ARGS...`: the user's own fio command line or job files, read as fio reads them
// (profiles/fio_jobs.h), from fio's defaults (profiles/fio_spec.h), with the target through the
// preflight and the host restored, as `run` does. What is not implemented is refused by name
// before anything is read or written (exit 2).
#include <sys/stat.h>

#include <algorithm>
#include <deque>

#include <spdlog/spdlog.h>

#include "commands.h"
#include "diskprobe/base/json_io.h"
#include "diskprobe/device/block_device.h"
#include "diskprobe/profiles/fio_jobs.h"
#include "diskprobe/profiles/fio_spec.h"
#include "diskprobe/base/write_out.h"
#include "diskprobe/report/fio_json.h"
#include "diskprobe/report/fio_logs.h"
#include "diskprobe/report/report.h"
#include "diskprobe/run/run.h"
#include "diskprobe/spec/host_checks.h"
#include "out.h"
#include "run_steps.h"

namespace diskprobe::cli {

namespace {

namespace fio = profiles::fio;

constexpr const char* kFioUsage = R"(usage: diskprobe fio [FIO FLAGS] [JOB OPTIONS] [JOBFILE...]

Runs a fio command line or job file as fio 3.33 does, from fio's defaults, with the target
through diskprobe's preflight first (a device holding data is refused, exit 3, nothing
written). Put `diskprobe` before the fio command you have:

  diskprobe fio --name=randread --filename=/dev/vdc --rw=randread --bs=4k --iodepth=32 \
      --ioengine=libaio --direct=1 --runtime=60 --time_based
  diskprobe fio --output-format=json jobs.fio

fio's syntax: --opt=val, -opt=val, --opt val; options before the first --name are global; each
--name starts a job; job files with [global] and job sections, ; and # comments, include,
${VAR}, $ncpus, $mb_memory, $pagesize and (arithmetic). fio's flags taken: --output FILE,
--output-format normal|json|json+, --parse-only, --section NAME, --readonly, --eta, --help,
--version. An option diskprobe does not implement is refused by name with its job (exit 2).
Jobs run as fio groups them: those between two stonewalls at the same time, behind one start
(startdelay holds a job back), the groups one after another, all on one device.
)";

struct Flags {
  OutputFormat format = OutputFormat::Text;  // fio's normal
  std::string output;
  bool parse_only = false, readonly = false, help = false, version = false;
};

Result<Flags> read_flags(const std::vector<fio::Flag>& flags) {
  Flags f;
  for (const auto& fl : flags) {
    const std::string& v = fl.value;
    if (fl.name == "output_format") {
      if (v == "normal") {
        f.format = OutputFormat::Text;
      } else if (v == "json") {
        f.format = OutputFormat::FioJson;
      } else if (v == "json+") {
        f.format = OutputFormat::FioJsonPlus;
      } else {
        return make_error("--output-format=" + excerpt(v) + ": diskprobe fio writes normal, json or json+ (fio's " +
                          "terse and several formats at once are not implemented)");
      }
    } else if (fl.name == "output") {
      f.output = v;
    } else if (fl.name == "parse_only") {
      f.parse_only = true;
    } else if (fl.name == "readonly") {
      f.readonly = true;
    } else if (fl.name == "help") {
      f.help = true;
    } else if (fl.name == "version") {
      f.version = true;
    } else if (fl.name == "section") {
      // the reader kept only those jobs
    } else if (fl.name == "eta" || fl.name == "eta_newline" || fl.name == "eta_interval") {
      // fio's progress line; diskprobe prints its own progress: nothing measured changes
    } else {
      return make_error("fio's --" + fl.name + " (" + fl.where + ") is not implemented by diskprobe fio: drop it");
    }
  }
  return f;
}

std::string unsupported_text(const std::vector<fio::Unsupported>& all) {
  std::string t = std::to_string(all.size()) + (all.size() == 1 ? " option is" : " options are") +
                  " not implemented by diskprobe fio, so the run would not be the job written: ";
  for (size_t i = 0; i < all.size(); ++i) {
    const auto& u = all[i];
    t += (i ? "; " : "") + excerpt(u.option) + " in job '" + excerpt(u.job) + "' (" + u.where + ")" +
         (u.why.empty() ? "" : ": " + u.why);
  }
  return t;
}

// fio's phases: a job with stonewall (or the first of a second job file) waits for every job
// before it; the jobs between two such are run at the same time.
std::vector<std::vector<size_t>> phases_of(const fio::Jobs& jobs) {
  std::vector<std::vector<size_t>> phases;
  for (size_t i = 0; i < jobs.jobs.size(); ++i) {
    if (phases.empty() || jobs.jobs[i].stonewall) phases.emplace_back();
    phases.back().push_back(i);
  }
  return phases;
}

std::string target_of(const fio::FioJob& j) {
  return j.filenames.empty() ? "directory " + j.spec.directory : j.filenames.front();
}

// fio's do_verify on a size-bounded writing job (a time-based one's writes use all its runtime,
// and fio reads nothing back): after its writes, each block read back and checked, those reads
// the job's own (their count, bytes and latencies in its read figures).
bool verifies_after(const JobSpec& s) {
  // verify_backlog reads each batch back as it goes (engine), nothing is left for after.
  return s.verify != VerifyKind::None && s.do_verify && does_writes(s.rw) && !s.time_based && s.verify_backlog == 0;
}

// A job its runtime or another job's exitall ended before its size was done (fio's terminate).
bool cut_short(const Results& r) {
  return std::any_of(r.jobs.begin(), r.jobs.end(), [](const JobResult& j) { return j.terminated; });
}

// The read-back as a job of its own: the writer's region read in order at its write size and
// depth, each block's header and checksum checked; caps on reads kept, none on writes.
JobSpec readback_of(const JobSpec& w) {
  JobSpec r = w;
  r.rw = RwMode::Read;
  r.bs = w.write_bs();
  r.bs_write = 0;
  r.verify = VerifyKind::Crc32c;
  r.runtime_s = 0;
  r.time_based = false;
  r.loops = 1;
  r.io_size = 0;
  r.number_ios = 0;
  r.startdelay_s = 0;
  r.ramp_time_s = 0;
  r.wait_for.clear();
  r.rate_iops[1] = r.rate_bytes[1] = 0;
  r.steadystate = {};
  return r;
}

// What diskprobe fio runs today: groups of jobs one after another, the jobs of each at the same
// time, all on one device (or one job on files). Anything else is refused by name, before any
// device is read.
std::optional<std::string> beyond_what_runs(const fio::Jobs& jobs) {
  for (const auto& phase : phases_of(jobs)) {
    if (phase.size() < 2) continue;
    for (size_t k : phase) {
      const fio::FioJob& j = jobs.jobs[k];
      if (j.spec.steadystate.enabled()) {
        return "job '" + excerpt(j.name) + "': steadystate in a job run at the same time as other jobs is not "
               "implemented: put stonewall before it, or run it on its own (--section NAME)";
      }
    }
  }
  for (const auto& phase : phases_of(jobs)) {
    for (size_t k : phase) {
      const fio::FioJob& j = jobs.jobs[k];
      if (!verifies_after(j.spec)) continue;
      // The read-back runs as fio's: after the job's writes, as the job's own reads.
      std::string why;
      if (phase.size() > 1) why = "run at the same time as other jobs (put stonewall before and after it)";
      if (j.spec.numjobs > 1) why = "with numjobs=" + std::to_string(j.spec.numjobs) + " (clones overwriting each other's blocks)";
      if (is_random(j.spec.rw) && j.spec.norandommap) why = "with norandommap (blocks written twice or never)";
      if (!why.empty()) {
        return "job '" + excerpt(j.name) + "': verify=crc32c on a writing job " + why + " is not implemented; " +
               "do_verify=0 writes the checked blocks without the read-back";
      }
    }
  }
  for (const auto& j : jobs.jobs) {
    if (j.filenames.size() > 1 && std::all_of(j.filenames.begin(), j.filenames.end(),
                                              [&](const std::string& f) { return f == j.filenames.front(); })) {
      return "job '" + excerpt(j.name) + "': filename names " + excerpt(j.filenames.front()) + " " +
             std::to_string(j.filenames.size()) + " times (in [global] and in the job, or twice): fio runs it as " +
             "that many files, the device that many times over, which is not implemented; give filename once";
    }
    if (j.filenames.size() > 1) {
      return "job '" + excerpt(j.name) + "': filename names " + std::to_string(j.filenames.size()) +
             " files: several files in one job are not implemented";
    }
  }
  if (jobs.jobs.size() > 1) {
    const auto& first = jobs.jobs.front();
    for (const auto& j : jobs.jobs) {
      if (target_of(j) != target_of(first)) {
        return "jobs '" + excerpt(first.name) + "' and '" + excerpt(j.name) + "' run on different targets (" +
               excerpt(target_of(first)) + ", " + excerpt(target_of(j)) + "): not implemented; run each on its own (--section NAME)";
      }
    }
    if (first.filenames.empty()) {
      return "several jobs on files in a directory are not implemented (on a device they are): run each on its own "
             "(--section NAME)";
    }
  }
  return std::nullopt;
}

// fio's per-I/O logs of every job that asks for them, numbered as fio numbers its jobs (each
// clone of each job in order, from 1), written where fio writes them (the prefix's path).
Status write_logs(const std::vector<RunReport*>& reports) {
  unsigned number = 1;
  for (const RunReport* r : reports) {
    const JobSpec& s = r->spec;
    for (const JobResult& job : r->results.jobs) {
      if (s.logs.any()) {
        for (const auto& f : fio_log_files(s.logs, s.engine == EngineKind::Sync, job, number)) {
          if (auto st = write_file(f.path, f.text); !st) return make_error("job '" + excerpt(s.name) + "': " + st.error());
          spdlog::info("job {}: wrote {} ({} I/Os)", s.name, f.path, job.samples.size());
        }
      }
      ++number;
    }
  }
  return Ok{};
}

// Several jobs on one device: one preflight (write mode when any job writes), one claim; each
// group of jobs between two stonewalls a phase, its jobs at the same time; one report of them
// all, as fio writes it, each job under its own groupid.
int run_jobs_on_device(const Args& a, fio::Jobs& jobs, OutputFormat format, const SysRoot& root) {
  for (const auto& j : jobs.jobs) {
    if (auto st = validate_on_host(j.spec, root); !st) return fail(kUsage, "job '" + excerpt(j.name) + "': " + st.error());
  }
  const JobSpec* mode_spec = &jobs.jobs.front().spec;  // the preflight's mode is the request spec's
  for (const auto& j : jobs.jobs) {
    if (does_writes(j.spec.rw)) {
      mode_spec = &j.spec;
      break;
    }
  }
  auto outputs = CliOutputs::open(a, root, *mode_spec, format);
  if (!outputs) return fail(kUsage, outputs.error());
  // Each group a step, and a writer's read-back (verifies_after) a step of its own after it.
  struct Step {
    std::vector<size_t> members;
    bool readback = false;
  };
  std::vector<Step> phases;
  for (auto& members : phases_of(jobs)) {
    const bool back = members.size() == 1 && verifies_after(jobs.jobs[members[0]].spec);
    phases.push_back({members, false});
    if (back) phases.push_back({members, true});
  }
  auto next = [&](const std::vector<run::PhaseReport>& done) -> std::optional<run::Phase> {
    if (done.size() < phases.size() && phases[done.size()].readback && cut_short(done.back().report.results)) {
      // fio's do_verify ends at once for a job its runtime (or an exitall) terminated: nothing of
      // it is read back. Reading its whole region instead met the blocks the cut left unwritten.
      spdlog::info("job {}: its runtime (or an exitall) ended it before its writes were done: nothing read back, as fio's",
                   jobs.jobs[phases[done.size()].members.front()].name);
      phases.erase(phases.begin() + static_cast<std::ptrdiff_t>(done.size()));
    }
    if (done.size() == phases.size()) return std::nullopt;
    if (!done.empty() && done.back().report.results.exit_all) {
      spdlog::info("a job's exitall (exit_what=all) ended the run: the {} group(s) after it do not run, as fio's",
                   phases.size() - done.size());
      return std::nullopt;
    }
    const auto& members = phases[done.size()].members;
    const fio::FioJob& j = jobs.jobs[members.front()];
    if (phases[done.size()].readback) {
      spdlog::info("job {}: reading back and checking what it wrote (fio's verify)", j.name);
      return run::Phase{j.name, readback_of(j.spec), {}, {}};
    }
    std::string names;
    for (size_t k : members) names += (names.empty() ? "" : ", ") + jobs.jobs[k].name;
    spdlog::info("{} {}/{}: {}{}", members.size() > 1 ? "jobs at once" : "job", done.size() + 1, phases.size(), names,
                 members.size() > 1 ? "" : " (groupid " + std::to_string(j.groupid) + ")");
    run::Phase phase{j.name, j.spec, {}, {}};
    if (verifies_after(j.spec)) phase.spec.do_verify = false;  // the next step reads it back
    for (size_t k = 1; k < members.size(); ++k) phase.also.push_back(jobs.jobs[members[k]].spec);
    return phase;
  };
  DeferredOutputs deferred;
  SystemSteps system(root, preflight_options(a, /*hold=*/true), journal_dir());
  auto ended = run::run_phases(run_request(a, *mode_spec, {}), system.with(deferred), next);
  const auto& end = ended.end;
  if (end.why == run::Outcome::Refused || end.why == run::Outcome::BadInput || ended.phases.empty()) {
    return render_end(end);
  }
  std::vector<RunReport*> ran;  // every job's report, in fio's job order
  for (size_t i = 0; i < ended.phases.size(); ++i) {
    auto& ph = ended.phases[i];
    const auto& members = phases[i].members;
    if (phases[i].readback) {
      // The writer's report (the step before) takes the read-back's reads as its own, as fio's.
      fold_readback(ended.phases[i - 1].report, ph.report);
      continue;
    }
    ph.report.groupid = jobs.jobs[members[0]].groupid;
    ran.push_back(&ph.report);
    for (size_t k = 0; k < ph.also.size(); ++k) {
      ph.also[k].groupid = jobs.jobs[members[k + 1]].groupid;
      ran.push_back(&ph.also[k]);
    }
  }
  // fio reports the jobs an exitall (exit_what=all) kept from starting, each with nothing done.
  std::deque<RunReport> never_ran;
  if (!ended.phases.empty() && ended.phases.back().report.results.exit_all) {
    for (size_t i = ended.phases.size(); i < phases.size(); ++i) {
      if (phases[i].readback) continue;
      for (size_t k : phases[i].members) {
        RunReport& r = never_ran.emplace_back();
        r.spec = jobs.jobs[k].spec;
        r.device = ended.phases.back().report.device;
        r.results.jobs.resize(r.spec.numjobs);
        r.groupid = jobs.jobs[k].groupid;
        ran.push_back(&r);
      }
    }
  }
  if (auto st = write_logs(ran); !st) return fail(kRuntime, st.error());
  const std::vector<const RunReport*> reports = fio_entries(ran);
  const std::string text = render_fio_text(reports);
  std::string formatted = text;
  if (format == OutputFormat::FioJson || format == OutputFormat::FioJsonPlus) {
    formatted = to_fio_json(reports, format == OutputFormat::FioJsonPlus, FioGroups::ByReport).dump(2) + "\n";
  }
  if (auto st = outputs->write(formatted, text, ""); !st) return fail(kRuntime, st.error());
  return render_end(end);
}

// fio on a block device reads and writes to its end at most: a size (or filesize) past it is
// the rest of the device from offset, as fio takes it (said in the log). A name that is no block
// device here is left to the preflight, which says what it is.
void clamp_to_devices(fio::Jobs& jobs, const SysRoot& root) {
  for (auto& j : jobs.jobs) {
    if (j.filenames.size() != 1 || j.spec.size == 0 || j.spec.size_percent > 0) continue;
    auto name = parse_device_name(root, j.filenames.front());
    if (!name) continue;
    auto dev = read_block_device(root, *name);
    if (!dev || dev->size_bytes == 0 || j.spec.offset >= dev->size_bytes) continue;
    const uint64_t rest = dev->size_bytes - j.spec.offset;
    if (j.spec.size <= rest) continue;
    spdlog::info("job {}: size {} is past the end of {} ({} bytes from offset {}): the job does the rest of the "
                 "device, as fio does", j.name, j.spec.size, j.filenames.front(), rest, j.spec.offset);
    j.spec.size = rest;
  }
}

std::string parse_only_text(const fio::Jobs& jobs) {
  std::string t;
  for (const auto& j : jobs.jobs) {
    const JobSpec& s = j.spec;
    t += j.name + ": (g=" + std::to_string(j.groupid) + "): rw=" + std::string(to_string(s.rw)) +
         ", bs=" + std::to_string(s.bs) + (s.bs_write ? "," + std::to_string(s.bs_write) : "") +
         ", ioengine=" + (s.engine == EngineKind::Sync ? "psync" : "io_uring") + ", iodepth=" + std::to_string(s.iodepth) +
         ", numjobs=" + std::to_string(s.numjobs) + ", direct=" + (s.direct ? "1" : "0") + ", target=" +
         (j.filenames.empty() ? s.directory + "/" + j.name + ".N.0" : j.filenames.front()) + "\n";
  }
  return t;
}

}  // namespace

int cmd_fio(const std::vector<std::string>& words, const SysRoot& root) {
  auto in = fio::read_command_line(words, fio::Environment::of_this_host());
  if (!in) return fail(kUsage, in.error());
  auto flags = read_flags(in->flags);
  if (!flags) return fail(kUsage, flags.error());
  if (flags->help) return print(kFioUsage), kOk;
  if (flags->version) return cmd_version();
  if (in->jobs.empty()) {
    return fail(kUsage, "no job given: diskprobe fio takes fio's --name=JOB options or a job file (diskprobe fio --help)");
  }
  for (const auto& n : in->notes) spdlog::info("{}", n);
  auto jobs = fio::to_jobs(*in);
  if (!jobs.errors.empty()) {
    std::string all;
    for (const auto& e : jobs.errors) all += (all.empty() ? "" : "; ") + e;
    return fail(kUsage, all);
  }
  if (!jobs.unsupported.empty()) return fail(kUsage, unsupported_text(jobs.unsupported));
  if (flags->readonly) {
    for (const auto& j : jobs.jobs) {
      if (does_writes(j.spec.rw)) {
        return fail(kUsage, "job '" + excerpt(j.name) + "' writes (rw=" + std::string(to_string(j.spec.rw)) +
                                ") and --readonly forbids writes, as fio says it");
      }
    }
  }
  if (auto why = beyond_what_runs(jobs)) return fail(kUsage, *why);
  // fio parses NUMA nodes against the host too (numa_parse_nodestring): a node it lacks is an error.
  for (auto& j : jobs.jobs) {
    std::string said;
    if (auto st = resolve_numa(j.spec, root, &said); !st) return fail(kUsage, "job '" + excerpt(j.name) + "': " + st.error());
    if (!said.empty()) jobs.notes.push_back("job '" + j.name + "': " + said);
  }
  if (flags->parse_only) return print(parse_only_text(jobs)), kOk;
  clamp_to_devices(jobs, root);
  for (const auto& j : jobs.jobs) {
    struct stat st {};
    if (j.fill_device && (j.filenames.size() != 1 || ::stat(j.filenames.front().c_str(), &st) != 0 || !S_ISBLK(st.st_mode))) {
      return fail(kUsage, "job '" + excerpt(j.name) + "': fill_device=1 on a file (filling its filesystem until it is "
                          "full) is not implemented: give a block device, or size=");
    }
  }

  for (const auto& n : jobs.notes) spdlog::info("{}", n);
  fio::FioJob& job = jobs.jobs.front();
  Args a;
  a.command = "run";
  a.output_file = flags->output;
  if (!job.filenames.empty()) a.positional.push_back(job.filenames.front());
  a.notes = jobs.notes;
  a.notes.insert(a.notes.end(), in->notes.begin(), in->notes.end());
  if (jobs.jobs.size() > 1 || verifies_after(job.spec) || job.spec.logs.any()) return run_jobs_on_device(a, jobs, flags->format, root);
  return run_spec(a, std::move(job.spec), flags->format, root);
}

}  // namespace diskprobe::cli
