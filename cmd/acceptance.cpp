#include "acceptance.h"

#include <spdlog/spdlog.h>

#include "diskprobe/base/problems.h"
#include "diskprobe/profiles/profiles.h"
#include "diskprobe/profiles/volumes.h"

namespace diskprobe::cli {

Result<std::vector<Expectation>> gather_expectations(const Args& a, const JobSpec& spec) {
  std::vector<Expectation> out;
  std::vector<std::string> problems;
  for (const auto& text : spec.expect) {
    auto e = parse_expectation(text);
    if (!e) {
      problems.push_back("profile " + spec.name + ": " + e.error());
      continue;
    }
    e->origin = "profile " + spec.name;
    out.push_back(std::move(*e));
  }
  for (const auto& text : a.expect) {
    auto e = parse_expectation(text);
    if (!e) {
      problems.push_back(e.error());
      continue;
    }
    out.push_back(std::move(*e));
  }
  auto tolerance = profiles::parse_tolerance(a.tolerance);
  if (!tolerance) problems.push_back(tolerance.error());
  if (!a.volume.empty()) {
    auto catalog = profiles::load_volume_catalog(profiles::search_dirs());
    if (!catalog) return make_error(catalog.error());
    auto v = profiles::volume_performance(a.volume, *catalog);
    if (!v) {
      problems.push_back(v.error());
    } else if (tolerance) {
      auto judged = profiles::volume_expectations(*v, spec, *tolerance);
      std::string texts;
      for (const auto& e : judged) texts += (texts.empty() ? "" : ", ") + e.text;
      spdlog::info("{} ({}): {:.0f} IOPS, {:.1f} MiB/s by {}; expecting {}", a.volume, v->provider, v->iops,
                   v->throughput_bytes_per_s / 1048576.0, v->formula, texts);
      if (v->latency_ms > 0 && judged.front().quantity != Quantity::Latency) {
        spdlog::info(
            "lat_ms is judged on QD 1 workloads only (one job, iodepth 1): this one keeps {} x {} in "
            "flight, where latency is the queue's",
            spec.numjobs, spec.iodepth);
      }
      out.insert(out.end(), judged.begin(), judged.end());
    }
  }
  if (!problems.empty()) return make_error(join(problems));
  return out;
}

}  // namespace diskprobe::cli
