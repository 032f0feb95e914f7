// Bind groups reused across dispatches and runs. Creating one costs ~10 us of CPU in Dawn (validation,
// a descriptor set, its update: bench_recording), more than everything else a dispatch records, and
// a session that runs the same graph again binds the same buffers: the pool hands them out in the same
// order. The uniform blocks are what would differ, so their chunks are shared here too: the k-th
// 64 KiB uniform chunk of every recorder is one buffer (each recorder writes its own bytes into it with
// a queue write just before its submit, which the queue orders after the work already submitted), and
// the k-th dispatch of a run finds the bind group of the run before.
#pragma once
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpu/dawn.h"

namespace onda::gpu {

class Context;

class BindGroupCache {
 public:
  static constexpr size_t kUniformChunkBytes = 64 * 1024;
  // Entries kept before the cache starts over (stale ones, e.g. of buffers the pool destroyed,
  // go then; a bind group keeps its buffers' handles, not their memory, alive once destroyed).
  static constexpr size_t kMaxEntries = 16384;

  explicit BindGroupCache(Context& context) : context_(context) {}

  // The bind group of `layout` with `entries` (binding, buffer, offset, size each), created on a miss.
  wgpu::BindGroup get(const wgpu::BindGroupLayout& layout, std::span<const wgpu::BindGroupEntry> entries);

  // The index-th shared uniform chunk (created on first use).
  wgpu::Buffer uniform_chunk(size_t index);

  size_t size() const { return groups_.size(); }
  uint64_t misses() const { return misses_; }
  // Host time spent creating bind groups (the misses), summed since the cache was made.
  double create_ms() const { return create_ms_; }

 private:
  Context& context_;
  std::mutex mutex_;
  std::unordered_map<std::string, wgpu::BindGroup> groups_;
  std::vector<wgpu::Buffer> uniform_chunks_;
  uint64_t misses_ = 0;
  double create_ms_ = 0;
};

}  // namespace onda::gpu
