// Records the dispatches of one run into a single command buffer and submits it once.
// Consecutive dispatches share one compute pass (WebGPU orders them and makes storage writes
// visible between dispatches); a copy ends the pass. Uniform parameters of all dispatches are
// packed into 64 KiB uniform chunks written with one queue write per chunk just before the submit;
// the chunks' buffers and the bind groups come from the context's BindGroupCache, so a run that
// repeats an earlier one creates no bind group.
// With a Profiler, each dispatch gets its own pass with begin/end timestamps instead.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gpu/context.h"
#include "gpu/profiler.h"

namespace onda::gpu {

struct BufferBinding {
  wgpu::Buffer buffer;
  uint64_t offset = 0;
  uint64_t size = 0;  // 0: from offset to the end of the buffer
};

struct WorkgroupCount {
  uint32_t x = 1, y = 1, z = 1;
};

// Spreads a 1-D workgroup count over x and y so that neither exceeds maxComputeWorkgroupsPerDimension;
// shaders rebuild the linear index as wg.y * num_workgroups.x + wg.x and skip the excess.
WorkgroupCount split_workgroups(uint64_t count, const wgpu::Limits& limits);

class CommandRecorder {
 public:
  explicit CommandRecorder(Context& context, Profiler* profiler = nullptr);
  Context& context() const { return context_; }

  // Bindings 0..n-1 of group 0 are `storage`; binding n is the uniform block when `uniform_bytes` > 0.
  void dispatch(const wgpu::ComputePipeline& pipeline, std::span<const BufferBinding> storage,
                const void* uniforms, size_t uniform_bytes, WorkgroupCount workgroups, const std::string& name);
  void dispatch(const wgpu::ComputePipeline& pipeline, std::initializer_list<BufferBinding> storage,
                const void* uniforms, size_t uniform_bytes, WorkgroupCount workgroups, const std::string& name) {
    dispatch(pipeline, std::span<const BufferBinding>(storage.begin(), storage.size()), uniforms, uniform_bytes,
             workgroups, name);
  }

  // CommandTape::replay's dispatch: as dispatch(), with the bind group the captured run used (taken
  // when the uniform block lands at `uniform_at` again, looked up otherwise).
  void replay_dispatch(const wgpu::ComputePipeline& pipeline, std::span<const BufferBinding> storage,
                       const void* uniforms, size_t uniform_bytes, WorkgroupCount workgroups, const std::string& name,
                       const wgpu::BindGroup& bind_group, const BufferBinding& uniform_at);

  void copy(const wgpu::Buffer& source, uint64_t source_offset, const wgpu::Buffer& destination,
            uint64_t destination_offset, uint64_t size);
  void clear(const wgpu::Buffer& buffer, uint64_t offset, uint64_t size);

  // Writes host bytes into `buffer` in recording order (a staging copy inside the command buffer).
  // Use this, not queue writes, for data uploaded while recording: a queue write lands before the
  // whole submit, so it would race with recorded work on a pooled buffer reused within the run.
  void upload(const wgpu::Buffer& buffer, uint64_t offset, const void* data, uint64_t bytes);

  // Keeps `resource` (e.g. a kernel's scratch buffer) alive until the next submit_and_wait() returns,
  // so the pool cannot hand it out or destroy it while recorded work still uses it.
  void retain(std::shared_ptr<const void> resource);

  // Finishes the command buffer and submits it (one submit). The recorder can record again after.
  void submit();
  // submit(), then wait for the GPU and collect profiler timestamps.
  void submit_and_wait();
  // Drops the resources retained for submitted work once the caller has proven that work complete
  // by another wait (e.g. a readback of the run's last copy).
  void release_in_flight() { in_flight_.clear(); }

  size_t dispatch_count() const { return dispatch_count_; }
  size_t submit_count() const { return submit_count_; }
  // Dispatches recorded since the last submit (work the GPU has not been given yet).
  size_t pending_dispatches() const { return dispatch_count_ - dispatches_at_submit_; }

  // While set (non-null), every command recorded is also appended to `tape` (see CommandTape): the
  // runtime captures a run once and replays it while the graph, its shapes and host inputs repeat.
  void set_tape(class CommandTape* tape) { tape_ = tape; }

  // While set, dispatches are named `scope` instead of the kernel's own name, so the profiler
  // attributes GPU time to what the caller is recording (the runtime uses "OpType\tnode name").
  void set_scope(std::string scope) { scope_ = std::move(scope); }

 private:
  struct UniformChunk {
    wgpu::Buffer buffer;
    std::vector<uint8_t> host;
    size_t used = 0;
  };

  void ensure_encoder();
  void end_pass();
  BufferBinding place_uniforms(const void* data, size_t bytes);

  wgpu::BindGroup bind_group_for(const wgpu::ComputePipeline& pipeline, std::span<const BufferBinding> storage,
                                 const BufferBinding* uniform, const std::string& name);
  void encode_dispatch(const wgpu::ComputePipeline& pipeline, const wgpu::BindGroup& bind_group,
                       WorkgroupCount workgroups, const std::string& name);
  void encode_copy(const wgpu::Buffer& source, uint64_t source_offset, const wgpu::Buffer& destination,
                   uint64_t destination_offset, uint64_t size);

  Context& context_;
  Profiler* profiler_;
  class CommandTape* tape_ = nullptr;
  wgpu::CommandEncoder encoder_;
  wgpu::ComputePassEncoder pass_;
  std::vector<UniformChunk> chunks_;
  size_t chunks_in_use_ = 0;
  size_t dispatch_count_ = 0;
  size_t dispatches_at_submit_ = 0;
  size_t submit_count_ = 0;
  std::vector<std::shared_ptr<const void>> retained_;
  std::vector<std::shared_ptr<const void>> in_flight_;
  std::vector<wgpu::Buffer> staging_;
  std::string scope_;
};

}  // namespace onda::gpu
