// A pool of storage buffers. Buffers are grouped in size classes (256 B steps up to 64 KiB, then
// eight steps per power of two, so at most 12.5% is wasted) and handed back to the pool when the
// last reference drops, so a session that runs the same graph many times allocates only once.
// Allocation failures are caught with an error scope and reported with the size that was asked for.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "gpu/context.h"

namespace onda::gpu {

class BufferPool;

// One buffer on loan from the pool; returns itself when destroyed.
class PooledBuffer {
 public:
  PooledBuffer(wgpu::Buffer buffer, uint64_t size, std::weak_ptr<struct BufferPoolState> pool)
      : buffer_(std::move(buffer)), size_(size), pool_(std::move(pool)) {}
  ~PooledBuffer();
  PooledBuffer(const PooledBuffer&) = delete;
  PooledBuffer& operator=(const PooledBuffer&) = delete;

  const wgpu::Buffer& buffer() const { return buffer_; }
  uint64_t size() const { return size_; }  // capacity (the size class), >= the size asked for

 private:
  wgpu::Buffer buffer_;
  uint64_t size_;
  std::weak_ptr<struct BufferPoolState> pool_;
};

struct BufferPoolStats {
  uint64_t bytes_in_use = 0;      // on loan now
  uint64_t peak_bytes_in_use = 0;
  uint64_t bytes_allocated = 0;   // on loan + cached in the pool
  uint64_t allocations = 0;       // buffers created on the device so far
};

struct BufferPoolState {
  std::mutex mutex;
  std::map<uint64_t, std::vector<wgpu::Buffer>> free_by_size;
  BufferPoolStats stats;
};

class BufferPool {
 public:
  static constexpr wgpu::BufferUsage kStorageUsage =
      wgpu::BufferUsage::Storage | wgpu::BufferUsage::CopySrc | wgpu::BufferUsage::CopyDst;

  explicit BufferPool(Context& context) : context_(context) {}

  // A storage buffer of at least `size` bytes. Throws DeviceLimitError above maxBufferSize and
  // OutOfMemoryError when the device cannot allocate it.
  std::shared_ptr<PooledBuffer> acquire(uint64_t size);

  // Takes those of `buffers` that sit in the pool's free lists on loan again (each once), so that
  // the pool hands them to no one else until the returned loans drop: how a replayable run keeps
  // the buffers its commands name (the runtime's run capture; see gpu/command_tape.h).
  std::vector<std::shared_ptr<PooledBuffer>> claim(std::span<const wgpu::Buffer> buffers);

  // Drops every cached (not on loan) buffer.
  void trim();
  BufferPoolStats stats() const;
  void reset_peak();

  static uint64_t size_class(uint64_t size);

 private:
  Context& context_;
  std::shared_ptr<BufferPoolState> state_ = std::make_shared<BufferPoolState>();
};

// Creates one buffer outside the pool, with the out-of-memory check and a clear message.
wgpu::Buffer create_buffer(Context& context, uint64_t size, wgpu::BufferUsage usage, const char* label);

}  // namespace onda::gpu
