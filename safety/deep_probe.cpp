#include "diskprobe/safety/deep_probe.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "diskprobe/safety/sampler.h"

namespace diskprobe::safety {
namespace {

constexpr uint64_t kKiB = 1024, kMiB = 1024 * kKiB, kGiB = 1024 * kMiB, kTiB = 1024 * kGiB;
constexpr size_t kGptEntriesBytes = 128 * 128;  // the default array: 128 entries of 128 bytes
constexpr size_t kMaxStarts = 32;               // leftover entries looked at, at most

uint64_t le(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = v << 8 | p[i];
  return v;
}
uint64_t be(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = v << 8 | p[i];
  return v;
}

// GPT entries: a type GUID that is not zero, and first <= last LBA inside the device.
void gpt_entries(const uint8_t* p, size_t len, uint64_t size, uint32_t lbs, std::set<uint64_t>& starts) {
  for (size_t e = 0; e + 128 <= len; e += 128) {
    const uint8_t* x = p + e;
    if (std::all_of(x, x + 16, [](uint8_t c) { return c == 0; })) continue;
    uint64_t first = le(x + 32, 8), last = le(x + 40, 8);
    if (first == 0 || first > last || last >= size / lbs) continue;
    starts.insert(first * lbs);
  }
}

struct Reader {
  const BlockReader& r;
  uint64_t size;
  DeepProbed& out;

