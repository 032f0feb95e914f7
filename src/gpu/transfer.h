// Moving bytes between host memory and GPU buffers.
#pragma once
#include <cstdint>
#include <vector>

#include "gpu/command_recorder.h"
#include "gpu/context.h"

namespace onda::gpu {

// Queues a write of `bytes` bytes at `offset` (both padded up to 4-byte units as WebGPU requires;
// the buffer must have room for the padding). Ordered before the next submit.
void upload(Context& context, const wgpu::Buffer& buffer, uint64_t offset, const void* data, uint64_t bytes);

// Copies `bytes` bytes at `offset` back to the host: submits a copy into a mappable buffer, waits,
// and throws GpuError on any device error reported meanwhile.
std::vector<uint8_t> download(Context& context, const wgpu::Buffer& buffer, uint64_t offset, uint64_t bytes);

// A download recorded into a run's command stream: the copy runs in order with the recorded work,
// and finish() waits for that work only, not for runs submitted after it (so the next run can be
// recorded and submitted while this one still executes).
class PendingDownload {
 public:
  PendingDownload() = default;
  PendingDownload(Context& context, CommandRecorder& recorder, const wgpu::Buffer& buffer, uint64_t offset,
                  uint64_t bytes);
  // Call after the recorder's submit. Throws GpuError when the buffer cannot be mapped.
  std::vector<uint8_t> finish(Context& context);

 private:
  wgpu::Buffer staging_;
  uint64_t lead_ = 0, bytes_ = 0, copy_bytes_ = 0;
};

}  // namespace onda::gpu
