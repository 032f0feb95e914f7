// Mappable staging buffers for readbacks, kept for reuse. Creating a MapRead buffer, mapping it for
// the first time and destroying it cost far more than the copy of a small output on some drivers
// (NVIDIA's Vulkan driver: most of a streamed frame's round trip, docs/benchmarks.md), and a stream or
// a repeated run reads back the same sizes every time. Thread-safe.
#pragma once
#include <cstdint>
#include <map>
#include <mutex>

#include "gpu/dawn.h"

namespace onda::gpu {

class Context;

class ReadbackBuffers {
 public:
  // Buffers larger than this are destroyed after use (a large readback's copy dwarfs the creation).
  static constexpr uint64_t kMaxKeptBuffer = uint64_t{16} << 20;
  // At most this many bytes are kept in all.
  static constexpr uint64_t kMaxKeptBytes = uint64_t{64} << 20;

  // A MapRead | CopyDst buffer of at least `bytes` (rounded up to 256), new or kept.
  wgpu::Buffer acquire(Context& context, uint64_t bytes);
  // Takes back an unmapped buffer from acquire: kept within the bounds above, else destroyed.
  void give_back(wgpu::Buffer buffer);

  static uint64_t rounded(uint64_t bytes) { return (bytes + 255) & ~uint64_t{255}; }

 private:
  std::mutex mutex_;
  std::multimap<uint64_t, wgpu::Buffer> kept_;  // by size
  uint64_t kept_bytes_ = 0;
};

}  // namespace onda::gpu
