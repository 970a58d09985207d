// A heap buffer aligned for O_DIRECT (4096: any logical block size Linux has), freed with the
// owner. Header-only: safety's sampler reads into it, the edge zeroing writes from it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>

namespace diskprobe {

inline constexpr size_t kDirectAlign = 4096;

struct FreeDeleter {
  void operator()(uint8_t* p) const { std::free(p); }
};
using AlignedBuffer = std::unique_ptr<uint8_t[], FreeDeleter>;

// At least `len` bytes (and one alignment unit); empty when out of memory.
inline AlignedBuffer aligned_buffer(size_t len) {
  void* mem = nullptr;
  if (posix_memalign(&mem, kDirectAlign, std::max(len, kDirectAlign)) != 0) return AlignedBuffer();
  return AlignedBuffer(static_cast<uint8_t*>(mem));
}

}  // namespace diskprobe
