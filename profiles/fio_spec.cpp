// fio's options onto JobSpecs (fio_spec.h). One table: each fio name or alias, what it sets.
#include "diskprobe/profiles/fio_spec.h"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>

#include "diskprobe/base/json_io.h"
#include "diskprobe/base/units.h"
#include "diskprobe/profiles/profiles.h"

namespace diskprobe::profiles::fio {

namespace {

// What applying one option did: "" fine; otherwise an error (a bad value) or unsupported (a
// value diskprobe does not implement, with why).
struct Applied {
  std::string error, unsupported;
};

struct State {
  FioJob& job;
  std::vector<std::string>& notes;
  std::optional<uint64_t> filesize = std::nullopt;  // fio's filesize, settled after the job's options
  bool strided = false;  // zonemode=strided: its zonesize, zonerange, zoneskip apply
  bool lfsr = false;     // random_generator=lfsr: every block once a pass, without a map
  bool fill_device = false;  // the region to the device's end, whatever size says
  bool verify_given = false;  // verify= was given (a verify_pattern alone implies it)
  uint64_t offset_increment = 0;

  // fio's priority options, settled after the job's options (they combine).
  std::optional<unsigned> prioclass, prio;
  std::optional<std::array<unsigned, 2>> cmd_percent, cmd_class, cmd_level;
  std::optional<std::string> cmd_bssplit;
};

using Setter = std::function<Applied(State&, const std::string& value, bool bare)>;

Applied from_status(const Status& st) { return st ? Applied{} : Applied{st.error(), ""}; }

// An option that is one of diskprobe's fields under the same or another name.
Setter field(const char* key) {
  return [key](State& s, const std::string& v, bool bare) {
    return from_status(set_field(s.job.spec, key, bare ? "1" : v));
  };
}

// A whole number from lo to hi as fio's integer options take it ("1024"), else nothing.
std::optional<uint32_t> whole_number(const std::string& v, double lo, double hi) {
  auto n = parse_decimal(v);
  if (!n || *n < lo || *n > hi || *n != static_cast<double>(static_cast<uint32_t>(*n))) return std::nullopt;
  return static_cast<uint32_t>(*n);
}

bool truthy(const std::string& v, bool bare) { return bare || (v != "0" && v != "false" && v != "no" && v != "off"); }

// fio's rw=<op>[:<n>]: on a sequential op, n bytes skipped after each I/O (a negative n walks
// backwards); on a random one, a new random offset every n I/Os.
Applied set_rw(State& s, const std::string& value, bool) {
  std::string v = value;
  std::string modifier;
  if (auto colon = v.find(':'); colon != std::string::npos) {
    modifier = v.substr(colon + 1);
    v = v.substr(0, colon);
  }
  if (v == "rw") v = "readwrite";
  if (v == "randrw" || v == "randread" || v == "randwrite" || v == "read" || v == "write" || v == "readwrite") {
    s.job.spec.shape.seq_add = 0;
    s.job.spec.shape.seq_nr = 0;
    if (!modifier.empty()) {
      const bool random = v.rfind("rand", 0) == 0;
      const bool negative = modifier[0] == '-';
      auto n = parse_size(negative ? modifier.substr(1) : modifier);
      if (!n || (random && (negative || *n == 0 || *n > UINT32_MAX))) {
        return {random ? "use rw=" + v + ":N, N I/Os per random offset" : "use rw=" + v + ":SIZE, like read:8k or read:-8k", ""};
      }
      if (random) {
        s.job.spec.shape.seq_nr = static_cast<uint32_t>(*n);
      } else {
        s.job.spec.shape.seq_add = negative ? -static_cast<int64_t>(*n) : static_cast<int64_t>(*n);
      }
    }
  }
  if (v == "trim" || v == "randtrim" || v == "trimwrite" || v == "randtrimwrite") {
    return {"", "trim workloads (discard) are not implemented"};
  }
  return from_status(set_field(s.job.spec, "rw", v));
}

Applied set_ioengine(State& s, const std::string& v, bool) {
  if (v == "libaio" || v == "io_uring") {
    if (v == "libaio") {
      s.notes.push_back("job '" + s.job.name + "': ioengine=libaio ran on diskprobe's io_uring engine (the same "
                        "asynchronous I/O; libaio itself is not used)");
    }
    return from_status(set_field(s.job.spec, "engine", "io_uring"));
  }
  if (v == "psync" || v == "sync" || v == "pvsync") return from_status(set_field(s.job.spec, "engine", "sync"));
  return {"", "ioengine=" + v + " is not an engine diskprobe has (io_uring, libaio, psync, sync, pvsync)"};
}

// fio's sync: 0/none, 1/sync (O_SYNC), dsync (O_DSYNC).
Applied set_sync(State& s, const std::string& v, bool bare) {
  if (bare || v == "1" || v == "sync") return from_status(set_field(s.job.spec, "sync", "1"));
  if (v == "0" || v == "none") return from_status(set_field(s.job.spec, "sync", "0"));
  if (v == "dsync") return {"", "sync=dsync (O_DSYNC) is not implemented; sync=1 is O_SYNC"};
  return {"use 0, 1, none, sync or dsync", ""};
}

Applied set_rwmixwrite(State& s, const std::string& v, bool) {
  auto n = parse_decimal(v);
  if (!n || *n > 100 || *n != static_cast<double>(static_cast<unsigned>(*n))) return {"use a percentage from 0 to 100", ""};
  return from_status(set_field(s.job.spec, "rwmixread", std::to_string(100 - static_cast<unsigned>(*n))));
}

Applied set_buffered(State& s, const std::string& v, bool bare) {
  return from_status(set_field(s.job.spec, "direct", truthy(v, bare) ? "0" : "1"));
}

// fio adds each filename= to the job's files: a job's own after [global]'s is a second file (the
// same name twice, the device twice: fio read 128 MiB of a 64 MiB device), refused with the
// several-files case by name, not taken as the last one.
Applied set_filename(State& s, const std::string& v, bool) {
  // fio splits on ':' (a '\:' is a colon inside a name).
  std::string cur;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] == '\\' && i + 1 < v.size() && v[i + 1] == ':') {
      cur += ':';
      ++i;
    } else if (v[i] == ':') {
      s.job.filenames.push_back(cur);
      cur.clear();
    } else {
      cur += v[i];
    }
  }
  s.job.filenames.push_back(cur);
  std::erase_if(s.job.filenames, [](const std::string& f) { return f.empty(); });
  if (s.job.filenames.empty()) return {"give a file or device name", ""};
  return {};
}

