#include "gpu/bind_group_cache.h"

#include <chrono>

#include "gpu/buffer_pool.h"
#include "gpu/context.h"

namespace onda::gpu {

wgpu::BindGroup BindGroupCache::get(const wgpu::BindGroupLayout& layout,
                                    std::span<const wgpu::BindGroupEntry> entries) {
  // The key: the layout's and buffers' handles with the offsets and sizes, as raw bytes.
  std::string key;
  key.reserve(sizeof(void*) + entries.size() * (sizeof(void*) + 20));
  const auto append = [&key](const void* data, size_t bytes) {
    key.append(static_cast<const char*>(data), bytes);
  };
  const WGPUBindGroupLayout layout_handle = layout.Get();
  append(&layout_handle, sizeof layout_handle);
  for (const wgpu::BindGroupEntry& e : entries) {
    const WGPUBuffer buffer = e.buffer.Get();
    append(&e.binding, sizeof e.binding);
    append(&buffer, sizeof buffer);
    append(&e.offset, sizeof e.offset);
    append(&e.size, sizeof e.size);
  }
  std::lock_guard lock(mutex_);
  if (auto it = groups_.find(key); it != groups_.end()) return it->second;
  if (groups_.size() >= kMaxEntries) groups_.clear();
  ++misses_;
  wgpu::BindGroupDescriptor descriptor;
  descriptor.layout = layout;
  descriptor.entryCount = entries.size();
  descriptor.entries = entries.data();
  const auto start = std::chrono::steady_clock::now();
  wgpu::BindGroup group = context_.device().CreateBindGroup(&descriptor);
  create_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  groups_.emplace(std::move(key), group);
  return group;
}

wgpu::Buffer BindGroupCache::uniform_chunk(size_t index) {
  std::lock_guard lock(mutex_);
  while (uniform_chunks_.size() <= index) {
    uniform_chunks_.push_back(create_buffer(context_, kUniformChunkBytes,
                                            wgpu::BufferUsage::Uniform | wgpu::BufferUsage::CopyDst,
                                            "onda uniforms"));
  }
  return uniform_chunks_[index];
}

}  // namespace onda::gpu
