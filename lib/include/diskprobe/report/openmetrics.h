// The run's figures in the Prometheus text format, for node_exporter's textfile collector
// (--collector.textfile.directory): a fleet's hosts each leave DIR/diskprobe.prom behind and
// Prometheus scrapes them with everything else it watches.
#pragma once

#include <string>

#include "diskprobe/report/run_report.h"

namespace diskprobe {

// Every sample carries device, model, serial, profile and volume_type labels (volume_type
// from --volume TYPE:ARG, empty without it). No sample timestamps (the textfile collector
// refuses them): the run's start is the gauge diskprobe_run_timestamp_seconds.
std::string render_openmetrics(const RunReport& rep);

}  // namespace diskprobe
