// 64-bit FNV-1a: names cache files after their keys and checksums the pipeline manifest. Not a
// cryptographic hash: every reader also compares what the name or checksum stands for, or tolerates
// a miss.
#pragma once
#include <cstddef>
#include <cstdint>

namespace onda::gpu {

inline constexpr uint64_t kFnv1aOffset = 1469598103934665603ull;

inline uint64_t fnv1a(const void* data, size_t size, uint64_t hash = kFnv1aOffset) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= 1099511628211ull;
  }
  return hash;
}

}  // namespace onda::gpu
