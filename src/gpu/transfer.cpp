#include "gpu/transfer.h"

#include <cstring>

#include "gpu/buffer_pool.h"
#include "gpu/gpu_error.h"

namespace onda::gpu {

void upload(Context& context, const wgpu::Buffer& buffer, uint64_t offset, const void* data, uint64_t bytes) {
  if (bytes == 0) return;
  if (bytes % 4 == 0 && offset % 4 == 0) {
    context.queue().WriteBuffer(buffer, offset, data, bytes);
    return;
  }
  if (offset % 4 != 0) throw GpuError("upload offset must be a multiple of 4 bytes");
  std::vector<uint8_t> padded((bytes + 3) & ~uint64_t{3}, 0);
  std::memcpy(padded.data(), data, bytes);
  context.queue().WriteBuffer(buffer, offset, padded.data(), padded.size());
}

std::vector<uint8_t> download(Context& context, const wgpu::Buffer& buffer, uint64_t offset, uint64_t bytes) {
  // A pending download in a command buffer of its own, waited for at once.
  CommandRecorder recorder(context);
  PendingDownload pending(context, recorder, buffer, offset, bytes);
  recorder.submit();
  return pending.finish(context);
}

PendingDownload::PendingDownload(Context& context, CommandRecorder& recorder, const wgpu::Buffer& buffer,
                                 uint64_t offset, uint64_t bytes)
    : bytes_(bytes) {
  if (bytes == 0) return;
  const uint64_t aligned_offset = offset & ~uint64_t{3};
  lead_ = offset - aligned_offset;
  copy_bytes_ = (lead_ + bytes + 3) & ~uint64_t{3};
  staging_ = context.readback_buffers().acquire(context, copy_bytes_);
  recorder.copy(buffer, aligned_offset, staging_, 0, copy_bytes_);
}

std::vector<uint8_t> PendingDownload::finish(Context& context) {
  std::vector<uint8_t> result(bytes_);
  if (bytes_ == 0) return result;
  bool mapped = false;
  context.wait(staging_.MapAsync(wgpu::MapMode::Read, 0, copy_bytes_, wgpu::CallbackMode::WaitAnyOnly,
                                 [&mapped](wgpu::MapAsyncStatus status, wgpu::StringView) {
                                   mapped = status == wgpu::MapAsyncStatus::Success;
                                 }));
  if (!mapped) throw GpuError("could not map the readback buffer (device lost?)");
  std::memcpy(result.data(),
              static_cast<const uint8_t*>(staging_.GetConstMappedRange(0, copy_bytes_)) + lead_, bytes_);
  staging_.Unmap();
  context.readback_buffers().give_back(std::move(staging_));
  staging_ = nullptr;
  return result;
}

}  // namespace onda::gpu
