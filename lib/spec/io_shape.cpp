#include "diskprobe/spec/io_shape.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "diskprobe/base/units.h"

namespace diskprobe {

namespace {

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  for (size_t b = 0;;) {
    const size_t e = s.find(sep, b);
    parts.push_back(s.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b));
    if (e == std::string_view::npos) break;
    b = e + 1;
  }
  return parts;
}

std::optional<uint32_t> whole_percent(std::string_view t) {
  auto v = parse_decimal(t);
  if (!v || *v > 100 || *v != std::floor(*v)) return std::nullopt;
  return static_cast<uint32_t>(*v);
}

// "4k/10:64k/:1m/30" -> entries; blanks share what the others leave, evenly (fio's bssplit).
Result<std::vector<BsShare>> one_split(std::string_view list) {
  const std::string use = "use SIZE/PERCENT entries like 4k/10:64k/90 (reads,writes: 4k/50:8k/50,64k/100)";
  std::vector<BsShare> out;
  std::vector<size_t> blank;
  uint32_t given = 0;
  for (auto entry : split(list, ':')) {
    const size_t slash = entry.find('/');
    auto bs = parse_size(entry.substr(0, slash));
    if (!bs || *bs == 0 || *bs > UINT32_MAX) return make_error(use);
    BsShare s{static_cast<uint32_t>(*bs), 0};
    const std::string_view perc = slash == std::string_view::npos ? std::string_view() : entry.substr(slash + 1);
    if (perc.empty()) {
      blank.push_back(out.size());
    } else {
      auto p = whole_percent(perc);
      if (!p) return make_error(use + " (percentages are whole numbers from 0 to 100)");
      s.percent = *p;
      given += *p;
    }
    out.push_back(s);
  }
  if (given > 100) return make_error("the bssplit percentages come to " + std::to_string(given) + ", above 100: " + use);
  if (!blank.empty()) {
    const uint32_t left = 100 - given, each = left / static_cast<uint32_t>(blank.size());
    for (size_t i = 0; i < blank.size(); ++i) {
      out[blank[i]].percent = each + (i < left % blank.size() ? 1 : 0);
    }
  } else if (given != 100) {
    return make_error("the bssplit percentages come to " + std::to_string(given) + ", not 100: " + use);
  }
  return out;
}

std::string percent_text(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", p);
  return buf;
}

// "50/5:30/15:20/" (zoned) or "50/10M:50/90M" (zoned_abs) -> zones; a blank size is what the
// others leave (zoned only).
Result<std::vector<RandomZone>> one_zone_list(std::string_view list, bool abs) {
  const std::string use = abs ? "use ACCESS%/SIZE zones like zoned_abs:60/10m:40/90m"
                              : "use ACCESS%/SIZE% zones like zoned:50/5:30/15:20/ (a blank size is the rest)";
  std::vector<RandomZone> out;
  uint32_t access = 0;
  double sized = 0;
  int blank = -1;
  for (auto entry : split(list, ':')) {
    const size_t slash = entry.find('/');
    if (slash == std::string_view::npos) return make_error(use);
    auto a = whole_percent(entry.substr(0, slash));
    if (!a) return make_error(use);
    RandomZone z;
    z.access_percent = *a;
    access += *a;
    std::string_view size = entry.substr(slash + 1);
    if (abs) {
      auto b = parse_size(size);
      if (!b || *b == 0) return make_error(use);
      z.size_bytes = *b;
    } else if (size.empty()) {
      if (blank >= 0) return make_error(use + " (one blank size at most)");
      blank = static_cast<int>(out.size());
    } else {
      auto p = parse_decimal(size);
      if (!p || *p <= 0 || *p > 100) return make_error(use);
      z.size_percent = *p;
      sized += *p;
    }
    out.push_back(z);
  }
  if (access != 100) {
    return make_error("the zones' access percentages come to " + std::to_string(access) + ", not 100: " + use);
  }
  if (!abs && sized > 100 + 1e-9) return make_error("the zones' sizes come to " + percent_text(sized) + "%, above 100: " + use);
  if (blank >= 0) {
    if (sized >= 100) return make_error("the zones' sizes leave nothing for the blank one: " + use);
    out[static_cast<size_t>(blank)].size_percent = 100 - sized;
  }
  return out;
}

}  // namespace