// fio's name= in the job's own section renames it.
Applied set_name(State& s, const std::string& v, bool) {
  if (v.empty()) return {"give the job a name", ""};
  s.job.name = v;
  s.job.spec.name = v;
  return {};
}

Applied set_description(State& s, const std::string& v, bool) {
  s.job.spec.description = v;
  return {};
}

Applied set_stonewall(State& s, const std::string& v, bool bare) {
  s.job.stonewall = truthy(v, bare);
  return {};
}

Applied set_new_group(State& s, const std::string& v, bool bare) {
  s.job.new_group = truthy(v, bare);
  return {};
}

// fio's wait_for=NAME: a job defined before this one (checked once all jobs are read).
Applied set_wait_for(State& s, const std::string& v, bool) {
  s.job.spec.wait_for = v;
  return {};
}

// fio's filesize: one size, the file's (on a device: the region's, when size says nothing).
Applied set_filesize(State& s, const std::string& v, bool) {
  if (v.find('-') != std::string::npos || v.find(':') != std::string::npos) {
    return {"", "filesize with a range (random file sizes) is not implemented"};
  }
  auto n = parse_size(v);
  if (!n) return {"use a size like 128m", ""};
  s.filesize = *n;
  return {};
}

// fio's rate=R,W,T and rate_iops=R,W,T: diskprobe fio runs no trims (trim workloads are
// refused), so a trim cap caps nothing; said once, the R,W part taken.
Setter set_rate(const char* key) {
  return [key](State& s, const std::string& v, bool bare) -> Applied {
    const size_t first = v.find(',');
    const size_t second = first == std::string::npos ? std::string::npos : v.find(',', first + 1);
    if (second == std::string::npos) return from_status(set_field(s.job.spec, key, bare ? "1" : v));
    s.notes.push_back("job '" + s.job.name + "': " + key + "=" + v + ": the third value caps trims, and the job " +
                      "runs none (diskprobe fio runs no trim workload): reads and writes capped at " +
                      v.substr(0, second));
    return from_status(set_field(s.job.spec, key, v.substr(0, second)));
  };
}

// fio's ratemin=R,W (bytes/s) and rate_iops_min=R,W: the floors check_min_rate judges; a third
// (trim) value floors nothing here, as diskprobe fio runs no trims.
Setter set_rate_floor(bool bytes) {
  return [bytes](State& s, const std::string& v, bool) -> Applied {
    const size_t first = v.find(',');
    const size_t second = first == std::string::npos ? std::string::npos : v.find(',', first + 1);
    auto r = parse_rate(second == std::string::npos ? v : v.substr(0, second), bytes);
    if (!r) return {bytes ? "use bytes per second, R or R,W, like 1m or 1024" : "use I/Os per second, R or R,W, like 500", ""};
    uint64_t(&out)[2] = bytes ? s.job.spec.rate_min_bytes : s.job.spec.rate_min_iops;
    out[0] = (*r)[0];
    out[1] = (*r)[1];
    return {};
  };
}

Applied set_ratecycle(State& s, const std::string& v, bool) {
  auto n = whole_number(v, 1, 3'600'000);
  if (!n) return {"use whole milliseconds, like 1000", ""};
  s.job.spec.ratecycle_ms = *n;
  return {};
}

Applied set_rate_process(State& s, const std::string& v, bool) {
  if (v == "linear") {
    s.job.spec.rate_poisson = false;
  } else if (v == "poisson") {
    s.job.spec.rate_poisson = true;
  } else {
    return {"use linear or poisson", ""};
  }
  return {};
}

// fio's io_submit_mode=offload: a thread of fio's own submits each I/O when the rate says, not
// waiting for what is in flight. diskprobe's rate caps always submit so (fio's inline mode
// instead empties the queue before each wait), from the job's own thread: the same I/Os at
// the same times. inline is taken as it is.
Applied set_io_submit_mode(State& s, const std::string& v, bool) {
  if (v == "inline") return {};
  if (v != "offload") return {"use inline or offload", ""};
  s.notes.push_back("job '" + s.job.name + "': io_submit_mode=offload: diskprobe submits each capped I/O at its "
                    "time whatever is in flight, as fio's offload thread does, from the job's own thread");
  return {};
}

Applied set_time_based(State& s, const std::string& v, bool bare) {
  return from_status(set_field(s.job.spec, "time_based", truthy(v, bare) ? "1" : "0"));
}

// fio's bsrange=MIN-MAX[,MIN-MAX]: sizes from MIN to MAX, multiples of MIN (one range: both
// directions); a range of one size is that block size (tiobench-example's 4k-4k).
Applied set_bsrange(State& s, const std::string& v, bool) {
  const char* use = "use MIN-MAX like 4k-64k (reads,writes: 4k-4k,8k-64k)";
  std::string mins;
  uint32_t maxes[2] = {0, 0};
  size_t b = 0;
  int parts = 0;
  for (int part = 0; part < 2 && b <= v.size(); ++part) {
    size_t comma = v.find(',', b);
    std::string range = v.substr(b, comma == std::string::npos ? std::string::npos : comma - b);
    size_t dash = range.find('-');
    if (dash == std::string::npos) return {use, ""};
    auto lo = parse_size(range.substr(0, dash)), hi = parse_size(range.substr(dash + 1));
    if (!lo || !hi || *hi > UINT32_MAX || *lo > *hi) return {use, ""};
    mins += (part ? "," : "") + std::to_string(*lo);
    maxes[part] = *lo == *hi ? 0 : static_cast<uint32_t>(*hi);
    ++parts;
    if (comma == std::string::npos) break;
    b = comma + 1;
  }
  if (parts == 1) maxes[1] = maxes[0];
  s.job.spec.shape.bs_max = {maxes[0], maxes[1]};
  return from_status(set_field(s.job.spec, "bs", mins));
}

