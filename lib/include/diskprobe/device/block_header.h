// The header at the start of every block diskprobe writes. It lets a later run tell
// diskprobe's own data from foreign data (safety's sampler) and lets a verify pass check
// that the device returned what it was given.
//
// Layout, 48 bytes, every integer little-endian:
//   0  char[8] magic      "DSKPROBE"
//   8  u32     version    kBlockHeaderVersion
//  12  u32     crc32c     of the whole block with this field taken as 0; 0 = not computed
//  16  u64     device_id  device_identity() of the device written
//  24  u64     run_id     random per run, shared by every job of the run
//  32  u64     offset     byte offset of the block on the device
//  40  u64     seq        per-job write sequence number (starts at 1)
// A block shorter than the header (never: bs >= 512) would carry a truncated header.
//
// Version 2 (kContentHeaderVersion) is a content block's (fio's dedupe_percentage and
// buffer_compress_percentage): the same fields, but `offset` holds the content's key and seq is
// 0, so two writes of the same content are the same bytes (a deduplicating volume stores them
// once) wherever they land. It still names the device and the run; it cannot say where it was
// written, and a verify cannot check it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace diskprobe {

struct BlockDevice;

inline constexpr char kBlockMagic[8] = {'D', 'S', 'K', 'P', 'R', 'O', 'B', 'E'};
inline constexpr uint32_t kBlockHeaderVersion = 1;
inline constexpr uint32_t kContentHeaderVersion = 2;
inline constexpr size_t kBlockHeaderBytes = 48;
inline constexpr size_t kBlockHeaderCrcOffset = 12;

struct BlockHeader {
  uint32_t version = kBlockHeaderVersion;  // kContentHeaderVersion: offset holds the content's key
  uint64_t device_id = 0;
  uint64_t run_id = 0;
  uint64_t offset = 0;
  uint64_t seq = 0;
  uint32_t crc32c = 0;
};

// Writes the header into the first kBlockHeaderBytes of buf (buf must hold that many).
void encode_block_header(uint8_t* buf, const BlockHeader& h);

// The header at the start of `block`, when it starts with the magic and a known version.
std::optional<BlockHeader> decode_block_header(const uint8_t* block, size_t len);

// A stable 64-bit identity of a device that survives reboots and renames where sysfs gives
// a serial or WWID: FNV-1a of "serial|wwid|model|size"; without any of those, of
// "name|size". Two devices of the same size without serials share an identity.
uint64_t device_identity(const BlockDevice& dev);
uint64_t device_identity_from(std::string_view serial, std::string_view wwid,
                              std::string_view model, std::string_view name, uint64_t size);

// CRC-32C (Castagnoli) of len bytes, continuing from crc (0 to start). Uses SSE4.2's crc32
// instruction where the CPU has it (checked once at run time), a table otherwise.
uint32_t crc32c(uint32_t crc, const void* data, size_t len);
// The table version, always; tests compare the two.
uint32_t crc32c_portable(uint32_t crc, const void* data, size_t len);
bool crc32c_is_hardware();

// The checksum a header records for `block`: crc32c of the block with the header's crc
// field read as zero.
uint32_t block_checksum(const uint8_t* block, size_t len);

// Computes block_checksum() of a block whose header is already encoded and stores it in the
// header's crc field (len >= kBlockHeaderBytes).
void store_block_checksum(uint8_t* block, size_t len);

}  // namespace diskprobe