Result<std::array<std::vector<BsShare>, 2>> parse_bssplit(std::string_view text) {
  auto parts = split(text, ',');
  if (parts.size() > 2) {
    return make_error("bssplit with a third (trim) list: diskprobe fio runs no trims; give reads[,writes]");
  }
  std::array<std::vector<BsShare>, 2> out;
  for (size_t d = 0; d < parts.size(); ++d) {
    auto one = one_split(parts[d]);
    if (!one) return make_error(one.error());
    out[d] = std::move(*one);
  }
  if (parts.size() == 1) out[1] = out[0];
  return out;
}

std::string bssplit_text(const std::array<std::vector<BsShare>, 2>& split) {
  std::string t;
  for (int d = 0; d < 2; ++d) {
    if (d == 1 && split[1] == split[0]) break;
    if (d == 1) t += ",";
    for (size_t i = 0; i < split[d].size(); ++i) {
      t += (i ? ":" : "") + fio_size_text(split[d][i].bs) + "/" + std::to_string(split[d][i].percent);
    }
  }
  return t;
}

Result<DistributionSpec> parse_random_distribution(std::string_view text) {
  DistributionSpec out;
  if (text == "random") return out;
  const size_t colon = text.find(':');
  const std::string_view kind = text.substr(0, colon);
  if (kind == "zipf" || kind == "pareto" || kind == "normal" || kind == "gauss") {
    // fio's zipf:THETA, pareto:H, normal:DEV[%], each with an optional :CENTER (0..1).
    const char* use = kind == "zipf" ? "use zipf:THETA[:CENTER], THETA above 0 and not 1, like zipf:1.2"
                      : kind == "pareto" ? "use pareto:H[:CENTER], H between 0 and 1, like pareto:0.9"
                                         : "use normal:DEV[:CENTER], DEV a percentage, like normal:10";
    if (colon == std::string_view::npos) return make_error(use);
    auto parts = split(text.substr(colon + 1), ':');
    if (parts.empty() || parts.size() > 2) return make_error(use);
    auto v = parse_decimal(parts[0]);
    if (!v) return make_error(use);
    if (kind == "zipf" && (*v <= 0 || *v == 1.0)) return make_error(use);
    if (kind == "pareto" && (*v <= 0 || *v >= 1.0)) return make_error(use);
    if ((kind == "normal" || kind == "gauss") && *v > 100) return make_error(use);
    if (parts.size() == 2) {
      auto c = parse_decimal(parts[1]);
      if (!c || *c > 1.0) return make_error(std::string(use) + " (CENTER from 0 to 1)");
      out.center = *c;
    }
    out.kind = kind == "zipf" ? Distribution::Zipf : kind == "pareto" ? Distribution::Pareto : Distribution::Normal;
    out.value = *v;
    return out;
  }
  if ((kind != "zoned" && kind != "zoned_abs") || colon == std::string_view::npos) {
    return make_error("use random, zoned:ACCESS/SIZE:... or zoned_abs:ACCESS/SIZE:...");
  }
  out.kind = kind == "zoned" ? Distribution::Zoned : Distribution::ZonedAbs;
  auto parts = split(text.substr(colon + 1), ',');
  if (parts.size() > 2) return make_error("random_distribution with a third (trim) list: give reads[,writes]");
  for (size_t d = 0; d < parts.size(); ++d) {
    auto zones = one_zone_list(parts[d], out.kind == Distribution::ZonedAbs);
    if (!zones) return make_error(zones.error());
    out.zones[d] = std::move(*zones);
  }
  if (parts.size() == 1) out.zones[1] = out.zones[0];
  return out;
}