// fio's bssplit: the sizes and their shares; bs becomes each direction's smallest.
Applied set_bssplit(State& s, const std::string& v, bool) {
  auto split = parse_bssplit(v);
  if (!split) return {split.error(), ""};
  s.job.spec.shape.bssplit = *split;
  const uint32_t r = min_bs(s.job.spec.shape, 0, s.job.spec.bs), w = min_bs(s.job.spec.shape, 1, s.job.spec.write_bs());
  s.job.spec.bs = r;
  s.job.spec.bs_write = w == r ? 0 : w;
  return {};
}

// fio's blockalign=R[,W]: random offsets are multiples of it.
Applied set_blockalign(State& s, const std::string& v, bool) {
  const size_t comma = v.find(',');
  auto r = parse_size(v.substr(0, comma));
  auto w = comma == std::string::npos ? r : parse_size(v.substr(comma + 1));
  if (!r || !w || *r == 0 || *w == 0 || *r > UINT32_MAX || *w > UINT32_MAX) return {"use a size like 4k (reads,writes: 4k,8k)", ""};
  s.job.spec.shape.blockalign = {static_cast<uint32_t>(*r), static_cast<uint32_t>(*w)};
  return {};
}

Applied set_random_distribution(State& s, const std::string& v, bool) {
  auto d = parse_random_distribution(v);
  if (!d) {
    if (d.error().find("not implemented") != std::string::npos) return {"", d.error()};
    return {d.error(), ""};
  }
  s.job.spec.shape.distribution = d->kind;
  s.job.spec.shape.zones = d->zones;
  s.job.spec.shape.dist_value = d->value;
  if (d->center >= 0) s.job.spec.shape.dist_center = d->center;
  return {};
}

// fio's thinktime (microseconds, or with a time suffix) and thinktime_blocks.
Applied set_thinktime(State& s, const std::string& v, bool) {
  uint64_t us = 0;
  if (auto n = parse_decimal(v)) {
    us = static_cast<uint64_t>(*n);
  } else if (auto sec = parse_seconds(v)) {
    us = static_cast<uint64_t>(*sec * 1e6);
  } else {
    return {"use microseconds (thinktime=2000) or a time (2ms)", ""};
  }
  s.job.spec.shape.thinktime_us = us;
  return {};
}

Applied set_thinktime_blocks(State& s, const std::string& v, bool) {
  auto n = whole_number(v, 1, UINT32_MAX);
  if (!n) return {"use a whole number of I/Os, 1 or more", ""};
  s.job.spec.shape.thinktime_blocks = *n;
  return {};
}

// fio's verify: diskprobe's blocks carry crc32c; fio's other checksums are other workloads.
// meta is fio's header alone (offset, sequence, the header's own checksum): diskprobe's header
// carries the same and its crc32c covers the data too, a check at least as strict.
Applied set_verify(State& s, const std::string& v, bool) {
  s.verify_given = true;
  if (v == "meta") {
    s.notes.push_back("job '" + s.job.name + "': verify=meta: each block's header (offset, sequence) checked with "
                      "diskprobe's crc32c, which covers the data as well");
    return from_status(set_field(s.job.spec, "verify", "crc32c"));
  }
  if (v == "crc32c" || v == "0" || v == "none") return from_status(set_field(s.job.spec, "verify", v == "crc32c" ? v : "none"));
  return {"", "verify=" + v + " is not implemented (diskprobe verifies with crc32c: verify=crc32c)"};
}

// fio's directory may be relative to the working directory.
Applied set_directory(State& s, const std::string& v, bool) {
  if (v.find(':') != std::string::npos) return {"", "directory=a:b (several directories) is not implemented"};
  std::error_code ec;
  std::filesystem::path p = v.empty() ? std::filesystem::path() : std::filesystem::absolute(v, ec);
  if (ec) return {"cannot make " + v + " absolute: " + ec.message(), ""};
  return from_status(set_field(s.job.spec, "directory", p.lexically_normal().string()));
}

// fio's write_bw_log=PREFIX (and lat, iops): the files' prefix; bare, the job's name.
Setter set_log(std::string IoLogs::*prefix) {
  return [prefix](State& s, const std::string& v, bool bare) -> Applied {
    s.job.spec.logs.*prefix = bare || v.empty() ? s.job.name : v;
    return {};
  };
}

Applied set_log_avg_msec(State& s, const std::string& v, bool) {
  auto n = whole_number(v, 0, 86'400'000);
  if (!n) return {"use whole milliseconds (log_avg_msec=1000), 0 for every I/O", ""};
  s.job.spec.logs.avg_msec = *n;
  return {};
}

Setter set_log_flag(bool IoLogs::*flag) {
  return [flag](State& s, const std::string& v, bool bare) -> Applied {
    s.job.spec.logs.*flag = truthy(v, bare);
    return {};
  };
}

// fio's zonemode: strided or none (zbd is another device kind).
Applied set_zonemode(State& s, const std::string& v, bool) {
  if (v == "strided") {
    s.strided = true;
    return {};
  }
  if (v == "none") {
    s.strided = false;
    return {};
  }
  return {"", "zonemode=" + v + " is not implemented (zonemode=strided and none are)"};
}

