#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <system_error>
#include <thread>

#include "diskprobe/engine/engine.h"
#include "job.h"
#include "pinning.h"

namespace diskprobe {

namespace {

using engine::JobOutput;
using engine::JobPlan;

// plan.chunk_watch: what one I/O per call kept in flight, and what each job did about it.
std::string chunk_watch_note(const JobPlan& plan, const std::vector<JobOutput>& outs) {
  std::string note = "iodepth_batch_submit=auto: " + plan.path +
                     " is a loop device, whose kworker runs each request: random I/O went one I/O per "
                     "io_uring_enter (fio's default), which hands it each request as it is made, while that "
                     "kept the queue at least half full";
  size_t ended = 0, batched = 0;
  double in_flight = 0;
  for (const auto& o : outs) {
    if (!o.chunk_watch.ended) continue;
    ++ended;
    batched += o.chunk_watch.batched;
    in_flight += o.chunk_watch.mean_in_flight;
  }
  if (ended > 0) {
    char mean[32];
    std::snprintf(mean, sizeof mean, "%.1f", in_flight / static_cast<double>(ended));
    note += "; over the first " + std::to_string(engine::kChunkWatchNs / 1'000'000) + " ms it kept a mean " + mean +
            " of " + std::to_string(plan.slots) + " I/Os in flight, ";
    if (batched == 0) {
      note += "the kworker the limit, and stayed so";
    } else {
      note += "the job's own calls the limit, and " + std::to_string(batched) + " of " + std::to_string(ended) +
              (ended == 1 ? " job" : " jobs") + " submitted every free slot at once from then on";
    }
  }
  return note + "; iodepth_batch_submit=0 submits every free slot at once throughout, 1 one I/O per call";
}

std::string iso8601_utc(std::chrono::system_clock::time_point t) {
  std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// fio's do_verify: after every job has finished writing, read back each block written and
// check its header and checksum. Jobs that share a file share one pass over the union of
// what they wrote.
void verify_pass(const JobPlan& plan, std::vector<std::unique_ptr<WrittenBlocks>>& maps,
                 const std::atomic<bool>* stop, Results& r) {
  for (auto& w : maps) {
    auto st = verify_written(*w, plan.spec->direct, plan.run_id, r.verify_pass, stop);
    if (!st) {
      r.verify_pass.add_mismatch(w->first_job, plan.region_start, "the verify pass could not read the target");
      r.notes.push_back(st.error());
    }
  }
  r.verified = true;
}

// One written-blocks map per file the jobs write (one for a device, one per job for
// --directory), set up before the jobs start.
std::vector<std::unique_ptr<WrittenBlocks>> make_written_maps(JobPlan& plan, unsigned jobs) {
  std::vector<std::unique_ptr<WrittenBlocks>> maps;
  if (!plan.track_writes) return maps;
  plan.written.assign(jobs, nullptr);
  for (unsigned j = 0; j < jobs; ++j) {
    const std::string& path = plan.job_paths.empty() ? plan.path : plan.job_paths[j];
    auto it = std::find_if(maps.begin(), maps.end(), [&](const auto& w) { return w->path == path; });
    if (it == maps.end()) {
      maps.push_back(std::make_unique<WrittenBlocks>(path, plan.region_start, plan.bs[1], j, plan.nblocks_dir[1]));
      it = maps.end() - 1;
      (*it)->interval = plan.spec->verify_interval;
    }
    plan.written[j] = it->get();
    (*it)->writers++;
  }
  return maps;
}

// Each job's CPUs. cpus_allowed (the profile's word) wins over the tuning plan's pins: the
// user chose it.
std::vector<std::vector<int>> job_cpus(const JobSpec& spec, const std::vector<int>& pins) {
  const unsigned n = spec.numjobs;
  std::vector<std::vector<int>> cpu_sets(n);
  for (unsigned j = 0; j < n; ++j) {
    const auto& allowed = spec.cpus_allowed;
    if (!allowed.empty()) {
      cpu_sets[j] = spec.cpus_allowed_split ? std::vector<int>{allowed[j % allowed.size()]} : allowed;
    } else if (j < pins.size() && pins[j] >= 0) {
      cpu_sets[j] = {pins[j]};
    }
  }
  return cpu_sets;
}

// One member of the run, planned: its jobs' outputs (pointing into `results`), CPUs and the
// map of blocks its writes went to.
struct Planned {
  JobPlan plan;
  Results results;
  std::vector<JobOutput> outs;
  std::vector<std::vector<int>> cpu_sets;
  std::vector<std::unique_ptr<WrittenBlocks>> written_maps;
  std::unique_ptr<engine::JobsDone> done;  // counts this member's jobs down as they end
  std::atomic<bool> terminate{false};       // another job's exitall ended this member's jobs
  std::atomic<bool> ended_all{false};       // (the first member's) an exit_what=all ended the run
};

// fio's exitall: the job of `m` that ended ends the members its exit_what names.
void exit_all(std::vector<std::unique_ptr<Planned>>& all, const Planned& m) {
  const JobSpec::ExitAll& e = m.plan.spec->exitall;
  for (auto& o : all) {
    if (e.what == JobSpec::ExitWhat::Group && o->plan.spec->exitall.group != e.group) continue;
    o->terminate.store(true, std::memory_order_relaxed);
  }
  if (e.what == JobSpec::ExitWhat::All) all.front()->ended_all.store(true, std::memory_order_relaxed);
}

// Starts every job of every member, lets them go together, waits for them all (watching for
// steadystate when asked: `watch` is then set, for a run of one member). "" or why a thread
// could not be started (then the others were stopped at the gate).
std::string run_threads(std::vector<std::unique_ptr<Planned>>& all, const EngineOptions& opts,
                        engine::SteadyWatch* watch, std::chrono::system_clock::time_point* started_at) {
  unsigned n = 0;
  for (const auto& m : all) n += static_cast<unsigned>(m->outs.size());
  engine::StartGate gate(n);
  engine::JobsDone done(n);
  std::vector<std::thread> threads;
  threads.reserve(n);
  std::string spawn_error;
  try {
    engine::JobStackSize stack_size;
    for (auto& mp : all) {
      Planned& m = *mp;
      for (unsigned j = 0; j < m.outs.size(); ++j) {
        threads.emplace_back([&m, &all, &gate, &done, &opts, j] {
          engine::job_main(m.plan, j, m.cpu_sets[j], gate, opts.stop, m.outs[j]);
          if (m.plan.spec->exitall.on) exit_all(all, m);
          m.done->one_done();
          done.one_done();
        });
      }
    }
  } catch (const std::system_error& e) {
    spawn_error =
        "cannot start job thread " + std::to_string(threads.size()) + ": " + e.what() + ": lower numjobs";
  }
  // After diskprobe's own reads (see EngineOptions::settle_ns); the jobs are ready, so
  // nothing but the pause stands between it and the first I/O.
  if (opts.settle_ns) std::this_thread::sleep_for(std::chrono::nanoseconds(opts.settle_ns));
  bool started = gate.release(static_cast<unsigned>(threads.size()));
  *started_at = std::chrono::system_clock::now();
  if (watch && started) {
    const JobPlan& plan = all.front()->plan;
    all.front()->results.steadystate = watch->watch(gate.start_ns() + plan.ramp_ns, plan.runtime_ns, done);
  }
  for (auto& t : threads) t.join();
  return spawn_error;
}

// The first job's error, with how many more failed; "" when none did.
std::string jobs_error(const std::vector<JobOutput>& outs) {
  const size_t n = outs.size();
  std::string error;
  unsigned failed = 0;
  for (size_t j = 0; j < n; ++j) {
    if (outs[j].error.empty()) continue;
    if (failed++ == 0) error = n > 1 ? "job " + std::to_string(j) + ": " + outs[j].error : outs[j].error;
  }
  if (failed > 1) error += " (and " + std::to_string(failed - 1) + " more jobs failed)";
  return error;
}

// The jobs' CPU time, runtime and stop into the run's totals; what the engine fell back
// from or probed into its notes, once for the run, not once per job.
void merge_jobs(const JobPlan& plan, const std::vector<JobOutput>& outs, Results& r) {
  std::string fallback;
  std::vector<engine::AsyncProbe> probes;
  for (const auto& o : outs) {
    r.cpu.user_s += o.cpu.user_s;
    r.cpu.sys_s += o.cpu.sys_s;
    r.cpu.voluntary_ctx += o.cpu.voluntary_ctx;
    r.cpu.involuntary_ctx += o.cpu.involuntary_ctx;
    r.runtime_s = std::max(r.runtime_s, o.result->runtime_s);
    r.interrupted = r.interrupted || o.stopped;
    if (fallback.empty()) fallback = o.fallback;
    probes.push_back(o.probe);
  }
  if (!fallback.empty()) {
    r.notes.push_back("io_uring registration refused (" + fallback + "): plain reads and writes were used");
  }
  if (plan.probe_async) {
    if (std::string note = engine::probe_note(plan.path, probes); !note.empty()) r.notes.push_back(note);
  }
  if (plan.chunk_watch) r.notes.push_back(chunk_watch_note(plan, outs));
  for (const auto& o : outs) {
    if (o.feature_note.empty()) continue;
    r.notes.push_back(o.feature_note);
    break;
  }
}

uint64_t random_run_id() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) | rd();
}


// Validates and plans one member; its jobs are the run's first_job, first_job + 1, ...
Result<std::unique_ptr<Planned>> plan_member(const GroupMember& m, const EngineOptions& opts, unsigned first_job) {
  const JobSpec& spec = *m.spec;
  const Target& target = *m.target;
  // A caller that validated this spec on this target says so (the run module: once per run).
  if (!opts.spec_validated) {
    if (auto st = validate(spec, target); !st) return make_error(st.error());
  }
  auto p = std::make_unique<Planned>();
  p->plan = engine::plan_jobs(spec, target, m.region ? *m.region : resolve_region(spec, target));
  p->plan.first_job = first_job;
  const unsigned n = spec.numjobs;
  if (!target.job_paths.empty() && target.job_paths.size() < n) {
    return make_error("internal: " + std::to_string(target.job_paths.size()) + " job files for " +
                      std::to_string(n) + " jobs");
  }
  // Each job writes its statistics straight into its own JobResult: no copy afterwards, which
  // matters with thousands of jobs of ~110 KB of histograms each.
  p->results.jobs.resize(n);
  p->outs.resize(n);
  for (unsigned j = 0; j < n; ++j) p->outs[j].result = &p->results.jobs[j];
  p->cpu_sets = job_cpus(spec, m.cpus);
  p->done = std::make_unique<engine::JobsDone>(n);
  try {
    p->written_maps = make_written_maps(p->plan, n);
  } catch (const std::bad_alloc&) {
    return make_error("verify: no memory for the map of written blocks (" +
                      std::to_string(p->plan.nblocks_dir[1] / 8) + " bytes): lower size or set do_verify=0");
  }
  return p;
}

// What a member's jobs did, into its Results: errors, totals, notes, the verify pass.
Status finish_member(Planned& m, const EngineOptions& opts, std::chrono::system_clock::time_point started_at) {
  if (std::string e = jobs_error(m.outs); !e.empty()) return make_error(e);
  Results& r = m.results;
  r.started_at = iso8601_utc(started_at);
  merge_jobs(m.plan, m.outs, r);
  r.verified = m.plan.verify_reads || m.plan.backlog;
  if (m.plan.track_writes && !r.interrupted) {
    if (opts.before_verify) opts.before_verify();
    verify_pass(m.plan, m.written_maps, opts.stop, r);
  }
  r.aggregate();
  return Ok{};
}

}  // namespace