std::string random_distribution_text(const IoShape& s) {
  if (s.distribution == Distribution::Uniform) return "random";
  if (s.distribution == Distribution::Zipf || s.distribution == Distribution::Pareto ||
      s.distribution == Distribution::Normal) {
    char buf[64];
    const char* k = s.distribution == Distribution::Zipf ? "zipf" : s.distribution == Distribution::Pareto ? "pareto" : "normal";
    if (s.dist_center >= 0) {
      std::snprintf(buf, sizeof buf, "%s:%g:%g", k, s.dist_value, s.dist_center);
    } else {
      std::snprintf(buf, sizeof buf, "%s:%g", k, s.dist_value);
    }
    return buf;
  }
  const bool abs = s.distribution == Distribution::ZonedAbs;
  std::string t = abs ? "zoned_abs:" : "zoned:";
  for (int d = 0; d < 2; ++d) {
    if (d == 1 && s.zones[1] == s.zones[0]) break;
    if (d == 1) t += ",";
    for (size_t i = 0; i < s.zones[d].size(); ++i) {
      const RandomZone& z = s.zones[d][i];
      t += (i ? ":" : "") + std::to_string(z.access_percent) + "/" +
           (abs ? fio_size_text(z.size_bytes) : percent_text(z.size_percent));
    }
  }
  return t;
}

std::vector<std::pair<std::string, std::string>> fio_options(const IoShape& s, uint32_t bs, uint32_t bs_write) {
  std::vector<std::pair<std::string, std::string>> o;
  if (!s.bssplit[0].empty() || !s.bssplit[1].empty()) o.emplace_back("bssplit", bssplit_text(s.bssplit));
  if (s.bs_max[0] || s.bs_max[1]) {
    auto range = [](uint32_t lo, uint32_t hi) { return fio_size_text(lo) + "-" + fio_size_text(hi ? hi : lo); };
    std::string r = range(bs, s.bs_max[0]);
    if (bs != bs_write || s.bs_max[0] != s.bs_max[1]) r += "," + range(bs_write, s.bs_max[1]);
    o.emplace_back("bsrange", r);
  }
  if (s.blockalign[0] || s.blockalign[1]) {
    o.emplace_back("blockalign", s.blockalign[0] == s.blockalign[1]
                                     ? fio_size_text(s.blockalign[0])
                                     : fio_size_text(s.blockalign[0]) + "," + fio_size_text(s.blockalign[1]));
  }
  if (s.distribution != Distribution::Uniform) o.emplace_back("random_distribution", random_distribution_text(s));
  if (s.thinktime_us) {
    o.emplace_back("thinktime", std::to_string(s.thinktime_us));
    if (s.thinktime_blocks > 1) o.emplace_back("thinktime_blocks", std::to_string(s.thinktime_blocks));
  }
  if (s.zone_size) {
    o.emplace_back("zonemode", "strided");
    o.emplace_back("zonesize", fio_size_text(s.zone_size));
    if (s.zone_range && s.zone_range != s.zone_size) o.emplace_back("zonerange", fio_size_text(s.zone_range));
    if (s.zone_skip) o.emplace_back("zoneskip", fio_size_text(s.zone_skip));
  }
  return o;
}

std::string rw_suffix(const IoShape& s) {
  if (s.seq_add) return ":" + std::string(s.seq_add < 0 ? "-" : "") + fio_size_text(static_cast<uint64_t>(s.seq_add < 0 ? -s.seq_add : s.seq_add));
  if (s.seq_nr > 1) return ":" + std::to_string(s.seq_nr);
  return "";
}

uint32_t min_bs(const IoShape& s, int d, uint32_t bs) {
  if (s.bssplit[d].empty()) return bs;
  uint32_t m = UINT32_MAX;
  for (const auto& e : s.bssplit[d]) {
    if (e.percent) m = std::min(m, e.bs);
  }
  return m == UINT32_MAX ? bs : m;
}

uint32_t max_bs(const IoShape& s, int d, uint32_t bs) {
  if (!s.bssplit[d].empty()) {
    uint32_t m = 0;
    for (const auto& e : s.bssplit[d]) {
      if (e.percent) m = std::max(m, e.bs);
    }
    return m ? m : bs;
  }
  return s.bs_max[d] ? s.bs_max[d] : bs;
}

}  // namespace diskprobe