Setter set_zone_bytes(uint64_t IoShape::*field) {
  return [field](State& s, const std::string& v, bool) -> Applied {
    auto n = parse_size(v);
    if (!n || (field == &IoShape::zone_size && *n == 0)) return {"use a size like 256m", ""};
    s.job.spec.shape.*field = *n;
    return {};
  };
}

// fio's flow=W, flow_id=N, flow_sleep=USEC (whole numbers; fio 3.33's weights are positive).
Setter set_flow_number(const char* what) {
  return [what](State& s, const std::string& v, bool) -> Applied {
    const std::string key = what;
    if (key == "flow" && !v.empty() && v[0] == '-') {
      return {"", "flow=" + v + ": a negative weight (fio's older flow counter) is not implemented; fio 3.33 shares "
                  "a flow by positive weights (flow=1 and flow=8: one I/O in nine and eight in nine)"};
    }
    auto n = parse_decimal(v);
    if (!n || *n < 0 || *n > UINT32_MAX || *n != static_cast<double>(static_cast<uint32_t>(*n))) {
      return {"use a whole number", ""};
    }
    const auto u = static_cast<uint32_t>(*n);
    if (key == "flow") s.job.spec.flow = u;
    if (key == "flow_id") s.job.spec.flow_id = u;
    if (key == "flow_sleep") s.job.spec.flow_sleep_us = u;
    return {};
  };
}

// fio's R[,W] lists of small numbers (one value: both directions).
std::optional<std::array<unsigned, 2>> two_numbers(const std::string& v, unsigned max) {
  const size_t comma = v.find(',');
  auto one = [max](const std::string& t) -> std::optional<unsigned> {
    auto n = parse_decimal(t);
    if (!n || *n < 0 || *n > max || *n != static_cast<double>(static_cast<unsigned>(*n))) return std::nullopt;
    return static_cast<unsigned>(*n);
  };
  auto r = one(v.substr(0, comma));
  auto w = comma == std::string::npos ? r : one(v.substr(comma + 1));
  if (!r || !w) return std::nullopt;
  return std::array<unsigned, 2>{*r, *w};
}

Applied set_prioclass(State& s, const std::string& v, bool) {
  auto n = two_numbers(v, 3);
  if (!n || (*n)[0] != (*n)[1]) return {"use a class from 0 to 3 (1 real-time, 2 best-effort, 3 idle)", ""};
  s.prioclass = (*n)[0];
  return {};
}

Applied set_prio(State& s, const std::string& v, bool) {
  auto n = two_numbers(v, 7);
  if (!n || (*n)[0] != (*n)[1]) return {"use a level from 0 (highest) to 7", ""};
  s.prio = (*n)[0];
  return {};
}

Setter set_cmdprio(std::optional<std::array<unsigned, 2>> State::*field, unsigned max, const char* use) {
  return [field, max, use](State& s, const std::string& v, bool) -> Applied {
    auto n = two_numbers(v, max);
    if (!n) return {use, ""};
    s.*field = *n;
    return {};
  };
}

Applied set_cmdprio_bssplit(State& s, const std::string& v, bool) {
  s.cmd_bssplit = v;
  return {};
}

// cmdprio_bssplit=BS/PERCENT[/CLASS/LEVEL[/HINT]]:...[,WRITES]: without a class and level an
// entry takes cmdprio_class's and cmdprio's. fio 3.33 takes a fifth field (a hint) and sets no
// hint: the same here, said once.
std::optional<std::string> cmdprio_bssplit(State& s, const std::string& v, std::array<unsigned, 2> cls,
                                           std::array<unsigned, 2> level) {
  const char* use = "use BS/PERCENT[/CLASS/LEVEL]:... (reads,writes), like 64k/40:1m/60,1m/100";
  std::array<std::string, 2> parts;
  const size_t comma = v.find(',');
  parts[0] = v.substr(0, comma);
  parts[1] = comma == std::string::npos ? parts[0] : v.substr(comma + 1);
  bool hinted = false;
  for (int d = 0; d < 2; ++d) {
    auto& out = s.job.spec.priority.cmd[d];
    out.clear();
    size_t b = 0;
    while (b <= parts[d].size()) {
      size_t colon = parts[d].find(':', b);
      std::string entry = parts[d].substr(b, colon == std::string::npos ? std::string::npos : colon - b);
      std::vector<std::string> f;
      for (size_t x = 0;;) {
        size_t slash = entry.find('/', x);
        f.push_back(entry.substr(x, slash == std::string::npos ? std::string::npos : slash - x));
        if (slash == std::string::npos) break;
        x = slash + 1;
      }
      if (f.size() != 2 && f.size() != 4 && f.size() != 5) return use;
      auto bs = parse_size(f[0]);
      auto pct = parse_decimal(f[1]);
      if (!bs || *bs == 0 || *bs > UINT32_MAX || !pct || *pct < 0 || *pct > 100) return use;
      unsigned c = cls[d], l = level[d];
      if (f.size() >= 4) {
        auto cc = parse_decimal(f[2]), ll = parse_decimal(f[3]);
        if (!cc || !ll || *cc < 0 || *cc > 3 || *ll < 0 || *ll > 7) return use;
        c = static_cast<unsigned>(*cc);
        l = static_cast<unsigned>(*ll);
      }
      hinted = hinted || f.size() == 5;
      out.push_back({static_cast<uint32_t>(*bs), static_cast<uint32_t>(*pct), ioprio_value(c, l)});
      if (colon == std::string::npos) break;
      b = colon + 1;
    }
  }
  if (hinted) {
    s.notes.push_back("job '" + s.job.name + "': cmdprio_bssplit's fifth field (a priority hint) sets no hint, as "
                      "fio 3.33 sets none");
  }
  return std::nullopt;
}

