#include "gpu/readback_buffers.h"

#include "gpu/buffer_pool.h"

namespace onda::gpu {

wgpu::Buffer ReadbackBuffers::acquire(Context& context, uint64_t bytes) {
  const uint64_t size = rounded(bytes);
  {
    std::lock_guard lock(mutex_);
    if (auto it = kept_.find(size); it != kept_.end()) {
      wgpu::Buffer buffer = std::move(it->second);
      kept_.erase(it);
      kept_bytes_ -= size;
      return buffer;
    }
  }
  return create_buffer(context, size, wgpu::BufferUsage::MapRead | wgpu::BufferUsage::CopyDst,
                       "onda readback");
}

void ReadbackBuffers::give_back(wgpu::Buffer buffer) {
  if (!buffer) return;
  const uint64_t size = buffer.GetSize();
  {
    std::lock_guard lock(mutex_);
    if (size <= kMaxKeptBuffer && kept_bytes_ + size <= kMaxKeptBytes) {
      kept_.emplace(size, std::move(buffer));
      kept_bytes_ += size;
      return;
    }
  }
  buffer.Destroy();
}

}  // namespace onda::gpu
