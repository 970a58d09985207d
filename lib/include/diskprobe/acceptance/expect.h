// Acceptance checks: "iops>=38000", "write.lat.p99<=2ms", "bw>=350MB/s", "errors==0".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "diskprobe/base/status.h"

namespace diskprobe {

struct Results;

enum class Quantity { Iops, Bandwidth, Latency, Errors };
enum class Compare { Ge, Le, Gt, Lt, Eq };

struct Expectation {
  std::string text;    // as written: "write.lat.p99<=2ms"
  std::string metric;  // "write.lat.p99"
  Quantity quantity = Quantity::Iops;
  int direction = -1;     // -1 both, 0 read, 1 write
  std::string latency;    // "lat", "clat" or "slat"
  std::string stat;       // "mean", "min", "max" or "p<percent>"
  double percentile = 0;  // for stat "pNN"
  Compare op = Compare::Ge;
  double threshold = 0;    // IOPS, bytes/s, ns or a count
  std::string origin;      // "--expect", "profile", "--volume essd-pl3:1000GiB"
  double provisioned = 0;  // for --volume: the provider's figure the threshold is a share of
};

struct ExpectationResult {
  Expectation expectation;
  double measured = 0;  // same unit as threshold
  bool met = false;
};

// Strict: the metric, an operator, a number and a unit that fits the metric (IOPS: none, k
// or M; bandwidth: B/s, KiB/s, MiB/s, GiB/s, KB/s, MB/s, GB/s (the "/s" may be left out);
// latency: ns, us, ms or s; errors: a whole number). The error names the bad part.
Result<Expectation> parse_expectation(std::string_view text);

double measure(const Expectation& e, const Results& r);
std::vector<ExpectationResult> check_expectations(const std::vector<Expectation>& expectations,
                                                  const Results& r);

// "38.2k IOPS", "350.0 MiB/s", "1.23 ms", "0 errors"
std::string format_quantity(Quantity q, double value);
std::string_view to_string(Compare c);

}  // namespace diskprobe