// The priority options together: the job's class and level, cmdprio's shares.
void settle_priority(State& s, const std::string& where, std::vector<std::string>& errors) {
  IoPriority& p = s.job.spec.priority;
  if (s.prioclass || s.prio) {
    p.job_set = true;
    p.job = ioprio_value(s.prioclass.value_or(0), s.prio.value_or(0));
  }
  const std::array<unsigned, 2> cls = s.cmd_class.value_or(std::array<unsigned, 2>{1, 1});  // fio: the highest class
  const std::array<unsigned, 2> level = s.cmd_level.value_or(std::array<unsigned, 2>{0, 0});
  if (s.cmd_percent && s.cmd_bssplit) {
    errors.push_back(where + ": job '" + s.job.name + "': cmdprio_percentage and cmdprio_bssplit both given: use one");
    return;
  }
  if (s.cmd_percent) {
    for (int d = 0; d < 2; ++d) {
      if ((*s.cmd_percent)[d]) p.cmd[d] = {{0, (*s.cmd_percent)[d], ioprio_value(cls[d], level[d])}};
    }
  } else if (s.cmd_bssplit) {
    if (auto e = cmdprio_bssplit(s, *s.cmd_bssplit, cls, level)) {
      errors.push_back(where + ": job '" + s.job.name + "': cmdprio_bssplit=" + excerpt(*s.cmd_bssplit) + ": " + *e);
    }
  }
}

Applied set_exitall(State& s, const std::string& v, bool bare) {
  s.job.spec.exitall.on = truthy(v, bare);
  return {};
}

Applied set_exit_what(State& s, const std::string& v, bool) {
  using W = JobSpec::ExitWhat;
  if (v == "group") {
    s.job.spec.exitall.what = W::Group;
  } else if (v == "stonewall") {
    s.job.spec.exitall.what = W::Stonewall;
  } else if (v == "all") {
    s.job.spec.exitall.what = W::All;
  } else {
    return {"use group, stonewall or all", ""};
  }
  return {};
}

