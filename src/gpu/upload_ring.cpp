#include "gpu/upload_ring.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "gpu/context.h"
#include "gpu/gpu_error.h"

namespace onda::gpu {

void UploadRing::open_chunk(Context& context) {
  flush(context);
  if (chunks_.size() < kChunks) {
    wgpu::BufferDescriptor descriptor;
    descriptor.label = "onda upload ring";
    descriptor.size = kChunkBytes;
    descriptor.usage = wgpu::BufferUsage::MapWrite | wgpu::BufferUsage::CopySrc;
    descriptor.mappedAtCreation = true;
    chunks_.push_back({context.device().CreateBuffer(&descriptor)});
    current_ = &chunks_.back();
  } else {
    current_ = &chunks_[next_];
    next_ = (next_ + 1) % chunks_.size();
    if (current_->pending) {
      context.wait(current_->mapped);  // the GPU has copied out of this chunk
      current_->pending = false;
    }
  }
  mapped_ = static_cast<uint8_t*>(current_->buffer.GetMappedRange(0, kChunkBytes));
  if (!mapped_) {
    current_ = nullptr;
    throw GpuError(fmt::format("could not map a {} byte upload staging buffer", kChunkBytes));
  }
  used_ = 0;
  encoder_ = context.device().CreateCommandEncoder();
}

void UploadRing::upload(Context& context, const wgpu::Buffer& buffer, uint64_t offset, const void* data,
                        uint64_t bytes) {
  if (offset % 4 != 0) throw GpuError("upload offset must be a multiple of 4 bytes");
  const auto* source = static_cast<const uint8_t*>(data);
  for (uint64_t done = 0; done < bytes;) {
    if (!current_ || used_ == kChunkBytes) open_chunk(context);
    // used_ and kChunkBytes are multiples of 4, so every piece but the last is too.
    const uint64_t piece = std::min(bytes - done, kChunkBytes - used_);
    const uint64_t padded = (piece + 3) & ~uint64_t{3};
    std::memcpy(mapped_ + used_, source + done, piece);
    std::memset(mapped_ + used_ + piece, 0, padded - piece);
    encoder_.CopyBufferToBuffer(current_->buffer, used_, buffer, offset + done, padded);
    used_ += padded;
    done += piece;
  }
}

void UploadRing::flush(Context& context) {
  if (!current_) return;
  Chunk& chunk = *current_;
  current_ = nullptr;
  mapped_ = nullptr;
  chunk.buffer.Unmap();
  wgpu::CommandBuffer commands = encoder_.Finish();
  encoder_ = nullptr;
  context.queue().Submit(1, &commands);
  chunk.mapped = chunk.buffer.MapAsync(wgpu::MapMode::Write, 0, kChunkBytes, wgpu::CallbackMode::WaitAnyOnly,
                                       [](wgpu::MapAsyncStatus, wgpu::StringView) {});
  chunk.pending = true;
  context.check_errors();
}

}  // namespace onda::gpu
