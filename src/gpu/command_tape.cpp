#include "gpu/command_tape.h"

#include <cstring>

namespace onda::gpu {

void CommandTape::add_dispatch(const wgpu::ComputePipeline& pipeline, std::span<const BufferBinding> storage,
                               const void* uniforms, size_t uniform_bytes, WorkgroupCount workgroups,
                               const std::string& name, const wgpu::BindGroup& bind_group,
                               const BufferBinding& uniform_at) {
  Dispatch d{pipeline, {storage.begin(), storage.end()}, {}, workgroups, name, bind_group, uniform_at};
  if (uniform_bytes > 0) {
    d.uniforms.resize(uniform_bytes);
    std::memcpy(d.uniforms.data(), uniforms, uniform_bytes);
  }
  order_.push_back({Kind::dispatch, static_cast<uint32_t>(dispatches_.size())});
  dispatches_.push_back(std::move(d));
}

void CommandTape::add_copy(const wgpu::Buffer& source, uint64_t source_offset, const wgpu::Buffer& destination,
                           uint64_t destination_offset, uint64_t size) {
  order_.push_back({Kind::copy, static_cast<uint32_t>(copies_.size())});
  copies_.push_back({source, destination, source_offset, destination_offset, size});
}

void CommandTape::add_clear(const wgpu::Buffer& buffer, uint64_t offset, uint64_t size) {
  order_.push_back({Kind::clear, static_cast<uint32_t>(clears_.size())});
  clears_.push_back({buffer, offset, size});
}

void CommandTape::add_upload(const wgpu::Buffer& buffer, uint64_t offset, const void* data, uint64_t bytes) {
  Upload u{buffer, offset, std::vector<uint8_t>(bytes)};
  std::memcpy(u.data.data(), data, bytes);
  order_.push_back({Kind::upload, static_cast<uint32_t>(uploads_.size())});
  uploads_.push_back(std::move(u));
}

void CommandTape::add_submit() {
  order_.push_back({Kind::submit, 0});
}

void CommandTape::replay(CommandRecorder& recorder) const {
  for (const Command& c : order_) {
    switch (c.kind) {
      case Kind::dispatch: {
        const Dispatch& d = dispatches_[c.index];
        recorder.replay_dispatch(d.pipeline, d.storage, d.uniforms.data(), d.uniforms.size(), d.workgroups, d.name,
                                 d.bind_group, d.uniform_at);
        break;
      }
      case Kind::copy: {
        const Copy& k = copies_[c.index];
        recorder.copy(k.source, k.source_offset, k.destination, k.destination_offset, k.size);
        break;
      }
      case Kind::clear: {
        const Clear& k = clears_[c.index];
        recorder.clear(k.buffer, k.offset, k.size);
        break;
      }
      case Kind::upload: {
        const Upload& u = uploads_[c.index];
        recorder.upload(u.buffer, u.offset, u.data.data(), u.data.size());
        break;
      }
      case Kind::submit:
        recorder.submit();
        break;
    }
  }
  for (const auto& resource : retained_) recorder.retain(resource);
}

std::vector<wgpu::Buffer> CommandTape::buffers() const {
  std::vector<wgpu::Buffer> all;
  for (const Dispatch& d : dispatches_) {
    for (const BufferBinding& b : d.storage) all.push_back(b.buffer);
  }
  for (const Copy& k : copies_) {
    all.push_back(k.source);
    all.push_back(k.destination);
  }
  for (const Clear& k : clears_) all.push_back(k.buffer);
  for (const Upload& u : uploads_) all.push_back(u.buffer);
  return all;
}

}  // namespace onda::gpu
