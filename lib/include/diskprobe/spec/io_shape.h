// IoShape: how a job's I/Os vary beyond one block size and one walk over the region, in fio's
// words: bssplit, bsrange, blockalign, rw=<op>:<n>, random_distribution=zoned|zoned_abs and
// thinktime. A default IoShape asks for none of it (the engine's plain loops run then).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "diskprobe/base/status.h"

namespace diskprobe {

// One entry of fio's bssplit: I/Os of `bs` bytes are `percent` of a direction's I/Os.
struct BsShare {
  uint32_t bs = 0;
  uint32_t percent = 0;
  bool operator==(const BsShare&) const = default;
};

// fio's random_distribution kinds: uniform (fio's "random"), the zoned ones, and fio's zipf
// (theta), pareto (h) and normal (dev %), drawn as fio's lib/zipf.c and lib/gauss.c draw them.
enum class Distribution { Uniform, Zoned, ZonedAbs, Zipf, Pareto, Normal };

// One zone of random_distribution: `access_percent` of the random I/Os land in it; its size is
// `size_percent` of the region (zoned) or `size_bytes` (zoned_abs). Zones follow each other
// from the region's start.
struct RandomZone {
  uint32_t access_percent = 0;
  double size_percent = 0;
  uint64_t size_bytes = 0;
  bool operator==(const RandomZone&) const = default;
};

struct IoShape {
  // [0] reads, [1] writes, as fio's bs=R,W.
  std::array<std::vector<BsShare>, 2> bssplit;  // empty: one size (or bsrange)
  std::array<uint32_t, 2> bs_max = {0, 0};      // bsrange MIN-MAX: MAX (MIN is the job's bs); 0 = one size
  std::array<uint32_t, 2> blockalign = {0, 0};  // offsets are multiples of this; 0 = the smallest size
  // rw=read:8k: after each sequential I/O, 8k skipped (a negative one goes backwards); rw=randread:8:
  // a new random offset every 8 I/Os, the ones between sequential from the last (fio's rw_sequencer
  // default). 0: neither.
  int64_t seq_add = 0;
  uint32_t seq_nr = 0;
  Distribution distribution = Distribution::Uniform;
  std::array<std::vector<RandomZone>, 2> zones;  // zoned, zoned_abs: per direction
  double dist_value = 0;    // zipf's theta, pareto's h, normal's dev (percent)
  double dist_center = -1;  // fio's random_center (0..1); -1: fio's default (a random one for zipf/pareto)
  // fio's thinktime: after every thinktime_blocks I/Os, the job waits thinktime_us before the next.
  uint64_t thinktime_us = 0;
  uint32_t thinktime_blocks = 1;
  // fio's zonemode=strided (zonesize, zonerange, zoneskip), sequential I/O: zone_size bytes done
  // inside a zone of zone_range bytes (from its start again at its end), then on to the next
  // zone zone_range + zone_skip further, from the region's start again past its end. 0: none.
  uint64_t zone_size = 0, zone_range = 0, zone_skip = 0;

  bool variable_bs(int d) const { return !bssplit[d].empty() || bs_max[d] != 0; }
  bool variable_bs() const { return variable_bs(0) || variable_bs(1); }
  // Anything here the plain loops do not do.
  bool any() const {
    return variable_bs() || blockalign[0] || blockalign[1] || seq_add || seq_nr > 1 ||
           distribution != Distribution::Uniform || thinktime_us || zone_size;
  }
  bool operator==(const IoShape&) const = default;
};

// fio's bssplit=4k/10:64k/90[,WRITES]: one list for both directions, or reads,writes. An entry
// without a percentage shares what the others leave, evenly; the percentages come to 100.
Result<std::array<std::vector<BsShare>, 2>> parse_bssplit(std::string_view text);
std::string bssplit_text(const std::array<std::vector<BsShare>, 2>& split);

// fio's random_distribution=zoned:50/5:30/15:20/ (access/size percent; a blank size is what the
// others leave) or zoned_abs:50/10M:50/90M, reads[,writes]; "random" is Uniform. Other fio
// distributions (zipf, pareto, normal) come back as an error naming them.
struct DistributionSpec {
  Distribution kind = Distribution::Uniform;
  std::array<std::vector<RandomZone>, 2> zones;
  double value = 0, center = -1;
};
Result<DistributionSpec> parse_random_distribution(std::string_view text);
std::string random_distribution_text(const IoShape& s);

// The shape in fio's options, name and value, as a job file would hold them (bssplit, bsrange for
// sizes MIN = bs[d], blockalign, random_distribution, thinktime, thinktime_blocks); and rw's
// ":<n>" suffix ("" for none).
std::vector<std::pair<std::string, std::string>> fio_options(const IoShape& s, uint32_t bs, uint32_t bs_write);
std::string rw_suffix(const IoShape& s);

// Each direction's smallest and largest I/O for a job of block sizes bs[d] and this shape.
uint32_t min_bs(const IoShape& s, int d, uint32_t bs);
uint32_t max_bs(const IoShape& s, int d, uint32_t bs);

}  // namespace diskprobe
