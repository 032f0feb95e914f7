// A run's commands as the CommandRecorder received them (dispatches with their bindings and uniform
// bytes, copies, clears, uploads with their data, submits, retained resources), to be replayed into
// another recorder: what a graph re-run needs from the GPU layer without walking the graph again
// (the op layer costs more CPU per dispatch than Dawn does; see docs/benchmark-log.md, recording).
// The tape holds handles and the resources the recorder was asked to retain; keeping the buffers it
// names from being handed out to other work is the owner's job (BufferPool::claim).
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gpu/command_recorder.h"

namespace onda::gpu {

class CommandTape {
 public:
  void add_dispatch(const wgpu::ComputePipeline& pipeline, std::span<const BufferBinding> storage, const void* uniforms,
                    size_t uniform_bytes, WorkgroupCount workgroups, const std::string& name,
                    const wgpu::BindGroup& bind_group, const BufferBinding& uniform_at);
  void add_copy(const wgpu::Buffer& source, uint64_t source_offset, const wgpu::Buffer& destination,
                uint64_t destination_offset, uint64_t size);
  void add_clear(const wgpu::Buffer& buffer, uint64_t offset, uint64_t size);
  void add_upload(const wgpu::Buffer& buffer, uint64_t offset, const void* data, uint64_t bytes);
  void add_submit();
  void add_retained(std::shared_ptr<const void> resource) { retained_.push_back(std::move(resource)); }

  // Issues every command, in order, into `recorder` (which must not be capturing into this tape).
  void replay(CommandRecorder& recorder) const;

  // Every buffer a command reads or writes (with repeats).
  std::vector<wgpu::Buffer> buffers() const;
  size_t dispatch_count() const { return dispatches_.size(); }
  size_t command_count() const { return order_.size(); }

 private:
  enum class Kind : uint8_t { dispatch, copy, clear, upload, submit };
  struct Command {
    Kind kind;
    uint32_t index;  // into the vector of its kind
  };
  struct Dispatch {
    wgpu::ComputePipeline pipeline;
    std::vector<BufferBinding> storage;
    std::vector<uint8_t> uniforms;
    WorkgroupCount workgroups;
    std::string name;
    wgpu::BindGroup bind_group;  // as captured, with the uniform block at uniform_at
    BufferBinding uniform_at;
  };
  struct Copy {
    wgpu::Buffer source, destination;
    uint64_t source_offset, destination_offset, size;
  };
  struct Clear {
    wgpu::Buffer buffer;
    uint64_t offset, size;
  };
  struct Upload {
    wgpu::Buffer buffer;
    uint64_t offset;
    std::vector<uint8_t> data;
  };

  std::vector<Command> order_;
  std::vector<Dispatch> dispatches_;
  std::vector<Copy> copies_;
  std::vector<Clear> clears_;
  std::vector<Upload> uploads_;
  std::vector<std::shared_ptr<const void>> retained_;
};

}  // namespace onda::gpu
