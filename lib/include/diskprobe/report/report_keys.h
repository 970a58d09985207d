#pragma once
// The JSON run report's keys that other code reads back (compare, aggregate: run_summary.cpp),
// named once so the writer (report.cpp) and the reader cannot drift apart.
namespace diskprobe::report_key {

inline constexpr const char* kSchema = "schema_version";
inline constexpr const char* kJob = "job";
inline constexpr const char* kDevice = "device";
inline constexpr const char* kStartedAt = "started_at";
inline constexpr const char* kRuntime = "runtime_s";
inline constexpr const char* kInterrupted = "interrupted";
inline constexpr const char* kRead = "read";
inline constexpr const char* kWrite = "write";
inline constexpr const char* kPreflight = "preflight";
inline constexpr const char* kExpectations = "expectations";
// In a direction.
inline constexpr const char* kIos = "ios";
inline constexpr const char* kIops = "iops";
inline constexpr const char* kBw = "bw_bytes_per_s";
inline constexpr const char* kClat = "clat_ns";  // the histogram compare reads: completion latency
// In a histogram.
inline constexpr const char* kMean = "mean";
inline constexpr const char* kPercentiles = "percentiles";
// In an expectation.
inline constexpr const char* kExpression = "expression";
inline constexpr const char* kMet = "met";

// fio's "IO depths" buckets (DepthStats), as its JSON keys and text lines name them.
inline constexpr const char* kIodepthLevels[] = {"1", "2", "4", "8", "16", "32", ">=64"};
inline constexpr const char* kIodepthBatches[] = {"0", "4", "8", "16", "32", "64", ">=64"};

}  // namespace diskprobe::report_key
