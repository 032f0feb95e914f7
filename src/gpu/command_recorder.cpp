#include "gpu/command_recorder.h"

#include <fmt/format.h>

#include <cstring>

#include "gpu/buffer_pool.h"
#include "gpu/command_tape.h"
#include "gpu/gpu_error.h"

namespace onda::gpu {
namespace {
constexpr size_t kUniformChunkBytes = BindGroupCache::kUniformChunkBytes;
}

WorkgroupCount split_workgroups(uint64_t count, const wgpu::Limits& limits) {
  const uint64_t max_x = limits.maxComputeWorkgroupsPerDimension;
  if (count <= max_x) return {static_cast<uint32_t>(std::max<uint64_t>(count, 1)), 1, 1};
  const uint64_t y = (count + max_x - 1) / max_x;
  if (y > max_x) throw DeviceLimitError(fmt::format("{} workgroups exceed the device's 2-D dispatch limit", count));
  const uint64_t x = (count + y - 1) / y;
  return {static_cast<uint32_t>(x), static_cast<uint32_t>(y), 1};
}

CommandRecorder::CommandRecorder(Context& context, Profiler* profiler)
    : context_(context), profiler_(profiler && profiler->available() ? profiler : nullptr) {}

void CommandRecorder::ensure_encoder() {
  if (!encoder_) encoder_ = context_.device().CreateCommandEncoder();
}

void CommandRecorder::end_pass() {
  if (pass_) {
    pass_.End();
    pass_ = nullptr;
  }
}

BufferBinding CommandRecorder::place_uniforms(const void* data, size_t bytes) {
  const size_t alignment = context_.limits().minUniformBufferOffsetAlignment;
  if (bytes > kUniformChunkBytes) throw GpuError("uniform block larger than 64 KiB");
  if (chunks_in_use_ == 0 || chunks_[chunks_in_use_ - 1].used + bytes > kUniformChunkBytes) {
    if (chunks_in_use_ == chunks_.size()) {
      UniformChunk chunk;
      chunk.buffer = context_.bind_groups().uniform_chunk(chunks_.size());
      chunk.host.resize(kUniformChunkBytes);
      chunks_.push_back(std::move(chunk));
    }
    chunks_[chunks_in_use_].used = 0;
    ++chunks_in_use_;
  }
  UniformChunk& chunk = chunks_[chunks_in_use_ - 1];
  const size_t offset = chunk.used;
  std::memcpy(chunk.host.data() + offset, data, bytes);
  chunk.used = (offset + bytes + alignment - 1) / alignment * alignment;
  return {chunk.buffer, offset, (bytes + 15) & ~size_t{15}};
}

wgpu::BindGroup CommandRecorder::bind_group_for(const wgpu::ComputePipeline& pipeline,
                                                std::span<const BufferBinding> storage, const BufferBinding* uniform,
                                                const std::string& name) {
  const uint64_t max_binding = context_.limits().maxStorageBufferBindingSize;
  std::vector<wgpu::BindGroupEntry> entries(storage.size() + (uniform ? 1 : 0));
  for (size_t i = 0; i < storage.size(); ++i) {
    const BufferBinding& b = storage[i];
    const uint64_t size = b.size ? b.size : b.buffer.GetSize() - b.offset;
    if (size > max_binding) {
      throw DeviceLimitError(fmt::format("'{}': binding {} of {} bytes exceeds maxStorageBufferBindingSize ({} bytes)",
                                         name, i, size, max_binding));
    }
    entries[i].binding = static_cast<uint32_t>(i);
    entries[i].buffer = b.buffer;
    entries[i].offset = b.offset;
    entries[i].size = size;
  }
  if (uniform) {
    auto& entry = entries.back();
    entry.binding = static_cast<uint32_t>(storage.size());
    entry.buffer = uniform->buffer;
    entry.offset = uniform->offset;
    entry.size = uniform->size;
  }
  return context_.bind_groups().get(pipeline.GetBindGroupLayout(0), entries);
}

void CommandRecorder::dispatch(const wgpu::ComputePipeline& pipeline, std::span<const BufferBinding> storage,
                               const void* uniforms, size_t uniform_bytes, WorkgroupCount workgroups,
                               const std::string& name) {
  ensure_encoder();
  BufferBinding u;
  if (uniform_bytes > 0) u = place_uniforms(uniforms, uniform_bytes);
  wgpu::BindGroup bind_group = bind_group_for(pipeline, storage, uniform_bytes > 0 ? &u : nullptr, name);
  if (tape_) tape_->add_dispatch(pipeline, storage, uniforms, uniform_bytes, workgroups, name, bind_group, u);
  encode_dispatch(pipeline, bind_group, workgroups, name);
}

void CommandRecorder::replay_dispatch(const wgpu::ComputePipeline& pipeline, std::span<const BufferBinding> storage,
                                      const void* uniforms, size_t uniform_bytes, WorkgroupCount workgroups,
                                      const std::string& name, const wgpu::BindGroup& bind_group,
                                      const BufferBinding& uniform_at) {
  if (profiler_ || tape_) {
    dispatch(pipeline, storage, uniforms, uniform_bytes, workgroups, name);
    return;
  }
  ensure_encoder();
  BufferBinding u;
  if (uniform_bytes > 0) u = place_uniforms(uniforms, uniform_bytes);
  // The k-th uniform block of a run lands where it did in the captured run (the chunks are shared,
  // placement depends only on the sizes before it), so the captured bind group fits; else look up.
  const bool same_place = uniform_bytes == 0 || (u.buffer.Get() == uniform_at.buffer.Get() && u.offset == uniform_at.offset);
  if (same_place) {
    encode_dispatch(pipeline, bind_group, workgroups, name);
  } else {
    encode_dispatch(pipeline, bind_group_for(pipeline, storage, &u, name), workgroups, name);
  }
}

void CommandRecorder::encode_dispatch(const wgpu::ComputePipeline& pipeline, const wgpu::BindGroup& bind_group,
                                      WorkgroupCount workgroups, const std::string& name) {
  uint32_t query_index = 0;
  wgpu::QuerySet query_set;
  if (profiler_ && profiler_->next_pair(scope_.empty() ? name : scope_, &query_set, &query_index)) {
    end_pass();
    wgpu::PassTimestampWrites timestamps;
    timestamps.querySet = query_set;
    timestamps.beginningOfPassWriteIndex = query_index;
    timestamps.endOfPassWriteIndex = query_index + 1;
    wgpu::ComputePassDescriptor pass_descriptor;
    pass_descriptor.timestampWrites = &timestamps;
    wgpu::ComputePassEncoder pass = encoder_.BeginComputePass(&pass_descriptor);
    pass.SetPipeline(pipeline);
    pass.SetBindGroup(0, bind_group);
    pass.DispatchWorkgroups(workgroups.x, workgroups.y, workgroups.z);
    pass.End();
  } else {
    if (!pass_) pass_ = encoder_.BeginComputePass();
    pass_.SetPipeline(pipeline);
    pass_.SetBindGroup(0, bind_group);
    pass_.DispatchWorkgroups(workgroups.x, workgroups.y, workgroups.z);
  }
  ++dispatch_count_;
}

// Kernels do not retain their scratch tensors: a pooled buffer may go back to the pool as soon as
// the dispatches that bind it are recorded (its lifetime ends there, so the memory plan can give its
// bytes to later tensors). Whatever the pool hands it to next is recorded later, one queue runs the
// commands in the order they were recorded, submit after submit, and the recorded commands hold the
// buffer's handle.
void CommandRecorder::retain(std::shared_ptr<const void> resource) {
  if (tape_) tape_->add_retained(resource);
  retained_.push_back(std::move(resource));
}

void CommandRecorder::copy(const wgpu::Buffer& source, uint64_t source_offset, const wgpu::Buffer& destination,
                           uint64_t destination_offset, uint64_t size) {
  if (tape_) tape_->add_copy(source, source_offset, destination, destination_offset, size);
  encode_copy(source, source_offset, destination, destination_offset, size);
}

void CommandRecorder::encode_copy(const wgpu::Buffer& source, uint64_t source_offset, const wgpu::Buffer& destination,
                                  uint64_t destination_offset, uint64_t size) {
  ensure_encoder();
  end_pass();
  encoder_.CopyBufferToBuffer(source, source_offset, destination, destination_offset, size);
}

void CommandRecorder::clear(const wgpu::Buffer& buffer, uint64_t offset, uint64_t size) {
  if (tape_) tape_->add_clear(buffer, offset, size);
  ensure_encoder();
  end_pass();
  encoder_.ClearBuffer(buffer, offset, size);
}

void CommandRecorder::upload(const wgpu::Buffer& buffer, uint64_t offset, const void* data, uint64_t bytes) {
  if (bytes == 0) return;
  if (tape_) tape_->add_upload(buffer, offset, data, bytes);
  const uint64_t padded = (bytes + 3) & ~uint64_t{3};
  wgpu::BufferDescriptor descriptor;
  descriptor.label = "onda staging";
  descriptor.size = padded;
  descriptor.usage = wgpu::BufferUsage::MapWrite | wgpu::BufferUsage::CopySrc;
  descriptor.mappedAtCreation = true;
  wgpu::Buffer staging = context_.device().CreateBuffer(&descriptor);
  void* mapped = staging.GetMappedRange(0, padded);
  if (!mapped) throw GpuError(fmt::format("could not map a {} byte staging buffer", padded));
  std::memset(static_cast<uint8_t*>(mapped) + bytes, 0, padded - bytes);
  std::memcpy(mapped, data, bytes);
  staging.Unmap();
  encode_copy(staging, 0, buffer, offset, padded);
  staging_.push_back(std::move(staging));
}

void CommandRecorder::submit() {
  if (tape_) tape_->add_submit();
  if (!encoder_) return;
  end_pass();
  if (profiler_) profiler_->resolve(encoder_);
  wgpu::CommandBuffer commands = encoder_.Finish();
  encoder_ = nullptr;
  for (size_t i = 0; i < chunks_in_use_; ++i) {
    context_.queue().WriteBuffer(chunks_[i].buffer, 0, chunks_[i].host.data(), chunks_[i].used);
  }
  chunks_in_use_ = 0;
  context_.queue().Submit(1, &commands);
  dispatches_at_submit_ = dispatch_count_;
  ++submit_count_;
  // Retained resources stay alive until a wait proves the GPU is done with them.
  in_flight_.insert(in_flight_.end(), std::make_move_iterator(retained_.begin()),
                    std::make_move_iterator(retained_.end()));
  retained_.clear();
  staging_.clear();  // Dawn keeps submitted buffers alive until the GPU is done with them
  context_.check_errors();
}

void CommandRecorder::submit_and_wait() {
  submit();
  context_.finish();
  in_flight_.clear();
  if (profiler_) profiler_->collect();
}

}  // namespace onda::gpu
