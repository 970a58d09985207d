#include "blkid_probe.h"

#include <blkid/blkid.h>

#include <cerrno>
#include <cstdlib>

namespace diskprobe::safety {
namespace {

// libblkid reports failure as a negative number and sometimes, not always, sets errno.
std::string blkid_error(const char* what, const std::string& path, int err) {
  if (err > 0) return errno_message(what, path, err);
  return std::string(what) + "(" + path + "): libblkid error";
}

uint64_t to_offset(const std::optional<std::string>& s) {
  if (!s) return 0;
  return std::strtoull(s->c_str(), nullptr, 10);
}

}  // namespace

BlkidProbe& BlkidProbe::operator=(BlkidProbe&& o) noexcept {
  if (this != &o) {
    if (pr_) blkid_free_probe(pr_);
    pr_ = o.pr_;
    o.pr_ = nullptr;
  }
  return *this;
}

BlkidProbe::~BlkidProbe() {
  if (pr_) blkid_free_probe(pr_);
}

Result<BlkidProbe> BlkidProbe::over(int fd, const std::string& path, uint64_t offset, uint64_t size) {
  errno = 0;
  blkid_probe raw = blkid_new_probe();
  if (!raw) return make_error(blkid_error("blkid_new_probe", path, errno ? errno : ENOMEM));
  BlkidProbe p(raw);
  errno = 0;
  if (blkid_probe_set_device(raw, fd, static_cast<blkid_loff_t>(offset), static_cast<blkid_loff_t>(size)) != 0) {
    return make_error(blkid_error("blkid_probe_set_device", path, errno));
  }
  // wipefs' setup: every superblock, even one with a bad checksum, with its magic offset.
  if (blkid_probe_enable_superblocks(raw, 1) != 0 ||
      blkid_probe_set_superblocks_flags(
          raw, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_USAGE | BLKID_SUBLKS_MAGIC | BLKID_SUBLKS_BADCSUM) != 0 ||
      blkid_probe_enable_partitions(raw, 1) != 0 ||
      // FORCE_GPT: a GPT whose protective MBR is gone still counts.
      blkid_probe_set_partitions_flags(raw, BLKID_PARTS_MAGIC | BLKID_PARTS_FORCE_GPT) != 0) {
    return make_error(blkid_error("blkid_probe_enable", path, 0));
  }
  return p;
}

std::optional<std::string> BlkidProbe::value(const char* name) const {
  const char* data = nullptr;
  size_t len = 0;
  if (blkid_probe_lookup_value(pr_, name, &data, &len) != 0 || !data) return std::nullopt;
  return std::string(data);  // NUL-terminated; len counts the NUL
}

Result<std::vector<Signature>> BlkidProbe::all_signatures(const std::string& path) {
  std::vector<Signature> found;
  for (;;) {
    errno = 0;
    int rc = blkid_do_probe(pr_);
    if (rc == 1) break;
    if (rc < 0) return make_error(blkid_error("blkid_do_probe", path, errno));
    Signature s;
    if (auto type = value("TYPE")) {
      s.type = *type;
      s.usage = value("USAGE").value_or("other");
      s.offset = to_offset(value("SBMAGIC_OFFSET"));
    } else if (auto pttype = value("PTTYPE")) {
      s.type = *pttype;
      s.usage = "partition table";
      s.partition_table = true;
      s.offset = to_offset(value("PTMAGIC_OFFSET"));
    } else {
      continue;  // a chain that sets neither (topology) is not a signature
    }
    found.push_back(std::move(s));
  }
  return found;
}

std::string blkid_running_version() {
  const char* running = nullptr;
  blkid_get_library_version(&running, nullptr);
  return running ? running : "unknown";
}

}  // namespace diskprobe::safety
