#include "gpu/buffer_pool.h"

#include <algorithm>

#include <fmt/format.h>

#include <bit>

#include "gpu/gpu_error.h"

namespace onda::gpu {

wgpu::Buffer create_buffer(Context& context, uint64_t size, wgpu::BufferUsage usage, const char* label) {
  const uint64_t max_size = context.limits().maxBufferSize;
  if (size > max_size) {
    throw DeviceLimitError(fmt::format("buffer '{}' of {} bytes exceeds the device's maxBufferSize of {} bytes ({})",
                                       label, size, max_size, context.adapter_description().name));
  }
  wgpu::BufferDescriptor descriptor;
  descriptor.label = label;
  descriptor.size = (size + 3) & ~uint64_t{3};  // WebGPU copies and writes work in 4-byte units
  descriptor.usage = usage;
  wgpu::Buffer buffer;
  std::string error = context.capture_error(wgpu::ErrorFilter::OutOfMemory,
                                            [&] { buffer = context.device().CreateBuffer(&descriptor); });
  if (!error.empty()) {
    throw OutOfMemoryError(fmt::format("out of GPU memory allocating buffer '{}' of {} bytes ({:.1f} MiB) on {}: {}",
                                       label, size, static_cast<double>(size) / (1 << 20),
                                       context.adapter_description().name, error));
  }
  return buffer;
}

PooledBuffer::~PooledBuffer() {
  auto pool = pool_.lock();
  if (!pool) return;
  std::lock_guard lock(pool->mutex);
  pool->stats.bytes_in_use -= size_;
  pool->free_by_size[size_].push_back(std::move(buffer_));
}

uint64_t BufferPool::size_class(uint64_t size) {
  if (size <= 256) return 256;
  if (size <= 65536) return (size + 255) & ~uint64_t{255};
  // Eight classes per power of two above 64 KiB.
  const uint64_t step = std::bit_floor(size - 1) / 8;
  return (size + step - 1) / step * step;
}

std::shared_ptr<PooledBuffer> BufferPool::acquire(uint64_t size) {
  const uint64_t max_size = context_.limits().maxBufferSize & ~uint64_t{3};
  if (size > max_size) {
    throw DeviceLimitError(fmt::format("a buffer of {} bytes exceeds the device's maxBufferSize of {} bytes ({})", size,
                                       context_.limits().maxBufferSize, context_.adapter_description().name));
  }
  const uint64_t capacity = std::min(size_class(size), max_size);
  wgpu::Buffer buffer;
  {
    std::lock_guard lock(state_->mutex);
    auto it = state_->free_by_size.find(capacity);
    if (it != state_->free_by_size.end() && !it->second.empty()) {
      buffer = std::move(it->second.back());
      it->second.pop_back();
    }
  }
  if (!buffer) {
    try {
      buffer = create_buffer(context_, capacity, kStorageUsage, "onda pooled buffer");
    } catch (const OutOfMemoryError&) {
      trim();  // cached buffers of other sizes may be what stands in the way
      buffer = create_buffer(context_, capacity, kStorageUsage, "onda pooled buffer");
    }
    std::lock_guard lock(state_->mutex);
    state_->stats.bytes_allocated += capacity;
    state_->stats.allocations += 1;
  }
  std::lock_guard lock(state_->mutex);
  state_->stats.bytes_in_use += capacity;
  state_->stats.peak_bytes_in_use = std::max(state_->stats.peak_bytes_in_use, state_->stats.bytes_in_use);
  return std::make_shared<PooledBuffer>(std::move(buffer), capacity, state_);
}

std::vector<std::shared_ptr<PooledBuffer>> BufferPool::claim(std::span<const wgpu::Buffer> buffers) {
  std::vector<std::shared_ptr<PooledBuffer>> loans;
  std::lock_guard lock(state_->mutex);
  for (const wgpu::Buffer& wanted : buffers) {
    if (!wanted) continue;
    auto it = state_->free_by_size.find(wanted.GetSize());
    if (it == state_->free_by_size.end()) continue;
    auto& free = it->second;
    auto found = std::find_if(free.begin(), free.end(), [&](const wgpu::Buffer& b) { return b.Get() == wanted.Get(); });
    if (found == free.end()) continue;  // not this pool's, on loan already, or claimed by an earlier entry
    wgpu::Buffer buffer = std::move(*found);
    free.erase(found);
    state_->stats.bytes_in_use += it->first;
    state_->stats.peak_bytes_in_use = std::max(state_->stats.peak_bytes_in_use, state_->stats.bytes_in_use);
    loans.push_back(std::make_shared<PooledBuffer>(std::move(buffer), it->first, state_));
  }
  return loans;
}

void BufferPool::trim() {
  std::lock_guard lock(state_->mutex);
  for (auto& [size, buffers] : state_->free_by_size) {
    for (auto& buffer : buffers) buffer.Destroy();
    state_->stats.bytes_allocated -= size * buffers.size();
    buffers.clear();
  }
}

BufferPoolStats BufferPool::stats() const {
  std::lock_guard lock(state_->mutex);
  return state_->stats;
}

void BufferPool::reset_peak() {
  std::lock_guard lock(state_->mutex);
  state_->stats.peak_bytes_in_use = state_->stats.bytes_in_use;
}

}  // namespace onda::gpu
