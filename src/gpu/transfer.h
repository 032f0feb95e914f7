// Moving bytes between host memory and GPU buffers.
#pragma once
#include <cstdint>
#include <vector>

#include "gpu/context.h"

namespace onda::gpu {

// Queues a write of `bytes` bytes at `offset` (both padded up to 4-byte units as WebGPU requires;
// the buffer must have room for the padding). Ordered before the next submit.
void upload(Context& context, const wgpu::Buffer& buffer, uint64_t offset, const void* data, uint64_t bytes);

// Copies `bytes` bytes at `offset` back to the host: submits a copy into a mappable buffer, waits,
// and throws GpuError on any device error reported meanwhile.
std::vector<uint8_t> download(Context& context, const wgpu::Buffer& buffer, uint64_t offset, uint64_t bytes);

}  // namespace onda::gpu
