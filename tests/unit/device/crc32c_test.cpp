// CRC-32C: the hardware path and the table agree on known vectors and on random blocks.
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "diskprobe/device/block_header.h"

using namespace diskprobe;

TEST_CASE("crc32c: RFC 3720 check values") {
  const std::string digits = "123456789";
  CHECK(crc32c(0, digits.data(), digits.size()) == 0xE3069283u);
  CHECK(crc32c_portable(0, digits.data(), digits.size()) == 0xE3069283u);
  std::vector<uint8_t> zeros(32, 0), ones(32, 0xff), inc(32);
  for (size_t i = 0; i < inc.size(); ++i) inc[i] = static_cast<uint8_t>(i);
  CHECK(crc32c(0, zeros.data(), zeros.size()) == 0x8A9136AAu);
  CHECK(crc32c(0, ones.data(), ones.size()) == 0x62A8AB43u);
  CHECK(crc32c(0, inc.data(), inc.size()) == 0x46DD794Eu);
}

TEST_CASE("crc32c: hardware and table agree on every length and alignment, and chain") {
  std::mt19937_64 rng(42);
  std::vector<uint8_t> buf(4096 + 16);
  for (auto& b : buf) b = static_cast<uint8_t>(rng());
  INFO("hardware crc32c: " << crc32c_is_hardware());
  for (size_t off = 0; off < 9; ++off) {
    for (size_t len : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{9}, size_t{63}, size_t{512},
                       size_t{4096}}) {
      CHECK(crc32c(0, buf.data() + off, len) == crc32c_portable(0, buf.data() + off, len));
    }
  }
  uint32_t whole = crc32c(0, buf.data(), 4096);
  uint32_t chained = crc32c(crc32c(0, buf.data(), 1000), buf.data() + 1000, 3096);
  CHECK(whole == chained);
}

TEST_CASE("block_checksum: ignores the crc field and catches a changed byte") {
  std::vector<uint8_t> block(4096);
  std::mt19937_64 rng(7);
  for (auto& b : block) b = static_cast<uint8_t>(rng());
  BlockHeader h;
  h.offset = 8192;
  h.seq = 3;
  encode_block_header(block.data(), h);
  h.crc32c = block_checksum(block.data(), block.size());
  encode_block_header(block.data(), h);
  CHECK(block_checksum(block.data(), block.size()) == h.crc32c);
  block[2000] ^= 1;
  CHECK(block_checksum(block.data(), block.size()) != h.crc32c);
}