// fio's latency_target and latency_window: a time, microseconds without a unit.
Setter set_latency_time(uint64_t LatencyTarget::*field) {
  return [field](State& s, const std::string& v, bool) -> Applied {
    double us = 0;
    if (auto n = parse_decimal(v)) {
      us = *n;
    } else if (auto sec = parse_seconds(v)) {
      us = *sec * 1e6;
    } else {
      return {"use microseconds (500000) or a time (500ms)", ""};
    }
    if (us < 0 || us > 86'400e6) return {"use a time up to a day", ""};
    s.job.spec.latency.*field = static_cast<uint64_t>(us * 1000.0 + 0.5);
    return {};
  };
}

Applied set_latency_percentile(State& s, const std::string& v, bool) {
  auto n = parse_percent(v);
  if (!n || *n < 0 || *n > 100) return {"use a percentage from 0 to 100 (99.9)", ""};
  s.job.spec.latency.percentile = *n;
  return {};
}

// fio's random_generator: tausworthe (its default) and tausworthe64 draw offsets with its
// random map; lfsr walks every block once a pass with no map, norandommap or not. diskprobe's
// random map is a keyed permutation, each block once a pass as both are: the same blocks in
// its own order.
Applied set_random_generator(State& s, const std::string& v, bool) {
  if (v == "tausworthe" || v == "tausworthe64") return {};
  if (v != "lfsr") return {"use tausworthe, lfsr or tausworthe64", ""};
  s.lfsr = true;
  return {};
}

// A NUMA node list as fio (libnuma) reads it: "0", "0-1,3"; "all" is every node (no restriction).
std::optional<std::vector<int>> node_list(const std::string& v) {
  if (v == "all") return std::vector<int>{};
  if (v.empty() || v.find_first_not_of("0123456789,-") != std::string::npos) return std::nullopt;
  auto list = parse_cpu_list(v);
  if (!list || list->empty()) return std::nullopt;
  return *list;
}

Applied set_numa_cpu_nodes(State& s, const std::string& v, bool) {
  auto nodes = node_list(v);
  if (!nodes) return {"use NUMA nodes like 0, 0-1 or all", ""};
  s.job.spec.numa.cpu_nodes = *nodes;
  return {};
}

// fio's numa_mem_policy=MODE[:NODES]: default and local take no nodes, prefer one, bind and
// interleave one or more.
Applied set_numa_mem_policy(State& s, const std::string& v, bool) {
  using M = NumaPolicy::Mem;
  const size_t colon = v.find(':');
  const std::string mode = v.substr(0, colon), nodes = colon == std::string::npos ? "" : v.substr(colon + 1);
  static const std::map<std::string, M> modes = {
      {"default", M::Default}, {"prefer", M::Prefer}, {"bind", M::Bind}, {"interleave", M::Interleave}, {"local", M::Local}};
  auto it = modes.find(mode);
  if (it == modes.end()) return {"use default, prefer:N, bind:NODES, interleave:NODES or local", ""};
  NumaPolicy& n = s.job.spec.numa;
  n.mem = it->second;
  n.mem_nodes.clear();
  if (n.mem == M::Default || n.mem == M::Local) {
    if (!nodes.empty()) return {mode + " takes no nodes: use numa_mem_policy=" + mode, ""};
    return {};
  }
  auto list = node_list(nodes);
  if (!list || list->empty()) return {"use " + mode + ":NODES, like " + mode + ":0 or " + mode + ":0-1", ""};
  if (n.mem == M::Prefer && list->size() != 1) return {"use prefer:N, one node", ""};
  n.mem_nodes = *list;
  return {};
}

// fio's verify_pattern: 0xHEX (its bytes in the order written) or a quoted string.
Applied set_verify_pattern(State& s, const std::string& v, bool) {
  const char* use = "use 0xHEX (0xaa555aa5) or a quoted string (\"abcd\")";
  std::vector<uint8_t> bytes;
  if (v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
    std::string hex = v.substr(2);
    if (hex.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) return {use, ""};
    if (hex.size() % 2) hex = "0" + hex;
    for (size_t i = 0; i < hex.size(); i += 2) bytes.push_back(static_cast<uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  } else if (v.size() >= 3 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) {
    bytes.assign(v.begin() + 1, v.end() - 1);
  } else {
    return {"", "verify_pattern=" + v + " (a number or a combination) is not implemented: " + use};
  }
  if (bytes.size() > 512) return {"use a pattern of at most 512 bytes", ""};
  s.job.spec.verify_pattern = bytes;
  return {};
}

Applied set_verify_backlog(State& s, const std::string& v, bool) {
  auto n = whole_number(v, 0, 1'000'000);
  if (!n) return {"use a whole number of writes, like 1 or 1024", ""};
  s.job.spec.verify_backlog = *n;
  return {};
}

Applied set_verify_dump(State& s, const std::string& v, bool bare) {
  s.job.spec.verify_dump = truthy(v, bare);
  return {};
}

// fio's offset_increment: clone k of numjobs starts at offset + k x this (bytes; fio's percent
// of the device is not implemented). The clones are then jobs of their own (to_jobs).
Applied set_offset_increment(State& s, const std::string& v, bool) {
  if (!v.empty() && v.back() == '%') return {"", "offset_increment=" + v + " (a percentage of the device) is not implemented: give bytes, like 4m"};
  auto n = parse_size(v);
  if (!n) return {"use a size like 4m", ""};
  s.offset_increment = *n;
  return {};
}

Applied set_verify_interval(State& s, const std::string& v, bool) {
  auto n = parse_size(v);
  if (!n || *n == 0 || *n > UINT32_MAX) return {"use a size like 512", ""};
  s.job.spec.verify_interval = static_cast<uint32_t>(*n);
  return {};
}

// fio's fill_device: on a block device, the region runs to the device's end whatever size says
// (fio writes until ENOSPC there); a file (filling its filesystem) is refused where the target
// is known to be one.
Applied set_fill_device(State& s, const std::string& v, bool bare) {
  s.fill_device = truthy(v, bare);
  return {};
}

// fio's create_serialize: whether jobs lay their files out one at a time. A block device is laid
// out by nobody; diskprobe's job files (directory=) are made before any job starts.
Applied set_create_serialize(State& s, const std::string& v, bool bare) {
  (void)truthy(v, bare);
  s.notes.push_back("job '" + s.job.name + "': create_serialize=" + v +
                    ": nothing to lay out on a block device; job files are made before any job starts");
  return {};
}

// fio's buffer contents (JobSpec::content): percentages 0..100, the chunk a size, the mode a word.
Setter set_content_percent(uint32_t BufferContent::*field) {
  return [field](State& s, const std::string& v, bool) -> Applied {
    auto n = whole_number(v, 0, 100);
    if (!n) return {"use a whole percentage from 0 to 100", ""};
    s.job.spec.content.*field = *n;
    return {};
  };
}

Applied set_compress_chunk(State& s, const std::string& v, bool) {
  auto n = parse_size(v);
  if (!n || *n > (64u << 20)) return {"use a size like 512 or 4k", ""};
  s.job.spec.content.compress_chunk = static_cast<uint32_t>(*n);
  return {};
}

Applied set_dedupe_mode(State& s, const std::string& v, bool) {
  if (v == "repeat" || v == "working_set") {
    s.job.spec.content.working_set = v == "working_set";
    return {};
  }
  return {"use repeat or working_set", ""};
}

Applied set_dedupe_global(State& s, const std::string& v, bool bare) {
  s.job.spec.content.dedupe_global = truthy(v, bare);
  return {};
}

// fio's random_center: where zipf, pareto and normal put their peak (0..1).
Applied set_random_center(State& s, const std::string& v, bool) {
  auto c = parse_decimal(v);
  if (!c || *c > 1.0) return {"use a fraction from 0 to 1, like 0.5", ""};
  s.job.spec.shape.dist_center = *c;
  return {};
}

// fio's iodepth_low: 0 is iodepth (fio: a low mark above iodepth or 0 becomes iodepth).
Applied set_iodepth_low(State& s, const std::string& v, bool) {
  auto n = whole_number(v, 0, 65536);
  if (!n) return {"use a whole number of I/Os, like 4", ""};
  s.job.spec.iodepth_low = *n;
  return {};
}

// Options whose only value here is fio's default are taken: they ask for what diskprobe does.
Setter only(const std::string& fio_default, const std::string& why) {
  return [fio_default, why](State&, const std::string& v, bool bare) -> Applied {
    if (!bare && v == fio_default) return {};
    return {"", why};
  };
}

const std::map<std::string, Setter>& table() {
  static const std::map<std::string, Setter> t = {
      {"rw", set_rw},
      {"readwrite", set_rw},
      {"bs", field("bs")},
      {"blocksize", field("bs")},
      {"bsrange", set_bsrange},
      {"blocksize_range", set_bsrange},
      {"iodepth", field("iodepth")},
      {"iodepth_low", set_iodepth_low},
      {"numjobs", field("numjobs")},
      {"runtime", field("runtime")},
      {"timeout", field("runtime")},
      {"time_based", set_time_based},
      {"ramp_time", field("ramp_time")},
      {"size", field("size")},
      {"offset", field("offset")},
      {"io_size", field("io_size")},
      {"io_limit", field("io_size")},
      {"norandommap", field("norandommap")},
      {"randrepeat", field("randrepeat")},
      {"randseed", field("randseed")},
      {"refill_buffers", field("refill_buffers")},
      {"direct", field("direct")},
      {"buffered", set_buffered},
      {"sync", set_sync},
      {"rwmixread", field("rwmixread")},
      {"rwmixwrite", set_rwmixwrite},
      {"ioengine", set_ioengine},
      {"iodepth_batch", field("iodepth_batch_submit")},
      {"iodepth_batch_submit", field("iodepth_batch_submit")},
      {"cpus_allowed", field("cpus_allowed")},
      {"cpus_allowed_policy", field("cpus_allowed_policy")},
      {"hipri", field("hipri")},
      {"sqthread_poll", field("sqpoll")},
      {"force_async", field("force_async")},
      {"continue_on_error", field("continue_on_error")},
      {"verify", set_verify},
      {"do_verify", field("do_verify")},
      {"group_reporting", field("group_reporting")},
      {"percentile_list", field("percentiles")},
      {"rate", set_rate("rate")},
      {"rate_iops", set_rate("rate_iops")},
      {"ss", field("ss")},
      {"steadystate", field("ss")},
      {"ss_dur", field("ss_dur")},
      {"steadystate_duration", field("ss_dur")},
      {"ss_ramp", field("ss_ramp")},
      {"steadystate_ramp_time", field("ss_ramp")},
      {"directory", set_directory},
      {"filename", set_filename},
      {"description", set_description},
      {"name", set_name},
      {"stonewall", set_stonewall},
      {"wait_for_previous", set_stonewall},
      {"new_group", set_new_group},
      {"kb_base", only("1024", "kb_base=1000 (decimal units) is not implemented")},
      {"startdelay", field("startdelay")},
      {"loops", field("loops")},
      {"wait_for", set_wait_for},
      {"number_ios", field("number_ios")},
      {"filesize", set_filesize},
      {"unit_base", only("0", "unit_base is not implemented")},
      {"bssplit", set_bssplit},
      {"rate_process", set_rate_process},
      {"ratemin", set_rate_floor(true)},
      {"rate_min", set_rate_floor(true)},
      {"rate_iops_min", set_rate_floor(false)},
      {"ratecycle", set_ratecycle},
      {"rate_cycle", set_ratecycle},
      {"io_submit_mode", set_io_submit_mode},
      {"blockalign", set_blockalign},
      {"ba", set_blockalign},
      {"random_distribution", set_random_distribution},
      {"random_center", set_random_center},
      {"thinktime", set_thinktime},
      {"thinktime_blocks", set_thinktime_blocks},
      {"write_bw_log", set_log(&IoLogs::bw)},
      {"write_lat_log", set_log(&IoLogs::lat)},
      {"write_iops_log", set_log(&IoLogs::iops)},
      {"log_avg_msec", set_log_avg_msec},
      {"log_offset", set_log_flag(&IoLogs::offset)},
      {"log_prio", set_log_flag(&IoLogs::prio)},
      {"zonemode", set_zonemode},
      {"zonesize", set_zone_bytes(&IoShape::zone_size)},
      {"zonerange", set_zone_bytes(&IoShape::zone_range)},
      {"zoneskip", set_zone_bytes(&IoShape::zone_skip)},
      {"flow", set_flow_number("flow")},
      {"flow_id", set_flow_number("flow_id")},
      {"flow_sleep", set_flow_number("flow_sleep")},
      {"prioclass", set_prioclass},
      {"prio", set_prio},
      {"cmdprio_percentage", set_cmdprio(&State::cmd_percent, 100, "use a percentage from 0 to 100 (reads,writes)")},
      {"cmdprio_class", set_cmdprio(&State::cmd_class, 3, "use a class from 0 to 3 (reads,writes)")},
      {"cmdprio", set_cmdprio(&State::cmd_level, 7, "use a level from 0 to 7 (reads,writes)")},
      {"cmdprio_bssplit", set_cmdprio_bssplit},
      {"exitall", set_exitall},
      {"exit_what", set_exit_what},
      {"latency_target", set_latency_time(&LatencyTarget::target_ns)},
      {"latency_window", set_latency_time(&LatencyTarget::window_ns)},
      {"latency_percentile", set_latency_percentile},
      {"random_generator", set_random_generator},
      {"numa_cpu_nodes", set_numa_cpu_nodes},
      {"buffer_compress_percentage", set_content_percent(&BufferContent::compress_percentage)},
      {"buffer_compress_chunk", set_compress_chunk},
      {"dedupe_percentage", set_content_percent(&BufferContent::dedupe_percentage)},
      {"dedupe_working_set_percentage", set_content_percent(&BufferContent::working_set_percentage)},
      {"dedupe_mode", set_dedupe_mode},
      {"dedupe_global", set_dedupe_global},
      {"verify_pattern", set_verify_pattern},
      {"verify_interval", set_verify_interval},
      {"verify_backlog", set_verify_backlog},
      {"verify_dump", set_verify_dump},
      {"offset_increment", set_offset_increment},
      {"fill_device", set_fill_device},
      {"fill_fs", set_fill_device},
      {"create_serialize", set_create_serialize},
      {"numa_mem_policy", set_numa_mem_policy},
      {"rw_sequencer", only("sequential", "rw_sequencer=identical is not implemented")},
  };
  return t;
}

Unsupported unsupported(const FioJob& j, const Option& o, std::string why) {
  return {j.name, o.where, o.key + (o.value ? "=" + *o.value : ""), std::move(why)};
}

// fio 3.33's defaults for what a job names most, stated in full (not left to JobSpec's, which
// are diskprobe's and may change): a job that names only rw and a file does what fio does.
JobSpec fio_defaults(const std::string& name) {
  JobSpec s;
  s.name = name;
  s.rw = RwMode::Read;
  s.bs = 4096;
  s.iodepth = 1;
  s.numjobs = 1;
  s.runtime_s = 0;
  s.time_based = false;
  s.direct = false;
  s.engine = EngineKind::Sync;
  s.group_reporting = false;
  s.io_depths = true;  // fio prints them for every job
  return s;
}

}  // namespace

Jobs to_jobs(const Input& in) {
  Jobs out;
  int groupid = 0;
  for (const auto& j : in.jobs) {
    FioJob job;
    job.name = j.name;
    job.where = j.where;
    job.spec = fio_defaults(j.name);
    job.stonewall = j.file_stonewall;
    State st{job, out.notes};
    for (size_t k = 0; k < j.options.size(); ++k) {
      const Option& o = j.options[k];
      // fio names a job after its section: a global name= is overridden by the header (fio's
      // JSON says "file1" for fio-rand-read.fio's [file1] under name=fio-rand-read).
      if (o.key == "name" && k < j.own_from) continue;
      if (const char* why = fio_always_done(o.key)) {
        out.notes.push_back("job '" + j.name + "': " + o.key + (o.value ? "=" + *o.value : "") + " ignored: " + why);
        continue;
      }
      auto it = table().find(o.key);
      if (it == table().end()) {
        out.unsupported.push_back(unsupported(job, o, ""));
        continue;
      }
      Applied a = it->second(st, o.value.value_or(""), !o.value.has_value());
      if (!a.unsupported.empty()) out.unsupported.push_back(unsupported(job, o, a.unsupported));
      if (!a.error.empty()) {
        out.errors.push_back(o.where + ": job '" + j.name + "': " + o.key + "=" + excerpt(o.value.value_or("")) + ": " +
                             a.error);
      }
    }
    if (!st.strided && (job.spec.shape.zone_size || job.spec.shape.zone_range || job.spec.shape.zone_skip)) {
      out.errors.push_back(j.where + ": job '" + j.name + "': zonesize, zonerange and zoneskip need zonemode=strided "
                           "(fio: --zonemode=none and --zonesize are not compatible)");
    }
    settle_priority(st, j.where, out.errors);
    if (st.fill_device) {
      if (!job.spec.directory.empty() && job.filenames.empty()) {
        out.unsupported.push_back({job.name, j.where, "fill_device=1",
                                   "fill_device on files in a directory (filling its filesystem) is not implemented"});
      }
      job.spec.size = 0;  // to the end of the device from offset
      job.spec.size_percent = 0;
      st.filesize.reset();
      job.fill_device = true;
    }
    if (!job.spec.verify_pattern.empty() && !st.verify_given) {
      // fio: a verify_pattern without verify is verify=pattern, read back as the pattern.
      job.spec.verify = VerifyKind::Crc32c;
      out.notes.push_back("job '" + j.name + "': verify_pattern without verify: each block read back and checked "
                          "(fio's verify=pattern), by its header and crc32c over the pattern");
    }
    if (st.lfsr) {
      if (job.spec.norandommap) {
        out.notes.push_back("job '" + j.name + "': random_generator=lfsr: every block once a pass, as fio's LFSR, "
                            "norandommap or not (diskprobe's random map, in its own order)");
      }
      job.spec.norandommap = false;
    }
    if (st.filesize) {
      // One file: its size is the region fio's size would give; size and filesize both is two.
      if (job.spec.size || job.spec.size_percent) {
        out.unsupported.push_back({job.name, j.where, "filesize=" + std::to_string(*st.filesize),
                                   "filesize beside size (files of one size, the job's bytes another) is not implemented"});
      } else if (job.filenames.size() > 1) {
        out.unsupported.push_back({job.name, j.where, "filesize=" + std::to_string(*st.filesize),
                                   "filesize over several files is not implemented"});
      } else {
        job.spec.size = *st.filesize;
      }
    }
    if (!job.spec.wait_for.empty()) {
      bool before = std::any_of(out.jobs.begin(), out.jobs.end(), [&](const FioJob& o) { return o.name == job.spec.wait_for; });
      if (!before) {
        out.errors.push_back(j.where + ": job '" + j.name + "': wait_for=" + excerpt(job.spec.wait_for) +
                             ": no job of that name before it (wait_for names an earlier job)");
      }
    }
    // fio lays a job without filename or directory out as NAME.N.0 in the working directory.
    if (job.filenames.empty() && job.spec.directory.empty()) {
      std::error_code ec;
      std::string cwd = std::filesystem::current_path(ec).string();
      if (ec) out.errors.push_back(j.where + ": job '" + j.name + "' names no filename and the working directory is unknown");
      job.spec.directory = cwd;
    }
    // fio puts a filename inside directory, an absolute one too (directory=/d filename=/x is /d/x).
    if (!job.spec.directory.empty() && !job.filenames.empty()) {
      for (auto& f : job.filenames) f = (std::filesystem::path(job.spec.directory) / std::filesystem::path(f).relative_path()).string();
      job.spec.directory.clear();
    }
    // fio: a stonewall starts a new group too; the first job is group 0.
    if (!out.jobs.empty() && (job.stonewall || job.new_group)) ++groupid;
    job.groupid = groupid;
    job.spec.exitall.group = groupid;
    if (st.offset_increment && job.spec.numjobs > 1) {
      if (job.spec.offset_percent > 0) {
        out.unsupported.push_back({job.name, j.where, "offset_increment=" + std::to_string(st.offset_increment),
                                   "offset_increment beside a percentage offset is not implemented"});
      }
      // fio's clones at offset + k x increment: each a job of its own, all at the same time, in
      // the clones' order (their seeds and numbers as the clones'), reported as fio reports them.
      const uint32_t n = job.spec.numjobs;
      out.notes.push_back("job '" + j.name + "': offset_increment=" + std::to_string(st.offset_increment) + ": its " +
                          std::to_string(n) + " clones from offset " + std::to_string(job.spec.offset) + " on, " +
                          std::to_string(st.offset_increment) + " bytes apart");
      job.spec.numjobs = 1;
      for (uint32_t k = 0; k < n; ++k) {
        FioJob clone = job;
        clone.spec.offset += k * st.offset_increment;
        if (k > 0) clone.stonewall = clone.new_group = false;
        out.jobs.push_back(std::move(clone));
      }
      continue;
    }
    out.jobs.push_back(std::move(job));
  }
  return out;
}

std::vector<std::string> supported_options() {
  std::vector<std::string> names;
  for (const auto& [name, setter] : table()) names.push_back(name);
  return names;
}

}  // namespace diskprobe::profiles::fio
