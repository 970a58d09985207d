#include "async_probe.h"

namespace diskprobe::engine {

uint32_t AsyncProbeRun::step(uint64_t t, uint64_t reaped) {
  uint64_t n = reaped - mark_;
  mark_ = reaped;
  end_ = t + kProbeNs;
  switch (phase_++) {
    case 0:  // warmed up: measure marked
      return 1;
    case 1:
      result_.ios_async = n;
      return 0;
    default:
      result_.ios_plain = n;
      result_.kept = static_cast<double>(result_.ios_async) > kProbeMargin * static_cast<double>(result_.ios_plain);
      phase_ = -1;
      return result_.kept ? 1 : 0;
  }
}

std::string probe_note(const std::string& path, const std::vector<AsyncProbe>& probes) {
  if (probes.empty() || !probes[0].ran) return "";
  const AsyncProbe& p = probes[0];
  size_t kept = 0;
  for (const auto& o : probes) kept += o.kept ? 1 : 0;
  auto iops = [](uint64_t n) { return std::to_string(static_cast<uint64_t>(static_cast<double>(n) * 1e9 / kProbeNs)); };
  std::string n = "force_async=auto: " + path +
                  " is bio-based, so io_uring runs its I/O in io-wq workers; probed before the measured part: " +
                  iops(p.ios_async) + " IOPS with IOSQE_ASYNC, " + iops(p.ios_plain) + " without: ";
  if (kept == probes.size()) return n + "kept IOSQE_ASYNC (force_async=1)";
  if (kept == 0) return n + "ran without it (force_async=0)";
  return n + "IOSQE_ASYNC kept by " + std::to_string(kept) + " of " + std::to_string(probes.size()) + " jobs";
}

}  // namespace diskprobe::engine
