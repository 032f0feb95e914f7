#include "kernels/rnn/cooperative_probe.h"

#include <fmt/format.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "gpu/buffer_pool.h"
#include "gpu/transfer.h"

namespace onda::kernels::rnn {

bool probe_grid_resident(const KernelContext& k, const wgpu::ComputePipeline& pipeline,
                         std::span<const gpu::BufferBinding> storage, size_t exchange_binding, const void* uniforms,
                         size_t uniform_bytes, gpu::WorkgroupCount groups) {
  const std::string fact = fmt::format("grid {}x{}x{} resident", groups.x, groups.y, groups.z);
  if (const std::optional<bool> known = k.pipelines.recall(pipeline, fact)) return *known;
  // New buffers are zeroed (WebGPU guarantees it).
  const wgpu::Buffer exchange = gpu::create_buffer(
      k.gpu, 16, wgpu::BufferUsage::Storage | wgpu::BufferUsage::CopySrc, "onda cooperative probe");
  std::vector<gpu::BufferBinding> bindings(storage.begin(), storage.end());
  bindings.at(exchange_binding) = gpu::BufferBinding{exchange, 0, 16};
  gpu::CommandRecorder recorder(k.gpu);
  recorder.dispatch(pipeline, bindings, uniforms, uniform_bytes, groups, "rnn_cooperative_probe");
  recorder.submit();
  const std::vector<uint8_t> words = gpu::download(k.gpu, exchange, 0, 8);
  uint32_t gave_up = 0, arrived = 0;
  std::memcpy(&gave_up, words.data(), 4);
  std::memcpy(&arrived, words.data() + 4, 4);
  exchange.Destroy();
  const bool resident = gave_up == 0 && arrived == groups.x * groups.y * groups.z;
  k.pipelines.remember(pipeline, fact, resident);
  return resident;
}

}  // namespace onda::kernels::rnn