  // `len` bytes at `offset`, cut at the device end; false (out.error set) when a read fails.
  bool read(uint64_t offset, size_t len, std::vector<uint8_t>& buf) {
    buf.clear();
    if (offset >= size) return true;
    len = static_cast<size_t>(std::min<uint64_t>(len, size - offset));
    // The reader wants 4096-aligned buffers.
    std::vector<uint8_t> tmp(len + 4096);
    auto base = reinterpret_cast<uintptr_t>(tmp.data());
    uint8_t* aligned = tmp.data() + (4096 - base % 4096) % 4096;
    auto st = r.read(offset, aligned, len);
    if (!st) {
      out.error = st.error();
      return false;
    }
    out.reads++;
    out.bytes_read += len;
    buf.assign(aligned, aligned + len);
    return true;
  }
};

std::string at_byte(uint64_t x) { return "at byte " + std::to_string(x); }

// ext2/3/4 backup superblocks: in the sparse_super groups 1, 3^k, 5^k, 7^k; each group of
// `per_group` blocks of `bs` bytes, group 0 starting at block `first`.
bool ext_backups(Reader& rd, uint64_t base, uint64_t fs_size, std::vector<Finding>& found) {
  struct Layout {
    uint64_t bs, per_group, first;
  };
  for (Layout l : {Layout{1024, 8192, 1}, Layout{2048, 16384, 0}, Layout{4096, 32768, 0}}) {
    std::set<uint64_t> groups{1};
    for (uint64_t m : {3, 5, 7}) {
      for (uint64_t g = m; (l.first + g * l.per_group) * l.bs < fs_size; g *= m) groups.insert(g);
    }
    for (uint64_t g : groups) {
      uint64_t at = (l.first + g * l.per_group) * l.bs;
      if (at + 1024 > fs_size) continue;
      std::vector<uint8_t> sb;
      if (!rd.read(base + at, 1024, sb)) return false;
      if (sb.size() < 1024 || le(&sb[56], 2) != 0xEF53) continue;
      // Magic, block size, blocks per group and the group number: a random match is ~2^-80.
      if ((1024ull << le(&sb[24], 4)) != l.bs || le(&sb[32], 4) != l.per_group || le(&sb[90], 2) != g) continue;
      found.push_back(Finding{base + at,
                              "an ext2/3/4 backup superblock (group " + std::to_string(g) + ", " +
                                  std::to_string(l.bs) + "-byte blocks) " + at_byte(base + at),
                              "a filesystem whose primary superblock is gone still holds its data"});
      return true;  // one is proof enough
    }
  }
  return true;
}

// btrfs superblock copies at 64 MiB and 256 GiB: magic at 0x40, their own offset at 0x30.
bool btrfs_backups(Reader& rd, uint64_t base, uint64_t fs_size, std::vector<Finding>& found) {
  for (uint64_t at : {64 * kMiB, 256 * kGiB}) {
    if (at + 4096 > fs_size) continue;
    std::vector<uint8_t> sb;
    if (!rd.read(base + at, 4096, sb)) return false;
    if (sb.size() < 0x48 || std::memcmp(&sb[0x40], "_BHRfS_M", 8) != 0 || le(&sb[0x30], 8) != at) continue;
    found.push_back(Finding{base + at, "a btrfs superblock copy " + at_byte(base + at),
                            "a filesystem whose primary superblock is gone still holds its data"});
    return true;
  }
  return true;
}

// xfs secondary superblocks at the start of allocation groups 1-3, for mkfs.xfs's default
// geometry on one disk (4 KiB blocks; 4 AGs above 128 MiB, 2 above 64 MiB; AGs of 1 TiB less
// a block from 4 TiB): "XFSB" and an sb_agblocks that says where it sits.
bool xfs_backups(Reader& rd, uint64_t base, uint64_t fs_size, std::vector<Finding>& found) {
  const uint64_t bs = 4096, dblocks = fs_size / bs;
  uint64_t ag = 0;
  if (fs_size >= 4 * kTiB) {
    ag = (kTiB - 1) / bs;
  } else if (fs_size > 64 * kMiB) {
    int shift = fs_size > 128 * kMiB ? 2 : 1;
    ag = dblocks >> shift;
    if (dblocks & ((1ull << shift) - 1)) ag++;
  }
  if (!ag) return true;
  for (uint64_t k = 1; k <= 3; ++k) {
    uint64_t at = k * ag * bs;
    if (at + 512 > fs_size) break;
    std::vector<uint8_t> sb;
    if (!rd.read(base + at, 512, sb)) return false;
    if (sb.size() < 92 || std::memcmp(sb.data(), "XFSB", 4) != 0 || be(&sb[4], 4) != bs || be(&sb[84], 4) != ag)
      continue;
    found.push_back(Finding{base + at,
                            "an xfs secondary superblock (allocation group " + std::to_string(k) + ") " +
                                at_byte(base + at),
                            "a filesystem whose primary superblock is gone still holds its data"});
    return true;
  }
  return true;
}

}  // namespace

std::vector<uint64_t> leftover_partition_starts(const std::vector<uint8_t>& head, const std::vector<uint8_t>& tail,
                                                uint64_t size, uint32_t lbs) {
  std::set<uint64_t> starts;
  // MBR entries (16 bytes from 446), with or without the 0x55AA that wipefs erases.
  if (head.size() >= 512) {
    for (size_t e = 446; e + 16 <= 510; e += 16) {
      const uint8_t* x = &head[e];
      uint64_t type = x[4], first = le(x + 8, 4), count = le(x + 12, 4);
      if (type == 0 || type == 0xee || first == 0 || count == 0 || (first + count) * lbs > size) continue;
      starts.insert(first * lbs);
    }
  }
  if (head.size() > 2ull * lbs) gpt_entries(&head[2ull * lbs], head.size() - 2ull * lbs, size, lbs, starts);
  gpt_entries(tail.data(), tail.size(), size, lbs, starts);
  std::vector<uint64_t> v(starts.begin(), starts.end());
  if (v.size() > kMaxStarts) v.resize(kMaxStarts);
  return v;
}

DeepProbed deep_probe(const DeviceProber& prober, const Fd& fd, const std::string& path, uint64_t size,
                      uint32_t logical_block_size, uint64_t device_id, const std::vector<Signature>& whole) {
  DeepProbed out;
  const uint32_t lbs = logical_block_size ? logical_block_size : 512;
  auto reader = prober.reader(fd, path, lbs);
  Reader rd{*reader, size, out};

  // Where a first partition starts; then what leftover tables name (a damaged backup GPT
  // header still says where its entries are).
  std::set<uint64_t> starts{34ull * 512, 63ull * 512, 2048ull * 512};
  std::vector<uint8_t> head, tail, hdr, named;
  if (!rd.read(0, 2ull * lbs + kGptEntriesBytes, head)) return out;
  uint64_t tail_at = size > lbs + kGptEntriesBytes ? size - lbs - kGptEntriesBytes : 0;
  if (!rd.read(tail_at, static_cast<size_t>(size - tail_at - std::min<uint64_t>(size, lbs)), tail)) return out;
  if (size >= lbs && !rd.read(size - lbs, lbs, hdr)) return out;
  if (hdr.size() >= 92) {
    uint64_t lba = le(&hdr[72], 8), n = le(&hdr[80], 4), esz = le(&hdr[84], 4);
    if (esz == 128 && n > 0 && n <= 128 && lba > 1 && (lba + 1) * lbs < size && lba * lbs != tail_at) {
      if (!rd.read(lba * lbs, static_cast<size_t>(n * esz), named)) return out;
      tail.insert(tail.end(), named.begin(), named.end());
    }
  }
  for (uint64_t s : leftover_partition_starts(head, tail, size, lbs)) starts.insert(s);
  std::set<uint64_t> has_fs;  // bases where libblkid found a filesystem already
  auto is_fs = [](const Signature& sig) { return !sig.partition_table && sig.usage == "filesystem"; };
  if (std::any_of(whole.begin(), whole.end(), is_fs)) has_fs.insert(0);

  for (uint64_t s : starts) {
    if (s + 64 * kKiB > size) continue;
    out.blkid_probes++;
    Probed p = prober.probe_range(fd, path, s, size - s);
    if (!p.ok) {
      out.error = p.error;
      return out;
    }
    for (const auto& sig : p.signatures) {
      if (is_fs(sig)) has_fs.insert(s);
      out.findings.push_back(Finding{s + sig.offset, "",
                                     "where a first partition starts: a filesystem without a partition "
                                     "table; was the table wiped?",
                                     false, sig, s});
    }
  }
  std::vector<uint64_t> bases{0};
  bases.insert(bases.end(), starts.begin(), starts.end());
  for (uint64_t b : bases) {
    if (b >= size || has_fs.count(b)) continue;
    if (!ext_backups(rd, b, size - b, out.findings) || !btrfs_backups(rd, b, size - b, out.findings) ||
        !xfs_backups(rd, b, size - b, out.findings))
      return out;
  }

  if (size <= kWholeReadMaxBytes) {
    SampleReport r = scan_whole_device(*reader, size, device_id, device_id | 1);
    out.bytes_read += r.bytes_read;
    if (!r.ok) {
      out.error = r.error;
      return out;
    }
    for (const auto& f : r.foreign) {
      out.findings.push_back(Finding{f.offset, f.what + " " + at_byte(f.offset),
                                     "a device this small is read whole, and holds only zeroes after a "
                                     "diskprobe run",
                                     true});
    }
  }
  out.ok = true;
  return out;
}

}  // namespace diskprobe::safety
