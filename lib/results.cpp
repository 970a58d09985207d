#include "diskprobe/core/results.h"

#include <algorithm>

namespace diskprobe {

void DirectionStats::merge(const DirectionStats& o) {
  ios += o.ios;
  bytes += o.bytes;
  slat.merge(o.slat);
  clat.merge(o.clat);
  lat.merge(o.lat);
  // Jobs share one measured start, so second i means the same wall-clock second in each.
  if (ios_per_second.size() < o.ios_per_second.size()) ios_per_second.resize(o.ios_per_second.size(), 0);
  for (size_t i = 0; i < o.ios_per_second.size(); ++i) ios_per_second[i] += o.ios_per_second[i];
}

void Results::aggregate() {
  read = DirectionStats{};
  write = DirectionStats{};
  errors = ErrorStats{};
  for (const auto& j : jobs) {
    read.merge(j.read);
    write.merge(j.write);
    errors.count += j.errors.count;
    errors.short_ios += j.errors.short_ios;
    if (errors.first_errno == 0 && j.errors.first_errno != 0) {
      errors.first_errno = j.errors.first_errno;
      errors.first_offset = j.errors.first_offset;
    }
  }
}

}  // namespace diskprobe
