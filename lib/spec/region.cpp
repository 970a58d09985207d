#include "diskprobe/spec/region.h"

#include <algorithm>

#include "diskprobe/spec/target.h"

namespace diskprobe {

Region resolve_region(const JobSpec& spec, const Target& target) {
  Region r;
  r.read_bs = spec.bs;
  r.write_bs = spec.write_bs();
  const uint64_t min_bs = std::max<uint64_t>(1, std::min(spec.bs, spec.write_bs()));
  if (spec.offset_percent > 0) {
    // fio aligns a percentage offset to the (minimum) block size.
    auto off = static_cast<uint64_t>(static_cast<long double>(target.size_bytes) * spec.offset_percent / 100.0L);
    r.offset = off / min_bs * min_bs;
  } else {
    r.offset = spec.offset;
  }
  uint64_t room = target.size_bytes > r.offset ? target.size_bytes - r.offset : 0;
  if (spec.size_percent > 0) {
    auto sz = static_cast<uint64_t>(static_cast<long double>(target.size_bytes) * spec.size_percent / 100.0L);
    r.size = std::min(room, sz);  // cut at the end of the target, as fio does
  } else {
    r.size = spec.size ? spec.size : room;
  }
  return r;
}

}  // namespace diskprobe
