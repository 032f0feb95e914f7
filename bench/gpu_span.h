// GPU time of a whole recorded run, measured without changing how it is recorded: a marker compute
// pass with an end-of-pass timestamp is submitted before the run and one with a beginning-of-pass
// timestamp after it, on the same queue. gpu::Profiler instead gives every dispatch its own pass
// (and so adds a pass boundary per dispatch, and holds at most 2048 dispatches); the span keeps the
// run's dispatches in the one compute pass the recorder makes, which is what the dispatch floor and
// the recurrent steps are about. Vulkan writes pass timestamps once all earlier work has finished
// (Dawn: BOTTOM_OF_PIPE), so the span covers the run plus two empty-pass boundaries (~us).
#pragma once
#include <cstdint>
#include <cstring>
#include <functional>

#include "gpu/buffer_pool.h"
#include "gpu/context.h"
#include "gpu/gpu_error.h"

namespace onda::bench {

class GpuSpan {
 public:
  explicit GpuSpan(gpu::Context& context) : context_(context) {
    if (!context.has(gpu::Feature::TimestampQuery)) return;
    wgpu::QuerySetDescriptor descriptor;
    descriptor.label = "bench span";
    descriptor.type = wgpu::QueryType::Timestamp;
    descriptor.count = 2;
    queries_ = context.device().CreateQuerySet(&descriptor);
    resolve_ = gpu::create_buffer(context, 16, wgpu::BufferUsage::QueryResolve | wgpu::BufferUsage::CopySrc, "span resolve");
    readback_ = gpu::create_buffer(context, 16, wgpu::BufferUsage::MapRead | wgpu::BufferUsage::CopyDst, "span readback");
  }

  bool available() const { return static_cast<bool>(queries_); }

  // Runs `submit_run` (which must submit its work without waiting) between the two markers, waits,
  // and returns the GPU milliseconds between them (-1 without timestamp queries).
  double measure(const std::function<void()>& submit_run) {
    if (!available()) {
      submit_run();
      context_.finish();
      return -1.0;
    }
    marker(0, false);
    submit_run();
    marker(1, true);
    context_.finish();
    bool mapped = false;
    context_.wait(readback_.MapAsync(
        wgpu::MapMode::Read, 0, 16, wgpu::CallbackMode::WaitAnyOnly,
        [&mapped](wgpu::MapAsyncStatus status, wgpu::StringView) { mapped = status == wgpu::MapAsyncStatus::Success; }));
    if (!mapped) throw gpu::GpuError("could not map the span timestamps");
    uint64_t stamps[2];
    std::memcpy(stamps, readback_.GetConstMappedRange(0, 16), 16);
    readback_.Unmap();
    return stamps[1] > stamps[0] ? static_cast<double>(stamps[1] - stamps[0]) * 1e-6 : 0.0;
  }

 private:
  // An empty compute pass writing timestamp `index` at its end (first marker) or beginning (last).
  void marker(uint32_t index, bool last) {
    wgpu::CommandEncoder encoder = context_.device().CreateCommandEncoder();
    wgpu::PassTimestampWrites writes;
    writes.querySet = queries_;
    if (last) writes.beginningOfPassWriteIndex = index;
    else writes.endOfPassWriteIndex = index;
    wgpu::ComputePassDescriptor descriptor;
    descriptor.timestampWrites = &writes;
    wgpu::ComputePassEncoder pass = encoder.BeginComputePass(&descriptor);
    pass.End();
    if (last) {
      encoder.ResolveQuerySet(queries_, 0, 2, resolve_, 0);
      encoder.CopyBufferToBuffer(resolve_, 0, readback_, 0, 16);
    }
    wgpu::CommandBuffer commands = encoder.Finish();
    context_.queue().Submit(1, &commands);
  }

  gpu::Context& context_;
  wgpu::QuerySet queries_;
  wgpu::Buffer resolve_, readback_;
};

}  // namespace onda::bench
