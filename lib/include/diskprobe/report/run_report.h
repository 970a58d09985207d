// RunReport: the envelope a report carries around what was measured (the engine's Results):
// the spec and device it ran on, the preflight's verdict, the settings changed, the notes, the
// host and the expectations checked against the measurement.
#pragma once

#include <string>
#include <vector>

#include "diskprobe/acceptance/expect.h"
#include "diskprobe/device/environment.h"
#include "diskprobe/spec/job_spec.h"
#include "diskprobe/stats/results.h"

namespace diskprobe {

struct RunReport {
  JobSpec spec;
  std::string device;              // "/dev/loop3"
  std::string preflight;           // "safe" or the verdict summary
  bool preflight_safe = true;      // the verdict behind `preflight`
  std::vector<AppliedSetting> tuning;
  std::vector<std::string> notes;  // the engine's (Results::notes), then the run's
  RunEnvironment environment;
  std::vector<ExpectationResult> expectations;
  Results results;
  int groupid = 0;                 // fio's reporting group (diskprobe fio's stonewalled jobs: 0, 1, ...)
};

// The envelope for what the engine measured running `spec` on `device`; the engine's notes first.
inline RunReport report_of(Results results, JobSpec spec, std::string device) {
  RunReport rep;
  rep.spec = std::move(spec);
  rep.device = std::move(device);
  rep.notes = results.notes;
  rep.results = std::move(results);
  return rep;
}

}  // namespace diskprobe
