#include "diskprobe/stats/results.h"

#include <algorithm>
#include <string>

namespace diskprobe {

void DirectionStats::merge(const DirectionStats& o) {
  if (bs == 0) bs = o.bs;
  if (o.runtime_s > runtime_s) runtime_s = o.runtime_s;
  ios += o.ios;
  bytes += o.bytes;
  slat.merge(o.slat);
  clat.merge(o.clat);
  lat.merge(o.lat);
  // Jobs share one measured start, so second i means the same wall-clock second in each.
  if (ios_per_second.size() < o.ios_per_second.size()) ios_per_second.resize(o.ios_per_second.size(), 0);
  for (size_t i = 0; i < o.ios_per_second.size(); ++i) ios_per_second[i] += o.ios_per_second[i];
}

void ErrorCount::merge(const ErrorCount& o) {
  if (count == 0) first_offset = o.first_offset;
  count += o.count;
}

std::string mismatch_text(const VerifyMismatch& m) {
  if (m.seq == 0) return m.reason;
  return std::string(m.reason) + ": seq " + std::to_string(m.seq) + ", expected " +
         (m.expected_at_least ? "at least " : "") + std::to_string(m.expected_seq);
}

void VerifyStats::add_mismatch(unsigned job, uint64_t offset, const char* reason) {
  add_mismatch(VerifyMismatch{job, offset, reason});
}

void VerifyStats::add_mismatch(const VerifyMismatch& m) {
  ++mismatches;
  if (first.size() < kMaxListed) first.push_back(m);
}

void VerifyStats::merge(const VerifyStats& o) {
  blocks_checked += o.blocks_checked;
  mismatches += o.mismatches;
  for (const auto& m : o.first) {
    if (first.size() < kMaxListed) first.push_back(m);
  }
  dumped.insert(dumped.end(), o.dumped.begin(), o.dumped.end());
}

void DepthStats::merge(const DepthStats& o) {
  for (size_t i = 0; i < level.size(); ++i) {
    level[i] += o.level[i];
    submit[i] += o.submit[i];
    complete[i] += o.complete[i];
  }
  ios += o.ios;
  submits += o.submits;
  completes += o.completes;
}

void Results::aggregate() {
  read = DirectionStats{};
  depths = DepthStats{};
  write = DirectionStats{};
  errors = ErrorStats{};
  verify = VerifyStats{};
  for (const auto& j : jobs) {
    read.merge(j.read);
    write.merge(j.write);
    errors.count += j.errors.count;
    errors.short_ios += j.errors.short_ios;
    if (errors.first_errno == 0 && j.errors.first_errno != 0) {
      errors.first_errno = j.errors.first_errno;
      errors.first_offset = j.errors.first_offset;
    }
    errors.eio.merge(j.errors.eio);
    errors.enospc.merge(j.errors.enospc);
    errors.other.merge(j.errors.other);
    errors.short_read.merge(j.errors.short_read);
    errors.short_write.merge(j.errors.short_write);
    errors.eagain.merge(j.errors.eagain);
    if (j.errors.stopped && !errors.stopped) {
      errors.stopped = true;
      errors.stop_reason = "job " + std::to_string(j.job) + ": " + j.errors.stop_reason;
    }
    verify.merge(j.verify);
    depths.merge(j.depths);
  }
  verify.merge(verify_pass);
}

}  // namespace diskprobe
