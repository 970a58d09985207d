// The one check of a JobSpec against its target, before anything touches either: every
// problem in one message. run_jobs runs it unless told (EngineOptions::spec_validated) that the
// caller did, on the same spec and target.
#pragma once

#include <cstdint>

#include "diskprobe/base/status.h"
#include "diskprobe/spec/job_spec.h"
#include "diskprobe/spec/target.h"

namespace diskprobe {

inline constexpr uint64_t kMaxIodepth = 65536;
inline constexpr uint64_t kMaxNumjobs = 4096;
// A day: beyond it the nanosecond deadlines still fit, but the per-second samples kept for
// every job (16 bytes a second) would not be a benchmark's memory any more.
inline constexpr double kMaxSeconds = 86400;
// The engine counts time in whole nanoseconds, and 0 ns means "no limit": a runtime of
// 1e-10 s ran forever. A duration above 0 is at least the parser's smallest unit, 1 us.
inline constexpr double kMinSeconds = 1e-6;

// Checks spec against the target (bs and offset alignment for O_DIRECT, region inside the
// target, iodepth 1..kMaxIodepth, numjobs 1..kMaxNumjobs, runtime for time_based runs, rate
// caps, steadystate's window against the runtime, rwmixread); every problem in one message.
Status validate(const JobSpec& spec, const Target& target);
// The checks of validate() that need no target (durations, rates, steadystate, the engine's
// options, rwmixread, bs below 512): run before the preflight, a scratch device or job files,
// so that bad input is refused before anything is made or changed.
Status validate_spec(const JobSpec& spec);

}  // namespace diskprobe