Result<std::vector<Results>> run_group(const std::vector<GroupMember>& members, const EngineOptions& opts) {
  if (members.empty()) return make_error("internal: a run of no jobs");
  std::vector<std::unique_ptr<Planned>> all;
  unsigned first_job = 0;
  for (const auto& m : members) {
    auto p = plan_member(m, opts, first_job);
    if (!p) return make_error(p.error());
    if (m.wait_for >= 0) {
      if (static_cast<size_t>(m.wait_for) >= all.size()) {
        return make_error("internal: job '" + m.spec->name + "' waits for a job that does not start before it");
      }
      (*p)->plan.wait_for = all[static_cast<size_t>(m.wait_for)]->done.get();
    }
    first_job += m.spec->numjobs;
    all.push_back(std::move(*p));
  }
  for (auto& m : all) m->plan.group_jobs = first_job;  // fio's thread_number: every job started together
  // fio's flow: one group per flow_id over the members run at once, every clone's weight in it.
  std::map<uint32_t, std::unique_ptr<engine::FlowGroup>> flows;
  for (auto& m : all) {
    const JobSpec& s = *m->plan.spec;
    if (s.flow == 0) continue;
    auto& g = flows[s.flow_id];
    if (!g) g = std::make_unique<engine::FlowGroup>();
    g->total_weight += int64_t{s.flow} * s.numjobs;
    m->plan.flow = g.get();
    m->plan.flow_weight = s.flow;
    m->plan.flow_sleep_ns = s.flow_sleep_us * 1000;
  }
  const bool exits = std::any_of(all.begin(), all.end(), [](const auto& m) { return m->plan.spec->exitall.on; });
  if (exits) {
    for (auto& m : all) m->plan.terminate = &m->terminate;
  }
  const uint64_t run_id = opts.run_id ? opts.run_id : random_run_id();
  for (auto& m : all) m->plan.run_id = run_id;
  std::unique_ptr<engine::SteadyWatch> watch;
  if (all.front()->plan.steady) {
    if (all.size() > 1) return make_error("steadystate over jobs that differ, run at once, is not implemented");
    Planned& m = *all.front();
    const auto n = static_cast<unsigned>(m.outs.size());
    watch = std::make_unique<engine::SteadyWatch>(m.plan.spec->steadystate, n);
    for (unsigned j = 0; j < n; ++j) {
      m.outs[j].totals = watch->totals(j);
      m.outs[j].steady_stop = watch->stop_second();
    }
  }
  std::chrono::system_clock::time_point started_at;
  if (std::string e = run_threads(all, opts, watch.get(), &started_at); !e.empty()) return make_error(e);
  std::vector<Results> out;
  out.reserve(all.size());
  for (size_t k = 0; k < all.size(); ++k) {
    if (auto st = finish_member(*all[k], opts, started_at); !st) {
      return make_error(all.size() > 1 ? "job '" + all[k]->plan.spec->name + "': " + st.error() : st.error());
    }
    all[k]->results.exit_all = all.front()->ended_all.load(std::memory_order_relaxed);
    out.push_back(std::move(all[k]->results));
  }
  return out;
}

Result<Results> run_jobs(const JobSpec& spec, const Target& target, const EngineOptions& opts) {
  auto r = run_group({GroupMember{&spec, &target, opts.region, opts.cpus}}, opts);
  if (!r) return make_error(r.error());
  return std::move(r->front());
}

}  // namespace diskprobe
