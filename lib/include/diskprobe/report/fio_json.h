// fio 3.x's JSON output (--output-format=json and json+), written from a run's Results so the
// dashboards and scripts that read fio's documents (jobs[].write.iops,
// clat_ns.percentile["99.000000"], disk_util, fio_jsonplus_clat2csv) read diskprobe's too.
// diskprobe's own facts (preflight, tuning, expectations, environment) go under the one extra
// top-level key "diskprobe", which fio's readers ignore.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "diskprobe/report/run_report.h"

namespace diskprobe {

// plus = json+: each clat_ns also carries its "bins" (latency in ns -> I/O count).
nlohmann::json to_fio_json(const RunReport& rep, bool plus);

// Several runs one after the other (accept's phases) as one document, as fio writes a job file
// of stonewalled groups, on one device: run i's jobs under groupid i, disk_util summed over the runs (util
// weighted by the time each run's counters span), "global options" of the first, the timestamp the last one's
// end, and diskprobe's facts of each run under "diskprobe"."runs". `runs` is not empty.
// ByReport: each run's jobs under its own RunReport::groupid instead (diskprobe fio: jobs run at
// once share one group; a run without disk counters adds nothing to disk_util).
enum class FioGroups { ByRun, ByReport };
nlohmann::json to_fio_json(const std::vector<const RunReport*>& runs, bool plus, FioGroups groups = FioGroups::ByRun);

}  // namespace diskprobe
