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

bool UploadRing::upload_if_ready(Context& context, const wgpu::Buffer& buffer, uint64_t offset, const void* data,
                                 uint64_t bytes) {
  const uint64_t padded = (bytes + 3) & ~uint64_t{3};
  const uint64_t room = current_ ? kChunkBytes - used_ : 0;
  if (padded > room) {
    // The chunks open_chunk would take, in its order: new ones while fewer than kChunks exist, then
    // chunks_[next_] onwards. None may be one this upload fills itself (at most the other chunks).
    const uint64_t needed = (padded - room + kChunkBytes - 1) / kChunkBytes;
    if (needed > kChunks - (current_ ? 1 : 0)) return false;
    size_t made = chunks_.size(), next = next_;
    for (uint64_t c = 0; c < needed; ++c) {
      if (made < kChunks) {
        ++made;
        continue;
      }
      Chunk& chunk = chunks_[next];
      next = (next + 1) % kChunks;
      if (!chunk.pending) continue;
      if (context.instance().WaitAny(chunk.mapped, 0) != wgpu::WaitStatus::Success) return false;
      chunk.pending = false;  // mapped again: open_chunk takes it without waiting
    }
  }
  upload(context, buffer, offset, data, bytes);
  return true;
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
