// The run's figures in the Prometheus text format, for node_exporter's textfile collector
// (--collector.textfile.directory): a fleet's hosts each leave DIR/diskprobe.prom behind and
// Prometheus scrapes them with everything else it watches.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "diskprobe/report/run_report.h"

namespace diskprobe {

// Every sample carries device, model, serial, profile and volume_type labels (volume_type
// from --volume TYPE:ARG, empty without it). No sample timestamps (the textfile collector
// refuses them): the run's start is the gauge diskprobe_run_timestamp_seconds.
std::string render_openmetrics(const RunReport& rep);

// Several runs in one file (accept's phases): each family once, with every run's samples under
// it, each run's own labels plus `labels` to tell them apart ({"phase", "random write IOPS"}).
using MetricLabels = std::vector<std::pair<std::string, std::string>>;
struct LabelledRun {
  const RunReport* report;
  MetricLabels labels;
};
std::string render_openmetrics(const std::vector<LabelledRun>& runs);

// One gauge family more, in the same format, for what a caller adds (accept's verdicts).
struct GaugeSample {
  MetricLabels labels;
  double value = 0;
};
std::string render_gauge(const char* name, const char* help, const std::vector<GaugeSample>& samples);

}  // namespace diskprobe
