// Uploads of large host data that lands on the GPU once (a model's weights) through a few reused
// staging buffers. The per-upload path (CommandRecorder::upload, Queue::WriteBuffer) makes a new
// mapped staging buffer for every tensor; on NVIDIA's Vulkan driver a first run's weights went up at
// ~1.1 GB/s that way (BS-RoFormer's 637 MB in 599 ms, docs/benchmarks.md), the cost of creating and
// first touching host-visible memory rather than of the copy. Here the staging memory is made once
// and cycled: uploads are packed into the current chunk, a full chunk's copies are submitted, and
// the chunk is mapped again for later uploads once the GPU is done with it.
//
// Copies reach the queue when their chunk fills or at flush(): call flush() before submitting work
// that reads the targets. A wrapped ring waits for the GPU to finish its oldest chunk's copies, and
// so for everything submitted before them: upload before recording work, not in between. Not
// thread-safe; one per Context.
#pragma once
#include <cstdint>
#include <vector>

#include "gpu/dawn.h"

namespace onda::gpu {

class Context;

class UploadRing {
 public:
  // Fresh staging memory is what costs (its first touch and zeroing), reused chunks go up fast: the
  // ring is small and cycled, 16 MiB in all (4 x 16 MiB made the chunks' creation most of a small
  // model's upload; docs/benchmark-log.md, 2026-12-06 sixth session).
  static constexpr uint64_t kChunkBytes = uint64_t{4} << 20;
  static constexpr size_t kChunks = 4;

  // Queues a copy of `bytes` bytes to `buffer` at `offset` (a multiple of 4; padded with zeros up to a
  // multiple of 4 bytes, for which the buffer must have room). Throws GpuError when a chunk cannot be
  // created or mapped.
  void upload(Context& context, const wgpu::Buffer& buffer, uint64_t offset, const void* data,
              uint64_t bytes);
  // As upload(), when the ring has room for `bytes` without waiting for the GPU (in the current chunk,
  // in chunks not made yet, or in chunks whose copies the GPU has finished) and true; false, having
  // queued nothing, when it would wait. A run's large constants, met while its work is being recorded
  // and submitted, take this: behind a slow GPU a wrapped ring would stall the recording until the GPU
  // caught up (HTDemucs' index grids on lavapipe, docs/benchmark-log.md).
  bool upload_if_ready(Context& context, const wgpu::Buffer& buffer, uint64_t offset, const void* data,
                       uint64_t bytes);
  // Submits the copies queued so far.
  void flush(Context& context);

 private:
  struct Chunk {
    wgpu::Buffer buffer;
    wgpu::Future mapped{};  // valid while a map is pending
    bool pending = false;
  };
  // Makes the next chunk current (mapped, empty, with a new encoder).
  void open_chunk(Context& context);

  std::vector<Chunk> chunks_;
  size_t next_ = 0;
  Chunk* current_ = nullptr;
  uint8_t* mapped_ = nullptr;
  uint64_t used_ = 0;
  wgpu::CommandEncoder encoder_;
};

}  // namespace onda::gpu
