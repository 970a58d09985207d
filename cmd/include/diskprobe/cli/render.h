// Turns module values into what the user reads: text for people, JSON for programs.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "diskprobe/spec/job_spec.h"
#include "diskprobe/profiles/profiles.h"
#include "diskprobe/safety/preflight.h"
#include "diskprobe/tuning/plan.h"
#include "diskprobe/tuning/restore.h"
#include "diskprobe/tuning/topology.h"

namespace diskprobe::cli {

nlohmann::json verdict_json(const safety::Verdict& v);
// JSON mode's document for an outcome without a report: {"exit_code", "error", "verdict"}.
nlohmann::json error_json(int exit_code, const std::string& message, const safety::Verdict* refused);
std::string verdict_text(const safety::Verdict& v);

nlohmann::json device_json(const BlockDevice& d, const safety::Verdict& v);
std::string devices_text(const std::vector<BlockDevice>& devs, const std::vector<safety::Verdict>& verdicts);

std::string spec_text(const JobSpec& s);

nlohmann::json topology_json(const tuning::Topology& t);
nlohmann::json plan_json(const tuning::Plan& p);
std::string tune_text(const tuning::Topology& t, const tuning::Plan& p);
// What `tune --restore` did: one line per setting put back, or gone with its device.
std::string restore_text(const tuning::RestoreReport& r, const std::string& dir);
nlohmann::json restore_json(const tuning::RestoreReport& r);

std::string human_bytes(uint64_t bytes);

}  // namespace diskprobe::cli
